"""Clustering metrics for entity resolution (the xER paper's Table 5 set and more).

All functions take two label vectors of equal length (any hashable labels; one entry
per record) and count over **all** record pairs, so pairs removed by blocking count
as false negatives (the xER paper's pairwise P/R/F1 and Table 5). Homogeneity, completeness, V-measure,
ARI and FMI follow scikit-learn's definitions exactly; they are computed here from one
sparse contingency table so a full report costs a single pass.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from trustlab._validation import Interval, validate_params

__all__ = [
    "pairwise_precision_recall_f1",
    "bcubed_precision_recall_f1",
    "homogeneity_completeness_v_measure",
    "adjusted_rand_index",
    "fowlkes_mallows",
    "cluster_count_error",
    "cluster_size_error",
    "clustering_report",
]


def _encode(pred: Any, truth: Any) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(pred)
    t = np.asarray(truth)
    if p.ndim != 1 or t.ndim != 1:
        raise ValueError(
            f"pred and truth must be 1-D label vectors; got shapes {p.shape} and {t.shape}."
        )
    if p.shape[0] != t.shape[0]:
        raise ValueError(
            f"pred and truth must have the same length (one label per record); got "
            f"{p.shape[0]} and {t.shape[0]}."
        )
    if p.shape[0] == 0:
        raise ValueError("pred and truth are empty; at least one record is required.")
    for name, a in (("pred", p), ("truth", t)):
        if a.dtype.kind == "f" and np.isnan(a).any():
            raise ValueError(f"{name} contains NaN labels; give every record a cluster id.")
    _, pc = np.unique(p, return_inverse=True)
    _, tc = np.unique(t, return_inverse=True)
    return pc.astype(np.int64).ravel(), tc.astype(np.int64).ravel()


def _contingency(pc: np.ndarray, tc: np.ndarray):
    """Non-zero cells of the contingency table plus the marginals."""
    n_t = int(tc.max()) + 1
    key = pc * n_t + tc
    _, cell = np.unique(key, return_counts=True)
    a = np.bincount(pc).astype(np.float64)  # predicted cluster sizes
    b = np.bincount(tc).astype(np.float64)  # true cluster sizes
    return cell.astype(np.float64), a, b


def _comb2(x: np.ndarray) -> float:
    return float(np.sum(x * (x - 1.0) / 2.0))


def _pair_counts(pc, tc):
    cell, a, b = _contingency(pc, tc)
    tp = _comb2(cell)
    pred_pairs = _comb2(a)
    true_pairs = _comb2(b)
    return tp, pred_pairs, true_pairs


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def pairwise_precision_recall_f1(pred: Sequence, truth: Sequence) -> tuple[float, float, float]:
    """Pairwise precision, recall and F1 over all record pairs.

    A pair is predicted positive when both records share a predicted cluster and
    truly positive when they share a true entity. With no predicted pairs precision
    is 1.0 (nothing wrong was merged); with no true pairs recall is 1.0.

    Parameters
    ----------
    pred, truth : array-like of shape (n,)
        Predicted cluster id and true entity id of each record.

    Returns
    -------
    (precision, recall, f1) : tuple of float

    Examples
    --------
    >>> pairwise_precision_recall_f1([0, 0, 1, 1], [0, 0, 0, 1])
    (0.5, 0.3333333333333333, 0.4)
    """
    pc, tc = _encode(pred, truth)
    tp, pp, tpairs = _pair_counts(pc, tc)
    p = tp / pp if pp > 0 else 1.0
    r = tp / tpairs if tpairs > 0 else 1.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return float(p), float(r), float(f)


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def bcubed_precision_recall_f1(pred: Sequence, truth: Sequence) -> tuple[float, float, float]:
    """B-cubed precision, recall and F1 (Bagga & Baldwin 1998), averaged over records.

    Parameters
    ----------
    pred : sequence of shape (n,)
        Predicted cluster (entity) id per record; any hashable labels.
    truth : sequence of shape (n,)
        True cluster id per record.

    Examples
    --------
    >>> [round(v, 4) for v in bcubed_precision_recall_f1([0, 0, 1], [0, 0, 0])]
    [1.0, 0.5556, 0.7143]
    """
    pc, tc = _encode(pred, truth)
    n_t = int(tc.max()) + 1
    key = pc * n_t + tc
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    inter = cnt[inv.ravel()].astype(np.float64)
    a = np.bincount(pc)[pc].astype(np.float64)
    b = np.bincount(tc)[tc].astype(np.float64)
    p = float(np.mean(inter / a))
    r = float(np.mean(inter / b))
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, float(f)


def _entropy(counts: np.ndarray) -> float:
    n = counts.sum()
    pr = counts[counts > 0] / n
    return float(-np.sum(pr * np.log(pr)))


@validate_params(
    {"pred": ["array-like"], "truth": ["array-like"], "beta": [Interval(numbers.Real, 0, None, closed="neither")]}
)
def homogeneity_completeness_v_measure(
    pred: Sequence, truth: Sequence, *, beta: float = 1.0
) -> tuple[float, float, float]:
    """Homogeneity, completeness and V-measure (Rosenberg & Hirschberg 2007).

    Same definitions as :func:`sklearn.metrics.homogeneity_completeness_v_measure`
    (natural log; a single-class side gives 1.0).

    Parameters
    ----------
    pred : sequence of shape (n,)
        Predicted cluster (entity) id per record; any hashable labels.
    truth : sequence of shape (n,)
        True cluster id per record.
    beta : float
        Weight of completeness against homogeneity in the V-measure (1: harmonic mean).

    Examples
    --------
    >>> [round(v, 12) for v in homogeneity_completeness_v_measure([0, 0, 1, 1], [0, 0, 1, 1])]
    [1.0, 1.0, 1.0]
    """
    pc, tc = _encode(pred, truth)
    n = float(pc.shape[0])
    cell, a, b = _contingency(pc, tc)
    h_t = _entropy(b)
    h_p = _entropy(a)
    # mutual information from the non-zero cells
    n_t = int(tc.max()) + 1
    key = pc * n_t + tc
    ukey, cnt = np.unique(key, return_counts=True)
    pi = ukey // n_t
    tj = ukey % n_t
    cnt = cnt.astype(np.float64)
    mi = float(np.sum(cnt / n * (np.log(cnt * n) - np.log(a[pi] * b[tj]))))
    mi = max(mi, 0.0)
    hom = 1.0 if h_t == 0 else mi / h_t
    com = 1.0 if h_p == 0 else mi / h_p
    if hom + com == 0:
        v = 0.0
    else:
        v = (1 + beta) * hom * com / (beta * hom + com)
    return float(hom), float(com), float(v)


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def adjusted_rand_index(pred: Sequence, truth: Sequence) -> float:
    """Adjusted Rand index (Hubert & Arabie 1985), as :func:`sklearn.metrics.adjusted_rand_score`.

    Parameters
    ----------
    pred : sequence of shape (n,)
        Predicted cluster (entity) id per record; any hashable labels.
    truth : sequence of shape (n,)
        True cluster id per record.

    Examples
    --------
    >>> adjusted_rand_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    pc, tc = _encode(pred, truth)
    n = float(pc.shape[0])
    tp, pp, tpairs = _pair_counts(pc, tc)
    total = n * (n - 1) / 2.0
    if total == 0:
        return 1.0
    expected = pp * tpairs / total
    max_index = (pp + tpairs) / 2.0
    if max_index == expected:  # both trivial partitions (sklearn's special cases)
        return 1.0
    return float((tp - expected) / (max_index - expected))


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def fowlkes_mallows(pred: Sequence, truth: Sequence) -> float:
    """Fowlkes–Mallows index sqrt(P·R) over pairs, as :func:`sklearn.metrics.fowlkes_mallows_score`.

    Parameters
    ----------
    pred : sequence of shape (n,)
        Predicted cluster (entity) id per record; any hashable labels.
    truth : sequence of shape (n,)
        True cluster id per record.

    Examples
    --------
    >>> fowlkes_mallows([0, 0, 1, 1], [0, 0, 1, 1])
    1.0
    """
    pc, tc = _encode(pred, truth)
    tp, pp, tpairs = _pair_counts(pc, tc)
    if pp == 0 or tpairs == 0:
        return 0.0
    return float(np.sqrt(tp / pp) * np.sqrt(tp / tpairs))


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def cluster_count_error(pred: Sequence, truth: Sequence) -> float:
    """Relative error in the number of entities: ``(n_pred - n_true) / n_true``.

    Positive means over-splitting (too many entities), negative over-merging.

    Parameters
    ----------
    pred : sequence of shape (n,)
        Predicted cluster (entity) id per record; any hashable labels.
    truth : sequence of shape (n,)
        True cluster id per record.

    Examples
    --------
    >>> cluster_count_error([0, 1, 2, 3], [0, 0, 1, 1])
    1.0
    """
    pc, tc = _encode(pred, truth)
    n_p = int(pc.max()) + 1
    n_t = int(tc.max()) + 1
    return float((n_p - n_t) / n_t)


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def cluster_size_error(pred: Sequence, truth: Sequence) -> float:
    """Mean absolute error of each record's cluster size: ``mean_i |s_pred(i) - s_true(i)|``.

    Zero iff every record sits in a cluster of the right size (a cheap check of the
    size distribution that weights large entities by their records).

    Parameters
    ----------
    pred : sequence of shape (n,)
        Predicted cluster (entity) id per record; any hashable labels.
    truth : sequence of shape (n,)
        True cluster id per record.

    Examples
    --------
    >>> cluster_size_error([0, 0, 1, 1], [0, 0, 0, 0])
    2.0
    """
    pc, tc = _encode(pred, truth)
    a = np.bincount(pc)[pc].astype(np.float64)
    b = np.bincount(tc)[tc].astype(np.float64)
    return float(np.mean(np.abs(a - b)))


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def clustering_report(pred: Sequence, truth: Sequence) -> dict[str, float]:
    """All metrics in one dict (pairwise, B-cubed, Table 5 set, count/size errors).

    Parameters
    ----------
    pred : sequence of shape (n,)
        Predicted cluster (entity) id per record; any hashable labels.
    truth : sequence of shape (n,)
        True cluster id per record.

    Examples
    --------
    >>> r = clustering_report([0, 0, 1], [0, 0, 1])
    >>> r["f1"], r["ari"], r["n_entities"]
    (1.0, 1.0, 2)
    """
    pc, tc = _encode(pred, truth)
    p, r, f = pairwise_precision_recall_f1(pc, tc)
    bp, br, bf = bcubed_precision_recall_f1(pc, tc)
    h, c, v = homogeneity_completeness_v_measure(pc, tc)
    return {
        "precision": p,
        "recall": r,
        "f1": f,
        "bcubed_precision": bp,
        "bcubed_recall": br,
        "bcubed_f1": bf,
        "homogeneity": h,
        "completeness": c,
        "v_measure": v,
        "ari": adjusted_rand_index(pc, tc),
        "fmi": fowlkes_mallows(pc, tc),
        "n_entities": int(pc.max()) + 1,
        "n_true_entities": int(tc.max()) + 1,
        "cluster_count_error": cluster_count_error(pc, tc),
        "cluster_size_error": cluster_size_error(pc, tc),
    }


