"""Numba kernels for the clique partitioning heuristic: iterated tabu search.

Plain kernels on validated, C-contiguous float64 arrays; no validation here (the
orchestration lives in :mod:`trustlab.solvers.heuristic`).

The search is of the class of Palubeckis' iterated tabu search and Zhou, Hao &
Goëffon's three-phase search for the CPP:

* **gain table** ``S[c, i]`` = total weight from node ``i`` to cluster ``c``; moving
  ``i`` from cluster ``a`` to ``b`` gains ``S[b, i] - S[a, i]`` and updates the table
  in O(n) (row ``i`` of ``W`` added to row ``b``, subtracted from row ``a``);
* **descent**: best-improvement vertex moves (to another cluster or a new singleton),
  then cluster merges (best positive merge from the cluster-to-cluster weight table),
  until neither improves;
* **tabu walk**: the best non-tabu vertex move, improving or not; a moved vertex
  stays put for a random tenure; aspiration when a move beats the walk's best; the
  walk ends after ``depth`` moves without improving its best;
* **perturbation**: descent-based (``directed``, the default): a number of vertex moves,
  each drawn at random among the ``q`` best moves of the vertices not moved yet (improving
  or not), as in Zhou, Hao & Goëffon's CPP-P3, which leaves the solution near a local
  optimum of another basin; or random vertex moves (to random clusters or new singletons)
  and, with some probability, a random split of one cluster. Applied to the current
  solution, or to the best with probability ``restart_prob``;
* **restarts**: every ``restart_after`` rounds without improvement of the best, a random
  partition (followed by a descent) instead of a perturbation.

Forbidden pairs (a missing edge in graph form) are encoded by the caller as a large
negative weight ``-big`` with ``big > 2 * sum(|w|)``, so any partition that uses a
forbidden pair is worse than the all-singletons partition; a walk may cross such
states but the best partition kept never uses a forbidden pair.

Candidate clusters of a node: either every non-empty cluster (dense instances) or
only the clusters of its positive neighbours (``nbr_ptr``/``nbr_idx``, sparse
instances). The restriction is exact for improving moves: joining a cluster with
``S[c, i] <= 0`` never beats becoming a singleton.
"""
from __future__ import annotations

import numpy as np
from numba import njit

EPS = 1e-9

# _no_slice_copy: array-to-array copies in these kernels are explicit loops, not
# ``dst[:] = src``. Numba's slice assignment compiles its broadcasting checks and their
# error messages (string formatting) the first time a process uses it: about 2.7 s of
# CPU added to a cold compile of the search, which is what the first call after an
# install pays. The loops run the same.


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
def relabel(labels):
    """Compact labels 0..k-1 in order of first appearance; returns (labels, k)."""
    n = labels.shape[0]
    m = 0
    for i in range(n):
        if labels[i] > m:
            m = labels[i]
    mp = np.full(m + 1, -1, np.int64)
    out = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        lab = labels[i]
        if mp[lab] < 0:
            mp[lab] = k
            k += 1
        out[i] = mp[lab]
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


# --------------------------------------------------------------------- state
# lab[n]: cluster id in [0, n); S[n, n]: gain table, cluster-major (S[c, i] is the
# weight from node i to cluster c, so a move updates two contiguous rows); size[n]; active[K]: the non-empty
# cluster ids, apos[c]: position of c in active (-1 if empty); free ids are the
# empty ones (found through apos).


@njit(cache=True)
def _build(W, lab, S, size, active, apos):
    n = W.shape[0]
    S[:, :] = 0.0
    size[:] = 0
    for i in range(n):
        size[lab[i]] += 1
    for j in range(n):
        c = lab[j]
        for i in range(n):
            if i != j:
                S[c, i] += W[j, i]
    K = 0
    apos[:] = -1
    for c in range(n):
        if size[c] > 0:
            active[K] = c
            apos[c] = K
            K += 1
    return K


@njit(cache=True)
def _free_id(size, n):
    for c in range(n):
        if size[c] == 0:
            return c
    return -1


