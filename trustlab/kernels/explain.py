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


@njit(cache=True, inline="always")
def _clamped(v, t):
    return 0.0 if abs(v) < t else v


@njit(cache=True)
def _centred_row(x, a0, n, t, buf):
    """Write the clamped row ``x[a0:a0+n]``, shifted by its first entry and scaled to
    [-1, 1], into ``buf``; return False if the row is constant after clamping.

    Shifting by a data value makes near-equal entries subtract exactly (Sterbenz), so
    deviations of one ulp survive; scaling keeps subnormal rows from underflowing.
    Pearson r is invariant to both.
    """
    c0 = _clamped(x[a0], t)
    mu = 0.0
    for k in range(n):
        u = _clamped(x[a0 + k], t) - c0
        buf[k] = u
        mu = max(mu, abs(u))
    if mu == 0.0:
        return False
    if not np.isfinite(mu):  # differences of values near the float64 limit overflow
        m = 0.0
        for k in range(n):
            m = max(m, abs(x[a0 + k]))
        mu = 0.0
        for k in range(n):
            u = _clamped(x[a0 + k], t) / m - c0 / m
            buf[k] = u
            mu = max(mu, abs(u))
    s = 0.0
    for k in range(n):
        buf[k] /= mu
        s += buf[k]
    mean = s / n
    c = 0.0
    for k in range(n):
        c += buf[k] - mean
    mean += c / n
    for k in range(n):
        buf[k] -= mean
    return True


def clamped_pearson_pairs(x, x_off, y, y_off, pi, pj, thresh):
    """Pearson r between ragged rows ``x[pi[p]]`` and ``y[pj[p]]`` for every pair ``p``.

    Before correlating, entries whose magnitude is below ``thresh * max|row|`` are set
    to zero (each row clamped with its own maximum), the recipe of Ding & Koehn
    (2021).  Rows of different length, of length < 2, or constant after clamping give
    NaN; two-entry rows give exactly +-1 (as ``scipy.stats.pearsonr``).  Rows are
    shifted and scaled before the moments are taken (see ``_centred_row``), so tiny,
    huge or near-constant rows keep full accuracy.
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
            ma = max(ma, abs(x[a0 + k]))
            mb = max(mb, abs(y[b0 + k]))
        da = np.empty(la, dtype=np.float64)
        db = np.empty(la, dtype=np.float64)
        if not (_centred_row(x, a0, la, thresh * ma, da) and _centred_row(y, b0, la, thresh * mb, db)):
            out[p] = np.nan
            continue
        if la == 2:
            out[p] = 1.0 if (da[1] > da[0]) == (db[1] > db[0]) else -1.0
            continue
        sab = 0.0
        saa = 0.0
        sbb = 0.0
        for k in range(la):
            sab += da[k] * db[k]
            saa += da[k] * da[k]
            sbb += db[k] * db[k]
        if saa == 0.0 or sbb == 0.0:
            out[p] = np.nan
        else:
            out[p] = min(1.0, max(-1.0, sab / np.sqrt(saa * sbb)))
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