# ------------------------------------------------------------------ the report from summed counts
#: What :func:`_cell_sums` returns, per cell (n records, in a predicted cluster of a, a true one of b).
CELL_SUMS = ("n", "n_pairs", "n2_over_a", "n2_over_b", "n_log_n", "n_log_a", "n_log_b", "n_abs_a_minus_b")
#: What :func:`_size_sums` returns, per cluster of x records (predicted or true).
SIZE_SUMS = ("clusters", "pairs", "x_log_x")


def _cell_sums(n: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sums over contingency cells that :func:`_report_from_sums` needs (:data:`CELL_SUMS`).

    ``n``: the cells' record counts; ``a`` / ``b``: the sizes of each cell's predicted / true
    cluster. Sums of any split of the cells add up, so each part of a table can be summed where it lies."""
    n, a, b = (np.asarray(x, dtype=np.float64) for x in (n, a, b))
    return np.array([n.sum(), np.sum(n * (n - 1.0) / 2.0), np.sum(n * n / a), np.sum(n * n / b),
                     np.sum(n * np.log(n)), np.sum(n * np.log(a)), np.sum(n * np.log(b)), np.sum(n * np.abs(a - b))])


def _size_sums(x: np.ndarray) -> np.ndarray:
    """The sums over clusters of ``x`` records each that :func:`_report_from_sums` needs (:data:`SIZE_SUMS`)."""
    x = np.asarray(x, dtype=np.float64)
    return np.array([float(x.size), np.sum(x * (x - 1.0) / 2.0), np.sum(x * np.log(x))])


def _report_from_sums(cells: np.ndarray, pred: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """:func:`clustering_report` from sums over the contingency table's cells and the clusters.

    For labels too many to hold in one process (``trustlab.er.distributed`` sums each part of
    the table where it lies): ``cells`` = :func:`_cell_sums` over all non-empty cells, ``pred``
    / ``true`` = :func:`_size_sums` over the predicted / true clusters. Every metric of the
    report is a function of these sums; the result equals :func:`clustering_report` up to
    floating-point summation order (about 1e-12)."""
    n, tp, bp_sum, br_sum, nlogn, nloga, nlogb, size_err = (float(v) for v in cells)
    n_p, pp, alog = (float(v) for v in pred)
    n_t, tpairs, blog = (float(v) for v in true)
    p = tp / pp if pp > 0 else 1.0
    r = tp / tpairs if tpairs > 0 else 1.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    bp, br = bp_sum / n, br_sum / n
    bf = 2 * bp * br / (bp + br) if bp + br > 0 else 0.0
    h_t = max(np.log(n) - blog / n, 0.0) if n_t > 1 else 0.0
    h_p = max(np.log(n) - alog / n, 0.0) if n_p > 1 else 0.0
    mi = max(np.log(n) + (nlogn - nloga - nlogb) / n, 0.0)
    hom = 1.0 if h_t == 0 else mi / h_t
    com = 1.0 if h_p == 0 else mi / h_p
    v = 0.0 if hom + com == 0 else 2 * hom * com / (hom + com)
    total = n * (n - 1) / 2.0
    expected = pp * tpairs / total if total else 0.0
    max_index = (pp + tpairs) / 2.0
    ari = 1.0 if total == 0 or max_index == expected else (tp - expected) / (max_index - expected)
    fmi = 0.0 if pp == 0 or tpairs == 0 else float(np.sqrt(tp / pp) * np.sqrt(tp / tpairs))
    return {
        "precision": float(p), "recall": float(r), "f1": float(f),
        "bcubed_precision": float(bp), "bcubed_recall": float(br), "bcubed_f1": float(bf),
        "homogeneity": float(hom), "completeness": float(com), "v_measure": float(v),
        "ari": float(ari), "fmi": fmi,
        "n_entities": int(n_p), "n_true_entities": int(n_t),
        "cluster_count_error": float((n_p - n_t) / n_t),
        "cluster_size_error": float(size_err / n),
    }
