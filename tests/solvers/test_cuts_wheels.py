"""Odd-wheel and general 2-partition separation (trustlab.solvers.cuts), checked against
every clique partition of small graphs (brute force)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.reference import clique_partition_labels
from trustlab.solvers import cpp, cuts


def _instance(rng, n, density):
    A = np.triu(rng.random((n, n)) < density, 1)
    A = A | A.T
    iu, ju = np.nonzero(np.triu(A, 1))
    P = -np.ones((n, n), np.int64)
    P[iu, ju] = P[ju, iu] = np.arange(iu.size)
    F = np.array([(lab[iu] == lab[ju]).astype(np.float64) for lab in clique_partition_labels(n, A)])
    return A, iu, ju, P, F


def _points(rng, n, A, iu, ju, P, count):
    """Fractional points: random ones and optima of the triangle LP of random weights
    (the points the cutting-plane solver actually separates)."""
    tri = [(P[i, j], P[i, k], P[j, k] if A[j, k] else -1)
           for i in range(n) for j, k in itertools.combinations(range(n), 2)
           if i not in (j, k) and A[i, j] and A[i, k]]
    Aub = cpp._rows(tri, [], iu.size)
    for t in range(count):
        if t % 2 == 0:
            xv = rng.random(iu.size) ** rng.uniform(0.3, 2.0)
        else:
            w = rng.normal(0.2, 1.0, iu.size)
            xv = cpp._solve_lp(w, Aub, iu.size, None, "highs-ipm")[0]
        X = np.zeros((n, n))
        X[iu, ju] = X[ju, iu] = xv
        yield xv, X


@pytest.mark.parametrize("seed", range(6))
def test_odd_wheel_cuts_are_valid_and_violated(seed):
    rng = np.random.default_rng(seed)
    n = 7
    A, iu, ju, P, F = _instance(rng, n, 0.75 + 0.05 * (seed % 4))
    n_cuts = 0
    for xv, X in _points(rng, n, A, iu, ju, P, 30):
        found = cuts.separate_odd_wheels(X, A, 100, min_k=3)
        viols = [v for *_, v in found]
        assert viols == sorted(viols, reverse=True)
        for v, cyc, viol in found:
            k = len(cyc)
            assert k % 2 == 1 and k >= 3 and v not in cyc and len(set(cyc.tolist())) == k
            assert all(A[v, c] for c in cyc)
            # the inequality, evaluated independently of the separation code
            lhs = sum(X[v, c] for c in cyc) - sum(X[cyc[i], cyc[(i + 1) % k]] for i in range(k))
            assert lhs > (k - 1) / 2 and abs(lhs - (k - 1) / 2 - viol) < 1e-9
            idx, coef = cuts.odd_wheel_row(v, cyc, P)
            assert abs(float(coef @ xv[idx]) * (k - 1) / 2 - lhs) < 1e-9
            assert (F[:, idx] @ coef).max() <= 1.0 + 1e-9  # valid for every partition
            n_cuts += 1
    assert n_cuts > 0


def test_odd_wheel_separation_finds_the_5_wheel():
    # hub 0, cycle 1-2-3-4-5: hub pairs 1/2, cycle pairs 0, chords 1/2. Every triangle
    # and every 2-partition cut with |S| = 1 holds; the 5-wheel reads 5/2 > 2
    n = 6
    A = ~np.eye(n, dtype=bool)
    X = np.zeros((n, n))
    X[0, 1:] = X[1:, 0] = 0.5
    for a, b in itertools.combinations(range(1, 6), 2):
        if (b - a) % 5 not in (1, 4):  # chords of the 5-cycle
            X[a, b] = X[b, a] = 0.5
    assert cpp.separate_triangles(X, A, 100).shape[0] == 0
    assert not cpp.separate_two_partition(X, A, 100)
    found = cuts.separate_odd_wheels(X, A, 10)
    assert found
    v, cyc, viol = found[0]
    assert v == 0 and sorted(cyc.tolist()) == [1, 2, 3, 4, 5] and abs(viol - 0.5) < 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_general_two_partition_cuts_are_valid_and_violated(seed):
    rng = np.random.default_rng(50 + seed)
    n = 7
    A, iu, ju, P, F = _instance(rng, n, 0.75 + 0.05 * (seed % 4))
    n_cuts = 0
    for xv, X in _points(rng, n, A, iu, ju, P, 30):
        found = cuts.separate_two_partition_general(X, A, 100)
        viols = [v for *_, v in found]
        assert viols == sorted(viols, reverse=True)
        for S, T, viol in found:
            assert len(S) >= 2 and len(T) >= 2 and not set(S.tolist()) & set(T.tolist())
            rhs = min(len(S), len(T))
            lhs = (sum(X[s, t] for s in S for t in T) - sum(X[a, b] for a, b in itertools.combinations(S, 2))
                   - sum(X[a, b] for a, b in itertools.combinations(T, 2)))
            assert lhs > rhs and abs(lhs - rhs - viol) < 1e-9
            idx, coef = cuts.two_partition_general_row(S, T, P)
            assert abs(float(coef @ xv[idx]) * rhs - lhs) < 1e-9
            assert (F[:, idx] @ coef).max() <= 1.0 + 1e-9  # valid for every partition
            n_cuts += 1
    assert n_cuts > 0


@pytest.mark.parametrize("fam,n,seed", [("random", 12, 1), ("equicut", 16, 0), ("equicut", 16, 3)])
@pytest.mark.parametrize("mip_solver", ["scip", "cpsat"])
def test_solver_with_wheel_and_general_two_partition_cuts_is_exact(fam, n, seed, mip_solver):
    # colgen=False and tail_rounds=1: the LP settles fast, the stronger families are
    # separated and go into the MIP model (CP-SAT scales their 1/r rows back to integers)
    from trustlab.solvers.synthetic import make_instance

    W = make_instance(fam, n, random_state=seed)
    A = ~np.eye(n, dtype=bool)
    out = cpp.solve_cpp(W, A, warm_labels=np.arange(n), warm_obj=0.0, integral=True, mip_solver=mip_solver,
                        options=cpp.CutOptions(colgen=False, tail_rounds=1))
    fams = out["cuts_by_family"]
    assert fams["odd_wheel"] + fams["two_partition_general"] > 0
    assert sum(fams.values()) == out["cuts"]
    # reference: the solver without the two families (checked against brute force in
    # test_cpp_cuts.py)
    ref = cpp.solve_cpp(W, A, warm_labels=np.arange(n), warm_obj=0.0, integral=True,
                        options=cpp.CutOptions(colgen=False, odd_wheels=False, two_partition_general=False))
    assert ref["status"] == "optimal"
    opt = ref["objective"]
    assert out["status"] == "optimal" and out["objective"] == pytest.approx(opt)
    assert out["root_bound"] >= opt - 1e-9
