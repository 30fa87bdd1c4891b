"""Similarity measures, association statistics and the WEAT effect size."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Sequence

import numpy as np

from trustlab._scale import pow2_scale
from trustlab._validation import (
    Interval,
    Registry,
    validate_params,
)

SIMILARITIES = Registry("similarity")

STATISTICS = ("mean", "median", "min", "max", "discrete")

COVARIANCE_ESTIMATORS = Registry("covariance estimator")


def unit_rows(V: np.ndarray) -> np.ndarray:
    """The rows of ``V`` (n, d) scaled to unit length, robustly: each row is first
    scaled by a power of two (exact) bringing its largest |entry| into [1, 2), so its
    norm neither overflows (entries ~1e160) nor underflows (entries ~1e-160). Zero rows
    stay zero (callers reject them first)."""
    V = np.asarray(V, dtype=np.float64)
    top = np.max(np.abs(V), axis=1, keepdims=True) if V.shape[1] else np.zeros((V.shape[0], 1))
    with np.errstate(divide="ignore"):
        e = np.where(top > 0, -np.floor(np.log2(np.where(top > 0, top, 1.0))), 0.0)
    Vs = np.ldexp(V, e.astype(np.int64))
    nv = np.linalg.norm(Vs, axis=1, keepdims=True)
    return np.divide(Vs, nv, out=np.zeros_like(Vs), where=nv > 0)


@SIMILARITIES.register("cosine")
def _sim_cosine(W: np.ndarray, A: np.ndarray, precision=None) -> np.ndarray:
    return unit_rows(W) @ unit_rows(A).T


@SIMILARITIES.register("euclidean")
def _sim_euclidean(W, A, precision=None):
    from scipy.spatial.distance import cdist

    f = pow2_scale(W, A)  # distances on exactly scaled vectors: squares stay finite
    return cdist(W * f, A * f, "euclidean") / f


@SIMILARITIES.register("manhattan")
def _sim_manhattan(W, A, precision=None):
    from scipy.spatial.distance import cdist

    f = pow2_scale(W, A)  # distances on exactly scaled vectors: squares stay finite
    return cdist(W * f, A * f, "cityblock") / f


@SIMILARITIES.register("mahalanobis")
def _sim_mahalanobis(W, A, precision):
    # d(w, a) = sqrt((w - a)^T P (w - a)), P the (sparse) precision of the attribute set
    WP = W @ precision
    AP = A @ precision
    q = (
        np.einsum("ij,ij->i", WP, W)[:, None]
        + np.einsum("ij,ij->i", AP, A)[None, :]
        - 2.0 * (WP @ A.T)
    )
    return np.sqrt(np.maximum(q, 0.0))


@COVARIANCE_ESTIMATORS.register("graphical_lasso_cv")
def _prec_glasso(A: np.ndarray) -> np.ndarray:
    from sklearn.covariance import GraphicalLassoCV

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return GraphicalLassoCV(cv=3).fit(A).precision_
        except (FloatingPointError, ValueError, np.linalg.LinAlgError) as exc:
            raise ValueError(
                f"GraphicalLassoCV(cv=3) failed on a {A.shape[0]} x {A.shape[1]} attribute set ({exc}); "
                "use covariance='ledoit_wolf' or pass precision=(P_A, P_B)."
            ) from None


@COVARIANCE_ESTIMATORS.register("ledoit_wolf")
def _prec_lw(A: np.ndarray) -> np.ndarray:
    from sklearn.covariance import LedoitWolf

    return LedoitWolf().fit(A).precision_


def _associations(SA: np.ndarray, SB: np.ndarray, statistic: str) -> np.ndarray:
    """s(w, A, B) for every row w from the similarity blocks SA (n, |A|), SB (n, |B|)."""
    if statistic == "discrete":
        # min_{a, b} |sim(w, a) - sim(w, b)| via sorting: for each w, the closest pair
        # between two sorted 1-D sets.
        out = np.empty(SA.shape[0])
        for i in range(SA.shape[0]):
            a = np.sort(SA[i])
            b = SB[i]
            pos = np.searchsorted(a, b)
            lo = a[np.clip(pos - 1, 0, a.size - 1)]
            hi = a[np.clip(pos, 0, a.size - 1)]
            out[i] = min(np.abs(b - lo).min(), np.abs(b - hi).min())
        return out
    f = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}[statistic]
    return f(SA, axis=1) - f(SB, axis=1)


def _unit_rows_checked(V: np.ndarray, words: Sequence[str]) -> np.ndarray:
    """:func:`unit_rows`, refusing zero rows (cosine is undefined for them) by word."""
    zero = ~np.any(np.asarray(V) != 0, axis=1)
    if zero.any():
        z = [w for w, x in zip(words, zero) if x]
        raise ValueError(f"cosine is undefined for the zero vectors of {z}.")
    return unit_rows(V)


@validate_params(
    {"sx": ["array-like"], "sy": ["array-like"], "ddof": [Interval(numbers.Integral, 0, None, closed="left")]}
)
def weat_effect_size(sx: Sequence[float], sy: Sequence[float], ddof: int = 1) -> float:
    """WEAT effect size (mean(sx) - mean(sy)) / std(sx u sy, ddof).

    ``ddof=1`` (sample SD) reproduces Caliskan et al.'s published values; the
    Bayesian-WEAT abstract's simulation table implies ``ddof=0``.

    Parameters
    ----------
    sx, sy : sequence of float
        Associations s(w, A, B) of the target words of X and of Y.
    ddof : int
        Delta degrees of freedom of the pooled standard deviation.

    Examples
    --------
    >>> round(weat_effect_size([1.0, 2.0], [0.0, 0.5]), 4)
    1.4639
    """
    sx = np.asarray(sx, dtype=np.float64)
    sy = np.asarray(sy, dtype=np.float64)
    allv = np.concatenate([sx, sy])
    if ddof >= allv.size:
        raise ValueError(
            f"ddof={ddof} needs more than {ddof} target words in X u Y; got {allv.size}."
        )
    # the ratio is scale-free: computed on values scaled by a power of two (exact), so the
    # squares of the SD neither overflow (associations ~1e160) nor underflow
    f = pow2_scale(allv)  # (1 when a value is not finite)
    sx, sy, allv = sx * f, sy * f, allv * f
    sd = allv.std(ddof=ddof)
    diff = sx.mean() - sy.mean()
    if sd == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return float(diff / sd)
