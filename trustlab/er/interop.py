"""trustlab as a drop-in clustering step for Splink and dedupe.

Both take the scored pairs those tools produce and return one entity id per record.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from trustlab.er.cluster import ClusterResult, cluster_pairs
from trustlab.er.scoring import to_weights

__all__ = ["cluster_splink_predictions", "cluster_dedupe_pairs"]


def _cluster_ids(
    left: np.ndarray, right: np.ndarray, prob: np.ndarray, ids: Sequence | None, method: str,
    weights: str, threshold: float | None, **kw,
) -> tuple[pd.DataFrame, ClusterResult]:
    prob = np.asarray(prob, np.float64)
    if prob.size and (np.nanmin(prob) < 0 or np.nanmax(prob) > 1 or np.isnan(prob).any()):
        raise ValueError("match probabilities must lie in [0, 1] with no NaN")
    if ids is None:
        node_ids = pd.unique(np.concatenate([left, right]))
    else:
        node_ids = pd.unique(np.asarray(list(ids), dtype=object))
        known = set(node_ids.tolist())
        unknown = [x for x in np.concatenate([left, right]) if x not in known]
        if unknown:
            raise ValueError(f"scored pairs reference {len(unknown)} id(s) not in ids, e.g. {unknown[:5]}")
    pos = pd.Index(node_ids)
    P = np.stack([pos.get_indexer(left), pos.get_indexer(right)], axis=1)
    w = to_weights(prob, weights)
    if method == "hierarchical":
        kw["prob"] = prob
    res = cluster_pairs(len(node_ids), P, w, method=method, threshold=threshold, **kw)
    return pd.DataFrame({"id": node_ids, "entity_id": res.labels}), res


def cluster_splink_predictions(
    predictions: pd.DataFrame,
    *,
    ids: Sequence | None = None,
    method: str = "xer",
    weights: str = "logit",
    threshold: float | None = None,
    **kwargs: Any,
) -> tuple[pd.DataFrame, ClusterResult]:
    """Cluster a Splink predictions table (``unique_id_l``, ``unique_id_r``, ``match_probability``).

    Parameters
    ----------
    predictions : DataFrame
        Splink's ``linker.inference.predict().as_pandas_dataframe()``.
    ids : sequence, optional
        All record ids (records with no scored pair become singletons); default: the
        ids seen in ``predictions``.
    method, weights, threshold, **kwargs
        As in :func:`trustlab.er.cluster_pairs` / :func:`trustlab.er.to_weights`.

    Returns
    -------
    (DataFrame with ``id`` and ``entity_id``, ClusterResult)

    Examples
    --------
    >>> pred = pd.DataFrame({"unique_id_l": [1, 2], "unique_id_r": [2, 3],
    ...                      "match_probability": [0.99, 0.2]})
    >>> df, _ = cluster_splink_predictions(pred, method="connected_components")
    >>> df["entity_id"].tolist()
    [0, 0, 1]
    """
    need = ["unique_id_l", "unique_id_r", "match_probability"]
    miss = [c for c in need if c not in predictions.columns]
    if miss:
        raise ValueError(
            f"Splink predictions need columns {need}; missing {miss} (got {list(predictions.columns)})"
        )
    return _cluster_ids(
        predictions["unique_id_l"].to_numpy(dtype=object), predictions["unique_id_r"].to_numpy(dtype=object),
        predictions["match_probability"].to_numpy(np.float64), ids, method, weights, threshold, **kwargs,
    )


def cluster_dedupe_pairs(
    scored_pairs: Any,
    *,
    ids: Sequence | None = None,
    method: str = "xer",
    weights: str = "logit",
    threshold: float | None = None,
    **kwargs: Any,
) -> tuple[pd.DataFrame, ClusterResult]:
    """Cluster dedupe's scored pairs (``deduper.score(pairs)``: a structured array with
    ``pairs`` (n, 2) and ``score``) or any sequence of ``((id_a, id_b), score)``.

    Examples
    --------
    >>> df, _ = cluster_dedupe_pairs([(("a", "b"), 0.9), (("b", "c"), 0.1)], method="connected_components")
    >>> df["entity_id"].tolist()
    [0, 0, 1]
    """
    if isinstance(scored_pairs, np.ndarray) and scored_pairs.dtype.names and {"pairs", "score"} <= set(scored_pairs.dtype.names):
        pr = np.asarray(scored_pairs["pairs"], dtype=object)
        sc = np.asarray(scored_pairs["score"], np.float64)
    else:
        rows = list(scored_pairs)
        try:
            pr = np.array([[p[0][0], p[0][1]] for p in rows], dtype=object).reshape(-1, 2)
            sc = np.array([float(p[1]) for p in rows], np.float64)
        except (TypeError, IndexError, ValueError):
            raise ValueError(
                "dedupe scored pairs must be a structured array with 'pairs' and 'score' fields "
                "or a sequence of ((id_a, id_b), score)"
            ) from None
    return _cluster_ids(pr[:, 0], pr[:, 1], sc, ids, method, weights, threshold, **kwargs)
