"""Downstream reliability and group-fairness metrics (Rios & Lwowski; Leszczynski et al.; Dixon et al.).

* **CDR / CMR**: cross-dataset and cross-model reliability, the Spearman correlation of
  two per-embedding metric vectors (:func:`cross_dataset_reliability`,
  :func:`cross_model_reliability`, :func:`spearman`).
* **DI**: downstream prediction-disagreement instability (:func:`downstream_instability`).
* **AUC / GAUC** (:func:`roc_auc`), **FPR / FNR per group, FPED and FNED**
  (:func:`group_error_rates`, :func:`fped`, :func:`fned`).
* The published Rios & Lwowski Table 1 and Table 2 cells, shipped as small CSV files,
  and the AVG aggregation (:func:`load_rios_lwowski`, :func:`average_over_models`).

All functions take plain arrays (predictions, scores, metric vectors); no model needed.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import Interval, Options, check_interval, validate_params
from trustlab.datasets import open_data

__all__ = [
    "spearman",
    "cross_dataset_reliability",
    "cross_model_reliability",
    "ReliabilityResult",
    "downstream_instability",
    "InstabilityResult",
    "roc_auc",
    "group_error_rates",
    "GroupRatesResult",
    "fped",
    "fned",
    "load_rios_lwowski",
    "average_over_models",
    "prediction_rates",
    "average_prediction_difference",
]


def _vector(x: Any, name: str, *, min_size: int = 1) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric; got {type(x).__name__}.") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}.")
    if a.size < min_size:
        raise ValueError(f"{name} has {a.size} value(s); at least {min_size} required.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity; remove or impute them first.")
    return a


def _rank_average(a: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given their average rank (scipy.stats.rankdata 'average')."""
    order = np.argsort(a, kind="mergesort")
    s = a[order]
    n = a.size
    new = np.r_[True, s[1:] != s[:-1]]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], n]
    avg = (starts + ends + 1) / 2.0  # mean of 1-based ranks starts+1 .. ends
    rank_sorted = np.repeat(avg, ends - starts)
    r = np.empty(n)
    r[order] = rank_sorted
    return r


@dataclass
class ReliabilityResult(ResultMixin):
    """Result of :func:`spearman` / CDR / CMR: Spearman rho, two-sided p-value (t approximation,
    as scipy), and the number of embeddings compared."""

    value: float
    pvalue: float
    n: int


@validate_params({"x": ["array-like"], "y": ["array-like"]})
def spearman(x: Any, y: Any) -> ReliabilityResult:
    """Spearman rank correlation (average ranks for ties) with scipy's t-based p-value.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Paired values.

    Examples
    --------
    >>> r = spearman([0.91, 0.88, 0.93, 0.85], [0.80, 0.79, 0.83, 0.70])
    >>> r.value
    1.0
    """
    a = _vector(x, "x", min_size=2)
    b = _vector(y, "y", min_size=2)
    if a.size != b.size:
        raise ValueError(f"x has {a.size} values but y has {b.size}; they must describe the same embeddings.")
    ra, rb = _rank_average(a), _rank_average(b)
    ra -= ra.mean()
    rb -= rb.mean()
    den = math.sqrt(float(ra @ ra) * float(rb @ rb))
    if den == 0.0:
        return ReliabilityResult(math.nan, math.nan, int(a.size))
    rho = max(-1.0, min(1.0, float(ra @ rb) / den))
    n = a.size
    if n > 2 and abs(rho) < 1.0:
        from scipy.stats import t as tdist

        tt = rho * math.sqrt((n - 2) / ((1.0 - rho) * (1.0 + rho)))
        p = float(2 * tdist.sf(abs(tt), n - 2))
    else:
        p = 0.0 if abs(rho) == 1.0 and n > 2 else 1.0
    return ReliabilityResult(rho, p, int(n))


def _metric_vector(f: Any, name: str) -> np.ndarray:
    a = np.asarray(f, dtype=np.float64)
    if a.ndim == 2:  # (seeds, embeddings): average over seeds first (Rios & Lwowski 2020: 10 seeds)
        if a.shape[0] == 0:
            raise ValueError(f"{name} has no seeds (shape {a.shape}).")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains NaN or infinity; remove or impute them first.")
        a = a.mean(axis=0)
    return _vector(a, name, min_size=2)


