"""The iterated tabu search heuristic, the global clock of ``partition`` and the
qsp/spp model-size guards."""
from __future__ import annotations

import itertools
import time

import networkx as nx
import numpy as np
import pytest

from tests.reference import brute_force_cpp, random_cpp_instance
from trustlab.kernels.cpp_heuristic import its, relabel
from trustlab.solvers import partition
from trustlab.solvers.heuristic import solve_heuristic
from trustlab.solvers.synthetic import make_instance


def _graph(W, A):
    G = nx.Graph()
    G.add_nodes_from(range(W.shape[0]))
    for i, j in zip(*np.nonzero(np.triu(A, 1))):
        G.add_edge(int(i), int(j), weight=float(W[i, j]))
    return G


@pytest.mark.parametrize("seed", range(6))
def test_heuristic_matches_brute_force_with_forbidden_pairs(seed):
    rng = np.random.default_rng(seed)
    n = 8
    W, A = random_cpp_instance(rng, n, density=0.6 if seed % 2 else 1.0, integer=seed % 3 == 0, scale=3.0)
    opt, _ = brute_force_cpp(W, A)
    lab, val = solve_heuristic(W, A, rng=np.random.default_rng(seed))
    assert val == pytest.approx(opt)
    same = lab[:, None] == lab[None, :]
    assert not np.any(same & ~A & ~np.eye(n, dtype=bool))  # clusters are cliques
    assert val == pytest.approx(np.where(same, W, 0).sum() / 2)


def test_heuristic_feasible_on_sparse_graph_and_never_below_descent():
    from trustlab.kernels.cpp_heuristic import local_search, objective, pivot_labels
    from trustlab.solvers.heuristic import encode_forbidden

    rng = np.random.default_rng(7)
    n = 60
    W, A = random_cpp_instance(rng, n, density=0.15, scale=1.0)
    W += 0.3
    Wh, forbid = encode_forbidden(W, A)
    lab0 = local_search(Wh, pivot_labels(Wh, np.arange(n), forbid), np.arange(n), 1)
    lab, val = solve_heuristic(W, A, rng=np.random.default_rng(0), max_rounds=50)
    same = lab[:, None] == lab[None, :]
    assert not np.any(same & ~A & ~np.eye(n, dtype=bool))
    assert val >= objective(np.where(A, W, 0.0), lab0) - 1e-9
    r = partition(_graph(W, A), method="heuristic", random_state=0)  # checks feasibility itself
    assert r.objective == pytest.approx(r._problem.objective(r.labels))


def test_heuristic_is_deterministic_and_patience_stops_it():
    W = make_instance("random", 40, random_state=3)
    A = ~np.eye(40, dtype=bool)
    a = solve_heuristic(W, A, rng=np.random.default_rng(5))
    b = solve_heuristic(W, A, rng=np.random.default_rng(5))
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    st: dict = {}
    solve_heuristic(W, A, rng=np.random.default_rng(5), patience=7, stats=st)
    assert st["stale"] == 7 and 7 <= st["rounds"] < 100_000
    st2: dict = {}
    solve_heuristic(W, A, rng=np.random.default_rng(5), max_rounds=3, stats=st2)
    assert st2["rounds"] == 3
    r1 = partition(W, method="heuristic", random_state=11)
    r2 = partition(W, method="heuristic", random_state=11)
    assert np.array_equal(r1.labels, r2.labels)


@pytest.mark.parametrize("family", ["random", "equicut", "cluster_editing", "mcf"])
def test_auto_never_below_heuristic(family):
    W = make_instance(family, 36, random_state=21)
    h = partition(W, method="heuristic", random_state=4)
    a = partition(W, method="auto", time_limit=3, random_state=4)
    assert a.objective >= h.objective - 1e-9
    assert a.components[0]["heuristic_objective"] == pytest.approx(h.objective)


def test_time_limit_is_global_across_components():
    # 16 random-integer blocks, every weight across blocks negative: 16 components,
    # none of which the exact solver closes in the time given
    blocks = [make_instance("random", 40, random_state=s) for s in range(16)]
    n = 40 * 16
    W = -np.ones((n, n))
    for b, B in enumerate(blocks):
        W[40 * b:40 * (b + 1), 40 * b:40 * (b + 1)] = B
    np.fill_diagonal(W, 0)
    r = partition(W, method="auto", time_limit=5, random_state=0)
    assert len(r.components) == 16
    # one clock for the call: every component gets a share of what is left of the 5 s
    # (how long the call takes on this machine is bench/ material, not a test's)
    assert all(0 <= c["time_budget"] <= 5 for c in r.components)
    assert r.status == "time_limit" and "time_limit" in {c["status"] for c in r.components}


def _multipartite(parts, size, rng):
    G = nx.complete_multipartite_graph(*([size] * parts))
    for u, v in G.edges:
        G.edges[u, v]["weight"] = float(rng.choice([-1.0, 1.0, 2.0]))
    return G


