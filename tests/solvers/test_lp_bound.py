"""The triangle LP bound (solvers/bounds.triangle_lp_bound; kernels/packing.violated_triangles
and wedge_packing_rows) and its use as the certificate of partition's unproven components."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import trustlab.solvers.api as api
from tests.solvers.test_bounds import _brute, _random_graph
from trustlab.kernels import packing as K
from trustlab.solvers import partition
from trustlab.solvers.bounds import _csr, packing_bound, triangle_lp_bound


def test_packing_rows_are_the_packing():
    """wedge_packing_rows packs the same amount as wedge_packing, and its rows are conflict
    wedges whose amounts keep every pair within its capacity."""
    for seed in range(60):
        n, r, c, w = _random_graph(seed, 3, 60)
        cs = _csr(n, r, c, w)
        P, lb, work, done = K.wedge_packing(*cs, r.size, 10**15)
        P2, lb2, work2, done2, o1, o2, o3, om = K.wedge_packing_rows(*cs, r.size, 10**15)
        assert (P, lb, work, done) == (P2, lb2, work2, done2)
        assert om.sum() == pytest.approx(lb, abs=1e-9) and o1.size <= r.size and np.all(om > 0)
        load = np.bincount(o1, om, r.size) + np.bincount(o2, om, r.size) + np.bincount(o3[o3 >= 0], om[o3 >= 0], r.size)
        assert np.all(load <= np.abs(w) + 1e-9), seed
        assert np.all(w[o1] > 0) and np.all(w[o2] > 0) and np.all(w[o3[o3 >= 0]] <= 0)
        ends = lambda e: {int(r[e]), int(c[e])}  # noqa: E731
        for a, b, t in zip(o1.tolist(), o2.tolist(), o3.tolist()):
            apex = ends(a) & ends(b)
            assert len(apex) == 1
            if t >= 0:
                assert ends(t) == (ends(a) | ends(b)) - apex


def _violated_slow(n, r, c, x, eps):
    pair = {}
    for e, (a, b) in enumerate(zip(r.tolist(), c.tolist())):
        pair[(a, b)] = pair[(b, a)] = e
    out = set()
    for a in range(n):
        nb = sorted(u for u in range(n) if (a, u) in pair and x[pair[(a, u)]] > eps)
        for u, v in itertools.combinations(nb, 2):
            e3 = pair.get((u, v), -1)
            val = x[pair[(a, u)]] + x[pair[(a, v)]] - 1.0 - (x[e3] if e3 >= 0 else 0.0)
            if val > eps:
                out.add((pair[(a, u)], pair[(a, v)], e3, round(val, 9)))
    return out


def test_violated_triangles_against_enumeration():
    rng = np.random.default_rng(0)
    for seed in range(40):
        n, r, c, w = _random_graph(seed, 3, 25)
        if r.size == 0:
            continue
        x = np.where(rng.random(r.size) < 0.3, 1.0, np.round(rng.random(r.size), 3))
        indptr, indices, _, eid = _csr(n, r, c, w)
        e1, e2, e3, v, found, work, done = K.violated_triangles(indptr, indices, eid, x, 1e-6, 10**6, 10**12)
        got = {(a, b, t, round(val, 9)) for a, b, t, val in zip(e1.tolist(), e2.tolist(), e3.tolist(), v.tolist())}
        assert done and found == len(got) == e1.size
        assert got == _violated_slow(n, r, c, x, 1e-6), seed
        if found > 2:  # a capped run records a prefix and counts all
            f1 = K.violated_triangles(indptr, indices, eid, x, 1e-6, 2, 10**12)
            assert f1[0].size == 2 and f1[4] == found


def _full_lp(n, r, c, w):
    """The triangle LP with every triangle inequality written out (scipy HiGHS)."""
    pair = {}
    for e, (a, b) in enumerate(zip(r.tolist(), c.tolist())):
        pair[(a, b)] = pair[(b, a)] = e
    rows = []
    for a in range(n):
        nb = [u for u in range(n) if (a, u) in pair]
        for u, v in itertools.combinations(nb, 2):
            rows.append((pair[(a, u)], pair[(a, v)], pair.get((u, v), -1)))
    if not rows:
        return float(np.maximum(w, 0).sum())
    R = np.array(rows)
    k = len(rows)
    has = R[:, 2] >= 0
    G = sp.csr_matrix((np.r_[np.ones(2 * k), -np.ones(has.sum())],
                       (np.r_[np.arange(k), np.arange(k), np.flatnonzero(has)], np.r_[R[:, 0], R[:, 1], R[has, 2]])),
                      shape=(k, r.size))
    res = linprog(-w, A_ub=G, b_ub=np.ones(k), bounds=(0, 1), method="highs")
    return -res.fun


def test_lp_bound_is_valid_and_tighter_than_the_packing():
    """Against brute force: never below the optimum, never above the packing bound; where
    no violated triangle is left it is the full triangle LP's optimum; strictly tighter than
    the packing on some graphs and exact on some (the test can tell)."""
    tighter = exact = 0
    for seed in range(80):
        n, r, c, w = _random_graph(seed, 3, 8)
        opt = _brute(n, r, c, w)
        b = triangle_lp_bound(n, r, c, w)
        pk = packing_bound(n, r, c, w)["bound"]
        assert b["bound"] >= opt - 1e-7, (seed, b, opt)
        assert b["bound"] <= pk + 1e-9
        if b["complete"]:
            assert b["bound"] == pytest.approx(_full_lp(n, r, c, w), abs=1e-6)
        tighter += b["bound"] < pk - 1e-6
        exact += b["bound"] <= opt + 1e-7
    assert tighter > 5 and exact > 0  # (on graphs this small the triangle LP is mostly exact)


def test_lp_bound_on_larger_graphs_stays_above_the_heuristic_and_below_the_packing():
    for seed in range(6):
        n, r, c, w = _random_graph(100 + seed, 60, 120, decimals=2)
        b = triangle_lp_bound(n, r, c, w)
        res = partition(list(zip(r.tolist(), c.tolist(), w.tolist())), nodes=list(range(n)), method="heuristic",
                        random_state=0, lp_bound=True)
        assert res.objective <= b["bound"] + 1e-7 <= packing_bound(n, r, c, w)["bound"] + 2e-7
        assert b["rounds"] >= 1


def _planted(n, k, seed, p_in=0.6, p_out=0.02):
    """A sparse planted partition: k groups; positive pairs inside with probability p_in,
    noisy positive pairs across with p_out, and negative pairs."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, k, n)
    iu, ju = np.triu_indices(n, 1)
    same = g[iu] == g[ju]
    pos = np.where(same, rng.random(iu.size) < p_in, rng.random(iu.size) < p_out)
    neg = ~pos & (rng.random(iu.size) < np.where(same, 0.1, 0.03))
    keep = pos | neg
    w = np.where(pos[keep], rng.uniform(0.5, 3.0, keep.sum()), -rng.uniform(0.5, 3.0, keep.sum()))
    return iu[keep], ju[keep], np.round(w, 2)


