"""Compile time never counts against a time budget (kernels/_jit.py, partition's clock).

A cold Numba cache is simulated by forgetting which kernel families this process has
warmed and by making a family's warm-up slow (a real cold compile of the heuristic
takes ~10 s of CPU); the budgets then must not shrink.
"""
import threading
import time

import numpy as np
import pytest

from trustlab.kernels import _jit
from trustlab.solvers import heuristic, partition
from trustlab.solvers.api import _Clock
from trustlab.solvers.synthetic import make_instance


@pytest.fixture
def cold(monkeypatch):
    """A process that has warmed nothing yet (the kernels stay compiled; only the
    bookkeeping of warm_once is fresh). The search's exact Python twins, which a cold
    process runs instead of compiling, are off: these tests are about the compile."""
    monkeypatch.setattr(_jit, "_keys", {})
    monkeypatch.setitem(heuristic._twin, "left", 0)
    return monkeypatch


def _blocks(k, m, seed):
    n = k * m
    W = -np.ones((n, n))
    for b in range(k):
        W[m * b:m * (b + 1), m * b:m * (b + 1)] = make_instance("random", m, random_state=seed + b)
    np.fill_diagonal(W, 0)
    return W


def test_partition_does_not_count_a_slow_compile(cold):
    real = heuristic._compile
    cold.setattr(heuristic, "_compile", lambda: (time.sleep(3.0), real()))
    W = _blocks(4, 10, 3)
    r = partition(W, method="cpp", time_limit=2.0, random_state=0)
    # before: the 3 s warm-up came out of the 2 s budget and every component stopped at
    # its limit unproven
    assert [c["status"] for c in r.components] == ["optimal"] * 4
    assert r.status == "optimal"
    assert _jit.is_warm("cpp_heuristic")
    ref = partition(W, method="cpp", time_limit=2.0, random_state=0)  # warm now
    np.testing.assert_array_equal(r.labels, ref.labels)


def test_a_single_component_does_not_count_it_either(cold):
    real = heuristic._compile
    cold.setattr(heuristic, "_compile", lambda: (time.sleep(3.0), real()))
    r = partition(make_instance("random", 12, random_state=1), method="cpp", time_limit=2.0, random_state=0)
    assert r.status == "optimal"


def test_clock_moves_on_by_compile_seconds(cold):
    clock = _Clock(time.perf_counter() + 1.0, {0: 1, 1: 1}, 1)
    assert _jit.warm_once("test:slow", lambda: time.sleep(1.5)) >= 1.5
    # 1.5 s of the 1 s budget went to compiling: the deadline moved on by as much
    assert clock.start(0) > 0.0


def test_warm_once_runs_once_and_waiters_get_their_wait_back(cold):
    calls = []
    started = threading.Event()

    def slow():
        calls.append(1)
        started.set()
        time.sleep(0.5)

    out = {}
    t = threading.Thread(target=lambda: out.setdefault("owner", _jit.warm_once("test:k", slow)))
    t.start()
    started.wait()
    out["waiter"] = _jit.warm_once("test:k", slow)  # another thread compiles it: wait
    t.join()
    assert calls == [1]
    assert out["owner"] > 0 and out["waiter"] > 0
    assert _jit.warm_once("test:k", slow) == 0.0 and calls == [1]


def test_warm_once_failure_leaves_it_cold(cold):
    def boom():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        _jit.warm_once("test:fail", boom)
    assert not _jit.is_warm("test:fail")
    assert _jit.warm_once("test:fail", lambda: None) >= 0.0 and _jit.is_warm("test:fail")
