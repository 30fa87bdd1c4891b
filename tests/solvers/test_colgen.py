"""Branch and price (set-partitioning column generation), checked by brute force."""
from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from tests.reference import brute_force_cpp, random_cpp_instance
from trustlab.kernels.cpp_pricing import price_local, price_resume, price_start, price_tabu, price_topk
from trustlab.solvers import colgen, cpp


def rc_of(W, pi, S):
    idx = np.flatnonzero(S)
    return W[np.ix_(idx, idx)].sum() / 2.0 - pi[idx].sum()


def random_instance(rng, n, density, integral=True):
    return random_cpp_instance(rng, n, density, integer=integral, scale=5.0)


@pytest.mark.parametrize("seed", range(10))
def test_exact_pricing_top_k_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 11))
    W = np.round(rng.normal(0, 4, (n, n)))
    W = np.triu(W, 1)
    W = W + W.T
    pi = np.abs(rng.normal(0, 3, n))
    allv = sorted((rc_of(W, pi, np.array(m, bool)) for m in itertools.product([0, 1], repeat=n) if any(m)),
                  reverse=True)
    for lb, k in ((0.0, 5), (-1e9, 3), (2.5, 50)):
        vals, masks, nf, nodes, complete = price_topk(W, pi, lb, k, 0)
        want = [v for v in allv if v > lb + 1e-9][:k]
        assert complete and nf == len(want)
        np.testing.assert_allclose(vals[:nf], want, atol=1e-9)
        for q in range(nf):  # every mask really has the reported value, no duplicates
            assert abs(rc_of(W, pi, masks[q]) - vals[q]) < 1e-9
        assert len({masks[q].tobytes() for q in range(nf)}) == nf
    # a node limit is reported, never silently treated as a proof
    *_, complete = price_topk(W, pi, -1e9, 50, 2)
    assert not complete or n <= 2


def test_local_pricing_returns_1_flip_local_optima():
    rng = np.random.default_rng(0)
    n = 12
    W = rng.normal(0, 3, (n, n))
    W = np.triu(W, 1)
    W = W + W.T
    pi = np.abs(rng.normal(0, 2, n))
    vals, masks = price_local(W, pi, np.arange(n, dtype=np.int64), 0.0)
    for v, S in zip(vals, masks):
        assert abs(rc_of(W, pi, S) - v) < 1e-9
        for j in range(n):  # no single flip improves
            T = S.copy()
            T[j] = ~T[j]
            if T.any():
                assert rc_of(W, pi, T) <= v + 1e-9


@pytest.mark.parametrize("seed", range(12))
def test_branch_and_price_equals_brute_force(seed):
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(4, 9))
    integral = seed % 3 != 2
    W, A = random_instance(rng, n, density=0.85, integral=integral)
    opt, _ = brute_force_cpp(W, A)
    # a poor warm start (all singletons) so the search has to find the optimum itself
    r = colgen.branch_and_price(W, A, warm_labels=np.arange(n), warm_obj=0.0, integral=integral)
    assert r["status"] == "optimal"
    assert abs(r["objective"] - opt) < 1e-7 and r["bound"] >= opt - 1e-7
    lab = r["labels"]
    same = lab[:, None] == lab[None, :]
    assert not np.any(same & ~A & ~np.eye(n, dtype=bool))  # clusters are cliques
    assert abs(np.where(same, W, 0.0).sum() / 2 - r["objective"]) < 1e-7


@pytest.mark.parametrize("k,forbid_chords,integral", [(5, True, True), (5, False, True), (7, False, False),
                                                     (9, True, False)])
def test_odd_cycles_need_branching_and_stay_exact(k, forbid_chords, integral):
    # C_k with weight 2 on the cycle and -10 (or forbidden) chords: clusters are cycle
    # edges, so the set-partitioning LP takes every edge at 1/2 (value k) while the best
    # partition is a matching (2 * (k - 1) / 2): the root is fractional and Ryan-Foster
    # branching must close the gap
    rng = np.random.default_rng(k)
    W = np.full((k, k), -10.0)
    for i in range(k):
        W[i, (i + 1) % k] = W[(i + 1) % k, i] = 2.0
    if not integral:
        W = W + np.triu(rng.uniform(-0.1, 0.1, (k, k)), 1)
        W = np.triu(W, 1) + np.triu(W, 1).T
    np.fill_diagonal(W, 0.0)
    A = (W > 0) if forbid_chords else ~np.eye(k, dtype=bool)
    opt, _ = brute_force_cpp(W, A)
    r = colgen.branch_and_price(W, A, warm_labels=np.arange(k), warm_obj=0.0, integral=integral)
    assert r["bp_nodes"] + r["node_reduced_closed"] > 1  # children solved or closed by the node reduction
    assert r["status"] == "optimal" and abs(r["objective"] - opt) < 1e-9 and r["bound"] >= opt - 1e-9
    # the root's set-partitioning LP takes every cycle edge at 1/2: value k
    assert r["root_bound"] == pytest.approx(k, abs=0.3) and r["root_bound"] >= r["bound"]


