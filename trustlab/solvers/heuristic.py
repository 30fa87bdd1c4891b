"""Heuristic clique partitioning: iterated tabu search (Numba), see
:mod:`trustlab.kernels.cpp_heuristic` for the moves.

Approximate: no optimality guarantee. The returned partition is the best one found;
the bound a caller reports is the trivial one (sum of positive allowed weights)
unless an exact method supplies a better one.

Stopping: after ``max_rounds`` rounds (perturbation + tabu walk + descent), after
``patience`` rounds in a row that did not improve the best, or at ``deadline``
(checked between chunks of rounds, a chunk being sized to a few tens of milliseconds
of work, and inside a chunk between moves: a timer thread sets the flag the kernel
reads, so one long descent on a large instance cannot overrun it by more than the
first chunk's grace, :data:`FIRST_CHUNK_GRACE`, which lets every small instance
finish its first descent even when the budget is already spent). A result is never
below the all-singletons partition (objective 0). The chunk schedule depends only on
the instance size, so a run that stops by ``max_rounds`` or ``patience`` is
deterministic for a fixed generator; a run cut by a wall-clock deadline depends on
the machine's speed. On a work clock (:mod:`trustlab.solvers._clock`, the default of
:func:`trustlab.partition`) the deadline is counted work: every round is charged the
reference seconds of its size-based work estimate, a chunk never has more rounds than
the budget has left, and only the clock's wall-clock safety stop reaches into a chunk,
so a run cut by its budget is deterministic too.

Cold start: while the search kernels are neither compiled in the process nor in Numba's
on-disk cache (the first run after an install), chunks of rounds, the pivot start and
the objective run their exact pure-Python twins
(:mod:`trustlab.kernels.cpp_heuristic_twin`: the same bits) instead of compiling the
kernels (~8 s of CPU), up to :data:`TWIN_STEPS` steps per process; past that the kernels
compile and take over at the next chunk boundary (the chunk that ran out is redone by
the kernel), with the same result. The twins' seconds, like a compilation's, are not
counted against deadlines (:func:`trustlab.kernels._jit.exclude_seconds`).
"""
from __future__ import annotations

import contextlib
import math
import os
import threading
import time

import numpy as np

from trustlab._scale import pow2_for
from trustlab.kernels import cpp_heuristic_twin as twin
from trustlab.kernels._jit import exclude_seconds, kernel_ready, warm_once
from trustlab.kernels.cpp_heuristic import its, objective, pivot_labels
from trustlab.solvers._clock import CHUNK_SECONDS, ROUND_SECONDS, SEARCH_RATE
from trustlab.solvers._clock import current as current_clock

#: seconds of search the first chunk always gets, whatever the deadline
FIRST_CHUNK_GRACE = 1.0

#: elementary steps (gain-table entries and candidate clusters visited) that the exact
#: Python twins of the search kernels (:mod:`trustlab.kernels.cpp_heuristic_twin`) may
#: take per process while the kernels are neither compiled nor in Numba's on-disk
#: cache: ~1 s of CPU (4.6-5.2 M steps/s measured), against ~8 s for compiling the
#: kernels. A count, not a timer, so which path runs is deterministic; both give the
#: same bits, so the results do not depend on it either.
TWIN_STEPS = 5_000_000
#: the compiled search's speed in the same steps, on the low side (60-190 M/s measured
#: at n = 16-120): a chunk run by the twin counts ``steps / KERNEL_STEPS_PER_SECOND``
#: seconds in :meth:`_Search.seconds_to_finish`'s estimate, not the twin's own 12-45x
#: longer time (which would make a caller reserve far too much time for the search)
KERNEL_STEPS_PER_SECOND = 50e6

_twin = {"left": TWIN_STEPS, "cold": None}


def twin_steps_left() -> int:
    """Steps the Python twins may still take in this process (see :data:`TWIN_STEPS`)."""
    return min(_twin["left"], TWIN_STEPS)


def _use_twin(cost: int = 0) -> bool:
    """True when this call should run the exact Python twin: the search kernel is not
    compiled in this process, was not in the on-disk cache when first asked (read once
    per process: nothing compiles), and the twins' step budget has ``cost`` left.
    ``TRUSTLAB_PARTITION_PYTHON=0`` in the environment turns the twins off."""
    if its.overloads or twin_steps_left() <= cost:
        return False
    if _twin["cold"] is None:
        _twin["cold"] = os.environ.get("TRUSTLAB_PARTITION_PYTHON", "") != "0" and not kernel_ready(its)
    return bool(_twin["cold"])


def _compile() -> None:
    W = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    s = _Search(W, ~np.eye(3, dtype=bool), rng=np.random.default_rng(0), max_rounds=1, patience=None, init=None,
                params=None, kernels=True)
    s.run()
    s.result()


