"""Long element-wise work in bounded pieces, so that a signal is handled promptly.

A Python signal handler (the CLI's SIGTERM/SIGHUP cleanup, Ctrl-C) only runs between
bytecodes of the main thread: while the main thread sits in one C call (a rapidfuzz
``cpdist`` over millions of pairs, a Numba kernel, a sparse product) the signal waits
until that call returns, which took 3-9 s on a few million candidate pairs
(``bench/results/hostile_inputs.md``). The helpers here cut such calls into pieces whose
size is fixed by counts (items, or a per-item cost such as characters or tokens), never
by time, so the pieces, and therefore the results, are the same on every run and
machine; the handler gets its chance at every piece boundary.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

__all__ = ["ITEMS", "CHARS", "BYTES", "SORT", "spans", "work_spans", "text_spans", "vstack", "column_stack",
           "fill_columns", "extend_rows",
           "argsort", "sort", "unique", "take", "sorted_unique", "setdiff_sorted", "factorize", "series_pieces",
           "series_distinct", "ROWS"]

#: items (pairs) per piece of a cheap element-wise pass (~10-50 ms on one core)
ITEMS = 262_144

#: characters (both strings of every pair) per piece of a string-similarity pass:
#: rapidfuzz's token-set ratio handles ~30 million characters a second on one core
CHARS = 2_000_000


def spans(n: int, size: int | None = None) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of consecutive pieces of ``range(n)`` of at most ``size`` items
    (default :data:`ITEMS`).

    Examples
    --------
    >>> list(spans(5, 2))
    [(0, 2), (2, 4), (4, 5)]
    >>> list(spans(0))
    []
    """
    size = max(1, int(ITEMS if size is None else size))
    for a in range(0, int(n), size):
        yield a, min(int(n), a + size)


def work_spans(cost: np.ndarray, budget: int, size: int | None = None, offset: int = 0) -> Iterator[tuple[int, int]]:
    """Pieces of consecutive items whose ``cost`` sums to at most ``budget`` (a single
    item above it is a piece on its own) and that hold at most ``size`` items (default
    :data:`ITEMS`), shifted by ``offset``.

    Examples
    --------
    >>> list(work_spans(np.array([3, 3, 3, 10, 1]), budget=6))
    [(0, 2), (2, 3), (3, 4), (4, 5)]
    """
    n = len(cost)
    if n == 0:
        return
    size = max(1, int(ITEMS if size is None else size))
    work = np.cumsum(np.asarray(cost, np.int64))
    a = 0
    while a < n:
        base = work[a - 1] if a else 0
        b = int(np.searchsorted(work, base + budget, side="right"))
        b = min(max(b, a + 1), a + size, n)
        yield offset + a, offset + b
        a = b


def _lengths(x: Sequence) -> np.ndarray:
    try:
        return np.fromiter(map(len, x), np.int64, len(x))
    except TypeError:  # not all strings (None, NaN): count such an item as one character
        return np.fromiter((len(v) if isinstance(v, str) else 1 for v in x), np.int64, len(x))


def text_spans(a: Sequence, b: Sequence, chars: int | None = None,
               size: int | None = None, lengths: tuple | None = None) -> Iterator[tuple[int, int]]:
    """Pieces of the pairs ``(a[k], b[k])`` holding at most ``chars`` characters (both
    strings; default :data:`CHARS`) and ``size`` pairs (default :data:`ITEMS`); a single
    longer pair is a piece on its own. ``lengths``: the strings' lengths ``(of a, of b)``
    when known (as counted here: an item that is not a string counts as one).

    Examples
    --------
    >>> a = np.array(["ab", "cd", "efgh"], dtype=object)
    >>> list(text_spans(a, a, chars=8))
    [(0, 2), (2, 3)]
    """
    n = len(a)
    chars = CHARS if chars is None else chars
    for s, e in spans(n, size):
        cost = _lengths(a[s:e]) + _lengths(b[s:e]) if lengths is None else \
            np.asarray(lengths[0][s:e], np.int64) + np.asarray(lengths[1][s:e], np.int64)
        yield from work_spans(cost, chars, size, offset=s)


#: bytes copied per piece by :func:`vstack` and :func:`column_stack` (~10-30 ms)
BYTES = 64 << 20