@njit(cache=True)
def _move(W, lab, S, size, active, apos, K, i, b):
    """Move node ``i`` to cluster ``b`` (an empty id opens a cluster); returns new K."""
    n = W.shape[0]
    a = lab[i]
    for v in range(n):
        w = W[i, v]
        S[a, v] -= w
        S[b, v] += w
    size[a] -= 1
    if size[b] == 0:
        active[K] = b
        apos[b] = K
        K += 1
    size[b] += 1
    lab[i] = b
    if size[a] == 0:
        p = apos[a]
        K -= 1
        last = active[K]
        active[p] = last
        apos[last] = p
        apos[a] = -1
    return K


@njit(cache=True)
def _merge_pass(W, lab, S, size, active, apos, K, stop):
    """Apply the best positive cluster merges until none is positive (or ``stop[0]``
    is set); returns (K, total gain). The cluster-to-cluster weight table is built once
    (O(n K)) and updated in O(K) per merge."""
    n = W.shape[0]
    total = 0.0
    if K < 2:
        return K, total
    ids = active[:K].copy()
    G = np.zeros((K, K))
    for t in range(K):  # G[t, a] = weight between clusters ids[t] and ids[a] (symmetric)
        c = ids[t]
        for i in range(n):
            G[t, apos[lab[i]]] += S[c, i]
    alive = np.ones(K, np.bool_)
    while stop[0] == 0:
        bg = EPS
        ba = -1
        bb = -1
        for x in range(K):
            if not alive[x]:
                continue
            for y in range(x + 1, K):
                if alive[y] and G[x, y] > bg:
                    bg = G[x, y]
                    ba = x
                    bb = y
        if ba < 0:
            break
        ca = ids[ba]
        cb = ids[bb]
        for i in range(n):
            if lab[i] == cb:
                lab[i] = ca
        for v in range(n):
            S[ca, v] += S[cb, v]
            S[cb, v] = 0.0
        size[ca] += size[cb]
        size[cb] = 0
        for t in range(K):
            G[ba, t] += G[bb, t]
        for t in range(K):
            G[t, ba] += G[t, bb]
        alive[bb] = False
        total += bg
    # rebuild the active list
    Kn = 0
    for t in range(K):
        apos[ids[t]] = -1
    for t in range(K):
        if alive[t]:
            active[Kn] = ids[t]
            apos[ids[t]] = Kn
            Kn += 1
    return Kn, total


@njit(cache=True)
def _consider(g, c, bg, bc, ties):
    """Keep the better of the best move so far ``(bg, bc)`` and gain ``g`` to cluster
    ``c``; ties within EPS are broken uniformly at random (reservoir sampling).
    Returns ``(bg, bc, ties)``."""
    if g > bg + EPS:
        return g, c, 1
    if g >= bg - EPS:
        ties += 1
        if np.random.randint(ties) == 0:
            return bg, c, ties
    return bg, bc, ties


@njit(cache=True)
def _vertex_best(i, lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark):
    """Best move of node ``i`` (random tie-break): (gain, target); target -1 is a new
    singleton, -2 means no move exists."""
    own = lab[i]
    so = S[own, i]
    bg = -np.inf
    bc = -2
    ties = 0
    if size[own] > 1:
        bg = -so
        bc = -1
        ties = 1
    if use_nbrs:
        mark[own] = 1
        for p in range(nbr_ptr[i], nbr_ptr[i + 1]):
            c = lab[nbr_idx[p]]
            if mark[c] == 1:
                continue
            mark[c] = 1
            bg, bc, ties = _consider(S[c, i] - so, c, bg, bc, ties)
        mark[own] = 0
        for p in range(nbr_ptr[i], nbr_ptr[i + 1]):
            mark[lab[nbr_idx[p]]] = 0
    else:
        for t in range(K):
            c = active[t]
            if c == own:
                continue
            bg, bc, ties = _consider(S[c, i] - so, c, bg, bc, ties)
    return bg, bc


@njit(cache=True)
def _refresh(lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt):
    for i in range(lab.shape[0]):
        bgain[i], btgt[i] = _vertex_best(i, lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark)


