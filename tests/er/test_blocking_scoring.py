"""Blocking and pair features against slow references."""
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from rapidfuzz import distance, fuzz

from trustlab.er import block, compare, pair_completeness, reduction_ratio
from trustlab.er.kinds import Field
from trustlab.er.scoring import SupervisedScorer, to_weights
from trustlab.kernels.er import haversine_km


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(1)
    words = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal"]
    names = [" ".join(rng.choice(words, size=rng.integers(1, 3))) for _ in range(60)]
    names[3] = ""
    return pd.DataFrame({"name": names, "zip": rng.choice(["1000", "2000", "3000", None], size=60),
                         "x": rng.normal(size=60)})


def norm_tokens(s):
    import re
    return set(t for t in re.sub(r"[^0-9a-z ]+", " ", (s or "").lower()).split() if len(t) > 1)


@pytest.mark.parametrize("max_size", [5, 15, 1000])
def test_token_blocking_matches_brute_force(df, max_size):
    got = {tuple(p) for p in block(df, ["token:name"], max_block_size=max_size).tolist()}
    toks = [norm_tokens(s) for s in df["name"]]
    blocks = {}
    for i, ts in enumerate(toks):
        for t in ts:
            blocks.setdefault(t, set()).add(i)
    exp = set()
    for members in blocks.values():
        if 1 < len(members) <= max_size:
            exp |= set(combinations(sorted(members), 2))
    assert got == exp


def test_key_sorted_all_and_union(df):
    n = len(df)
    allp = block(df, "all")
    assert len(allp) == n * (n - 1) // 2 and (allp[:, 0] < allp[:, 1]).all()
    key = {tuple(p) for p in block(df, ["key:zip"], max_block_size=10**6).tolist()}
    z = df["zip"].tolist()
    assert key == {(i, j) for i, j in combinations(range(n), 2) if z[i] is not None and z[i] == z[j]}
    sn = block(df, ["sorted:name:3"])
    vals = df["name"].fillna("").str.lower().tolist()
    order = [i for i in np.argsort(np.array(vals, dtype=object).astype(str), kind="stable") if vals[i] != ""]
    exp = {tuple(sorted((order[a], order[a + d]))) for d in (1, 2) for a in range(len(order) - d)}
    assert {tuple(p) for p in sn.tolist()} == exp
    both = {tuple(p) for p in block(df, ["key:zip", "sorted:name:3"], max_block_size=10**6).tolist()}
    assert both == key | exp


def test_blocking_stats():
    truth = np.array([0, 0, 0, 1, 1, 2])
    pairs = np.array([[0, 1], [3, 4], [2, 5]])
    assert pair_completeness(pairs, truth) == pytest.approx(2 / 4)
    assert reduction_ratio(3, 6) == pytest.approx(1 - 3 / 15)


def test_blocking_bad_rules(df):
    with pytest.raises(ValueError, match="not in the records"):
        block(df, ["token:nope"])
    with pytest.raises(ValueError, match="unknown blocking rule kind"):
        block(df, ["soundex:name"])


def test_features_match_rapidfuzz(df):
    pairs = block(df, "all")[:300]
    fm = compare(df, pairs, [Field("name", "name"), Field("zip", "exact"), Field("x", "numeric")])
    for k, (i, j) in enumerate(pairs):
        a, b = df["name"][i], df["name"][j]
        if not a or not b:
            assert np.isnan(fm.X[k, 0])
            continue
        assert fm.X[k, 0] == pytest.approx(distance.JaroWinkler.normalized_similarity(a, b), abs=1e-6)
        assert fm.X[k, 1] == pytest.approx(fuzz.token_set_ratio(a, b) / 100, abs=1e-5)
        zi, zj = df["zip"][i], df["zip"][j]
        if zi is None or zj is None:
            assert np.isnan(fm.X[k, 3])
        else:
            assert fm.X[k, 3] == float(zi == zj)


def test_token_overlap_and_geo():
    df = pd.DataFrame({"t": ["a b c", "b c d e", "", "a"], "lat": [52.52, 48.85, 0, 40.7],
                       "lon": [13.40, 2.35, 0, -74.0]})
    pairs = np.array(list(combinations(range(4), 2)))
    fm = compare(df, pairs, [Field("t", "tokens"), Field("lat,lon", "latlon")])
    for k, (i, j) in enumerate(pairs):
        A, B = set(df.t[i].split()), set(df.t[j].split())
        if not A or not B:
            assert np.isnan(fm.X[k, 0])
        else:
            assert fm.X[k, 0] == pytest.approx(len(A & B) / len(A | B))
            assert fm.X[k, 1] == pytest.approx(len(A & B) / min(len(A), len(B)))
    # (0, 0) is "missing" coordinates; Berlin-Paris is about 878 km
    d = haversine_km(np.array([52.52]), np.array([13.40]), np.array([48.85]), np.array([2.35]))
    assert 870 < d[0] < 885
    assert np.isnan(fm.X[1, 2])  # pair (0, 2): record 2 has no coordinates


