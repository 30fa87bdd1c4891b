"""Exact pricing for clique-partitioning column generation (Numba).

The pricing problem of the set-partitioning formulation: given node duals ``pi``, find
node sets ``S`` maximising ``rc(S) = sum_{i<j in S} W_ij - sum_{i in S} pi_i`` (an
unconstrained binary quadratic programme; forbidden pairs carry a large negative
weight). Solved by depth-first branch and bound (:func:`price_start`,
:func:`price_resume`):

* **Bound.** At a search node with chosen set ``C`` (value ``rc(C)``) and undecided
  nodes ``U``, every pair term of a completion is bounded by a linear function of its
  two ends (a positive pair by any convex split of its weight between the ends, a
  negative pair ``W_jq x_j x_q <= c (1 - x_j - x_q)`` for ``0 <= c <= -W_jq``), so
  ``rc <= rc(C) + sum_j max(0, t_j) + (sum of the c)`` where ``t_j`` is ``j``'s
  marginal gain ``g_j`` w.r.t. ``C`` plus its shares minus its ``c``'s. The cheap
  bound splits every positive pair inside ``U`` half-half (``t_j = g_j + R_j / 2``,
  ``R_j`` the sum of ``j``'s positive weights into ``U``; O(|U|), kept incrementally
  per depth). When it does not prune and the gap to the threshold is at most
  ``REFINE_GAP`` times its positive part, the split is improved greedily (O(|U|^2)):
  a node with ``t_j < 0`` takes over, up to its slack ``-t_j``, the half-shares of its
  positive pairs with nodes of positive ``t`` (*absorption*: its own term stays <= 0),
  then negative pairs between two nodes of positive ``t`` get ``c = min(-W, t_j, t_q)``
  (the bound drops by ``c``).
* **Branching.** Dynamic: the undecided node with the largest cheap term ``t_j``
  (the one that carries most of the bound), "in" child first. Sets are recorded when
  a node is included (its completion with all undecided nodes out).

The search state lives in arrays, so a caller can run it in slices
(:func:`price_resume` with a node budget) and look at the clock in between.
"""
from __future__ import annotations

import numba as nb
import numpy as np

REFINE_GAP = 0.7
"""The greedy split refinement runs at a node whose cheap bound exceeds the threshold by
at most this fraction of the bound's positive part (larger gaps are rarely closed by it)."""


@nb.njit(cache=True, nogil=True)
def price_start(W, pi, k):
    """The search state of :func:`price_resume` at its root, for the pricing problem
    ``(W, pi)`` keeping the ``k`` best sets: a tuple of arrays (undecided nodes, the
    weights and their positive parts, per-depth gains ``g`` and positive remainders
    ``R``, the top-k values/masks/count, the chosen flags, per-depth values and stages,
    the current depth, the per-depth branching node, scratch space). ``W`` (n, n)
    float64 symmetric with zero diagonal, ``pi`` (n,) float64."""
    n = W.shape[0]
    Wo = np.empty((n, n))
    Wp = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            v = W[a, b] if a != b else 0.0
            Wo[a, b] = v
            Wp[a, b] = v if v > 0 else 0.0
    g = np.empty((n + 1, n))
    Rd = np.empty((n + 1, n))
    for j in range(n):
        g[0, j] = -pi[j]
        r = 0.0
        for q in range(n):
            r += Wp[j, q]
        Rd[0, j] = r
    und = np.arange(n)
    vals = np.full(k, -np.inf)
    masks = np.zeros((k, n), np.bool_)
    n_found = np.zeros(1, np.int64)
    chosen = np.zeros(n, np.bool_)
    val = np.zeros(n + 1)
    stage = np.zeros(n + 1, np.int64)
    depth = np.zeros(1, np.int64)
    bvar = np.zeros(n + 1, np.int64)
    scratch = np.empty((4, n))
    return und, Wo, Wp, g, Rd, vals, masks, n_found, chosen, val, stage, depth, bvar, scratch