@njit(cache=True)
def _apply(W, lab, S, size, active, apos, K, i, b, use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt):
    """Move ``i`` to ``b`` (-1: a new singleton) and update the cached best moves
    exactly (the best gain of every node; ties may keep the cached target): only the
    gains towards the two clusters touched change, so a node outside them is rescanned
    only when its cached target is one of them and got worse, or one of them now beats
    it. Returns K."""
    n = W.shape[0]
    if b < 0:
        b = _free_id(size, n)
    a = lab[i]
    K = _move(W, lab, S, size, active, apos, K, i, b)
    for v in range(n):
        lv = lab[v]
        if v == i or lv == a or lv == b:
            bgain[v], btgt[v] = _vertex_best(v, lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark)
            continue
        w = W[i, v]
        t = btgt[v]
        if t == a or (t == b and w < 0.0):
            # the cached target lost i (or emptied) or got worse: rescan
            bgain[v], btgt[v] = _vertex_best(v, lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark)
        elif w > 0.0:
            # b gained a positive neighbour of v (so it is a candidate in either mode)
            g = S[b, v] - S[lv, v]
            if t == b or g > bgain[v] + EPS:
                bgain[v] = g
                btgt[v] = b
        elif (size[a] > 0 and S[a, v] - S[lv, v] > bgain[v] + EPS) or S[b, v] - S[lv, v] > bgain[v] + EPS:
            # w <= 0: every target but a and b keeps its gain, so the cached best stands
            # unless a (more attractive when w < 0) or b (new when i left a singleton)
            # now beats it; then rescan (which also knows whether it is a candidate)
            bgain[v], btgt[v] = _vertex_best(v, lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark)
    return K


@njit(cache=True)
def _pick(bgain, btgt, tabu, it, cur, wbest, improving):
    """Best admissible cached move over all nodes (random tie-break): (gain, node,
    target); node -1 if none. ``improving``: positive gains only, tabu ignored."""
    n = bgain.shape[0]
    bg = -np.inf
    bi = -1
    ties = 0
    for i in range(n):
        if btgt[i] == -2:
            continue
        g = bgain[i]
        if improving:
            if g <= EPS:
                continue
        elif tabu[i] > it and not (cur + g > wbest + EPS):
            continue
        if g > bg + EPS:
            bg = g
            bi = i
            ties = 1
        elif g >= bg - EPS:
            ties += 1
            if np.random.randint(ties) == 0:
                bi = i
    if bi < 0:
        return bg, -1, -2
    return bg, bi, btgt[bi]


@njit(cache=True)
def _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu, bgain, btgt, stop):
    """Best-improvement moves and merges to a local optimum, or until ``stop[0]`` is
    set (checked between moves: the partition is always whole); returns (K, gain).
    The cached best moves are valid on return."""
    total = 0.0
    while stop[0] == 0:
        _refresh(lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt)
        while stop[0] == 0:
            g, i, c = _pick(bgain, btgt, tabu, 0, 0.0, 0.0, True)
            if i < 0:
                break
            K = _apply(W, lab, S, size, active, apos, K, i, c, use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt)
            total += g
        K, gm = _merge_pass(W, lab, S, size, active, apos, K, stop)
        total += gm
        if gm <= EPS:
            break
    return K, total


@njit(cache=True, nogil=True)
def local_search(W, labels_in, order, max_rounds):
    """Descent (best-improvement vertex moves and cluster merges) from ``labels_in``
    to a local optimum; returns compact labels. ``order`` and ``max_rounds`` are kept
    for compatibility (ties are broken at random; the descent always terminates)."""
    n = W.shape[0]
    lab, _ = relabel(labels_in.copy())
    S = np.zeros((n, n))
    size = np.zeros(n, np.int64)
    active = np.zeros(n, np.int64)
    apos = np.zeros(n, np.int64)
    K = _build(W, lab, S, size, active, apos)
    mark = np.zeros(n, np.int64)
    tabu = np.zeros(n, np.int64)
    ptr = np.zeros(n + 1, np.int64)
    idx = np.zeros(0, np.int64)
    bgain = np.zeros(n)
    btgt = np.zeros(n, np.int64)
    _descent(W, lab, S, size, active, apos, K, False, ptr, idx, mark, tabu, bgain, btgt, np.zeros(1, np.int64))
    out, _ = relabel(lab)
    return out


