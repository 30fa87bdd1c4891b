r"""GPU maximal-clique enumeration with numba.cuda (subtree-per-block, bit-packed).

Design (in the spirit of Almasri, Chang, El Hajj, Nagi, Xiong & Hwu, "Parallelizing
Maximal Clique Enumeration on GPUs", PACT 2023)
-----------------------------------------------------------------------------------
1. **Host: degeneracy ordering.** A bucket-queue k-core peel (Matula & Beck) gives every
   vertex a rank. Eppstein–Löffler–Strash (ELS) split the search into one independent
   sub-problem per vertex ``v``: ``P = N+(v)`` (later neighbours, at most the degeneracy
   many) and ``X = N-(v)`` (earlier neighbours).
2. **Host: local universes.** For each ``v`` the universe ``U(v)`` is ``N+(v)`` plus only
   those earlier neighbours that are adjacent to at least one vertex of ``N+(v)`` (an
   earlier neighbour with no such edge leaves ``X`` at the first step below the root and
   can never block maximality once ``P`` is non-empty). ``U(v)`` is stored sorted, in
   CSR form, so local bit ``j`` is the ``j``-th smallest vertex id of ``U(v)``.
   Vertices with ``N+(v)`` empty need no search: ``{v}`` is maximal iff ``v`` is
   isolated. Sub-problems that cannot reach ``min_size`` (``1 + |N+(v)| < min_size``) are
   dropped. Sub-problems are sorted by decreasing ``|U(v)|`` for load balance.
3. **Device: one sub-problem per thread block** (default 32 threads = one warp). Blocks
   pull sub-problems from a global atomic work counter. The block builds the bit-packed
   adjacency of the induced sub-graph ``G[U(v)]`` (one row of ``ceil(|U|/32)`` uint32 words
   per universe vertex, rows split across threads, each row a sorted-list merge) in a
   per-block slab of global memory, then runs **iterative Bron–Kerbosch with Tomita
   pivoting** on an explicit stack whose levels hold the bitsets ``P``, ``X``, ``R`` and
   the remaining candidates ``P \ N(pivot)``. Word-wise set operations are spread over
   the threads of the block; the pivot (``argmax_u |P ∩ N(u)|`` over ``u ∈ P ∪ X``) is a
   block-wide arg-max reduction in shared memory; control decisions are taken by thread 0
   and broadcast through shared memory. A branch is cut when ``|R| + |P| < min_size``.
4. **Root-branch splitting (load balance).** One huge sub-problem would otherwise keep a
   single block busy long after the others finish (dense graphs: the first vertices of
   the order own most of the search tree). Sub-problems with ``|U(v)| >= split_min``
   (default 64) are split: pass 0 computes the root pivot and the number of root branches
   ``|C0| = |P0 \ N(pivot)|``; the host then makes one work item per branch ``i``. Item
   ``i`` recomputes the same (deterministic) root pivot, moves the root candidates before
   the ``i``-th one from ``P`` to ``X`` exactly as the serial search would, and explores
   only branch ``i``. Small sub-problems stay whole.
5. **Count, then write.** Pass 1 only counts cliques and their total length per work
   item; the host prefix-sums those into offsets; pass 2 re-runs the identical search and
   writes every clique (members sorted by position) straight into the final CSR arrays.
   No dynamic allocation on the device, output is exactly sized.

Limits
------
* Universes larger than ``max_universe`` bits (default 1024) are *not* sent to the
  device: they are solved on the host by a Numba version of the same bitset algorithm
  (:func:`enumerate_maximal_cliques_bitset_host`, run in parallel over sub-problems), and
  counted in the returned ``info["n_host_fallback"]``. The result is always exact.
* Device memory per block is ``4 * W * (|U|max + 4 * (|N+|max + 1))`` bytes with
  ``W = ceil(|U|max / 32)``; the number of resident blocks is reduced to fit
  ``workspace_bytes`` (default 1 GiB).
* Only numba.cuda and NumPy are needed, so the identical kernel runs in CI under the CUDA
  simulator (``NUMBA_ENABLE_CUDASIM=1``), very slowly: keep simulator inputs to a few
  dozen vertices. CuPy is not required.
* Speed on a real GPU has **not been measured** in the session that wrote this module
  (no GPU was available); see ``bench/results/cliques_gpu.md``.

numba.cuda is imported lazily (only when the device path runs), so importing this module
on a CPU-only machine is free.
"""
from __future__ import annotations

import functools
import time
from typing import Any

import numba
import numpy as np
from numba import njit, prange

__all__ = [
    "enumerate_maximal_cliques_cuda",
    "enumerate_maximal_cliques_bitset_host",
    "degeneracy_order",
    "build_subproblems",
]



