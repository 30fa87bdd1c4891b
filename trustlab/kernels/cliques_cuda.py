r"""GPU maximal-clique enumeration with numba.cuda (bit-packed Bron–Kerbosch–Tomita).

Published GPU MCE designs (Almasri, Chang, El Hajj, Nagi, Xiong & Hwu, "Parallelizing
Maximal Clique Enumeration on GPUs", PACT 2023; Wei, Chen & Tsai, "Accelerating the
Bron–Kerbosch algorithm for maximal clique enumeration using GPUs", TPDS 2021) build the
sub-problems on the device and give many small ones to one warp. Here:

1. **Sub-problems on the device, in the degree order.** Eppstein–Löffler–Strash split the
   search into one independent sub-problem per vertex ``v``: ``P = N+(v)`` (neighbours
   later in a vertex order), ``X = N-(v)``. Any order is correct; the degeneracy order
   bounds ``|P|`` but is sequential to compute, so v2 uses the degree order (degree, then
   id), which needs no host work: one thread per vertex compares degrees, counts ``P``
   and writes the pruned universe ``U(v)`` (``P`` plus the earlier neighbours that have a
   neighbour in ``P``; the others can never join a clique of this sub-problem) into
   ``v``'s own slot of a copy of the CSR index array (``U(v) ⊆ N(v)``). The host only
   reads back ``|U(v)|`` and sorts the sub-problems by size.
2. **Small universes, one per thread.** Universes of at most 32 (or 64) vertices — all but
   a few hundred on the sparse families — are solved by one thread each: the host mirror's
   iterative search (:func:`~trustlab.kernels.cliques_cuda_host._host_one`) on bitsets
   in the thread's local memory, no barriers; a warp runs 32 sub-problems of similar size
   side by side.
3. **Large universes, one per warp** (up to ``max_universe`` = 1,024 vertices, 32 words):
   thread ``t`` owns bitset word ``t`` of ``P``, ``X``, ``R`` and the candidates in
   registers; the pivot (``argmax_u |P ∩ N(u)|`` over ``P ∪ X``) is computed with the
   candidates spread over the threads, and every thread reduces the 32 partials itself,
   so no thread waits on a serial step. Sub-problems of at least ``split_min`` vertices are
   split into one work item per root branch (after the root pivot) for load balance,
   and root branches whose level-1 candidate set holds at least ``split2_min`` vertices
   once more, into one item per level-1 branch, when the root split leaves fewer than 4
   items per resident warp (on G(300, 0.5) the largest root branch is ~10x the mean
   warp's share of the search; one level more brings it to ~2x).
   Larger universes run on the host with the same algorithm (``info["n_host_fallback"]``).
4. **Count, then write.** A count pass, one prefix sum over all work items, a write pass
   straight into one exactly sized CSR output.

The first design (host-side degeneracy order and universes, one sub-problem per block with
a serial decision step on thread 0) was 1.0-2.4x slower than 16 CPU threads on an H100 and
is gone after the H200 comparison of 2026-11-27 (``bench/results/gpu.md``; git history).

Notes
-----
* Only numba.cuda and NumPy are needed, so the identical kernels run in CI under the CUDA
  simulator (``NUMBA_ENABLE_CUDASIM=1``), very slowly: keep simulator inputs to a few
  dozen vertices. CuPy is not required.
* Device memory: the CSR arrays twice, two int64 per vertex, the warp kernel's per-block
  slabs (adjacency ``|U|max x W`` 32-bit words and a stack of ``|P|max + 2`` levels of four
  ``W``-word bitsets; blocks are reduced to fit ``workspace_bytes``), and the output.

numba.cuda is imported lazily (only when the device path runs), so importing this module
on a CPU-only machine is free.
"""
from __future__ import annotations

import functools
import time
from typing import Any

import numba
import numpy as np

from trustlab.kernels.cliques_cuda_host import (
    _as_csr,
    _host_subproblems,
    _singletons,
    _work_items,
    build_subproblems,
    degeneracy_order,
    enumerate_maximal_cliques_bitset_host,
    make_bitset_steps,
)

__all__ = [
    "enumerate_maximal_cliques_cuda",
    "enumerate_maximal_cliques_bitset_host",
    "degeneracy_order",
    "build_subproblems",
]


# --------------------------------------------------------------------------------------
# Device kernel (built lazily: numba.cuda is imported only here)
# --------------------------------------------------------------------------------------
cuda: Any = None  # numba.cuda, bound on first use (the simulator patches this global)


def _bind_cuda():
    global cuda
    if cuda is None:
        from trustlab._backend import numba_cuda_numpy_compat

        numba_cuda_numpy_compat()  # before numba.cuda's first compile (NumPy >= 2.5)
        from numba import cuda as _cuda

        cuda = _cuda
    return cuda


def _later(u, v, dv, indptr):  # pragma: no cover - compiled
    """``u`` after ``v`` in the degree order (degree, then id); ``dv`` = deg(v)."""
    du = indptr[u + 1] - indptr[u]
    return du > dv or (du == dv and u > v)


