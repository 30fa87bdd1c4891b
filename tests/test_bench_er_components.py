"""bench/er_components.py's bookkeeping: size bands, the gap, and the mapping of the partition
solver's per-component statistics back to components of the input graph."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from tests.bench_modules import bench_module
from tests.reference import set_partitions


@pytest.fixture(scope="module")
def erc():
    with bench_module("er_components") as mod:
        yield mod


def test_bands_at_their_edges(erc):
    got = {s: erc.band_of(s) for s in (2, 10, 11, 50, 51, 200, 201, 1000, 1001, 5000)}
    assert got == {2: "2-10", 10: "2-10", 11: "11-50", 50: "11-50", 51: "51-200", 200: "51-200",
                   201: "201-1000", 1000: "201-1000", 1001: ">1000", 5000: ">1000"}
    with pytest.raises(ValueError):
        erc.band_of(1)
    c = erc.band_counts([1, 2, 2, 12, 300, 1500], ["closed_form", "closed_form", "optimal", "optimal",
                                                   "time_limit", "feasible"])
    assert c == {"2-10": {"closed_form": 1, "optimal": 1}, "11-50": {"optimal": 1}, "51-200": {},
                 "201-1000": {"time_limit": 1}, ">1000": {"feasible": 1}}


def test_rel_gap(erc):
    assert erc.rel_gap(9.0, 10.0) == pytest.approx(0.1)
    assert erc.rel_gap(-11.0, -10.0) == pytest.approx(0.1)  # |bound| in the denominator
    assert erc.rel_gap(10.0, 10.0) == 0.0 and erc.rel_gap(10.5, 10.0) == 0.0
    assert erc.rel_gap(-1.0, 0.0) == float("inf")
    assert np.isnan(erc.rel_gap(1.0, None)) and np.isnan(erc.rel_gap(1.0, float("nan")))


def _graph(sizes, seed=0):
    """Disjoint random components (a spanning path of positive edges, the rest mixed) plus
    isolated nodes, nodes shuffled so the components are not contiguous."""
    rng = np.random.default_rng(seed)
    n = sum(sizes) + 3
    perm = rng.permutation(n)
    rows, cols, vals, start = [], [], [], 0
    for s in sizes:
        nodes = perm[start:start + s]
        start += s
        for i in range(s):
            for j in range(i + 1, s):
                if j == i + 1 or rng.random() < 0.5:
                    w = rng.uniform(0.5, 3.0) if j == i + 1 else rng.normal(0.0, 2.0)
                    a, b = sorted((int(nodes[i]), int(nodes[j])))  # one triangle
                    rows.append(a), cols.append(b), vals.append(w)
    return sp.coo_matrix((vals, (rows, cols)), shape=(n, n)), perm


def test_solver_components_sizes_and_gaps(erc):
    from trustlab.solvers import partition

    sizes = [9, 7, 12]
    W, perm = _graph(sizes, seed=3)
    res = partition(W, method="auto", time_limit=20, random_state=0)
    got = erc.solver_components(W, res)
    assert sorted(c["size"] for c in got) == sorted(sizes)  # the input's components, not reduced parts
    assert len(got) == len(res.components)
    for c, st in zip(got, res.components):
        assert c["status"] == st["status"]
        assert c["gap"] == pytest.approx(erc.rel_gap(st["objective"], st["bound"]))
    # the first reported component is scipy's first (lowest node) component of >= 2 nodes
    first = min(range(3), key=lambda k: perm[sum(sizes[:k]):sum(sizes[:k + 1])].min())
    assert got[0]["size"] == sizes[first]


def test_solver_components_refuses_a_mismatch(erc):
    from types import SimpleNamespace

    W, _ = _graph([8, 8], seed=1)
    with pytest.raises(RuntimeError):
        erc.solver_components(W, SimpleNamespace(components=[{"status": "optimal"}]))


def test_worst_first(erc):
    rows = [{"file": "a", "unproven": []},
            {"file": "b", "unproven": [{"gap": 0.01}, {"gap": 0.02}]},
            {"file": "c", "unproven": [{"gap": 0.3}]}]
    assert [r["file"] for r in sorted(rows, key=erc.worst_key)] == ["c", "b", "a"]


def _brute_max(W):
    """Best within-cluster weight, pairs absent from ``W`` kept apart."""
    D = W.toarray()
    D = D + D.T
    E = (W.toarray() != 0) | (W.toarray().T != 0)
    best = -np.inf
    for p in set_partitions(list(range(W.shape[0]))):
        val, ok = 0.0, True
        for cl in p:
            for i in range(len(cl)):
                for j in range(i + 1, len(cl)):
                    if not E[cl[i], cl[j]]:
                        ok = False
                    val += D[cl[i], cl[j]]
        if ok:
            best = max(best, val)
    return best


def test_packing_bound_is_a_bound(erc):
    """P - LB never falls below the optimum (brute force), and is tight on a path with a
    negative or absent closing pair."""
    W = sp.coo_matrix(([2.0, 1.0, -1.0], ([0, 1, 0], [1, 2, 2])), shape=(3, 3))
    assert erc.packing_bound(W) == (3.0, 1.0)
    W = sp.coo_matrix(([2.0, 1.0], ([0, 1], [1, 2])), shape=(3, 3))  # 02 absent: forbidden
    assert erc.packing_bound(W) == (3.0, 1.0)
    tight = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(4, 8))
        iu = np.triu_indices(n, 1)
        keep = rng.random(iu[0].size) < 0.7
        w = rng.normal(0.3, 1.5, keep.sum())
        W = sp.coo_matrix((w, (iu[0][keep], iu[1][keep])), shape=(n, n))
        P, lb = erc.packing_bound(W)
        opt = _brute_max(W)
        assert lb >= 0 and P - lb >= opt - 1e-9, (seed, P, lb, opt)
        tight += P - lb <= opt + 1e-9
    assert tight < 40  # not trivially exact (a test that could not fail would say nothing)


def test_md_totals(erc, tmp_path):
    bands = {b: {} for b in ("2-10", "11-50", "51-200", "201-1000", ">1000")}
    r1 = {"file": "x", "f1": 0.5, "max_size": 300, "unproven": [
        {"size": 300, "status": "time_limit", "gap": 0.1, "seconds": 2.0}],
        "bands": {**bands, "2-10": {"closed_form": 3}, "201-1000": {"time_limit": 1, "optimal": 1}}}
    r2 = {"file": "y", "f1": 0.9, "max_size": 5, "unproven": [], "bands": {**bands, "2-10": {"optimal": 1}}}
    erc.write_md([r2, r1], tmp_path / "t.md")
    lines = (tmp_path / "t.md").read_text().splitlines()
    assert lines[2].startswith("| x |") and "300 (TL, 10.00%, 2)" in lines[2]  # worst first
    assert lines[-3] == "| proven, all files | | | 4/4 (100%) |  |  | 1/2 (50%) |  | |"
    assert lines[-1] == "| proven or gap <= 5% | | | 4/4 (100%) |  |  | 1/2 (50%) |  | |"


def test_gap_shares(erc):
    bands = {b: {} for b in ("2-10", "11-50", "51-200", "201-1000", ">1000")}
    rows = [{"file": "x", "bands": {**bands, "51-200": {"optimal": 2, "time_limit": 3}, ">1000": {"feasible": 1}},
             "unproven": [{"size": 60, "gap": 0.005}, {"size": 70, "gap": 0.03}, {"size": 80, "gap": float("nan")},
                          {"size": 2000, "gap": 0.2}]},
            {"file": "y", "error": "timeout"}]
    sh = erc.gap_shares(rows)
    assert sh["51-200"] == {"n": 5, "proven": 2, 0.01: 3, 0.05: 4}
    assert sh[">1000"] == {"n": 1, "proven": 0, 0.01: 0, 0.05: 0}
    assert sh["2-10"] == {"n": 0, "proven": 0, 0.01: 0, 0.05: 0}
