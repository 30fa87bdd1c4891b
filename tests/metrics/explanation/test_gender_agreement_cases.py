"""Ding & Koehn's CoNLL gender-agreement case rules (NAACL 2021, Appendix A) on hand-built
documents, one rule per test, and against a token-level brute-force reference."""
from __future__ import annotations

import random

import pytest

from trustlab.metrics import gender_agreement_cases, read_spans

DOC = [["Mr.", "Lee", "met", "Mrs.", "Park", "."], ["Later", ",", "she", "called", "him", "."]]
CLUSTERS = [[(0, 1), (10, 10)], [(3, 4), (8, 8)]]
NAMES = {"John": "male", "Mary": "female", "Alex": None}


def test_basic_case_prefix_tag_and_format():
    (c,) = gender_agreement_cases(DOC, CLUSTERS)
    assert c["tag"] == 0 and c["pronoun"] == 10 and c["offset"] == 0
    assert c["prefix"] == DOC[0] + DOC[1][:4]
    assert c["cue"] == [(0, 1)] and c["attractors"] == [(3, 4), (8, 8)]
    # "she" at 8 is dropped: its closest gendered mention (Mrs. Park) is female too
    assert 8 not in [d["pronoun"] for d in gender_agreement_cases(DOC, CLUSTERS)]
    # the flat token list gives the same cases; the spans round-trip through read_spans
    flat = [t for s in DOC for t in s]
    assert gender_agreement_cases(flat, CLUSTERS) == [c]
    assert read_spans([f"{c['cue']} ||| {c['attractors']}"]) == ([c["cue"]], [c["attractors"]])


def test_pronoun_heuristic_and_female_tag():
    # no titles: the genders come only from the coreferent pronouns ("he" at 4, "she" at 8)
    toks = ["Kim", "saw", "Jo", ".", "He", "waved", ".", "Then", "she", "left"]
    cl = [[(0, 0), (4, 4)], [(2, 2), (8, 8)]]
    out = gender_agreement_cases(toks, cl)
    (c,) = [d for d in out if d["pronoun"] == 8]
    assert c["tag"] == 1 and c["cue"] == [(2, 2)] and c["attractors"] == [(0, 0), (4, 4)]
    # without the male pronoun, Kim has no gender: no attractor, no case
    assert gender_agreement_cases(toks, [[(0, 0)], [(2, 2), (8, 8)]]) == []
    # a cluster whose pronouns disagree gets no gender from them and gives no target
    toks2 = toks + ["and", "he", "too"]
    assert [d["pronoun"] for d in gender_agreement_cases(toks2, [[(0, 0), (4, 4)], [(2, 2), (8, 8), (11, 11)]])] == []


def test_title_heuristic():
    toks = ["Ms.", "Ray", "and", "Mr.", "Cole", "talked", ".", "She", "left"]
    (c,) = gender_agreement_cases(toks, [[(0, 1), (7, 7)], [(3, 4)]])
    assert c["tag"] == 1 and c["attractors"] == [(3, 4)]
    # "Dr." gives no gender: no attractor
    toks[3] = "Dr."
    assert gender_agreement_cases(toks, [[(0, 1), (7, 7)], [(3, 4)]]) == []


def test_name_gender_callable_two_token_names_only():
    toks = ["Sue", "and", "Mary", "Smith", "talked", ".", "He", "left"]
    cl = [[(2, 3)], [(0, 0), (6, 6)]]
    assert gender_agreement_cases(toks, cl) == []                      # heuristic off by default
    (c,) = gender_agreement_cases(toks, cl, name_gender=NAMES.get)
    assert c["tag"] == 0 and c["cue"] == [(0, 0)] and c["attractors"] == [(2, 3)]
    # a one-token or three-token mention is not a name; None (unknown) assigns nothing
    assert gender_agreement_cases(toks, [[(2, 2)], [(0, 0), (6, 6)]], name_gender=NAMES.get) == []
    assert gender_agreement_cases(toks, [[(2, 4)], [(0, 0), (6, 6)]], name_gender=NAMES.get) == []
    assert gender_agreement_cases(toks, cl, name_gender=lambda w: None) == []
    with pytest.raises(ValueError, match="must return"):
        gender_agreement_cases(toks, cl, name_gender=lambda w: "f")


