"""Exact data reduction (trustlab.solvers.reduction) against brute force."""
from __future__ import annotations

from functools import lru_cache

import networkx as nx
import numpy as np
import pytest

from trustlab.solvers import partition
from trustlab.solvers.reduction import ALL_RULES, min_cut, reduce_component, reduce_problem


@lru_cache(maxsize=None)
def _all_partitions(n: int) -> np.ndarray:
    """Every set partition of n nodes as restricted-growth label rows (Bell(n) x n)."""
    out = [[0]]
    for _ in range(1, n):
        out = [p + [k] for p in out for k in range(max(p) + 2)]
    return np.asarray(out, np.int64)


def _brute(W: np.ndarray, A: np.ndarray) -> float:
    """Optimum of the CPP by enumeration (forbidden pairs never share a cluster)."""
    n = W.shape[0]
    L = _all_partitions(n)
    r, c = np.triu_indices(n, 1)
    same = L[:, r] == L[:, c]
    ok = ~np.any(same & ~A[r, c], axis=1)
    return float((same[ok] @ W[r, c]).max())


def _value(W: np.ndarray, A: np.ndarray, labels: np.ndarray) -> float:
    r, c = np.triu_indices(W.shape[0], 1)
    same = labels[r] == labels[c]
    assert not np.any(same & ~A[r, c]), "a cluster holds a forbidden pair"
    return float(W[r, c][same].sum())


def _instance(rng: np.random.Generator, shape: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    if shape == "unit":
        U = rng.choice([-1.0, 1.0], (n, n))
    elif shape == "integer":
        U = rng.integers(-3, 4, (n, n)).astype(float)
    elif shape == "ties":  # few distinct values: many exact ties in every rule
        U = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], (n, n))
    elif shape == "float":
        U = rng.normal(0.0, 1.0, (n, n))
    elif shape == "positive":
        U = rng.random((n, n)) + 0.01
    elif shape == "negative":
        U = -rng.random((n, n))
        U[0, 1] = 0.5  # one positive pair, so there is something to solve
    elif shape == "planted":  # ER-like: strong groups, noise, decimals that do not sum exactly
        g = rng.integers(0, 3, n)
        U = np.where(g[:, None] == g[None, :], 2.1, -0.7) + rng.choice([0.0, 0.0, 0.3, -2.9, 1.1], (n, n))
    else:
        raise AssertionError(shape)
    W = np.triu(U, 1)
    W = W + W.T
    A = ~np.eye(n, dtype=bool)
    if rng.random() < 0.4:  # graph form: some pairs forbidden
        F = np.triu(rng.random((n, n)) < 0.25, 1)
        A &= ~(F | F.T)
    return W, A


SHAPES = ["unit", "integer", "ties", "float", "positive", "negative", "planted"]


def _check(W, A, red, opt):
    """The reduced problem's optimum + offset is the original's, and an optimal reduced
    partition expands to an optimal, feasible original one."""
    k = red.W.shape[0]
    assert sorted(np.concatenate(red.groups).tolist()) == list(range(W.shape[0]))
    assert np.array_equal(red.W, red.W.T) and np.array_equal(red.A, red.A.T)
    L = _all_partitions(k)
    r, c = np.triu_indices(k, 1)
    same = L[:, r] == L[:, c]
    ok = np.flatnonzero(~np.any(same & ~red.A[r, c], axis=1))
    vals = same[ok] @ red.W[r, c]
    best = ok[int(np.argmax(vals))]
    scale = max(1.0, float(np.abs(W).sum()))
    assert float(vals.max()) + red.offset == pytest.approx(opt, abs=1e-9 * scale)
    labels = red.expand(L[best])
    assert _value(W, A, labels) == pytest.approx(opt, abs=1e-9 * scale)


@pytest.mark.parametrize("rule", sorted(ALL_RULES))
def test_each_rule_alone_keeps_the_optimum(rule):
    rng = np.random.default_rng(abs(hash(rule)) % 1000)
    fired = 0
    for t in range(70):
        W, A = _instance(rng, SHAPES[t % len(SHAPES)], int(rng.integers(3, 9)))
        red = reduce_problem(W, A, rules=[rule])
        fired += red.stats["nodes_before"] - red.stats["nodes_after"] + red.stats["forbidden"]
        _check(W, A, red, _brute(W, A))
    assert fired > 0  # the rule did something on these instances


def test_almost_clique_with_any_candidates_keeps_the_optimum():
    # the candidate sets only steer which sets are tested: random ones must be safe too
    rng = np.random.default_rng(3)
    fired = 0
    for t in range(80):
        n = int(rng.integers(3, 9))
        W, A = _instance(rng, SHAPES[t % len(SHAPES)], n)
        labels = rng.integers(0, 3, n)
        cands = [np.flatnonzero(labels == k) for k in range(3)]
        red = reduce_problem(W, A, rules=[], candidates=cands)
        fired += red.stats["almost_clique"]
        _check(W, A, red, _brute(W, A))
    assert fired > 0


@pytest.mark.parametrize("shape", SHAPES)
def test_all_rules_to_fixed_point_keep_the_optimum(shape):
    rng = np.random.default_rng(SHAPES.index(shape))
    for t in range(25):
        W, A = _instance(rng, shape, int(rng.integers(2, 10)))
        opt = _brute(W, A)
        _check(W, A, reduce_problem(W, A), opt)
        _check(W, A, reduce_component(W, A, seed=t), opt)