def test_models_separate_classes():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.uniform(0.9, 1, (40, 3)), rng.uniform(0, 0.7, (400, 3))])
    y = np.r_[np.ones(40), np.zeros(400)]
    X[5, 1] = np.nan
    for m in ("logistic", "ridge"):
        p = SupervisedScorer(model=m).fit(X, y).predict_proba(X)
        assert np.mean((p > 0.5) == y) > 0.97
    with pytest.raises(ValueError, match="one class"):
        SupervisedScorer().fit(X[:10], np.ones(10))
    with pytest.raises(ValueError, match="model"):
        SupervisedScorer(model="svm")
    assert to_weights(np.array([0.5]), "logit")[0] == 0.0
    with pytest.raises(ValueError, match="weights"):
        to_weights(np.array([0.5]), "probit")


def test_compound_key_needs_every_part():
    df = pd.DataFrame({"a": ["x", "x", None, None, "y"], "b": ["1", "1", "1", "1", None]})
    assert block(df, ["key:a+b"]).tolist() == [[0, 1]]
    assert block(df, ["key:b"]).tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]


def test_adaptive_blocking_respects_its_total_pair_budget():
    """The default rules were each under a per-rule budget, so their union grew with the
    number of rules (100,000 generated records: 12 rules, 5.5M pairs, 2.5 GB); the union
    now stays within ``max_pairs`` (rules counted one by one), keeping the cheapest keys."""
    from trustlab.er import generate_records
    from trustlab.er.blocking import adaptive_blocking_rules, block
    from trustlab.er.fields import infer_fields_report

    df = generate_records(4000, random_state=3)
    fields = infer_fields_report(df.drop(columns=["entity"])).fields
    free = adaptive_blocking_rules(df, fields, max_pairs=10**9)
    tight = adaptive_blocking_rules(df, fields, max_pairs=20_000)
    assert len(tight) < len(free) and tight, (tight, free)
    assert len(block(df, tight)) <= 20_000 < len(block(df, free))
    assert tight[0] == free[0]  # the most selective key comes first either way


def test_membership_values_with_a_shared_cache_equal_those_without(monkeypatch):
    """adaptive_blocking_rules tries many rules on one table and lets them share each column's
    normalisation (membership_values' ``cache``): key rules (one column, compound, prefix),
    token rules (plain, alnum) and q-gram rules on the same columns give the memberships of
    calls without it, in any order (the key values have their spaces removed, the token
    rules' values keep them: one cache holds both)."""
    from trustlab.er.blocking import adaptive_blocking_rules, membership_values

    df = pd.DataFrame({"name": ["Ann  Lee", None, "ann-lee", "AB1234 x", "Bob O'Ray", "", "57th st", "ann lee"] * 4,
                       "city": ["Paris", "paris ", None, "Lyon", "lyon", "Nice", "nice", "Paris"] * 4,
                       "code": [1, 2, None, 4, 5, 6, 7, 1] * 4})
    rules = ["token:name", "key:name", "key:name:3", "key:name+city", "token:name:alnum", "qgram:name:3",
             "key:city", "token:city", "key:code", "key:city+name"]
    cache: dict = {}
    for order in (rules, rules[::-1]):
        for r in order:
            k0, v0 = membership_values(df, r)
            k1, v1 = membership_values(df, r, cache)
            assert k0 == k1 == "members"
            assert np.array_equal(v0[0], v1[0]) and list(v0[1]) == list(v1[1]), r
    assert ("norm", "name") in cache and "name" in cache
    import trustlab.er.blocking as B

    fields = [Field("name", "name"), Field("city", "name"), Field("code", "exact"), Field("name", "exact")]
    got = [adaptive_blocking_rules(df, fields, max_block_size=m) for m in (3, 5, 40)]
    monkeypatch.setattr(B, "membership_values", lambda df, spec, cache=None, f=membership_values: f(df, spec))
    assert got == [adaptive_blocking_rules(df, fields, max_block_size=m) for m in (3, 5, 40)]
