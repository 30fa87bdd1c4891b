"""Exact maximum-weight bipartite matching with its LP-dual certificate
(:mod:`trustlab.solvers.assignment`), checked against brute force and networkx."""
import itertools

import numpy as np
import pytest

from trustlab.solvers import assignment as A
from trustlab.solvers.assignment import max_weight_matching


def _best_weights(L, R, w):
    best = {}
    for a, b, x in zip(L, R, w):
        if x > 0:
            best[(int(a), int(b))] = max(best.get((int(a), int(b)), -np.inf), float(x))
    return best


def _brute(nl, nr, L, R, w):
    """Every matching of the positive edges (subsets with distinct ends)."""
    best = _best_weights(L, R, w)
    edges = list(best.items())
    top = 0.0
    for k in range(1, min(nl, nr, len(edges)) + 1):
        for sub in itertools.combinations(edges, k):
            ls = [e[0][0] for e in sub]
            rs = [e[0][1] for e in sub]
            if len(set(ls)) == k and len(set(rs)) == k:
                top = max(top, sum(e[1] for e in sub))
    return top


def _check_certificate(r, nl, nr, L, R, w):
    """The dual is feasible and its total bounds the matching: checked here from scratch."""
    best = _best_weights(L, R, w)
    assert (r.dual_left >= 0).all() and (r.dual_right >= 0).all()
    for (a, b), x in best.items():
        assert r.dual_left[a] + r.dual_right[b] >= x - 1e-9
    assert r.dual_objective == pytest.approx(r.objective, abs=1e-9)
    # the matching is a matching and its weight is the objective
    p = r.pairs
    assert len(set(p[:, 0].tolist())) == len(p) and len(set(p[:, 1].tolist())) == len(p)
    assert sum(best[(int(a), int(b))] for a, b in p) == pytest.approx(r.objective, abs=1e-9)
    assert (r.mate_right[p[:, 1]] == p[:, 0]).all()


def _case(rng, t):
    nl, nr = (int(x) for x in rng.integers(1, 6, 2))
    m = int(rng.integers(0, nl * nr + 3))
    L = rng.integers(0, nl, m)
    R = rng.integers(0, nr, m)
    kind = t % 4
    if kind == 0:  # exact ties: few distinct values
        w = rng.choice([-1.0, 0.5, 1.0, 2.0], m)
    elif kind == 1:  # equal weights everywhere
        w = np.full(m, 0.7)
    elif kind == 2:  # zeros and negatives mixed in
        w = rng.choice([-0.2, 0.0, 0.1, 0.3], m)
    else:
        w = np.round(rng.normal(0, 1, m), 2)
    return nl, nr, L, R, w


@pytest.mark.parametrize("dense", [True, False], ids=["dense", "sparse"])
def test_matches_brute_force_with_ties_and_certificate(dense, monkeypatch):
    monkeypatch.setattr(A, "DENSE_MAX_CELLS", 10**9 if dense else 0)
    rng = np.random.default_rng(7)
    for t in range(250):
        nl, nr, L, R, w = _case(rng, t)
        r = max_weight_matching(nl, nr, L, R, w)
        assert r.status == "optimal" and r.bound == r.objective
        assert r.objective == pytest.approx(_brute(nl, nr, L, R, w), abs=1e-9), (t, L, R, w)
        _check_certificate(r, nl, nr, L, R, w)


def test_chain_greedy_loses_exact_wins():
    # a-b 0.9, b-c 0.95, c-d 0.9 with a, c on the left and b, d on the right
    r = max_weight_matching(2, 2, [0, 1, 1], [0, 0, 1], [0.9, 0.95, 0.9])
    assert r.pairs.tolist() == [[0, 0], [1, 1]]
    assert r.objective == pytest.approx(1.8) and r.status == "optimal"
    # a longer chain of alternating 1.0 / 1.1 weights: greedy takes every 1.1 link, the optimum the 1.0 ones
    k = 6
    L = np.r_[np.arange(k), np.arange(1, k)]
    R = np.r_[np.arange(k), np.arange(k - 1)]
    w = np.r_[np.ones(k), np.full(k - 1, 1.1)]
    r = max_weight_matching(k, k, L, R, w)
    assert r.objective == pytest.approx(k) and r.status == "optimal"


def test_large_component_against_networkx():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(3)
    n, m = 150, 500
    L, R = rng.integers(0, n, m), rng.integers(0, n, m)
    w = np.round(rng.normal(0.2, 1, m), 3)
    G = nx.Graph()
    for (a, b), x in _best_weights(L, R, w).items():
        G.add_edge(("l", a), ("r", b), weight=x)
    opt = sum(G[u][v]["weight"] for u, v in nx.max_weight_matching(G))
    for cells in (10**9, 0):  # dense and sparse solvers on the same graph
        A_cells = A.DENSE_MAX_CELLS
        A.DENSE_MAX_CELLS = cells
        try:
            r = max_weight_matching(n, n, L, R, w)
        finally:
            A.DENSE_MAX_CELLS = A_cells
        assert r.status == "optimal" and r.objective == pytest.approx(opt, abs=1e-9)
        _check_certificate(r, n, n, L, R, w)
        assert max(c["n_left"] for c in r.components) > 50  # one big component was solved


def test_deterministic_and_input_order_free():
    rng = np.random.default_rng(5)
    L, R = rng.integers(0, 8, 40), rng.integers(0, 8, 40)
    w = rng.choice([0.5, 1.0], 40)  # many exact ties
    r1 = max_weight_matching(8, 8, L, R, w)
    o = rng.permutation(40)
    r2 = max_weight_matching(8, 8, L[o], R[o], w[o])
    assert np.array_equal(r1.mate_left, r2.mate_left)


def test_empty_and_errors():
    r = max_weight_matching(3, 2, [], [], [])
    assert r.objective == 0 and r.status == "optimal" and (r.mate_left == -1).all()
    with pytest.raises(ValueError, match="left node indices"):
        max_weight_matching(2, 2, [2], [0], [1.0])
    with pytest.raises(ValueError, match="same length"):
        max_weight_matching(2, 2, [0], [0], [1.0, 2.0])
    with pytest.raises(ValueError, match="NaN or infinity"):
        max_weight_matching(2, 2, [0], [0], [np.nan])


def test_certificate_rejects_a_suboptimal_matching(monkeypatch):
    """The dual check is not a formality: a component solver that returns a worse
    matching is caught (status "feasible") and the bound stays a valid upper bound."""
    L, R, w = [0, 1, 1], [0, 0, 1], [0.9, 0.95, 0.9]
    exact = max_weight_matching(2, 2, L, R, w)

    def greedy(li, rj, wc, nl, nr):  # keeps the heaviest edge only
        return np.array([int(np.argmax(wc))])

    monkeypatch.setattr(A, "_solve_component_dense", greedy)
    monkeypatch.setattr(A, "_solve_component_sparse", greedy)
    r = max_weight_matching(2, 2, L, R, w)
    assert r.objective == pytest.approx(0.95)
    assert r.status == "feasible" and r.components[0]["status"] == "feasible"
    assert r.bound >= exact.objective - 1e-12 and r.bound > r.objective