@validate_params({"f_Z": ["array-like"], "f_Zbar": ["array-like"]})
def cross_dataset_reliability(f_Z: Any, f_Zbar: Any) -> ReliabilityResult:
    """Cross-dataset reliability CDR_m(Z, Z̄) = Spearman rho(f(Z, m), f(Z̄, m)) (Rios & Lwowski).

    Entry ``k`` of a metric vector is the metric (AUC, GAUC, FPED or FNED) of model ``m``
    trained with embedding ``k``. A 2-D input of shape ``(seeds, embeddings)`` is averaged
    over seeds first (the paper uses 10 seeds).

    Parameters
    ----------
    f_Z, f_Zbar : array of shape (q,) or (seeds, q)

    Returns
    -------
    ReliabilityResult

    Examples
    --------
    >>> cross_dataset_reliability([0.90, 0.92, 0.88], [0.81, 0.80, 0.79]).value
    0.5
    """
    return spearman(_metric_vector(f_Z, "f_Z"), _metric_vector(f_Zbar, "f_Zbar"))


@validate_params({"f_m": ["array-like"], "f_mbar": ["array-like"]})
def cross_model_reliability(f_m: Any, f_mbar: Any) -> ReliabilityResult:
    """Cross-model reliability CMR_Z(m, m̄) = Spearman rho(f(Z, m), f(Z, m̄)).

    Same computation as :func:`cross_dataset_reliability`, comparing two models trained
    on one dataset.

    Parameters
    ----------
    f_m, f_mbar : array-like of shape (q,) or (seeds, q)
        The metric vectors of the two models over the ``q`` embeddings (a 2-D input is
        averaged over its seeds first).

    Examples
    --------
    >>> cross_model_reliability([[0.9, 0.8, 0.7], [0.92, 0.8, 0.72]], [0.5, 0.6, 0.7]).value
    -1.0
    """
    return spearman(_metric_vector(f_m, "f_m"), _metric_vector(f_mbar, "f_mbar"))


@dataclass
class InstabilityResult(ResultMixin):
    """Result of :func:`downstream_instability`: disagreement rate, 95% Wilson CI, counts."""

    value: float
    n: int
    n_disagree: int
    ci: tuple[float, float]


@validate_params({"pred_a": ["array-like"], "pred_b": ["array-like"]})
def downstream_instability(pred_a: Any, pred_b: Any) -> InstabilityResult:
    """Downstream instability DI = (1/N) sum_i 1[g_X(z_i) != g_X̄(z_i)] (0-1 loss).

    The prediction-disagreement rate of two models (e.g. trained on two embeddings) on the
    same N test inputs (Leszczynski et al. 2020, as used by Rios & Lwowski).

    Parameters
    ----------
    pred_a, pred_b : array-like of shape (N,)
        The two models' predictions on the same inputs.

    Examples
    --------
    >>> downstream_instability([1, 0, 1, 1], [1, 1, 1, 0]).value
    0.5
    """
    a = np.asarray(pred_a)
    b = np.asarray(pred_b)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"pred_a must be a non-empty 1-D array of predicted labels; got shape {a.shape}.")
    if b.shape != a.shape:
        raise ValueError(
            f"pred_a has shape {a.shape} but pred_b has {b.shape}; predictions must be on the same inputs."
        )
    if a.dtype.kind == "f" and not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("predictions contain NaN; pass predicted labels.")
    k = int(np.sum(a != b))
    n = int(a.size)
    from trustlab.metrics.explanation import _wilson

    return InstabilityResult(k / n, n, k, _wilson(k, n))