def test_qsp_refuses_a_huge_model_promptly():
    # refused before the model is built (without the guard: still building at 120 s, 6.9 GB)
    G = _multipartite(10, 3, np.random.default_rng(0))  # 3**10 = 59,049 maximal cliques
    with pytest.raises(ValueError, match=r"59,049 maximal cliques.*GiB.*max_model_bytes"):
        partition(G, method="qsp", time_limit=10, random_state=0)


def test_qsp_building_stops_at_the_deadline():
    G = _multipartite(8, 3, np.random.default_rng(1))  # 6,561 maximal cliques of 8 nodes
    h = partition(G, method="heuristic", random_state=0)
    r = partition(G, method="qsp", time_limit=1.5, random_state=0)
    assert r.status == "time_limit" and r.objective >= h.objective - 1e-9
    assert r.components[0].get("phase") == "model_building"


def test_spp_guard_names_estimate_and_override():
    G = _multipartite(4, 3, np.random.default_rng(2))
    with pytest.raises(ValueError, match="max_model_bytes"):
        partition(G, method="spp", max_model_bytes=1000)
    r = partition(G, method="spp", random_state=0)
    assert r.status == "optimal"


def test_qsp_size_estimate_counts_variables_exactly_when_no_weight_is_zero():
    from trustlab.solvers.qsp import qsp_model_size, solve_qsp

    rng = np.random.default_rng(3)
    G = _multipartite(3, 2, rng)
    n = G.number_of_nodes()
    W = np.zeros((n, n))
    A = np.zeros((n, n), bool)
    for u, v, d in G.edges(data=True):
        W[u, v] = W[v, u] = d["weight"]
        A[u, v] = A[v, u] = True
    for M in (1, 2, 10):
        r = solve_qsp(W, A, M=M)
        est = qsp_model_size(np.full(r["n_maximal_cliques"], 3), M, n)
        assert est["variables"] == r["n_y"] + r["n_u"]
        for i, j in itertools.combinations(range(n), 2):
            if r["labels"][i] == r["labels"][j]:
                assert A[i, j]


def test_directed_perturbation_keeps_the_gain_table_and_moves_each_node_once():
    from trustlab.kernels.cpp_heuristic import _build, _perturb_directed

    W = make_instance("gauss", 30, random_state=4)
    n = 30
    lab = np.random.default_rng(0).integers(0, 5, n).astype(np.int64)
    S, size = np.zeros((n, n)), np.zeros(n, np.int64)
    active, apos = np.zeros(n, np.int64), np.zeros(n, np.int64)
    K = _build(W, lab, S, size, active, apos)
    before = lab.copy()
    mark, moved = np.zeros(n, np.int64), np.zeros(n, np.int64)
    bgain, btgt = np.zeros(n), np.zeros(n, np.int64)
    K = _perturb_directed(W, lab, S, size, active, apos, K, 8, 4, False, np.zeros(n + 1, np.int64),
                          np.zeros(0, np.int64), mark, bgain, btgt, moved, np.zeros(1, np.int64))
    assert moved.sum() == 8 and np.all(lab[moved == 0] == before[moved == 0])
    S2, size2 = np.zeros((n, n)), np.zeros(n, np.int64)
    assert _build(W, lab, S2, size2, active.copy(), apos.copy()) == K
    assert np.allclose(S, S2) and np.array_equal(size, size2)


@pytest.mark.parametrize("use_nbrs", [False, True])
def test_incremental_best_moves_equal_a_full_rescan(use_nbrs):
    # _apply updates the cached best move of every node incrementally (rescanning only
    # nodes whose best can have changed); after any sequence of moves the cached gains
    # must equal a full rescan's
    from trustlab.kernels.cpp_heuristic import _apply, _build, _refresh
    from trustlab.solvers.heuristic import _positive_neighbours

    rng = np.random.default_rng(7 + use_nbrs)
    for fam, n in (("gauss", 40), ("cluster_editing", 50), ("mcf", 45), ("random", 30)):
        W = np.ascontiguousarray(make_instance(fam, n, random_state=int(rng.integers(1000))), dtype=np.float64)
        ptr, idx = _positive_neighbours(W)
        lab = rng.integers(0, 6, n).astype(np.int64)
        S, size = np.zeros((n, n)), np.zeros(n, np.int64)
        active, apos = np.zeros(n, np.int64), np.zeros(n, np.int64)
        K = _build(W, lab, S, size, active, apos)
        mark = np.zeros(n + 1, np.int64)
        bgain, btgt = np.zeros(n), np.zeros(n, np.int64)
        _refresh(lab, S, size, active, K, use_nbrs, ptr, idx, mark, bgain, btgt)
        for _ in range(300):
            i = int(rng.integers(n))
            # a move to another cluster, a new singleton (-1) or the cached best
            choice = rng.random()
            if choice < 0.2 and size[lab[i]] > 1:
                b = -1
            elif choice < 0.5 and btgt[i] >= -1:
                b = int(btgt[i])
            else:
                others = [int(c) for c in active[:K] if c != lab[i]]
                if not others:
                    continue
                b = others[int(rng.integers(len(others)))]
            K = _apply(W, lab, S, size, active, apos, K, i, b, use_nbrs, ptr, idx, mark, bgain, btgt)
            g2, t2 = np.zeros(n), np.zeros(n, np.int64)
            _refresh(lab, S, size, active, K, use_nbrs, ptr, idx, mark, g2, t2)
            finite = np.isfinite(g2)
            assert np.array_equal(finite, np.isfinite(bgain))
            assert np.allclose(bgain[finite], g2[finite], atol=1e-7)
            assert np.array_equal(t2 == -2, btgt == -2)