def test_time_limit_returns_the_incumbent():
    rng = np.random.default_rng(3)
    W, A = random_instance(rng, 30, density=1.0)
    lab = np.arange(30)
    r = colgen.branch_and_price(W, A, warm_labels=lab, warm_obj=0.0, integral=True,
                                deadline=time.perf_counter() - 1.0)
    assert r["status"] == "time_limit" and r["objective"] >= 0.0 and r["bound"] >= r["objective"]
    np.testing.assert_array_equal(r["labels"], lab)


@pytest.mark.parametrize("seed", range(4))
def test_solve_cpp_branch_and_price_phase_equals_brute_force(seed):
    # tail_rounds=0 stops the LP phase after one round, so branch and price closes the gap
    rng = np.random.default_rng(700 + seed)
    W, A = random_instance(rng, 8, density=0.9)
    opt, _ = brute_force_cpp(W, A)
    out = cpp.solve_cpp(W, A, warm_labels=np.arange(8), warm_obj=0.0, integral=True,
                        options=cpp.CutOptions(tail_rounds=0))
    assert out["status"] == "optimal" and abs(out["objective"] - opt) < 1e-9
    assert out["phase"] in ("lp", "branch_and_price")


def test_iteration_cap_gives_up_without_claiming_a_bound():
    rng = np.random.default_rng(11)
    W, A = random_instance(rng, 20, density=1.0)
    r = colgen.branch_and_price(W, A, warm_labels=np.arange(20), warm_obj=0.0, integral=True,
                                max_iterations=1)
    assert r["status"] == "gave_up" and r["bound"] == np.inf and r["cg_iterations"] == 1


