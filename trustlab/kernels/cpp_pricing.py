"""Exact pricing for clique-partitioning column generation (Numba).

The pricing problem of the set-partitioning formulation: given node duals ``pi``, find
node sets ``S`` maximising ``rc(S) = sum_{i<j in S} W_ij - sum_{i in S} pi_i`` (an
unconstrained binary quadratic programme; forbidden pairs carry a large negative
weight). Solved by depth-first branch and bound over a fixed node order with the bound
``rc(chosen) + sum_{j undecided} max(0, g_j + R_j / 2)``, where ``g_j`` is ``j``'s
marginal gain w.r.t. the chosen set and ``R_j`` the sum of ``j``'s positive weights to
the other undecided nodes (every positive pair inside the undecided set is shared
half-half between its two ends, so the bound is valid). The search state lives in
arrays (:func:`price_start`), so a caller can run it in slices (:func:`price_resume`)
and look at the clock in between.
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def price_start(W, pi, k):
    """The search state of :func:`price_resume` at its root, for the pricing problem
    ``(W, pi)`` keeping the ``k`` best sets: a tuple of arrays (node order, reordered
    weights and their positive parts, per-depth gains ``g`` and positive remainders,
    the top-k values/masks/count, the chosen flags, per-depth values and stages, and the
    current depth). ``W`` (n, n) float64 symmetric with zero diagonal, ``pi`` (n,) float64."""
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
    n_found = np.zeros(1, np.int64)
    chosen = np.zeros(n, np.bool_)
    val = np.zeros(n + 1)
    stage = np.zeros(n + 1, np.int64)
    depth = np.zeros(1, np.int64)
    return order, Wo, Wp, g, Rd, vals, masks, n_found, chosen, val, stage, depth


@nb.njit(cache=True, nogil=True)
def price_resume(state, lb, max_nodes):
    """Run the depth-first search of ``state`` (from :func:`price_start`, updated in
    place) for at most ``max_nodes`` search nodes (<= 0: no limit); a later call goes on
    where this one stopped. Only sets with ``rc > lb`` are kept; ``lb`` must be the same
    in every call on one state. Returns ``(nodes, finished)``."""
    order, Wo, Wp, g, Rd, vals, masks, n_found_a, chosen, val, stage, depth = state
    n = Wo.shape[0]
    k = vals.size
    n_found = n_found_a[0]
    d = depth[0]
    nodes = 0
    while d >= 0:
        if stage[d] == 0:
            if max_nodes > 0 and nodes >= max_nodes:
                break  # this node is not touched: the next call starts with it
            nodes += 1
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
    n_found_a[0] = n_found
    depth[0] = d
    return nodes, d < 0


@nb.njit(cache=True, nogil=True)
def price_topk(W, pi, lb, k, max_nodes):
    """The ``k`` best sets with ``rc > lb`` (exact unless ``max_nodes`` is hit): one
    uninterrupted :func:`price_resume` from :func:`price_start`.

    Parameters: ``W`` (n, n) float64 symmetric with zero diagonal, ``pi`` (n,) float64,
    ``lb`` float (only sets with ``rc > lb`` are returned), ``k`` >= 1, ``max_nodes``
    (search-tree node limit, <= 0 for none).

    Returns ``(vals (k,), masks (k, n) bool, n_found, nodes, complete)``; ``vals`` sorted
    decreasingly over the first ``n_found`` rows; ``complete`` is False when the node
    limit stopped the search (then the values are not proven to be the best).
    """
    state = price_start(W, pi, k)
    nodes, complete = price_resume(state, lb, max_nodes)
    return state[5], state[6], state[7][0], nodes, complete


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


@nb.njit(cache=True, nogil=True)
def price_tabu(W, pi, start_masks, lb, k, iters, tenure, seed):
    """Tabu search (1-flip, best admissible move, aspiration) for the pricing problem
    from each row of ``start_masks`` (``iters`` moves each; a flipped node stays tabu for
    ``tenure`` to ``2 * tenure`` moves); keeps the ``k`` best *distinct nonempty* sets
    with ``rc > lb`` met on the way (a heuristic: no claim that none is missed).

    Returns ``(vals (k,), masks (k, n), n_found)``, ``vals`` sorted decreasingly.
    """
    n = W.shape[0]
    np.random.seed(seed)
    zob = np.empty(n, np.uint64)
    for j in range(n):
        zob[j] = np.uint64(np.random.randint(1, 2**62)) * np.uint64(3) + np.uint64(np.random.randint(0, 2))
    vals = np.full(k, -np.inf)
    masks = np.zeros((k, n), np.bool_)
    hashes = np.zeros(k, np.uint64)
    n_found = 0
    x = np.zeros(n, np.bool_)
    h = np.empty(n)
    tabu = np.zeros(n, np.int64)
    for s in range(start_masks.shape[0]):
        v = 0.0
        hs = np.uint64(0)
        size = 0
        for j in range(n):
            x[j] = start_masks[s, j]
            h[j] = -pi[j]
            tabu[j] = 0
        for j in range(n):
            if x[j]:
                v -= pi[j]
                hs ^= zob[j]
                size += 1
                for q in range(n):
                    h[q] += W[j, q]
        # v so far counts -pi only: add the pair weights inside the start set
        for a in range(n):
            if x[a]:
                for b in range(a + 1, n):
                    if x[b]:
                        v += W[a, b]
        best_v = v
        for it in range(1, iters + 1):
            bj = -1
            bg = -np.inf
            for j in range(n):
                gain = -h[j] if x[j] else h[j]
                if tabu[j] >= it and not (v + gain > best_v + 1e-9):
                    continue
                if gain > bg:
                    bg = gain
                    bj = j
            if bj < 0:
                break
            if x[bj]:
                x[bj] = False
                size -= 1
                v -= h[bj]
                for q in range(n):
                    h[q] -= W[bj, q]
            else:
                x[bj] = True
                size += 1
                v += h[bj]
                for q in range(n):
                    h[q] += W[bj, q]
            hs ^= zob[bj]
            tabu[bj] = it + tenure + np.random.randint(0, tenure + 1)
            if v > best_v:
                best_v = v
            thr = lb if n_found < k else max(lb, vals[k - 1])
            if size > 0 and v > thr + 1e-9:
                dup = False
                for t in range(n_found):
                    if hashes[t] == hs and abs(vals[t] - v) <= 1e-9 * max(1.0, abs(v)):
                        dup = True
                        break
                if dup:
                    continue
                pos = min(n_found, k - 1)
                while pos > 0 and vals[pos - 1] < v:
                    if pos < k:
                        vals[pos] = vals[pos - 1]
                        masks[pos, :] = masks[pos - 1, :]
                        hashes[pos] = hashes[pos - 1]
                    pos -= 1
                vals[pos] = v
                hashes[pos] = hs
                for q in range(n):
                    masks[pos, q] = x[q]
                if n_found < k:
                    n_found += 1
    return vals, masks, n_found
