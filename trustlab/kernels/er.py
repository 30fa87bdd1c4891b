"""Numba kernels for entity resolution (no validation inside: callers pass clean arrays).

Each kernel keeps its explicit signature but is compiled (or loaded from the on-disk
cache) on first use, through the module ``__getattr__`` of :mod:`trustlab._lazy`: importing this module loads no
kernel, and a run loads only the kernels it calls (each load costs 0.1-0.5 s).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from trustlab._lazy import lazy_attributes

_LOADERS: dict = {}


def _lazy(signature: str, **options):
    """Register ``_name`` as kernel ``name`` with this signature, compiled on first use."""
    def register(fn):
        _LOADERS[fn.__name__[1:]] = lambda: njit(signature, cache=True, **options)(fn)
        return fn
    return register


__getattr__, __dir__ = lazy_attributes(globals(), _LOADERS)


@_lazy("int64(int64[:], int64)")
def _count_block_pairs(starts, max_size):  # pragma: no cover - compiled
    total = 0
    for b in range(starts.shape[0] - 1):
        s = starts[b + 1] - starts[b]
        if 1 < s <= max_size:
            total += s * (s - 1) // 2
    return total


@_lazy("void(int64[:], int64[:], int64, int64[:], int64[:])")
def _fill_block_pairs(members, starts, max_size, left, right):  # pragma: no cover - compiled
    """All pairs inside each block (members sorted by block; ``starts`` are offsets)."""
    k = 0
    for b in range(starts.shape[0] - 1):
        lo = starts[b]
        hi = starts[b + 1]
        s = hi - lo
        if s < 2 or s > max_size:
            continue
        for a in range(lo, hi):
            for c in range(a + 1, hi):
                x = members[a]
                y = members[c]
                if x < y:
                    left[k] = x
                    right[k] = y
                else:
                    left[k] = y
                    right[k] = x
                k += 1


@_lazy("float64[:](float64[:], float64[:], float64[:], float64[:])")
def _haversine_km(lat1, lon1, lat2, lon2):  # pragma: no cover - compiled
    out = np.empty(lat1.shape[0])
    r = 6371.0088
    for i in range(lat1.shape[0]):
        p1 = np.radians(lat1[i])
        p2 = np.radians(lat2[i])
        dp = p2 - p1
        dl = np.radians(lon2[i] - lon1[i])
        a = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
        out[i] = 2 * r * np.arcsin(np.sqrt(min(1.0, a)))
    return out


@_lazy("void(int64[:], int64[:], int64[:], int64[:], float64[:], float64[:])", parallel=True)
def _token_overlap(indptr, indices, left, right, jac, ovl):  # pragma: no cover - compiled
    """Jaccard and overlap coefficient of sorted token-id sets, per pair (NaN if one is empty)."""
    for k in prange(left.shape[0]):
        a0 = indptr[left[k]]
        a1 = indptr[left[k] + 1]
        b0 = indptr[right[k]]
        b1 = indptr[right[k] + 1]
        na = a1 - a0
        nb = b1 - b0
        if na == 0 or nb == 0:
            jac[k] = np.nan
            ovl[k] = np.nan
            continue
        inter = 0
        x = a0
        y = b0
        while x < a1 and y < b1:
            u = indices[x]
            v = indices[y]
            if u == v:
                inter += 1
                x += 1
                y += 1
            elif u < v:
                x += 1
            else:
                y += 1
        jac[k] = inter / (na + nb - inter)
        ovl[k] = inter / min(na, nb)


@_lazy("void(int64[:], int64[:], int64[:], float64[:], int64[:])", parallel=True)
def _enumerate_small_components(nodes, starts, woff, wflat, out):  # pragma: no cover - compiled
    """Exact clique partitioning of tiny components by enumerating all set partitions.

    Component ``c`` has nodes ``nodes[starts[c]:starts[c+1]]`` (m <= 8) and a dense
    m x m weight block at ``wflat[woff[c]:]`` with ``-inf`` for forbidden pairs. Writes a
    local cluster id (0..) per node to ``out`` (aligned with ``nodes``).
    """
    for c in prange(starts.shape[0] - 1):
        lo = starts[c]
        m = starts[c + 1] - lo
        off = woff[c]
        a = np.zeros(m, np.int64)
        b = np.zeros(m, np.int64)
        best = -np.inf
        best_a = np.zeros(m, np.int64)
        while True:
            val = 0.0
            ok = True
            for i in range(m):
                for j in range(i + 1, m):
                    if a[i] == a[j]:
                        w = wflat[off + i * m + j]
                        if w == -np.inf:
                            ok = False
                            break
                        val += w
                if not ok:
                    break
            if ok and val > best:
                best = val
                for i in range(m):
                    best_a[i] = a[i]
            i = m - 1
            while i >= 1 and a[i] == b[i] + 1:
                i -= 1
            if i < 1:
                break
            a[i] += 1
            for j in range(i + 1, m):
                a[j] = 0
                b[j] = max(b[j - 1], a[j - 1])
        for i in range(m):
            out[lo + i] = best_a[i]


# ------------------------------------------------------------- cold-cache twins
# While a kernel above is neither loaded in this process nor in Numba's on-disk cache,
# the functions below run an exact NumPy twin (the same output, element for element)
# instead of compiling it: compiling these three costs ~3 s of CPU on the first run
# after an install, more than the work itself on inputs up to the caps. A cap on work,
# not a timer, so the choice is deterministic (and the output the same either way).
_TWIN_MAX_PAIRS = 20_000_000
_TWIN_MAX_ENUM = 50_000_000


def is_ready(name: str) -> bool:
    """True when kernel ``name`` (e.g. ``"count_block_pairs"``) is loaded in this
    process or in Numba's on-disk cache, i.e. when calling it compiles nothing. Probes
    through a signature-free dispatcher of the same function (reads the cache index,
    compiles nothing)."""
    if name in globals():
        return True
    from trustlab.kernels._jit import kernel_ready

    return kernel_ready(njit(cache=True)(globals()["_" + name]))


def block_pair_count(starts: np.ndarray, max_size: int) -> int:
    """Pairs inside the blocks of 2..``max_size`` members (``starts``: block offsets);
    :func:`count_block_pairs` or, on a cold cache, its NumPy twin (the same count).

    Examples
    --------
    >>> import numpy as np
    >>> block_pair_count(np.array([0, 2, 5, 6], np.int64), 10)
    4
    """
    if is_ready("count_block_pairs"):
        return int(__getattr__("count_block_pairs")(starts, np.int64(max_size)))
    s = np.diff(starts)
    s = s[(s > 1) & (s <= max_size)]
    return int((s * (s - 1) // 2).sum())


def block_pairs(members: np.ndarray, starts: np.ndarray, max_size: int, left: np.ndarray,
                right: np.ndarray) -> None:
    """:func:`fill_block_pairs` (every pair inside each block of 2..``max_size``
    members, block by block, ``(min, max)`` in the kernel's loop order) or, on a cold
    cache and up to 20M pairs, its NumPy twin (the same arrays).

    Examples
    --------
    >>> import numpy as np
    >>> left, right = np.empty(4, np.int64), np.empty(4, np.int64)
    >>> block_pairs(np.array([5, 1, 7, 2, 3, 9]), np.array([0, 2, 5, 6]), 10, left, right)
    >>> left.tolist(), right.tolist()
    ([1, 2, 3, 2], [5, 7, 7, 3])
    """
    if left.shape[0] > _TWIN_MAX_PAIRS or is_ready("fill_block_pairs"):
        __getattr__("fill_block_pairs")(members, starts, np.int64(max_size), left, right)
        return
    s = np.diff(starts)
    sel = np.flatnonzero((s >= 2) & (s <= max_size))
    cnt = s[sel] * (s[sel] - 1) // 2
    off = np.concatenate([[0], np.cumsum(cnt)[:-1]]).astype(np.int64)
    for size in np.unique(s[sel]):
        which = s[sel] == size
        lo = starts[sel[which]][:, None]
        ia, ic = np.triu_indices(int(size), 1)  # the kernel's (a, c) loop order
        x, y = members[lo + ia], members[lo + ic]
        pos = off[which][:, None] + np.arange(ia.size)
        left[pos] = np.minimum(x, y)
        right[pos] = np.maximum(x, y)


_RGS: dict[int, np.ndarray] = {}


def _restricted_growth_strings(m: int) -> np.ndarray:
    """Every set partition of m nodes as a restricted growth string, in the order
    :func:`enumerate_small_components` visits them (lexicographic)."""
    if m not in _RGS:
        out = [[0]]
        for _ in range(1, m):
            out = [a + [c] for a in out for c in range(max(a) + 2)]
        _RGS[m] = np.array(out, np.int64).reshape(len(out), m)
    return _RGS[m]


def small_component_labels(nodes: np.ndarray, starts: np.ndarray, woff: np.ndarray, wflat: np.ndarray,
                           out: np.ndarray) -> None:
    """:func:`enumerate_small_components` (the best set partition of each tiny
    component, the first in enumeration order among equal values) or, on a cold cache
    and within a work cap, its NumPy twin: the same values, summed in the kernel's pair
    order, so the same labels.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([-np.inf, 2.0, 2.0, -np.inf])  # one component of 2 nodes, weight 2
    >>> out = np.empty(2, np.int64)
    >>> small_component_labels(np.array([4, 9]), np.array([0, 2]), np.array([0]), w, out)
    >>> out.tolist()
    [0, 0]
    """
    m_all = np.diff(starts)
    work = sum(_bell(int(m)) * int(m) * int(m) for m in m_all) if m_all.size else 0
    if work > _TWIN_MAX_ENUM or is_ready("enumerate_small_components"):
        __getattr__("enumerate_small_components")(nodes, starts, woff, wflat, out)
        return
    for m in np.unique(m_all):
        m = int(m)
        comps = np.flatnonzero(m_all == m)
        R = _restricted_growth_strings(m)
        val = np.zeros((comps.size, R.shape[0]))
        ok = np.ones((comps.size, R.shape[0]), bool)
        for i in range(m):
            for j in range(i + 1, m):
                w = wflat[woff[comps] + i * m + j][:, None]
                same = (R[:, i] == R[:, j])[None, :]
                ok &= ~(same & (w == -np.inf))
                val = np.where(same & ok, val + w, val)
        best = np.argmax(np.where(ok & ~np.isnan(val), val, -np.inf), axis=1)  # the first best, as the kernel
        out[starts[comps][:, None] + np.arange(m)] = R[best]


def _bell(m: int) -> int:
    return (1, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975)[m] if m <= 10 else 10**9


# ------------------------------------------------------------- sparse rows of pairs
# The per-pair products of sparse rows that ``trustlab.er.comparisons`` used to form with
# SciPy (``A[i].multiply(B[j]).sum(1)``, ``Q[i].multiply(one[j])``): the same values in the
# same order, so the same floating-point sums, without the gathered matrices.


@_lazy("void(int64[:], int64[:], boolean[:])")
def _rows_sorted(indptr, indices, out):  # pragma: no cover - compiled
    """Per row: its indices strictly increase (SciPy's canonical format, row by row)."""
    for r in range(indptr.shape[0] - 1):
        ok = indptr[r] <= indptr[r + 1]
        for q in range(indptr[r] + 1, indptr[r + 1]):
            if indices[q - 1] >= indices[q]:
                ok = False
                break
        out[r] = ok


def _reduceat_sum_py(buf, m, fs, fn, fp, fl):  # pragma: no cover - compiled
    """``buf[:m]`` summed as ``np.add.reduceat`` sums a row: the first value plus NumPy's
    pairwise sum of the others (below 8 values one by one from -0.0; up to 128, 8
    accumulators combined in pairs, then the rest one by one; above, the two halves, the
    first a multiple of 8, summed apart: a recursion unrolled here on a stack of frames
    ``fs`` / ``fn`` / ``fp`` / ``fl``, 64 long); 0.0 when ``m`` is 0."""
    if m == 0:
        return 0.0
    top = 0
    fs[0], fn[0], fp[0] = 1, m - 1, 0
    got = 0.0
    while top >= 0:
        s0, n0 = fs[top], fn[top]
        if n0 <= 128:  # a block
            if n0 < 8:
                res = -0.0
                for t in range(s0, s0 + n0):
                    res += buf[t]
            else:
                r0, r1, r2, r3 = buf[s0], buf[s0 + 1], buf[s0 + 2], buf[s0 + 3]
                r4, r5, r6, r7 = buf[s0 + 4], buf[s0 + 5], buf[s0 + 6], buf[s0 + 7]
                t = 8
                while t < n0 - n0 % 8:
                    r0 += buf[s0 + t]
                    r1 += buf[s0 + t + 1]
                    r2 += buf[s0 + t + 2]
                    r3 += buf[s0 + t + 3]
                    r4 += buf[s0 + t + 4]
                    r5 += buf[s0 + t + 5]
                    r6 += buf[s0 + t + 6]
                    r7 += buf[s0 + t + 7]
                    t += 8
                res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
                while t < n0:
                    res += buf[s0 + t]
                    t += 1
            got = res
            top -= 1
            continue
        n2 = n0 // 2
        n2 -= n2 % 8
        if fp[top] == 0:  # the left half first
            fp[top] = 1
            top += 1
            fs[top], fn[top], fp[top] = s0, n2, 0
        elif fp[top] == 1:  # then the right half
            fl[top] = got
            fp[top] = 2
            top += 1
            fs[top], fn[top], fp[top] = s0 + n2, n0 - n2, 0
        else:
            got = fl[top] + got
            top -= 1
    return buf[0] + got


# compiled into the kernels that call it, on their first use (a plain function here: importing
# this module makes no dispatcher)
_reduceat_sum = register_jitable(_reduceat_sum_py)


@register_jitable
def _shared_positions(ap, ak, bp, bk, row_a, row_b, descending, mp, mq):  # pragma: no cover - compiled
    """The positions ``mp`` (in A) and ``mq`` (in B) of the keys rows ``row_a`` of A and
    ``row_b`` of B share (rows sorted by strictly increasing keys ``ak``/``bk``), by
    increasing key (decreasing with ``descending``); returns their number."""
    if descending:
        p, p_end, q, q_end, step = ap[row_a + 1] - 1, ap[row_a] - 1, bp[row_b + 1] - 1, bp[row_b] - 1, -1
    else:
        p, p_end, q, q_end, step = ap[row_a], ap[row_a + 1], bp[row_b], bp[row_b + 1], 1
    m = 0
    while p != p_end and q != q_end:
        if ak[p] == bk[q]:
            mp[m] = p
            mq[m] = q
            m += 1
            p += step
            q += step
        elif (ak[p] > bk[q]) == descending:  # p's key is the one still to be met: move on
            p += step
        else:
            q += step
    return m


@_lazy("void(int64[:], int64[:], float64[:], int64[:], int64[:], float64[:], int64[:], int64[:], boolean, "
       "float64[:])")
def _merge_row_sums(ap, ak, ax, bp, bk, bx, left, right, descending, out):  # pragma: no cover - compiled
    """Per pair ``k``: the products of the entries rows ``left[k]`` of A and ``right[k]`` of B
    share (rows sorted by strictly increasing keys ``ak``/``bk``), the nonzero ones, in
    increasing key order (decreasing with ``descending``), summed as ``np.add.reduceat``
    sums a row (:func:`_reduceat_sum_py`). With finite values these are SciPy's
    ``A[left].multiply(B[right]).sum(1)``, bit for bit: its element-wise product of two
    canonical matrices emits the shared entries by increasing index, its general method
    (rows not sorted by index, each index once) in the reverse of A's stored order."""
    width = 1
    for k in range(left.shape[0]):
        width = max(width, min(ap[left[k] + 1] - ap[left[k]], bp[right[k] + 1] - bp[right[k]]))
    buf = np.empty(width)
    mp = np.empty(width, np.int64)
    mq = np.empty(width, np.int64)
    fs = np.empty(64, np.int64)  # the pairwise sum's frames: start, length, phase, left half's sum
    fn = np.empty(64, np.int64)
    fp = np.zeros(64, np.int64)
    fl = np.zeros(64)
    for k in range(left.shape[0]):
        n = _shared_positions(ap, ak, bp, bk, left[k], right[k], descending, mp, mq)
        m = 0
        for a in range(n):
            v = ax[mp[a]] * bx[mq[a]]
            if v != 0:
                buf[m] = v
                m += 1
        out[k] = _reduceat_sum(buf, m, fs, fn, fp, fl)


@_lazy("void(int64[:], int64[:], int64[:], int64[:], int64[:], int64[:], int64[:], boolean)")
def _row_matches(indptr, indices, left, right, start, qi, qj, write):  # pragma: no cover - compiled
    """Per pair ``k``, the indices rows ``left[k]`` and ``right[k]`` share (rows sorted,
    distinct): without ``write``, their count into ``start[k]``; with it, their positions in
    ``indices`` (ascending index) into ``qi`` / ``qj`` from ``start[k]`` (the counts, summed)."""
    for k in range(left.shape[0]):
        p, pe = indptr[left[k]], indptr[left[k] + 1]
        q, qe = indptr[right[k]], indptr[right[k] + 1]
        n = start[k] if write else 0
        while p < pe and q < qe:
            if indices[p] == indices[q]:
                if write:
                    qi[n] = p
                    qj[n] = q
                n += 1
                p += 1
                q += 1
            elif indices[p] < indices[q]:
                p += 1
            else:
                q += 1
        if not write:
            start[k] = n


@register_jitable
def _popcount(x):  # pragma: no cover - compiled
    """The number of set bits of a non-negative int64."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@_lazy("void(int64[:], int64[:], int64[:], float64[:], float64[:], int64[:], int64[:], int64[:], int64[:], "
       "boolean, float64[:], float64[:], float64[:], float64[:, :], float64[:, :])")
def _record_pair_sums(ptr, key, ids, w, share, mask, common, left, right, descending, dot_w, dot_s, dot_c,
                      best, same):  # pragma: no cover - compiled
    """The whole-record comparison's sums over the words rows ``left[k]`` and ``right[k]`` of
    one encoding share (rows sorted by strictly increasing ``key``; ``ids``: each word's
    column number, the same for the same key), in one merge of the two rows; ``mask``: per
    word of a record, the bit mask of the columns it comes from (a word split equally among
    them, as :func:`trustlab.er.comparisons.column_split` splits it):

    * ``dot_w[k]``: the products ``w * w``, ``dot_s[k]``: the products ``share * 1.0``,
      each as :func:`_merge_row_sums` sums them (the nonzero ones, by increasing key,
      decreasing with ``descending``);
    * ``dot_c[k]``: the products ``w * w * sqrt(fl * fr)`` (``f``: the share of a record's
      columns of the word that are bits of ``common[k]``), summed one by one from 0.0 by
      increasing ``ids`` (a merge of the rows sorted by ``ids``, summed as ``np.bincount``);
    * ``best[k, c]``: the largest ``share / |mask|`` of such a word (both ``f`` above 0) of the
      left record in each of its columns ``c`` in common (left as it is, 0, where there is none);
    * ``same[k, c]`` (``c`` below its number of columns; none when it has none): the products
      ``w * w / sqrt(|ml| * |mr|)`` of the words whose masks share column ``c``, added one by
      one to ``same`` (0 to start with) by increasing ``ids``, then column (as ``np.add.at``
      adds them in :func:`trustlab.er.comparisons.shared_parts`).
    """
    width = 1
    for k in range(left.shape[0]):
        width = max(width, min(ptr[left[k] + 1] - ptr[left[k]], ptr[right[k] + 1] - ptr[right[k]]))
    bw = np.empty(width)
    bs = np.empty(width)
    mp = np.empty(width, np.int64)
    mq = np.empty(width, np.int64)
    fs = np.empty(64, np.int64)
    fn = np.empty(64, np.int64)
    fp = np.zeros(64, np.int64)
    fl = np.zeros(64)
    for k in range(left.shape[0]):
        m = _shared_positions(ptr, key, ptr, key, left[k], right[k], descending, mp, mq)
        mw = 0
        ms = 0
        for a in range(m):
            v = w[mp[a]] * w[mq[a]]
            if v != 0:
                bw[mw] = v
                mw += 1
            v = share[mp[a]] * 1.0
            if v != 0:
                bs[ms] = v
                ms += 1
        dot_w[k] = _reduceat_sum(bw, mw, fs, fn, fp, fl)
        dot_s[k] = _reduceat_sum(bs, ms, fs, fn, fp, fl)
        # the shared words by increasing ids (insertion sort: a few per pair)
        for a in range(1, m):
            pa, qa = mp[a], mq[a]
            b = a - 1
            while b >= 0 and ids[mp[b]] > ids[pa]:
                mp[b + 1] = mp[b]
                mq[b + 1] = mq[b]
                b -= 1
            mp[b + 1] = pa
            mq[b + 1] = qa
        c = common[k]
        tot = 0.0
        slots = same.shape[1]
        for a in range(m):
            p, q = mp[a], mq[a]
            mi, mj = mask[p], mask[q]
            ci, cj = _popcount(mi), _popcount(mj)
            fi = float(_popcount(mi & c)) / float(ci)
            fj = float(_popcount(mj & c)) / float(cj)
            keep = np.sqrt(fi * fj)
            tot += w[p] * w[q] * keep
            if keep > 0:
                sp = share[p] / float(ci)
                mm = mi & c
                col = 0
                while mm:
                    if (mm & 1) and sp > best[k, col]:
                        best[k, col] = sp
                    mm >>= 1
                    col += 1
            mm = mi & mj
            if mm:
                v = w[p] * w[q] / np.sqrt(float(ci * cj))
                col = 0
                while mm and col < slots:
                    if mm & 1:
                        same[k, col] += v
                    mm >>= 1
                    col += 1
        dot_c[k] = tot


@_lazy("void(int64[:], int64[:], float64[:], int64[:], float64[:, :])")
def _row_column_norms(ptr, ids, w, mask, out):  # pragma: no cover - compiled
    """``out[r, c] += w * w / |mask|`` over the words of row ``r`` whose column mask has bit
    ``c``, one by one by increasing ``ids``, then column (``np.add.at`` over the rows' words
    sorted by ``ids``: the same sums, bit for bit)."""
    width = 1
    for r in range(ptr.shape[0] - 1):
        width = max(width, ptr[r + 1] - ptr[r])
    pos = np.empty(width, np.int64)
    for r in range(ptr.shape[0] - 1):
        s, m = ptr[r], ptr[r + 1] - ptr[r]
        for a in range(m):  # insertion sort by ids: rows of a few words
            p = s + a
            b = a - 1
            while b >= 0 and ids[pos[b]] > ids[p]:
                pos[b + 1] = pos[b]
                b -= 1
            pos[b + 1] = p
        for a in range(m):
            p = pos[a]
            mm = mask[p]
            v = w[p] * w[p] / float(_popcount(mm))
            col = 0
            while mm:
                if mm & 1:
                    out[r, col] += v
                mm >>= 1
                col += 1