def ensure_compiled() -> float:
    """Compile (or load from the cache) the search kernels (pivot start, search,
    objective) on a 3-node instance, once per process, with the argument types of a
    real search; the seconds it took (0.0 when already done). Callers do this before
    their clock starts, so a deadline never counts the compilation."""
    return warm_once("cpp_heuristic", _compile)


def prepare() -> float:
    """What a caller does before its clock starts: :func:`ensure_compiled`, except while
    the search would run its exact Python twin (kernels cold, twin budget left), when
    nothing is compiled now (a first ``trustlab partition`` or ``resolve`` on small
    components is done before the kernels would have compiled). A search that outgrows
    the twins' budget compiles the kernels then, and excludes those seconds and the
    twins' own from its deadline. Returns the seconds spent here.

    Examples
    --------
    >>> prepare() >= 0.0
    True
    """
    if _use_twin():
        return 0.0
    return ensure_compiled()


def search_objective(W: np.ndarray, labels: np.ndarray) -> float:
    """:func:`~trustlab.kernels.cpp_heuristic.objective` (C-contiguous float64 ``W``,
    int64 ``labels``), by its exact NumPy twin while the search kernels are cold.

    Examples
    --------
    >>> W = np.array([[0.0, 2.0, -1.0], [2.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    >>> search_objective(W, np.array([0, 0, 1]))
    2.0
    """
    if _use_twin():
        return twin.objective(W, labels)
    return float(objective(W, labels))


def _twin_call(fn, *args, **kwargs):
    """Run a twin, its seconds excluded from the clocks that exclude compilations (a warm
    process runs the kernel in a fraction of them); None when it ran out of steps (then
    no twin runs again in this process: the caller compiles the kernels)."""
    t = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    except twin.TwinBudgetExceeded:
        _twin["left"] = 0
        return None
    finally:
        exclude_seconds(time.perf_counter() - t)


@contextlib.contextmanager
def stop_flag(deadline: float | None):
    """An int64 array of one element that a timer thread sets to 1 at ``deadline``
    (``time.perf_counter`` time; None: never), for kernels that run without the GIL
    and read it between moves; the timer is cancelled on exit."""
    stop = np.zeros(1, np.int64)
    timer = None
    if deadline is not None:
        timer = threading.Timer(max(0.0, deadline - time.perf_counter()), stop.fill, args=(1,))
        timer.daemon = True
        timer.start()
    try:
        yield stop
    finally:
        if timer is not None:
            timer.cancel()


