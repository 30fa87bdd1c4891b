"""The staged heuristic of ``cpp`` on small components: a paused and resumed search
ends exactly where an uninterrupted one does, and the exact answer is unchanged."""
from __future__ import annotations

import numpy as np
import pytest

from tests.reference import brute_force_cpp, random_cpp_instance
from trustlab.solvers import api, partition
from trustlab.solvers.heuristic import _Search, solve_heuristic
from trustlab.solvers.synthetic import make_instance


@pytest.mark.parametrize("family,n,pause", [("random", 12, 1), ("equicut", 20, 5), ("cluster_editing", 30, 10),
                                            ("mcf", 16, 3)])
def test_paused_search_resumes_to_the_uninterrupted_result(family, n, pause):
    W = make_instance(family, n, random_state=n)
    A = ~np.eye(n, dtype=bool)
    st: dict = {}
    lab, val = solve_heuristic(W, A, rng=np.random.default_rng(3), stats=st)
    s = _Search(W, A, rng=np.random.default_rng(3), max_rounds=100_000, patience=None, init=None, params=None)
    s.run(pause=pause)
    assert s.stale >= pause and s.done <= st["rounds"]
    s.run()
    lab2, val2 = s.result()
    assert (s.done, s.stale) == (st["rounds"], st["stale"])
    assert np.array_equal(lab, lab2) and val == val2


@pytest.mark.parametrize("seed", range(5))
def test_staged_cpp_is_exact_on_small_components(seed):
    rng = np.random.default_rng(100 + seed)
    n = 8
    W, A = random_cpp_instance(rng, n, density=0.7 if seed % 2 else 1.0, integer=seed % 3 == 0, scale=2.0)
    opt, _ = brute_force_cpp(W, A)
    import scipy.sparse as sp

    if seed % 2:  # sparse input: the allowed pairs are the stored entries (zeros kept)
        r_, c_ = np.nonzero(np.triu(A, 1))
        data = sp.coo_matrix((W[r_, c_], (r_, c_)), shape=(n, n))
    else:
        data = W
    r = partition(data, method="cpp", random_state=seed)
    assert r.objective == pytest.approx(opt, abs=1e-9)
    assert r.status == "optimal"


def _random_component():
    """A 24-node random instance whose search is paused (not finished) by the staged ``cpp``, and its options."""
    n = 24
    W = make_instance("random", n, random_state=5)
    A = ~np.eye(n, dtype=bool)
    opts = api._ComponentOptions(M=10, workers=None, mip_solver="scip", integral=False, max_cliques=10,
                                 heuristic_iters=100_000, heuristic_patience=None, max_model_bytes=2**30)
    return W, A, opts


def test_unproven_component_resumes_the_full_heuristic(monkeypatch):
    # an exact solver that proves nothing: the component must end with exactly the
    # heuristic's own answer (the search resumed to its stopping rule)
    import trustlab.solvers.cpp as cpp

    def no_proof(W, A, *, warm_labels, warm_obj, **kw):
        return {"labels": np.arange(W.shape[0]), "objective": 0.0, "bound": np.inf, "status": "time_limit"}

    monkeypatch.setattr(cpp, "solve_cpp", no_proof)
    W, A, opts = _random_component()
    out = api._solve_component(W, A, "cpp", opts, time_limit=None, seed=9)
    lab, val = solve_heuristic(W, A, rng=np.random.default_rng(9))
    assert out["heuristic_objective"] == val
    assert out["objective"] == pytest.approx(val) and out["status"] == "time_limit"
    assert np.array_equal(out["labels"], lab)


def test_many_small_components_proven_within_a_small_budget():
    # 40 blocks of 7-12 nodes, a 10 s budget for all: every component is proven
    # (in a fresh process the one-off loading of the solver would otherwise fall on
    # the first, smallest components' shares of a fraction of a second)
    rng = np.random.default_rng(7)
    sizes = rng.integers(7, 13, 40)
    n = int(sizes.sum())
    W = -np.ones((n, n))
    off = 0
    for m in sizes:
        W[off:off + m, off:off + m] = make_instance("random", int(m), random_state=int(off))
        off += m
    np.fill_diagonal(W, 0.0)
    r = partition(W, method="auto", time_limit=10, random_state=0)
    assert len(r.components) >= 40  # a block may split into positive components
    assert all(c["status"] == "optimal" for c in r.components)
    for c in r.components:
        if c["size"] <= 9:
            assert c["objective"] == pytest.approx(c["bound"])


@pytest.mark.slow
def test_unproven_small_component_keeps_time_to_finish_the_heuristic():
    """An instance the exact solver cannot prove within the budget: the paused search
    still gets time to reach its own stopping rule, so ``auto`` returns exactly what
    ``method="heuristic"`` returns with the same seed and budget (an unplanted
    signed graph, which the exact solver does not prove in seconds; n = 45 became
    provable in 8 s with early branching)."""
    W = make_instance("signed_gnp", 55, random_state=1)
    h = partition(W, method="heuristic", time_limit=8.0, random_state=0)
    a = partition(W, method="auto", time_limit=8.0, random_state=0)
    assert a.status == "time_limit"  # not proven: the case the reserve exists for
    comp = a.components[0]
    assert comp["heuristic_reserve"] > 0
    assert comp["heuristic_objective"] == h.objective
    assert a.objective >= h.objective - 1e-9


def test_seconds_to_finish_estimate():
    W = make_instance("random", 30, random_state=0)
    A = ~np.eye(30, dtype=bool)
    s = _Search(W, A, rng=np.random.default_rng(0), max_rounds=100_000, patience=None, init=None, params=None)
    s.run(pause=3)
    assert not s.finished and s.seconds > 0 and s.seconds_to_finish() > 0
    s.run()
    assert s.finished and s.seconds_to_finish() == 0.0


def test_a_compilation_while_the_search_finishes_does_not_eat_branch_and_prices_time(monkeypatch):
    # On a cold compile cache the paused search may compile its kernels when branch and
    # price asks it to finish (its Python twins out of steps): those seconds must move the
    # deadline handed back to the exact solver, as every other compilation does. Simulated
    # here by declaring 100 s of compilation in the resumed run (no real waiting).
    import time

    import trustlab.solvers.cpp as cpp
    from trustlab.kernels._jit import exclude_seconds
    from trustlab.solvers import heuristic

    seen = {"finishing": False, "compiled": 0}
    real_run = heuristic._Search.run

    def run(self, *a, **kw):
        if seen["finishing"]:  # the resumed run inside finish_warm
            exclude_seconds(100.0)
            seen["compiled"] += 1
        return real_run(self, *a, **kw)

    def exact(W, A, *, warm_labels, warm_obj, deadline, finish_warm=None, **kw):
        seen["finishing"] = True
        lab, val, end = finish_warm()
        seen["finishing"] = False
        seen["left"] = end - time.perf_counter()
        return {"labels": np.asarray(lab), "objective": float(val), "bound": np.inf, "status": "time_limit"}

    monkeypatch.setattr(heuristic._Search, "run", run)
    monkeypatch.setattr(cpp, "solve_cpp", exact)
    W, A, opts = _random_component()
    api._solve_component(W, A, "cpp", opts, time_limit=5.0, seed=9)
    assert seen["compiled"] == 1  # the paused search was finished for branch and price
    assert seen["left"] > 50.0  # the 100 s of compilation were added to the exact solver's deadline
