"""Numba kernels for the explanation metrics (:mod:`trustlab.metrics.explanation`).

Plain functions on validated, C-contiguous arrays of fixed dtype; they never check
their inputs.  Ragged collections (one saliency vector per example) are passed as a
flat ``float64`` value array plus an ``int64`` offsets array of length ``n + 1``
(example ``i`` is ``values[offsets[i]:offsets[i + 1]]``), the CSR layout.
"""
from __future__ import annotations

import types

import numpy as np
from numba import njit, prange

__all__ = [
    "ragged_select_max",
    "clamped_pearson_pairs",
    "ragged_mass_accuracy",
    "select_kernel",
]

_SIGS = {
    "ragged_select_max": "f8[:](f8[:], i8[:], i8[:], i8[:])",
    "clamped_pearson_pairs": "f8[:](f8[:], i8[:], f8[:], i8[:], i8[:], i8[:], f8)",
    "ragged_mass_accuracy": "f8[:](f8[:], i8[:], f8[:])",
}
# below this much work a parallel region costs more than it saves (thread start-up and
# barriers; much worse on a busy machine), so the serial compilation is used
PARALLEL_MIN_WORK = 200_000


def ragged_select_max(values, v_off, sel, s_off):
    """Per example ``i``: max of ``values[v_off[i] + sel[s_off[i]:s_off[i+1]]]``.

    ``sel`` holds word positions relative to the start of example ``i``; an empty
    selection gives ``-inf``.
    """
    n = v_off.shape[0] - 1
    out = np.empty(n, dtype=np.float64)
    for i in prange(n):
        base = v_off[i]
        m = -np.inf
        for k in range(s_off[i], s_off[i + 1]):
            v = values[base + sel[k]]
            if v > m:
                m = v
        out[i] = m
    return out


def clamped_pearson_pairs(x, x_off, y, y_off, pi, pj, thresh):
    """Pearson r between ragged rows ``x[pi[p]]`` and ``y[pj[p]]`` for every pair ``p``.

    Before correlating, entries whose magnitude is below ``thresh * max|row|`` are set
    to zero (each row clamped with its own maximum), the recipe of Ding & Koehn
    (2021).  Rows of different length, of length < 2, or constant after clamping give
    NaN.
    """
    n_pairs = pi.shape[0]
    out = np.empty(n_pairs, dtype=np.float64)
    for p in prange(n_pairs):
        a0 = x_off[pi[p]]
        la = x_off[pi[p] + 1] - a0
        b0 = y_off[pj[p]]
        lb = y_off[pj[p] + 1] - b0
        if la != lb or la < 2:
            out[p] = np.nan
            continue
        ma = 0.0
        mb = 0.0
        for k in range(la):
            va = abs(x[a0 + k])
            vb = abs(y[b0 + k])
            if va > ma:
                ma = va
            if vb > mb:
                mb = vb
        ta = thresh * ma
        tb = thresh * mb
        sa = 0.0
        sb = 0.0
        for k in range(la):
            va = x[a0 + k]
            vb = y[b0 + k]
            if abs(va) < ta:
                va = 0.0
            if abs(vb) < tb:
                vb = 0.0
            sa += va
            sb += vb
        mean_a = sa / la
        mean_b = sb / la
        sab = 0.0
        saa = 0.0
        sbb = 0.0
        for k in range(la):
            va = x[a0 + k]
            vb = y[b0 + k]
            if abs(va) < ta:
                va = 0.0
            if abs(vb) < tb:
                vb = 0.0
            da = va - mean_a
            db = vb - mean_b
            sab += da * db
            saa += da * da
            sbb += db * db
        if saa == 0.0 or sbb == 0.0:
            out[p] = np.nan
        else:
            r = sab / np.sqrt(saa * sbb)
            if r > 1.0:
                r = 1.0
            elif r < -1.0:
                r = -1.0
            out[p] = r
    return out


def ragged_mass_accuracy(attr, off, gt):
    """Per sentence: ``sum(|a| * h) / sum(|a|)`` (NaN when all attributions are zero)."""
    n = off.shape[0] - 1
    out = np.empty(n, dtype=np.float64)
    for i in prange(n):
        tot = 0.0
        hit = 0.0
        for k in range(off[i], off[i + 1]):
            v = abs(attr[k])
            tot += v
            hit += v * gt[k]
        out[i] = hit / tot if tot > 0.0 else np.nan
    return out


_COMPILED: dict = {}


def select_kernel(name: str, work: int):
    """The serial or the ``parallel=True`` compilation of kernel ``name`` for ``work`` elements.

    Both compile the same plain-Python function (``prange`` is ``range`` when serial), so
    tests can also call ``globals()[name]`` uncompiled.
    """
    parallel = work >= PARALLEL_MIN_WORK
    key = (name, parallel)
    fn = _COMPILED.get(key)
    if fn is None:
        py = globals()[name]
        if parallel:
            # a distinct qualname gives the parallel build its own on-disk cache entry
            py = types.FunctionType(py.__code__, py.__globals__, name + "_parallel", py.__defaults__, py.__closure__)
            py.__qualname__ = name + "_parallel"
        fn = njit(_SIGS[name], cache=True, parallel=parallel)(py)
        _COMPILED[key] = fn
    return fn
