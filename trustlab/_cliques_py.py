"""Exact pure-Python twin of the CPU clique engine, for small graphs on a cold cache.

The first call of the Numba clique kernels in a fresh environment compiles them
(about 8-10 s of CPU for degeneracy ordering, forward rows and the enumerator), while a
graph of a few thousand edges is enumerated in well under a second by plain Python.
:func:`maximal_cliques_py` runs the *same algorithm in the same order* as
:func:`trustlab.kernels.cliques_cpu.enumerate_chunk` over the schedule of
:func:`trustlab.cliques._schedule` (degeneracy ranks by the same bucket peel, the same
forward rows, the same sub-problem with X' in ascending vertex order, Tomita pivot
chosen by the same scan and tie-break, candidates lowest local id first), with Python
integers as bitsets, so it returns the identical ``indptr``/``indices`` arrays, clique
for clique (tests/cliques/test_cold_path.py checks this on random graphs against the
kernels). :mod:`trustlab.cliques` uses it only while the kernels are not compiled
or cached, and only for small graphs, within a fixed budget of elementary steps:
past :data:`STEP_BUDGET` it gives up (:class:`TooBig`) and the caller compiles the
kernels. The choice depends on the cache state, the result does not.
"""
from __future__ import annotations

import numpy as np

__all__ = ["TooBig", "STEP_BUDGET", "degeneracy_rank_py", "forward_rows", "schedule_order",
           "maximal_cliques_py"]

#: elementary steps (sub-problem pairs, search nodes, clique members) before giving up:
#: about a second of Python
STEP_BUDGET = 3_000_000


class TooBig(Exception):
    """The graph needs more than :data:`STEP_BUDGET` steps: use the kernels."""


def degeneracy_rank_py(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Rank of every vertex in the degeneracy order of
    :func:`trustlab.kernels.cliques_cpu.degeneracy_order` (the same bucket peel,
    step for step; int32)."""
    n = indptr.shape[0] - 1
    ip = indptr.tolist()
    ix = indices.tolist()
    deg = [ip[v + 1] - ip[v] for v in range(n)]
    md = max(deg, default=0)
    bin_ = [0] * (md + 1)
    for d in deg:
        bin_[d] += 1
    start = 0
    for d in range(md + 1):
        num = bin_[d]
        bin_[d] = start
        start += num
    pos = [0] * n
    vert = [0] * n
    for v in range(n):
        pos[v] = bin_[deg[v]]
        vert[pos[v]] = v
        bin_[deg[v]] += 1
    for d in range(md, 0, -1):
        bin_[d] = bin_[d - 1]
    if n > 0:
        bin_[0] = 0
    for i in range(n):
        v = vert[i]
        dv = deg[v]
        for e in range(ip[v], ip[v + 1]):
            u = ix[e]
            du = deg[u]
            if du > dv:
                pu = pos[u]
                pw = bin_[du]
                w = vert[pw]
                if u != w:
                    pos[u] = pw
                    vert[pu] = w
                    pos[w] = pu
                    vert[pw] = u
                bin_[du] += 1
                deg[u] = du - 1
    rank = np.empty(n, np.int32)
    rank[np.asarray(vert, dtype=np.int64)] = np.arange(n, dtype=np.int32)
    return rank


def forward_rows(indptr: np.ndarray, indices: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(fptr, fidx)`` exactly as :func:`trustlab.kernels.cliques_cpu.forward_adjacency`."""
    n = indptr.shape[0] - 1
    deg = np.diff(indptr).astype(np.int64)
    row = np.repeat(np.arange(n, dtype=np.int64), deg)
    keep = rank[indices] > rank[row]
    fptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(row[keep], minlength=n), out=fptr[1:])
    return fptr, indices[keep].astype(np.int32)


def schedule_order(indptr: np.ndarray, fptr: np.ndarray) -> np.ndarray:
    """Order in which the top-level vertices are processed (and their cliques listed),
    shared by the kernels' schedule (:func:`trustlab.cliques._schedule`) and the twin.

    The work of vertex ``v`` is estimated as ``p * p + deg(v)``, ``p`` its number of
    later neighbours. Heavy vertices (each more than 1/256 of the total work) come
    first, largest first (stable), so the load balances; all others follow in vertex
    order, which keeps neighbouring rows close in memory (on RGG(20k) 15 % faster
    than a global largest-first order). Independent of the thread count."""
    p = np.diff(fptr)
    work = p * p + np.diff(indptr).astype(np.int64)
    heavy = work * 256 > int(work.sum())
    hv = np.flatnonzero(heavy)
    hv = hv[np.argsort(-work[hv], kind="stable")]
    return np.concatenate([hv, np.flatnonzero(~heavy)]).astype(np.int32)


