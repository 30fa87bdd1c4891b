"""Upper bounds for clique partitioning that need no LP: the conflict-wedge packing.

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
"""
from __future__ import annotations

import time

import numpy as np

from trustlab.kernels._jit import exclude_seconds, is_warm, kernel_ready, warm_once

__all__ = ["packing_bound", "packing_bound_dense", "PACKING_MAX_WORK", "PACKING_WORK_PER_NODE", "ensure_compiled"]

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
