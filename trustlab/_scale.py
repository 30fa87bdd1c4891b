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


def pow2_for(top: float, keep: tuple[float, float] | None = None) -> float:
    """The power of two bringing a largest magnitude ``top`` into [1, 2); 1.0 when
    ``top`` is zero or not finite, or lies in the range ``keep`` (lo, hi), inclusive,
    where the caller needs no rescaling.

    Examples
    --------
    >>> pow2_for(3e-9), pow2_for(0.0), pow2_for(5.0, keep=(1.0, 2.0**20))
    (536870912.0, 1.0, 1.0)
    >>> pow2_for(1e-310) == 2.0**1023   # subnormal: the largest power of two, no OverflowError
    True
    """
    if top == 0.0 or not math.isfinite(top) or (keep is not None and keep[0] <= top <= keep[1]):
        return 1.0
    # 2**1023 is the largest power of two a float holds: a subnormal ``top`` (below
    # 2**-1022, e.g. 1e-309) is brought up by it as far as it goes (into [2**-52, 1)),
    # still exactly, instead of overflowing in ``2.0 ** 1024``
    return math.ldexp(1.0, min(-math.floor(math.log2(top)), 1023))


def pow2_scale(*arrays: np.ndarray, keep: tuple[float, float] | None = None) -> float:
    """:func:`pow2_for` of the largest |entry| of ``arrays``.

    Examples
    --------
    >>> pow2_scale(np.array([3e-9, -1e-9]))  # 3e-9 * 2**29 is in [1, 2)
    536870912.0
    >>> pow2_scale(np.zeros(3)), pow2_scale(np.array([1.5])), pow2_scale(np.array([1e3]), keep=(1e-3, 1e3))
    (1.0, 1.0, 1.0)
    """
    top = max((float(np.max(np.abs(a))) if np.size(a) else 0.0) for a in arrays) if arrays else 0.0
    return pow2_for(top, keep)