@pytest.mark.parametrize("seed", range(4))
def test_warm_master_lp_equals_a_cold_solve(seed):
    # the master kept in HiGHS (columns appended, primal simplex from the last basis)
    # against scipy's linprog from scratch on the same growing column sets
    if colgen._highs_core() is None:
        pytest.skip("no HiGHS binding")
    rng = np.random.default_rng(seed)
    m = int(rng.integers(5, 15))
    rows = rng.random((120, m)) < 0.3
    rows[np.arange(m), np.arange(m)] = True  # singletons first
    rows[:m] = np.eye(m, dtype=bool)
    vals = np.where(rows[:, :].sum(1) > 1, rng.normal(2.0, 4.0, 120), 0.0)
    master = colgen._WarmMaster(m)
    for k in (m, m + 10, m + 11, m + 60, 120):
        z, lam, pi = master.solve(vals[:k], rows[:k], np.arange(k))
        z0, _, pi0 = colgen._lp(vals[:k], rows[:k], m)
        assert z == pytest.approx(z0, abs=1e-7)
        assert float(vals[:k] @ lam) == pytest.approx(z, abs=1e-7)
        assert np.all(rows[:k].T.astype(float) @ lam <= 1 + 1e-7) and np.all(lam >= -1e-9)
        assert pi.sum() == pytest.approx(z, abs=1e-6)  # LP duality: the duals price the optimum
        assert np.all(rows[:k].astype(float) @ pi >= vals[:k] - 1e-6)  # dual feasible
    # a column set that does not extend the model falls back to a cold solve
    z, _, _ = master.solve(vals[:50], rows[:50], np.arange(50))
    assert z == pytest.approx(colgen._lp(vals[:50], rows[:50], m)[0], abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_cuts_after_a_failed_pricing_stay_exact(seed, monkeypatch):
    # branch and price that always gives up: the cutting planes go on with the stronger
    # families (counted in cuts_by_family), and the result is still the brute-force optimum
    from tests.reference import brute_force_cpp
    from trustlab.solvers.synthetic import make_instance

    def gave_up(W, A, *, warm_labels, warm_obj, **kw):
        return dict(labels=warm_labels, objective=warm_obj, bound=np.inf, status="gave_up", bp_nodes=1,
                    cg_iterations=0, columns=0)

    monkeypatch.setattr(colgen, "branch_and_price", gave_up)
    n = 9
    W = make_instance(("random", "equicut")[seed % 2], n, random_state=seed)
    A = ~np.eye(n, dtype=bool)
    opt, _ = brute_force_cpp(W, A)
    rounds = {}
    for after in (True, False):
        out = cpp.solve_cpp(W, A, warm_labels=np.arange(n), warm_obj=0.0, integral=True,
                            options=cpp.CutOptions(tail_rounds=0, small_tail=0, cuts_after_pricing=after))
        assert out["status"] == "optimal" and out["objective"] == pytest.approx(opt)
        assert out["root_bound"] >= opt - 1e-9
        rounds[after] = out["lp_rounds"]
    assert rounds[True] > rounds[False]  # the LP phase went on after the failed pricing


@pytest.mark.parametrize("seed", range(8))
def test_tabu_pricing_values_exact_and_finds_small_optima(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(4, 11))
    W = np.round(rng.normal(0, 4, (n, n)))
    W = np.triu(W, 1)
    W = W + W.T
    pi = np.abs(rng.normal(0, 3, n))
    best = max(rc_of(W, pi, np.array(m, bool)) for m in itertools.product([0, 1], repeat=n) if any(m))
    starts = np.zeros((2, n), bool)
    starts[1, int(rng.integers(n))] = True
    lb = -1e9
    vals, masks, nf = price_tabu(W, pi, starts, lb, 6, 30 * n, 3, seed)
    assert 1 <= nf <= 6
    assert np.all(np.diff(vals[:nf]) <= 1e-12)  # sorted decreasingly
    for q in range(nf):  # every mask has the reported value, no duplicates
        assert abs(rc_of(W, pi, masks[q]) - vals[q]) < 1e-9 and vals[q] > lb
    assert len({masks[q].tobytes() for q in range(nf)}) == nf
    assert vals[0] == pytest.approx(best)  # a walk of 30 n moves reaches the optimum at n <= 10
    # only sets above lb are reported
    v2, m2, nf2 = price_tabu(W, pi, starts, best + 1.0, 6, 30 * n, 3, seed)
    assert nf2 == 0


def test_branch_and_price_share_leaves_time_for_the_fallback(monkeypatch):
    # branch and price's root gets bp_share of the time left (branching, once the root
    # has converged, may run to the end); when the root runs out of that share the
    # cutting planes / MIP go on and still prove the optimum
    from trustlab.solvers.synthetic import make_instance

    seen = {}

    def out_of_time(W, A, *, warm_labels, warm_obj, deadline, root_deadline, **kw):
        seen["deadline"], seen["root_deadline"] = deadline, root_deadline
        return dict(labels=warm_labels, objective=warm_obj, bound=np.inf, status="time_limit", bp_nodes=1,
                    cg_iterations=3, columns=5)

    monkeypatch.setattr(colgen, "branch_and_price", out_of_time)
    n = 9
    W = make_instance("random", n, random_state=3)
    A = ~np.eye(n, dtype=bool)
    opt, _ = brute_force_cpp(W, A)
    t0 = time.perf_counter()
    out = cpp.solve_cpp(W, A, warm_labels=np.arange(n), warm_obj=0.0, integral=True, deadline=t0 + 100.0,
                        options=cpp.CutOptions(tail_rounds=0, small_tail=0, bp_share=0.5))
    assert t0 + 40.0 < seen["root_deadline"] < t0 + 50.5  # half of the (under 100 s) left
    assert seen["deadline"] == t0 + 100.0
    assert out["status"] == "optimal" and out["objective"] == pytest.approx(opt)
    assert out["phase"] != "branch_and_price"


@pytest.mark.parametrize("step", [1, 7, 100])
def test_exact_pricing_in_slices_equals_one_search(step):
    rng = np.random.default_rng(step)
    n = 14
    W = np.round(rng.normal(0, 4, (n, n)))
    W = np.triu(W, 1)
    W = W + W.T
    pi = np.abs(rng.normal(0, 3, n))
    vals, masks, nf, nodes, complete = price_topk(W, pi, 0.0, 6, 0)
    state = price_start(W, pi, 6)
    total, done, calls = 0, False, 0
    while not done:
        k, done = price_resume(state, 0.0, step)
        assert k <= step
        total += k
        calls += 1
    assert complete and total == nodes and calls >= nodes // step
    assert state[7][0] == nf
    np.testing.assert_array_equal(state[5], vals)
    np.testing.assert_array_equal(state[6], masks)


def test_branch_and_price_stops_at_its_deadline():
    # a 50-node random instance whose root pricing takes far longer than the budget:
    # the sliced exact pricing returns within a fraction of a second of the deadline
    from trustlab.solvers.synthetic import make_instance

    W = make_instance("random", 50, random_state=100)
    A = ~np.eye(50, dtype=bool)
    colgen.ensure_compiled()
    t0 = time.perf_counter()
    r = colgen.branch_and_price(W, A, warm_labels=np.arange(50), warm_obj=0.0, deadline=t0 + 2.0, integral=True)
    assert r["status"] in ("time_limit", "gave_up")  # not proven: stopped by the deadline


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_split_pricing_equals_enumeration(seed, threads):
    # the exact pricing split into subproblems (the open parts of a plain search cut
    # short, then forced-in sets with shifted duals and thresholds) and searched by
    # several threads in slices: the merged top k equals brute-force enumeration,
    # forbidden pairs (a large negative weight) included
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(1, 13))
    W = np.round(rng.normal(0, 4, (n, n)))
    W = np.triu(W, 1)
    W = W + W.T
    if seed % 3 == 0 and n > 2:
        W[0, 1] = W[1, 0] = -1e6
    pi = np.abs(rng.normal(0, 3, n)) * rng.uniform(0.2, 1.5)
    allv = sorted((rc_of(W, pi, np.array(m, bool)) for m in itertools.product([0, 1], repeat=n) if any(m)),
                  reverse=True)
    for lb, k in ((0.0, 5), (2.5, 3), (-1e9, 4)):
        sp = colgen._SplitPricing(W, pi, k, lb)
        sp.try_nodes = int(rng.integers(0, 40))  # a few nodes of the plain search (0: split at once)
        step = int(rng.integers(1, 30))
        complete = False
        for _ in range(10_000):
            vals, masks, nf, _nodes, complete = sp.run(step, None, [1e6], threads)
            if complete:
                break
        if threads > 1 and n > 10 and lb <= 0.0:
            assert len(sp.subs) > 1
        want = [v for v in allv if v > lb + 1e-9][:k]
        assert complete and nf == len(want)
        np.testing.assert_allclose(vals[:nf], want, atol=1e-9)
        for q in range(nf):
            assert abs(rc_of(W, pi, masks[q]) - vals[q]) < 1e-9
        assert len({masks[q].tobytes() for q in range(nf)}) == nf