def default_patience(n: int) -> int:
    """Rounds without improvement before the search stops: ``100000 // n`` clipped to
    [20, 700] (a round's tabu walk grows with ``n``; about 1-3 s of search at n = 100
    and 10 s at n = 500 on one core)."""
    return int(max(20, min(700, 100_000 // max(n, 1))))


def encode_forbidden(W: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, float]:
    """Dense weights with forbidden pairs replaced by ``-big`` (see the kernel module)."""
    big = 2.0 * float(np.abs(W).sum()) + 1.0
    Wh = np.where(A, W, -big)
    np.fill_diagonal(Wh, 0.0)
    return np.ascontiguousarray(Wh, dtype=np.float64), -big / 2.0


def weight_scale(W: np.ndarray, A: np.ndarray) -> float:
    """A power of two bringing the largest allowed |weight| into [1, 2) when it lies
    outside [1, 2**20] (else 1). The search compares gains with absolute tolerances
    (``EPS`` in the kernel): with weights of 1e13 the rounding noise of its running
    sums exceeds them and a descent can cycle on noise; with weights of 1e-9 every
    gain is below them and nothing moves. Scaling by a power of two is exact, so the
    search on the scaled weights is the search on the real ones with relative
    tolerances."""
    # reductions with where=: no copy of the n x n weights
    top = max(float(np.max(W, where=A, initial=0.0)), -float(np.min(W, where=A, initial=0.0)))
    return pow2_for(top, keep=(1.0, 2.0**20))


def search_params(n: int) -> dict:
    """Tabu walk depth, tenure range, perturbation strength range and the other knobs
    of the search (see :func:`trustlab.kernels.cpp_heuristic.its`).

    Tuned (time to the best known value, on instances and seeds kept apart from the
    benchmarks) on unplanted signed, uniform, Gaussian and equicut-like instances of
    n = 80-100 and spot-checked at n = 200 and 500: a descent-based perturbation of
    ``n/10``-``n/4`` moves, applied to the current solution (``restart_prob = 0``), a
    tenure of ``n/10``-``n/4`` up to n = 100 (``n/25``-``n/8`` above), a random restart
    every 10 rounds without improvement.
    """
    return dict(
        depth=max(50, min(2 * n, 400)),
        tt_lo=max(1, n // 25, min(n // 10, 10)),
        tt_hi=max(2, n // 8, min(n // 4, 25)),
        str_lo=max(2, n // 10),
        str_hi=max(3, n // 4),
        split_prob=0.2,
        restart_prob=0.0,
        restart_after=10,
        directed=1,
        q=10,
    )


def _positive_neighbours(Wh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pos = Wh > 0
    np.fill_diagonal(pos, False)
    deg = pos.sum(axis=1)
    ptr = np.zeros(Wh.shape[0] + 1, np.int64)
    np.cumsum(deg, out=ptr[1:])
    idx = np.nonzero(pos)[1].astype(np.int64)
    return ptr, idx


class _Search:
    """The state of one iterated tabu search, run in chunks of rounds.

    :meth:`run` can stop early (``pause``: once ``stale`` reaches it, checked between
    chunks) and be called again: the chunk schedule (sizes and the seed drawn per
    chunk) depends only on the instance size, ``max_rounds`` and ``patience``, so a
    search paused and resumed ends exactly where one uninterrupted run would (unless a
    deadline cuts either).
    """

    def __init__(self, W, A, *, rng, max_rounds, patience, init, params, kernels=False):
        n = W.shape[0]
        self.kernels = kernels  # True: never the Python twins (the warm-up that compiles the kernels)
        self._Wl = None  # Wh.tolist(), for the twins
        self.W, self.A, self.rng, self.n = W, A, rng, n
        # the kernel runs on power-of-two scaled weights (its tolerances are absolute)
        self.scale = weight_scale(W, A)
        self.Wh, self.forbid = encode_forbidden(W * self.scale if self.scale != 1.0 else W, A)
        self.max_rounds = max_rounds
        self.patience = default_patience(n) if patience is None else patience
        self.prm = search_params(n)
        if params:
            self.prm.update(params)
        self.ptr, self.idx = _positive_neighbours(self.Wh)
        self.use_nbrs = self.idx.size < 0.25 * n * n  # mean positive degree < n / 4
        if init is not None:
            self.cur = np.asarray(init, np.int64).copy()
        else:
            order = rng.permutation(n).astype(np.int64)
            cur = None
            if not kernels and _use_twin(n * n):
                cur = _twin_call(twin.pivot_labels, self.Wh, order, self.forbid, Wl=self._wl())
                _twin["left"] -= n * n
            self.cur = pivot_labels(self.Wh, order, self.forbid) if cur is None else cur
        self.best = self.cur.copy()
        self.best_val = -np.inf
        # rounds per chunk: a few tens of ms (a round costs ~ depth * n * clusters flops)
        work = self.prm["depth"] * n * max(8.0, np.sqrt(n)) + n * n
        self.cap = int(max(1, min(256, 1e7 / work)))
        #: reference seconds one round is charged on a work clock (trustlab.solvers._clock)
        self.round_seconds = work / SEARCH_RATE + ROUND_SECONDS
        self.chunk = 1
        self.done = 0
        self.stale = 0
        self.first = True
        self.hit_target = False
        self.seconds = 0.0  # wall time spent in run()

    @property
    def finished(self) -> bool:
        """True once the search stopped by its own rule (rounds, patience or target)."""
        return self.done >= self.max_rounds or self.stale >= self.patience or self.hit_target

    def seconds_to_finish(self) -> float:
        """Estimated time to reach the stopping rule if no further improvement resets
        the patience counter, in the units of this thread's clock
        (:func:`trustlab.solvers._clock.current`): on a wall clock, rounds left times the
        mean wall time per round so far (the first, compiling chunk included, so the
        estimate errs on the long side); on a work clock, rounds left times the reference
        seconds a round is charged (deterministic)."""
        if self.finished:
            return 0.0
        left = min(self.max_rounds - self.done, self.patience - self.stale)
        if current_clock().work:
            return self.round_seconds * left
        return self.seconds / max(1, self.done) * left

    def run(self, *, deadline=None, target=None, pause=None) -> None:
        t0 = time.perf_counter()
        self._twin_adjust = 0.0
        try:
            self._run(deadline, target, pause)
        finally:
            self.seconds += time.perf_counter() - t0 + self._twin_adjust

    def _run(self, deadline, target, pause) -> None:
        prm = self.prm
        clk = current_clock()
        while not self.finished:
            if pause is not None and self.stale >= pause:
                break
            if deadline is not None and clk.now() >= deadline and not self.first:
                break
            k = min(self.chunk, self.max_rounds - self.done, self.patience - self.stale)
            if clk.work and deadline is not None and not self.first:
                # a work budget: no more rounds than it has left (deterministic)
                k = max(1, min(k, int(math.ceil(clk.left(deadline) / self.round_seconds))))
            # a chunk can be long (the first descent of a 3,000-node instance: ~30 s), so
            # the deadline also stops it from inside. The first chunk always gets
            # FIRST_CHUNK_GRACE seconds of search (its descent on any small or mid-size
            # instance, even when the budget is already spent), counted once the kernel
            # is compiled (a cold compile takes seconds)
            seed = int(self.rng.integers(0, 2**31 - 1))
            args = (k, prm["depth"], prm["tt_lo"], prm["tt_hi"], prm["str_lo"], prm["str_hi"], prm["split_prob"],
                    prm["restart_prob"], prm["restart_after"], self.stale, self.first, int(prm["directed"]),
                    int(prm["q"]))
            out = None
            # (q >= 1, restart_after >= 1; a round costs the twin >= 4 n^2 steps: two builds of
            # the gain table and two objectives, so a larger instance goes straight to the kernels)
            if not self.kernels and args[-1] >= 1 and args[8] >= 1 and _use_twin(4 * self.n * self.n):
                # kernels cold: the exact Python twin (never cut by the deadline: its seconds
                # are excluded from it, as a compilation's would be)
                t = time.perf_counter()
                out = _twin_call(twin.its, self.Wh, self.ptr, self.idx, self.use_nbrs, self.cur, self.best,
                                 self.best_val, seed, *args, [0], budget=twin_steps_left(), Wl=self._wl())
                dt = time.perf_counter() - t
                if deadline is not None:
                    deadline += clk.excluded(dt)
                self._twin_adjust -= dt
                if out is not None:
                    _twin["left"] -= out[2]
                    self._twin_adjust += out[2] / KERNEL_STEPS_PER_SECOND
                    self.best_val, self.stale = out[0], out[1]
            if out is None:
                stop_at = deadline
                if deadline is not None:
                    # compile time never counts against the deadline
                    deadline += clk.excluded(ensure_compiled())
                    stop_at = max(deadline, time.perf_counter() + FIRST_CHUNK_GRACE) if self.first else deadline
                    stop_at = clk.kernel_stop(stop_at)  # a work clock: only its safety stop
                with stop_flag(stop_at) as stop:
                    self.best_val, self.stale = its(self.Wh, self.ptr, self.idx, self.use_nbrs, self.cur, self.best,
                                                    self.best_val, seed, *args, stop)
            clk.charge(k * self.round_seconds + CHUNK_SECONDS)
            self.first = False
            self.done += k
            self.chunk = min(self.cap, 2 * self.chunk)
            if target is not None and self.best_val >= target * self.scale - 1e-9:
                self.hit_target = True

    def _wl(self) -> list:
        if self._Wl is None:
            self._Wl = self.Wh.tolist()
        return self._Wl

    def result(self) -> tuple[np.ndarray, float]:
        Wa = np.ascontiguousarray(self.W * self.A, dtype=np.float64)
        val = float(objective(Wa, self.best)) if self.kernels else search_objective(Wa, self.best)
        if val < 0.0:
            # a deadline that cut the first descent can leave the start (a pivot
            # partition) below the all-singletons partition, which is always allowed
            return np.arange(self.n, dtype=np.int64), 0.0
        return self.best.copy(), val


def solve_heuristic(
    W: np.ndarray,
    A: np.ndarray,
    *,
    rng: np.random.Generator,
    deadline: float | None = None,
    max_rounds: int = 100_000,
    patience: int | None = None,
    init: np.ndarray | None = None,
    target: float | None = None,
    params: dict | None = None,
    stats: dict | None = None,
) -> tuple[np.ndarray, float]:
    """Best partition found by iterated tabu search. Returns (labels, objective).

    ``W`` dense symmetric weights, ``A`` the allowed-pair mask; ``init`` an optional
    start (else a KwikCluster pivot partition in a random order); ``patience``
    defaults to :func:`default_patience` rounds without improvement; ``target`` stops the
    search as soon as the best reaches it (a known optimum, for benchmarks);
    ``params`` overrides :func:`search_params`; ``stats``, if a dict, receives
    ``rounds`` (rounds run) and ``stale`` (rounds since the last improvement).
    """
    n = W.shape[0]
    if n <= 1:
        return np.zeros(n, np.int64), 0.0
    s = _Search(W, A, rng=rng, max_rounds=max_rounds, patience=patience, init=init, params=params)
    s.run(deadline=deadline, target=target)
    if stats is not None:
        stats.update(rounds=s.done, stale=s.stale)
    return s.result()
