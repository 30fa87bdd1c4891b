"""A session of the unsupervised model (EM on the candidate pairs that agree exactly on one
field) must see the pairs that share a value *all together*. Where blocking purged a value's
block (a surname held by hundreds of records) those pairs are candidates only through the
other rules (same birth month and day, same first name), and EM took that selection for its
match class (RLdata10000: the surname session's match share 7x the truth's, the first name's
m(else) 0.37 where the duplicates' is 0)."""
from collections import Counter

import numpy as np
import pandas as pd

from trustlab.er import Field
from trustlab.er.blocking import block
from trustlab.er.comparisons import compare
from trustlab.er.defaults import random_pairs
from trustlab.er.scoring import SESSION_BLOCK_COMPLETE, FSModel

LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def _people(seed: int, n0: int = 3000, common: float = 0.08):
    """People with a first name, a surname (one held by ``common`` of them, so its block is
    purged at 200), a birth year, month and day; 200 of them copied with one field changed."""
    rng = np.random.default_rng(seed)

    def words(k):
        return ["".join(rng.choice(LETTERS, 7)) for _ in range(k)]

    firsts, surs = words(150), words(300)
    df = pd.DataFrame({
        "first": rng.choice(firsts, n0),
        "surname": np.where(rng.random(n0) < common, "mueller", rng.choice(surs, n0)),
        "year": rng.integers(1930, 1990, n0).astype(str),
        "month": rng.integers(1, 13, n0).astype(str),
        "day": rng.integers(1, 29, n0).astype(str),
        "entity": np.arange(n0),
    })
    dup = df.sample(200, random_state=seed).copy()
    for ix, c in zip(dup.index, rng.choice(["first", "surname", "year", "month", "day"], len(dup))):
        v = dup.at[ix, c]
        if c in ("first", "surname"):  # one letter replaced
            p = int(rng.integers(len(v)))
            dup.at[ix, c] = v[:p] + str(rng.choice(LETTERS)) + v[p + 1:]
        else:
            dup.at[ix, c] = str(int(v) + 1)
    return pd.concat([df, dup], ignore_index=True)


FIELDS = [Field("first", "name"), Field("surname", "name"), Field("year", "exact"), Field("month", "exact"),
          Field("day", "exact")]
RULES = ["key:surname", "key:first", "key:year+month", "key:year+day", "key:month+day"]


def _fit(df):
    P = block(df, RULES, max_block_size=200)
    only = FSModel(FIELDS).needed_features()
    R = random_pairs(len(df), np.random.default_rng(0))
    fm, fr = compare(df, P, FIELDS, only=only), compare(df, R, FIELDS, only=only)
    return P, fm, FSModel(FIELDS).fit(df, P, fm, R, fr, rules=RULES)


def test_session_ignores_pairs_of_a_purged_block():
    for seed in (0, 1):
        df = _people(seed)
        P, fm, model = _fit(df)
        s = df["surname"].to_numpy()
        same = s[P[:, 0]] == s[P[:, 1]]
        assert (same & (s[P[:, 0]] == "mueller")).sum() > 100  # the purged block's pairs are candidates
        sess = {x["field"]: x for x in model.sessions_}
        # the surname session holds the pairs of the complete blocks only
        assert sess["surname"]["pairs"] == int((same & (s[P[:, 0]] != "mueller")).sum())
        # no rule blocks on the year alone: its session is the other rules' selection, kept whole
        y = df["year"].to_numpy()
        assert sess["year"]["pairs"] == int((y[P[:, 0]] == y[P[:, 1]]).sum())
        # duplicates' first names agree exactly or differ by one letter: m(else) ~ 0 (0.2 before)
        assert model.m_[0, 3] < 0.05
        # the surname session's match share is the duplicates' share among its pairs
        e = df["entity"].to_numpy()
        true_share = float(((e[P[:, 0]] == e[P[:, 1]]) & same & (s[P[:, 0]] != "mueller")).sum()
                           / sess["surname"]["pairs"])
        assert 0.5 * true_share < sess["surname"]["lambda"] < 1.5 * true_share


def test_complete_session_pairs_against_brute_force():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.choice(["x", "y", "z", "w", None], 60), "b": rng.choice(list("pq"), 60)})
    fields = [Field("a", "exact"), Field("b", "exact")]
    allp = np.array([(i, j) for i in range(60) for j in range(i + 1, 60)])
    P = allp[rng.random(len(allp)) < 0.3]
    P = np.concatenate([P, allp[(df["a"].to_numpy()[allp[:, 0]] == "x") & (df["a"].to_numpy()[allp[:, 1]] == "x")]])
    P = np.unique(P, axis=0)
    model = FSModel(fields)
    G = model.levels(compare(df, P, fields, only=model.needed_features()))
    got = model._complete_session_pairs(df, P, G, 0)
    a = df["a"].to_numpy()
    k = Counter(v for v in a if v is not None)
    cand = Counter(a[i] for i, j in P if a[i] is not None and a[i] == a[j])
    want = np.array([a[i] is not None and a[i] == a[j]
                     and cand[a[i]] >= SESSION_BLOCK_COMPLETE * k[a[i]] * (k[a[i]] - 1) / 2 for i, j in P])
    np.testing.assert_array_equal(got, want)
    assert want.any() and (~want & (G[:, 0] == 0)).any()  # both kinds of value occur


def test_complete_session_pairs_in_link_mode_counts_pairs_across_tables():
    """Two tables (pairs only across them): a value held by one record of table A and five of
    table B has five possible pairs, not fifteen; all five proposed is a complete block."""
    rng = np.random.default_rng(4)
    a = np.array(["x"] * 6 + list(rng.choice(["y", "z", "w"], 54)), dtype=object)
    src = np.array([0] + [1] * 5 + list(rng.integers(0, 2, 54)))
    df = pd.DataFrame({"a": a})
    fields = [Field("a", "exact")]
    allp = np.array([(i, j) for i in range(60) for j in range(i + 1, 60) if src[i] != src[j]])
    P = allp[(rng.random(len(allp)) < 0.3) | ((a[allp[:, 0]] == "x") & (a[allp[:, 1]] == "x"))]
    model = FSModel(fields)
    G = model.levels(compare(df, P, fields, only=model.needed_features()))
    got = model._complete_session_pairs(df, P, G, 0, sources=src)
    cand = Counter(a[i] for i, j in P if a[i] == a[j])
    possible = Counter()
    for i, j in allp:
        if a[i] == a[j]:
            possible[a[i]] += 1
    want = np.array([a[i] == a[j] and cand[a[i]] >= SESSION_BLOCK_COMPLETE * possible[a[i]] for i, j in P])
    np.testing.assert_array_equal(got, want)
    assert got[(a[P[:, 0]] == "x") & (a[P[:, 1]] == "x")].all()
    assert not model._complete_session_pairs(df, P, G, 0)[(a[P[:, 0]] == "x") & (a[P[:, 1]] == "x")].any()
