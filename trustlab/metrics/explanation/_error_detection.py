"""AEC precision at K (Misra et al. 2021) and the MOXIE influence score and unlike ratio
(Kumar et al. 2021)."""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from trustlab._validation import Interval, check_int, validate_params


@validate_params(
    {
        "scores": ["array-like"],
        "is_error": ["array-like"],
        "k": [Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
    }
)
def precision_at_k(scores: Any, is_error: Any, k: int | Sequence[int]) -> float | np.ndarray:
    """AEC precision at K: the share of true errors among the K highest-scored instances.

    Instances are ranked by decreasing score; ties keep the input order (stable sort).

    Parameters
    ----------
    scores : 1-D array
        P(error) or any score, higher = more likely an error.
    is_error : 1-D array of bool/0-1
        Whether the base model was wrong on each instance.
    k : int or sequence of int
        1 <= K <= number of instances.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> precision_at_k([0.9, 0.1, 0.8, 0.7], [1, 1, 0, 1], [1, 2, 3])
    array([1.        , 0.5       , 0.66666667])
    """
    s = np.asarray(scores, dtype=np.float64)
    e = np.asarray(is_error)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array; got shape {s.shape}.")
    if e.shape != s.shape:
        raise ValueError(f"is_error has shape {e.shape} but scores has {s.shape}.")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contains NaN or infinity.")
    if not np.all((e == 0) | (e == 1)):
        raise ValueError("is_error must be boolean or 0/1.")
    ks = np.atleast_1d(np.asarray(k))
    ks_int = [
        check_int(int(x) if float(x).is_integer() else x, "k", low=1, high=s.size, func="precision_at_k") for x in ks
    ]
    order = np.argsort(-s, kind="stable")
    hits = np.cumsum(e[order].astype(np.float64))
    out = np.array([hits[x - 1] / x for x in ks_int])
    return float(out[0]) if np.ndim(k) == 0 else out


@validate_params({"proba": ["array-like"]})
def uncertainty_scores(proba: Any) -> np.ndarray:
    """Least-confidence uncertainty ``1 - max_c p(c|x)`` (the AEC uncertainty baseline).

    Parameters
    ----------
    proba : array-like of shape (n, n_classes)
        Predicted class probabilities per instance.

    Examples
    --------
    >>> uncertainty_scores([[0.9, 0.1], [0.5, 0.5]]).tolist()
    [0.09999999999999998, 0.5]
    """
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or p.size == 0:
        raise ValueError(f"proba must be a non-empty (n_samples, n_classes) array; got shape {p.shape}.")
    if not np.all(np.isfinite(p)):
        raise ValueError("proba contains NaN or infinity.")
    return 1.0 - p.max(axis=1)


@validate_params({"logits": ["array-like"], "positive": [Interval(numbers.Integral, 0, None, closed='left')]})
def influence_score(logits: Any, positive: int = 1) -> np.ndarray:
    """MOXIE influence score ``s = 2 * softmax(logits)[positive] - 1`` in [-1, 1].

    (The paper prints ``+ 1``, which contradicts its stated range of [-1, 1].)

    Parameters
    ----------
    logits : array-like of shape (n, n_classes)
        The student's logits per token context.
    positive : int
        Index of the class the score is for.

    Examples
    --------
    >>> influence_score([[0.0, 0.0], [0.0, 50.0]]).round(6).tolist()
    [0.0, 1.0]
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim == 1:
        z = z[None, :]
    if z.ndim != 2 or z.shape[1] < 2 or z.shape[0] == 0:
        raise ValueError(f"logits must have shape (n, n_classes >= 2); got {np.shape(logits)}.")
    if not np.all(np.isfinite(z)):
        raise ValueError("logits contains NaN or infinity.")
    positive = check_int(positive, "positive", low=0, high=z.shape[1] - 1, func="influence_score")
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return 2.0 * p[:, positive] - 1.0


@validate_params({"predictions": ["array-like"]})
def unlike_ratio(predictions: Any, label: Any) -> float | np.ndarray:
    """MOXIE unlike ratio: the share of vocabulary substitutions whose prediction differs from ``label``.

    Parameters
    ----------
    predictions : array of shape (|V|,) or (n_contexts, |V|)
        Predicted class per substituted word (argmax of the student output).
    label : int or array of shape (n_contexts,)

    Returns
    -------
    float or numpy.ndarray (one ratio per context; multiply by 100 for the paper's tables)

    Examples
    --------
    >>> unlike_ratio([1, 0, 0, 1], 1)
    0.5
    """
    p = np.asarray(predictions)
    if p.size == 0:
        raise ValueError("predictions is empty.")
    if p.ndim == 1:
        return float(np.mean(p != label))
    if p.ndim != 2:
        raise ValueError(f"predictions must be 1-D or 2-D; got shape {p.shape}.")
    lab = np.asarray(label)
    if lab.ndim == 0:
        lab = np.full(p.shape[0], lab)
    if lab.shape != (p.shape[0],):
        raise ValueError(f"label must be a scalar or have shape ({p.shape[0]},); got {lab.shape}.")
    return np.mean(p != lab[:, None], axis=1)