def test_large_heuristic_component_reports_the_lp_bound():
    """A component too large for the exact solver (auto: the heuristic) reports the LP bound,
    tighter than the packing bound, and the same partition as without it (fails on the code
    before the LP bound: no ``lp_bound``)."""
    n = 450
    r, c, w = _planted(n, 60, 1)
    edges = list(zip(r.tolist(), c.tolist(), w.tolist()))
    res = partition(edges, nodes=list(range(n)), method="auto", random_state=0, lp_bound=True)
    comp = max(res.components, key=lambda d: d["size"])
    assert comp["size"] > api.AUTO_EXACT_MAX
    assert "lp_bound" in comp and comp["lp_bound"] < comp["packing_bound"] - 1.0
    assert comp["bound"] <= comp["lp_bound"] + 1e-9 and comp["bound"] >= comp["objective"] - 1e-9


def test_lp_bound_does_not_change_the_partition(monkeypatch):
    """Labels and objectives with and without the LP bound are the same (it runs after the
    searches; the parts of a reduced component get it once all are solved)."""
    n = 450
    r, c, w = _planted(n, 60, 2)
    edges = list(zip(r.tolist(), c.tolist(), w.tolist()))
    kw = dict(nodes=list(range(n)), method="auto", random_state=0, work_limit=5.0)
    a = partition(edges, lp_bound=True, **kw)
    assert any("lp_bound" in cp for cp in a.components)
    off = partition(edges, lp_bound=False, **kw)
    assert not any("lp_bound" in cp for cp in off.components)
    assert np.array_equal(np.asarray(a.labels), np.asarray(off.labels))
    monkeypatch.setattr(api, "_lp_certify", lambda *a, **k: None)
    monkeypatch.setattr(api, "_lp_certify_edges", lambda *a, **k: None)
    b = partition(edges, lp_bound=True, **kw)
    assert np.array_equal(np.asarray(a.labels), np.asarray(b.labels))
    assert a.objective == b.objective and a.bound <= b.bound + 1e-9


@pytest.mark.parametrize("budget", [{"time_limit": 30}, {}], ids=["wall", "work"])
@pytest.mark.parametrize("method", ["heuristic", "auto"])
def test_partition_bound_with_lp_is_valid(method, budget):
    """Against brute force through partition, under a wall-clock time_limit and under the
    default counted-work budget: the bound is never below the optimum and ``optimal`` only at
    it; the LP proves some heuristic components the packing did not."""
    by_lp = 0
    for seed in range(30):
        n, r, c, w = _random_graph(500 + seed, 5, 9, decimals=2)
        if r.size == 0:
            continue
        opt = _brute(n, r, c, w)
        res = partition(list(zip(r.tolist(), c.tolist(), w.tolist())), nodes=list(range(n)), method=method,
                        random_state=seed, lp_bound=True, **budget)
        assert res.bound >= opt - 1e-7, (seed, res.bound, opt)
        if res.status == "optimal":
            assert res.objective == pytest.approx(opt, abs=1e-7)
        by_lp += sum(cp.get("proved_by") == "lp" for cp in res.components)
    if method == "heuristic":
        assert by_lp > 0


