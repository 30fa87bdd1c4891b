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
def wedge_packing(indptr, indices, weights, eid, n_pairs, max_work):
    """``(P, LB, work, complete)`` of the greedy conflict-wedge packing (module docstring).

    ``P`` is the sum of the positive pair weights (pairs in the order of their first
    entry, row-major), ``LB`` the packed amount, ``work`` the steps counted (per
    wedge tried from ``(a; u)``: ``2 deg(u) + wedges`` when ``u``'s row is marked, or
    ``wedges x bits(deg(u))`` when it is binary-searched, whichever is less) and ``complete`` False when the packing
    stopped at ``max_work`` steps (``LB`` is then still a valid, weaker, lower bound).
    """
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
                return P, lb, work, False
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
            if mark:
                for p in range(lo0, hi0):
                    slot[indices[p]] = -1
    return P, lb, work, True


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
