"""Similarity measures, association statistics and the WEAT effect size."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Sequence

import numpy as np

from trustlab._validation import (
    Interval,
    Registry,
    validate_params,
)

SIMILARITIES = Registry("similarity")

STATISTICS = ("mean", "median", "min", "max", "discrete")

COVARIANCE_ESTIMATORS = Registry("covariance estimator")


@SIMILARITIES.register("cosine")
def _sim_cosine(W: np.ndarray, A: np.ndarray, precision=None) -> np.ndarray:
    Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
    An = A / np.linalg.norm(A, axis=1, keepdims=True)
    return Wn @ An.T


@SIMILARITIES.register("euclidean")
def _sim_euclidean(W, A, precision=None):
    from scipy.spatial.distance import cdist

    return cdist(W, A, "euclidean")


@SIMILARITIES.register("manhattan")
def _sim_manhattan(W, A, precision=None):
    from scipy.spatial.distance import cdist

    return cdist(W, A, "cityblock")


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


def _safe_norm(V: np.ndarray, words: Sequence[str]) -> np.ndarray:
    nv = np.linalg.norm(V, axis=1, keepdims=True)
    if (nv == 0).any():
        z = [w for w, x in zip(words, nv[:, 0]) if x == 0]
        raise ValueError(f"cosine is undefined for the zero vectors of {z}.")
    return nv


@validate_params(
    {"sx": ["array-like"], "sy": ["array-like"], "ddof": [Interval(numbers.Integral, 0, None, closed="left")]}
)
def weat_effect_size(sx: Sequence[float], sy: Sequence[float], ddof: int = 1) -> float:
    """WEAT effect size (mean(sx) - mean(sy)) / std(sx u sy, ddof).

    ``ddof=1`` (sample SD) reproduces Caliskan et al.'s published values; the
    Bayesian-WEAT abstract's simulation table implies ``ddof=0``.

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
    sd = allv.std(ddof=ddof)
    diff = sx.mean() - sy.mean()
    if sd == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return float(diff / sd)