def test_deadline_stops_a_long_first_descent():
    # the first chunk of a 2,000-node instance is one descent of ~10 s; the deadline must
    # stop it from inside (it used to run to its end): the kernel reads the flag the
    # deadline's timer sets between moves, so with the flag set it makes no move at all
    from trustlab.solvers.heuristic import _Search, stop_flag

    W = make_instance("cluster_editing", 2000, random_state=1)
    s = _Search(W, ~np.eye(2000, dtype=bool), rng=np.random.default_rng(0), max_rounds=10, patience=None,
                init=None, params=None)
    start = relabel(s.cur.copy())[0]
    prm = s.prm
    best, _ = its(s.Wh, s.ptr, s.idx, s.use_nbrs, s.cur, s.best, -np.inf, 1, 10, prm["depth"], prm["tt_lo"],
                  prm["tt_hi"], prm["str_lo"], prm["str_hi"], prm["split_prob"], prm["restart_prob"],
                  prm["restart_after"], 0, True, int(prm["directed"]), int(prm["q"]), np.ones(1, np.int64))
    np.testing.assert_array_equal(s.cur, start)  # not one move
    # the timer sets the flag at the deadline (a deadline in the past: at once)
    with stop_flag(0.0) as stop:
        for _ in range(6000):  # a guard against a hang, not a speed requirement
            if stop[0]:
                break
            time.sleep(0.01)
        assert stop[0] == 1
    with stop_flag(None) as stop:  # no deadline: never set
        assert stop[0] == 0
    # and through partition the answer is never below the all-singletons partition
    r = partition(W, method="heuristic", time_limit=0.5, random_state=0)
    assert r.objective >= 0.0 and r.status == "feasible"


def test_first_chunk_runs_even_when_the_budget_is_spent():
    # a component whose share is already used up (e.g. by a cold JIT compile of the
    # other solvers) still gets its first chunk: the same answer as one round unhurried
    W = make_instance("gauss", 40, random_state=8)
    spent = partition(W, method="heuristic", time_limit=1e-9, random_state=3)
    one = partition(W, method="heuristic", heuristic_iters=1, random_state=3)
    assert spent.objective == one.objective > 0


@pytest.mark.parametrize("params", [None, {"directed": 0, "restart_prob": 0.5}])
def test_both_perturbations_match_brute_force(params):
    for seed in range(3):
        W = make_instance("gauss", 9, random_state=40 + seed, sigma=1.0, mean=-0.3, integer=False)
        opt, _ = brute_force_cpp(W, ~np.eye(9, dtype=bool))
        _, val = solve_heuristic(W, ~np.eye(9, dtype=bool), rng=np.random.default_rng(seed), params=params)
        assert val == pytest.approx(opt)


def test_heuristic_reaches_proven_optimum_of_a_hard_bundled_instance():
    # CP-Lib corr40-1 (proven optimum 2191): every seed, by the patience rule
    from importlib import resources

    from trustlab.solvers.io import read_cplib, read_cplib_optimum

    base = resources.files("trustlab") / "data" / "cplib"
    with resources.as_file(base / "corr40-1.txt") as p:
        W = read_cplib(p)
    with resources.as_file(base / "corr40-1_opt.txt") as p:
        opt = read_cplib_optimum(p)[0]
    for seed in range(4):
        st: dict = {}
        _, val = solve_heuristic(W, ~np.eye(40, dtype=bool), rng=np.random.default_rng(seed), stats=st)
        assert val == opt and st["stale"] == 700  # stopped by its patience rule, default 700 at n = 40


def test_qsp_refuses_a_model_that_does_not_fit_the_memory_left(monkeypatch):
    # under `ulimit -v 4000000` a 400-node clique's model (estimated 1.04 GB, under the 2 GiB cap)
    # was built and CP-SAT ran into the limit after 78 s; now the estimate times CP-SAT's peak
    # factor is checked against what the process may still use, before anything is built
    from trustlab._validation import memory

    G = _multipartite(4, 3, np.random.default_rng(2))
    monkeypatch.setattr(memory, "memory_budget", lambda: 64 * 1024)  # as if 64 KiB were left
    with pytest.raises(ValueError, match=r"not enough memory.*ulimit"):
        partition(G, method="qsp", random_state=0)
    monkeypatch.undo()
    assert partition(G, method="qsp", random_state=0).status == "optimal"
