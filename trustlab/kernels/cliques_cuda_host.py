r"""Host side of the GPU maximal-clique engine: sub-problems and the bitset mirror.

:mod:`trustlab.kernels.cliques_cuda` runs one Eppstein–Löffler–Strash (ELS) sub-problem
per CUDA thread block; this module prepares those sub-problems and solves, on the CPU,
the ones the device does not take. Plain Numba on validated CSR arrays (``indptr``,
``indices``: symmetric, sorted neighbour lists, no self-loops).

* **Degeneracy ordering**: the CPU engine's bucket peel
  (:func:`trustlab.kernels.cliques_cpu.degeneracy_order`) gives every vertex a rank.
  Sub-problem ``v`` has ``P = N+(v)`` (later neighbours, at most the degeneracy many)
  and ``X = N-(v)`` (earlier neighbours).
* **Local universes** (:func:`build_subproblems`): ``U(v)`` is ``N+(v)`` plus only
  those earlier neighbours that are adjacent to at least one vertex of ``N+(v)`` (an
  earlier neighbour with no such edge leaves ``X`` at the first step below the root and
  can never block maximality once ``P`` is non-empty). ``U(v)`` is stored sorted, in
  CSR form, so local bit ``j`` is the ``j``-th smallest vertex id of ``U(v)``.
  Vertices with ``N+(v)`` empty need no search: ``{v}`` is maximal iff ``v`` is
  isolated. Sub-problems that cannot reach ``min_size`` (``1 + |N+(v)| < min_size``)
  are dropped. Sub-problems are sorted by decreasing ``|U(v)|`` for load balance.
* **Bitset mirror** (:func:`enumerate_maximal_cliques_bitset_host`): the device
  kernel's algorithm on the host (same universes, same 32-bit bitset rows held in
  int64 words, same iterative Bron–Kerbosch–Tomita, same root-branch split), run in
  parallel over sub-problems. It solves the universes too large for the device and
  lets tests check the algorithm without the CUDA simulator. Bit counts use the CPU
  engine's ``ctpop`` intrinsic. The adjacency-row merge, the clique write and the
  root-branch split are one source (:func:`make_bitset_steps`), compiled for the host
  here and for the device by the kernel module.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from trustlab.kernels.cliques_cpu import _popcount
from trustlab.kernels.cliques_cpu import degeneracy_order as _peel

__all__ = [
    "enumerate_maximal_cliques_bitset_host",
    "degeneracy_order",
    "build_subproblems",
]


def _degeneracy_rank(indptr, indices, n):
    """The CPU engine's bucket peel; returns (rank[n] int64, core[n] int64)."""
    ip = np.ascontiguousarray(indptr[: n + 1], dtype=np.int64)
    _, rank, core = _peel(ip, np.ascontiguousarray(indices))
    return rank.astype(np.int64), core.astype(np.int64)


def _build_subproblems_py(indptr, indices, rank, n, min_size, nchunks):  # pragma: no cover
    """Local universes U(v) for ELS sub-problems (see the module docstring).

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
def _popc(x):  # pragma: no cover
    """Set bits of a non-negative int64 word, as int64 (the CPU engine's ``ctpop``)."""
    return np.int64(_popcount(np.uint64(x)))


def make_bitset_steps(popc):
    """The steps the host mirror and the device kernel share, built for a bit count
    ``popc`` (the CPU engine's ``ctpop`` here, ``cuda.popc`` on the device).

    ``fill_row(row, indices, a, ae, U, lo, k)`` sets bit ``j`` of the adjacency row
    ``row`` for every universe vertex ``U[lo + j]`` (``j < k``) in the sorted neighbour
    list ``indices[a:ae]`` (a sorted-list merge; ``row`` starts zeroed).
    ``write_clique(R, W, U, lo, v, out, pos)`` writes the clique ``{v} ∪ R`` in ascending
    order at ``out[pos:]`` and returns the end position (``R``: ``W`` bitset words over
    the sorted universe ``U[lo:]``). ``split_root(lvl, W, br)`` keeps only the ``br``-th
    root candidate of level ``lvl`` (rows ``P``, ``X``, ``R``, candidates) and moves the
    candidates before it from ``P`` to ``X``, as the serial search does before it
    reaches that branch.
    """

    def fill_row(row, indices, a, ae, U, lo, k):  # pragma: no cover - compiled
        j = 0
        while a < ae and j < k:
            x = indices[a]
            y = U[lo + j]
            if x == y:
                row[j >> 5] = row[j >> 5] | (1 << (j & 31))
                a += 1
                j += 1
            elif x < y:
                a += 1
            else:
                j += 1

    def write_clique(R, W, U, lo, v, out, pos):  # pragma: no cover - compiled
        placed = False
        for w in range(W):
            word = R[w]
            while word != 0:
                low = word & (-word)
                g = U[lo + w * 32 + popc(low - 1)]
                word ^= low
                if not placed and g > v:
                    out[pos] = v
                    pos += 1
                    placed = True
                out[pos] = g
                pos += 1
        if not placed:
            out[pos] = v
            pos += 1
        return pos

    def split_root(lvl, W, br):  # pragma: no cover - compiled
        seen = 0
        for w in range(W):
            word = lvl[3, w]
            keep = 0
            while word != 0:
                low = word & (-word)
                word ^= low
                if seen < br:
                    lvl[0, w] = lvl[0, w] & ~low
                    lvl[1, w] = lvl[1, w] | low
                elif seen == br:
                    keep = low
                seen += 1
            lvl[3, w] = keep

    return fill_row, write_clique, split_root


_fill_row, _write_clique, _split_root = (njit(cache=True)(f) for f in make_bitset_steps(_popc))


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
        _fill_row(adj[i], indices, indptr[U[i]], indptr[U[i] + 1], U, 0, k)
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
                cntp += _popc(stk[d, 0, w])
                anyx |= stk[d, 1, w]
            for w in range(W):
                stk[d, 3, w] = 0
            if cntp == 0:
                if anyx == 0 and d + 1 >= min_size:
                    if write:
                        pos = _write_clique(stk[d, 2], W, U, 0, v, out_indices, ebase + nel)
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
                            c += _popc(stk[d, 0, w] & adj[u, w])
                        if c > best:
                            best = c
                            bu = u
                for w in range(W):
                    stk[d, 3, w] = stk[d, 0, w] & ~adj[bu, w] & 0xFFFFFFFF
                if d == 0 and mode == 0:
                    nb = 0
                    for w in range(W):
                        nb += _popc(stk[0, 3, w])
                    return nb, 0
                if d == 0 and br >= 0:
                    _split_root(stk[0], W, br)
        q = -1
        for w in range(W):
            word = stk[d, 3, w]
            if word != 0:
                q = w * 32 + _popc((word & (-word)) - 1)
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
# Python entry points
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
