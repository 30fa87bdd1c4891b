"""Shared helpers of the explanation metrics: binomial and mean confidence intervals, ragged arrays and spans."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def _mean_ci(x: np.ndarray) -> tuple[float, float]:
    """95% Student-t interval for the mean of ``x`` (NaN when fewer than 2 values)."""
    n = x.size
    if n < 2:
        return (math.nan, math.nan)
    from scipy.stats import t

    m = float(x.mean())
    se = float(x.std(ddof=1)) / math.sqrt(n)
    h = float(t.ppf(0.975, n - 1)) * se
    return (m - h, m + h)


def _ragged(vectors: Sequence[Any], name: str, *, allow_empty_rows: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Validate a sequence of 1-D numeric vectors and pack them as (values, offsets).

    One conversion per row, then every check runs once on the packed array.
    """
    if isinstance(vectors, np.ndarray) and vectors.ndim == 2:
        vals2 = np.ascontiguousarray(vectors, dtype=np.float64)
        vectors = list(vals2)
    if isinstance(vectors, (str, bytes)) or not isinstance(vectors, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of 1-D arrays (one per example); got {type(vectors).__name__}.")
    if len(vectors) == 0:
        raise ValueError(f"{name} is empty; at least one example is required.")
    try:
        arrs = [np.asarray(v, dtype=np.float64) for v in vectors]
    except (TypeError, ValueError):
        for i, v in enumerate(vectors):
            try:
                np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"{name}[{i}] is not a numeric vector.") from None
        raise
    shapes = [a.shape for a in arrs]
    if not all(len(sh) == 1 for sh in shapes):
        i = next(k for k, sh in enumerate(shapes) if len(sh) != 1)
        raise ValueError(f"{name}[{i}] must be 1-D; got shape {shapes[i]}.")
    lengths = np.fromiter((sh[0] for sh in shapes), dtype=np.int64, count=len(arrs))
    if not allow_empty_rows and np.any(lengths == 0):
        i = int(np.flatnonzero(lengths == 0)[0])
        raise ValueError(f"{name}[{i}] is empty; every example needs at least one word.")
    off = np.zeros(len(arrs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    values = np.concatenate(arrs) if off[-1] > 0 else np.empty(0, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.searchsorted(off, int(np.flatnonzero(~finite)[0]), side="right") - 1)
        raise ValueError(f"{name}[{i}] contains NaN or infinity; attributions must be finite.")
    return np.ascontiguousarray(values, dtype=np.float64), off


def _flat_spans(spans: Sequence[Sequence[tuple[int, int]]], lengths: np.ndarray, name: str):
    """Spans as flat arrays (example id, start, end), validated against the lengths."""
    if len(spans) != lengths.size:
        raise ValueError(
            f"{name} has {len(spans)} examples but the saliency has {lengths.size}; they must match."
        )
    counts = np.fromiter((len(sp) for sp in spans), dtype=np.int64, count=len(spans))
    if np.any(counts == 0):
        i = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"{name}[{i}] is empty; every example needs at least one span.")
    try:
        se = np.array([p for sp in spans for p in sp], dtype=np.int64).reshape(-1, 2)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold (start, end) integer pairs.") from None
    ex_id = np.repeat(np.arange(len(spans), dtype=np.int64), counts)
    s, e = se[:, 0], se[:, 1]
    bad = (s < 0) | (e < s) | (e >= lengths[ex_id])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        i = int(ex_id[k])
        raise ValueError(
            f"{name}[{i}] has span ({int(s[k])}, {int(e[k])}) outside the {int(lengths[i])} words of example {i} "
            "(spans are 0-based and inclusive; the saliency vector must have one entry per word)."
        )
    return ex_id, s, e


def _spans_to_positions(
    spans: Sequence[Sequence[tuple[int, int]]], lengths: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """Expand inclusive spans into word positions (CSR; a word may repeat, harmless for max)."""
    ex_id, s, e = _flat_spans(spans, lengths, name)
    width = e - s + 1
    start_of_span = np.repeat(s - np.r_[0, np.cumsum(width)[:-1]], width)
    pos = start_of_span + np.arange(int(width.sum()), dtype=np.int64)
    per_ex = np.bincount(ex_id, weights=width, minlength=len(spans)).astype(np.int64)
    off = np.zeros(len(spans) + 1, dtype=np.int64)
    np.cumsum(per_ex, out=off[1:])
    return np.ascontiguousarray(pos), off


def _span_sets(spans, lengths, name) -> list[frozenset]:
    ex_id, s, e = _flat_spans(spans, lengths, name)
    sets: list[set] = [set() for _ in range(len(spans))]
    for i, a, b in zip(ex_id.tolist(), s.tolist(), e.tolist()):
        sets[i].update(range(a, b + 1))
    return [frozenset(x) for x in sets]


def _expected_mask(expected: Any, n: int) -> np.ndarray:
    e = np.asarray(expected)
    if e.dtype == bool:
        if e.shape != (n,):
            raise ValueError(f"expected as a boolean mask must have shape ({n},); got {e.shape}.")
        return e.copy()
    if e.size and not np.issubdtype(e.dtype, np.integer):
        raise TypeError("expected must be a boolean mask or an array of example indices (out.pos.idx).")
    e = e.astype(np.int64).ravel()
    if e.size and (e.min() < 0 or e.max() >= n):
        raise ValueError(f"expected holds indices outside [0, {n - 1}]: min {e.min()}, max {e.max()}.")
    m = np.zeros(n, dtype=bool)
    m[e] = True
    return m


def _check_tokens(tokens: Sequence[Any] | None, lengths: np.ndarray, name: str) -> None:
    if tokens is None:
        return
    if len(tokens) != lengths.size:
        raise ValueError(f"tokens has {len(tokens)} examples but {name} has {lengths.size}.")
    for i, t in enumerate(tokens):
        nt = len(t.split()) if isinstance(t, str) else len(t)
        if nt != lengths[i]:
            raise ValueError(
                f"{name}[{i}] has {int(lengths[i])} attributions but example {i} has {nt} tokens; "
                "attribution vectors must have one entry per token."
            )
