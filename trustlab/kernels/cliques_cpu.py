"""Numba CPU kernels for maximal-clique enumeration and all-clique counting.

Plain kernels on validated arrays (see :mod:`trustlab.graph` for the checks):
``indptr`` (int32, n+1) and ``indices`` (int32) form a symmetric CSR adjacency with
sorted neighbour lists and no self-loops. Nothing here validates its input.

Algorithm (Eppstein, Löffler & Strash 2010, "Listing all maximal cliques in sparse
graphs in near-optimal time"):

* a degeneracy (k-core) ordering of the vertices (Batagelj–Zaversnik bucket
  algorithm, O(n + m));
* for every vertex ``v`` the top-level sub-problem ``P = later neighbours``,
  ``X = earlier neighbours`` is solved independently. ``P ∪ X'`` (``X'`` = the earlier
  neighbours adjacent to at least one vertex of ``P``; the others can never block
  a clique) becomes a local universe of at most ``deg(v)`` vertices and the induced
  adjacency is stored as one bitset row per vertex; a universe of at most 64 vertices
  (most of them on sparse graphs) is built straight as one uint64 word per row, from
  the forward rows through a one-byte marker map, without data-dependent branches;
* Bron–Kerbosch with Tomita pivoting runs iteratively on those bitsets (an
  explicit stack of ``P``/``X``/candidate bitsets, LLVM ``ctpop``/``cttz``), so the
  hot loop touches no Python object;
* the sub-problems are independent, so callers run chunks of them in parallel as
  ``nogil`` calls on a Python thread pool (for counting too): no kernel here is
  ``parallel=True``, so the Numba parallel runtime is never started and nothing
  compiles a parallel region (~12 s on the first call after install).

Cliques are written as (``sizes``, ``members``): ``members`` concatenates the
vertex ids of each clique (sorted ascending within a clique). Both are kept in blocks of
about :data:`OUT_BLOCK` words (see :func:`_room`): the output never grows by copying what it
already holds, so a worker halted by a signal stops within one bounded step.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

__all__ = [
    "degeneracy_order",
    "enumerate_chunk",
    "parse_int_edges",
    "compact_labels",
    "edges_to_csr",
    "clique_line_bytes",
    "format_clique_lines",
    "count_all_cliques",
    "forward_adjacency",
]

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = ~np.uint64(0)


@intrinsic
def _popcount(typingctx, x):
    """LLVM ``ctpop`` on a uint64 (a single POPCNT instruction on x86-64)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
        return builder.call(fn, args)

    return sig, codegen


@njit(cache=True, nogil=True)
def degeneracy_order(indptr, indices):
    """Degeneracy ordering by repeatedly removing a minimum-degree vertex.

    Returns ``(order, rank, core)``: ``order[i]`` is the i-th removed vertex,
    ``rank[order[i]] == i`` and ``core[v]`` is the core number of ``v``.
    """
    n = indptr.shape[0] - 1
    # int32 work arrays (half the cache footprint of int64; ids and degrees fit)
    deg = np.empty(n, np.int32)
    md = 0
    for v in range(n):
        d = indptr[v + 1] - indptr[v]
        deg[v] = d
        if d > md:
            md = d
    bin_ = np.zeros(md + 1, np.int32)
    for v in range(n):
        bin_[deg[v]] += 1
    start = 0
    for d in range(md + 1):
        num = bin_[d]
        bin_[d] = start
        start += num
    pos = np.empty(n, np.int32)
    vert = np.empty(n, np.int32)
    for v in range(n):
        pos[v] = bin_[deg[v]]
        vert[pos[v]] = v
        bin_[deg[v]] += 1
    for d in range(md, 0, -1):
        bin_[d] = bin_[d - 1]
    if md >= 0 and n > 0:
        bin_[0] = 0
    for i in range(n):
        v = vert[i]
        dv = deg[v]  # (fixed while v's neighbours are updated: no self-loops)
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            du = deg[u]
            if du > dv:
                pu = pos[u]
                pw = bin_[du]
                w = vert[pw]
                # swap u with the first vertex of its bucket (when that is u itself, every
                # store writes back the value already there: no branch needed)
                pos[u] = pw
                vert[pu] = w
                pos[w] = pu
                vert[pw] = u
                bin_[du] = pw + 1
                deg[u] = du - 1
    order = vert
    rank = np.empty(n, np.int32)
    for i in range(n):
        rank[order[i]] = i
    core = deg
    return order, rank, core


