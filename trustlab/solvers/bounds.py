"""Upper bounds for clique partitioning: the conflict-wedge packing (no LP) and the
triangle LP by cutting planes (:func:`triangle_lp_bound`, started from the packing's wedges).

The heuristics' own bound is the sum ``P`` of the positive weights, which every
partition of a component with a conflict misses: on the large components of the real
entity-resolution suite it was 10-27 % above the objective found, while the partitions
were within 0.6-2.9 % of optimal. :func:`packing_bound` subtracts from ``P`` a greedy
fractional packing of conflict wedges (:mod:`trustlab.kernels.packing`; the sparse twin
of :func:`trustlab.solvers.reduction.conflict_packing`), a lower bound on the weight every
partition loses. It is a valid upper bound whatever the greedy order; it is not the best
such packing (a heuristic packing: another order can be tighter).

Work is O(sum over nodes of positive degree x (degree + positive degree)), capped at
:data:`PACKING_WORK_PER_NODE` steps per node and :data:`PACKING_MAX_WORK` in all (a step
is ~3-5 ns: about 0.5 ms per node, at most about a second): a dense component stops the
greedy there and keeps the (valid, weaker) packing so far. The cap is a count, so the bound
never depends on the clock or the machine's load. (Measured on the real suite's large
components: 1,252-6,645 nodes with 12,548-157,056 pairs finish in 0.4-1.9e7 steps, 0.01-0.2 s;
pv_inventors' 788-node component, nearly complete with 310,078 pairs, needs 7.1e8 steps for a
0.03 % gap and stops at 7.9e7 with 2.2 %.) While the kernel is not compiled yet
(a cold Numba cache) a graph of at most :data:`TWIN_MAX_WORK` steps runs the kernel's
exact Python twin (same bits), larger ones compile it (:func:`ensure_compiled`; the
compile is excluded from time budgets through :mod:`trustlab.kernels._jit`).

The packing is a feasible dual of the triangle LP restricted to its wedges, and a greedy
one: on the suite's large components the LP over the same graph (solved to a few rounds of
cutting planes, its bound computed from the LP's multipliers by weak duality) is several
times closer to the heuristics' partitions (stop 51: affiliations' 1,030-record component
4.3 % -> 0.3 %). Its limits are counts (rounds, rows, the LPs' charged work, :func:`lp_charge`),
so the bound depends on the input only; ``partition(lp_bound=True)`` (opt-in) applies it to the
components that end unproven, within a budget of counted work (see ``partition(lp_bound=)``).
"""
from __future__ import annotations

import time

import numpy as np

from trustlab.kernels._jit import exclude_seconds, is_warm, kernel_ready, warm_once

__all__ = ["packing_bound", "packing_bound_dense", "triangle_lp_bound", "PACKING_MAX_WORK", "PACKING_WORK_PER_NODE",
           "ensure_compiled"]

#: most steps of one packing (an adjacency entry scanned or a wedge tried; ~3-5 ns each
#: in the kernel), per node of the graph and in all; a graph needing more keeps the
#: packing found so far
PACKING_WORK_PER_NODE = 100_000
PACKING_MAX_WORK = 200_000_000
#: the exact Python twin runs instead of compiling the kernel up to this many steps
#: (an upper estimate of the work, before running)
TWIN_MAX_WORK = 200_000


def _compile() -> None:
    from trustlab.kernels.packing import wedge_packing

    e = np.array([0, 0], np.int64)
    wedge_packing(np.array([0, 1, 2], np.int64), np.array([1, 0], np.int64), np.ones(2), e, 1, 10)


_cached: list = []  # kernel_ready's answer, probed once per process (it reads the cache index)


def _kernel_ready() -> bool:
    """True when calling the kernel will not compile: warmed in this process, or (probed
    once) in Numba's on-disk cache."""
    if is_warm("packing"):
        return True
    if not _cached:
        from trustlab.kernels.packing import wedge_packing

        _cached.append(kernel_ready(wedge_packing))
    return _cached[0]


