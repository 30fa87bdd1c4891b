"""A session's m from the pairs its value alone makes matches (stop 50, issue 27: ``patent``).

Where the random pairs hold many matches (``random_match_share_ >= RANDOM_MATCH_SHARE``), the EM of
a TF field's session may take the pairs that look alike on every field for its match class (patent:
7 % of the same-name pairs, where all are matches), so fields that vary inside one entity (patent
classes) get an m with almost no disagreement. ``FSModel._confident_session_m`` takes that session's
m instead from the pairs whose agreement on a rare value makes them matches on its own, where the EM
calls most of those non-matches (mean posterior < CONFIDENT_EM_AGREEMENT) and its match class
disagrees less than they do.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import trustlab.er.scoring as S
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel

FIELDS = [Field("name", "name"), Field("klass", "string"), Field("city", "name")]


def _session_table(seed: int):
    """Records under names held by 2 to 60 records, and the levels of every pair sharing a name
    (the name's session: level 0 on the name, random levels elsewhere, some missing)."""
    rng = np.random.default_rng(seed)
    sizes = [60, 30] + [int(k) for k in rng.integers(2, 6, 150)]
    names = np.repeat([f"company {i}" for i in range(len(sizes))], sizes)
    df = pd.DataFrame({"name": names, "klass": "x", "city": "y"})
    n = len(df)
    P = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if names[i] == names[j]], np.int64)
    G = rng.choice(4, size=(len(P), 3), p=[0.3, 0.2, 0.2, 0.3]).astype(np.int8)
    G[:, 0] = 0
    G[rng.random(G.shape) < 0.1] = -1
    G[:, 0] = 0
    return df, P, G


def _slow_confident_m(df, P, G, lam_r, m0, free):
    """Pair by pair: the value's share of the records, the match probability of agreeing on it
    alone, and the level shares of the free fields over the pairs at >= CONFIDENT_MATCH."""
    names = df["name"].tolist()
    n = len(names)
    chosen = []
    for k, (i, j) in enumerate(P):
        t = names.count(names[i]) / n
        odds = lam_r * m0 / ((1 - lam_r) * t)
        if odds / (1 + odds) >= S.CONFIDENT_MATCH:
            chosen.append(k)
    out = {}
    for f in np.flatnonzero(free):
        counts = [sum(1 for k in chosen if G[k, f] == lv) + 1e-3 for lv in range(4)]
        out[f] = np.array(counts) / sum(counts)
    return out, len(chosen)


@pytest.mark.parametrize("seed", [0, 1])
def test_confident_m_equals_the_pair_by_pair_count(seed):
    df, P, G = _session_table(seed)
    fm = FSModel(FIELDS)
    fm.fit_tf(df)
    m_prev = np.tile([0.6, 0.2, 0.1, 0.1], (3, 1))
    free = np.array([False, True, True])
    # an EM whose match class is nearly empty (λ 1e-4): it calls the confident pairs non-matches
    em = (np.tile([0.25, 0.25, 0.25, 0.25], (3, 1)), 1e-4, np.tile([0.25, 0.25, 0.25, 0.25], (3, 1)))
    got = fm._confident_session_m(0, G, df, P, np.ones(len(P), bool), free, free, (0.05, m_prev), em)
    want, n_conf = _slow_confident_m(df, P, G, 0.05, 0.6, free)
    assert got is not None and 0 < n_conf < len(P)  # the small companies' pairs, not the two large ones
    m, k = got
    assert k == n_conf
    for f, w in want.items():
        np.testing.assert_allclose(m[f], w, rtol=1e-9)
    np.testing.assert_array_equal(m[0], em[0][0])  # the session's own field keeps the EM's row


