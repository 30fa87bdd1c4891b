"""Choosing the projection dimension ``m`` and measuring what a drawn Φ does.

PrivEmb needs ``m = Ω((ω(X) + √ln(1/δ))² / β²)`` (Gordon's theorem); the paper leaves
the constant open. Its appendix pairs β = 0.93 / 0.66 / 0.468 with m = 50 / 100 / 200 at
d = 300, δ = 1e-6, which is matched by constant 1 with ω = √log₂ d:

    m = ⌈(√log₂ d + √ln(1/δ))² / β²⌉

This is the documented default (a convention fitted to the paper, not a theorem);
pass ``m`` explicitly to override.
"""
from __future__ import annotations

import numbers

import math

import numpy as np

from trustlab._validation import check_finite_array, check_int, check_interval
from trustlab._validation import Interval, Options, validate_params

__all__ = [
    "calibrate_m",
    "beta_for_m",
    "projection_matrix",
    "empirical_sensitivity",
    "jl_distortion",
]


def _width_term(d: int, delta: float) -> float:
    return (math.sqrt(math.log2(d)) + math.sqrt(math.log(1.0 / delta))) ** 2


@validate_params({"d": [Interval(numbers.Integral, 2, None, closed='left')], "delta": [Interval(numbers.Real, 0, 1, closed='neither')], "beta": [Interval(numbers.Real, 0, 1, closed='neither')]})
def calibrate_m(d: int, delta: float = 1e-6, beta: float = 0.9) -> int:
    """Default projection dimension ``m = ⌈(√log₂ d + √ln(1/δ))² / β²⌉``.

    Parameters
    ----------
    d : int
        Input dimension (>= 2).
    delta : float
        Failure probability, in (0, 1).
    beta : float
        Allowed JL distortion, in (0, 1).

    Returns
    -------
    int
        The projection dimension (may exceed ``d``; :func:`trustlab.privacy.privatize`
        rejects that unless asked).

    Examples
    --------
    >>> calibrate_m(300, 1e-6, 0.66)
    100
    >>> calibrate_m(300, 1e-6, 0.9)
    54
    """
    d = check_int(d, "d", low=2, func="calibrate_m")
    delta = check_interval(delta, "delta", low=0, high=1, func="calibrate_m")
    beta = check_interval(beta, "beta", low=0, high=1, func="calibrate_m")
    return int(math.ceil(_width_term(d, delta) / beta**2 - 1e-9))


@validate_params({"d": [Interval(numbers.Integral, 2, None, closed='left')], "m": [Interval(numbers.Integral, 1, None, closed='left')], "delta": [Interval(numbers.Real, 0, 1, closed='neither')]})
def beta_for_m(d: int, m: int, delta: float = 1e-6) -> float:
    """Inverse of :func:`calibrate_m`: the β that a projection dimension ``m`` buys.

    Examples
    --------
    >>> round(beta_for_m(300, 100), 2)
    0.66
    """
    d = check_int(d, "d", low=2, func="beta_for_m")
    m = check_int(m, "m", low=1, func="beta_for_m")
    delta = check_interval(delta, "delta", low=0, high=1, func="beta_for_m")
    return math.sqrt(_width_term(d, delta) / m)


@validate_params({"m": [Interval(numbers.Integral, 1, None, closed='left')], "d": [Interval(numbers.Integral, 1, None, closed='left')], "seed": [Interval(numbers.Integral, 0, None, closed='left')]})
def projection_matrix(m: int, d: int, seed: int) -> np.ndarray:
    """The public PrivEmb projection Φ ∈ R^{m×d}, i.i.d. N(0, 1/m) entries.

    Drawn with NumPy's PCG64 from ``seed`` on the host, so every backend uses the same
    Φ and anybody holding the release record can rebuild it.

    Examples
    --------
    >>> P = projection_matrix(50, 300, seed=1)
    >>> P.shape, P.dtype
    ((50, 300), dtype('float64'))
    """
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    phi = rng.standard_normal((m, d))
    phi /= math.sqrt(m)
    return np.ascontiguousarray(phi)


@validate_params({"phi": ["array-like"], "X": ["array-like"], "max_points": [Interval(numbers.Integral, 2, None, closed='left')], "min_dist": [Interval(numbers.Real, 0, None, closed='neither')]})
def empirical_sensitivity(phi: np.ndarray, X, *, max_points: int = 1000, min_dist: float = 1e-8) -> float:
    """``max ‖Φx − Φx'‖ / ‖x − x'‖`` over all pairs of (up to ``max_points``) rows of X.

    This is the sensitivity of ``x ↦ Φx`` *on the sample* (P3.2); batched through Gram
    matrices. The worst case over all of R^d is the spectral norm of Φ (≈ 1 + √(d/m)),
    which :func:`trustlab.privacy.privatize` reports separately.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 30))
    >>> s = empirical_sensitivity(projection_matrix(20, 30, 0), X)
    >>> 0.5 < s < 3
    True
    """
    X = check_finite_array(X, "X")
    phi = np.asarray(phi, dtype=np.float64)
    if X.shape[0] > max_points:
        X = X[np.linspace(0, X.shape[0] - 1, max_points).astype(np.int64)]
    P = X @ phi.T
    G = X @ X.T
    H = P @ P.T
    gx = np.diag(G)
    hx = np.diag(H)
    den = gx[:, None] + gx[None, :] - 2.0 * G
    num = hx[:, None] + hx[None, :] - 2.0 * H
    iu = np.triu_indices(X.shape[0], 1)
    den = den[iu]
    num = num[iu]
    ok = den > min_dist**2
    if not ok.any():
        return float("nan")
    return float(np.sqrt(np.max(np.maximum(num[ok], 0.0) / den[ok])))


@validate_params({"phi": ["array-like"], "X": ["array-like"], "Y": ["array-like", None]})
def jl_distortion(phi: np.ndarray, X, Y=None) -> dict:
    """Worst relative JL distortions of Φ on the rows of X (and pairs X × Y).

    Returns ``norm``: max |‖Φx‖ − ‖x‖| / ‖x‖ over rows of X, and with ``Y``,
    ``inner``: max |⟨Φx,Φy⟩ − ⟨x,y⟩| / (‖x‖‖y‖) and ``distance``: max
    |‖Φx−Φy‖ − ‖x−y‖| / ‖x−y‖ over all pairs. Gordon's theorem (P3.4) says each is
    ≤ β w.p. ≥ 1−δ at the calibrated m.

    Examples
    --------
    >>> X = np.random.default_rng(7).standard_normal((20, 300))
    >>> jl_distortion(projection_matrix(174, 300, seed=1), X)["norm"] < 0.5
    True
    """
    X = check_finite_array(X, "X")
    phi = np.asarray(phi, dtype=np.float64)
    PX = X @ phi.T
    nx = np.linalg.norm(X, axis=1)
    out = {"norm": float(np.max(np.abs(np.linalg.norm(PX, axis=1) - nx) / nx))}
    if Y is not None:
        Y = check_finite_array(Y, "Y")
        PY = Y @ phi.T
        ny = np.linalg.norm(Y, axis=1)
        out["inner"] = float(np.max(np.abs(PX @ PY.T - X @ Y.T) / np.outer(nx, ny)))
        D = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2)
        DP = np.linalg.norm(PX[:, None, :] - PY[None, :, :], axis=2)
        ok = D > 0
        out["distance"] = float(np.max(np.abs(DP[ok] - D[ok]) / D[ok]))
    return out