def test_min_cut_matches_networkx():
    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 9, 14):
        C = np.triu(rng.integers(0, 4, (n, n)).astype(float), 1)
        C = C + C.T
        G = nx.from_numpy_array(C)
        if not nx.is_connected(G):
            assert min_cut(C) == 0.0
            continue
        assert min_cut(C) == pytest.approx(nx.stoer_wagner(G)[0])


@pytest.mark.parametrize("graph_form", [False, True])
def test_partition_with_reduction_matches_brute_force(graph_form):
    rng = np.random.default_rng(11 + graph_form)
    reduced = 0
    for t in range(30):
        n = int(rng.integers(4, 10))
        W, A = _instance(rng, SHAPES[t % len(SHAPES)], n)
        if not graph_form:
            A = ~np.eye(n, dtype=bool)
            data = W
        else:
            r, c = np.nonzero(np.triu(A, 1))
            data = [(int(i), int(j), float(W[i, j])) for i, j in zip(r, c)]
            data += [(i, i, 0.0) for i in range(n)]  # keep every node, isolated ones too
        res = partition(data, method="cpp", random_state=t, time_limit=30)
        assert res.status == "optimal"
        opt = _brute(W, A)
        scale = max(1.0, float(np.abs(W).sum()))
        assert res.objective == pytest.approx(opt, abs=1e-9 * scale)
        lab = np.empty(n, np.int64)
        lab[np.asarray(res.nodes)] = res.labels
        assert _value(W, A, lab) == pytest.approx(opt, abs=1e-9 * scale)
        reduced += sum(c.get("reduction", {}).get("applied", False) for c in res.components)
    assert reduced > 0


def _planted(n_groups: int, size: int, seed: int) -> np.ndarray:
    """Groups of ``size`` nodes, +10 inside, -1 across, except one +3 pair from each group
    to the next (so the positive graph is one component of n_groups * size nodes)."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), size)
    W = np.where(g[:, None] == g[None, :], 10.0, -1.0)
    for k in range(n_groups - 1):
        i, j = k * size + int(rng.integers(size)), (k + 1) * size + int(rng.integers(size))
        W[i, j] = W[j, i] = 3.0
    np.fill_diagonal(W, 0.0)
    return W


def test_auto_proves_a_component_too_large_for_the_exact_solver():
    # 450 nodes in one positive component: above AUTO_EXACT_MAX (400), so without the
    # reduction auto runs the heuristic only and cannot prove it (the cross pairs keep
    # the trivial bound out of reach); the reduction merges every group
    W = _planted(90, 5, 0)
    res = partition(W, method="auto", random_state=0, time_limit=60)
    assert len(res.components) == 1
    comp = res.components[0]
    assert res.status == "optimal"
    assert comp["reduction"]["nodes_before"] == 450 and comp["reduction"]["nodes_after"] == 90
    assert res.objective == pytest.approx(90 * 10 * 10)
    assert res.n_clusters == 90
    off = partition(W, method="auto", random_state=0, time_limit=60, reduce=False)
    # without the reduction only the heuristic runs; the trivial bound is out of reach, and
    # the proof is the conflict-wedge packing bound's (each +3 pair against its -1 pairs)
    assert "reduction" not in off.components[0] and off.components[0]["method"] == "heuristic"
    assert off.objective == pytest.approx(res.objective)
    assert off.status == "optimal" and off.components[0]["proved_by"] == "packing"
    assert off.components[0]["packing_bound"] < np.triu(np.maximum(W, 0), 1).sum() - 1


def test_reduction_off_and_on_agree_when_both_prove():
    rng = np.random.default_rng(5)
    for t in range(6):
        W, _ = _instance(rng, ["planted", "integer", "float"][t % 3], 14)
        on = partition(W, method="cpp", random_state=t, time_limit=60)
        off = partition(W, method="cpp", random_state=t, time_limit=60, reduce=False)
        assert on.status == off.status == "optimal"
        assert on.objective == pytest.approx(off.objective, abs=1e-9 * max(1.0, abs(off.objective)))
        assert on.bound == pytest.approx(off.bound, abs=1e-9 * max(1.0, abs(off.bound)))


def test_heuristic_method_is_not_reduced():
    W = _planted(4, 5, 1)
    res = partition(W, method="heuristic", random_state=0)
    assert "reduction" not in res.components[0]


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown reduction rules"):
        reduce_problem(np.zeros((3, 3)), rules=["twins"])


def test_ties_merge_only_when_the_arithmetic_is_exact():
    # u = 0 and v = 1: rows equal but for node 2 (they differ by 2 there), w_uv = 1, so
    # the similar-neighbourhood rule holds with equality (2 * 1 >= 2). Integer weights
    # are summed exactly: the tie merges. The same instance divided by 10 has weights
    # that are not exact in binary: the tie is in doubt, and nothing merges.
    W = np.array([[0, 1, 3, -2, 1],
                  [1, 0, 1, -2, 1],
                  [3, 1, 0, 2, -3],
                  [-2, -2, 2, 0, 4],
                  [1, 1, -3, 4, 0]], float)
    A = ~np.eye(5, dtype=bool)
    exact = reduce_problem(W, A, rules=["similar_neighbourhood"])
    assert exact.stats["similar_neighbourhood"] >= 1
    assert any({0, 1} <= set(g.tolist()) for g in exact.groups)
    _check(W, A, exact, _brute(W, A))
    doubt = reduce_problem(W / 10, A, rules=["similar_neighbourhood"])
    assert not any({0, 1} <= set(g.tolist()) for g in doubt.groups)
    _check(W / 10, A, doubt, _brute(W / 10, A))