def ensure_compiled() -> float:
    """Compile (or load from the cache) the packing kernel once per process; the seconds
    it took (0.0 when already done)."""
    return warm_once("packing", _compile)


def _csr(n: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray):
    """Symmetric CSR with each row in increasing column order, and the pair id of every
    entry (the edge index)."""
    m = rows.size
    r = np.concatenate([rows, cols])
    c = np.concatenate([cols, rows])
    o = np.lexsort((c, r))
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    eid = np.concatenate([np.arange(m, dtype=np.int64), np.arange(m, dtype=np.int64)])[o]
    w = np.concatenate([vals, vals])[o]
    return (indptr, np.ascontiguousarray(c[o], dtype=np.int64), np.ascontiguousarray(w, dtype=np.float64),
            np.ascontiguousarray(eid, dtype=np.int64))


def work_estimate(indptr: np.ndarray, weights: np.ndarray, indices: np.ndarray) -> int:
    """An upper bound on the packing's steps: sum over positive pairs ``(a, u)`` of
    ``deg(u) + posdeg(a)``."""
    n = indptr.size - 1
    deg = np.diff(indptr)
    pos = weights > 0
    row = np.repeat(np.arange(n), deg)
    posdeg = np.bincount(row[pos], minlength=n)
    return int(deg[indices[pos]].sum() + (posdeg.astype(np.int64) ** 2).sum())


def packing_bound(n: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, *,
                  max_work: int | None = None) -> dict:
    """The conflict-wedge packing bound of the graph of edges ``rows[e]-cols[e]``
    (unique unordered pairs, no loops, local indices in ``[0, n)``) with weights
    ``vals``; a pair that is not an edge may not share a cluster.

    Returns a dict: ``positive`` (``P``, the sum of the positive weights), ``packing``
    (``LB``), ``bound`` (``P - LB``, an upper bound on every partition's within-cluster
    weight), ``work`` (steps), ``complete`` (False: the greedy stopped at ``max_work``
    steps; default ``min(PACKING_WORK_PER_NODE * n, PACKING_MAX_WORK)``)
    and ``python`` (True: the exact Python twin ran, the kernel being cold).

    Examples
    --------
    A positive path ``0 - 1 - 2`` whose closing pair is negative (or absent) loses at
    least 1:

    >>> import numpy as np
    >>> b = packing_bound(3, np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([2.0, 1.0, -1.0]))
    >>> b["positive"], b["packing"], b["bound"], b["complete"]
    (3.0, 1.0, 2.0, True)
    """
    from trustlab.kernels import packing as K

    rows = np.asarray(rows, np.int64)
    cols = np.asarray(cols, np.int64)
    vals = np.asarray(vals, np.float64)
    if rows.shape != cols.shape or rows.shape != vals.shape or rows.ndim != 1:
        raise ValueError("rows, cols and vals must be 1-d arrays of one length.")
    if rows.size and (min(rows.min(), cols.min()) < 0 or max(rows.max(), cols.max()) >= n or np.any(rows == cols)):
        raise ValueError("edges must join two different nodes in [0, n).")
    if not np.all(np.isfinite(vals)):
        raise ValueError("edge weights must be finite.")
    indptr, indices, weights, eid = _csr(int(n), rows, cols, vals)
    max_work = min(PACKING_WORK_PER_NODE * int(n), PACKING_MAX_WORK) if max_work is None else int(max_work)
    python = False
    t = time.perf_counter()
    if not _kernel_ready() and work_estimate(indptr, weights, indices) <= TWIN_MAX_WORK:
        P, lb, work, complete = K.wedge_packing_twin(indptr, indices, weights, eid, rows.size, max_work)
        exclude_seconds(time.perf_counter() - t)  # stands in for a compile: no budget pays for it
        python = True
    else:
        ensure_compiled()
        P, lb, work, complete = K.wedge_packing(indptr, indices, weights, eid, rows.size, max_work)
    return {"positive": float(P), "packing": float(lb), "bound": float(P - lb), "work": int(work),
            "complete": bool(complete), "python": python}


