"""The exact Python twins of the search kernels (kernels/cpp_heuristic_twin.py) and how
the search picks them while the kernels are cold (solvers/heuristic.py).

The twins must give the kernels' bits: the same labels, ``best_val`` and ``stale`` after
every chunk, the same random stream (Numba's thread-local MT19937) and the same float
sums. A cold process must compile none of the search kernels for small work, and give
the same answer as a warm one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from trustlab.kernels import cpp_heuristic as H
from trustlab.kernels import cpp_heuristic_twin as T
from trustlab.solvers import heuristic, partition
from trustlab.solvers.heuristic import _positive_neighbours, encode_forbidden, search_params, solve_heuristic
from trustlab.solvers.synthetic import make_instance


@njit(cache=True)
def _numba_draws(seed, ns, out_int, out_float):  # pragma: no cover - compiled
    np.random.seed(seed)
    for t in range(ns.shape[0]):
        out_int[t] = np.random.randint(ns[t])
        out_float[t] = np.random.random()


def test_random_stream_is_numbas():
    ns = np.array([1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 100, 1000, 2**16 + 1, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1]
                  * 40, np.int64)
    for seed in (0, 1, 7, 123456789, 2**31 - 2):
        ints, floats = np.zeros(ns.size, np.int64), np.zeros(ns.size)
        _numba_draws(seed, ns, ints, floats)
        r = T.NumbaNpRandom(seed)
        got_i, got_f = [], []
        for n in ns.tolist():
            got_i.append(r.randint(n))
            got_f.append(r.random())
        assert got_i == ints.tolist()
        assert got_f == floats.tolist()  # bit for bit
    with pytest.raises(ValueError):
        T.NumbaNpRandom(0).randint(0)


def _instance(rng, fam, n, integer, density):
    W = np.ascontiguousarray(make_instance(fam, n, random_state=int(rng.integers(10**6))), dtype=np.float64)
    if integer:
        W = np.round(W)  # many equal gains: the random tie-breaks are exercised
    A = rng.random((n, n)) < density
    A = A & A.T
    np.fill_diagonal(A, False)
    return encode_forbidden(W, A)


CASES = [(fam, n, integer, use_nbrs, directed, restart_prob, density)
         for fam, n, integer, use_nbrs, directed, restart_prob, density in [
             ("gauss", 24, False, False, 1, 0.0, 1.0),
             ("gauss", 24, True, True, 1, 0.0, 0.9),
             ("random", 31, True, False, 1, 0.0, 1.0),
             ("random", 17, True, True, 0, 0.3, 0.85),
             ("cluster_editing", 40, True, True, 1, 0.0, 1.0),
             ("cluster_editing", 12, True, False, 0, 0.0, 0.7),
             ("mcf", 30, False, True, 0, 0.0, 1.0),
             ("mcf", 9, True, False, 1, 0.5, 1.0),
             ("uniform", 45, False, False, 1, 0.0, 0.95),
             ("signed_gnp", 35, True, True, 1, 0.0, 1.0),
             ("equicut", 20, True, False, 0, 0.0, 1.0),
             ("gauss", 3, True, False, 1, 0.0, 1.0),
         ]]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_twin_search_equals_the_kernel_chunk_after_chunk(case):
    fam, n, integer, use_nbrs, directed, restart_prob, density = case
    rng = np.random.default_rng(n * 31 + directed)
    Wh, forbid = _instance(rng, fam, n, integer, density)
    ptr, idx = _positive_neighbours(Wh)
    prm = search_params(n)
    order = rng.permutation(n).astype(np.int64)
    start = H.pivot_labels(Wh, order, forbid)
    assert np.array_equal(T.pivot_labels(Wh, order, forbid), start)
    k_cur, k_best, t_cur, t_best = start.copy(), start.copy(), start.copy(), start.copy()
    k_val = t_val = -np.inf
    k_stale = t_stale = 0
    for chunk in range(4):  # chained chunks carry the state (stale counts reach the restarts)
        seed = int(rng.integers(0, 2**31 - 1))
        rounds = [1, 3, 8, 14][chunk]
        args = (rounds, prm["depth"], prm["tt_lo"], prm["tt_hi"], prm["str_lo"], prm["str_hi"], prm["split_prob"],
                restart_prob, 3)
        tail = (chunk == 0, directed, prm["q"])
        kv, ks = H.its(Wh, ptr, idx, use_nbrs, k_cur, k_best, k_val, seed, *args, k_stale, *tail,
                       np.zeros(1, np.int64))
        tv, ts, steps = T.its(Wh, ptr, idx, use_nbrs, t_cur, t_best, t_val, seed, *args, t_stale, *tail, [0])
        assert (tv, ts) == (kv, ks)  # the float exactly
        assert np.array_equal(t_cur, k_cur) and np.array_equal(t_best, k_best)
        assert steps > 0
        k_val, k_stale, t_val, t_stale = kv, ks, tv, ts
    assert T.objective(Wh, k_best) == H.objective(Wh, k_best)
    assert T.relabel(k_cur * 3 + 5)[0].tolist() == H.relabel(k_cur * 3 + 5)[0].tolist()


def test_twin_honours_a_set_stop_flag_like_the_kernel():
    rng = np.random.default_rng(3)
    Wh, forbid = _instance(rng, "gauss", 30, True, 1.0)
    ptr, idx = _positive_neighbours(Wh)
    prm = search_params(30)
    start = H.pivot_labels(Wh, rng.permutation(30).astype(np.int64), forbid)
    args = (5, prm["depth"], prm["tt_lo"], prm["tt_hi"], prm["str_lo"], prm["str_hi"], 0.2, 0.0, 10, 0, True, 1, 10)
    a, b = start.copy(), start.copy()
    k = H.its(Wh, ptr, idx, False, a, a.copy(), -np.inf, 11, *args, np.ones(1, np.int64))
    t = T.its(Wh, ptr, idx, False, b, b.copy(), -np.inf, 11, *args, [1])
    assert t[:2] == k and np.array_equal(a, b)


def test_twin_over_budget_raises_and_leaves_the_arrays_alone():
    rng = np.random.default_rng(5)
    Wh, forbid = _instance(rng, "random", 25, True, 1.0)
    ptr, idx = _positive_neighbours(Wh)
    prm = search_params(25)
    cur = H.pivot_labels(Wh, rng.permutation(25).astype(np.int64), forbid)
    best = cur.copy()
    c0, b0 = cur.copy(), best.copy()
    with pytest.raises(T.TwinBudgetExceeded):
        T.its(Wh, ptr, idx, False, cur, best, -np.inf, 1, 50, prm["depth"], prm["tt_lo"], prm["tt_hi"],
              prm["str_lo"], prm["str_hi"], 0.2, 0.0, 10, 0, True, 1, 10, [0], budget=10_000)
    assert np.array_equal(cur, c0) and np.array_equal(best, b0)


def _all_kernels(monkeypatch):
    monkeypatch.setattr(heuristic, "_use_twin", lambda cost=0: False)


def _twins_for(monkeypatch, steps):
    """Take the twins (as a cold process would) for ``steps`` steps, then the kernels."""
    monkeypatch.setitem(heuristic._twin, "left", steps)
    monkeypatch.setattr(heuristic, "_use_twin", lambda cost=0: heuristic.twin_steps_left() > cost)


@pytest.mark.parametrize("steps", [heuristic.TWIN_STEPS, 300_000])
def test_search_through_the_twins_gives_the_kernels_answer(monkeypatch, steps):
    # the whole search by the twins, or the twins until their budget runs out in the
    # middle of a chunk and the kernels from there on (the chunk is redone by the kernel)
    W = make_instance("gauss", 40, random_state=2)
    A = ~np.eye(40, dtype=bool)
    A[3, 7] = A[7, 3] = False
    runs = []
    for route in ("kernel", "twin"):
        with monkeypatch.context() as m:
            (_all_kernels if route == "kernel" else lambda mp: _twins_for(mp, steps))(m)
            stats: dict = {}
            lab, val = solve_heuristic(W, A, rng=np.random.default_rng(4), max_rounds=60, patience=25, stats=stats)
            runs.append((lab.tolist(), val, stats))
            if route == "twin" and steps < heuristic.TWIN_STEPS:
                assert heuristic.twin_steps_left() == 0  # it did run out
    assert runs[0] == runs[1]


def test_partition_through_the_twins_gives_the_kernels_answer(monkeypatch):
    W = np.zeros((24, 24))
    rng = np.random.default_rng(8)
    for b in range(3):  # three components: the exact solver after the staged search
        s = slice(8 * b, 8 * (b + 1))
        W[s, s] = make_instance("random", 8, random_state=b)
    np.fill_diagonal(W, 0.0)
    W[0, 9] = W[9, 0] = float(rng.integers(-3, 3))
    out = []
    for route in ("kernel", "twin"):
        with monkeypatch.context() as m:
            (_all_kernels if route == "kernel" else lambda mp: _twins_for(mp, heuristic.TWIN_STEPS))(m)
            r = partition(W, method="cpp", random_state=0)
            out.append((r.labels.tolist(), r.objective, r.status, [c["status"] for c in r.components]))
    assert out[0] == out[1]


def _cars():
    import trustlab
    from trustlab.solvers import read_cplib

    return read_cplib(os.path.join(os.path.dirname(trustlab.__file__), "data", "cplib", "cars.txt"))


# the bundled CP-Lib cars instance: the cutting planes prove it (no branch and price, whose
# pricing kernels are another family); before, its first run compiled the search
_COLD = """
import json, sys
from trustlab.kernels import cpp_heuristic as H
from trustlab.solvers import partition
from tests.solvers.test_heuristic_twin import _cars