@validate_params({"y_true": ["array-like"], "y_score": ["array-like"]})
def roc_auc(y_true: Any, y_score: Any) -> float:
    """Area under the ROC curve by the Mann-Whitney statistic (ties count 1/2); GAUC when
    evaluated on the GenTemp templates.

    Equal to :func:`sklearn.metrics.roc_auc_score` for binary labels.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_score : array-like of shape (n,)
        Scores, higher meaning the positive class.

    Raises
    ------
    ValueError
        If only one class is present, or on NaN scores.

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y = np.asarray(y_true)
    s = _vector(y_score, "y_score")
    if y.shape != s.shape:
        raise ValueError(f"y_true has shape {y.shape} but y_score has {s.shape}.")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y_true must be binary (0/1 or bool).")
    pos = y.astype(bool)
    n1 = int(pos.sum())
    n0 = int(pos.size - n1)
    if n1 == 0 or n0 == 0:
        raise ValueError("roc_auc needs both classes in y_true; only one class is present.")
    r = _rank_average(s)
    return float((r[pos].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


@dataclass
class GroupRatesResult(ResultMixin):
    """Result of :func:`group_error_rates`.

    ``fped = sum_t |FPR - FPR_t|`` and ``fned = sum_t |FNR - FNR_t|`` over the groups
    ``t``; ``fpr_group`` / ``fnr_group`` map each group to its rate (NaN when the group has
    no negatives / positives; such a group is left out of the sums and listed in
    ``dropped``).
    """

    fpr: float
    fnr: float
    fped: float
    fned: float
    fpr_group: dict = field(default_factory=dict)
    fnr_group: dict = field(default_factory=dict)
    n_group: dict = field(default_factory=dict)
    threshold: float | None = None
    dropped: list = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        for k in ("fpr_group", "fnr_group", "n_group"):
            d[k] = {str(g): v for g, v in d[k].items()}
        d["dropped"] = [str(x) for x in d["dropped"]]
        return d


def _rates(y: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    neg = ~y
    pos = y
    fpr = float((p & neg).sum() / neg.sum()) if neg.any() else math.nan
    fnr = float((~p & pos).sum() / pos.sum()) if pos.any() else math.nan
    return fpr, fnr


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "groups": ["array-like"],
        "threshold": [Interval(numbers.Real, 0, 1, closed="both"), None],
    }
)
def group_error_rates(y_true: Any, y_pred: Any, groups: Any, *, threshold: float | None = 0.5) -> GroupRatesResult:
    """FPR and FNR overall and per group, and the equality differences FPED and FNED.

    ``FPR = FP / (FP + TN)``, ``FNR = FN / (FN + TP)``; ``FPED = sum_t |FPR - FPR_t|``,
    ``FNED = sum_t |FNR - FNR_t|`` (Dixon et al. 2018; Rios & Lwowski use the Male and
    Female GenTemp groups).

    Parameters
    ----------
    y_true : 1-D array of 0/1
    y_pred : 1-D array
        Scores thresholded as ``score >= threshold`` (the paper does not state its
        threshold; 0.5 is assumed), or hard 0/1 labels with ``threshold=None``.
    groups : 1-D array
        Group label per sample (e.g. "male"/"female").
    threshold : float or None, default 0.5

    Returns
    -------
    GroupRatesResult

    Examples
    --------
    >>> r = group_error_rates([0, 0, 1, 1, 0, 0, 1, 1], [0.7, 0.2, 0.9, 0.8, 0.1, 0.3, 0.4, 0.9],
    ...                       ["m", "m", "m", "m", "f", "f", "f", "f"])
    >>> r.fpr, r.fpr_group, r.fped
    (0.25, {'f': 0.0, 'm': 0.5}, 0.5)
    """
    y = np.asarray(y_true)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y_true must be a non-empty 1-D array; got shape {y.shape}.")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y_true must be binary (0/1 or bool).")
    s = _vector(y_pred, "y_pred")
    g = np.asarray(groups)
    if s.shape != y.shape or g.shape != y.shape:
        raise ValueError(
            f"y_true, y_pred and groups must have the same length; got {y.shape}, {s.shape}, {g.shape}."
        )
    if threshold is None:
        if not np.all((s == 0) | (s == 1)):
            raise ValueError("with threshold=None, y_pred must hold 0/1 labels; pass threshold= for scores.")
        p = s.astype(bool)
    else:
        t = check_interval(threshold, "threshold", func="group_error_rates")
        p = s >= t
    yb = y.astype(bool)
    fpr, fnr = _rates(yb, p)
    fg, ng, cnt, dropped = {}, {}, {}, []
    labels = sorted(set(g.tolist()), key=str)
    if len(labels) < 2:
        raise ValueError(f"groups has a single group {labels}; FPED/FNED compare at least two.")
    fped_sum = 0.0
    fned_sum = 0.0
    for lab in labels:
        m = g == lab
        a, b = _rates(yb[m], p[m])
        fg[lab], ng[lab], cnt[lab] = a, b, int(m.sum())
        if math.isnan(a) or math.isnan(b):
            dropped.append(lab)
        if not math.isnan(a):
            fped_sum += abs(fpr - a)
        if not math.isnan(b):
            fned_sum += abs(fnr - b)
    return GroupRatesResult(fpr, fnr, fped_sum, fned_sum, fg, ng, cnt, threshold, dropped)


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "groups": ["array-like"],
        "threshold": [Interval(numbers.Real, 0, 1, closed="both"), None],
    }
)
def fped(y_true: Any, y_pred: Any, groups: Any, *, threshold: float | None = 0.5) -> float:
    """False-positive equality difference ``sum_t |FPR - FPR_t|`` (see :func:`group_error_rates`).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_pred : array-like of shape (n,)
        Scores (thresholded at ``threshold``) or hard 0/1 predictions (``threshold=None``).
    groups : array-like of shape (n,)
        Group of each instance (e.g. the identity term of a GenTemp sample).
    threshold : float or None
        Decision threshold on ``y_pred``; None when ``y_pred`` already holds 0/1.

    Examples
    --------
    >>> fped([0, 0, 0, 0], [1, 0, 0, 0], ["a", "a", "b", "b"], threshold=None)
    0.5
    """
    return group_error_rates(y_true, y_pred, groups, threshold=threshold).fped


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "groups": ["array-like"],
        "threshold": [Interval(numbers.Real, 0, 1, closed="both"), None],
    }
)
def fned(y_true: Any, y_pred: Any, groups: Any, *, threshold: float | None = 0.5) -> float:
    """False-negative equality difference ``sum_t |FNR - FNR_t|`` (see :func:`group_error_rates`).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_pred : array-like of shape (n,)
        Scores (thresholded at ``threshold``) or hard 0/1 predictions (``threshold=None``).
    groups : array-like of shape (n,)
        Group of each instance (e.g. the identity term of a GenTemp sample).
    threshold : float or None
        Decision threshold on ``y_pred``; None when ``y_pred`` already holds 0/1.

    Examples
    --------
    >>> fned([1, 1, 1, 1], [1, 0, 1, 1], ["a", "a", "b", "b"], threshold=None)
    0.5
    """
    return group_error_rates(y_true, y_pred, groups, threshold=threshold).fned


@validate_params({"y_true": ["array-like"], "y_pred": ["array-like"]})
def prediction_rates(y_true: Any, y_pred: Any) -> dict[str, float]:
    """TPR and TNR of hard binary predictions (GECOBench Table 4: male = positive).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Binary labels and hard 0/1 predictions.

    Examples
    --------
    >>> prediction_rates([1, 1, 0, 0], [1, 0, 0, 0])
    {'tpr': 0.5, 'tnr': 1.0}
    """
    y = np.asarray(y_true)
    p = np.asarray(y_pred)
    if y.ndim != 1 or y.size == 0 or p.shape != y.shape:
        raise ValueError(f"y_true and y_pred must be non-empty 1-D arrays of equal length; got {y.shape}, {p.shape}.")
    for a, nm in ((y, "y_true"), (p, "y_pred")):
        if not np.all((a == 0) | (a == 1)):
            raise ValueError(f"{nm} must be binary (0/1 or bool).")
    yb, pb = y.astype(bool), p.astype(bool)
    if not yb.any() or yb.all():
        raise ValueError("prediction_rates needs both classes in y_true.")
    return {"tpr": float((pb & yb).sum() / yb.sum()), "tnr": float((~pb & ~yb).sum() / (~yb).sum())}


@validate_params({"p_male": ["array-like"], "p_female": ["array-like"]})
def average_prediction_difference(p_male: Any, p_female: Any) -> float:
    """GECOBench APD = (1/N) sum_i |pred(x_i^M, M) - pred(x_i^F, F)|.

    ``p_male[i]`` is the softmax probability of the true class (male) for the male version
    of sentence ``i``, ``p_female[i]`` that of the true class (female) for its female version.

    Parameters
    ----------
    p_male, p_female : array-like of shape (N,)
        Probabilities in [0, 1] of the true class for the male and female version of each sentence.

    Examples
    --------
    >>> round(average_prediction_difference([0.9, 0.8], [0.7, 0.8]), 12)
    0.1
    """
    a = _vector(p_male, "p_male")
    b = _vector(p_female, "p_female")
    if a.size != b.size:
        raise ValueError(f"p_male has {a.size} values but p_female has {b.size}; pass paired sentences.")
    if np.any((a < 0) | (a > 1) | (b < 0) | (b > 1)):
        raise ValueError("probabilities must lie in [0, 1].")
    return float(np.mean(np.abs(a - b)))


@validate_params({"table": [Options({1, 2}, kind=int)]})
def load_rios_lwowski(table: int = 2):
    """The published Rios & Lwowski cells as a long :class:`pandas.DataFrame`.

    ``table=1``: mean AUC/GAUC/FPED/FNED per strategy x model x dataset (column ``mean``);
    ``table=2``: CDR Spearman rho per strategy x model x dataset pair x metric (column
    ``rho``; the minus signs lost in the PDF are restored from the paper's text and AVG rows).
    Both include the paper's AVG rows (``model == "AVG"``).

    Parameters
    ----------
    table : {1, 2}
        The paper's Table 1 (mean metrics) or Table 2 (cross-dataset reliability).

    Examples
    --------
    >>> t2 = load_rios_lwowski(2)
    >>> sorted(t2["model"].unique())
    ['AVG', 'CNN', 'GRU', 'LSTM', 'NBoW']
    """
    import pandas as pd

    if table not in (1, 2):
        raise ValueError(f"table must be 1 or 2; got {table!r}.")
    name = "rios_lwowski_table1_metrics.csv" if table == 1 else "rios_lwowski_table2_cdr.csv"
    with open_data("explain", name, mode="r", encoding="utf-8") as fh:
        return pd.read_csv(fh)


@validate_params({"value": [str, None], "models": ["array-like"]})
def average_over_models(df, value: str | None = None, models: Sequence[str] = ("CNN", "NBoW", "LSTM", "GRU")):
    """The AVG rows of Rios & Lwowski: the mean over the 4 models of each per-model cell.

    For Table 2 this is the mean of the 4 per-model rho (not rho of averaged vectors).

    Parameters
    ----------
    df : pandas.DataFrame
        Long table as returned by :func:`load_rios_lwowski`.
    value : str, optional
        The value column (``"rho"`` or ``"mean"``; inferred if omitted).
    models : sequence of str

    Returns
    -------
    pandas.DataFrame
        One row per remaining key with the averaged value.

    Examples
    --------
    >>> t2 = load_rios_lwowski(2)
    >>> avg = average_over_models(t2)
    >>> round(float(avg.query("strategy == 'Impute' and pair == 'S-A' and metric == 'AUC'")["rho"].iloc[0]), 3)
    0.415
    """
    if value is None:
        value = "rho" if "rho" in df.columns else "mean"
    if value not in df.columns or "model" not in df.columns:
        raise ValueError(f"df must have a 'model' column and a {value!r} column; got {list(df.columns)}.")
    keys = [c for c in df.columns if c not in ("model", value)]
    sub = df[df["model"].isin(list(models))]
    missing = set(models) - set(sub["model"].unique())
    if missing:
        raise ValueError(f"df has no rows for model(s) {sorted(missing)}.")
    return sub.groupby(keys, sort=False, as_index=False)[value].mean()
