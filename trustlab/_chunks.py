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

__all__ = ["ITEMS", "CHARS", "BYTES", "spans", "work_spans", "text_spans", "vstack", "column_stack"]

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
               size: int | None = None) -> Iterator[tuple[int, int]]:
    """Pieces of the pairs ``(a[k], b[k])`` holding at most ``chars`` characters (both
    strings; default :data:`CHARS`) and ``size`` pairs (default :data:`ITEMS`); a single
    longer pair is a piece on its own.

    Examples
    --------
    >>> a = np.array(["ab", "cd", "efgh"], dtype=object)
    >>> list(text_spans(a, a, chars=8))
    [(0, 2), (2, 3)]
    """
    n = len(a)
    chars = CHARS if chars is None else chars
    for s, e in spans(n, size):
        yield from work_spans(_lengths(a[s:e]) + _lengths(b[s:e]), chars, size, offset=s)


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