def _has_later_common(indices, a, ae, b, be, v, dv, indptr):  # pragma: no cover - compiled
    """Whether the sorted lists ``indices[a:ae]`` and ``indices[b:be]`` share a vertex
    after ``v``: each entry of the shorter list is binary-searched in the longer one."""
    if ae - a > be - b:
        a, ae, b, be = b, be, a, ae
    for i in range(a, ae):
        x = indices[i]
        lo = b
        hi = be
        while lo < hi:
            mid = (lo + hi) >> 1
            if indices[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        if lo < be and indices[lo] == x:
            dx = indptr[x + 1] - indptr[x]
            if dx > dv or (dx == dv and x > v):
                return True
    return False


_BIG_DEGREE = 64  # vertices of higher degree get their universe built by a block, not a thread


def degree_rank(indptr: np.ndarray, n: int) -> np.ndarray:
    """``rank[v]``: position of ``v`` in the degree order (degree, then id) the device
    kernels use (the host fallback needs it as an array)."""
    deg = np.diff(np.asarray(indptr[: n + 1], dtype=np.int64))
    order = np.lexsort((np.arange(n), deg))
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    return rank


@functools.lru_cache(maxsize=None)
def _get_universe_kernel():
    """One thread per vertex: the ELS sub-problem of ``v`` in the degree order, its
    pruned universe written into ``v``'s own CSR slot of ``sub_idx`` (``U(v)`` is a
    sorted subset of ``N(v)``): the later neighbours ``P`` and the earlier ones that
    have a neighbour in ``P`` (the others can never enter a clique of this sub-problem).
    ``ksz[v] = |U(v)|`` (0: no sub-problem), ``p0[v] = |P|``."""
    _bind_cuda()
    later = cuda.jit(device=True)(_later)
    common = cuda.jit(device=True)(_has_later_common)

    @cuda.jit
    def _universes(indptr, indices, n, min_size, big_degree, sub_idx, ksz, p0):
        v = cuda.grid(1)
        if v >= n:
            return
        a = indptr[v]
        b = indptr[v + 1]
        dv = b - a
        if dv > big_degree:  # one block each: _universes_big
            return
        cntp = 0
        for e in range(a, b):
            if later(indices[e], v, dv, indptr):
                cntp += 1
        p0[v] = cntp
        if cntp == 0 or cntp + 1 < min_size:
            ksz[v] = 0
            return
        o = a
        for e in range(a, b):
            w = indices[e]
            if later(w, v, dv, indptr) or common(indices, indptr[w], indptr[w + 1], a, b, v, dv, indptr):
                sub_idx[o] = w
                o += 1
        ksz[v] = o - a

    @cuda.jit
    def _universes_big(indptr, indices, verts, min_size, keep, sub_idx, ksz, p0):
        # the same for one high-degree vertex per 32-thread block: the neighbours' tests
        # are spread over the threads, thread 0 compacts
        t = cuda.threadIdx.x
        v = verts[cuda.blockIdx.x]
        cnt = cuda.shared.array(32, dtype=numba.int64)
        a = indptr[v]
        b = indptr[v + 1]
        dv = b - a
        c = 0
        for e in range(a + t, b, 32):
            if later(indices[e], v, dv, indptr):
                c += 1
        cnt[t] = c
        cuda.syncthreads()
        cntp = 0
        for j in range(32):
            cntp += cnt[j]
        if cntp == 0 or cntp + 1 < min_size:
            if t == 0:
                p0[v] = cntp
                ksz[v] = 0
            return
        for e in range(a + t, b, 32):
            w = indices[e]
            if later(w, v, dv, indptr) or common(indices, indptr[w], indptr[w + 1], a, b, v, dv, indptr):
                keep[e] = 1
            else:
                keep[e] = 0
        cuda.syncthreads()
        if t == 0:
            o = a
            for e in range(a, b):
                if keep[e]:
                    sub_idx[o] = indices[e]
                    o += 1
            p0[v] = cntp
            ksz[v] = o - a

    return _universes, _universes_big


@functools.lru_cache(maxsize=None)
def _get_thread_kernel(tw: int):
    """One thread per small sub-problem (``|U| <= 32 * tw``): the host mirror's search
    (:func:`~trustlab.kernels.cliques_cuda_host._host_one`) on bitsets in the thread's
    local memory. No barriers, no shared memory: a warp runs 32 sub-problems of similar
    size side by side (sub-problems come sorted by size)."""
    _bind_cuda()
    TW = tw
    KMAX = 32 * tw
    DEPTH = KMAX + 2

    @cuda.jit(device=True)
    def popc(x):  # pragma: no cover - compiled
        return cuda.popc(x)

    fill_row, write_clique, _ = (cuda.jit(device=True)(f) for f in make_bitset_steps(popc))
    later = cuda.jit(device=True)(_later)

    @cuda.jit
    def _bk_thread(indptr, indices, sub_v, ksz, sub_idx, s0, nsub, obase, min_size, mode,
                   cnt, ecnt, cbase, ebase, out_indptr, out_indices):
        # item i = sub-problem s0 + i (whole, never split), output slot obase + i;
        # mode 1: count; 2: write
        i = cuda.grid(1)
        if i >= nsub:
            return
        s = s0 + i
        o = obase + i
        write = mode == 2
        v = sub_v[s]
        lo = indptr[v]  # U(v) sits in v's own CSR slot of sub_idx
        k = ksz[v]
        W = (k + 31) // 32
        adj = cuda.local.array((KMAX, TW), numba.int64)
        stk = cuda.local.array((DEPTH, 4, TW), numba.int64)  # P, X, R, C per level
        for r in range(k):
            for w in range(W):
                adj[r, w] = 0
            u = sub_idx[lo + r]
            fill_row(adj[r], indices, indptr[u], indptr[u + 1], sub_idx, lo, k)
        for w in range(W):
            stk[0, 0, w] = 0
            stk[0, 1, w] = 0
            stk[0, 2, w] = 0
            stk[0, 3, w] = 0
        dv = indptr[v + 1] - indptr[v]
        for r in range(k):
            if later(sub_idx[lo + r], v, dv, indptr):
                stk[0, 0, r >> 5] = stk[0, 0, r >> 5] | (1 << (r & 31))
            else:
                stk[0, 1, r >> 5] = stk[0, 1, r >> 5] | (1 << (r & 31))
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
                    cntp += cuda.popc(stk[d, 0, w])
                    anyx |= stk[d, 1, w]
                    stk[d, 3, w] = 0
                if cntp == 0:
                    if anyx == 0 and d + 1 >= min_size:
                        if write:
                            pos = write_clique(stk[d, 2], W, sub_idx, lo, v, out_indices, ebase[o] + nel)
                            out_indptr[cbase[o] + ncl + 1] = pos
                        ncl += 1
                        nel += d + 1
                elif d + 1 + cntp >= min_size:
                    best = -1
                    bu = 0
                    for u in range(k):
                        if ((stk[d, 0, u >> 5] | stk[d, 1, u >> 5]) >> (u & 31)) & 1:
                            c = 0
                            for w in range(W):
                                c += cuda.popc(stk[d, 0, w] & adj[u, w])
                            if c > best:
                                best = c
                                bu = u
                    for w in range(W):
                        stk[d, 3, w] = stk[d, 0, w] & ~adj[bu, w] & 0xFFFFFFFF
            q = -1
            for w in range(W):
                word = stk[d, 3, w]
                if word != 0:
                    q = w * 32 + cuda.popc((word & (-word)) - 1)
                    break
            if q < 0:
                d -= 1
                if d < 0:
                    break
                continue
            qw = q >> 5
            bit = 1 << (q & 31)
            for w in range(W):
                aw = adj[q, w]
                stk[d + 1, 0, w] = stk[d, 0, w] & aw
                stk[d + 1, 1, w] = stk[d, 1, w] & aw
                stk[d + 1, 2, w] = stk[d, 2, w]
            stk[d + 1, 2, qw] = stk[d + 1, 2, qw] | bit
            stk[d, 0, qw] = stk[d, 0, qw] & ~bit
            stk[d, 1, qw] = stk[d, 1, qw] | bit
            stk[d, 3, qw] = stk[d, 3, qw] & ~bit
            d += 1
            entering = True
        if not write:
            cnt[o] = ncl
            ecnt[o] = nel

    return _bk_thread


_FULL = 0xFFFFFFFF
# The second level of splitting runs only while the first leaves fewer work items than this
# per resident warp: then a few large root branches decide the kernel's time. Measured on
# the H200 (bench/results/gpu.md, stop 37): G(300, 0.5) has 1.8 items per warp and the
# second level takes it from 149.7 to 105.5 ms; G(500, 0.3) has 4.9 and the extra pass
# and items took it from 20.3 to 26.9 ms.
_SPLIT2_ITEMS_PER_WARP = 4


def _warp_ops(shfl: bool):
    """The warp kernel's cross-thread steps, as device functions of the same signature.

    ``shfl=True`` (a real device): warp shuffles and a ballot, no shared memory and no
    barrier. ``shfl=False`` (the CUDA simulator, which has no warp intrinsics): the same
    results through a ping-pong shared buffer ``buf[ph]`` and one barrier each; the
    caller flips ``ph`` after every call, so a buffer is rewritten only after a barrier
    that every reader of its previous use has passed.
    """
    jit = cuda.jit(device=True)
    if shfl:
        def wsum(v, buf, ph, t):  # pragma: no cover - compiled
            for off in (16, 8, 4, 2, 1):
                v += cuda.shfl_xor_sync(_FULL, v, off)
            return v

        def wor(v, buf, ph, t):  # pragma: no cover - compiled
            for off in (16, 8, 4, 2, 1):
                v |= cuda.shfl_xor_sync(_FULL, v, off)
            return v

        def wmax(v, buf, ph, t):  # pragma: no cover - compiled
            for off in (16, 8, 4, 2, 1):
                y = cuda.shfl_xor_sync(_FULL, v, off)
                if y > v:  # not max(): numba 0.68's own CUDA target cannot compile max(int, int)
                    v = y
            return v

        def wprefix(v, buf, ph, t):  # pragma: no cover - compiled
            s = v  # inclusive scan, then exclusive
            for off in (1, 2, 4, 8, 16):
                y = cuda.shfl_up_sync(_FULL, s, off)
                if t >= off:
                    s += y
            return s - v

        def first_set(c, W, buf, ph, t):  # pragma: no cover - compiled
            nz = numba.int64(cuda.ballot_sync(_FULL, c != 0)) & 0xFFFFFFFF
            if nz == 0:
                return -1
            lane = numba.int32(cuda.popc((nz & (-nz)) - 1))
            word = cuda.shfl_sync(_FULL, c, lane)
            return lane * 32 + cuda.popc((word & (-word)) - 1)
    else:
        def wsum(v, buf, ph, t):  # pragma: no cover - compiled
            buf[ph, t] = v
            cuda.syncthreads()
            s = 0
            for j in range(32):
                s += buf[ph, j]
            return s

        def wor(v, buf, ph, t):  # pragma: no cover - compiled
            buf[ph, t] = v
            cuda.syncthreads()
            s = 0
            for j in range(32):
                s |= buf[ph, j]
            return s

        def wmax(v, buf, ph, t):  # pragma: no cover - compiled
            buf[ph, t] = v
            cuda.syncthreads()
            s = buf[ph, 0]
            for j in range(1, 32):
                y = buf[ph, j]
                if y > s:
                    s = y
            return s

        def wprefix(v, buf, ph, t):  # pragma: no cover - compiled
            buf[ph, t] = v
            cuda.syncthreads()
            s = 0
            for j in range(t):
                s += buf[ph, j]
            return s

        def first_set(c, W, buf, ph, t):  # pragma: no cover - compiled
            buf[ph, t] = c
            cuda.syncthreads()
            for w in range(W):
                word = buf[ph, w]
                if word != 0:
                    return w * 32 + cuda.popc((word & (-word)) - 1)
            return -1
    return tuple(jit(f) for f in (wsum, wor, wmax, wprefix, first_set))


def use_shuffles(warp_ops: str) -> bool:
    """Whether the warp kernel uses warp shuffles: ``"auto"`` does on a real device, not
    in the simulator (which has no warp intrinsics)."""
    if warp_ops == "auto":
        from trustlab._backend import cuda_simulator_enabled

        return not cuda_simulator_enabled()
    return warp_ops == "shfl"


@functools.lru_cache(maxsize=None)
def _get_warp_kernel(shfl: bool, lean: bool = False):
    """One warp (a 32-thread block) per work item, thread ``t`` owning bitset word ``t``
    (universes of up to 1,024 vertices). The current level's ``P``, ``X``, ``R`` and
    candidate words live in registers; every thread takes every control decision
    itself from the same warp-wide reductions (:func:`_warp_ops`: shuffles on a device),
    and a level is written to the per-block global stack only when the search
    descends from it (one coalesced store per word). The pivot is the candidate of
    ``P ∪ X`` with most neighbours in ``P`` (ties: the lowest position).

    ``lean`` builds a variant that computes the pivot only at nodes that branch (``P``
    non-empty and the size bound met; the default build scans ``P ∪ X`` at every node,
    leaves included) and counts a clique's members below ``v`` (where ``v`` goes among
    them) from one split point per item (how many universe vertices precede ``v``)
    instead of a loop that reads every member's id once more. Both builds give the same
    output (tested in the simulator, both warp-op builds). The lean build was slower or
    equal on three of four dense families on the H200 (stop 42, ``bench/results/gpu.md``),
    so it stays opt-in."""
    _bind_cuda()

    @cuda.jit(device=True)
    def popc(x):  # pragma: no cover - compiled
        return cuda.popc(x)

    fill_row = cuda.jit(device=True)(make_bitset_steps(popc)[0])
    later = cuda.jit(device=True)(_later)
    wsum, wor, wmax, wprefix, first_set = _warp_ops(shfl)

    @cuda.jit(device=True)
    def pivot_scan(sP, sX, adj, ws, W, k, t):  # pragma: no cover - compiled
        """Thread ``t``'s share of the pivot search: its candidate of ``P ∪ X`` with most
        neighbours in ``P`` (``(-1, 0)`` when it has none)."""
        best = -1
        bu = 0
        for u in range(t, k, 32):
            if ((sP[u >> 5] | sX[u >> 5]) >> (u & 31)) & 1:
                cc = 0
                for w in range(W):
                    cc += cuda.popc(sP[w] & adj[u * ws + w])
                if cc > best:
                    best = cc
                    bu = u
        return best, bu

    @cuda.jit
    def _bk_warp(indptr, indices, sub_v, ksz, sub_idx, item_s, item_b, item_b2, adj_ws, ws, stk_ws,
                 min_size, mode, cnt, ecnt, cbase, ebase, out_indptr, out_indices, work_ctr):
        # mode 0: count root branches |C0| per item; 1: count cliques; 2: write cliques;
        # 3: for a root-branch item, its level-1 branches |C1| (cnt) and |P1| (ecnt).
        # item_b[it] >= 0: keep only that root branch; item_b2[it] >= 0: and only that
        # branch of level 1. The adjacency rows sit in the block's slab of adj_ws, row r
        # at word r * ws (global memory: a copy in shared memory measured slower on the
        # H200, 105.5 vs 98.1 ms on G(300, 0.5), 26.9 vs 23.3 ms on G(500, 0.3)).
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        nitems = item_s.shape[0]
        write = mode == 2
        sP = cuda.shared.array(32, dtype=numba.int64)
        sX = cuda.shared.array(32, dtype=numba.int64)
        buf = cuda.shared.array((2, 32), dtype=numba.int64)  # the simulator's reductions
        ctrl = cuda.shared.array(2, dtype=numba.int64)
        adj = adj_ws[b]
        stk = stk_ws[b]
        ph = 0
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
            br2 = item_b2[it]
            v = sub_v[s]
            lo = indptr[v]
            k = ksz[v]
            W = (k + 31) // 32
            dv = indptr[v + 1] - indptr[v]
            for r in range(t, k, 32):
                for w in range(W):
                    adj[r * ws + w] = 0
                u = sub_idx[lo + r]
                fill_row(adj[r * ws:r * ws + W], indices, indptr[u], indptr[u + 1], sub_idx, lo, k)
            p = 0
            x = 0
            if t < W:
                for bb in range(32):
                    r = t * 32 + bb
                    if r < k:
                        if later(sub_idx[lo + r], v, dv, indptr):
                            p |= 1 << bb
                        else:
                            x |= 1 << bb
            rr = 0
            c = 0
            ncl = 0
            nel = 0
            d = 0
            done = False
            rv = 0
            if lean and write:  # universe positions below rv hold vertices < v (lists ascend)
                rvc = 0
                for r in range(t, k, 32):
                    if sub_idx[lo + r] < v:
                        rvc += 1
                rv = wsum(rvc, buf, ph, t)
                ph ^= 1
            cuda.syncthreads()  # adjacency complete
            entering = True
            while True:
                if entering:
                    entering = False
                    if lean:
                        cntp = wsum(cuda.popc(p), buf, ph, t)
                        ph ^= 1
                        anyx = wor(x, buf, ph, t)
                        ph ^= 1
                        piv = 0
                        if cntp != 0 and d + 1 + cntp >= min_size:  # warp-uniform: the node branches
                            sP[t] = p
                            sX[t] = x
                            cuda.syncthreads()
                            best, bu = pivot_scan(sP, sX, adj, ws, W, k, t)
                            key = wmax(best * 2048 + (2047 - bu), buf, ph, t)  # most neighbours, then lowest u
                            ph ^= 1
                            piv = 2047 - (key & 2047)
                            cuda.syncthreads()  # sP / sX are rewritten by the next node
                    else:
                        sP[t] = p
                        sX[t] = x
                        cuda.syncthreads()
                        best, bu = pivot_scan(sP, sX, adj, ws, W, k, t)
                        cntp = wsum(cuda.popc(p), buf, ph, t)
                        ph ^= 1
                        anyx = wor(x, buf, ph, t)
                        ph ^= 1
                        key = wmax(best * 2048 + (2047 - bu), buf, ph, t)  # most neighbours, then lowest u
                        ph ^= 1
                        piv = 2047 - (key & 2047)
                    c = 0
                    if mode == 3 and d == 1:
                        done = True  # the level-1 node is all pass 3 looks at
                    if cntp == 0:
                        if anyx == 0 and d + 1 >= min_size and mode != 3:
                            if write:  # every thread writes the members of its own word
                                if lean:  # members below v: positions under the item's split point rv
                                    r0 = t * 32
                                    if rv >= r0 + 32:
                                        below = cuda.popc(rr)
                                    elif rv <= r0:
                                        below = 0
                                    else:
                                        below = cuda.popc(rr & ((numba.int64(1) << (rv - r0)) - 1))
                                else:
                                    below = 0
                                    word = rr
                                    while word != 0:
                                        low = word & (-word)
                                        word ^= low
                                        if sub_idx[lo + t * 32 + cuda.popc(low - 1)] < v:
                                            below += 1
                                pos = ebase[it] + nel + wprefix(cuda.popc(rr), buf, ph, t)
                                ph ^= 1
                                pv = wsum(below, buf, ph, t)
                                ph ^= 1
                                word = rr
                                while word != 0:
                                    low = word & (-word)
                                    word ^= low
                                    g = sub_idx[lo + t * 32 + cuda.popc(low - 1)]
                                    out_indices[pos + 1 if g > v else pos] = g
                                    pos += 1
                                if t == 0:
                                    out_indices[ebase[it] + nel + pv] = v
                                    out_indptr[cbase[it] + ncl + 1] = ebase[it] + nel + d + 1
                            ncl += 1
                            nel += d + 1
                    elif d + 1 + cntp >= min_size:
                        if t < W:
                            c = p & ~numba.int64(adj[piv * ws + t]) & 0xFFFFFFFF
                        if (d == 0 and mode == 0) or (d == 1 and mode == 3):
                            ncl = wsum(cuda.popc(c), buf, ph, t)
                            ph ^= 1
                            nel = cntp
                            done = True
                        elif (d == 0 and br >= 0) or (d == 1 and br2 >= 0):
                            # branch split: keep candidate `sel` of this level only (the
                            # earlier ones move to X, as the serial search leaves them)
                            sel = br if d == 0 else br2
                            seen = wprefix(cuda.popc(c), buf, ph, t)
                            ph ^= 1
                            word = c
                            keep = 0
                            while word != 0:
                                low = word & (-word)
                                word ^= low
                                if seen < sel:
                                    p &= ~low
                                    x |= low
                                elif seen == sel:
                                    keep = low
                                seen += 1
                            c = keep
                if done:
                    break
                # next branch: the lowest candidate of level d, backtracking while none
                q = -1
                while True:
                    q = first_set(c, W, buf, ph, t)
                    ph ^= 1
                    if q >= 0:
                        break
                    d -= 1
                    if d < 0:
                        break
                    if t < W:
                        p = stk[d, 0, t]
                        x = stk[d, 1, t]
                        rr = stk[d, 2, t]
                        c = stk[d, 3, t]
                if q < 0:
                    break
                qw = q >> 5
                bit = 1 << (q & 31)
                if t == qw:
                    p &= ~bit
                    x |= bit
                    c &= ~bit
                a = 0
                if t < W:
                    stk[d, 0, t] = p
                    stk[d, 1, t] = x
                    stk[d, 2, t] = rr
                    stk[d, 3, t] = c
                    a = numba.int64(adj[q * ws + t])
                p &= a
                x &= a
                if t == qw:
                    rr |= bit
                d += 1
                entering = True
            if t == 0 and not write:
                cnt[it] = ncl
                ecnt[it] = nel

    return _bk_warp


def _split_items(item_s, item_b, sel, nb):
    """Items ``sel`` (root-branch items, ``nb[j] > 1`` level-1 branches each) replaced in
    place by one item per level-1 branch, as :func:`_work_items` splits sub-problems into
    root branches; returns ``(item_s, item_b, item_b2)``."""
    split = np.zeros(item_s.size, np.bool_)
    split[sel] = True
    src, b2 = _work_items(item_s.size, split, nb)
    return item_s[src], item_b[src], b2


class OutputTooLarge(Exception):
    """The count pass found more output than the caller allows (nothing was written)."""

    def __init__(self, n_cliques: int, n_members: int):
        super().__init__(n_cliques, n_members)
        self.n_cliques = n_cliques
        self.n_members = n_members


def _enumerate_v2(cuda, indptr, indices, n, min_size, max_universe, max_blocks, workspace_bytes, split_min,
                  info, thread_max=64, thread_block=128, output_ok=None, split2_min=None, warp_ops="auto",
                  lean=True, host_output="touch"):
    """The ``v2`` pipeline, CSR in, CSR out (see :func:`enumerate_maximal_cliques_cuda`).

    Sub-problems in the degree order, their universes built on the device; universes of
    at most 32 / 64 bits one per thread (two builds), the rest up to ``max_universe`` one
    per warp with root-branch splitting, larger ones on the host; one count pass, one
    prefix sum over all work items, one write pass into a single output.
    """
    t0 = time.perf_counter()
    d_indptr = cuda.to_device(indptr)
    d_indices = cuda.to_device(indices)
    d_sub = cuda.device_array(max(indices.shape[0], 1), np.int32)
    d_ksz = cuda.device_array(max(n, 1), np.int64)
    d_p0 = cuda.device_array(max(n, 1), np.int64)
    tb = int(thread_block)
    if n:
        k_small, k_big = _get_universe_kernel()
        k_small[(n + tb - 1) // tb, tb](d_indptr, d_indices, n, min_size, _BIG_DEGREE, d_sub, d_ksz, d_p0)
        hubs = np.flatnonzero(np.diff(indptr) > _BIG_DEGREE).astype(np.int64)
        if hubs.size:
            d_keep = cuda.device_array(indices.shape[0], np.int8)
            k_big[hubs.size, 32](d_indptr, d_indices, cuda.to_device(hubs), min_size, d_keep, d_sub, d_ksz, d_p0)
    ksz = d_ksz.copy_to_host()[:n]
    info["seconds_universes"] = time.perf_counter() - t0
    sel = np.flatnonzero(ksz)
    sub_v = sel[np.argsort(-ksz[sel], kind="stable")].astype(np.int64)  # decreasing size
    ks = ksz[sub_v]
    nsub = sub_v.shape[0]
    nh = int(np.count_nonzero(ks > max_universe))  # host fallback: a prefix
    nw = max(0, int(np.count_nonzero(ks > thread_max)) - nh)  # warp kernel: next
    n2 = max(0, int(np.count_nonzero(ks > 32)) - nh - nw) if thread_max == 64 else 0
    info.update(n_subproblems=nsub, n_host_fallback=nh, n_warp_subproblems=nw, n_thread_subproblems=nsub - nh - nw,
                kmax=int(ks[0]) if nsub else 0, words=int((ks[0] + 31) // 32) if nsub else 0,
                threads_per_block=32, n_split=0, n_split2=0, n_items=0, blocks=0)
    parts = []
    if nh:  # the host mirror, on the same (degree-order) sub-problems
        t1 = time.perf_counter()
        hv = sub_v[:nh]
        sub_all = d_sub.copy_to_host()
        hptr = np.zeros(nh + 1, np.int64)
        np.cumsum(ks[:nh], out=hptr[1:])
        hidx = np.concatenate([sub_all[indptr[v]:indptr[v] + ksz[v]] for v in hv]).astype(np.int32)
        parts.append(_host_subproblems(indptr, indices, degree_rank(indptr, n), hv, hptr, hidx, min_size,
                                       int(split_min)))
        info["seconds_host_fallback"] = time.perf_counter() - t1
    d_sv = cuda.to_device(sub_v)
    dummy64 = cuda.to_device(np.zeros(1, np.int64))
    dummy32 = cuda.to_device(np.zeros(1, np.int32))
    w0, w1 = nh, nh + nw  # warp sub-problems: sub_v[w0:w1]
    if nw:
        kmax = int(ks[w0])
        W = (kmax + 31) // 32
        depth = int(d_p0.copy_to_host()[sub_v[w0:w1]].max()) + 2
        per_block = 4 * kmax * W + 8 * depth * 4 * W
        if max_blocks is None:
            try:
                max_blocks = 32 * int(getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 8))
            except Exception:
                max_blocks = 64
        cap_blocks = max(1, min(int(max_blocks), workspace_bytes // max(per_block, 1)))
        adj_ws = cuda.device_array((cap_blocks, kmax * W), np.uint32)
        stk_ws = cuda.device_array((cap_blocks, depth, 4, W), np.int64)
        kern_w = _get_warp_kernel(use_shuffles(warp_ops), bool(lean))

        def launch_w(items, mode, cnt, ecnt, cbase=dummy64, ebase=dummy64, oip=dummy64, oix=dummy32):
            d_items = [cuda.to_device(np.ascontiguousarray(a)) for a in items]  # (item_s, item_b, item_b2)
            kern_w[int(min(items[0].shape[0], cap_blocks)), 32](
                d_indptr, d_indices, d_sv, d_ksz, d_sub, *d_items,
                adj_ws, W, stk_ws, min_size, mode, cnt, ecnt, cbase, ebase, oip, oix,
                cuda.to_device(np.zeros(1, np.int64)))

        def counts(items, mode):
            c0 = cuda.to_device(np.zeros(items[0].size, np.int64))
            c1 = cuda.to_device(np.zeros(items[0].size, np.int64))
            launch_w(items, mode, c0, c1)
            return c0.copy_to_host(), c1.copy_to_host()

        t1 = time.perf_counter()
        big = ks[w0:w1] >= split_min
        nbr = np.ones(nw, np.int64)
        selb = np.flatnonzero(big).astype(np.int64)
        if selb.size:
            none = np.full(selb.size, -1, np.int64)
            nbr[selb] = counts((selb + w0, none, none), 0)[0]
        item_s, item_b = _work_items(nw, big, nbr[big])
        item_s += w0
        item_b2 = np.full(item_s.size, -1, np.int64)
        n_split2 = 0
        sel1 = np.flatnonzero(item_b >= 0)
        few = item_s.size < _SPLIT2_ITEMS_PER_WARP * cap_blocks
        if split2_min is not None and sel1.size and few:  # the second level: root branches with |P1| >= split2_min
            nb1, p1 = counts((item_s[sel1], item_b[sel1], item_b2[sel1]), 3)
            two = (nb1 > 1) & (p1 >= split2_min)
            n_split2 = int(np.count_nonzero(two))
            if n_split2:
                item_s, item_b, item_b2 = _split_items(item_s, item_b, sel1[two], nb1[two])
        info.update(blocks=int(min(max(item_s.size, 1), cap_blocks)), workspace_bytes=cap_blocks * per_block,
                    n_split=int(selb.size), n_split2=n_split2, n_items=int(item_s.size),
                    seconds_split_pass=time.perf_counter() - t1)
    else:
        item_s = item_b = item_b2 = np.zeros(0, np.int64)
    m = item_s.shape[0]
    items = (item_s, item_b, item_b2)
    # count pass: warp items -> slots [0, m), thread sub-problems sub_v[w1:] -> slots [m, m + nsub - w1)
    t1 = time.perf_counter()
    total = m + nsub - w1
    d_cnt = cuda.to_device(np.zeros(max(total, 1), np.int64))
    d_ecnt = cuda.to_device(np.zeros(max(total, 1), np.int64))

    def launch_t(mode, cbase, ebase, oip, oix):
        for tw, s0, ns in ((2, w1, n2), (1, w1 + n2, nsub - w1 - n2)):
            if ns > 0:
                _get_thread_kernel(tw)[(ns + tb - 1) // tb, tb](
                    d_indptr, d_indices, d_sv, d_ksz, d_sub, s0, ns, m + s0 - w1, min_size,
                    mode, d_cnt, d_ecnt, cbase, ebase, oip, oix)

    if m:
        launch_w(items, 1, d_cnt, d_ecnt)
    launch_t(1, dummy64, dummy64, dummy64, dummy32)
    cnt = d_cnt.copy_to_host()[:total]
    ecnt = d_ecnt.copy_to_host()[:total]
    info["seconds_count_pass"] = time.perf_counter() - t1
    cbase = np.zeros(total + 1, np.int64)
    ebase = np.zeros(total + 1, np.int64)
    np.cumsum(cnt, out=cbase[1:])
    np.cumsum(ecnt, out=ebase[1:])
    ncl = int(cbase[-1])
    nel = int(ebase[-1])
    for ip_, ix_ in parts:  # the host fallback's cliques count too
        ncl += ip_.shape[0] - 1
        nel += ix_.shape[0]
    if output_ok is not None and not output_ok(ncl + n, nel + n):  # + n: a bound on the singletons
        raise OutputTooLarge(ncl, nel)
    ncl = int(cbase[-1])
    nel = int(ebase[-1])
    t1 = time.perf_counter()
    d_oip = cuda.device_array(ncl + 1, np.int64)  # every entry but the first is written by a kernel
    d_oip[:1].copy_to_device(np.zeros(1, np.int64))
    d_oix = cuda.device_array(max(nel, 1), np.int32)
    ev = _events(cuda)
    if ncl:
        d_cb = cuda.to_device(cbase)
        d_eb = cuda.to_device(ebase)
        if ev[0] is not None:
            ev[0].record()
        if m:
            launch_w(items, 2, d_cnt, d_ecnt, d_cb, d_eb, d_oip, d_oix)
        launch_t(2, d_cb, d_eb, d_oip, d_oix)
        if ev[1] is not None:
            ev[1].record()
    # one host output: the device's cliques copied straight into its head (no concatenation
    # copy), then the host fallback's and the singletons. The launches above return at
    # once, so the host prepares the output while the write pass runs (host_output: see
    # _HOST_OUTPUTS); the copy below then lands in memory that is already mapped (fresh
    # pages fault) or page-locked.
    rest = parts + [_singletons(indptr, n, min_size)]
    n_ip = ncl + 1 + sum(ip_.shape[0] - 1 for ip_, _ in rest)
    n_ix = nel + sum(ix_.shape[0] for _, ix_ in rest)
    out_ip, out_ix, how = _host_arrays(cuda, host_output, n_ip, n_ix)
    info["host_output"] = how
    pairs = [(d_oip, out_ip[:ncl + 1])] + ([(d_oix[:nel], out_ix[:nel])] if nel else [])
    if host_output == "touch":
        _touch(out_ip)
        _touch(out_ix)
    elif host_output == "threads":
        _parallel(_touch, [c for a in (out_ip, out_ix) for c in _chunks(a)])
    info["seconds_host_output"] = time.perf_counter() - t1
    if host_output == "threads_copy":  # each thread touches its chunk's pages, then copies the chunk into them
        _parallel(functools.partial(_touch_copy, cuda), [(d_a[lo:hi], h_a[lo:hi]) for d_a, h_a in pairs
                                for lo, hi in _chunk_bounds(h_a.shape[0], h_a.itemsize)])
    else:
        for d_a, h_a in pairs:
            d_a.copy_to_host(ary=h_a)
    c0, e0 = ncl, nel
    for ip_, ix_ in rest:
        out_ip[c0 + 1:c0 + ip_.shape[0]] = ip_[1:] + e0
        out_ix[e0:e0 + ix_.shape[0]] = ix_
        c0 += ip_.shape[0] - 1
        e0 += ix_.shape[0]
    info["seconds_write_pass"] = time.perf_counter() - t1
    if ncl and ev[0] is not None:
        try:
            info["seconds_write_kernels"] = cuda.event_elapsed_time(ev[0], ev[1]) / 1e3
        except Exception:  # pragma: no cover - the simulator's events
            pass
    return out_ip, out_ix


# How the host output is prepared while the write kernels run (``host_output``):
#   "touch": np.empty, one write per page by the calling thread (the measured default:
#            fresh pages fault, and the device-to-host copy would otherwise take the faults);
#   "threads": np.empty, pages touched by a pool of threads (min(16, CPUs)) in chunks;
#   "threads_copy": as "threads", each thread then copies its own chunk from the device;
#   "pinned": page-locked arrays from CuPy's pinned-memory pool (cupyx.empty_pinned; blocks
#            are reused by later calls once a result is freed, and stay page-locked in the pool),
#            numba's cuda.pinned_array without CuPy; no touching, a direct DMA copy.
_HOST_OUTPUTS = ("touch", "threads", "threads_copy", "pinned")
_CHUNK_BYTES = 8 << 20  # a thread's share of the output at a time
_POOL: Any = None


def _host_arrays(cuda, mode, n_ip, n_ix):
    """Uninitialised host arrays (int64 offsets, int32 members) for ``mode``, and how they
    were allocated."""
    if mode == "pinned":
        try:
            from trustlab._backend import get_cupy

            get_cupy()
            import cupyx

            return cupyx.empty_pinned(n_ip, np.int64), cupyx.empty_pinned(n_ix, np.int32), "pinned (CuPy pool)"
        except Exception:  # no CuPy (or the simulator): numba's page-locked arrays, not pooled
            return cuda.pinned_array(n_ip, np.int64), cuda.pinned_array(n_ix, np.int32), "pinned (numba)"
    return np.empty(n_ip, np.int64), np.empty(n_ix, np.int32), "pageable"


def _touch(a):
    """One write per 4 KiB page of ``a`` (maps fresh pages before a copy lands in them)."""
    if a.size:
        a[::max(1, 4096 // a.itemsize)] = 0


def _chunk_bounds(size, itemsize):
    step = max(1, _CHUNK_BYTES // itemsize)
    return [(lo, min(size, lo + step)) for lo in range(0, size, step)]


def _chunks(a):
    return [a[lo:hi] for lo, hi in _chunk_bounds(a.shape[0], a.itemsize)]


def _touch_copy(cuda, pair):
    d_a, h_a = pair
    _touch(h_a)
    cuda.synchronize()  # the write kernels are done (whatever stream this thread's copy would take)
    d_a.copy_to_host(ary=h_a)  # ctypes releases the GIL: the threads' copies overlap


def _parallel(fn, items):
    """``fn`` over ``items`` on a lazily created pool of min(16, CPUs) threads (NumPy's
    strided assignment and the driver's copies release the GIL)."""
    global _POOL
    import os

    if len(items) <= 1:
        for it in items:
            fn(it)
        return
    if _POOL is None or _POOL[0] != os.getpid():  # a forked child gets its own pool (the parent's threads are gone)
        from concurrent.futures import ThreadPoolExecutor

        _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=max(1, min(16, os.cpu_count() or 1)),
                                                 thread_name_prefix="trustlab-cliques-output"))
    for f in [_POOL[1].submit(fn, it) for it in items]:
        f.result()


def _events(cuda):
    """Two timing events (``(None, None)`` where the runtime has none, e.g. the simulator)."""
    try:
        return cuda.event(timing=True), cuda.event(timing=True)
    except Exception:  # pragma: no cover
        return None, None


def enumerate_maximal_cliques_cuda(indptr: np.ndarray, indices: np.ndarray, n: int,
                                   min_size: int = 1, *, max_universe: int = 1024,
                                   max_blocks: int | None = None, workspace_bytes: int = 1 << 30,
                                   split_min: int = 64, split2_min: int | None = 48, thread_max: int = 64,
                                   warp_ops: str = "auto", output_ok=None, lean: bool = False,
                                   host_output: str = "touch", return_info: bool = False) -> Any:
    """All maximal cliques of a CSR graph on a CUDA GPU (numba.cuda).

    See the module docstring for the design (ELS sub-problems in the degree order built
    on the device, one thread per small universe, one warp per large one, bit-packed
    iterative Bron–Kerbosch–Tomita, count then write). The result is exact;
    sub-problems whose universe exceeds ``max_universe`` bits run on the host with the
    same algorithm.

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
    max_blocks : int, optional
        Resident warps of the large-universe kernel (default 32 per multiprocessor).
    workspace_bytes : int, default 1 GiB
        Device memory budget for per-block bitset slabs.
    split_min : int, default 64
        Sub-problems with a universe of at least this many vertices are split into one
        work item per root branch (after the root pivot), for load balance.
    split2_min : int or None, default 48
        Root-branch items whose level-1 candidate set ``P1`` has at least this many
        vertices are split again, into one item per level-1 branch (a short extra pass
        counts them): on dense graphs a few root branches hold most of the search, and
        the warps that finish early would otherwise wait for them. The pass runs only
        when the root split leaves fewer than 4 items per resident warp. ``None`` keeps
        one level of splitting.
    thread_max : {0, 32, 64}, default 64
        Largest universe solved by one thread (0: every sub-problem on the warp kernel).
    warp_ops : {"auto", "shfl", "shared"}, default "auto"
        How the warp kernel's threads combine their partial results: warp shuffles and
        ballots (``"shfl"``), or a shared buffer and a barrier (``"shared"``, the only
        choice in the simulator). ``"auto"``: shuffles on a device.
    lean : bool, default False
        The warp kernel's lean build: pivots only at branching nodes, and ``v``'s place
        among a clique's members from one split point per item (the same output; not yet
        measured on a device, so not the default).
    host_output : {"touch", "threads", "threads_copy", "pinned"}, default "touch"
        How the host output is made ready while the write kernels run (the same cliques
        every way): ``"touch"`` (the build measured on the H200) maps the fresh pages
        of two ``np.empty`` arrays from this thread; ``"threads"`` does so from a pool of
        up to 16 threads; ``"threads_copy"`` also has each thread copy its own chunk
        from the device; ``"pinned"`` returns page-locked arrays from CuPy's pinned pool
        (``cupyx.empty_pinned``: no page faults and a direct DMA copy, and a later call
        reuses the blocks of freed results, which stay page-locked in the pool; numba's
        ``cuda.pinned_array`` without CuPy). Not yet timed on a device
        (``bench/gpu_api_overhead.sh`` compares them), so opt-in.
    output_ok : callable, optional
        ``output_ok(n_cliques, n_members)`` is called after the count pass (with upper
        bounds); if it returns False, :class:`OutputTooLarge` is raised before any output
        is allocated.
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

    if int(max_universe) < 1:
        raise ValueError(f"max_universe must be >= 1, got {max_universe!r}.")
    if int(split_min) < 1:
        raise ValueError(f"split_min must be >= 1, got {split_min!r}.")
    if split2_min is not None and int(split2_min) < 1:
        raise ValueError(f"split2_min must be >= 1 or None, got {split2_min!r}.")
    if warp_ops not in ("auto", "shfl", "shared"):
        raise ValueError(f"warp_ops must be 'auto', 'shfl' or 'shared', got {warp_ops!r}.")
    if int(thread_max) not in (0, 32, 64):
        raise ValueError(f"thread_max must be 0, 32 or 64, got {thread_max!r}.")
    if host_output not in _HOST_OUTPUTS:
        raise ValueError(f"host_output must be one of {', '.join(map(repr, _HOST_OUTPUTS))}, got {host_output!r}.")
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
    out = _enumerate_v2(cuda, indptr, indices, n, min_size, int(max_universe), max_blocks, int(workspace_bytes),
                        int(split_min), info, thread_max=int(thread_max), output_ok=output_ok,
                        split2_min=None if split2_min is None else int(split2_min), warp_ops=warp_ops,
                        lean=bool(lean), host_output=host_output)
    info["seconds_total"] = time.perf_counter() - t0
    return (*out, info) if return_info else out
