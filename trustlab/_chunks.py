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

__all__ = ["ITEMS", "CHARS", "spans", "work_spans", "text_spans"]

#: items (pairs) per piece of a cheap element-wise pass (~10-50 ms on one core)
ITEMS = 262_144

#: characters (both strings of every pair) per piece of a string-similarity pass:
#: rapidfuzz's token-set ratio handles ~30 million characters a second on one core
CHARS = 2_000_000


def spans(n: int, size: int = ITEMS) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of consecutive pieces of ``range(n)`` of at most ``size`` items.

    Examples
    --------
    >>> list(spans(5, 2))
    [(0, 2), (2, 4), (4, 5)]
    >>> list(spans(0))
    []
    """
    size = max(1, int(size))
    for a in range(0, int(n), size):
        yield a, min(int(n), a + size)


def work_spans(cost: np.ndarray, budget: int, size: int = ITEMS, offset: int = 0) -> Iterator[tuple[int, int]]:
    """Pieces of consecutive items whose ``cost`` sums to at most ``budget`` (a single
    item above it is a piece on its own) and that hold at most ``size`` items, shifted
    by ``offset``.

    Examples
    --------
    >>> list(work_spans(np.array([3, 3, 3, 10, 1]), budget=6))
    [(0, 2), (2, 3), (3, 4), (4, 5)]
    """
    n = len(cost)
    if n == 0:
        return
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


def text_spans(a: Sequence, b: Sequence, chars: int = CHARS, size: int = ITEMS) -> Iterator[tuple[int, int]]:
    """Pieces of the pairs ``(a[k], b[k])`` holding at most ``chars`` characters (both
    strings) and ``size`` pairs (a single longer pair is a piece on its own).

    Examples
    --------
    >>> a = np.array(["ab", "cd", "efgh"], dtype=object)
    >>> list(text_spans(a, a, chars=8))
    [(0, 2), (2, 3)]
    """
    n = len(a)
    for s, e in spans(n, size):
        yield from work_spans(_lengths(a[s:e]) + _lengths(b[s:e]), chars, size, offset=s)