def test_transitive_coreference():
    # "the lawyer" has no pronoun, title or name; it corefers with "Mrs. Wu", so it is female
    toks = ["Tom", "met", "Mrs.", "Wu", ",", "the", "lawyer", ".", "He", "smiled"]
    cl = [[(2, 3), (5, 6)], [(0, 0), (8, 8)]]
    (c,) = gender_agreement_cases(toks, cl)
    assert c["tag"] == 0 and c["attractors"] == [(2, 3), (5, 6)] and c["cue"] == [(0, 0)]
    # clusters given in pieces that share a span are merged (transitive across clusters)
    toks2 = toks + [".", "The", "lawyer", "and", "he"]
    cl2 = [[(2, 3), (5, 6)], [(5, 6), (11, 12)], [(0, 0), (8, 8), (14, 14)]]
    out = {d["pronoun"]: d for d in gender_agreement_cases(toks2, cl2)}
    assert out[14]["attractors"] == [(2, 3), (5, 6), (11, 12)] and out[14]["cue"] == [(0, 0), (8, 8)]
    # the order: a pronoun beats a title in its cluster
    toks3 = ["Mr.", "Ng", "met", "Al", ".", "She", "saw", "him"]
    (d,) = [x for x in gender_agreement_cases(toks3, [[(0, 1), (5, 5)], [(3, 3), (7, 7)]]) if x["pronoun"] == 7]
    assert d["pronoun"] == 7 and d["attractors"] == [(0, 1), (5, 5)]   # "Mr. Ng" is female by the pronoun


def test_nested_and_intersecting_spans_made_disjoint():
    # cue "his mother 's friend Bo" (male cluster) contains attractor "his mother" (female)
    toks = ["his", "mother", "'s", "friend", "Bo", "came", ".", "Her", "son", "and", "he", "left"]
    cl = [[(0, 4), (10, 10)], [(0, 1), (7, 7)]]
    (c,) = [d for d in gender_agreement_cases(toks, cl) if d["pronoun"] == 10]
    assert c["cue"] == [(2, 4)] and c["attractors"] == [(0, 1), (7, 7)]
    # a cue nested strictly inside an attractor splits it in two
    toks = ["Ms.", "Ann", "of", "Mr.", "Oz", "'s", ".", "He", "sat"]
    (c,) = gender_agreement_cases(toks, [[(0, 5)], [(3, 4), (7, 7)]])
    assert c["cue"] == [(3, 4)] and c["attractors"] == [(0, 2), (5, 5)]
    # partial overlap: the shared tokens leave both spans
    toks = ["Mr.", "Bo", "Mrs.", "Ash", "x", ".", "He", "sat"]
    (c,) = gender_agreement_cases(toks, [[(0, 2), (6, 6)], [(2, 3)]])
    assert c["cue"] == [(0, 1)] and c["attractors"] == [(3, 3)]


def test_closest_mention_rule():
    base = ["Mr.", "Li", "met", "Mrs.", "Po", ".", "She", "smiled"]
    assert gender_agreement_cases(base, [[(0, 1)], [(3, 4), (6, 6)]]) == []          # nearest is the cue
    base2 = ["Mrs.", "Po", "met", "Mr.", "Li", ".", "She", "smiled"]
    (c,) = gender_agreement_cases(base2, [[(0, 1), (6, 6)], [(3, 4)]])
    assert c["tag"] == 1 and c["cue"] == [(0, 1)] and c["attractors"] == [(3, 4)]
    # a closer mention of another same-gender cluster also fails the rule
    toks = ["Mr.", "Li", "met", "Mrs.", "Po", "and", "Ms.", "Yu", ".", "She", "smiled"]
    assert gender_agreement_cases(toks, [[(0, 1)], [(3, 4), (9, 9)], [(6, 7)]]) == []
    # mentions without a gender are skipped when looking for the closest one
    toks = ["Mrs.", "Po", "met", "Mr.", "Li", "at", "the", "bank", ".", "She", "smiled"]
    (c,) = gender_agreement_cases(toks, [[(0, 1), (9, 9)], [(3, 4)], [(6, 7)]])
    assert c["attractors"] == [(3, 4)]