def packing_bound_dense(W: np.ndarray, A: np.ndarray, **kw) -> dict:
    """:func:`packing_bound` of a dense component: weights ``W`` and allowed-pair mask
    ``A`` (symmetric; every allowed pair is an edge, a forbidden one is absent)."""
    iu, ju = np.nonzero(np.triu(np.asarray(A, bool), 1))
    return packing_bound(W.shape[0], iu, ju, np.asarray(W, np.float64)[iu, ju], **kw)


#: the triangle LP bound's limits (counts, so the bound never depends on the clock): cutting
#: rounds, rows added per round (per pair of the graph), a pair's share of one round's new
#: rows, the rows one separation records and its steps
LP_MAX_ROUNDS = 12
LP_ROWS_PER_PAIR = 0.25
LP_ROWS_PER_PAIR_ROUND = 1
LP_MAX_FOUND = 2_000_000
LP_SEPARATION_WORK = 200_000_000
#: the LP work in all by default (reference seconds, see :func:`lp_charge`)
LP_MAX_SECONDS = 10.0
#: the charge of one triangle LP (reference seconds): ``LP_TRIANGLE_SECONDS * rows ** 2``, or
#: the work clock's size law ``LP_SECONDS * (nnz + variables) ** LP_POWER`` when larger.
#: Fitted (stop 52) to the CPU seconds of HiGHS's interior point on the cutting-plane LPs of
#: planted graphs of 300-800 nodes (4e4-2.7e5 pairs, 1.5e4-9e4 rows: 2.1e-9-4.2e-9 x rows^2
#: CPU seconds under load, so within a factor of 1.5 either way); the size law alone
#: undercharged them 3-8x (and 2-19x in wall seconds under load, stop 51)
LP_TRIANGLE_SECONDS = 3.0e-9
#: a separation step (:func:`~trustlab.kernels.packing.violated_triangles`'s ``work``), reference seconds
LP_SEPARATION_STEP_SECONDS = 4.0e-9
#: graphs of more pairs of positive weight are not given the LP bound (by partition)
LP_MAX_PAIRS = 400_000
#: HiGHS's method and simplex iteration limit (per row and variable of the LP)
LP_METHOD = "highs-ipm"
LP_ITER_PER_ROW = 5.0


def lp_charge(rows: int, nnz: int, variables: int) -> float:
    """Reference seconds one triangle LP of ``rows`` rows, ``nnz`` nonzeros and
    ``variables`` columns is charged (before it is solved, so whether it runs depends on
    the sizes only): ``max(LP_TRIANGLE_SECONDS * rows ** 2, LP_SECONDS * (nnz + variables)
    ** LP_POWER)``. Approximate (a fit, see :data:`LP_TRIANGLE_SECONDS`).

    Examples
    --------
    >>> round(lp_charge(40_000, 110_000, 40_000), 2)
    4.8
    """
    from trustlab.solvers._clock import LP_POWER, LP_SECONDS

    return max(LP_TRIANGLE_SECONDS * float(rows) ** 2, LP_SECONDS * float(nnz + variables) ** LP_POWER)


def _spread(e1, e2, order, m, per_pair, max_new):
    """Indices into ``order`` (most violated first) of the rows to add: each pair in at
    most ``per_pair`` of them (as ``au`` or ``av``), at most ``max_new`` in all."""
    cnt = np.zeros(m, np.int64)
    take = []
    for t in order.tolist():
        a, b = e1[t], e2[t]
        if cnt[a] >= per_pair or cnt[b] >= per_pair:
            continue
        cnt[a] += 1
        cnt[b] += 1
        take.append(t)
        if len(take) >= max_new:
            break
    return np.asarray(take, np.int64)