@njit(cache=True)
def _perturb(W, lab, S, size, active, apos, K, strength, split_prob):
    """Random moves of ``strength`` nodes (each to a random non-empty cluster or a
    new singleton) and, with probability ``split_prob``, a random split of a random
    cluster of >= 2 nodes. Returns K."""
    n = W.shape[0]
    if np.random.random() < split_prob:
        # split: pick a random node's cluster of size >= 2, send a random half away
        for _ in range(10):
            c = lab[np.random.randint(n)]
            if size[c] >= 2:
                nc = _free_id(size, n)
                for i in range(n):
                    if lab[i] == c and size[c] > 1 and np.random.random() < 0.5:
                        K = _move(W, lab, S, size, active, apos, K, i, nc)
                break
    for _ in range(strength):
        i = np.random.randint(n)
        r = np.random.randint(K + 1)
        if r == K:
            if size[lab[i]] == 1:
                continue
            c = _free_id(size, n)
        else:
            c = active[r]
            if c == lab[i]:
                continue
        K = _move(W, lab, S, size, active, apos, K, i, c)
    return K


@njit(cache=True)
def _perturb_directed(W, lab, S, size, active, apos, K, strength, q, use_nbrs, nbr_ptr, nbr_idx, mark, bgain,
                      btgt, moved, stop):
    """``strength`` moves, each drawn uniformly from the ``q`` best cached vertex
    moves (improving or not) of the nodes not moved yet in this perturbation: a
    descent-based perturbation that leaves the solution near a local optimum but in
    another basin. Returns K."""
    n = W.shape[0]
    moved[:] = 0
    _refresh(lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt)
    topg = np.empty(q)
    topi = np.empty(q, np.int64)
    for _ in range(strength):
        if stop[0] != 0:
            break
        m = 0
        for i in range(n):
            if moved[i] or btgt[i] == -2:
                continue
            g = bgain[i]
            if m < q:
                t = m
                m += 1
            elif g > topg[m - 1]:
                t = m - 1
            else:
                continue
            while t > 0 and topg[t - 1] < g:  # insertion into the descending top list
                topg[t] = topg[t - 1]
                topi[t] = topi[t - 1]
                t -= 1
            topg[t] = g
            topi[t] = i
        if m == 0:
            break
        i = topi[np.random.randint(m)]
        K = _apply(W, lab, S, size, active, apos, K, i, btgt[i], use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt)
        moved[i] = 1
    return K


