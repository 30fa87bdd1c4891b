r"""GPU maximal-clique enumeration with numba.cuda (subtree-per-block, bit-packed).

Design (in the spirit of Almasri, Chang, El Hajj, Nagi, Xiong & Hwu, "Parallelizing
Maximal Clique Enumeration on GPUs", PACT 2023)
-----------------------------------------------------------------------------------
1. **Host: degeneracy ordering and local universes** (:mod:`trustlab.kernels.cliques_cuda_host`).
   Eppstein–Löffler–Strash (ELS) split the search into one independent sub-problem per
   vertex ``v`` of a degeneracy order: ``P = N+(v)`` (later neighbours) and
   ``X = N-(v)`` (earlier neighbours), inside a pruned, sorted local universe ``U(v)``;
   local bit ``j`` is the ``j``-th smallest vertex id of ``U(v)``. Sub-problems come
   sorted by decreasing ``|U(v)|`` for load balance.
2. **Device: one sub-problem per thread block** (default 32 threads = one warp). Blocks
   pull sub-problems from a global atomic work counter. The block builds the bit-packed
   adjacency of the induced sub-graph ``G[U(v)]`` (one row of ``W = ceil(|U|/32)`` words
   of 32 bits per universe vertex, each word held in an int64; rows split across
   threads, each row a sorted-list merge) in a per-block slab of global memory, then
   runs **iterative Bron–Kerbosch with Tomita pivoting** on an explicit stack whose
   levels hold the bitsets ``P``, ``X``, ``R`` and the remaining candidates
   ``P \ N(pivot)``. Word-wise set operations are spread over the threads of the block;
   the pivot (``argmax_u |P ∩ N(u)|`` over ``u ∈ P ∪ X``) is a block-wide arg-max
   reduction in shared memory; control decisions are taken by thread 0 and broadcast
   through shared memory. A branch is cut when ``|R| + |P| < min_size``.
3. **Root-branch splitting (load balance).** One huge sub-problem would otherwise keep a
   single block busy long after the others finish (dense graphs: the first vertices of
   the order own most of the search tree). Sub-problems with ``|U(v)| >= split_min``
   (default 64) are split: pass 0 computes the root pivot and the number of root branches
   ``|C0| = |P0 \ N(pivot)|``; the host then makes one work item per branch ``i``. Item
   ``i`` recomputes the same (deterministic) root pivot, moves the root candidates before
   the ``i``-th one from ``P`` to ``X`` exactly as the serial search would, and explores
   only branch ``i``. Small sub-problems stay whole.
4. **Count, then write.** Pass 1 only counts cliques and their total length per work
   item; the host prefix-sums those into offsets; pass 2 re-runs the identical search and
   writes every clique (members sorted by position) straight into the final CSR arrays.
   No dynamic allocation on the device, output is exactly sized.

Limits
------
* Universes larger than ``max_universe`` bits (default 1024) are *not* sent to the
  device: they are solved on the host by a Numba version of the same bitset algorithm
  (:func:`~trustlab.kernels.cliques_cuda_host.enumerate_maximal_cliques_bitset_host`, run
  in parallel over sub-problems), and counted in the returned ``info["n_host_fallback"]``.
  The result is always exact.
* Device memory per block is ``8 * W * (|U|max + 4 * (|N+|max + 2))`` bytes with
  ``W = ceil(|U|max / 32)``: the adjacency rows (``|U|max x W``) and a stack of
  ``|N+|max + 2`` levels of four bitsets (``P``, ``X``, ``R``, candidates), all in
  8-byte words; the number of resident blocks is reduced to fit ``workspace_bytes``
  (default 1 GiB).
* Only numba.cuda and NumPy are needed, so the identical kernel runs in CI under the CUDA
  simulator (``NUMBA_ENABLE_CUDASIM=1``), very slowly: keep simulator inputs to a few
  dozen vertices. CuPy is not required.
* Measured on an H100 (``bench/results/gpu.md``): correct on every graph tried, but slower
  than the CPU kernel on 16 threads for the same CSR input (1.0-2.4x), so
  ``backend="auto"`` keeps the CPU.

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
    _concat_csr,
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


@functools.lru_cache(maxsize=None)
def _get_kernel(tpb: int):
    global cuda
    if cuda is None:
        from trustlab._backend import numba_cuda_numpy_compat

        numba_cuda_numpy_compat()  # before numba.cuda's first compile (NumPy >= 2.5)
        from numba import cuda as _cuda

        cuda = _cuda
    TPB = tpb

    @cuda.jit(device=True)
    def popc(x):  # pragma: no cover - compiled
        return cuda.popc(x)

    fill_row, write_clique, split_root = (cuda.jit(device=True)(f) for f in make_bitset_steps(popc))

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
                fill_row(adj[i], indices, indptr[u], indptr[u + 1], sub_idx, lo, k)
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
                                pos = write_clique(stk[d, 2], W, sub_idx, lo, v, out_indices,
                                                   ebase[it] + nel)
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
                        elif d == 0 and br >= 0:  # root branch split
                            split_root(stk[0], W, br)
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