def _rows_per_piece(row_bytes: int) -> int:
    return max(1, BYTES // max(1, row_bytes))


def vstack(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """``np.vstack(arrays)`` (1-d arrays are concatenated) copied in pieces of at most
    :data:`BYTES`; the same array.

    Examples
    --------
    >>> vstack([np.ones((2, 3)), np.zeros((1, 3))]).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    """
    arrays = [np.asarray(a) for a in arrays]
    one_d = all(a.ndim == 1 for a in arrays)
    parts = arrays if one_d else [np.atleast_2d(a) for a in arrays]
    dtype = np.result_type(*parts)
    out = np.empty((sum(len(p) for p in parts), *parts[0].shape[1:]), dtype)
    at = 0
    for p in parts:
        for a, b in spans(len(p), _rows_per_piece(p[:1].nbytes or 1)):
            out[at + a:at + b] = p[a:b]
        at += len(p)
    return out


def column_stack(cols: Sequence[np.ndarray], n: int) -> np.ndarray:
    """``np.ascontiguousarray(np.column_stack(cols))`` of 1-d float arrays of length ``n``
    (an ``(n, 0)`` array when there are none), filled in pieces of at most :data:`BYTES`.

    Examples
    --------
    >>> column_stack([np.arange(2.0), np.ones(2)], 2).tolist()
    [[0.0, 1.0], [1.0, 1.0]]
    """
    if not len(cols):
        return np.empty((n, 0))
    out = np.empty((n, len(cols)), np.result_type(*cols))
    for a, b in spans(n, _rows_per_piece(out[:1].nbytes or 1)):
        for c, v in enumerate(cols):
            out[a:b, c] = v[a:b]
    return out


def fill_columns(out: np.ndarray, start: int, cols: Sequence[np.ndarray]) -> None:
    """``out[:, start + c] = cols[c]`` for 1-d arrays of length ``len(out)``, copied in
    pieces of rows of at most :data:`BYTES` (as :func:`column_stack` fills its matrix).

    Examples
    --------
    >>> out = np.zeros((2, 3))
    >>> fill_columns(out, 1, [np.arange(2.0), np.ones(2)])
    >>> out.tolist()
    [[0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    """
    for a, b in spans(len(out), _rows_per_piece(out[:1].nbytes or 1)):
        for c, v in enumerate(cols):
            out[a:b, start + c] = v[a:b]


def extend_rows(obj: object, name: str, more: np.ndarray) -> None:
    """``obj.name = vstack([obj.name, more])`` (rows appended), the same array, but
    grown in place when ``obj.name`` is the only reference to an array that owns its
    C-contiguous data of the result's dtype: ``ndarray.resize`` reallocates it (large blocks
    are moved by the operating system, not copied), so the old and the new array are not held
    at once. Otherwise (another reference, a view, another dtype) a copy, as :func:`vstack`.

    Examples
    --------
    >>> class Box: pass
    >>> b = Box(); b.x = np.ones((2, 2))
    >>> extend_rows(b, "x", np.zeros((1, 2)))
    >>> b.x.tolist()
    [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    """
    a = getattr(obj, name)
    more = np.asarray(more)
    if not (isinstance(a, np.ndarray) and a.flags.owndata and a.flags.c_contiguous and a.ndim == more.ndim
            and a.ndim >= 1 and a.shape[1:] == more.shape[1:] and np.result_type(a, more) == a.dtype):
        setattr(obj, name, vstack([a, more]))
        return
    n = len(a)
    setattr(obj, name, None)  # ``a`` is then the only reference, if nothing else holds the array
    try:
        a.resize((n + len(more),) + a.shape[1:], refcheck=True)
    except ValueError:  # held elsewhere (or by a view): copied
        setattr(obj, name, vstack([a, more]))
        return
    except BaseException:
        setattr(obj, name, a)
        raise
    for s, e in spans(len(more), _rows_per_piece(more[:1].nbytes or 1)):
        a[n + s:n + e] = more[s:e]
    setattr(obj, name, a)


#: items per sorted piece of :func:`argsort` / :func:`sort` (a stable argsort of 2^20 int64
#: keys takes ~0.1 s on one core; a merge step sorts at most twice as many)
SORT = 1 << 20


def _sorted_pieces(keys: np.ndarray, size: int, with_order: bool):
    """Sort every piece of ``size`` keys (stable): the sorted keys and, with ``with_order``,
    the positions in ``keys`` they come from, both laid out piece by piece."""
    n = len(keys)
    sk = np.empty_like(keys)
    perm = np.empty(n, np.intp) if with_order else None
    for a, b in spans(n, size):
        if with_order:
            o = np.argsort(keys[a:b], kind="stable")
            sk[a:b] = keys[a:b][o]
            perm[a:b] = o + a
        else:
            sk[a:b] = np.sort(keys[a:b])
    return sk, perm


def _splitters(sk: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of a regular sample of every sorted piece of ``sk`` (``k``
    pieces, ``size // k`` apart): between two consecutive ones a piece holds fewer than
    ``size // k`` keys, so the keys strictly between them number fewer than ``size``."""
    n = len(sk)
    k = -(-n // size)
    step = max(1, size // k)
    sample = np.concatenate([sk[a:b:step] for a, b in spans(n, size)])
    # ~k * k values, fewer than n while n <= size ** 2 / 4 (always, at 2^20): in pieces too
    s = sort(sample, size) if len(sample) < n else np.sort(sample)
    keep = np.r_[True, s[1:] != s[:-1]] if s.size else np.zeros(0, bool)
    if s.dtype.kind in "fc" and s.size:  # NaN sorts last and equals nothing: one is enough
        keep[1:] &= ~(np.isnan(s[1:]) & np.isnan(s[:-1]))
    return s[keep]


def _merge_plan(sk: np.ndarray, size: int):
    """Cut the sorted pieces of ``sk`` into groups of consecutive key ranges that hold at
    most ``2 * size`` keys (or keys all equal to one value, already in order), in order:
    yields ``(starts, stops, equal)``, per piece the range of its keys in the group."""
    n = len(sk)
    bounds = list(spans(n, size))
    spl = _splitters(sk, size)
    m = len(spl)
    # per piece: 0, left(s0), right(s0), left(s1), ..., right(s_m-1), piece length
    B = np.empty((len(bounds), 2 * m + 2), np.int64)
    for j, (a, b) in enumerate(bounds):
        run = sk[a:b]
        B[j, 0], B[j, -1] = 0, b - a
        B[j, 1:-1:2] = np.searchsorted(run, spl, side="left")
        B[j, 2:-1:2] = np.searchsorted(run, spl, side="right")
    B += np.array([a for a, _ in bounds], np.int64)[:, None]
    sizes = (B[:, 1:] - B[:, :-1]).sum(0)  # bucket 2t: between splitters, 2t+1: equal to s_t
    first = np.cumsum(sizes) - sizes
    cut = np.r_[True, first[1:] // size != first[:-1] // size]
    big = sizes > size  # only an "equal" bucket can be: on its own, never sorted
    cut |= big
    cut[1:] |= big[:-1]
    edges = np.r_[np.flatnonzero(cut), len(sizes)]
    for g0, g1 in zip(edges[:-1], edges[1:]):
        if sizes[g0:g1].sum():
            yield B[:, g0], B[:, g1], bool(g1 - g0 == 1 and g0 % 2 == 1)


def _gather(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The positions ``starts[j]..stops[j]-1`` of every ``j``, in order."""
    lens = stops - starts
    tot = int(lens.sum())
    return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(tot)


def _piecewise_sort(keys: np.ndarray, size: int | None, with_order: bool):
    keys = np.asarray(keys)
    if keys.ndim != 1:
        raise ValueError(f"expected a 1-d array of keys, got shape {keys.shape}")
    size = max(2, int(SORT if size is None else size))
    n = len(keys)
    if n <= size or keys.dtype.kind not in "biuf":  # one call (other dtypes: NumPy as it is)
        return np.argsort(keys, kind="stable") if with_order else np.sort(keys)
    sk, perm = _sorted_pieces(keys, size, with_order)
    out = np.empty(n, np.intp) if with_order else np.empty_like(keys)
    at = 0
    for starts, stops, equal in _merge_plan(sk, size):
        if equal:  # one value: the pieces' stretches, in piece order, are in order already
            for a, b in zip(starts, stops):
                out[at:at + b - a] = perm[a:b] if with_order else sk[a:b]
                at += b - a
            continue
        idx = _gather(starts, stops)
        if with_order:  # stable: equal keys come piece by piece, each piece's in order
            o = np.argsort(sk[idx], kind="stable")
            out[at:at + len(idx)] = perm[idx][o]
        else:
            out[at:at + len(idx)] = np.sort(sk[idx])
        at += len(idx)
    return out


def argsort(keys: np.ndarray, size: int | None = None) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of a 1-d numeric array, computed with NumPy calls
    on at most ``2 * size`` keys each (default :data:`SORT`): the pieces are sorted one by
    one, then merged range by range (the ranges cut at a regular sample of every sorted
    piece, "sorting by regular sampling"). The same permutation, for every key and piece
    size (ties in original order; NaN last, as NumPy sorts it). The bound on a call holds
    up to ``size ** 2 / 4`` keys (2.7e11 at the default); a range of keys all equal to one
    value, however long, is copied in pieces, never sorted. Other dtypes (object,
    strings) are sorted in one NumPy call.

    Examples
    --------
    >>> keys = np.array([3, 1, 2, 1, 3, 0])
    >>> argsort(keys, size=2).tolist() == np.argsort(keys, kind="stable").tolist()
    True
    """
    return _piecewise_sort(keys, size, True)


def sort(a: np.ndarray, size: int | None = None) -> np.ndarray:
    """``np.sort(a)`` of a 1-d numeric array with NumPy calls on at most ``2 * size``
    items (see :func:`argsort`). The same values; of a float array with both ``-0.0`` and
    ``0.0``, their order among themselves may differ (they compare equal).

    Examples
    --------
    >>> sort(np.array([5, 3, 9, 1, 3]), size=2).tolist()
    [1, 3, 3, 5, 9]
    """
    return _piecewise_sort(a, size, False)


def take(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]`` of a 1-d ``a`` and integer ``idx``, gathered in pieces of :data:`ITEMS`.

    Examples
    --------
    >>> take(np.array([5, 6, 7]), np.array([2, 0, 2])).tolist()
    [7, 5, 7]
    """
    out = np.empty(len(idx), a.dtype)
    for s, e in spans(len(idx)):
        out[s:e] = a[idx[s:e]]
    return out


def unique(a: np.ndarray, size: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(a, return_index=True, return_inverse=True)`` of a 1-d integer array with
    NumPy calls on at most ``2 * size`` items (default :data:`SORT`): the sorted distinct
    values, the position of each one's first occurrence, and each item's index among
    them. The same arrays.

    Examples
    --------
    >>> u, first, inv = unique(np.array([7, 2, 7, 5, 2]), size=2)
    >>> u.tolist(), first.tolist(), inv.tolist()
    ([2, 5, 7], [1, 3, 0], [2, 0, 2, 1, 0])
    """
    a = np.asarray(a).ravel()
    if a.dtype.kind not in "biu":
        raise TypeError(f"unique: expected an integer array, got dtype {a.dtype}")
    n = len(a)
    size = max(2, int(SORT if size is None else size))
    perm = argsort(a, size)
    aux = np.empty_like(a)
    for s, e in spans(n, size):
        aux[s:e] = a[perm[s:e]]
    mask = np.empty(n, bool)
    if n:
        mask[0] = True
    for s, e in spans(n - 1, size):
        np.not_equal(aux[s + 1:e + 1], aux[s:e], out=mask[s + 1:e + 1])
    rank = np.empty(n, np.intp)
    done = -1
    for s, e in spans(n, size):
        np.cumsum(mask[s:e], out=rank[s:e])
        rank[s:e] += done
        done = int(rank[e - 1])
    inv = np.empty(n, np.intp)
    for s, e in spans(n, size):
        inv[perm[s:e]] = rank[s:e]
    keep = np.flatnonzero(mask)  # one pass of n booleans: ~n / 1e9 s
    return aux[keep], perm[keep], inv


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` of a 1-d integer array by sorting (NumPy >= 2.3's hash-based
    ``unique`` is ~20x slower on large random int64 codes), in pieces
    (:func:`sort`); same output."""
    a = sort(np.asarray(a).ravel())
    if not a.size:
        return a
    keep = np.empty(a.size, bool)
    keep[0] = True
    for s, e in spans(a.size - 1):
        np.not_equal(a[s + 1:e + 1], a[s:e], out=keep[s + 1:e + 1])
    return a[keep]


def setdiff_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.setdiff1d(a, b)`` of integer arrays (sorted unique values of ``a`` not in
    ``b``) by sorting and binary search; same output."""
    ua = sorted_unique(a)
    ub = sorted_unique(b)
    if ua.size == 0 or ub.size == 0:
        return ua
    pos = np.minimum(np.searchsorted(ub, ua), ub.size - 1)
    return ua[ub[pos] != ua]


#: records per piece of a per-record pandas pass (string methods, date parsing; ~2-10 us a
#: record, so ~0.1-0.3 s a piece on one core)
ROWS = 1 << 15


def factorize(values, size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values)`` of a 1-d object array (or Series) in pieces of ``size``
    values (default :data:`ITEMS`): the codes (intp, -1 for a missing value) and the
    distinct values as an object array, both in order of first appearance, exactly as one
    call gives them. Every piece is factorized on its own and its distinct values are
    numbered against those of the earlier pieces through a dict (the same hash-and-equal
    rule as pandas' object hash table), so no call sees more than one piece. Arrays of
    another dtype are factorized in one call.

    Examples
    --------
    >>> codes, uniq = factorize(np.array(["b", "a", None, "b", "c", "a"], dtype=object), size=2)
    >>> codes.tolist(), uniq.tolist()
    ([0, 1, -1, 0, 2, 1], ['b', 'a', 'c'])
    """
    import pandas as pd

    arr = values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else np.asarray(values)
    if arr.dtype != object or arr.ndim != 1:
        codes, uniq = pd.factorize(arr)
        return codes, np.asarray(uniq)
    n = len(arr)
    codes = np.empty(n, np.intp)
    seen: dict = {}
    parts = []
    for a, b in spans(n, size):
        lc, lu = pd.factorize(arr[a:b])
        lu = np.asarray(lu, dtype=object)
        g = np.fromiter(map(seen.get, lu, [-1] * len(lu)), np.intp, len(lu))
        new = np.flatnonzero(g < 0)
        if new.size:
            g[new] = np.arange(len(seen), len(seen) + new.size)
            fresh = lu[new]
            seen.update(zip(fresh.tolist(), g[new].tolist()))
            parts.append(fresh)
        ok = lc >= 0
        codes[a:b] = -1
        codes[a:b][ok] = g[lc[ok]]
    uniq = np.concatenate(parts) if parts else np.empty(0, object)
    return codes, uniq


def series_pieces(s, fn, size: int | None = None):
    """``fn(s)`` for an element-wise ``fn`` of a pandas Series (string methods, date
    parsing), computed on pieces of ``size`` rows (default :data:`ROWS`) and concatenated:
    the same Series, index included, when ``fn`` treats every row on its own.

    Examples
    --------
    >>> import pandas as pd
    >>> series_pieces(pd.Series(["A", "b", None]), lambda p: p.str.lower(), size=2).tolist()
    ['a', 'b', None]
    """
    import pandas as pd

    size = ROWS if size is None else size
    if len(s) <= size:
        return fn(s)
    return pd.concat([fn(s.iloc[a:b]) for a, b in spans(len(s), size)])


def series_distinct(s, fn, size: int | None = None):
    """:func:`series_pieces` of ``s`` and ``fn``, with ``fn`` computed once per distinct value
    of ``s``: the same Series (values, dtype, index and name) for an ``fn`` whose result for a
    row depends on that row's value alone (string methods), since real columns repeat their
    names, places and codes and most rows are then a look-up. Missing cells are passed to
    ``fn`` as they are (one of each type: ``None`` and NaN apart); where there are any and ``fn``
    does not return objects (strings, lists), the rows are passed as :func:`series_pieces`
    passes them (a piece of missing cells alone makes the dtype object there, so the dtype
    depends on the pieces). A column that is not of
    object dtype holding strings only (besides missing cells), or whose values are nearly all
    distinct (more than 90 %), goes to :func:`series_pieces` whole: ``1``, ``1.0`` and
    ``True`` are one value to a hash table but not to ``str``.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.Series(["A b", "c", "A b", None, "c"], index=[5, 6, 7, 8, 9], name="x")
    >>> series_distinct(s, lambda p: p.str.lower()).equals(s.str.lower())
    True
    """
    import pandas as pd

    n = len(s)
    if n < 2 or s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) != "string":
        return series_pieces(s, fn, size)
    codes, uniq = factorize(s)
    na = codes < 0
    vals = np.asarray(uniq, dtype=object)
    k = 0
    if na.any():  # the missing cells as they are, one of each type, first (no piece holds only them)
        cells = s.to_numpy(dtype=object)[na]
        types = [type(x) for x in cells]  # None, NaN (float), pd.NA, NaT: each passed as it is
        rep: dict = {}
        for t, x in zip(types, cells):
            rep.setdefault(t, x)
        k = len(rep)
        head = np.empty(k, dtype=object)
        head[:] = list(rep.values())
        vals = np.concatenate([head, vals])
        pos = {t: q for q, t in enumerate(rep)}
        codes = codes + k
        codes[na] = np.fromiter((pos[t] for t in types), np.intp, len(types))
    if vals.size * 10 > n * 9:
        return series_pieces(s, fn, size)
    out = series_pieces(pd.Series(vals, dtype=object), fn, size)
    if k and out.dtype != object:
        # a piece of missing cells alone comes out as objects, so with missing cells the
        # dtype of the pieces over every row may differ: those are computed as they are
        return series_pieces(s, fn, size)
    res = out.iloc[codes]
    res.index = s.index
    res.name = s.name
    return res
