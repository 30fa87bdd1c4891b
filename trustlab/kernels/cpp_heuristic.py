"""Numba kernels for the clique partitioning heuristic: iterated tabu search.

Plain kernels on validated, C-contiguous float64 arrays; no validation here (the
orchestration lives in :mod:`trustlab.solvers.heuristic`).

The search is of the class of Palubeckis' iterated tabu search and Zhou, Hao &
Goëffon's three-phase search for the CPP:

* **gain table** ``S[i, c]`` = total weight from node ``i`` to cluster ``c``; moving
  ``i`` from cluster ``a`` to ``b`` gains ``S[i, b] - S[i, a]`` and updates the table
  in O(n) (one column of ``W`` added to column ``b``, subtracted from column ``a``);
* **descent**: best-improvement vertex moves (to another cluster or a new singleton),
  then cluster merges (best positive merge from the cluster-to-cluster weight table),
  until neither improves;
* **tabu walk**: the best non-tabu vertex move, improving or not; a moved vertex
  stays put for a random tenure; aspiration when a move beats the walk's best; the
  walk ends after ``depth`` moves without improving its best;
* **perturbation**: random vertex moves (to random clusters or new singletons) and,
  with some probability, a random split of one cluster, applied to the best or the
  current solution.

Forbidden pairs (a missing edge in graph form) are encoded by the caller as a large
negative weight ``-big`` with ``big > 2 * sum(|w|)``, so any partition that uses a
forbidden pair is worse than the all-singletons partition; a walk may cross such
states but the best partition kept never uses a forbidden pair.

Candidate clusters of a node: either every non-empty cluster (dense instances) or
only the clusters of its positive neighbours (``nbr_ptr``/``nbr_idx``, sparse
instances). The restriction is exact for improving moves: joining a cluster with
``S[i, c] <= 0`` never beats becoming a singleton.
"""
from __future__ import annotations

import numpy as np
from numba import njit

EPS = 1e-9


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
# lab[n]: cluster id in [0, n); S[n, n]: gain table; size[n]; active[K]: the non-empty
# cluster ids, apos[c]: position of c in active (-1 if empty); free ids are the
# empty ones (found through apos).


@njit(cache=True)
def _build(W, lab, S, size, active, apos):
    n = W.shape[0]
    S[:, :] = 0.0
    size[:] = 0
    for i in range(n):
        size[lab[i]] += 1
    for i in range(n):
        for j in range(n):
            if j != i:
                S[i, lab[j]] += W[i, j]
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
        w = W[v, i]
        S[v, a] -= w
        S[v, b] += w
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
def _merge_pass(W, lab, S, size, active, apos, K):
    """Apply the best positive cluster merges until none is positive; returns
    (K, total gain)."""
    n = W.shape[0]
    total = 0.0
    while K > 1:
        G = np.zeros((K, K))
        for i in range(n):
            a = apos[lab[i]]
            for t in range(K):
                G[a, t] += S[i, active[t]]
        bg = EPS
        ba = -1
        bb = -1
        for a in range(K):
            for b in range(a + 1, K):
                if G[a, b] > bg:
                    bg = G[a, b]
                    ba = a
                    bb = b
        if ba < 0:
            break
        ca = active[ba]
        cb = active[bb]
        for i in range(n):
            if lab[i] == cb:
                lab[i] = ca
        for v in range(n):
            S[v, ca] += S[v, cb]
            S[v, cb] = 0.0
        size[ca] += size[cb]
        size[cb] = 0
        p = apos[cb]
        K -= 1
        last = active[K]
        active[p] = last
        apos[last] = p
        apos[cb] = -1
        total += bg
    return K, total


@njit(cache=True)
def _best_move(lab, S, size, active, K, tabu, it, cur, wbest, use_nbrs, nbr_ptr, nbr_idx, mark, improving):
    """Best admissible vertex move (random tie-break). ``improving``: only moves with
    positive gain, tabu ignored. Returns (gain, node, target) with target -1 for a new
    singleton; node -1 if none."""
    n = lab.shape[0]
    bg = -np.inf
    bi = -1
    bc = -1
    ties = 0
    stamp = it * 2 + 1
    for i in range(n):
        own = lab[i]
        so = S[i, own]
        is_tabu = (not improving) and tabu[i] > it
        lim = cur + 0.0
        # singleton move
        if size[own] > 1:
            g = -so
            if (not improving or g > EPS) and (not is_tabu or lim + g > wbest + EPS):
                if g > bg + EPS:
                    bg = g
                    bi = i
                    bc = -1
                    ties = 1
                elif g >= bg - EPS:
                    ties += 1
                    if np.random.randint(ties) == 0:
                        bi = i
                        bc = -1
        if use_nbrs:
            for p in range(nbr_ptr[i], nbr_ptr[i + 1]):
                c = lab[nbr_idx[p]]
                if c == own or mark[c] == stamp:
                    continue
                mark[c] = stamp
                g = S[i, c] - so
                if improving and g <= EPS:
                    continue
                if is_tabu and not (lim + g > wbest + EPS):
                    continue
                if g > bg + EPS:
                    bg = g
                    bi = i
                    bc = c
                    ties = 1
                elif g >= bg - EPS:
                    ties += 1
                    if np.random.randint(ties) == 0:
                        bi = i
                        bc = c
            # reset marks lazily: stamp changes with it; for improving passes (same
            # it) clear explicitly
            for p in range(nbr_ptr[i], nbr_ptr[i + 1]):
                mark[lab[nbr_idx[p]]] = 0
        else:
            for t in range(K):
                c = active[t]
                if c == own:
                    continue
                g = S[i, c] - so
                if improving and g <= EPS:
                    continue
                if is_tabu and not (lim + g > wbest + EPS):
                    continue
                if g > bg + EPS:
                    bg = g
                    bi = i
                    bc = c
                    ties = 1
                elif g >= bg - EPS:
                    ties += 1
                    if np.random.randint(ties) == 0:
                        bi = i
                        bc = c
    return bg, bi, bc


