"""The clocks the partition solvers read: wall time, or counted work.

With an explicit ``time_limit`` a solver's deadlines are wall-clock times
(:class:`WallClock`, ``time.perf_counter``): a loaded machine stops a component earlier
and its answer can change. Without one (the default of :func:`trustlab.partition` and
:func:`trustlab.er.resolve`) every component runs on a :class:`WorkClock`, whose
"time" is the *work* the solver has counted so far (search rounds, local-search rounds,
LP solves and their iterations, pricing search nodes, master LPs, MIP nodes, reduction
rounds), each charged in **reference seconds**: the seconds that work takes on a quiet
reference machine (the ``*_RATE`` / ``*_SECONDS`` constants, fitted on the development
machine; approximate by nature). Every stop
decision then depends on the input only, so the same input gives the same entities and
statuses however loaded the machine is, whether the Numba kernels were compiled or
their exact Python twins ran, and however the components were scheduled.

A :class:`WorkClock` keeps a generous wall-clock **safety stop** so that no default run
can hang: once it passes, :meth:`WorkClock.now` answers ``inf`` (every deadline has
passed), kernels running without the GIL are stopped by their timer, and the component
reports ``safety_stop=True`` in its statistics: the only case where load may change
the answer.

A solver finds its clock with :func:`current` (a thread-local set by the component's
runner with :func:`using`); threads a solver starts itself take its clock along.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time

__all__ = ["WallClock", "WorkClock", "current", "using", "WALL", "SAFETY_FACTOR", "SAFETY_SLACK"]

#: the wall-clock safety stop of a work budget: ``SAFETY_FACTOR`` times its reference
#: seconds plus ``SAFETY_SLACK`` seconds (a quiet machine spends about 1x)
SAFETY_FACTOR = 4.0
SAFETY_SLACK = 30.0

# reference seconds per unit of counted work: fitted to the CPU seconds of each kind of
# work on the development machine (warm kernels; random and planted instances of 40-800
# nodes, then rescaled to the CPU seconds of the clustering of pv_inventors: its
# LPs, search rounds and separation rounds took 0.34, 0.74 and 0.6 of the first fit).
# Approximate by nature: the real seconds of one unit vary with the instance
# (within about a factor of 2 for the LPs, more for the pricing search)
#: the dense tabu search: the chunk-size work estimate of :class:`~trustlab.solvers.heuristic._Search`
#: (``depth * n * max(8, sqrt n) + n^2`` per round) per reference second ...
SEARCH_RATE = 5.4e8
#: ... plus ``ROUND_SECONDS`` per round (small instances) and the fixed cost of one chunk
#: of rounds (kernel call, timer thread)
ROUND_SECONDS = 1.3e-4
CHUNK_SECONDS = 5.0e-4
#: the sparse search's rounds: edges + nodes touched per reference second
SPARSE_RATE = 6.0e7
#: HiGHS LP solves (cutting planes): ``LP_SECONDS * (nonzeros + variables) ** LP_POWER``
LP_SECONDS = 1.4e-6
LP_POWER = 1.15
#: ... or, when larger, ``LP_ROWS_SECONDS * rows ** LP_ROWS_POWER``: the interior point's
#: factorisations grow with the cuts faster than the size law above once an LP has more
#: than ~10,000 cut rows (fitted to the CPU seconds of the cutting-plane LPs of
#: assignees_umass's 1,565-record component: 48k variables, 4k-27k rows, 0.16-8.6 s each,
#: which the size law charged 0.5-1.4 s; below ~8,000 rows it never applies)
LP_ROWS_SECONDS = 7.4e-11
LP_ROWS_POWER = 2.5
#: separation rounds of the cutting planes: ``n^3`` per reference second, plus
#: ``APEX_SECONDS`` per node (the per-apex NumPy calls)
SEPARATION_RATE = 3.0e8
APEX_SECONDS = 2.8e-4
#: exact pricing search nodes per reference second (branch and price)
PRICING_RATE = 1.5e6
#: the restricted master LP: ``columns * m + m^2`` per reference second
MASTER_RATE = 9.0e6
#: the cheap pricing stages (1-flip and tabu searches): ``m^2``-scaled work per reference second
LOCAL_RATE = 5.0e7
#: MIP search nodes (SCIP / CP-SAT branches): reference seconds per node and variable
MIP_NODE_SECONDS = 4.0e-6
#: reduction rounds: ``n^2`` per reference second, plus ``REDUCE_ROUND_SECONDS`` per round
REDUCE_RATE = 5.0e7
REDUCE_ROUND_SECONDS = 1.0e-2
#: one almost-clique test of the reduction (a minimum cut, NumPy)
MIN_CUT_SECONDS = 1.0e-2


class WallClock:
    """Wall time: :meth:`now` is ``time.perf_counter()`` (an explicit ``time_limit``)."""

    work = False

    @property
    def safety_hit(self) -> bool:
        return False

    def now(self) -> float:
        return time.perf_counter()

    def charge(self, seconds: float) -> None:
        """Counted work (reference seconds): wall time counts itself."""

    def excluded(self, seconds: float) -> float:
        """Seconds a deadline moves on by (compilations, cold-cache Python twins): all of them."""
        return seconds

    def left(self, deadline: float | None) -> float | None:
        """What is left until ``deadline`` (None: no deadline), at least 0."""
        return None if deadline is None else max(0.0, deadline - self.now())

    def wall_left(self, deadline: float | None) -> float | None:
        """Wall seconds an external solver (HiGHS, SCIP, CP-SAT) may run towards ``deadline``."""
        return self.left(deadline)

    def kernel_stop(self, deadline: float | None) -> float | None:
        """The ``time.perf_counter`` time a timer thread stops a GIL-free kernel at."""
        return deadline


class WorkClock:
    """Counted work: :meth:`now` is the reference seconds charged so far (see the
    module docstring); ``safety`` a ``time.perf_counter`` time after which :meth:`now`
    answers ``inf`` and :attr:`safety_hit` turns True (None: no safety stop).

    Examples
    --------
    >>> c = WorkClock(None)
    >>> c.charge(1.5); c.now(), c.left(2.0), c.excluded(3.0)
    (1.5, 0.5, 0.0)
    """

    work = True

    def __init__(self, safety: float | None):
        self.spent = 0.0
        self.safety = safety
        self._hit = False
        self._lock = threading.Lock()

    @property
    def safety_hit(self) -> bool:
        return self._hit or (self.safety is not None and time.perf_counter() >= self.safety)

    def now(self) -> float:
        if self.safety is not None and time.perf_counter() >= self.safety:
            self._hit = True
            return math.inf
        return self.spent

    def charge(self, seconds: float) -> None:
        with self._lock:
            self.spent += float(seconds)

    def excluded(self, seconds: float) -> float:
        return 0.0

    def left(self, deadline: float | None) -> float | None:
        if deadline is None:
            return None
        now = self.now()
        return 0.0 if math.isinf(now) else max(0.0, deadline - now)

    def wall_left(self, deadline: float | None) -> float | None:
        """External solvers get no wall limit but the safety stop's (their own work
        limits, set by the caller, bound them)."""
        if self.safety is None:
            return None
        return max(1e-3, self.safety - time.perf_counter())

    def kernel_stop(self, deadline: float | None) -> float | None:
        return self.safety


WALL = WallClock()
_local = threading.local()


def current():
    """The clock of the component this thread solves (:data:`WALL` outside any)."""
    return getattr(_local, "clock", WALL)


@contextlib.contextmanager
def using(clock):
    """Make ``clock`` this thread's :func:`current` clock inside the block."""
    prev = getattr(_local, "clock", None)
    _local.clock = clock
    try:
        yield clock
    finally:
        if prev is None:
            del _local.clock
        else:
            _local.clock = prev


def safety_seconds(reference_seconds: float) -> float:
    """The wall-clock safety stop of a work budget of ``reference_seconds``.

    Examples
    --------
    >>> safety_seconds(10.0)
    70.0
    """
    return SAFETY_FACTOR * float(reference_seconds) + SAFETY_SLACK