@pytest.mark.parametrize("seed", range(4))
def test_branch_and_price_threads_give_the_same_optimum(seed, monkeypatch):
    # every exact pricing split at once (try_nodes=0) and searched by 2 threads: the
    # same optimum as one thread, and the same run twice (no deadline: the node shares
    # do not depend on how the threads were scheduled)
    monkeypatch.setattr(colgen._SplitPricing, "try_nodes", 0)
    rng = np.random.default_rng(40 + seed)
    n = 10
    W, A = random_instance(rng, n, density=0.9)
    opt, _ = brute_force_cpp(W, A)
    kw = dict(warm_labels=np.arange(n), warm_obj=0.0, integral=True, short_price_nodes=50)
    r1 = colgen.branch_and_price(W, A, threads=1, **kw)
    r2 = colgen.branch_and_price(W, A, threads=2, **kw)
    r3 = colgen.branch_and_price(W, A, threads=2, **kw)
    assert r1["status"] == r2["status"] == "optimal"
    assert r1["objective"] == r2["objective"] == r1["bound"] == r2["bound"] == pytest.approx(opt)
    np.testing.assert_array_equal(r2["labels"], r3["labels"])
    assert (r2["cg_iterations"], r2["bp_nodes"], r2["columns"]) == (r3["cg_iterations"], r3["bp_nodes"],
                                                                    r3["columns"])



def _odd_cycle(k, noise, rng):
    """C_k, weight 2 on the cycle, -10 chords (+ noise): a fractional root, see above."""
    W = np.full((k, k), -10.0)
    for i in range(k):
        W[i, (i + 1) % k] = W[(i + 1) % k, i] = 2.0
    W = W + np.triu(rng.uniform(-noise, noise, (k, k)), 1)
    W = np.triu(W, 1) + np.triu(W, 1).T
    return W