def _compile_triangles() -> None:
    from trustlab.kernels.packing import violated_triangles

    e = np.array([0, 0], np.int64)
    violated_triangles(np.array([0, 1, 2], np.int64), np.array([1, 0], np.int64), e, np.ones(1), 1e-6, 4, 100)


def triangle_lp_bound(n: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, *,
                      max_rounds: int = LP_MAX_ROUNDS, max_seconds: float = LP_MAX_SECONDS,
                      target: float | None = None, wall_limit: float | None = None) -> dict:
    """An upper bound on every partition's within-cluster weight from the triangle LP of
    the graph of edges ``rows[e]-cols[e]`` (as :func:`packing_bound`: unique pairs, a pair
    that is not an edge may not share a cluster), solved by cutting planes.

    The LP: maximise ``sum_e w_e x_e`` over ``0 <= x <= 1`` (one ``x`` per edge; a
    non-edge is 0) subject to triangle inequalities ``x_au + x_av - x_uv <= 1``. Every
    partition's indicator satisfies them. For any multipliers ``y >= 0`` of a set of them
    (rows ``G``), weak duality gives the certificate ``sum(y) + sum_e max(0, w_e -
    (G^T y)_e)`` >= ``w . x`` for every partition ``x`` (``w.x = sum_e (w - G^T y)_e x_e
    + y.Gx <= sum_e max(0, .) + sum(y)``): the bound is computed from the LP's duals by
    that formula, so it is valid whatever the LP solver's tolerances. It is at most the
    conflict-wedge packing bound when the LP holds the packed wedges (the packing is a
    feasible ``y``), and it is usually far tighter than the greedy packing.

    Rounds: solve the LP (HiGHS, :data:`LP_METHOD`) over the rows so far, find the triangles
    the solution violates (:func:`trustlab.kernels.packing.violated_triangles`), add the
    most violated (at most :data:`LP_ROWS_PER_PAIR_ROUND` new rows per pair and round,
    :data:`LP_ROWS_PER_PAIR` x pairs of positive weight in all per round), drop rows that are slack with a
    zero dual, repeat; it stops when nothing is violated (the full triangle LP's optimum),
    after ``max_rounds``, when the next LP's charge (:func:`lp_charge`, reference seconds
    computed from its sizes before it runs) plus the work so far (LPs and separations,
    :data:`LP_SEPARATION_STEP_SECONDS` per step) would pass ``max_seconds``, when an LP does
    not solve, or when the bound reaches ``target``. Every limit is a count, so the bound
    depends on the input only. ``wall_limit`` (None: none) is a safety stop only (the
    caller's: a work budget's wall-clock safety stop, or an explicit ``time_limit``'s
    seconds): no LP starts past it and HiGHS gets what is left as its time limit; an LP it
    stops is not used (``wall_stop`` True; the bound is the best of the rounds before it,
    still valid, and only then depends on the machine's speed).

    Returns a dict: ``bound``, ``positive`` (``P``), ``rounds``, ``rows`` (of the last
    LP), ``complete`` (True: no violated triangle was left, so ``bound`` is the LP's
    optimum), ``work`` (reference seconds charged: the LPs run and the separations),
    ``wall_stop``.

    Examples
    --------
    A positive path ``0 - 1 - 2`` whose closing pair is negative: the bound is the optimum,
    2 (``{0, 1}, {2}``, or all three together), where the sum of positive weights is 3:

    >>> import numpy as np
    >>> b = triangle_lp_bound(3, np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([2.0, 1.0, -1.0]))
    >>> round(b["bound"], 6), b["complete"]
    (2.0, True)
    """
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from trustlab.kernels import packing as K

    rows = np.asarray(rows, np.int64)
    cols = np.asarray(cols, np.int64)
    w = np.asarray(vals, np.float64)
    m = rows.size
    P = float(w[w > 0].sum())
    out = {"bound": P, "positive": P, "rounds": 0, "rows": 0, "complete": False, "work": 0.0, "wall_stop": False}
    if m == 0 or P == 0.0:
        out["complete"] = True
        return out
    warm_once("triangles", _compile_triangles)
    ensure_compiled()
    t_start = time.perf_counter()
    indptr, indices, weights, eid = _csr(int(n), rows, cols, w)
    # the first rows: the wedges of the greedy packing (their amounts are a feasible dual,
    # so the first LP's bound is already at most the packing bound)
    P0, lb, steps, _, o1, o2, o3, _ = K.wedge_packing_rows(indptr, indices, weights, eid, m,
                                                            min(PACKING_WORK_PER_NODE * int(n), PACKING_MAX_WORK))
    out["work"] += LP_SEPARATION_STEP_SECONDS * float(steps)
    best = min(P, float(P0 - lb))
    R = np.stack([o1, o2, o3], axis=1)
    max_new = max(1, int(LP_ROWS_PER_PAIR * np.count_nonzero(w > 0)))  # (rows hold two positive-x pairs)
    x = None
    for rnd in range(max_rounds):
        if x is not None:
            e1, e2, e3, viol, found, steps, complete = K.violated_triangles(indptr, indices, eid, x, 1e-6,
                                                                            LP_MAX_FOUND, LP_SEPARATION_WORK)
            out["work"] += LP_SEPARATION_STEP_SECONDS * float(steps)
            if found == 0 and complete:
                out["complete"] = True
                break
            if e1.size == 0:
                break
            order = np.argsort(-viol, kind="stable")
            take = _spread(e1, e2, order, m, LP_ROWS_PER_PAIR_ROUND, max_new)
            R = np.concatenate([R, np.stack([e1[take], e2[take], e3[take]], axis=1)])
        k = R.shape[0]
        if k == 0:
            out["complete"] = True
            break
        # the LP's columns: the pairs in some row (a pair in none is at its own optimum, 1 if
        # its weight is positive, else 0, and the certificate counts it so)
        used = np.unique(R[R >= 0])
        col = np.full(m, -1, np.int64)
        col[used] = np.arange(used.size)
        has3 = R[:, 2] >= 0
        G = sp.csr_matrix((np.concatenate([np.ones(2 * k), -np.ones(int(has3.sum()))]),
                           (np.concatenate([np.arange(k), np.arange(k), np.flatnonzero(has3)]),
                            col[np.concatenate([R[:, 0], R[:, 1], R[has3, 2]])])), shape=(k, used.size))
        cost = lp_charge(k, int(G.nnz), int(used.size))
        if out["work"] + cost > max_seconds:
            break
        options = {"maxiter": int(LP_ITER_PER_ROW * (k + used.size))}
        if wall_limit is not None:
            wall_left = wall_limit - (time.perf_counter() - t_start)
            if wall_left <= 0:
                out["wall_stop"] = True
                break
            options["time_limit"] = wall_left
        res = linprog(-w[used], A_ub=G, b_ub=np.ones(k), bounds=(0.0, 1.0), method=LP_METHOD, options=options)
        out["work"] += cost
        out["rounds"] = rnd + 1
        out["rows"] = int(k)
        if res.status != 0 or res.x is None:
            # (status 1: HiGHS's iteration limit, a count; a time limit only from wall_limit)
            out["wall_stop"] = wall_limit is not None and time.perf_counter() - t_start >= wall_limit
            break
        y = np.maximum(-np.asarray(res.ineqlin.marginals, np.float64), 0.0)
        gty = np.zeros(m)
        gty[used] = G.T @ y
        best = min(best, float(y.sum() + np.maximum(w - gty, 0.0).sum()))
        x = (w > 0).astype(np.float64)
        x[used] = np.clip(res.x, 0.0, 1.0)
        R = R[(y > 1e-12) | (np.asarray(res.ineqlin.residual) < 1e-6)]
        if target is not None and best <= target:
            break
    out["bound"] = float(min(best, P))
    return out