def test_confident_m_is_not_used_where_the_em_agrees_or_too_few_pairs_are_confident():
    df, P, G = _session_table(0)
    fm = FSModel(FIELDS)
    fm.fit_tf(df)
    m_prev = np.tile([0.6, 0.2, 0.1, 0.1], (3, 1))
    free = np.array([False, True, True])
    flat = np.tile([0.25, 0.25, 0.25, 0.25], (3, 1))
    # the session's EM calls (nearly) every pair a match: its m stands
    assert fm._confident_session_m(0, G, df, P, np.ones(len(P), bool), free, free, (0.05, m_prev),
                                   (flat, 0.999, flat)) is None
    # a small random match share: no pair is a match on its name alone
    assert fm._confident_session_m(0, G, df, P, np.ones(len(P), bool), free, free, (1e-4, m_prev),
                                   (flat, 1e-4, flat)) is None
    # the EM's mean posterior over the confident pairs decides (levels that favour the match
    # class; λ 0.05: below CONFIDENT_EM_AGREEMENT, λ 0.9: above)
    m_s = np.tile([0.7, 0.2, 0.07, 0.03], (3, 1))
    u_s = np.tile([0.03, 0.07, 0.2, 0.7], (3, 1))
    names = df["name"].to_numpy()
    t = pd.Series(names).map(pd.Series(names).value_counts() / len(names)).to_numpy()[P[:, 0]]
    conf = (0.05 * 0.6 / (0.95 * t)) / (1 + 0.05 * 0.6 / (0.95 * t)) >= S.CONFIDENT_MATCH
    used = []
    for lam in (0.05, 0.9):
        lw = math.log(lam / (1 - lam)) + sum(
            np.where(G[:, f] >= 0, np.log(m_s[f, np.maximum(G[:, f], 0)]) - np.log(u_s[f, np.maximum(G[:, f], 0)]), 0.0)
            for f in (1, 2))
        p_rows = 1 / (1 + np.exp(-lw))
        res = fm._confident_session_m(0, G, df, P, np.ones(len(P), bool), free, free, (0.05, m_prev), (m_s, lam, u_s))
        assert (res is None) == (p_rows[conf].mean() >= S.CONFIDENT_EM_AGREEMENT)
        used.append(res is not None)
    assert used == [True, False]
    # an EM match class that disagrees more than the confident pairs do (else 0.7 a field): not
    # the narrow look-alike class the rule is for, its m stands
    wide = np.tile([0.1, 0.1, 0.1, 0.7], (3, 1))
    assert fm._confident_session_m(0, G, df, P, np.ones(len(P), bool), free, free, (0.05, m_prev),
                                   (wide, 1e-4, u_s)) is None
    assert fm._confident_session_m(0, G, df, P, np.ones(len(P), bool), free, free, (0.05, m_prev),
                                   (m_s, 1e-4, u_s)) is not None


@pytest.mark.slow
def test_patent_company_sessions_take_the_confident_pairs_m():
    """patent (PATSTAT company holders, shipped): the name session's m comes from its confident
    pairs, the classes' m(else) rises towards the truth's (0.16 -> 0.3; truth among candidate
    matches 0.53), and the pairwise F1 passes 0.30 (0.259 with the session's EM)."""
    import warnings

    import trustlab
    from trustlab.datasets import load_er_dataset

    ds = load_er_dataset("patent")
    df = ds.records.drop(columns=[ds.truth_col])
    df = df.drop(columns=[c for c in df.columns if c.lower().startswith("leuven")], errors="ignore")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve(df)
    model = res.model
    assert model.random_match_share_ >= S.RANDOM_MATCH_SHARE
    name = next(s for s in model.sessions_ if s["field"] == "Name")
    assert name.get("confident", 0) >= S.MIN_SESSION_PAIRS
    klass = [f.column for f in model.fields].index("Class")
    assert model.m_[klass, 3] > 0.25
    truth = ds.records[ds.truth_col].astype(str).to_numpy()
    ent = np.asarray(res.entity)
    same_t = truth[:, None] == truth[None, :]
    same_p = ent[:, None] == ent[None, :]
    iu = np.triu_indices(len(truth), 1)
    tp = float((same_t & same_p)[iu].sum())
    f1 = 2 * tp / (same_t[iu].sum() + same_p[iu].sum())
    assert f1 > 0.30