@njit(cache=True, nogil=True)
def forward_adjacency(indptr, indices, rank):
    """Forward (later-neighbour) rows of the degeneracy orientation.

    Returns ``(fptr, fidx)``: ``fidx[fptr[v]:fptr[v+1]]`` are the neighbours ``u`` of
    ``v`` with ``rank[u] > rank[v]``, ascending as in ``indices`` (int64 ``fptr``,
    int32 ``fidx``; each edge appears once, at its lower-ranked end). A row holds at
    most ``degeneracy`` vertices.
    """
    n = indptr.shape[0] - 1
    fptr = np.zeros(n + 1, np.int64)
    # One pass, rows written in vertex order: a symmetric adjacency without self-loops
    # has exactly indptr[n] / 2 forward entries (each edge once). Every neighbour is
    # written and the write position advances only for a later one (no branch on the
    # rank comparison: 2-4x faster than counting first on RGG / SBM graphs).
    cap = indptr[n] // 2
    fidx = np.empty(cap, np.int32)
    w = 0
    for v in range(n):
        rv = rank[v]
        e0 = indptr[v]
        e1 = indptr[v + 1]
        if w + (e1 - e0) <= cap:
            for e in range(e0, e1):
                u = indices[e]
                fidx[w] = u
                w += rank[u] > rv
        else:  # (near the end: no room for the whole row)
            for e in range(e0, e1):
                u = indices[e]
                if rank[u] > rv:
                    if w == cap:  # (asymmetric input)
                        return _forward_counted(indptr, indices, rank)
                    fidx[w] = u
                    w += 1
        fptr[v + 1] = w
    if w < cap:  # (asymmetric input)
        return _forward_counted(indptr, indices, rank)
    return fptr, fidx


