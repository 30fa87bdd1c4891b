"""Numeric array inputs: :func:`check_finite_array`."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_finite_array"]


def check_finite_array(
    X: Any,
    name: str = "X",
    *,
    ndim: int | None = 2,
    dtype: Any = np.float64,
    allow_empty: bool = False,
    copy: bool = False,
) -> np.ndarray:
    """Convert to a C-contiguous array of ``dtype`` and reject NaN/inf and bad shapes.

    Parameters
    ----------
    X : array-like
        The input.
    name : str
        Its name in messages.
    ndim : int or None
        Required number of dimensions (None: any).
    dtype : numpy dtype
        Target dtype (complex input is refused for a real dtype, never silently cut).
    allow_empty : bool
        Accept an array with no elements.
    copy : bool
        Always return a fresh copy.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> check_finite_array([[1, 2], [3, 4]]).dtype
    dtype('float64')
    """
    if np.dtype(dtype).kind != "c" and getattr(getattr(X, "dtype", None), "kind", None) == "c":
        # NumPy would drop the imaginary parts with only a ComplexWarning: silent data loss
        raise ValueError(
            f"{name} has complex dtype {X.dtype}; trustlab needs real numbers. Pass the real part "
            f"({name}.real) or the magnitude (np.abs({name})) explicitly."
        )
    try:
        A = np.array(X, dtype=dtype, copy=True) if copy else np.asarray(X, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} could not be converted to a numeric array of dtype {np.dtype(dtype).name}: {exc}. "
            "Pass a numeric array (ragged lists are not supported)."
        ) from None
    if ndim is not None and A.ndim != ndim:
        hint = " Reshape your data with X.reshape(1, -1) for a single sample." if ndim == 2 and A.ndim == 1 else ""
        raise ValueError(
            f"Expected a {ndim}D array for {name}, got {A.ndim}D array with shape {A.shape} instead.{hint}"
        )
    if not allow_empty and A.size == 0:
        raise ValueError(f"{name} is empty (shape {A.shape}); at least one element is required.")
    if A.dtype.kind == "f":
        bad = ~np.isfinite(A)
        if bad.any():
            idx = np.argwhere(bad)[0]
            raise ValueError(
                f"{name} contains NaN or infinity ({int(bad.sum())} value(s); first at index "
                f"{tuple(int(i) for i in idx)}). Remove or impute them first."
            )
    return np.ascontiguousarray(A)
