"""Numba kernels for entity resolution (no validation inside: callers pass clean arrays).

Each kernel keeps its explicit signature but is compiled (or loaded from the on-disk
cache) on first use, through the module ``__getattr__`` of :mod:`trustlab._lazy`: importing this module loads no
kernel, and a run loads only the kernels it calls (each load costs 0.1-0.5 s).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

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