@pytest.mark.parametrize("seed", range(10))
def test_early_branching_equals_brute_force_and_the_proved_search(seed):
    # a poor warm start (all singletons: target 1) puts every fractional master above
    # the target, and a 1-node exact search never completes: such nodes are branched
    # on without a proof until their masters fall below the target
    rng = np.random.default_rng(900 + seed)
    integral = seed % 4 != 3
    if seed < 6:  # odd cycles with noise: fractional roots, branching needed
        W = _odd_cycle(int(rng.choice([5, 7, 9])), 0.0 if integral else 0.3, rng)
        A = ~np.eye(W.shape[0], dtype=bool)
    else:
        W, A = random_instance(rng, int(rng.integers(7, 11)), density=0.9, integral=integral)
    n = W.shape[0]
    opt, _ = brute_force_cpp(W, A)
    kw = dict(warm_labels=np.arange(n), warm_obj=0.0, integral=integral)
    early = colgen.branch_and_price(W, A, early_price_nodes=1, **kw)
    proved = colgen.branch_and_price(W, A, early_branch=False, **kw)
    for r in (early, proved):
        assert r["status"] == "optimal"
        assert abs(r["objective"] - opt) < 1e-7 and r["bound"] >= opt - 1e-7
    assert proved["early_branched"] == 0
    if seed < 6:  # the fractional root above the target is branched on without a proof
        assert early["early_branched"] >= 1 and early["root_bound"] is None
        assert proved["root_bound"] >= opt + 0.5  # the proved root: the fractional LP (about k)


def test_root_deadline_holds_until_the_first_proof():
    # early branching does not lift the root deadline: only an exact pricing proof does
    from trustlab.solvers.synthetic import make_instance

    W = make_instance("random", 60, random_state=100)
    A = ~np.eye(60, dtype=bool)
    colgen.ensure_compiled()
    t0 = time.perf_counter()
    r = colgen.branch_and_price(W, A, warm_labels=np.arange(60), warm_obj=0.0, integral=True,
                                deadline=t0 + 600.0, root_deadline=t0 + 1.5)
    # stopped at the root deadline (600 s were left), before any proof
    assert r["status"] in ("time_limit", "gave_up") and r["bound"] == np.inf


@pytest.mark.parametrize("seed", range(3))
def test_solve_cpp_finishes_the_warm_start_before_branch_and_price(seed):
    # tail_rounds=0: the LP phase does not prove these, branch and price starts; the
    # finished heuristic's answer is the incumbent and its deadline is adopted (here one
    # already past: branch and price stops at once, the answer is the finished one)
    rng = np.random.default_rng(720 + seed)
    W, A = random_instance(rng, 8, density=0.9)
    opt, lab = brute_force_cpp(W, A)
    calls = []

    def finish():
        calls.append(1)
        return np.asarray(lab), float(opt), time.perf_counter() - 1.0

    out = cpp.solve_cpp(W, A, warm_labels=np.arange(8), warm_obj=0.0, integral=True,
                        options=cpp.CutOptions(tail_rounds=0), finish_warm=finish)
    assert calls == [1]
    assert out["objective"] == opt and out["bound"] >= opt
    np.testing.assert_array_equal(out["labels"], lab)
    # without it the same call proves the optimum in branch and price
    out = cpp.solve_cpp(W, A, warm_labels=np.arange(8), warm_obj=0.0, integral=True,
                        options=cpp.CutOptions(tail_rounds=0))
    assert out["phase"] == "branch_and_price" and out["status"] == "optimal" and out["objective"] == opt


def test_solve_cpp_passes_early_branch_through(monkeypatch):
    seen = []
    real = colgen.branch_and_price

    def spy(*a, **k):
        seen.append(k["early_branch"])
        return real(*a, **k)

    monkeypatch.setattr(colgen, "branch_and_price", spy)
    rng = np.random.default_rng(730)
    W, A = random_instance(rng, 8, density=0.9)
    opt, _ = brute_force_cpp(W, A)
    for flag in (True, False):
        out = cpp.solve_cpp(W, A, warm_labels=np.arange(8), warm_obj=0.0, integral=True,
                            options=cpp.CutOptions(tail_rounds=0, early_branch=flag))
        assert out["status"] == "optimal" and out["objective"] == opt
        assert out["phase"] == "branch_and_price" and out["early_branched"] >= 0
        if not flag:
            assert out["early_branched"] == 0
    assert seen == [True, False]