# --------------------------------------------------------------------------------------
# Host kernels (plain Numba, no validation)
# --------------------------------------------------------------------------------------
def _degeneracy_rank(indptr, indices, n):
    """Matula–Beck bucket peel, shared with the CPU engine
    (:func:`trustlab.kernels.cliques_cpu.degeneracy_order`).
    Returns (rank[n] int64, core[n] int64)."""
    from trustlab.kernels.cliques_cpu import degeneracy_order as _peel

    ip = np.ascontiguousarray(indptr[: n + 1], dtype=np.int64)
    _, rank, core = _peel(ip, np.ascontiguousarray(indices))
    return rank.astype(np.int64), core.astype(np.int64)


def _build_subproblems_py(indptr, indices, rank, n, min_size, nchunks):  # pragma: no cover
    """Local universes U(v) for ELS sub-problems (see module docstring, step 2).

    One pass writes each U(v) (a sorted subset of N(v)) into v's own CSR slot of a
    scratch array; a second, cheap pass compacts the kept ones, heaviest first.
    Returns (sub_v, sub_ptr, sub_idx, p0) with ``p0[v] = |N+(v)|``.
    """
    ksz = np.zeros(n, np.int64)
    p0 = np.zeros(n, np.int64)
    tmp = np.empty(indices.shape[0], np.int32)
    chunk = (n + nchunks - 1) // nchunks if n > 0 else 1
    for c in prange(nchunks):
        stamp = np.full(n, -1, np.int64)
        lo = c * chunk
        hi = min(n, lo + chunk)
        for v in range(lo, hi):
            rv = rank[v]
            cntp = 0
            for a in range(indptr[v], indptr[v + 1]):
                u = indices[a]
                if rank[u] > rv:
                    stamp[u] = v
                    cntp += 1
            p0[v] = cntp
            if cntp == 0 or cntp + 1 < min_size:
                continue
            o = indptr[v]
            for a in range(indptr[v], indptr[v + 1]):
                w = indices[a]
                if rank[w] > rv:
                    tmp[o] = w
                    o += 1
                else:
                    for b in range(indptr[w], indptr[w + 1]):
                        if stamp[indices[b]] == v:
                            tmp[o] = w
                            o += 1
                            break
            ksz[v] = o - indptr[v]
    nsub = 0
    for v in range(n):
        if ksz[v] > 0:
            nsub += 1
    sub_v = np.empty(nsub, np.int64)
    j = 0
    for v in range(n):
        if ksz[v] > 0:
            sub_v[j] = v
            j += 1
    # heaviest first (load balance on the device work queue)
    order = np.argsort(-ksz[sub_v], kind="mergesort")
    sub_v = sub_v[order]
    sub_ptr = np.zeros(nsub + 1, np.int64)
    for s in range(nsub):
        sub_ptr[s + 1] = sub_ptr[s] + ksz[sub_v[s]]
    sub_idx = np.empty(sub_ptr[nsub], np.int32)
    for s in prange(nsub):
        v = sub_v[s]
        o = indptr[v]
        for i in range(sub_ptr[s + 1] - sub_ptr[s]):
            sub_idx[sub_ptr[s] + i] = tmp[o + i]
    return sub_v, sub_ptr, sub_idx, p0


