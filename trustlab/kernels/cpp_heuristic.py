"""Numba kernels for the clique partitioning heuristic (KwikCluster pivot + local search).

Plain kernels on validated, C-contiguous float64 arrays; no validation here (the
orchestration lives in :mod:`trustlab.solvers.heuristic`).

Forbidden pairs (a missing edge in graph form) are encoded by the caller as a large
negative weight ``-big`` with ``big > 2 * sum(|w|)``, so any partition that uses a
forbidden pair is worse than the all-singletons partition and local search never
creates one from a feasible start.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def pivot_labels(W, order, forbid):
    """KwikCluster on the positive edges, respecting forbidden pairs.

    ``order`` is a permutation of the nodes (the pivot order); a node joins the
    pivot's cluster when its weight to the pivot is positive and it is compatible
    (``W > forbid``) with every member already there.
    """
    n = W.shape[0]
    labels = np.full(n, -1, np.int64)
    members = np.empty(n, np.int64)
    c = 0
    for t in range(n):
        p = order[t]
        if labels[p] >= 0:
            continue
        labels[p] = c
        members[0] = p
        size = 1
        for s in range(n):
            v = order[s]
            if labels[v] >= 0 or W[p, v] <= 0.0:
                continue
            ok = True
            for q in range(size):
                if W[members[q], v] <= forbid:
                    ok = False
                    break
            if ok:
                labels[v] = c
                members[size] = v
                size += 1
        c += 1
    return labels


@njit(cache=True)
def _relabel(labels):
    n = labels.shape[0]
    m = 0
    for i in range(n):
        if labels[i] > m:
            m = labels[i]
    mp = np.full(m + 1, -1, np.int64)
    out = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        l = labels[i]
        if mp[l] < 0:
            mp[l] = k
            k += 1
        out[i] = mp[l]
    return out, k


@njit(cache=True)
def objective(W, labels):
    """Total weight of within-cluster pairs (i < j)."""
    n = W.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if labels[i] == labels[j]:
                s += W[i, j]
    return s


@njit(cache=True)
def local_search(W, labels_in, order, max_rounds):
    """Best-improvement vertex moves (to another cluster or a new singleton) and
    cluster merges until no move improves; returns compact labels.

    ``S[i, c]`` holds the weight of node ``i`` to cluster ``c``; each move updates it
    in O(n). Moves are scanned in ``order`` (first improvement per node, best target).
    """
    n = W.shape[0]
    labels, k = _relabel(labels_in.copy())
    S = np.zeros((n, n), np.float64)
    size = np.zeros(n, np.int64)
    for i in range(n):
        size[labels[i]] += 1
        for j in range(n):
            if j != i:
                S[i, labels[j]] += W[i, j]
    # free cluster ids stack
    free = np.empty(n, np.int64)
    nfree = 0
    for c in range(n - 1, k - 1, -1):
        free[nfree] = c
        nfree += 1
    eps = 1e-12
    for _ in range(max_rounds):
        improved = False
        # ---- vertex moves
        moved = True
        while moved:
            moved = False
            for t in range(n):
                i = order[t]
                own = labels[i]
                cur = S[i, own]
                best = 0.0 - cur  # gain of becoming a singleton
                bestc = -1
                if size[own] == 1:
                    best = 0.0
                for c in range(n):
                    if c == own or size[c] == 0:
                        continue
                    g = S[i, c] - cur
                    if g > best + eps:
                        best = g
                        bestc = c
                if best > eps and not (bestc == -1 and size[own] == 1):
                    if bestc == -1:
                        nfree -= 1
                        bestc = free[nfree]
                    for v in range(n):
                        w = W[v, i]
                        S[v, own] -= w
                        S[v, bestc] += w
                    size[own] -= 1
                    size[bestc] += 1
                    labels[i] = bestc
                    if size[own] == 0:
                        free[nfree] = own
                        nfree += 1
                    moved = True
                    improved = True
        # ---- merges: best positive pair of clusters
        G = np.zeros((n, n), np.float64)
        for i in range(n):
            a = labels[i]
            for c in range(n):
                if size[c] > 0 and c != a:
                    G[a, c] += S[i, c]
        bg = eps
        ba = -1
        bb = -1
        for a in range(n):
            if size[a] == 0:
                continue
            for b in range(a + 1, n):
                if size[b] > 0 and G[a, b] > bg:
                    bg = G[a, b]
                    ba = a
                    bb = b
        if ba >= 0:
            for i in range(n):
                if labels[i] == bb:
                    labels[i] = ba
            for v in range(n):
                S[v, ba] += S[v, bb]
                S[v, bb] = 0.0
            size[ba] += size[bb]
            size[bb] = 0
            free[nfree] = bb
            nfree += 1
            improved = True
        if not improved:
            break
    out, _ = _relabel(labels)
    return out


@njit(cache=True)
def perturb(labels, rng_u, rng_c, frac):
    """Move a random fraction of nodes to random clusters (or new singletons)."""
    n = labels.shape[0]
    out = labels.copy()
    kmax = 0
    for i in range(n):
        if out[i] > kmax:
            kmax = out[i]
    nxt = kmax + 1
    for i in range(n):
        if rng_u[i] < frac:
            c = rng_c[i] % (kmax + 2)
            if c == kmax + 1:
                out[i] = nxt
                nxt += 1
            else:
                out[i] = c
    return out