@njit(cache=True, nogil=True)
def _forward_counted(indptr, indices, rank):
    """:func:`forward_adjacency` by counting first (any adjacency, symmetric or not)."""
    n = indptr.shape[0] - 1
    fptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        rv = rank[v]
        c = 0
        for e in range(indptr[v], indptr[v + 1]):
            if rank[indices[e]] > rv:
                c += 1
        fptr[v + 1] = fptr[v] + c
    fidx = np.empty(fptr[n], np.int32)
    w = 0
    for v in range(n):
        rv = rank[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if rank[u] > rv:
                fidx[w] = u
                w += 1
    return fptr, fidx


#: int32 words per block of stored cliques (4 MiB): the output grows block by block, never
#: by copying what is stored (a doubling copy of up to 0.5 GB held a SIGTERM 2.45 s under load)
OUT_BLOCK = 1 << 20


@njit(cache=True, nogil=True)
def _room(buf, at, need, block, done, used):
    """``(buf, at)`` with room for ``need`` more words after ``buf[:at]``.

    A buffer under ``block`` words grows by doubling (copies of less than ``block``
    words); past that it is closed (appended to ``done``, its length ``at`` to ``used``)
    and a fresh one of ``max(block, need)`` words is started, so nothing stored is ever
    copied again and no single step here touches more than ``block`` words."""
    if at + need <= buf.shape[0]:
        return buf, at
    if at + need <= block:
        b = np.empty(min(block, max(at + need, 2 * buf.shape[0])), np.int32)
        b[:at] = buf[:at]
        return b, at
    if at > 0:
        done.append(buf)
        used.append(at)
    return np.empty(max(block, need), np.int32), 0


@njit(cache=True, nogil=True)
def _close(buf, at, done, used):
    """Append the last buffer to ``done`` (trimmed by a copy of at most half a block when
    less than half of it is used)."""
    if at == 0:
        return
    if 2 * at < buf.shape[0]:
        done.append(buf[:at].copy())
    else:
        done.append(buf)
    used.append(at)


@njit(cache=True, nogil=True, inline="always")
def _write_clique(v, size, univ, R, members, at):
    """Write clique {v} ∪ univ[R[1:size]], sorted, to ``members[at:at + size]`` (the
    caller has made room). Returns nothing: no array passes back per clique."""
    members[at] = v
    for k in range(1, size):  # insertion sort as the members arrive (cliques are small)
        key = univ[R[k]]
        b_ = at + k - 1
        while b_ >= at and members[b_] > key:
            members[b_ + 1] = members[b_]
            b_ -= 1
        members[b_ + 1] = key


@njit(cache=True, nogil=True, inline="always")
def _write_clique_word(v, size, univ, R, members, at):
    """:func:`_write_clique` for a one-word universe: the local ids ``R[1:size]`` are ids
    of P, whose vertices ascend with the id, so the members come out sorted from the
    bits of their mask (v merged in on the way): O(size), no insertion sort."""
    mask = _ZERO
    for k in range(1, size):
        mask |= _ONE << np.uint64(R[k])
    k = at
    while mask != _ZERO:
        u = univ[np.int64(trailing_zeros(mask))]
        mask &= mask - _ONE
        if v < u:
            members[k] = v
            k += 1
            v = 0x7FFFFFFF  # (placed)
        members[k] = u
        k += 1
    if v != 0x7FFFFFFF:
        members[k] = v


@njit(cache=True, nogil=True)
def enumerate_chunk(indptr, indices, fptr, fidx, rank, verts, min_size, materialize, max_count, max_members, stop,
                    block):
    """Enumerate the maximal cliques whose lowest-ranked vertex is in ``verts``.

    Parameters
    ----------
    indptr, indices : int32 arrays
        Symmetric CSR adjacency, sorted neighbour lists, no self-loops.
    fptr, fidx : int64, int32 arrays
        The forward rows of :func:`forward_adjacency` (later neighbours only).
    rank : int32 array
        Position of every vertex in the degeneracy order.
    verts : int32 array
        Top-level vertices to process.
    min_size : int
        Only cliques with at least ``min_size`` vertices are reported.
    materialize : bool
        When False only counts are kept (``sizes``/``members`` stay empty).
    max_count, max_members : int
        Stop once more than ``max_count`` cliques are counted (checked where the search
        descends, so it may count up to one node's leaves more), or, with
        ``materialize``, as soon as more would be kept, or the output would pass
        ``max_members`` 4-byte words (one per stored vertex id, two per clique offset);
        ``count`` is then returned as -1 (the output limit was hit) and the arrays are
        empty.
    stop : uint8 array of length 1
        Set ``stop[0]`` from another thread to end the search early (a signal or a
        deadline): it is read at every top-level vertex and where the search descends;
        ``count`` is then returned as -2 and the arrays are empty.
    block : int
        Words per output block (:data:`OUT_BLOCK`): the stored cliques are kept in blocks
        of about this size, so the output never grows by a copy of what it holds.

    Returns
    -------
    size_blocks, size_used : list of int32 arrays, list of int
        The clique sizes, one entry per clique: ``size_blocks[b][:size_used[b]]`` in
        order (empty when ``count`` < 0 or not ``materialize``).
    member_blocks, member_used : list of int32 arrays, list of int
        The concatenated, per-clique sorted vertex ids, in blocks the same way (a
        clique never spans two blocks).
    count : int64 number of cliques (-1: an output limit was hit; -2: stopped)
    max_size : int64 size of the largest clique reported (0 if none)
    """
    n = indptr.shape[0] - 1
    pos = np.empty(0, np.int32)  # (allocated when a universe first needs the general build)

    sizes = np.empty(min(1024, block) if materialize else 0, np.int32)
    members = np.empty(min(4096, block) if materialize else 0, np.int32)
    s_done = [sizes][:0]  # closed blocks and their used lengths
    s_used = [0][:0]
    m_done = [members][:0]
    m_used = [0][:0]
    s_at = 0  # used words of the open blocks
    m_at = 0
    n_sizes = 0  # totals (the caps)
    n_members = 0
    count = 0
    max_size = 0

    # workspace, grown on demand
    univ = np.empty(64, np.int32)
    xs = np.empty(64, np.int32)
    adj = np.empty(64, np.uint64)
    stack = np.empty(64 * 3, np.uint64)
    R = np.empty(64, np.int32)
    cur = np.empty(64, np.int64)
    pc = np.empty(64, np.int64)
    pos8 = np.zeros(n, np.uint8)
    bitof = np.zeros(256, np.uint64)  # bitof[i + 1] = bit i; bitof[0] = 0 (not in P)
    for i in range(64):
        bitof[i + 1] = _ONE << np.uint64(i)

    for vi in range(verts.shape[0]):
        if stop[0] != 0:
            return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -2, max_size
        v = verts[vi]
        rv = rank[v]
        d0 = indptr[v + 1] - indptr[v]
        if d0 == 0:
            if min_size <= 1:
                count += 1
                if max_size < 1:
                    max_size = 1
                if materialize:
                    sizes, s_at = _room(sizes, s_at, 1, block, s_done, s_used)
                    members, m_at = _room(members, m_at, 1, block, m_done, m_used)
                    sizes[s_at] = 1
                    members[m_at] = v
                    s_at += 1
                    m_at += 1
                    n_sizes += 1
                    n_members += 1
            continue
        if univ.shape[0] < d0:
            univ = np.empty(max(d0, 2 * univ.shape[0]), np.int32)
            xs = np.empty(univ.shape[0], np.int32)
        # P: later neighbours (the forward row, ascending ids) -> local ids 0..p-1
        f0 = fptr[v]
        p = fptr[v + 1] - f0
        if p == 0:
            continue  # {v} is not maximal: it has an earlier neighbour
        if p + 1 < min_size:
            continue
        u_n = p
        W = 0  # words per row once built (0: not yet)
        if p <= 64:
            # Word build (a universe of at most 64 vertices, the common case on sparse
            # graphs): each row is one uint64, OR-ed together from the forward rows
            # through ``bitof[pos8[u]]`` (``pos8``: local id + 1 of a vertex of P, 0
            # outside; one byte a vertex, so it stays in cache), so the scan of a
            # forward row has no data-dependent branch; each edge found is mirrored by
            # walking the bits of the row. The rows and local ids are those of the
            # general build below. Past 64 vertices (X' too large) the general build
            # starts over.
            for i in range(p):
                u = fidx[f0 + i]
                univ[i] = u
                pos8[u] = i + 1
                adj[i] = _ZERO
            for i in range(p):
                w = univ[i]
                r = _ZERO
                for e in range(fptr[w], fptr[w + 1]):
                    r |= bitof[pos8[fidx[e]]]
                    if r == _ALL:  # (an early exit: keeps LLVM from vectorising this short loop
                        break      # into AVX-512 gathers, 1.3-1.5x slower here)
                if r != _ZERO:
                    adj[i] |= r
                    bi = _ONE << np.uint64(i)
                    while r != _ZERO:
                        adj[np.int64(trailing_zeros(r))] |= bi
                        r &= r - _ONE
            W = 1
            # v's earlier neighbours, compacted without a branch on the rank comparison
            # (a mix of earlier and later ones is unpredictable) unless v has a long row
            # (mostly earlier neighbours: the branch predicts well)
            nxs = 0
            if d0 <= 64:
                for e in range(indptr[v], indptr[v + 1]):
                    x = indices[e]
                    xs[nxs] = x
                    nxs += rank[x] < rv
            else:
                for e in range(indptr[v], indptr[v + 1]):
                    x = indices[e]
                    if rank[x] < rv:
                        xs[nxs] = x
                        nxs += 1
            for k in range(nxs):
                x = xs[k]
                r = _ZERO
                for t in range(fptr[x], fptr[x + 1]):
                    r |= bitof[pos8[fidx[t]]]
                    if r == _ALL:
                        break
                if r != _ZERO:
                    if u_n == 64:
                        W = 0
                        u_n = p
                        break
                    univ[u_n] = x
                    adj[u_n] = r
                    bx = _ONE << np.uint64(u_n)
                    while r != _ZERO:
                        adj[np.int64(trailing_zeros(r))] |= bx
                        r &= r - _ONE
                    u_n += 1
            for i in range(p):  # reset markers
                pos8[univ[i]] = 0
        if W == 0:
            if pos.shape[0] == 0:
                pos = np.full(n, -1, np.int32)
            for i in range(p):
                u = fidx[f0 + i]
                univ[i] = u
                pos[u] = i
            # Local adjacency between P and P, and P and X' (X' = the earlier
            # neighbours of v with a neighbour in P; local ids p.. in ascending vertex
            # order). The edges inside P come from the forward rows of P, the edges X'-P
            # from the forward rows of v's earlier neighbours (each neighbour in P of an
            # earlier x is later than x, so it is in x's forward row): at most
            # deg(v) * degeneracy entries however large the degrees in P
            # (Eppstein-Loffler-Strash). Scanning all of N(w) for w in P instead was
            # 1.3-2x slower on BA / Holme-Kim graphs (hubs in P), 1.2x faster on G(n, m).
            # The bits are set straight into rows of Wb = ceil(deg(v) / 64) words
            # (|P| + |X'| <= deg(v)), compacted below if fewer words suffice.
            Wb = (d0 + 63) >> 6
            if adj.shape[0] < d0 * Wb:
                adj = np.empty(max(d0 * Wb, 2 * adj.shape[0]), np.uint64)
            for j in range(p * Wb):
                adj[j] = _ZERO
            for i in range(p):
                w = univ[i]
                bi = _ONE << np.uint64(i & 63)
                ri = i * Wb
                for e in range(fptr[w], fptr[w + 1]):
                    j = pos[fidx[e]]
                    if j >= 0:
                        adj[ri + (j >> 6)] |= _ONE << np.uint64(j & 63)
                        adj[j * Wb + (i >> 6)] |= bi
            for e in range(indptr[v], indptr[v + 1]):
                x = indices[e]
                if rank[x] > rv:
                    continue
                lx = -1
                for t in range(fptr[x], fptr[x + 1]):
                    j = pos[fidx[t]]
                    if j >= 0:
                        if lx < 0:
                            lx = u_n
                            univ[u_n] = x
                            u_n += 1
                            for k in range(lx * Wb, (lx + 1) * Wb):
                                adj[k] = _ZERO
                        adj[lx * Wb + (j >> 6)] |= _ONE << np.uint64(j & 63)
                        adj[j * Wb + (lx >> 6)] |= _ONE << np.uint64(lx & 63)
            W = (u_n + 63) >> 6
            if W < Wb:  # compact the rows to W words (rows only grow apart: copy forwards)
                for r in range(u_n):
                    for k in range(W):
                        adj[r * W + k] = adj[r * Wb + k]
            for i in range(p):  # reset markers
                pos[univ[i]] = -1

        levels = p + 2
        if stack.shape[0] < levels * 3 * W:
            stack = np.empty(max(levels * 3 * W, 2 * stack.shape[0]), np.uint64)
        if R.shape[0] < levels:
            m = max(levels, 2 * R.shape[0])
            R = np.empty(m, np.int32)
            cur = np.empty(m, np.int64)
            pc = np.empty(m, np.int64)

        if W == 1:
            # the common sparse case: every set is one machine word
            full = (_ONE << np.uint64(u_n)) - _ONE if u_n < 64 else ~_ZERO
            P0 = (_ONE << np.uint64(p)) - _ONE if p < 64 else ~_ZERO
            stack[0] = P0
            stack[1] = full & ~P0
            d = 0
            descend = True
            while d >= 0:
                b3 = 3 * d
                if descend:
                    descend = False
                    Pw = stack[b3]
                    pcount = _popcount(Pw)
                    word = Pw | stack[b3 + 1]
                    best = 0
                    bestc = -1
                    while word != _ZERO:
                        b = np.int64(trailing_zeros(word))
                        word &= word - _ONE
                        c = np.int64(_popcount(Pw & adj[b]))
                        if c > bestc:
                            bestc = c
                            best = b
                            if c == pcount:
                                break
                    stack[b3 + 2] = Pw & ~adj[best]
                C = stack[b3 + 2]
                if C == _ZERO:
                    d -= 1
                    continue
                w = np.int64(trailing_zeros(C))
                stack[b3 + 2] = C & (C - _ONE)
                a = adj[w]
                nP = stack[b3] & a
                nX = stack[b3 + 1] & a
                bit = _ONE << np.uint64(w)
                stack[b3] &= ~bit
                stack[b3 + 1] |= bit
                R[d + 1] = w
                size = d + 2
                if nP == _ZERO:
                    if nX == _ZERO and size >= min_size:
                        count += 1
                        if size > max_size:
                            max_size = size
                        if materialize:
                            if s_at + 1 > sizes.shape[0]:
                                sizes, s_at = _room(sizes, s_at, 1, block, s_done, s_used)
                            if m_at + size > members.shape[0]:
                                members, m_at = _room(members, m_at, size, block, m_done, m_used)
                            _write_clique_word(v, size, univ, R, members, m_at)
                            sizes[s_at] = size
                            s_at += 1
                            m_at += size
                            n_sizes += 1
                            n_members += size
                            if n_sizes > max_count or n_members + 2 * n_sizes > max_members:
                                return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -1, max_size
                    continue
                if (nP & (nP - _ONE)) == _ZERO:
                    # one candidate q left: R + q is maximal iff no vertex of X sees all of it
                    q = np.int64(trailing_zeros(nP))
                    if (nX & adj[q]) == _ZERO and size + 1 >= min_size:
                        R[d + 2] = q
                        count += 1
                        if size + 1 > max_size:
                            max_size = size + 1
                        if materialize:
                            if s_at + 1 > sizes.shape[0]:
                                sizes, s_at = _room(sizes, s_at, 1, block, s_done, s_used)
                            if m_at + size + 1 > members.shape[0]:
                                members, m_at = _room(members, m_at, size + 1, block, m_done, m_used)
                            _write_clique_word(v, size + 1, univ, R, members, m_at)
                            sizes[s_at] = size + 1
                            s_at += 1
                            m_at += size + 1
                            n_sizes += 1
                            n_members += size + 1
                            if n_sizes > max_count or n_members + 2 * n_sizes > max_members:
                                return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -1, max_size
                    continue
                if size + np.int64(_popcount(nP)) < min_size:
                    continue
                if count > max_count:  # (checked where the search descends: cheaper than per clique)
                    return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -1, max_size
                if stop[0] != 0:
                    return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -2, max_size
                d += 1
                stack[b3 + 3] = nP
                stack[b3 + 4] = nX
                descend = True
            continue

        # level 0: P = [0, p), X = [p, u_n)
        for j in range(W):
            lo = j * 64
            pw = _ZERO
            xw = _ZERO
            for b in range(64):
                k = lo + b
                if k < p:
                    pw |= _ONE << np.uint64(b)
                elif k < u_n:
                    xw |= _ONE << np.uint64(b)
            stack[j] = pw
            stack[W + j] = xw
        pc[0] = p

        d = 0
        # choose pivot + candidates at level d (inlined below as a block)
        descend = True
        while d >= 0:
            base = d * 3 * W
            if descend:
                descend = False
                # Tomita pivot: u in P ∪ X maximising |P ∩ N(u)|
                best = -1
                bestc = -1
                pcount = pc[d]
                done = False
                for j in range(W):
                    word = stack[base + j] | stack[base + W + j]
                    while word != _ZERO:
                        b = trailing_zeros(word)
                        word &= word - _ONE
                        u = j * 64 + b
                        row = u * W
                        c = 0
                        for k in range(W):
                            c += _popcount(stack[base + k] & adj[row + k])
                        if c > bestc:
                            bestc = c
                            best = u
                            if c == pcount:
                                done = True
                                break
                    if done:
                        break
                row = best * W
                for k in range(W):
                    stack[base + 2 * W + k] = stack[base + k] & ~adj[row + k]
                cur[d] = 0
            # next candidate w at this level
            w = -1
            j = cur[d]
            while j < W:
                word = stack[base + 2 * W + j]
                if word != _ZERO:
                    b = trailing_zeros(word)
                    stack[base + 2 * W + j] = word & (word - _ONE)
                    w = j * 64 + b
                    break
                j += 1
            cur[d] = j
            if w < 0:
                d -= 1
                continue
            nbase = base + 3 * W
            row = w * W
            npc = 0
            nx_any = False
            for k in range(W):
                a = adj[row + k]
                np_ = stack[base + k] & a
                nx_ = stack[base + W + k] & a
                stack[nbase + k] = np_
                stack[nbase + W + k] = nx_
                npc += _popcount(np_)
                if nx_ != _ZERO:
                    nx_any = True
            bit = _ONE << np.uint64(w & 63)
            stack[base + (w >> 6)] &= ~bit
            stack[base + W + (w >> 6)] |= bit
            pc[d] -= 1
            R[d + 1] = w
            size = d + 2
            if npc == 0:
                if not nx_any and size >= min_size:
                    count += 1
                    if size > max_size:
                        max_size = size
                    if materialize:
                        if s_at + 1 > sizes.shape[0]:
                            sizes, s_at = _room(sizes, s_at, 1, block, s_done, s_used)
                        if m_at + size > members.shape[0]:
                            members, m_at = _room(members, m_at, size, block, m_done, m_used)
                        _write_clique(v, size, univ, R, members, m_at)
                        sizes[s_at] = size
                        s_at += 1
                        m_at += size
                        n_sizes += 1
                        n_members += size
                        if n_sizes > max_count or n_members + 2 * n_sizes > max_members:
                            return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -1, max_size
                continue
            if size + npc < min_size:
                continue
            if count > max_count:  # (as in the one-word search: checked where it descends)
                return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -1, max_size
            if stop[0] != 0:
                return s_done[:0], s_used[:0], m_done[:0], m_used[:0], -2, max_size
            d += 1
            pc[d] = npc
            descend = True
    _close(sizes, s_at, s_done, s_used)
    _close(members, m_at, m_done, m_used)
    return s_done, s_used, m_done, m_used, count, max_size


@njit(cache=True, nogil=True)
def count_all_cliques(indptr, indices, rank, min_size, max_count):
    """Count every clique (not only maximal ones) with at least ``min_size`` vertices.

    Each clique is counted once, at its lowest-ranked vertex ``v``, as ``{v}`` plus a
    clique of ``v``'s later neighbourhood ``P`` (enumerated on a bitset of ``P`` with
    increasing ids, so each subset is visited once). Stops as soon as the count
    exceeds ``max_count`` and returns ``(count, capped)``; when ``capped`` is True the
    count is ``max_count + 1``.
    """
    n = indptr.shape[0] - 1
    pos = np.full(n, -1, np.int32)
    count = 0
    univ = np.empty(64, np.int32)
    adj = np.empty(64, np.uint64)
    stack = np.empty(64, np.uint64)
    cur = np.empty(64, np.int64)
    for v in range(n):
        rv = rank[v]
        if min_size <= 1:
            count += 1
            if count > max_count:
                return count, True
        p = 0
        d0 = indptr[v + 1] - indptr[v]
        if univ.shape[0] < d0:
            univ = np.empty(max(d0, 2 * univ.shape[0]), np.int32)
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if rank[u] > rv:
                univ[p] = u
                pos[u] = p
                p += 1
        if p == 0 or p + 1 < min_size:
            for i in range(p):
                pos[univ[i]] = -1
            continue
        W = (p + 63) >> 6
        if adj.shape[0] < p * W:
            adj = np.empty(max(p * W, 2 * adj.shape[0]), np.uint64)
        for j in range(p * W):
            adj[j] = _ZERO
        # only neighbours with a larger local id (so each subset is built in increasing order)
        for i in range(p):
            w = univ[i]
            for e in range(indptr[w], indptr[w + 1]):
                j = pos[indices[e]]
                if j > i:
                    adj[i * W + (j >> 6)] |= _ONE << np.uint64(j & 63)
        for i in range(p):
            pos[univ[i]] = -1
        levels = p + 1
        if stack.shape[0] < levels * W:
            stack = np.empty(max(levels * W, 2 * stack.shape[0]), np.uint64)
        if cur.shape[0] < levels:
            cur = np.empty(max(levels, 2 * cur.shape[0]), np.int64)
        for j in range(W):
            lo = j * 64
            word = _ZERO
            for b in range(64):
                if lo + b < p:
                    word |= _ONE << np.uint64(b)
            stack[j] = word
        cur[0] = 0
        d = 0  # clique so far: {v} plus d vertices; stack level d holds candidates
        while d >= 0:
            base = d * W
            w = -1
            j = cur[d]
            while j < W:
                word = stack[base + j]
                if word != _ZERO:
                    b = trailing_zeros(word)
                    stack[base + j] = word & (word - _ONE)
                    w = j * 64 + b
                    break
                j += 1
            cur[d] = j
            if w < 0:
                d -= 1
                continue
            size = d + 2
            if size >= min_size:
                count += 1
                if count > max_count:
                    return count, True
            # candidates for extension: current candidates ∩ N+(w)
            nbase = base + W
            anyc = False
            remaining = 0
            for k in range(W):
                c = stack[base + k] & adj[w * W + k]
                stack[nbase + k] = c
                if c != _ZERO:
                    anyc = True
                    remaining += _popcount(c)
            if anyc and size + remaining >= min_size:
                d += 1
                cur[d] = 0
    return count, False


# ---------------------------------------------------------------------------
# Edge-file I/O for the CLI (whole-process speed): bytes -> int edges -> CSR, and
# cliques -> text lines. Each returns a status so the caller can fall back to the
# exact Python path for anything unusual.
# ---------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def parse_int_edges(buf):
    """Parse an ASCII edge file whose first two columns are integers.

    ``buf`` is the file as uint8. Lines end at ``\\n`` or ``\\r`` (universal
    newlines, like Python text mode); ``#`` starts a comment; blank lines are
    skipped; columns after the second are ignored. Returns ``(src, dst, n_edges,
    ok)``; ``ok`` is False as soon as anything needs the exact Python reader: a
    non-ASCII byte, a line with fewer than two columns, a label that is not
    ``[+-]?[0-9]{1,18}``, or an ASCII separator (0x1c-0x1f) outside a comment.
    """
    n = buf.shape[0]
    cap = 1024
    src = np.empty(cap, np.int64)
    dst = np.empty(cap, np.int64)
    m = 0
    i = 0
    while i < n:
        # one line: up to two integer tokens, then skip to the end of the line
        ntok = 0
        a = np.int64(0)
        b = np.int64(0)
        comment = False
        while i < n:
            c = buf[i]
            if c == 10 or c == 13:
                break
            if c >= 128:
                return src[:0], dst[:0], 0, False
            if comment:
                i += 1
                continue
            if c == 35:  # '#'
                comment = True
                i += 1
                continue
            if c == 32 or c == 9 or c == 11 or c == 12:
                i += 1
                continue
            if 28 <= c <= 31:
                return src[:0], dst[:0], 0, False
            # a token
            if ntok >= 2:
                while i < n:
                    c = buf[i]
                    if c == 10 or c == 13 or c == 32 or c == 9 or c == 11 or c == 12 or c == 35:
                        break
                    if c >= 128 or 28 <= c <= 31:
                        return src[:0], dst[:0], 0, False
                    i += 1
                ntok += 1
                continue
            neg = False
            if c == 43 or c == 45:  # '+' '-'
                neg = c == 45
                i += 1
            val = np.int64(0)
            nd = 0
            while i < n:
                c = buf[i]
                if 48 <= c <= 57:
                    val = val * 10 + (c - 48)
                    nd += 1
                    i += 1
                else:
                    break
            if nd == 0 or nd > 18:
                return src[:0], dst[:0], 0, False
            if i < n:
                c = buf[i]
                if not (c == 10 or c == 13 or c == 32 or c == 9 or c == 11 or c == 12 or c == 35):
                    return src[:0], dst[:0], 0, False
            if neg:
                val = -val
            if ntok == 0:
                a = val
            else:
                b = val
            ntok += 1
        i += 1  # past the line end
        if ntok == 0:
            continue
        if ntok == 1:
            return src[:0], dst[:0], 0, False
        if m == cap:
            cap *= 2
            s2 = np.empty(cap, np.int64)
            d2 = np.empty(cap, np.int64)
            for j in range(m):  # not s2[:m] = src[:m]: Numba's slice assignment adds ~2.7 s to a cold compile
                s2[j] = src[j]
                d2[j] = dst[j]
            src = s2
            dst = d2
        src[m] = a
        dst[m] = b
        m += 1
    return src[:m], dst[:m], m, True


@njit(cache=True, nogil=True)
def _compact_dense(src, dst, lo, span):
    m = src.shape[0]
    pos = np.full(span, -1, np.int64)
    for e in range(m):
        pos[src[e] - lo] = 0
        pos[dst[e] - lo] = 0
    k = 0
    for j in range(span):
        if pos[j] == 0:
            pos[j] = k
            k += 1
    labels = np.empty(k, np.int64)
    for j in range(span):
        if pos[j] >= 0:
            labels[pos[j]] = j + lo
    sp = np.empty(m, np.int64)
    dp = np.empty(m, np.int64)
    for e in range(m):
        sp[e] = pos[src[e] - lo]
        dp[e] = pos[dst[e] - lo]
    return labels, sp, dp


def compact_labels(src, dst):
    """Sorted distinct labels of ``src``/``dst`` and their positions (int64).

    Dense marker array (a kernel) when the label range is at most 4x the number of
    endpoints (the usual case), a NumPy sort otherwise (kept out of the kernel: Numba's
    ``np.unique``/``searchsorted`` added ~3 s of CPU to a cold compile of the clique
    CLI's reader). Returns ``(labels, src_pos, dst_pos)``.
    """
    m = src.shape[0]
    if m == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
    lo = int(min(src.min(), dst.min()))
    hi = int(max(src.max(), dst.max()))
    span = hi - lo + 1
    if span <= 4 * (2 * m) + 1024:
        return _compact_dense(src, dst, lo, span)
    labels = np.unique(np.concatenate((src, dst)))
    return (labels, np.searchsorted(labels, src).astype(np.int64, copy=False),
            np.searchsorted(labels, dst).astype(np.int64, copy=False))


@njit(cache=True, nogil=True)
def edges_to_csr(src, dst, n):
    """Symmetric CSR (int32, sorted rows) of the undirected edges ``src[e]-dst[e]``
    on vertices ``0..n-1``; self-loops dropped, duplicates merged.

    ``src``/``dst`` are C-contiguous int64 arrays with values in ``[0, n)``; the caller
    checks ``2 * len(src) <= int32 max``. Returns ``(indptr, indices, n_self_loops)``;
    the same graph :func:`trustlab.graph.csr_from_edges` builds with NumPy sorts.

    No comparison sort: the edges are bucketed by row once (unsorted rows), then
    scattered a second time walking the columns in increasing order, which leaves
    every row sorted (two counting-sort passes, O(n + m)); duplicates are then
    adjacent and dropped in place. Numba's ``ndarray.sort`` is not used: it adds
    about 2 s of CPU to a cold compile.
    """
    m = src.shape[0]
    deg = np.zeros(n + 1, np.int64)
    loops = 0
    for e in range(m):
        u = src[e]
        v = dst[e]
        if u == v:
            loops += 1
        else:
            deg[u + 1] += 1
            deg[v + 1] += 1
    for v in range(n):
        deg[v + 1] += deg[v]
    tot = deg[n]
    fill = np.empty(n, np.int64)
    for v in range(n):
        fill[v] = deg[v]
    adj = np.empty(tot, np.int32)
    for e in range(m):
        u = src[e]
        v = dst[e]
        if u != v:
            adj[fill[u]] = v
            fill[u] += 1
            adj[fill[v]] = u
            fill[v] += 1
    for v in range(n):
        fill[v] = deg[v]
    out = np.empty(tot, np.int32)
    for c in range(n):  # row c of adj lists every r with an edge r-c: append c to row r
        for k in range(deg[c], deg[c + 1]):
            r = adj[k]
            out[fill[r]] = c
            fill[r] += 1
    indptr = np.zeros(n + 1, np.int32)
    w = 0
    for v in range(n):
        prev = -1
        for k in range(deg[v], deg[v + 1]):
            x = out[k]
            if x != prev:
                out[w] = x
                w += 1
                prev = x
        indptr[v + 1] = w
    if w == tot:
        return indptr, out, loops
    return indptr, out[:w].copy(), loops


@njit(cache=True, nogil=True)
def clique_line_bytes(indptr, indices, lab_len):
    """Byte length of each clique's text line (labels, spaces and the newline)."""
    k = indptr.shape[0] - 1
    out = np.empty(k, np.int64)
    for c in range(k):
        t = 0
        for j in range(indptr[c], indptr[c + 1]):
            t += lab_len[indices[j]] + 1
        out[c] = t if t > 0 else 1
    return out


@njit(cache=True, nogil=True)
def format_clique_lines(indptr, indices, lab_buf, lab_off, c0, c1, out):
    """Write cliques ``c0..c1-1`` as space-separated labels, one per line, into the
    uint8 buffer ``out`` (sized by :func:`clique_line_bytes`); returns bytes written.
    Label ``i`` is ``lab_buf[lab_off[i]:lab_off[i+1]]``."""
    w = 0
    for c in range(c0, c1):
        first = True
        for j in range(indptr[c], indptr[c + 1]):
            if not first:
                out[w] = 32
                w += 1
            first = False
            i = indices[j]
            for t in range(lab_off[i], lab_off[i + 1]):
                out[w] = lab_buf[t]
                w += 1
        out[w] = 10
        w += 1
    return w