@njit(cache=True, inline="always")
def _popc32(x):  # pragma: no cover
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@njit(cache=True)
def _host_one(indptr, indices, rank, v, U, min_size, mode, br, out_indptr, out_indices,
              cbase, ebase):  # pragma: no cover
    """Bitset BK-Tomita on one ELS sub-problem (or one root branch ``br >= 0`` of it).

    Same algorithm and modes as the device kernel (only pivot ties may break
    differently): mode 0 returns (|C0|, 0), mode 1 returns (n_cliques, n_elements),
    mode 2 also writes the cliques at ``cbase``/``ebase`` into the output CSR arrays.
    """
    write = mode == 2
    k = U.shape[0]
    W = (k + 31) // 32
    adj = np.zeros((k, W), np.int64)
    for i in range(k):
        u = U[i]
        a = indptr[u]
        ae = indptr[u + 1]
        j = 0
        while a < ae and j < k:
            x = indices[a]
            y = U[j]
            if x == y:
                adj[i, j >> 5] |= np.int64(1) << (j & 31)
                a += 1
                j += 1
            elif x < y:
                a += 1
            else:
                j += 1
    maxd = k + 1
    stk = np.zeros((maxd + 1, 4, W), np.int64)  # P, X, R, C
    rv = rank[v]
    for i in range(k):
        if rank[U[i]] > rv:
            stk[0, 0, i >> 5] |= np.int64(1) << (i & 31)
        else:
            stk[0, 1, i >> 5] |= np.int64(1) << (i & 31)
    ncl = 0
    nel = 0
    d = 0
    entering = True
    while True:
        if entering:
            entering = False
            cntp = 0
            anyx = 0
            for w in range(W):
                cntp += _popc32(stk[d, 0, w])
                anyx |= stk[d, 1, w]
            for w in range(W):
                stk[d, 3, w] = 0
            if cntp == 0:
                if anyx == 0 and d + 1 >= min_size:
                    if write:
                        pos = ebase + nel
                        placed = False
                        for w in range(W):
                            word = stk[d, 2, w]
                            while word != 0:
                                low = word & (-word)
                                b = w * 32 + _popc32(low - 1)
                                word ^= low
                                g = U[b]
                                if not placed and g > v:
                                    out_indices[pos] = v
                                    pos += 1
                                    placed = True
                                out_indices[pos] = g
                                pos += 1
                        if not placed:
                            out_indices[pos] = v
                            pos += 1
                        out_indptr[cbase + ncl + 1] = pos
                    ncl += 1
                    nel += d + 1
            elif d + 1 + cntp >= min_size:
                best = -1
                bu = 0
                for u in range(k):
                    if ((stk[d, 0, u >> 5] | stk[d, 1, u >> 5]) >> (u & 31)) & 1:
                        c = 0
                        for w in range(W):
                            c += _popc32(stk[d, 0, w] & adj[u, w])
                        if c > best:
                            best = c
                            bu = u
                for w in range(W):
                    stk[d, 3, w] = stk[d, 0, w] & ~adj[bu, w] & 0xFFFFFFFF
                if d == 0 and mode == 0:
                    nb = 0
                    for w in range(W):
                        nb += _popc32(stk[0, 3, w])
                    return nb, 0
                if d == 0 and br >= 0:
                    seen = 0
                    for w in range(W):
                        word = stk[0, 3, w]
                        keep = np.int64(0)
                        while word != 0:
                            low = word & (-word)
                            word ^= low
                            if seen < br:
                                stk[0, 0, w] &= ~low
                                stk[0, 1, w] |= low
                            elif seen == br:
                                keep = low
                            seen += 1
                        stk[0, 3, w] = keep
        q = -1
        for w in range(W):
            word = stk[d, 3, w]
            if word != 0:
                q = w * 32 + _popc32((word & (-word)) - 1)
                break
        if q < 0:
            d -= 1
            if d < 0:
                break
            continue
        for w in range(W):
            stk[d + 1, 0, w] = stk[d, 0, w] & adj[q, w]
            stk[d + 1, 1, w] = stk[d, 1, w] & adj[q, w]
            stk[d + 1, 2, w] = stk[d, 2, w]
        bit = np.int64(1) << (q & 31)
        qw = q >> 5
        stk[d + 1, 2, qw] |= bit
        stk[d, 0, qw] &= ~bit
        stk[d, 1, qw] |= bit
        stk[d, 3, qw] &= ~bit
        d += 1
        entering = True
    return ncl, nel


def _host_branches_py(indptr, indices, rank, sub_v, sub_ptr, sub_idx, sel, min_size):  # pragma: no cover
    """Pass 0 on the host: number of root branches |C0| of the sub-problems ``sel``."""
    out = np.zeros(sel.shape[0], np.int64)
    dummy_p = np.zeros(1, np.int64)
    dummy_i = np.zeros(1, np.int32)
    for j in prange(sel.shape[0]):
        s = sel[j]
        out[j] = _host_one(indptr, indices, rank, sub_v[s], sub_idx[sub_ptr[s]:sub_ptr[s + 1]],
                           min_size, 0, -1, dummy_p, dummy_i, 0, 0)[0]
    return out


def _host_subproblems_py(indptr, indices, rank, sub_v, sub_ptr, sub_idx, item_s, item_b,
                         min_size):  # pragma: no cover
    """Count, prefix-sum, write: all cliques of the work items (sub-problem, branch)."""
    m = item_s.shape[0]
    cnt = np.zeros(m, np.int64)
    ecnt = np.zeros(m, np.int64)
    dummy_p = np.zeros(1, np.int64)
    dummy_i = np.zeros(1, np.int32)
    for j in prange(m):
        s = item_s[j]
        c, e = _host_one(indptr, indices, rank, sub_v[s], sub_idx[sub_ptr[s]:sub_ptr[s + 1]],
                         min_size, 1, item_b[j], dummy_p, dummy_i, 0, 0)
        cnt[j] = c
        ecnt[j] = e
    cbase = np.zeros(m + 1, np.int64)
    ebase = np.zeros(m + 1, np.int64)
    for j in range(m):
        cbase[j + 1] = cbase[j] + cnt[j]
        ebase[j + 1] = ebase[j] + ecnt[j]
    out_indptr = np.zeros(cbase[m] + 1, np.int64)
    out_indices = np.empty(ebase[m], np.int32)
    for j in prange(m):
        s = item_s[j]
        _host_one(indptr, indices, rank, sub_v[s], sub_idx[sub_ptr[s]:sub_ptr[s + 1]],
                  min_size, 2, item_b[j], out_indptr, out_indices, cbase[j], ebase[j])
    return out_indptr, out_indices


# Each host kernel is compiled twice (umap's pattern): the serial build avoids the
# thread-pool start/barrier cost, which dominates on small inputs (and is large on a
# busy machine); the parallel build is used from _PARALLEL_MIN sub-problems up.
_build_subproblems_ser = njit(cache=True)(_build_subproblems_py)
_build_subproblems_par = njit(cache=True, parallel=True)(_build_subproblems_py)
_host_subproblems_ser = njit(cache=True)(_host_subproblems_py)
_host_subproblems_par = njit(cache=True, parallel=True)(_host_subproblems_py)
_host_branches_ser = njit(cache=True)(_host_branches_py)
_host_branches_par = njit(cache=True, parallel=True)(_host_branches_py)
_PARALLEL_MIN = 2048