def maximal_cliques_py(indptr: np.ndarray, indices: np.ndarray, min_size: int = 1,
                       budget: int = STEP_BUDGET) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr int64, indices int32)`` of every maximal clique with at least
    ``min_size`` members, in the kernels' order; raises :class:`TooBig` past ``budget``
    elementary steps.

    Examples
    --------
    >>> import numpy as np
    >>> ip = np.array([0, 2, 4, 7, 8], np.int32)        # triangle 0-1-2 plus edge 2-3
    >>> ix = np.array([1, 2, 0, 2, 0, 1, 3, 2], np.int32)
    >>> cp, cm = maximal_cliques_py(ip, ix)
    >>> [cm[cp[k]:cp[k + 1]].tolist() for k in range(len(cp) - 1)]
    [[0, 1, 2], [2, 3]]
    """
    n = indptr.shape[0] - 1
    rank = degeneracy_rank_py(indptr, indices)
    fptr, fidx = forward_rows(indptr, indices, rank)
    verts = schedule_order(indptr, fptr).tolist()
    ip = indptr.tolist()
    ix = indices.tolist()
    fp = fptr.tolist()
    fx = fidx.tolist()
    rk = rank.tolist()
    steps = 0
    sizes: list[int] = []
    members: list[int] = []
    pos = [-1] * n
    for v in verts:
        d0 = ip[v + 1] - ip[v]
        if d0 == 0:
            if min_size <= 1:
                sizes.append(1)
                members.append(v)
            continue
        univ = fx[fp[v]:fp[v + 1]]
        p = len(univ)
        if p == 0 or p + 1 < min_size:
            continue
        for i, u in enumerate(univ):
            pos[u] = i
        adj = [0] * p
        for i in range(p):
            w = univ[i]
            for e in range(fp[w], fp[w + 1]):
                j = pos[fx[e]]
                if j >= 0:
                    adj[i] |= 1 << j
                    adj[j] |= 1 << i
        rv = rk[v]
        for e in range(ip[v], ip[v + 1]):
            x = ix[e]
            if rk[x] > rv:
                continue
            bits = 0
            for t in range(fp[x], fp[x + 1]):
                j = pos[fx[t]]
                if j >= 0:
                    bits |= 1 << j
            if bits:
                lx = len(univ)
                univ.append(x)
                adj.append(bits)
                xb = 1 << lx
                b = bits
                while b:
                    low = b & -b
                    adj[low.bit_length() - 1] |= xb
                    b ^= low
        for i in range(p):
            pos[univ[i]] = -1
        steps += (ip[v + 1] - ip[v]) + len(univ)
        u_n = len(univ)
        P0 = (1 << p) - 1
        X0 = ((1 << u_n) - 1) & ~P0
        # iterative Bron-Kerbosch with Tomita pivoting, as in the kernel
        R = [0] * (p + 2)
        stackP = [P0]
        stackX = [X0]
        stackC = [0]
        d = 0
        descend = True
        while d >= 0:
            if descend:
                descend = False
                Pw = stackP[d]
                pcount = Pw.bit_count()
                word = Pw | stackX[d]
                best = 0
                bestc = -1
                while word:
                    low = word & -word
                    b = low.bit_length() - 1
                    word ^= low
                    c = (Pw & adj[b]).bit_count()
                    if c > bestc:
                        bestc = c
                        best = b
                        if c == pcount:
                            break
                stackC[d] = Pw & ~adj[best]
                steps += 1
                if steps > budget:
                    raise TooBig
            C = stackC[d]
            if C == 0:
                d -= 1
                continue
            low = C & -C
            w = low.bit_length() - 1
            stackC[d] = C ^ low
            a = adj[w]
            nP = stackP[d] & a
            nX = stackX[d] & a
            stackP[d] &= ~low
            stackX[d] |= low
            R[d + 1] = w
            size = d + 2
            if nP == 0:
                if nX == 0 and size >= min_size:
                    cl = [v] + [univ[R[k]] for k in range(1, size)]
                    cl.sort()
                    sizes.append(size)
                    members.extend(cl)
                    steps += size
                continue
            if size + nP.bit_count() < min_size:
                continue
            d += 1
            if len(stackP) <= d:
                stackP.append(nP)
                stackX.append(nX)
                stackC.append(0)
            else:
                stackP[d] = nP
                stackX[d] = nX
            descend = True
        if steps > budget:
            raise TooBig
    cptr = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(np.asarray(sizes, dtype=np.int64), out=cptr[1:])
    return cptr, np.asarray(members, dtype=np.int32)
