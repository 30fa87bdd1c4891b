"""Issue 27 item 6 (deterministic budgets): with no ``time_limit`` the partition layer
runs under a work budget counted in reference seconds, so the answer (labels, statuses)
does not depend on how fast the clock runs, i.e. on the machine's load; a wall-clock
safety stop still ends a run and says so; an explicit ``time_limit`` keeps its
wall-clock meaning."""
from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import trustlab.er.defaults as er_defaults
from trustlab.er import cluster_pairs
from trustlab.solvers import _clock, api, partition
from trustlab.solvers.synthetic import make_instance


def _fast_clock(monkeypatch, factor: float) -> None:
    """Every ``time.perf_counter`` reading runs ``factor`` times faster than real time: a
    machine ``factor`` times slower (or as loaded), as every wall-clock deadline sees it."""
    real = time.perf_counter
    t0 = real()
    monkeypatch.setattr(time, "perf_counter", lambda: t0 + (real() - t0) * factor)


def _hard(n: int = 500, seed: int = 5) -> np.ndarray:
    # a random signed instance whose search (or exact solve, on small ones) does not end
    # by its own rule within a second: the budget ends it (on the old code, a wall-clock
    # budget of the same seconds cut the search at another round under a fast clock, and
    # the 500-node clustering below came out different)
    rng = np.random.default_rng(seed)
    W = rng.normal(0.05, 1.0, (n, n))
    W = (W + W.T) / 2
    np.fill_diagonal(W, 0.0)
    return W


def _answer(r) -> tuple:
    return r.labels.tolist(), r.status, [c["status"] for c in r.components], [c.get("phase") for c in r.components]


def test_default_partition_does_not_depend_on_the_clock_speed(monkeypatch):
    # the default budget made small (1 reference second, the size-scaled default is a
    # minute): it binds on this instance. Old code: a wall-clock budget, cut 30x sooner
    # under the fast clock. The safety stop is moved far out (its slack) so that only the
    # work budget can end the run, however slow this machine is today.
    monkeypatch.setattr(api, "default_time_limit", lambda n: 1.0)
    monkeypatch.setattr(_clock, "SAFETY_SLACK", 3000.0)
    W = _hard()
    normal = partition(W, random_state=0, n_jobs=1)
    assert normal.status in ("time_limit", "feasible")  # the budget bound (not proven)
    _fast_clock(monkeypatch, 30.0)
    fast = partition(W, random_state=0, n_jobs=1)
    assert _answer(fast) == _answer(normal)
    assert normal.objective == fast.objective
    for c in normal.components + fast.components:
        assert c["budget"] == "work" and not c["safety_stop"] and c["work_spent"] > 0


def test_default_components_share_the_work_budget_whatever_the_threads(monkeypatch):
    # several components, solved in threads and serially: the same answer (the shares do
    # not depend on what finished first)
    monkeypatch.setattr(api, "default_time_limit", lambda n: 0.8)
    monkeypatch.setattr(_clock, "SAFETY_SLACK", 3000.0)
    blocks = [_hard(24, 1), _hard(40, 2), _hard(30, 3)]
    n = sum(b.shape[0] for b in blocks)
    rows, cols, vals = [], [], []
    off = 0
    for b in blocks:
        r, c = np.triu_indices(b.shape[0], 1)
        rows.append(r + off)
        cols.append(c + off)
        vals.append(b[r, c])
        off += b.shape[0]
    G = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    one = partition(G, random_state=0, n_jobs=1)
    two = partition(G, random_state=0, n_jobs=3)
    _fast_clock(monkeypatch, 20.0)
    fast = partition(G, random_state=0, n_jobs=3)
    assert _answer(one) == _answer(two) == _answer(fast)


def test_default_cluster_pairs_does_not_depend_on_the_clock_speed(monkeypatch):
    # the clustering of resolve (cluster_pairs, method="xer") with no time_limit
    monkeypatch.setattr(er_defaults, "default_time_limit", lambda n: 1.0)
    monkeypatch.setattr(_clock, "SAFETY_SLACK", 3000.0)
    W = _hard()
    i, j = np.triu_indices(500, 1)
    pairs, w = np.c_[i, j], W[i, j]
    normal = cluster_pairs(500, pairs, w, method="xer")
    _fast_clock(monkeypatch, 30.0)
    fast = cluster_pairs(500, pairs, w, method="xer")
    assert normal.labels.tolist() == fast.labels.tolist()
    assert list(normal.status) == list(fast.status)
    assert {"time_limit", "feasible"} & set(normal.status)  # the budget bound (no proof)
    assert normal.info["safety_stops"] == 0 and normal.info["work_spent"] > 0


def test_the_safety_stop_ends_a_default_run_and_says_so(monkeypatch):
    # a huge work budget whose wall-clock safety stop is a tenth of a second away
    monkeypatch.setattr(_clock, "SAFETY_FACTOR", 0.0)
    monkeypatch.setattr(_clock, "SAFETY_SLACK", 0.1)
    W = make_instance("random", 300, random_state=0)
    t = time.perf_counter()
    r = partition(W, random_state=0, n_jobs=1, work_limit=1e6)
    assert time.perf_counter() - t < 30.0
    (c,) = r.components
    assert c["safety_stop"] is True and c["status"] == "time_limit" and r.status == "time_limit"
    i, j = np.triu_indices(300, 1)
    with pytest.warns(UserWarning, match="safety stop"):
        cr = cluster_pairs(300, np.c_[i, j], W[i, j], method="xer", solver_options={"work_limit": 1e6})
    assert cr.info["safety_stops"] == 1


def test_an_explicit_time_limit_is_wall_clock(monkeypatch):
    # the clock runs 1000x fast: a 5 s time_limit is over within a few real milliseconds
    W = make_instance("random", 300, random_state=0)
    _fast_clock(monkeypatch, 1000.0)
    t = time.perf_counter()
    r = partition(W, random_state=0, n_jobs=1, time_limit=5.0)
    assert (time.perf_counter() - t) / 1000.0 < 20.0
    (c,) = r.components
    assert r.status == "time_limit" and "budget" not in c and "safety_stop" not in c


def test_work_limit_and_time_limit_are_exclusive():
    with pytest.raises(ValueError, match="not both"):
        partition(_hard(10), time_limit=1.0, work_limit=1.0)


def test_work_clock_counts_work_only():
    c = _clock.WorkClock(None)
    assert c.now() == 0.0 and c.excluded(5.0) == 0.0 and c.kernel_stop(3.0) is None
    c.charge(2.0)
    assert c.left(3.0) == 1.0 and c.left(1.0) == 0.0 and not c.safety_hit
    s = _clock.WorkClock(time.perf_counter() - 1.0)  # its safety stop has passed
    assert s.now() == float("inf") and s.left(10.0) == 0.0 and s.safety_hit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with _clock.using(c):
            assert _clock.current() is c
        assert _clock.current() is _clock.WALL