def test_lp_bound_limits_are_counts_not_the_clock(monkeypatch):
    """The bound depends on the input only: the same with a clock that runs 1,000 s per
    reading (a very slow machine; stop 51's 30 s wall guard stopped it before the first LP);
    its charged work (lp_charge before each LP, the separations' steps) stays within
    ``max_seconds``, and a smaller ``max_seconds`` stops it earlier (the charge is checked
    before an LP runs)."""
    import trustlab.solvers.bounds as B

    n, r, c, w = _random_graph(7, 60, 90, decimals=2)
    ref = triangle_lp_bound(n, r, c, w)
    assert ref["rounds"] >= 2 and 0 < ref["work"] <= B.LP_MAX_SECONDS and not ref["wall_stop"]
    assert triangle_lp_bound(n, r, c, w) == ref
    t = [0.0]

    def slow():
        t[0] += 1000.0
        return t[0]

    monkeypatch.setattr(B.time, "perf_counter", slow)
    assert triangle_lp_bound(n, r, c, w) == ref
    monkeypatch.undo()
    first = B.lp_charge(1, 3, r.size)  # (the least any LP is charged)
    small = triangle_lp_bound(n, r, c, w, max_seconds=first / 2)
    assert small["rounds"] == 0 and small["bound"] == pytest.approx(packing_bound(n, r, c, w)["bound"])
    # a wall limit is a safety stop only: a generous one changes nothing
    assert triangle_lp_bound(n, r, c, w, wall_limit=1e6) == ref


def test_partition_gives_the_lp_bound_within_its_budget():
    """With lp_bound=True an unproven component gets the LP bound; its counted work is
    within the budget (_lp_budget: what the search left of the component's share, at least
    LP_BUDGET_SHARE of it, at most LP_MAX_SECONDS) and charged to the component's work; the
    partition is the one without the LP bound, and a second run gives the same bound and
    status."""
    from trustlab.solvers.bounds import LP_MAX_SECONDS

    n = 450
    r, c, w = _planted(n, 60, 1)
    edges = list(zip(r.tolist(), c.tolist(), w.tolist()))
    kw = dict(nodes=list(range(n)), method="auto", random_state=0, work_limit=20.0)
    res = partition(edges, lp_bound=True, **kw)
    comp = max(res.components, key=lambda d: d["size"])
    assert comp["status"] != "optimal" or comp.get("proved_by") == "lp"
    assert "lp_bound" in comp and comp["lp_bound_work"] > 0
    assert comp["lp_bound_work"] <= comp["lp_bound_budget"] + 1e-12
    assert api.LP_BUDGET_SHARE * comp["time_budget"] - 1e-9 <= comp["lp_bound_budget"] <= LP_MAX_SECONDS
    assert comp["work_spent"] >= comp["lp_bound_work"]
    assert comp["work_spent"] <= (1 + api.LP_BUDGET_SHARE) * comp["time_budget"] + 1.0  # (a round may overrun)
    off = partition(edges, lp_bound=False, **kw)
    assert np.array_equal(np.asarray(res.labels), np.asarray(off.labels)) and res.objective == off.objective
    again = partition(edges, lp_bound=True, **kw)
    assert (again.bound, again.status) == (res.bound, res.status)
    assert [cp["status"] for cp in again.components] == [cp["status"] for cp in res.components]


def test_lp_budget():
    assert api._lp_budget(None, None) == 10.0
    assert api._lp_budget(8.0, 5.0) == 5.0  # what the search left
    assert api._lp_budget(8.0, 0.5) == 2.0  # at least a quarter of the share
    assert api._lp_budget(400.0, 300.0) == 10.0  # at most LP_MAX_SECONDS


def test_lp_bound_is_opt_in():
    """Off by default (stop 52: as a default it did not move the large components' counts of
    gaps within 1 % and doubled the CPU of two real files); on when asked, under either budget."""
    n = 450
    r, c, w = _planted(n, 60, 3)
    edges = list(zip(r.tolist(), c.tolist(), w.tolist()))
    for budget in ({"time_limit": 5.0}, {"work_limit": 5.0}):
        off = partition(edges, nodes=list(range(n)), method="auto", random_state=0, **budget)
        assert not any("lp_bound" in cp for cp in off.components)
    on = partition(edges, nodes=list(range(n)), method="auto", random_state=0, work_limit=5.0, lp_bound=True)
    assert any("lp_bound" in cp for cp in on.components)