def test_prefix_cap_breaks_at_sentence_start():
    s1 = ["Mrs.", "Po", "spoke", "."]
    s2 = ["Mr.", "Li", "and", "Mrs.", "Ka", "met", "."]
    s3 = ["Then", "Mr.", "Li", "saw", "her", "."]
    doc = [s1, s2, s3]
    # "her" (index 15) corefers with Mrs. Po (0-1) and Mrs. Ka (14... ) -> use Mrs. Po only
    cl = [[(0, 1), (15, 15)], [(4, 5), (12, 13)], [(7, 8)]]
    (full,) = gender_agreement_cases(doc, cl)
    assert full["offset"] == 0 and len(full["prefix"]) == 15 and full["cue"] == [(0, 1)]
    # cap 11: the prefix starts at sentence 2 (index 4); Mrs. Po falls outside, no cue -> no case
    assert gender_agreement_cases(doc, cl, max_words=11) == []
    doc2 = [s1, ["Mrs.", "Li", "and", "Mr.", "Ka", "met", "."], ["Then", "Mr.", "Ka", "saw", "her", "."]]
    cl2 = [[(0, 1), (4, 5), (15, 15)], [(7, 8), (12, 13)]]
    (full,) = gender_agreement_cases(doc2, cl2)
    assert full["cue"] == [(0, 1), (4, 5)]
    (c,) = gender_agreement_cases(doc2, cl2, max_words=11)
    assert c["offset"] == 4 and c["prefix"] == doc2[1] + doc2[2][:4]
    assert c["cue"] == [(0, 1)] and c["attractors"] == [(3, 4), (8, 9)]
    # cap 10: the next sentence start that fits is 11, leaving no cue
    assert gender_agreement_cases(doc2, cl2, max_words=10) == []
    # a flat document (one sentence longer than the cap): cut mid-sentence at exactly max_words
    toks = ["x"] * 5 + ["Mrs.", "Po", "met", "Mr.", "Li", ".", "She"]
    (d,) = gender_agreement_cases(toks, [[(5, 6), (11, 11)], [(8, 9)]], max_words=6)
    assert d["offset"] == 5 and len(d["prefix"]) == 6 and d["cue"] == [(0, 1)] and d["attractors"] == [(3, 4)]
    # one word less: Mrs. Po is no longer wholly inside
    assert gender_agreement_cases(toks, [[(5, 6), (11, 11)], [(8, 9)]], max_words=5) == []


def test_validation_messages():
    with pytest.raises(ValueError, match="outside"):
        gender_agreement_cases(["he"], [[(0, 3)]])
    with pytest.raises(ValueError, match="pair"):
        gender_agreement_cases(["he"], [[0]])
    with pytest.raises(ValueError, match="empty"):
        gender_agreement_cases([], [])


# --- brute-force reference: token sets, every rule written out naively --------------------------