def _work_items(nsub, big, nbr):
    """(item_s, item_b): one item per sub-problem, or one per root branch of the big ones."""
    cnt = np.ones(nsub, np.int64)
    cnt[big] = nbr
    item_s = np.repeat(np.arange(nsub, dtype=np.int64), cnt)
    first = np.cumsum(cnt) - cnt
    item_b = np.arange(item_s.size, dtype=np.int64) - np.repeat(first, cnt)
    item_b[~big[item_s]] = -1
    return item_s, item_b


def _host_subproblems(indptr, indices, rank, sub_v, sub_ptr, sub_idx, min_size, split_min=None):
    """Host bitset BK over sub-problems (optionally split into root branches)."""
    nsub = sub_v.shape[0]
    par = nsub >= _PARALLEL_MIN // 8
    big = np.zeros(nsub, np.bool_)
    nbr = np.zeros(0, np.int64)
    if split_min is not None:
        big = np.diff(sub_ptr) >= split_min
        sel = np.flatnonzero(big).astype(np.int64)
        fn0 = _host_branches_par if par else _host_branches_ser
        nbr = fn0(indptr, indices, rank, sub_v, sub_ptr, sub_idx, sel, min_size)
    item_s, item_b = _work_items(nsub, big, nbr)
    fn = _host_subproblems_par if par else _host_subproblems_ser
    return fn(indptr, indices, rank, sub_v, sub_ptr, sub_idx, item_s, item_b, min_size)


# --------------------------------------------------------------------------------------
# Host helpers (Python)
# --------------------------------------------------------------------------------------
def _as_csr(indptr, indices, n):
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int32)
    n = int(n)
    if n < 0 or indptr.shape != (n + 1,) or (n + 1 > 0 and indptr[-1] != indices.shape[0]):
        raise ValueError(
            f"Inconsistent CSR: n={n}, len(indptr)={indptr.shape[0]}, "
            f"len(indices)={indices.shape[0]}. Expected len(indptr) == n + 1 and "
            "indptr[-1] == len(indices)."
        )
    return indptr, indices, n