@njit(cache=True)
def _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu):
    """Best-improvement moves and merges to a local optimum; returns (K, gain)."""
    n = W.shape[0]
    total = 0.0
    while True:
        while True:
            g, i, c = _best_move(lab, S, size, active, K, tabu, 0, 0.0, 0.0, use_nbrs, nbr_ptr, nbr_idx,
                                 mark, True)
            if i < 0:
                break
            if c < 0:
                c = _free_id(size, n)
            K = _move(W, lab, S, size, active, apos, K, i, c)
            total += g
        K, gm = _merge_pass(W, lab, S, size, active, apos, K)
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
    _descent(W, lab, S, size, active, apos, K, False, ptr, idx, mark, tabu)
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


@njit(cache=True, nogil=True)
def its(W, nbr_ptr, nbr_idx, use_nbrs, cur_lab, best_lab, best_val, seed, n_rounds, depth,
        tt_lo, tt_hi, str_lo, str_hi, split_prob, restart_prob, restart_after, stale, first):
    """``n_rounds`` rounds of iterated tabu search (perturb, tabu walk, descent).

    ``cur_lab`` (the current solution, in/out) and ``best_lab``/``best_val`` (the best
    so far, in/out through the returned value) carry the state between calls, so the
    caller can check a wall clock between chunks. ``first`` runs the descent on
    ``cur_lab`` before the first round. ``stale`` (in) counts the rounds since the best
    last improved; every ``restart_after`` stale rounds the search restarts from a
    random partition (as many random clusters as the best has) instead of perturbing.
    Returns ``(best_val, stale)``.
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
    K = _build(W, lab, S, size, active, apos)
    cur = objective(W, lab)
    if first:
        K, g = _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu)
        cur += g
        if cur > best_val + EPS:
            cur = objective(W, lab)
            best_val = cur
            best_lab[:] = lab
    wlab = lab.copy()
    it = 1
    for rnd in range(n_rounds):
        if stale > 0 and stale % restart_after == 0:
            # ---- random restart
            kb = 1
            for i in range(n):
                if best_lab[i] + 1 > kb:
                    kb = best_lab[i] + 1
            for i in range(n):
                lab[i] = np.random.randint(kb)
            K = _build(W, lab, S, size, active, apos)
            K, g = _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu)
        else:
            # ---- perturbation (from the best with probability restart_prob)
            if np.random.random() < restart_prob:
                lab[:] = best_lab
                K = _build(W, lab, S, size, active, apos)
            s = str_lo + np.random.randint(str_hi - str_lo + 1)
            K = _perturb(W, lab, S, size, active, apos, K, s, split_prob)
        cur = objective(W, lab)
        # ---- tabu walk
        wbest = cur
        wlab[:] = lab
        stall = 0
        while stall < depth:
            g, i, c = _best_move(lab, S, size, active, K, tabu, it, cur, wbest, use_nbrs, nbr_ptr, nbr_idx,
                                 mark, False)
            if i < 0:
                break
            if c < 0:
                c = _free_id(size, n)
            K = _move(W, lab, S, size, active, apos, K, i, c)
            tabu[i] = it + tt_lo + np.random.randint(tt_hi - tt_lo + 1)
            it += 1
            cur += g
            if cur > wbest + EPS:
                wbest = cur
                wlab[:] = lab
                stall = 0
            else:
                stall += 1
        # ---- descent from the walk's best (adds merges)
        lab[:] = wlab
        K = _build(W, lab, S, size, active, apos)
        K, g = _descent(W, lab, S, size, active, apos, K, use_nbrs, nbr_ptr, nbr_idx, mark, tabu)
        cur = objective(W, lab)
        if cur > best_val + EPS:
            best_val = cur
            best_lab[:] = lab
            stale = 0
        else:
            stale += 1
    cur_lab[:] = lab
    return best_val, stale
