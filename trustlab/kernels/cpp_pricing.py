"""Exact pricing for clique-partitioning column generation (Numba).

The pricing problem of the set-partitioning formulation: given node duals ``pi``, find
node sets ``S`` maximising ``rc(S) = sum_{i<j in S} W_ij - sum_{i in S} pi_i`` (an
unconstrained binary quadratic programme; forbidden pairs carry a large negative
weight). Solved by depth-first branch and bound over a fixed node order with the bound
``rc(chosen) + sum_{j undecided} max(0, g_j + R_j / 2)``, where ``g_j`` is ``j``'s
marginal gain w.r.t. the chosen set and ``R_j`` the sum of ``j``'s positive weights to
the other undecided nodes (every positive pair inside the undecided set is shared
half-half between its two ends, so the bound is valid).
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def price_topk(W, pi, lb, k, max_nodes):
    """The ``k`` best sets with ``rc > lb`` (exact unless ``max_nodes`` is hit).

    Parameters: ``W`` (n, n) float64 symmetric with zero diagonal, ``pi`` (n,) float64,
    ``lb`` float (only sets with ``rc > lb`` are returned), ``k`` >= 1, ``max_nodes``
    (search-tree node limit, <= 0 for none).

    Returns ``(vals (k,), masks (k, n) bool, n_found, nodes, complete)``; ``vals`` sorted
    decreasingly over the first ``n_found`` rows; ``complete`` is False when the node
    limit stopped the search (then the values are not proven to be the best).
    """
    n = W.shape[0]
    score = np.empty(n)
    for i in range(n):
        s = -pi[i]
        for j in range(n):
            if W[i, j] > 0:
                s += W[i, j]
        score[i] = s
    order = np.argsort(-score)
    Wo = np.empty((n, n))
    Wp = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            v = W[order[a], order[b]]
            Wo[a, b] = v
            Wp[a, b] = v if v > 0 else 0.0
    g = np.empty((n + 1, n))
    Rd = np.empty((n + 1, n))
    for j in range(n):
        g[0, j] = -pi[order[j]]
        r = 0.0
        for q in range(n):
            if q != j:
                r += Wp[j, q]
        Rd[0, j] = r
    vals = np.full(k, -np.inf)
    masks = np.zeros((k, n), np.bool_)
    n_found = 0
    chosen = np.zeros(n, np.bool_)
    val = np.zeros(n + 1)
    stage = np.zeros(n + 1, np.int64)
    d = 0
    nodes = 0
    complete = True
    while d >= 0:
        if stage[d] == 0:
            nodes += 1
            if max_nodes > 0 and nodes > max_nodes:
                complete = False
                break
            thr = lb if n_found < k else max(lb, vals[k - 1])
            # record the chosen set (undecided all out) right after an "include" step;
            # the "exclude" children repeat the same set
            if d > 0 and chosen[d - 1] and val[d] > thr + 1e-9:
                # insert into the sorted top-k
                pos = min(n_found, k - 1)
                while pos > 0 and vals[pos - 1] < val[d]:
                    if pos < k:
                        vals[pos] = vals[pos - 1]
                        masks[pos, :] = masks[pos - 1, :]
                    pos -= 1
                vals[pos] = val[d]
                masks[pos, :] = False
                for q in range(d):
                    if chosen[q]:
                        masks[pos, order[q]] = True
                if n_found < k:
                    n_found += 1
                thr = lb if n_found < k else max(lb, vals[k - 1])
            if d == n:
                d -= 1
                continue
            ub = val[d]
            for j in range(d, n):
                t = g[d, j] + 0.5 * Rd[d, j]
                if t > 0:
                    ub += t
            if ub <= thr + 1e-9:
                d -= 1
                continue
            stage[d] = 1
            chosen[d] = True
            val[d + 1] = val[d] + g[d, d]
            for j in range(d + 1, n):
                g[d + 1, j] = g[d, j] + Wo[d, j]
                Rd[d + 1, j] = Rd[d, j] - Wp[j, d]
            stage[d + 1] = 0
            d += 1
        elif stage[d] == 1:
            stage[d] = 2
            chosen[d] = False
            val[d + 1] = val[d]
            for j in range(d + 1, n):
                g[d + 1, j] = g[d, j]
                Rd[d + 1, j] = Rd[d, j] - Wp[j, d]
            stage[d + 1] = 0
            d += 1
        else:
            chosen[d] = False
            d -= 1
    return vals, masks, n_found, nodes, complete


@nb.njit(cache=True, nogil=True)
def price_local(W, pi, starts, lb):
    """Best-improvement 1-flip local search for the pricing problem from each start node.

    Returns ``(vals (s,), masks (s, n))``: the local optimum reached from every start
    (callers keep those with ``rc > lb``)."""
    n = W.shape[0]
    s = starts.size
    vals = np.full(s, -np.inf)
    masks = np.zeros((s, n), np.bool_)
    g = np.empty(n)
    for t in range(s):
        st = starts[t]
        inC = masks[t]
        inC[st] = True
        v = -pi[st]
        for j in range(n):
            g[j] = W[st, j] - pi[j]
        while True:
            best = 1e-9
            bj = -1
            for j in range(n):
                gain = -g[j] if inC[j] else g[j]
                if gain > best:
                    best = gain
                    bj = j
            if bj < 0:
                break
            if inC[bj]:
                inC[bj] = False
                v -= g[bj]
                for j in range(n):
                    g[j] -= W[bj, j]
            else:
                inC[bj] = True
                v += g[bj]
                for j in range(n):
                    g[j] += W[bj, j]
        vals[t] = v
    return vals, masks