@njit(cache=True, nogil=True)
def its(W, nbr_ptr, nbr_idx, use_nbrs, cur_lab, best_lab, best_val, seed, n_rounds, depth,
        tt_lo, tt_hi, str_lo, str_hi, split_prob, restart_prob, restart_after, stale, first, directed, q, stop):
    """``n_rounds`` rounds of iterated tabu search (perturb, tabu walk, descent).

    ``cur_lab`` (the current solution, in/out) and ``best_lab``/``best_val`` (the best
    so far, in/out through the returned value) carry the state between calls, so the
    caller can check a wall clock between chunks. ``first`` runs the descent on
    ``cur_lab`` before the first round. ``stale`` (in) counts the rounds since the best
    last improved; every ``restart_after`` stale rounds the search restarts from a
    random partition (as many random clusters as the best has) instead of perturbing.
    A perturbation makes ``str_lo``-``str_hi`` moves, descent-based if ``directed``
    (each drawn among the ``q`` best vertex moves), else random (then with probability
    ``split_prob`` also a random cluster split), from the current solution or, with
    probability ``restart_prob``, from the best. ``stop`` (an int64 array of one
    element) ends the call early once another thread sets ``stop[0]`` (the call
    releases the GIL): it is read between moves, the partition is whole at every check,
    and the best met so far is kept. Returns ``(best_val, stale)``.
    """
    np.random.seed(seed)
    n = W.shape[0]
    lab, _ = relabel(cur_lab.copy())
    S = np.zeros((n, n))
    size = np.zeros(n, np.int64)
    active = np.zeros(n, np.int64)
    apos = np.zeros(n, np.int64)
    mark = np.zeros(n, np.int64)
    tabu = np.zeros(n, np.int64)
    bgain = np.zeros(n)
    btgt = np.zeros(n, np.int64)
    K = _build(W, lab, S, size, active, apos)
    cur = objective(W, lab)
    if first:
        K, g = _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu, bgain, btgt, stop)
        cur += g
        if cur > best_val + EPS:
            cur = objective(W, lab)
            best_val = cur
            for j_ in range(n):  # best_lab[:] = lab (see _no_slice_copy)
                best_lab[j_] = lab[j_]
    wlab = lab.copy()
    moved = np.zeros(n, np.int64)
    it = 1
    for rnd in range(n_rounds):
        if stop[0] != 0:
            break
        if stale > 0 and stale % restart_after == 0:
            # ---- random restart
            kb = 1
            for i in range(n):
                if best_lab[i] + 1 > kb:
                    kb = best_lab[i] + 1
            for i in range(n):
                lab[i] = np.random.randint(kb)
            K = _build(W, lab, S, size, active, apos)
            K, g = _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu, bgain, btgt,
                            stop)
        else:
            # ---- perturbation (from the best with probability restart_prob)
            if np.random.random() < restart_prob:
                for j_ in range(n):  # lab[:] = best_lab (see _no_slice_copy)
                    lab[j_] = best_lab[j_]
                K = _build(W, lab, S, size, active, apos)
            s = str_lo + np.random.randint(str_hi - str_lo + 1)
            if directed:
                K = _perturb_directed(W, lab, S, size, active, apos, K, s, q, use_nbrs, nbr_ptr, nbr_idx, mark,
                                      bgain, btgt, moved, stop)
            else:
                K = _perturb(W, lab, S, size, active, apos, K, s, split_prob)
        cur = objective(W, lab)
        # ---- tabu walk
        wbest = cur
        for j_ in range(n):  # wlab[:] = lab (see _no_slice_copy)
            wlab[j_] = lab[j_]
        stall = 0
        _refresh(lab, S, size, active, K, use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt)
        while stall < depth and stop[0] == 0:
            g, i, c = _pick(bgain, btgt, tabu, it, cur, wbest, False)
            if i < 0:
                break
            K = _apply(W, lab, S, size, active, apos, K, i, c, use_nbrs, nbr_ptr, nbr_idx, mark, bgain, btgt)
            tabu[i] = it + tt_lo + np.random.randint(tt_hi - tt_lo + 1)
            it += 1
            cur += g
            if cur > wbest + EPS:
                wbest = cur
                for j_ in range(n):  # wlab[:] = lab (see _no_slice_copy)
                    wlab[j_] = lab[j_]
                stall = 0
            else:
                stall += 1
        # ---- descent from the walk's best (adds merges)
        for j_ in range(n):  # lab[:] = wlab (see _no_slice_copy)
            lab[j_] = wlab[j_]
        K = _build(W, lab, S, size, active, apos)
        K, g = _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu, bgain, btgt, stop)
        cur = objective(W, lab)
        if cur > best_val + EPS:
            # a round counts as progress (resets ``stale``) only if it gains more
            # than a relative 1e-7: float weights allow endless tiny improvements
            if cur > best_val + 1e-7 * max(1.0, abs(best_val)):
                stale = 0
            else:
                stale += 1
            best_val = cur
            for j_ in range(n):  # best_lab[:] = lab (see _no_slice_copy)
                best_lab[j_] = lab[j_]
        else:
            stale += 1
    for j_ in range(n):  # cur_lab[:] = lab (see _no_slice_copy)
        cur_lab[j_] = lab[j_]
    return best_val, stale
