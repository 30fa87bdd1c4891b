"""Exact rescaling by powers of two.

Solvers and metrics that compare with absolute tolerances, or square their inputs,
misbehave on values of unusual scale (1e13 weights: rounding noise above the
tolerances; 1e160 vectors: squares overflow; 1e-160: they underflow). Where the answer
does not depend on the scale, the inputs are multiplied by a power of two first: that
is exact in floating point (barring over/underflow), so nothing else changes.
"""
from __future__ import annotations

import math

import numpy as np


def pow2_scale(*arrays: np.ndarray) -> float:
    """A power of two bringing the largest finite |entry| of ``arrays`` into [1, 2)
    (1.0 when every entry is zero or there is none, or the largest is not finite).

    Examples
    --------
    >>> pow2_scale(np.array([3e-9, -1e-9]))  # 3e-9 * 2**29 is in [1, 2)
    536870912.0
    >>> pow2_scale(np.zeros(3)), pow2_scale(np.array([1.5]))
    (1.0, 1.0)
    """
    top = max((float(np.max(np.abs(a))) if np.size(a) else 0.0) for a in arrays) if arrays else 0.0
    if top == 0.0 or not math.isfinite(top):
        return 1.0
    return float(2.0 ** -math.floor(math.log2(top)))