@nb.njit(cache=True, nogil=True)
def price_resume(state, lb, max_nodes):
    """Run the depth-first search of ``state`` (from :func:`price_start`, updated in
    place) for at most ``max_nodes`` search nodes (<= 0: no limit); a later call goes on
    where this one stopped. Only sets with ``rc > lb`` are kept; ``lb`` must be the same
    in every call on one state. Returns ``(nodes, finished)``."""
    und, Wo, Wp, g, Rd, vals, masks, n_found_a, chosen, val, stage, depth, bvar, scratch = state
    n = Wo.shape[0]
    k = vals.size
    n_found = n_found_a[0]
    d = depth[0]
    nodes = 0
    tt = scratch[0]
    tp = scratch[1]
    sq = scratch[2]
    P = np.empty(n, np.int64)
    Q = np.empty(n, np.int64)
    while d >= 0:
        m = n - d  # und[:m] are the undecided nodes at depth d
        if stage[d] == 0:
            if max_nodes > 0 and nodes >= max_nodes:
                break  # this node is not touched: the next call starts with it
            nodes += 1
            thr = lb if n_found < k else max(lb, vals[k - 1])
            # record the chosen set (undecided all out) right after an "include" step;
            # the "exclude" children repeat the same set
            if d > 0 and chosen[bvar[d - 1]] and val[d] > thr + 1e-9:
                # insert into the sorted top-k
                pos = min(n_found, k - 1)
                while pos > 0 and vals[pos - 1] < val[d]:
                    if pos < k:
                        vals[pos] = vals[pos - 1]
                        for j_ in range(masks.shape[1]):  # masks[pos, :] = masks[pos - 1, :], without
                            masks[pos, j_] = masks[pos - 1, j_]  # the slice machinery (compile time)
                    pos -= 1
                vals[pos] = val[d]
                for q in range(n):
                    masks[pos, q] = chosen[q]
                if n_found < k:
                    n_found += 1
                thr = lb if n_found < k else max(lb, vals[k - 1])
            if m == 0:
                d -= 1
                continue
            # cheap bound (half-half split) and the branching node (largest term)
            ub = val[d]
            best = -np.inf
            bp = 0
            for p in range(m):
                j = und[p]
                t = g[d, j] + 0.5 * Rd[d, j]
                tt[p] = t
                if t > 0:
                    ub += t
                if t > best:
                    best = t
                    bp = p
            if ub > thr + 1e-9 and ub - thr <= REFINE_GAP * (ub - val[d]):
                # greedy refinement of the split (see the module docstring)
                npos = 0
                nneg = 0
                for p in range(m):
                    t = tt[p]
                    if t > 0:
                        P[npos] = und[p]
                        tp[npos] = t
                        npos += 1
                    elif t < 0:
                        Q[nneg] = und[p]
                        sq[nneg] = -t
                        nneg += 1
                # absorption: a node with a negative term takes whole positive pairs
                for a in range(nneg):
                    j = Q[a]
                    slack = sq[a]
                    for r in range(npos):
                        mv = min(0.5 * Wp[j, P[r]], slack, tp[r])
                        tp[r] -= mv
                        slack -= mv
                        ub -= mv
                        if slack <= 0:
                            break
                    if ub <= thr + 1e-9:
                        break
                # negative pairs between two positive terms
                if ub > thr + 1e-9:
                    for a in range(npos):
                        if tp[a] > 0:
                            j = P[a]
                            for r in range(a + 1, npos):
                                c = min(-Wo[j, P[r]], tp[a], tp[r])
                                if c > 0:
                                    tp[a] -= c
                                    tp[r] -= c
                                    ub -= c
                                    if tp[a] <= 0:
                                        break
                            if ub <= thr + 1e-9:
                                break
            if ub <= thr + 1e-9:
                d -= 1
                continue
            # branch on und[bp]: move it behind the undecided nodes of the children
            j = und[bp]
            und[bp] = und[m - 1]
            und[m - 1] = j
            bvar[d] = j
            stage[d] = 1
            chosen[j] = True
            val[d + 1] = val[d] + g[d, j]
            for p in range(m - 1):
                q = und[p]
                g[d + 1, q] = g[d, q] + Wo[j, q]
                Rd[d + 1, q] = Rd[d, q] - Wp[q, j]
            stage[d + 1] = 0
            d += 1
        elif stage[d] == 1:
            stage[d] = 2
            j = bvar[d]
            chosen[j] = False
            val[d + 1] = val[d]
            for p in range(m - 1):
                q = und[p]
                g[d + 1, q] = g[d, q]
                Rd[d + 1, q] = Rd[d, q] - Wp[q, j]
            stage[d + 1] = 0
            d += 1
        else:
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
                        for j_ in range(masks.shape[1]):  # masks[pos, :] = masks[pos - 1, :], without
                            masks[pos, j_] = masks[pos - 1, j_]  # the slice machinery (compile time)
                        hashes[pos] = hashes[pos - 1]
                    pos -= 1
                vals[pos] = v
                hashes[pos] = hs
                for q in range(n):
                    masks[pos, q] = x[q]
                if n_found < k:
                    n_found += 1
    return vals, masks, n_found
