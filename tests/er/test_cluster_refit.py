"""``m`` re-estimated from the clusters (stop 50, issue 27: ``jedai_cora``).

EM's match class on citations is "the same version of a paper": pairs of two versions (another
year, other pages) score as non-matches although the clustering joins them through chains of
versions. ``FSModel.m_from_clusters`` adds those hidden matches to the level counts of a field
only where the pair's *other* fields favour a match, and ``resolve`` re-scores and re-clusters
with it (``pipeline._refit_from_clusters``) when the hidden matches are a large enough share.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import trustlab.er.pipeline as PL
from trustlab.er import evaluate, resolve
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel


def _model(m: np.ndarray) -> FSModel:
    mdl = FSModel([Field(f"f{c}", "string") for c in range(m.shape[0])])
    mdl.m_ = m.copy()
    return mdl


def _brute(m_old, G, p, W, hidden, forced):
    """The re-estimate written out pair by pair."""
    F, L = m_old.shape
    m = m_old.copy()
    changed = False
    for c in range(F):
        n = sum(p[i] for i in range(len(p)) if G[i, c] >= 0 and not forced[i, c])
        cnt = [n * m_old[c, k] for k in range(L)]
        any_c = False
        for i in range(len(p)):
            if G[i, c] < 0 or forced[i, c] or not hidden[i]:
                continue
            if sum(W[i, j] for j in range(F) if j != c) > 0:
                cnt[G[i, c]] += 1 - p[i]
                any_c = True
        if any_c:
            cnt = np.maximum(cnt, 1e-3)
            m[c] = cnt / cnt.sum()
            changed = True
    if not changed:
        return None
    m = np.clip(m, 1e-6, None)
    return m / m.sum(1, keepdims=True)


@pytest.mark.parametrize("seed", range(5))
def test_m_from_clusters_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    F, L, n = 3, 4, 300
    m_old = rng.dirichlet(np.ones(L), F)
    G = rng.integers(-1, L, (n, F)).astype(np.int8)
    p = rng.random(n)
    W = rng.normal(0, 3, (n, F))
    hidden = (rng.random(n) < 0.3) & (p < 0.5)
    forced = rng.random((n, F)) < 0.1
    got = _model(m_old).m_from_clusters(G, p, W, hidden, forced)
    want = _brute(m_old, G, p, W, hidden, forced)
    assert got is not None and want is not None
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_m_from_clusters_guard_other_fields():
    """A hidden pair counts for a field only when the other fields favour a match: in a one-field
    model nothing counts (the clusters' own chains are no evidence for that field)."""
    m_old = np.array([[0.7, 0.2, 0.08, 0.02]])
    G = np.array([[3], [3], [2]], np.int8)
    p = np.array([0.1, 0.2, 0.3])
    W = np.array([[-4.0], [-4.0], [-1.0]])
    assert _model(m_old).m_from_clusters(G, p, W, np.ones(3, bool)) is None
    # two fields: the first pair's second field agrees strongly, the second pair's does not
    m2 = np.array([[0.7, 0.2, 0.08, 0.02], [0.8, 0.1, 0.05, 0.05]])
    G2 = np.array([[3, 0], [3, 3], [0, 3]], np.int8)
    W2 = np.array([[-4.0, 5.0], [-4.0, -3.0], [2.0, -3.0]])
    got = _model(m2).m_from_clusters(G2, p, W2, np.ones(3, bool))
    assert got is not None
    # field 0: only pair 0 counts (0.9 at *else*); field 1: only pair 2 counts (0.7 at *else*)
    n0 = p.sum()
    want0 = n0 * m2[0] + np.array([0, 0, 0, 0.9])
    want1 = n0 * m2[1] + np.array([0, 0, 0, 0.7])
    np.testing.assert_allclose(got[0], want0 / want0.sum())
    np.testing.assert_allclose(got[1], want1 / want1.sum())
    # a key field the pair was selected on is left out
    forced = np.zeros((3, 2), bool)
    forced[0, 0] = True
    got_f = _model(m2).m_from_clusters(G2, p, W2, np.ones(3, bool), forced)
    n_f = p[1:].sum()
    np.testing.assert_allclose(got_f[0], m2[0] * n_f / (n_f * m2[0]).sum())


def _versions_table(seed: int, n_ent: int = 14, per: int = 24, nver: int = 4) -> pd.DataFrame:
    """Citation-like records: each paper (entity) in ``nver`` versions (year, pages, venue), its
    records drawing a version, sometimes the pages of another (chains between versions)."""
    rng = np.random.default_rng(seed)
    words = [f"w{a}{b}" for a in "abcdefghijklmnop" for b in "qrstuvwxyz"]
    names = ["smith", "jones", "brown", "garcia", "miller", "davis", "wilson", "moore", "taylor", "thomas",
             "white", "harris", "martin", "clark", "lewis", "walker"]
    venues = ["proc icml", "proc nips", "machine learning", "jair", "proc aaai", "proc ijcai", "colt", "kdd"]
    rows = []
    for e in range(n_ent):
        title = " ".join(rng.choice(words, 6, replace=False))
        auth = " ".join(rng.choice(names, 2, replace=False))
        Y = [str(1990 + rng.integers(0, 9)) for _ in range(nver)]
        Pg = [f"{rng.integers(1, 500)}-{rng.integers(500, 900)}" for _ in range(nver)]
        V = [venues[rng.integers(len(venues))] for _ in range(nver)]
        for _ in range(per):
            v = rng.integers(nver)
            w = rng.integers(nver) if rng.random() < 0.3 else v
            year, pages, venue = Y[v], Pg[w], V[v]
            if rng.random() < 0.2:
                pages = None
            t = title.split()
            if rng.random() < 0.3:
                t[rng.integers(len(t))] = str(rng.choice(words))
            rows.append(dict(author=auth, title=" ".join(t), venue=venue, year=year, pages=pages, truth=e))
    df = pd.DataFrame(rows).sample(frac=1, random_state=seed).reset_index(drop=True)
    df.insert(0, "id", range(len(df)))
    return df


def _f1(df: pd.DataFrame, monkeypatch, rounds: int) -> tuple[float, float, object]:
    monkeypatch.setattr(PL, "REFIT_ROUNDS", rounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = resolve(df.drop(columns="truth"), id_col="id")
    ev = evaluate(np.asarray(r.entity), df["truth"].astype(str).to_numpy())
    return ev["f1"], ev["precision"], r


@pytest.mark.parametrize("seed", [1, 2])
def test_resolve_joins_versions_with_cluster_refit(seed, monkeypatch):
    df = _versions_table(seed)
    f0, p0, r0 = _f1(df, monkeypatch, 0)
    f1, p1, r1 = _f1(df, monkeypatch, 2)
    assert f1 > f0 + 0.05
    assert p1 >= p0 - 0.02
    # the pages' disagreement is no longer as rare among matches
    c = [f.column for f in r1.model.fields].index("pages")
    assert r1.model.m_[c, 3] > 1.5 * r0.model.m_[c, 3]


def test_one_field_table_unchanged(monkeypatch):
    """One compared field (an organisation's name): no hidden pair counts, the same entities."""
    rng = np.random.default_rng(0)
    base = ["acme corp", "acme research", "globex inc", "globex labs", "initech", "umbrella co"]
    names = [b + (" " + str(rng.choice(["dept", "div", "branch", "lab"])) if rng.random() < 0.5 else "")
             for b in rng.choice(base, 200)]
    df = pd.DataFrame({"id": range(200), "organisation": names})
    out = []
    for rounds in (0, 2):
        monkeypatch.setattr(PL, "REFIT_ROUNDS", rounds)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(np.asarray(resolve(df, id_col="id").entity))
    assert (pd.factorize(out[0])[0] == pd.factorize(out[1])[0]).all()


def test_settings_record_the_weights_the_refit_used(monkeypatch):
    """Where the re-estimate acts, ``Resolution.settings`` says so and names the log-odds
    weights the clustering used (a saved model applies what the run used)."""
    f1, _, r = _f1(_versions_table(1), monkeypatch, 2)
    assert r.settings["cluster_refits"] >= 1
    assert r.settings["weights"] == "logit"
    f0, _, r0 = _f1(_versions_table(1), monkeypatch, 0)
    assert r0.settings["cluster_refits"] == 0
    assert r0.settings["weights"] == "centered"


def test_refit_model_survives_a_model_file(monkeypatch, tmp_path):
    """A model whose m was re-estimated from the clusters is saved and applied again with the
    log-odds weights its run used: the same entities on the training records."""
    from trustlab.er import load_model, save_model

    df = _versions_table(1)
    _, _, r = _f1(df, monkeypatch, 2)
    assert r.settings["cluster_refits"] >= 1
    save_model(r, tmp_path / "m.json")
    mdl = load_model(tmp_path / "m.json")
    assert mdl.settings["cluster_refits"] == r.settings["cluster_refits"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = resolve(df.drop(columns="truth"), id_col="id", model=mdl)
    assert a.settings["weights"] == "logit" and a.settings["cluster_refits"] == 0
    assert np.array_equal(pd.factorize(np.asarray(a.entity))[0], pd.factorize(np.asarray(r.entity))[0])


@pytest.mark.parametrize("left, refits", [(1e-3, 0), (1e9, 1)])
def test_explicit_time_limit_skips_a_refit_it_would_cut_short(monkeypatch, left, refits):
    """With an explicit ``time_limit`` a re-estimate runs only while at least as much time is
    left as the clustering before it took (a millisecond left: none; plenty: as without a limit)."""
    monkeypatch.setattr(PL._ClusteringConfig, "time_left", lambda self: left)
    monkeypatch.setattr(PL, "REFIT_ROUNDS", 1)
    df = _versions_table(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = resolve(df.drop(columns="truth"), id_col="id", time_limit=60)
    assert r.settings["cluster_refits"] == refits