def degeneracy_order(indptr: np.ndarray, indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Degeneracy (k-core) ordering of a CSR graph.

    Parameters
    ----------
    indptr, indices : ndarray
        Symmetric CSR adjacency (no self-loops).
    n : int
        Number of vertices.

    Returns
    -------
    rank : ndarray of int64
        ``rank[v]`` is the position of ``v`` in a degeneracy order.
    core : ndarray of int64
        Core number of every vertex.

    Examples
    --------
    >>> import numpy as np
    >>> rank, core = degeneracy_order(np.array([0, 1, 2]), np.array([1, 0], np.int32), 2)
    >>> core.tolist()
    [1, 1]
    """
    indptr, indices, n = _as_csr(indptr, indices, n)
    return _degeneracy_rank(indptr, indices, n)


def build_subproblems(indptr, indices, n, min_size=1):
    """ELS sub-problems with pruned local universes (host side of the GPU kernel).

    Returns
    -------
    rank, sub_v, sub_ptr, sub_idx, p0 : ndarray
        ``sub_idx[sub_ptr[s]:sub_ptr[s+1]]`` is the sorted universe ``U(sub_v[s])``;
        ``p0[v] = |N+(v)|``.

    Examples
    --------
    >>> import numpy as np
    >>> # triangle: the first two vertices of the order get a 2-vertex universe each;
    >>> # the last has no later neighbour, so no sub-problem
    >>> ip = np.array([0, 2, 4, 6]); ix = np.array([1, 2, 0, 2, 0, 1], np.int32)
    >>> rank, sv, sp, si, p0 = build_subproblems(ip, ix, 3)
    >>> len(sv), np.diff(sp).tolist()
    (2, [2, 2])
    """
    indptr, indices, n = _as_csr(indptr, indices, n)
    rank, _ = _degeneracy_rank(indptr, indices, n)
    if n >= _PARALLEL_MIN:
        nchunks = max(1, min(n, 4 * numba.get_num_threads()))
        fn = _build_subproblems_par
    else:
        nchunks, fn = 1, _build_subproblems_ser
    sub_v, sub_ptr, sub_idx, p0 = fn(indptr, indices, rank, n, int(min_size), nchunks)
    return rank, sub_v, sub_ptr, sub_idx, p0


def _singletons(indptr, n, min_size):
    if min_size > 1:
        return np.zeros(1, np.int64), np.zeros(0, np.int32)
    iso = np.flatnonzero(np.diff(indptr) == 0).astype(np.int32)
    return np.arange(iso.shape[0] + 1, dtype=np.int64), iso


def _concat_csr(parts):
    ips, ixs = [], []
    off = 0
    for ip, ix in parts:
        if ip.shape[0] <= 1:
            continue
        ips.append(ip[1:] + off)
        ixs.append(ix)
        off += ix.shape[0]
    indptr = np.concatenate([np.zeros(1, np.int64)] + ips) if ips else np.zeros(1, np.int64)
    indices = np.concatenate(ixs).astype(np.int32, copy=False) if ixs else np.zeros(0, np.int32)
    return indptr, indices


def enumerate_maximal_cliques_bitset_host(indptr: np.ndarray, indices: np.ndarray, n: int,
                                          min_size: int = 1, *, split_min: int | None = None
                                          ) -> tuple[np.ndarray, np.ndarray]:
    """All maximal cliques with the GPU kernel's algorithm, run on the host (Numba).

    This is the exact host mirror of :func:`enumerate_maximal_cliques_cuda` (same ELS
    sub-problems, same pruned universes, same bitset Bron–Kerbosch–Tomita). It is the
    device path's fallback for universes above ``max_universe`` and lets tests check the
    algorithm quickly without the CUDA simulator.

    Parameters
    ----------
    indptr : ndarray of int32 or int64, shape (n + 1,)
    indices : ndarray of int32
        Symmetric CSR adjacency with sorted neighbour lists and no self-loops.
    n : int
        Number of vertices.
    min_size : int, default 1
        Only cliques with at least this many vertices are returned.
    split_min : int, optional
        Split sub-problems with universes of at least this size into root branches, as
        the device path does (default: no splitting).

    Returns
    -------
    clique_indptr : ndarray of int64
    clique_indices : ndarray of int32
        Clique ``k`` is ``clique_indices[clique_indptr[k]:clique_indptr[k+1]]`` (sorted).

    Examples
    --------
    >>> import numpy as np
    >>> # path 0-1-2 plus isolated vertex 3
    >>> ip = np.array([0, 1, 3, 4, 4]); ix = np.array([1, 0, 2, 1], np.int32)
    >>> cp, ci = enumerate_maximal_cliques_bitset_host(ip, ix, 4)
    >>> sorted(ci[cp[k]:cp[k + 1]].tolist() for k in range(len(cp) - 1))
    [[0, 1], [1, 2], [3]]
    """
    indptr, indices, n = _as_csr(indptr, indices, n)
    rank, sub_v, sub_ptr, sub_idx, _ = build_subproblems(indptr, indices, n, min_size)
    ip, ix = _host_subproblems(indptr, indices, rank, sub_v, sub_ptr, sub_idx, int(min_size),
                               None if split_min is None else int(split_min))
    return _concat_csr([(ip, ix), _singletons(indptr, n, min_size)])


# --------------------------------------------------------------------------------------
# Device kernel (built lazily: numba.cuda is imported only here)
# --------------------------------------------------------------------------------------
cuda: Any = None  # numba.cuda, bound on first use (the simulator patches this global)


@functools.lru_cache(maxsize=None)
def _get_kernel(tpb: int):
    global cuda
    if cuda is None:
        from numba import cuda as _cuda

        cuda = _cuda
    TPB = tpb

    @cuda.jit
    def _bk_kernel(indptr, indices, rank, sub_v, sub_ptr, sub_idx, item_s, item_b, adj_ws,
                   stk_ws, min_size, mode, cnt, ecnt, cbase, ebase, out_indptr, out_indices,
                   work_ctr):
        # mode 0: count root branches |C0| per item; 1: count cliques; 2: write cliques.
        # item j = (sub-problem item_s[j], root branch item_b[j]; -1 = whole sub-problem)
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        nitems = item_s.shape[0]
        write = mode == 2
        ctrl = cuda.shared.array(8, dtype=numba.int64)
        red_a = cuda.shared.array(TPB, dtype=numba.int64)
        red_b = cuda.shared.array(TPB, dtype=numba.int64)
        red_c = cuda.shared.array(TPB, dtype=numba.int64)
        red_d = cuda.shared.array(TPB, dtype=numba.int64)
        adj = adj_ws[b]
        stk = stk_ws[b]
        while True:
            cuda.syncthreads()
            if t == 0:
                ctrl[0] = cuda.atomic.add(work_ctr, 0, 1)
            cuda.syncthreads()
            it = ctrl[0]
            if it >= nitems:
                break
            s = item_s[it]
            br = item_b[it]
            v = sub_v[s]
            lo = sub_ptr[s]
            k = sub_ptr[s + 1] - lo
            W = (k + 31) // 32
            rv = rank[v]
            # --- bit-packed adjacency of G[U(v)]: one row per thread (strided)
            for i in range(t, k, TPB):
                for w in range(W):
                    adj[i, w] = 0
                u = sub_idx[lo + i]
                a = indptr[u]
                ae = indptr[u + 1]
                j = 0
                while a < ae and j < k:
                    x = indices[a]
                    y = sub_idx[lo + j]
                    if x == y:
                        adj[i, j >> 5] = adj[i, j >> 5] | (1 << (j & 31))
                        a += 1
                        j += 1
                    elif x < y:
                        a += 1
                    else:
                        j += 1
            # --- root level: P = later, X = earlier, R = {}, C = {}
            for w in range(t, W, TPB):
                pw = 0
                xw = 0
                for bb in range(32):
                    i = w * 32 + bb
                    if i < k:
                        if rank[sub_idx[lo + i]] > rv:
                            pw |= 1 << bb
                        else:
                            xw |= 1 << bb
                stk[0, 0, w] = pw
                stk[0, 1, w] = xw
                stk[0, 2, w] = 0
                stk[0, 3, w] = 0
            ncl = 0
            nel = 0
            d = 0
            cuda.syncthreads()
            # Each search step costs three block barriers:
            #   (A) level d is complete -> (B) partial reductions are in shared memory ->
            #   (C) thread 0 has decided (emit / pivot / next candidate / backtrack).
            while True:
                # --- phase 1 (all threads): |P|, any(X) and pivot partials on level d
                pc = 0
                ax = 0
                for w in range(t, W, TPB):
                    pc += cuda.popc(stk[d, 0, w])
                    ax |= stk[d, 1, w]
                best = -1
                bu = 0
                for u in range(t, k, TPB):
                    if ((stk[d, 0, u >> 5] | stk[d, 1, u >> 5]) >> (u & 31)) & 1:
                        c = 0
                        for w in range(W):
                            c += cuda.popc(stk[d, 0, w] & adj[u, w])
                        if c > best:
                            best = c
                            bu = u
                red_a[t] = pc
                red_b[t] = ax
                red_c[t] = best
                red_d[t] = bu
                cuda.syncthreads()  # (B)
                # --- phase 2 (thread 0): decide, then find the next branch (backtracking)
                if t == 0:
                    cntp = 0
                    anyx = 0
                    bb = -1
                    piv = 0
                    for i in range(TPB):
                        cntp += red_a[i]
                        anyx |= red_b[i]
                        if red_c[i] > bb:
                            bb = red_c[i]
                            piv = red_d[i]
                    for w in range(W):
                        stk[d, 3, w] = 0
                    if cntp == 0:
                        if anyx == 0 and d + 1 >= min_size:
                            if write:
                                pos = ebase[it] + nel
                                placed = False
                                for w in range(W):
                                    word = stk[d, 2, w]
                                    while word != 0:
                                        low = word & (-word)
                                        bi = w * 32 + cuda.popc(low - 1)
                                        word ^= low
                                        g = sub_idx[lo + bi]
                                        if not placed and g > v:
                                            out_indices[pos] = v
                                            pos += 1
                                            placed = True
                                        out_indices[pos] = g
                                        pos += 1
                                if not placed:
                                    out_indices[pos] = v
                                    pos += 1
                                out_indptr[cbase[it] + ncl + 1] = pos
                            ncl += 1
                            nel += d + 1
                    elif d + 1 + cntp >= min_size:
                        for w in range(W):
                            stk[d, 3, w] = stk[d, 0, w] & ~adj[piv, w]
                        if d == 0 and mode == 0:
                            nb = 0
                            for w in range(W):
                                nb += cuda.popc(stk[0, 3, w])
                                stk[0, 3, w] = 0
                            ncl = nb
                        elif d == 0 and br >= 0:
                            # root branch split: keep only the br-th candidate; the
                            # candidates before it move from P to X (as the serial
                            # search would have done before reaching it)
                            seen = 0
                            for w in range(W):
                                word = stk[0, 3, w]
                                keep = 0
                                while word != 0:
                                    low = word & (-word)
                                    word ^= low
                                    if seen < br:
                                        stk[0, 0, w] = stk[0, 0, w] & ~low
                                        stk[0, 1, w] = stk[0, 1, w] | low
                                    elif seen == br:
                                        keep = low
                                    seen += 1
                                stk[0, 3, w] = keep
                    q = -1
                    while d >= 0:
                        for w in range(W):
                            word = stk[d, 3, w]
                            if word != 0:
                                q = w * 32 + cuda.popc((word & (-word)) - 1)
                                break
                        if q >= 0:
                            qw = q >> 5
                            bit = 1 << (q & 31)
                            stk[d, 0, qw] = stk[d, 0, qw] & ~bit
                            stk[d, 1, qw] = stk[d, 1, qw] | bit
                            stk[d, 3, qw] = stk[d, 3, qw] & ~bit
                            break
                        d -= 1
                    ctrl[1] = q
                    ctrl[2] = d
                cuda.syncthreads()  # (C)
                q = ctrl[1]
                d = ctrl[2]
                if q < 0:
                    break
                # --- phase 3 (all threads): child level d+1 (q is not in N(q), so the
                # parent's updated P/X words give the same child)
                qw = q >> 5
                for w in range(t, W, TPB):
                    aw = adj[q, w]
                    stk[d + 1, 0, w] = stk[d, 0, w] & aw
                    stk[d + 1, 1, w] = stk[d, 1, w] & aw
                    rw = stk[d, 2, w]
                    if w == qw:
                        rw |= 1 << (q & 31)
                    stk[d + 1, 2, w] = rw
                d += 1
                cuda.syncthreads()  # (A)
            if t == 0 and not write:
                cnt[it] = ncl
                ecnt[it] = nel
    return _bk_kernel


def _device_run(cuda, indptr, indices, rank, sub_v, sub_ptr, sub_idx, p0max, min_size, tpb,
                max_blocks, workspace_bytes, split_min, info):
    nsub = sub_v.shape[0]
    ksz = np.diff(sub_ptr)
    kmax = int(ksz.max())
    W = (kmax + 31) // 32
    depth = int(p0max) + 2  # levels 0..|R|max+1 with |R| <= |N+(v)|
    per_block = 8 * W * (kmax + 4 * depth)  # bytes (int64 words)
    if max_blocks is None:
        try:
            dev = cuda.get_current_device()
            max_blocks = 16 * int(getattr(dev, "MULTIPROCESSOR_COUNT", 8))
        except Exception:
            max_blocks = 64
    kern = _get_kernel(tpb)
    d_indptr = cuda.to_device(indptr)
    d_indices = cuda.to_device(indices)
    d_rank = cuda.to_device(rank)
    d_sv = cuda.to_device(sub_v)
    d_sp = cuda.to_device(sub_ptr)
    d_si = cuda.to_device(sub_idx)
    dummy64 = cuda.to_device(np.zeros(1, np.int64))
    dummy32 = cuda.to_device(np.zeros(1, np.int32))
    cap_blocks = max(1, min(int(max_blocks), workspace_bytes // max(per_block, 1)))
    adj_ws = cuda.device_array((cap_blocks, kmax, W), np.int64)
    stk_ws = cuda.device_array((cap_blocks, depth, 4, W), np.int64)

    def launch(item_s, item_b, mode, cbase=None, ebase=None, oip=None, oix=None):
        m = item_s.shape[0]
        cnt = cuda.to_device(np.zeros(max(m, 1), np.int64))
        ecnt = cuda.to_device(np.zeros(max(m, 1), np.int64))
        if m == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        nb = int(min(m, cap_blocks))
        kern[nb, tpb](d_indptr, d_indices, d_rank, d_sv, d_sp, d_si, cuda.to_device(item_s),
                      cuda.to_device(item_b), adj_ws, stk_ws, min_size, mode, cnt, ecnt,
                      dummy64 if cbase is None else cuda.to_device(cbase),
                      dummy64 if ebase is None else cuda.to_device(ebase),
                      dummy64 if oip is None else oip, dummy32 if oix is None else oix,
                      cuda.to_device(np.zeros(1, np.int64)))
        return cnt.copy_to_host()[:m], ecnt.copy_to_host()[:m]

    # pass 0: split large sub-problems into their root branches (load balance)
    t0 = time.perf_counter()
    big = ksz >= split_min
    nbr = np.ones(nsub, np.int64)
    sel = np.flatnonzero(big)
    if sel.size:
        nbr[sel] = launch(sel.astype(np.int64), np.full(sel.size, -1, np.int64), 0)[0]
    item_s, item_b = _work_items(nsub, big, nbr[big])
    info.update(kmax=kmax, words=W, blocks=int(min(max(item_s.size, 1), cap_blocks)),
                threads_per_block=tpb, workspace_bytes=cap_blocks * per_block,
                n_split=int(sel.size), n_items=int(item_s.size),
                seconds_split_pass=time.perf_counter() - t0)
    # pass 1: count
    t0 = time.perf_counter()
    cnt, ecnt = launch(item_s, item_b, 1)
    info["seconds_count_pass"] = time.perf_counter() - t0
    cbase = np.zeros(item_s.size + 1, np.int64)
    ebase = np.zeros(item_s.size + 1, np.int64)
    np.cumsum(cnt, out=cbase[1:])
    np.cumsum(ecnt, out=ebase[1:])
    ncl = int(cbase[-1])
    nel = int(ebase[-1])
    # pass 2: write at prefix-summed offsets
    t0 = time.perf_counter()
    d_oip = cuda.to_device(np.zeros(ncl + 1, np.int64))
    d_oix = cuda.device_array(max(nel, 1), np.int32)
    if ncl:
        launch(item_s, item_b, 2, cbase, ebase, d_oip, d_oix)
    out_ip = d_oip.copy_to_host()
    out_ix = d_oix.copy_to_host()[:nel]
    info["seconds_write_pass"] = time.perf_counter() - t0
    return out_ip, out_ix


def enumerate_maximal_cliques_cuda(indptr: np.ndarray, indices: np.ndarray, n: int,
                                   min_size: int = 1, *, max_universe: int = 1024,
                                   threads_per_block: int = 32, max_blocks: int | None = None,
                                   workspace_bytes: int = 1 << 30, split_min: int = 64,
                                   return_info: bool = False) -> Any:
    """All maximal cliques of a CSR graph on a CUDA GPU (numba.cuda).

    See the module docstring for the design (ELS sub-problems, one per thread block,
    bit-packed induced neighbourhoods, iterative Bron–Kerbosch–Tomita, count then write).
    The result is exact; sub-problems whose universe exceeds ``max_universe`` bits run
    on the host with the same algorithm.

    Parameters
    ----------
    indptr : ndarray of int32 or int64, shape (n + 1,)
    indices : ndarray of int32
        Symmetric CSR adjacency, sorted neighbour lists, no self-loops (not checked:
        the caller validates).
    n : int
        Number of vertices; vertices are positions ``0..n-1``.
    min_size : int, default 1
        Only maximal cliques with at least this many vertices are returned.
    max_universe : int, default 1024
        Largest local universe ``|U(v)|`` (bits) solved on the device.
    threads_per_block : int, default 32
        Threads cooperating on one sub-problem (a power of two, 32 = one warp).
    max_blocks : int, optional
        Resident blocks (default 16 per multiprocessor).
    workspace_bytes : int, default 1 GiB
        Device memory budget for per-block bitset slabs.
    split_min : int, default 64
        Sub-problems with a universe of at least this many vertices are split into one
        work item per root branch (after the root pivot), for load balance.
    return_info : bool, default False
        Also return a dict of diagnostics (sub-problem counts, fallbacks, timings).

    Returns
    -------
    clique_indptr : ndarray of int64, shape (n_cliques + 1,)
    clique_indices : ndarray of int32
        Host arrays; clique ``k`` is ``clique_indices[clique_indptr[k]:clique_indptr[k+1]]``,
        members sorted ascending.
    info : dict
        Only with ``return_info=True``.

    Raises
    ------
    trustlab._backend.GPUUnavailableError
        No CUDA device and the simulator is off.

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab._backend import gpu_available
    >>> ip = np.array([0, 2, 4, 6]); ix = np.array([1, 2, 0, 2, 0, 1], np.int32)
    >>> if gpu_available("numba-cuda"):
    ...     cp, ci = enumerate_maximal_cliques_cuda(ip, ix, 3)
    ...     assert ci.tolist() == [0, 1, 2]
    """
    from trustlab._backend import GPUUnavailableError, gpu_unavailable_reason

    tpb = int(threads_per_block)
    if tpb < 1 or tpb > 1024 or tpb & (tpb - 1):
        raise ValueError(
            f"threads_per_block must be a power of two in [1, 1024], got {threads_per_block!r}."
        )
    if int(max_universe) < 1:
        raise ValueError(f"max_universe must be >= 1, got {max_universe!r}.")
    if int(split_min) < 1:
        raise ValueError(f"split_min must be >= 1, got {split_min!r}.")
    indptr, indices, n = _as_csr(indptr, indices, n)
    why = gpu_unavailable_reason("numba-cuda")
    if why is not None:
        raise GPUUnavailableError(
            f"The CUDA clique kernel cannot run: {why} Use the CPU kernel "
            "(trustlab.maximal_cliques(..., backend='cpu'))."
        )
    from numba import cuda

    try:
        usable = bool(cuda.is_available())
    except Exception:  # pragma: no cover - broken driver
        usable = False
    if not usable:
        raise GPUUnavailableError(
            "The CUDA clique kernel cannot run: numba.cuda finds no device. (If you meant the "
            "simulator, NUMBA_ENABLE_CUDASIM=1 must be set before numba.cuda is first "
            "imported in the process.) Use backend='cpu'."
        )
    min_size = int(min_size)
    info: dict[str, Any] = {}
    t0 = time.perf_counter()
    rank, sub_v, sub_ptr, sub_idx, p0 = build_subproblems(indptr, indices, n, min_size)
    ksz = np.diff(sub_ptr)
    big = ksz > max_universe
    info["seconds_host_prep"] = time.perf_counter() - t0
    info["n_subproblems"] = int(sub_v.shape[0])
    info["n_host_fallback"] = int(big.sum())
    parts = []
    if (~big).any():
        sel = np.flatnonzero(~big)
        # sub_v is sorted by decreasing size, so the small ones are a suffix
        s0 = int(sel[0])
        dv = sub_v[s0:]
        dp = sub_ptr[s0:] - sub_ptr[s0]
        di = sub_idx[sub_ptr[s0]:]
        parts.append(_device_run(cuda, indptr, indices, rank, dv, dp, di, int(p0[dv].max()), min_size,
                                 tpb, max_blocks, int(workspace_bytes), int(split_min), info))
    if big.any():
        s1 = int(np.flatnonzero(big)[-1]) + 1
        t1 = time.perf_counter()
        parts.append(_host_subproblems(indptr, indices, rank, sub_v[:s1], sub_ptr[:s1 + 1],
                                       sub_idx[:sub_ptr[s1]], min_size, int(split_min)))
        info["seconds_host_fallback"] = time.perf_counter() - t1
    parts.append(_singletons(indptr, n, min_size))
    out = _concat_csr(parts)
    info["seconds_total"] = time.perf_counter() - t0
    return (*out, info) if return_info else out
