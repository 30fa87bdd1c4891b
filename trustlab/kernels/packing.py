"""Conflict-wedge packing: an upper bound for clique partitioning of a sparse signed graph.

Plain kernel on validated arrays (the orchestration, checks and the choice between the
kernel and its exact Python twin live in :mod:`trustlab.solvers.bounds`).

The graph is symmetric CSR (``indptr`` int64, ``indices`` int64 with each row's entries
in increasing column order and no diagonal entry, ``weights`` float64, both directions of
every pair) and ``eid`` (int64) gives each entry the id of its unordered pair in
``[0, n_pairs)`` (both directions the same id). A pair that is not an entry may not
share a cluster.

A *conflict wedge* ``(a; b, c)`` has ``w_ab > 0``, ``w_ac > 0`` and ``bc`` negative or
absent. Every partition cuts ``ab`` or ``ac``, or keeps ``bc`` (absent: impossible), so
it loses at least ``min(w_ab, w_ac, |w_bc|)`` against the sum ``P`` of the positive
weights; amounts ``m`` per wedge such that no pair carries more than its absolute weight
in total (an absent pair any amount) bound the loss of every partition by their sum
``LB``, and ``P - LB`` bounds the objective from above. The packing is greedy: apexes in
node order, each apex's positive pairs by their residual amount, largest first (ties by
neighbour index), wedges ``(a; u, x)`` with ``u`` before ``x`` in that order. Stopping
the greedy at any point leaves a valid packing, which is how the work cap works.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _wedge_packing(indptr, indices, weights, eid, n_pairs, max_work, record, o1, o2, o3, om):
    """:func:`wedge_packing`; with ``record`` also the packed wedges: ``o1, o2, o3`` (pair ids
    of ``au``, ``ax``, ``ux`` or -1 when absent) and ``om`` (amounts), returned with their count."""
    n = indptr.shape[0] - 1
    res = np.zeros(n_pairs)
    seen = np.zeros(n_pairs, np.bool_)
    P = 0.0
    maxdeg = 0
    for i in range(n):
        d = indptr[i + 1] - indptr[i]
        if d > maxdeg:
            maxdeg = d
        for p in range(indptr[i], indptr[i + 1]):
            e = eid[p]
            if not seen[e]:
                seen[e] = True
                res[e] = abs(weights[p])
                if weights[p] > 0:
                    P += weights[p]
    slot = np.full(n, -1, np.int64)  # CSR entry of (u, x) for the neighbours x of the marked u
    ns = np.empty(maxdeg, np.int64)
    ne = np.empty(maxdeg, np.int64)
    key = np.empty(maxdeg)
    lb = 0.0
    work = 0
    nrec = 0
    for ap in range(n):
        k = 0
        for p in range(indptr[ap], indptr[ap + 1]):
            if weights[p] > 0:
                ns[k] = indices[p]
                ne[k] = eid[p]
                k += 1
        if k < 2:
            continue
        for t in range(k):
            key[t] = -res[ne[t]]
        order = np.argsort(key[:k], kind="mergesort")  # stable: ties by neighbour index
        for i in range(k - 1):
            u = ns[order[i]]
            ku = ne[order[i]]
            if res[ku] <= 0:
                continue
            lo0 = indptr[u]
            hi0 = indptr[u + 1]
            d = hi0 - lo0
            rest = k - 1 - i
            lg = 1
            while (1 << lg) <= d:
                lg += 1
            mark = 2 * d < rest * lg  # mark u's row, or binary-search it per wedge
            work += 2 * d + rest if mark else rest * lg
            if work > max_work:
                return P, lb, work, False, nrec
            if mark:
                for p in range(lo0, hi0):
                    slot[indices[p]] = p
            for j in range(i + 1, k):
                if res[ku] <= 0:
                    break
                x = ns[order[j]]
                kx = ne[order[j]]
                if mark:
                    p = slot[x]
                else:
                    a = lo0
                    b = hi0
                    while a < b:
                        mid = (a + b) >> 1
                        if indices[mid] < x:
                            a = mid + 1
                        else:
                            b = mid
                    p = a if a < hi0 and indices[a] == x else -1
                if p >= 0 and weights[p] > 0:
                    continue  # ux positive: not a conflict
                m = res[ku]
                if res[kx] < m:
                    m = res[kx]
                if p >= 0 and res[eid[p]] < m:
                    m = res[eid[p]]
                if m <= 0:
                    continue
                res[ku] -= m
                res[kx] -= m
                if p >= 0:
                    res[eid[p]] -= m
                lb += m
                if record and nrec < o1.shape[0]:
                    o1[nrec] = ku
                    o2[nrec] = kx
                    o3[nrec] = eid[p] if p >= 0 else -1
                    om[nrec] = m
                    nrec += 1
            if mark:
                for p in range(lo0, hi0):
                    slot[indices[p]] = -1
    return P, lb, work, True, nrec



@njit(cache=True, nogil=True)
def wedge_packing(indptr, indices, weights, eid, n_pairs, max_work):
    """``(P, LB, work, complete)`` of the greedy conflict-wedge packing (module docstring).

    ``P`` is the sum of the positive pair weights (pairs in the order of their first
    entry, row-major), ``LB`` the packed amount, ``work`` the steps counted (per
    wedge tried from ``(a; u)``: ``2 deg(u) + wedges`` when ``u``'s row is marked, or
    ``wedges x bits(deg(u))`` when it is binary-searched, whichever is less) and ``complete`` False when the packing
    stopped at ``max_work`` steps (``LB`` is then still a valid, weaker, lower bound).
    """
    e = np.empty(0, np.int64)
    P, lb, work, complete, _ = _wedge_packing(indptr, indices, weights, eid, n_pairs, max_work, False, e, e, e,
                                              np.empty(0))
    return P, lb, work, complete


@njit(cache=True, nogil=True)
def wedge_packing_rows(indptr, indices, weights, eid, n_pairs, max_work):
    """:func:`wedge_packing` and the wedges it packed: ``(P, LB, work, complete, o1, o2,
    o3, om)``, pair ids of ``au``, ``ax`` and ``ux`` (-1: absent) and the amount of each
    packed wedge (each exhausts one of its pairs' capacity, so there are at most
    ``n_pairs`` of them)."""
    o1 = np.empty(n_pairs, np.int64)
    o2 = np.empty(n_pairs, np.int64)
    o3 = np.empty(n_pairs, np.int64)
    om = np.empty(n_pairs)
    P, lb, work, complete, k = _wedge_packing(indptr, indices, weights, eid, n_pairs, max_work, True, o1, o2, o3,
                                              om)
    return P, lb, work, complete, o1[:k], o2[:k], o3[:k], om[:k]


def wedge_packing_twin(indptr, indices, weights, eid, n_pairs, max_work):
    """The exact Python twin of :func:`wedge_packing` (same steps, same floating-point
    operations in the same order, so the same bits), for small graphs while the kernel
    is not compiled."""
    ip, ix, wt, ed = indptr.tolist(), indices.tolist(), weights.tolist(), eid.tolist()
    n = len(ip) - 1
    res = [0.0] * n_pairs
    seen = [False] * n_pairs
    P = 0.0
    for i in range(n):
        for p in range(ip[i], ip[i + 1]):
            e = ed[p]
            if not seen[e]:
                seen[e] = True
                res[e] = abs(wt[p])
                if wt[p] > 0:
                    P += wt[p]
    slot = [-1] * n
    lb = 0.0
    work = 0
    for ap in range(n):
        ns = [(ix[p], ed[p]) for p in range(ip[ap], ip[ap + 1]) if wt[p] > 0]
        k = len(ns)
        if k < 2:
            continue
        ns.sort(key=lambda t: -res[t[1]])  # stable, as the kernel's mergesort
        for i in range(k - 1):
            u, ku = ns[i]
            if res[ku] <= 0:
                continue
            d = ip[u + 1] - ip[u]
            rest = k - 1 - i
            lg = max(1, d.bit_length())
            work += 2 * d + rest if 2 * d < rest * lg else rest * lg
            if work > max_work:
                return P, lb, work, False
            for p in range(ip[u], ip[u + 1]):  # (the twin always marks: same answers)
                slot[ix[p]] = p
            for j in range(i + 1, k):
                if res[ku] <= 0:
                    break
                x, kx = ns[j]
                p = slot[x]
                if p >= 0 and wt[p] > 0:
                    continue
                m = res[ku]
                if res[kx] < m:
                    m = res[kx]
                if p >= 0 and res[ed[p]] < m:
                    m = res[ed[p]]
                if m <= 0:
                    continue
                res[ku] -= m
                res[kx] -= m
                if p >= 0:
                    res[ed[p]] -= m
                lb += m
            for p in range(ip[u], ip[u + 1]):
                slot[ix[p]] = -1
    return P, lb, work, True


@njit(cache=True, nogil=True)
def violated_triangles(indptr, indices, eid, x, eps, max_out, max_work):
    """The triangle inequalities ``x_au + x_av - x_uv <= 1`` (apex ``a``; ``x_uv = 0``
    when ``uv`` is not an entry) that ``x`` (per pair id) violates by more than ``eps``:
    ``(e_au, e_av, e_uv or -1, violation)`` for every apex ``a`` and every two of its
    neighbours ``u < v`` (CSR order) with ``x_au, x_av > eps``. At most ``max_out`` are
    recorded (the count of all found is returned); ``work`` counts the steps (row
    entries marked and pairs tried) and the scan stops past ``max_work``.

    Returns ``(e1, e2, e3, viol, found, work, complete)``."""
    n = indptr.shape[0] - 1
    maxdeg = 0
    for i in range(n):
        d = indptr[i + 1] - indptr[i]
        if d > maxdeg:
            maxdeg = d
    slot = np.full(n, -1, np.int64)
    ns = np.empty(maxdeg, np.int64)
    ne = np.empty(maxdeg, np.int64)
    o1 = np.empty(max_out, np.int64)
    o2 = np.empty(max_out, np.int64)
    o3 = np.empty(max_out, np.int64)
    ov = np.empty(max_out)
    found = 0
    work = 0
    for ap in range(n):
        k = 0
        for p in range(indptr[ap], indptr[ap + 1]):
            if x[eid[p]] > eps:
                ns[k] = indices[p]
                ne[k] = eid[p]
                k += 1
        for i in range(k - 1):
            u = ns[i]
            xu = x[ne[i]]
            if xu <= eps:
                continue
            work += indptr[u + 1] - indptr[u] + k - 1 - i
            if work > max_work:
                return o1[:min(found, max_out)], o2[:min(found, max_out)], o3[:min(found, max_out)], \
                    ov[:min(found, max_out)], found, work, False
            for p in range(indptr[u], indptr[u + 1]):
                slot[indices[p]] = eid[p]
            for j in range(i + 1, k):
                e3 = slot[ns[j]]
                v = xu + x[ne[j]] - 1.0
                if e3 >= 0:
                    v -= x[e3]
                if v > eps:
                    if found < max_out:
                        o1[found] = ne[i]
                        o2[found] = ne[j]
                        o3[found] = e3
                        ov[found] = v
                    found += 1
            for p in range(indptr[u], indptr[u + 1]):
                slot[indices[p]] = -1
    m = min(found, max_out)
    return o1[:m], o2[:m], o3[:m], ov[:m], found, work, True