def _reference(doc, clusters, name_gender=None, max_words=512):
    sents = [doc] if all(isinstance(t, str) for t in doc) else doc
    toks = [t for s in sents for t in s]
    starts, k = [], 0
    for s in sents:
        starts.append(k)
        k += len(s)
    cls = [set(map(tuple, c)) for c in clusters]
    changed = True
    while changed:                                    # merge clusters sharing a span until a fixpoint
        changed = False
        for i in range(len(cls)):
            for j in range(i + 1, len(cls)):
                if cls[i] & cls[j]:
                    cls[i] |= cls.pop(j)
                    changed = True
                    break
            if changed:
                break
    male, female = {"he", "him", "himself", "his"}, {"she", "her", "herself", "hers"}

    def pron(m):
        w = toks[m[0]].lower()
        return None if m[0] != m[1] else 0 if w in male else 1 if w in female else None

    gender, cl_of, cl_pron = {}, {}, []
    for ci, cl in enumerate(cls):
        ps = {pron(m) for m in cl} - {None}
        p = ps.pop() if len(ps) == 1 else None
        cl_pron.append(p)
        for m in cl:
            cl_of[m] = ci
            if p is not None:
                gender[m] = p
            elif toks[m[0]] in ("Mr.", "mr.", "MR."):
                gender[m] = 0
            elif toks[m[0]].lower() in ("mrs.", "ms."):
                gender[m] = 1
            elif m[1] - m[0] == 1 and name_gender and name_gender(toks[m[0]]) in ("male", "female"):
                gender[m] = 0 if name_gender(toks[m[0]]) == "male" else 1
            else:
                gender[m] = None
        if p is None:
            known = {gender[m] for m in cl} - {None}
            if len(known) == 1:
                g = known.pop()
                for m in cl:
                    gender[m] = g if gender[m] is None else gender[m]

    def runs(tokset):
        out, ts = [], sorted(tokset)
        for t in ts:
            if out and out[-1][1] == t - 1:
                out[-1][1] = t
            else:
                out.append([t, t])
        return [tuple(r) for r in out]

    cases = []
    for p in range(len(toks)):
        m0 = (p, p)
        tag = pron(m0)
        if tag is None or m0 not in cl_of or cl_pron[cl_of[m0]] != tag:
            continue
        lo = None
        for s in starts:
            if s <= p and p - s <= max_words:
                lo = s
                break
        lo = p - max_words if lo is None else lo
        inside = [m for m in gender if gender[m] is not None and lo <= m[0] and m[1] < p]
        top = None
        for t in range(p - 1, lo - 1, -1):
            if any(m[0] <= t <= m[1] for m in inside):
                top = t
                break
        if top is None or all(gender[m] == tag for m in inside if m[0] <= top <= m[1]):
            continue
        cue = [m for m in inside if cl_of[m] == cl_of[m0]]
        att = [m for m in inside if gender[m] != tag]

        def cut(spans, others):
            res = set()
            for s, e in spans:
                keep = set(range(s, e + 1))
                for a, b in others:
                    if a <= s and e <= b and (a, b) != (s, e):
                        continue
                    keep -= set(range(a, b + 1))
                res.update(runs(keep))
            return sorted(res)
        c2, a2 = cut(cue, att), cut(att, cue)
        if c2 and a2:
            cases.append({"prefix": toks[lo:p], "tag": tag, "cue": [(s - lo, e - lo) for s, e in c2],
                          "attractors": [(s - lo, e - lo) for s, e in a2], "pronoun": p, "offset": lo})
    return cases


def test_hand_documents_match_reference():
    for doc, cl in [(DOC, CLUSTERS)]:
        assert gender_agreement_cases(doc, cl) == _reference(doc, cl)


def test_random_documents_match_reference():
    rng = random.Random(0)
    vocab = ["he", "she", "him", "her", "his", "hers", "Mr.", "Mrs.", "Ms.", "John", "Mary", "Alex", "the",
             "man", "of", "and", "."]
    n_cases = 0
    for _ in range(400):
        n = rng.randint(3, 30)
        toks = [rng.choice(vocab) for _ in range(n)]
        cut = sorted(rng.sample(range(1, n), rng.randint(0, min(3, n - 1))))
        doc = [toks[a:b] for a, b in zip([0] + cut, cut + [n])] if cut else toks
        clusters = []
        for _ in range(rng.randint(1, 5)):
            cl = []
            for _ in range(rng.randint(1, 4)):
                s = rng.randrange(n)
                cl.append((s, min(n - 1, s + rng.choice([0, 0, 1, 1, 2, 4]))))
            clusters.append(cl)
        mw = rng.choice([512, 5, 8, 12])
        got = gender_agreement_cases(doc, clusters, name_gender=NAMES.get, max_words=mw)
        assert got == _reference(doc, clusters, name_gender=NAMES.get, max_words=mw), (doc, clusters, mw)
        n_cases += len(got)
    assert n_cases > 20  # the fuzz reaches kept cases, not only drops