r = partition(_cars(), method="cpp", random_state=0)
print(json.dumps({"labels": r.labels.tolist(), "objective": r.objective, "status": r.status,
                  "compiled": [f.__name__ for f in (H.its, H.pivot_labels, H.objective) if f.overloads]}))
"""


def test_a_cold_process_compiles_no_search_kernel_and_gets_the_warm_answer(tmp_path, monkeypatch):
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    p = subprocess.run([sys.executable, "-c", _COLD], capture_output=True, text=True, env=env, timeout=300,
                       cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert p.returncode == 0, p.stderr[-2000:]
    cold = json.loads(p.stdout.strip().splitlines()[-1])
    assert cold["compiled"] == []  # before: its, pivot_labels and objective (42 specialisations, ~8 s of CPU)
    assert not list(cache.rglob("*cpp_heuristic*"))
    _all_kernels(monkeypatch)
    warm = partition(_cars(), method="cpp", random_state=0)
    assert cold["labels"] == warm.labels.tolist()
    assert cold["objective"] == warm.objective and cold["status"] == warm.status


def test_the_twins_are_used_only_while_the_kernel_is_cold_and_can_be_turned_off(monkeypatch):
    class ColdKernel:  # a dispatcher with nothing compiled
        overloads: dict = {}

    monkeypatch.setattr(heuristic, "its", ColdKernel())
    monkeypatch.setattr(heuristic, "kernel_ready", lambda f: False)
    monkeypatch.setitem(heuristic._twin, "cold", None)
    monkeypatch.delenv("TRUSTLAB_PARTITION_PYTHON", raising=False)
    assert heuristic._use_twin() and heuristic.prepare() == 0.0
    assert not heuristic._use_twin(cost=heuristic.TWIN_STEPS)  # more work than the budget: the kernels
    monkeypatch.setitem(heuristic._twin, "cold", None)
    monkeypatch.setattr(heuristic, "kernel_ready", lambda f: True)  # in the on-disk cache: load it
    assert not heuristic._use_twin()
    monkeypatch.setitem(heuristic._twin, "cold", None)
    monkeypatch.setattr(heuristic, "kernel_ready", lambda f: False)
    monkeypatch.setenv("TRUSTLAB_PARTITION_PYTHON", "0")
    assert not heuristic._use_twin()


def test_reduction_does_not_count_a_cold_starts_twin_seconds(monkeypatch):
    # the reduction's short searches (one per part) stop once its deadline has passed;
    # seconds declared as a cold start's (the twins', via exclude_seconds) move it on,
    # as compilations do. Before, the first part's cold search used up the deadline and
    # the other parts got no search (fewer candidate clusters for the almost-clique rule)
    import time

    from trustlab.kernels import _jit
    from trustlab.solvers.reduction import reduce_component

    real = heuristic.solve_heuristic
    calls = []

    def cold_search(W, A, **kw):
        calls.append(W.shape[0])
        time.sleep(0.6)
        _jit.exclude_seconds(3.0)
        return real(W, A, **kw)

    monkeypatch.setattr(heuristic, "solve_heuristic", cold_search)
    W = -0.5 * np.ones((24, 24))
    for b in range(3):
        W[8 * b:8 * (b + 1), 8 * b:8 * (b + 1)] = make_instance("random", 8, random_state=b)
    np.fill_diagonal(W, 0.0)
    reduce_component(W, seed=0, deadline=time.perf_counter() + 0.5)
    assert calls == [8, 8, 8]  # every part searched
