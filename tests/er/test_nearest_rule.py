"""The ``nearest:COL[+COL]:K`` blocking rule (stop 52): each record with its K most similar
records by the IDF-weighted cosine of its words, an opt-in rule the default blocking never chooses."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import trustlab
import trustlab.er.blocking as B
from trustlab.er.blocking import adaptive_blocking_rules, block, nearest_pairs
from trustlab.er.kinds import Field
from trustlab.er.rules import canonical_rules, parse_rule


def _brute(texts, k):
    """Plain-Python k nearest neighbours: words split letters/digits, idf log((N+1)/(df+1))+1 over
    the records with a word, unit vectors, cosine; ties to the lower position; no shared word, no pair."""
    import re

    words = [set(w for w in re.sub(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])", " ", t.lower()).split()
                 if len(w) > 1) for t in texts]
    has = [i for i, w in enumerate(words) if w]
    df = {}
    for i in has:
        for w in words[i]:
            df[w] = df.get(w, 0) + 1
    N = len(has)
    idf = {w: np.log((N + 1) / (d + 1)) + 1 for w, d in df.items()}
    norm = {i: np.sqrt(sum(idf[w] ** 2 for w in words[i])) for i in has}
    out = set()
    for i in has:
        sims = []
        for j in has:
            if j == i:
                continue
            s = sum(idf[w] ** 2 for w in words[i] & words[j] if df[w] > 1) / (norm[i] * norm[j])
            if s > 0:
                sims.append((-s, j))
        for _, j in sorted(sims)[:k]:
            out.add((min(i, j), max(i, j)))
    return sorted(out)


def _texts(n, seed):
    rng = np.random.default_rng(seed)
    vocab = [f"w{a}" for a in "abcdefghijklmnopqrstuvwxyz"[:20]] + ["acme", "gist", "blue", "x"]
    return [" ".join(rng.choice(vocab, size=rng.integers(0, 6))) for _ in range(n)]


@pytest.mark.parametrize("k", [1, 2, 4])
def test_nearest_pairs_match_a_plain_python_search(k):
    texts = _texts(60, k)
    v = pd.Series(texts).str.lower()
    got = [tuple(p) for p in nearest_pairs(v, k).tolist()]
    want = _brute(texts, k)
    # distinct similarities give one answer; with ties both keep the lower positions, so the
    # sets agree up to pairs whose similarity ties the k-th: compare the similarities kept
    assert len(got) == len(set(got))
    assert all(i < j for i, j in got)
    assert set(got) == set(want)


def test_the_work_bound_leaves_out_the_most_common_words(monkeypatch):
    # two records share a rare word; every record holds the common word "comm"
    texts = ["zeta gear comm", "zeta gearbox comm"] + [f"item{a} comm" for a in "abcdefghij"]
    v = pd.Series(texts)
    assert [0, 1] in nearest_pairs(v, 1).tolist()
    monkeypatch.setattr(B, "NEAR_MAX_WORK", 5)  # "comm" (12 records, 144 products) is left out
    P = nearest_pairs(v, 1).tolist()
    assert P == [[0, 1]]  # only the pair that shares a word the search kept


def test_rule_reads_back_and_blocks():
    r = parse_rule("nearest:name+`a:b`:4")
    assert (r.kind, r.columns, r.option) == ("nearest", ("name", "a:b"), "4")
    assert canonical_rules(["nearest:name+`a:b`:4"]) == ["nearest:name+`a:b`:4"]
    df = pd.DataFrame({"name": ["acme widget", "zeta gear", "acme widgets", "zeta gears"],
                       "a:b": ["3000", "x1", "3000", "x1"]})
    assert block(df, ["nearest:name+`a:b`:1"]).tolist() == [[0, 2], [1, 3]]
    with pytest.raises(ValueError, match="the neighbours per record"):
        block(df, ["nearest:name:two"])


def test_the_default_rules_never_choose_it():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"description": [" ".join(rng.choice(["acme", "gist", "blue", "red", "box"], 8))
                                       for _ in range(3000)]})
    rules = adaptive_blocking_rules(df, [Field("description", "tokens")], max_block_size=200)
    assert rules and not any(r.startswith("nearest") for r in rules)


def test_resolve_with_a_nearest_rule_finds_the_pairs_token_blocks_purge():
    # every word is in more than 12 records (token:...@12 purges every block), but the two
    # records of an entity share a pair of words no other entity holds
    import itertools

    rng = np.random.default_rng(1)
    common = [f"common{a}" for a in "abcdef"]
    combos = list(itertools.combinations([f"mid{a}{b}" for a in "abcde" for b in "uvwxyz"], 2))
    pick = rng.permutation(len(combos))[:300]
    rows, ent = [], []
    for e, c in enumerate(pick):
        for _ in range(2):
            rows.append(" ".join(list(rng.choice(common, 3, replace=False)) + list(combos[c])))
            ent.append(e)
    df = pd.DataFrame({"id": range(len(rows)), "description": rows, "ent": ent})
    kw = dict(id_col="id", fields={"description": "tokens"}, truth="ent")
    with pytest.warns(Warning):
        base = trustlab.resolve(df, blocking=["token:description@12"], **kw)
    near = trustlab.resolve(df, blocking=["token:description@12", "nearest:description:1"], **kw)
    assert base.blocking.pair_completeness == 0.0
    assert near.blocking.pair_completeness > 0.95


def test_a_table_too_large_for_the_dense_rows_is_refused(monkeypatch):
    import trustlab.er.blocking as B

    monkeypatch.setattr(B, "NEAREST_MAX_RECORDS", 3)
    with pytest.raises(ValueError, match="at most 3 records"):
        B.nearest_pairs(pd.Series(["a b", "a c", "b c", "c d"]), 1)
    assert B.nearest_pairs(pd.Series(["ab cd", "ab cd", "ef"]), 1).tolist() == [[0, 1]]
