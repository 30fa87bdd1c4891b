"""Ding & Koehn's gender-agreement test-case construction rules (NAACL 2021, Appendix A,
the CoNLL-2012 part).

From one coreference-annotated document, a test case is the prefix before a gendered
pronoun, with the pronoun's gender as the expected tag, the earlier mentions coreferent with
the pronoun as the cue and the earlier mentions of the other gender as attractors. The rules
(App. A.3 and the released ``prepare_conll.py`` of shuoyangd/tarsius):

1. the target is a third-person gendered pronoun — male *he, him, himself, his*, female
   *she, her, herself, hers* — that is a one-token mention of a coreference cluster;
2. the gender of a mention comes from these heuristics, in descending order:
   (a) its cluster holds a gendered pronoun (all such pronouns must agree); (b) the mention
   starts with *Mr.* (male) or *Mrs.* / *Ms.* (female); (c) a two-token mention is taken as a
   name and ``name_gender`` of its first token decides (the paper used the gender-guesser
   package; here the caller passes any function, none by default); (d) transitive
   coreference: a mention still without a gender takes the gender that (b)/(c) gave to the
   other mentions of its cluster, when they agree. Clusters that share a mention span are
   merged first, so coreference is transitive across the clusters given;
3. cue and attractor spans are made disjoint: an attractor nested in a cue span (or a cue
   nested in an attractor span) is cut out of the outer span, which may split in two; tokens
   where a cue and an attractor partially overlap (or coincide) are removed from both;
4. at least one cue and one attractor span must remain;
5. the closest gendered mention before the pronoun (the highest token covered by a mention
   whose gender is known, the mentions of other same-gender clusters included; mentions
   without a gender are skipped) must be of the other gender (a mention of the other gender
   covers that token): the nearest noun is an attractor;
6. a prefix is at most ``max_words`` (512) words: the whole document before the pronoun if it
   fits, else it starts at the earliest sentence start that fits, and only mentions wholly
   inside the prefix count.

CoNLL-2012 itself is LDC-licensed; these rules run on the user's own tokens and clusters.
Where the released script differs, these rules follow the paper's text: its strict mode uses
mentions of *every* other gendered cluster as attractors (same gender included), drops
mentions that start at the first token of the prefix, ignores the first mention of a cluster
when it is 7 tokens or longer, applies the title rule only to mentions shorter than 3 tokens,
checks the closest mention only back to the previous pronoun, and lets a prefix whose own
sentence is longer than the cap exceed it (here the prefix is then cut mid-sentence). So the
released 586 CoNLL cases may differ from what these rules give on the same data.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

from trustlab._validation import Interval, validate_params

__all__ = ["gender_agreement_cases", "MALE_PRONOUNS", "FEMALE_PRONOUNS"]

MALE_PRONOUNS = ("he", "him", "himself", "his")
FEMALE_PRONOUNS = ("she", "her", "herself", "hers")
_PRONOUN_TAG = {**{p: 0 for p in MALE_PRONOUNS}, **{p: 1 for p in FEMALE_PRONOUNS}}
_TITLE_TAG = {"mr.": 0, "mrs.": 1, "ms.": 1}
_NAME_TAG = {"male": 0, "female": 1}


def _document(document) -> tuple[list[str], list[int]]:
    """Flat tokens and sentence start indices from a token list or a list of sentences."""
    items = list(document)
    if not items:
        raise ValueError("the document is empty; pass its tokens or a list of sentences (lists of tokens).")
    if all(isinstance(t, str) for t in items):
        return items, [0]
    tokens, starts = [], []
    for k, sent in enumerate(items):
        if isinstance(sent, str) or not all(isinstance(t, str) for t in sent):
            raise ValueError(f"sentence {k} must be a list of token strings (or pass one flat list of strings); "
                             f"got {type(sent).__name__}.")
        starts.append(len(tokens))
        tokens.extend(sent)
    return tokens, starts


def _clusters(clusters, n: int) -> list[list[tuple[int, int]]]:
    """Validated clusters, those sharing a span merged (union-find), spans sorted."""
    spans: list[list[tuple[int, int]]] = []
    for c, cl in enumerate(clusters):
        out = []
        for m in cl:
            try:
                s, e = (int(x) for x in m)
            except (TypeError, ValueError):
                raise ValueError(f"cluster {c}: mention {m!r} must be a (start, end) pair of token indices "
                                 "(0-based, end inclusive).") from None
            if not 0 <= s <= e < n:
                raise ValueError(f"cluster {c}: mention ({s}, {e}) is outside the document's {n} tokens or has "
                                 "end < start (spans are 0-based and inclusive).")
            out.append((s, e))
        spans.append(out)
    parent = list(range(len(spans)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[int, int], int] = {}
    for c, cl in enumerate(spans):
        for m in cl:
            if m in owner:
                parent[find(c)] = find(owner[m])
            else:
                owner[m] = c
    merged: dict[int, set] = {}
    for c, cl in enumerate(spans):
        merged.setdefault(find(c), set()).update(cl)
    return [sorted(v) for _, v in sorted(merged.items()) if v]


def _unanimous(tags) -> int | None:
    tags = set(tags)
    return tags.pop() if len(tags) == 1 else None


def _genders(tokens, clusters, name_gender) -> tuple[list[int | None], list[dict]]:
    """Cluster pronoun gender (None if none or conflicting) and per-mention gender maps."""
    cl_pron, mention_tag = [], []
    for cl in clusters:
        pron = [_PRONOUN_TAG[tokens[s].lower()] for s, e in cl if s == e and tokens[s].lower() in _PRONOUN_TAG]
        p = _unanimous(pron)
        cl_pron.append(p)
        tags: dict[tuple[int, int], int | None] = {}
        for s, e in cl:
            if p is not None:                                              # (a) a coreferent gendered pronoun
                tags[(s, e)] = p
                continue
            t = _TITLE_TAG.get(tokens[s].lower())                          # (b) Mr. / Mrs. / Ms.
            if t is None and e == s + 1 and name_gender is not None:      # (c) a two-token name
                g = name_gender(tokens[s])
                if g is not None and g not in _NAME_TAG:
                    raise ValueError(f"name_gender({tokens[s]!r}) returned {g!r}; it must return 'male', 'female' "
                                     "or None.")
                t = _NAME_TAG.get(g)
            tags[(s, e)] = t
        if p is None:                                                      # (d) transitive coreference
            rest = _unanimous(t for t in tags.values() if t is not None)
            if rest is not None:
                tags = {m: rest if t is None else t for m, t in tags.items()}
        mention_tag.append(tags)
    return cl_pron, mention_tag


def _subtract(span: tuple[int, int], cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pieces of ``span`` left after removing the tokens of every span in ``cuts``."""
    pieces = [span]
    for cs, ce in cuts:
        nxt = []
        for s, e in pieces:
            if ce < s or cs > e:
                nxt.append((s, e))
                continue
            if s < cs:
                nxt.append((s, cs - 1))
            if ce < e:
                nxt.append((ce + 1, e))
        pieces = nxt
    return pieces


