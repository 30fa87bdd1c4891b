"""Numba kernels for clique partitioning of large *sparse* graphs, in O(n + m) memory.

Plain kernels on validated arrays; the orchestration (merges, perturbation rounds,
deadline) lives in :mod:`trustlab.solvers.sparse`.

The graph is symmetric CSR (``indptr`` int64, ``indices`` int64, ``weights`` float64,
both directions of every edge). A missing edge is a forbidden pair, so every cluster
must stay a clique of the graph: node ``i`` may join cluster ``c`` only if it is
adjacent to all of ``c``'s members, i.e. if ``c`` holds exactly ``size[c]`` of ``i``'s
neighbours. The weights from ``i`` to the clusters of its neighbours are gathered per
visit by one scan of its adjacency (scratch arrays indexed by cluster id, reset
through the list of the clusters touched), so a move costs O(deg i) and nothing
of size n x n is ever held, unlike the dense gain table of
:mod:`trustlab.kernels.cpp_heuristic`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

EPS = 1e-9


@njit(cache=True, nogil=True)
def descent(indptr, indices, weights, lab, size, order, stop):
    """Best-improvement vertex moves (to a neighbouring cluster it is complete to, or
    to a new singleton) in passes over the nodes ``order`` lists (all of them or a
    region) until a pass improves nothing or
    ``stop[0]`` is set (read between moves: the partition is whole at every check).

    ``lab`` (cluster id per node, ids in ``[0, n)``) and ``size`` (members per id)
    are updated in place. Returns the total gain.
    """
    n = lab.shape[0]
    wsum = np.zeros(n)
    cnt = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    free = np.empty(n, np.int64)
    nfree = 0
    for c in range(n):
        if size[c] == 0:
            free[nfree] = c
            nfree += 1
    total = 0.0
    improved = True
    while improved and stop[0] == 0:
        improved = False
        for t in range(order.shape[0]):
            if stop[0] != 0:
                break
            i = order[t]
            a = lab[i]
            k = 0
            for p in range(indptr[i], indptr[i + 1]):
                c = lab[indices[p]]
                if cnt[c] == 0:
                    touched[k] = c
                    k += 1
                cnt[c] += 1
                wsum[c] += weights[p]
            wa = wsum[a]
            best = EPS
            bc = -2
            if size[a] > 1 and -wa > best:
                best = -wa
                bc = -1
            for q in range(k):
                c = touched[q]
                if c != a and cnt[c] == size[c]:
                    g = wsum[c] - wa
                    if g > best:
                        best = g
                        bc = c
            for q in range(k):
                c = touched[q]
                cnt[c] = 0
                wsum[c] = 0.0
            if bc == -2 or (bc == -1 and nfree == 0):  # (no free id: ``size`` disagrees with ``lab``)
                continue
            if bc == -1:
                nfree -= 1
                bc = free[nfree]
            size[a] -= 1
            if size[a] == 0:
                free[nfree] = a
                nfree += 1
            size[bc] += 1
            lab[i] = bc
            total += best
            improved = True
    return total


@njit(cache=True, nogil=True)
def pair_totals(rows, cols, weights, lab, n_clusters):
    """Inter-cluster weight and pair count per cluster pair that shares an edge.

    Returns ``(a, b, weight, count)`` arrays (``a < b``), one entry per pair of
    clusters joined by at least one edge, gathered by sorting the edges' cluster-pair
    keys.
    """
    m = rows.shape[0]
    keys = np.empty(m, np.int64)
    wf = np.empty(m)
    k = 0
    for e in range(m):
        a = lab[rows[e]]
        b = lab[cols[e]]
        if a == b:
            continue
        if a > b:
            a, b = b, a
        keys[k] = a * n_clusters + b
        wf[k] = weights[e]
        k += 1
    idx = np.argsort(keys[:k])
    ks = keys[:k][idx]
    out_a = np.empty(k, np.int64)
    out_b = np.empty(k, np.int64)
    out_w = np.empty(k)
    out_c = np.empty(k, np.int64)
    u = -1
    prev = -1
    for t in range(k):
        key = ks[t]
        if key != prev:
            u += 1
            out_a[u] = key // n_clusters
            out_b[u] = key - out_a[u] * n_clusters
            out_w[u] = 0.0
            out_c[u] = 0
            prev = key
        out_w[u] += wf[idx[t]]
        out_c[u] += 1
    return out_a[:u + 1], out_b[:u + 1], out_w[:u + 1], out_c[:u + 1]