def _disjoint(cue, attrs) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Rule 3: cut each span by the other set's spans, except those that strictly contain it."""
    def cut(spans, others):
        out = set()
        for s, e in spans:
            cuts = [(a, b) for a, b in others if not (a <= s and e <= b and (a, b) != (s, e)) and a <= e and b >= s]
            out.update(_subtract((s, e), cuts))
        return sorted(out)
    return cut(cue, attrs), cut(attrs, cue)


@validate_params({"document": ["array-like"], "clusters": ["array-like"], "name_gender": ["callable", None],
                  "max_words": [Interval(numbers.Integral, 1, None, closed="left")]})
def gender_agreement_cases(document: Sequence[Any], clusters: Sequence[Sequence[tuple[int, int]]], *,
                           name_gender: Callable[[str], str | None] | None = None,
                           max_words: int = 512) -> list[dict]:
    """Gender-agreement test cases of one coreference-annotated document (Ding & Koehn, NAACL 2021,
    Appendix A, the CoNLL part).

    Parameters
    ----------
    document : sequence of str, or sequence of sequences of str
        The document's tokens, flat or as sentences (sentence starts are where a prefix longer
        than ``max_words`` may begin; a flat list is one sentence).
    clusters : sequence of sequences of (start, end)
        Coreference clusters, each a list of mention spans over the document's tokens
        (0-based, end inclusive, as CoNLL-2012's coreference column gives them). Clusters that
        share a span are merged. A gendered pronoun is a target only if it is a one-token mention.
    name_gender : callable or None
        ``name_gender(first_token)`` -> ``"male"``, ``"female"`` or ``None`` (unknown), asked
        for two-token mentions without a pronoun or title (the paper used gender-guesser;
        e.g. ``lambda w: {"male": "male", "mostly_male": "male", "female": "female",
        "mostly_female": "female"}.get(Detector().get_gender(w))``). ``None`` (default): this
        heuristic is off.
    max_words : int
        Longest prefix, in words (default 512 as the paper).

    Returns
    -------
    list of dict
        One per kept pronoun, in document order: ``prefix`` (the tokens before the pronoun,
        from ``offset``), ``tag`` (0 male / 1 female: the pronoun's gender, as the released
        ``all.tag.txt``), ``cue`` and ``attractors`` (disjoint, sorted (start, end) spans,
        inclusive, relative to the prefix — the ``all.subjs.txt`` format read by
        :func:`trustlab.metrics.read_spans`), ``pronoun`` (its document index) and ``offset``
        (the document index of ``prefix[0]``).

    Examples
    --------
    >>> doc = [["Mr.", "Lee", "met", "Mrs.", "Park", "."], ["Later", ",", "she", "called", "him", "."]]
    >>> clusters = [[(0, 1), (10, 10)], [(3, 4), (8, 8)]]
    >>> for c in gender_agreement_cases(doc, clusters):
    ...     print(c["tag"], c["cue"], c["attractors"], c["pronoun"])
    0 [(0, 1)] [(3, 4), (8, 8)] 10
    """
    tokens, starts = _document(document)
    n = len(tokens)
    cls = _clusters(list(clusters), n)
    cl_pron, mention_tag = _genders(tokens, cls, name_gender)
    gendered = [(m, t) for tags in mention_tag for m, t in tags.items() if t is not None]
    out = []
    for c, cl in enumerate(cls):
        for p, e in cl:
            tag = _PRONOUN_TAG.get(tokens[p].lower())
            if p != e or tag is None or cl_pron[c] != tag:
                continue
            fits = [s for s in starts if p - s <= max_words and s <= p]
            lo = min(fits) if fits else p - max_words
            inside = [(m, t) for m, t in gendered if lo <= m[0] and m[1] < p]
            own = set(cl)
            cue = [m for m, t in inside if m in own]
            attrs = [m for m, t in inside if t != tag]
            # rule 5: the highest gendered token before the pronoun belongs to the other gender
            top = max((m[1] for m, _ in inside), default=None)
            if top is None or not any(t != tag for m, t in inside if m[0] <= top <= m[1]):
                continue
            cue, attrs = _disjoint(sorted(set(cue)), sorted(set(attrs)))
            if not cue or not attrs:
                continue
            out.append({"prefix": tokens[lo:p], "tag": tag, "cue": [(s - lo, e - lo) for s, e in cue],
                        "attractors": [(s - lo, e - lo) for s, e in attrs], "pronoun": p, "offset": lo})
    out.sort(key=lambda d: d["pronoun"])
    return out
