"""trustlab as a drop-in clustering step for Splink, recordlinkage and dedupe.

:func:`cluster_splink_predictions` and :func:`cluster_dedupe_pairs` take the scored pairs
those tools produce, *as they come*, and return one entity id per record:

* a Splink ``SplinkDataFrame`` (``linker.inference.predict()``), or its pandas / pyarrow
  form (``unique_id_l``, ``unique_id_r``, ``match_probability`` or ``match_weight``);
* a pyarrow ``Table`` / ``RecordBatch`` (or anything with ``to_pandas()``);
* recordlinkage's output: a ``Series`` or one-column ``DataFrame`` of probabilities
  indexed by a two-level ``MultiIndex`` (``ECMClassifier.prob(features)``), or a bare
  ``MultiIndex`` of links (``classifier.predict(features)``, probability 1 each);
* dedupe's scored pairs (``deduper.score(pairs)``: a structured array with ``pairs`` and
  ``score``, or a sequence of ``((id_a, id_b), score)``) and dedupe's clusters
  (``deduper.partition(...)``: a list of ``(record_ids, scores)``).

Every input record is kept: pass ``ids=`` or ``records=`` and records that appear in
no scored pair come back as singletons.

**Thresholds.** ``threshold_probability=p`` drops (``xer``) or does not link
(baselines) pairs with match probability below ``p``; ``threshold=`` is the same cut
on the signed weight scale (log-odds, natural log, with the default ``weights="logit"``).
Give at most one of them.

**Completion.** The external tool's blocking decides which pairs were scored, and
``xer`` may not put two records in one entity without a scored pair between them. With
``records=`` (and optionally ``scorer=``), the pairs that are missing inside each
candidate cluster (connected components of pairs above the threshold, up to
``complete_components`` records) are scored before clustering: by ``scorer`` when given,
else by a logistic model trained on trustlab's comparison features of the pairs the
external tool scored, with the tool's decisions (probability >= 0.5) as labels.
:func:`splink_scorer` wraps a trained Splink linker as such a ``scorer``.
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from trustlab._validation import Interval, validate_params
from trustlab.er.cluster import CLUSTER_METHODS, ClusterResult, cluster_pairs
from trustlab.er.defaults import COMPLETE_COMPONENTS
from trustlab.er.scoring import to_weights

__all__ = ["cluster_splink_predictions", "cluster_dedupe_pairs", "read_scored_pairs", "ScoredPairs", "splink_scorer"]

_LEFT = ("unique_id_l", "id_l", "left_id", "id_left", "left", "id1", "id_1", "rec_id_1")
_RIGHT = ("unique_id_r", "id_r", "right_id", "id_right", "right", "id2", "id_2", "rec_id_2")
_PROB = ("match_probability", "probability", "prob", "score", "p", "match_prob")


@dataclass
class ScoredPairs:
    """Scored record pairs as plain arrays: ``left`` and ``right`` ids (object arrays)
    and the match ``prob`` of each pair. ``clusters`` holds the ids of each input
    cluster when the input was dedupe's clustering (else None)."""

    left: np.ndarray
    right: np.ndarray
    prob: np.ndarray
    source: str
    clusters: list | None = None


def _to_pandas(obj: Any) -> Any:
    """SplinkDataFrame / pyarrow / polars -> pandas; other objects unchanged."""
    if isinstance(obj, (pd.DataFrame, pd.Series, pd.MultiIndex, np.ndarray, list, tuple)):
        return obj
    if hasattr(obj, "as_pandas_dataframe"):  # splink.SplinkDataFrame
        return obj.as_pandas_dataframe()
    if hasattr(obj, "to_pandas"):  # pyarrow Table / RecordBatch, polars DataFrame
        return obj.to_pandas()
    return obj


def _prob_from_frame(df: pd.DataFrame, prob_col: str | None) -> tuple[np.ndarray, str]:
    if prob_col is not None:
        if prob_col not in df.columns:
            raise ValueError(f"probability column {prob_col!r} not found; columns are {list(map(str, df.columns))}")
        return df[prob_col].to_numpy(np.float64), prob_col
    for c in _PROB:
        if c in df.columns:
            return df[c].to_numpy(np.float64), c
    if "match_weight" in df.columns:  # Splink's log2 Bayes factor incl. the prior
        mw = df["match_weight"].to_numpy(np.float64)
        return 1.0 / (1.0 + np.exp2(-np.clip(mw, -60, 60))), "match_weight"
    num = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    if len(df.columns) == 1 and num:
        return df[num[0]].to_numpy(np.float64), str(num[0])
    raise ValueError(
        "the match probability column is missing: expected one of "
        f"{list(_PROB) + ['match_weight']} (or pass prob_col=...); got columns {list(map(str, df.columns))}"
    )


def _looks_scalar(x: Any) -> bool:
    return np.ndim(x) == 0


def read_scored_pairs(
    scored: Any,
    *,
    left_col: str | None = None,
    right_col: str | None = None,
    prob_col: str | None = None,
) -> ScoredPairs:
    """Read scored pairs from any of the supported formats (see the module docstring).

    Parameters
    ----------
    scored : SplinkDataFrame, pyarrow Table, DataFrame, Series, MultiIndex, ndarray or sequence
        The scored pairs.
    left_col, right_col, prob_col : str, optional
        Column names when a table does not use Splink's (``unique_id_l``,
        ``unique_id_r``, ``match_probability``) or another common spelling.

    Returns
    -------
    ScoredPairs

    Examples
    --------
    >>> import pandas as pd
    >>> idx = pd.MultiIndex.from_tuples([("a", "b"), ("b", "c")])
    >>> sp = read_scored_pairs(pd.Series([0.9, 0.2], index=idx))   # recordlinkage ECM .prob()
    >>> sp.left.tolist(), sp.prob.tolist(), sp.source
    (['a', 'b'], [0.9, 0.2], 'recordlinkage')
    """
    obj = _to_pandas(scored)
    if isinstance(obj, pd.MultiIndex):
        if obj.nlevels != 2:
            raise ValueError(f"a MultiIndex of links needs 2 levels (left id, right id); got {obj.nlevels}")
        return ScoredPairs(
            obj.get_level_values(0).to_numpy(dtype=object),
            obj.get_level_values(1).to_numpy(dtype=object),
            np.ones(len(obj)),
            "recordlinkage",
        )
    if isinstance(obj, pd.Series):
        if not isinstance(obj.index, pd.MultiIndex) or obj.index.nlevels != 2:
            raise ValueError(
                "a Series of scores needs a two-level MultiIndex (left id, right id), as recordlinkage "
                f"returns; got an index of type {type(obj.index).__name__}"
            )
        return ScoredPairs(obj.index.get_level_values(0).to_numpy(dtype=object),
                           obj.index.get_level_values(1).to_numpy(dtype=object),
                           obj.to_numpy(np.float64), "recordlinkage")
    if isinstance(obj, pd.DataFrame):
        if isinstance(obj.index, pd.MultiIndex) and obj.index.nlevels == 2 and left_col is None:
            p, _ = _prob_from_frame(obj, prob_col)
            return ScoredPairs(obj.index.get_level_values(0).to_numpy(dtype=object),
                               obj.index.get_level_values(1).to_numpy(dtype=object), p, "recordlinkage")
        cols = list(obj.columns)
        lc = left_col or next((c for c in _LEFT if c in cols), None)
        rc = right_col or next((c for c in _RIGHT if c in cols), None)
        miss = [what for what, c in (("left id", lc), ("right id", rc)) if c is None or c not in cols]
        if miss:
            raise ValueError(
                f"scored pairs table: could not find the {' and '.join(miss)} column(s); expected Splink's "
                f"'unique_id_l'/'unique_id_r' (or pass left_col=/right_col=); got columns {list(map(str, cols))}"
            )
        p, _ = _prob_from_frame(obj, prob_col)
        return ScoredPairs(obj[lc].to_numpy(dtype=object), obj[rc].to_numpy(dtype=object), p, "table")
    if isinstance(obj, np.ndarray) and obj.dtype.names and {"pairs", "score"} <= set(obj.dtype.names):
        pr = np.asarray(obj["pairs"], dtype=object).reshape(-1, 2)
        return ScoredPairs(pr[:, 0], pr[:, 1], np.asarray(obj["score"], np.float64), "dedupe")
    try:
        rows = list(obj)
    except TypeError:
        rows = None
    if rows is not None:
        if not rows:
            return ScoredPairs(np.empty(0, object), np.empty(0, object), np.empty(0), "dedupe")
        try:
            if all(len(r) == 2 and not _looks_scalar(r[1]) and len(r[0]) == len(r[1]) for r in rows):
                # dedupe clusters: (record_ids, per-record confidence); pairs inside each cluster
                # get min(conf_a, conf_b) -- an approximation, dedupe reports no pairwise score
                L, R, P, clusters = [], [], [], []
                for ids_, sc in rows:
                    ids_ = list(ids_)
                    sc = np.asarray(sc, np.float64).ravel()
                    clusters.append(ids_)
                    for a in range(len(ids_)):
                        for b in range(a + 1, len(ids_)):
                            L.append(ids_[a])
                            R.append(ids_[b])
                            P.append(min(sc[a], sc[b]))
                return ScoredPairs(np.array(L, dtype=object), np.array(R, dtype=object), np.array(P, np.float64),
                                   "dedupe_clusters", clusters)
            pr = np.empty((len(rows), 2), dtype=object)
            for k, r in enumerate(rows):
                pr[k, 0], pr[k, 1] = r[0][0], r[0][1]
            sc = np.array([float(r[1]) for r in rows], np.float64)
            return ScoredPairs(pr[:, 0], pr[:, 1], sc, "dedupe")
        except (TypeError, IndexError, ValueError):
            pass
    raise ValueError(
        "could not read the scored pairs: expected a SplinkDataFrame, a pyarrow Table or pandas DataFrame "
        "(unique_id_l, unique_id_r, match_probability), a recordlinkage Series/DataFrame with a two-level "
        "MultiIndex, dedupe scored pairs (structured array with 'pairs' and 'score', or ((id_a, id_b), score) "
        f"tuples) or dedupe clusters ((ids, scores) tuples); got {type(scored).__name__}"
    )


def _threshold(threshold: float | None, threshold_probability: float | None, weights: str) -> float | None:
    if threshold is not None and threshold_probability is not None:
        raise ValueError("give threshold= (signed weight scale) or threshold_probability= (probability), not both")
    if threshold_probability is None:
        return threshold
    p = float(threshold_probability)
    if not (0.0 <= p <= 1.0) or np.isnan(p):
        raise ValueError(f"threshold_probability must lie in [0, 1]; got {threshold_probability!r}")
    return float(to_weights(np.array([p]), weights)[0])


def _complete(
    node_ids: pd.Index, P: np.ndarray, prob: np.ndarray, w: np.ndarray, weights: str, thr: float | None,
    records: pd.DataFrame | None, id_col: str | None, scorer: Callable | None, fields: Any, limit: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Score the pairs missing inside candidate clusters; return the extra pairs and probabilities."""
    from trustlab.er.scoring import _component_completion

    n = len(node_ids)
    wc = w if thr is None else np.where(w >= thr, w, -1.0)
    extra = _component_completion(n, P, wc, int(limit)) if len(P) else np.empty((0, 2), np.int64)
    if len(extra) == 0:
        return extra, np.zeros(0), 0
    if scorer is not None:
        px = np.asarray(scorer(node_ids[extra[:, 0]].to_numpy(dtype=object),
                               node_ids[extra[:, 1]].to_numpy(dtype=object)), np.float64).ravel()
        if px.shape[0] != len(extra):
            raise ValueError(f"scorer returned {px.shape[0]} probabilities for {len(extra)} pairs")
        if px.size and (np.isnan(px).any() or px.min() < 0 or px.max() > 1):
            raise ValueError("scorer must return match probabilities in [0, 1] with no NaN")
        return extra, px, len(extra)
    from trustlab.er.comparisons import compare
    from trustlab.er.fields import normalize_fields
    from trustlab.er.scoring import SupervisedScorer

    rows = pd.Index(records[id_col]).get_indexer(node_ids)
    df = records.iloc[rows].reset_index(drop=True)
    flds = normalize_fields(fields, df, id_col=id_col)
    y = (prob >= 0.5).astype(int)
    if len(np.unique(y)) < 2:
        warnings.warn(
            "completion skipped: the external scores hold only one class (all pairs >= 0.5 or all < 0.5), "
            "so no model can be trained on them; pass scorer=... to score the missing pairs",
            UserWarning, stacklevel=3,
        )
        return np.empty((0, 2), np.int64), np.zeros(0), 0
    mdl = SupervisedScorer().fit(compare(df, P, flds).X, y)
    return extra, mdl.predict_proba(compare(df, extra, flds).X), len(extra)


def _cluster_ids(
    sp: ScoredPairs, *, ids: Sequence | None, records: Any, id_col: str | None, method: str, weights: str,
    threshold: float | None, threshold_probability: float | None, id_column: str, cluster_column: str,
    scorer: Callable | None, fields: Any, complete_components: int, one_to_one: tuple | None = None, **kw,
) -> tuple[pd.DataFrame, ClusterResult]:
    CLUSTER_METHODS[method]  # unknown names fail here, listing the valid ones
    prob = np.asarray(sp.prob, np.float64)
    if prob.size and (np.isnan(prob).any() or np.nanmin(prob) < 0 or np.nanmax(prob) > 1):
        raise ValueError("match probabilities must lie in [0, 1] with no NaN")
    thr = _threshold(threshold, threshold_probability, weights)
    rec_df = None
    if records is not None:
        from trustlab.er.records import validate_records

        rec_df, id_col = validate_records(_to_pandas(records), id_col)
        if ids is not None:
            raise ValueError("give ids= or records=, not both (records= brings its ids)")
        ids = rec_df[id_col].tolist()
    left, right = sp.left, sp.right
    if ids is None and sp.clusters is None:
        warnings.warn(
            "no ids= or records= given: records that appear in no scored pair are not in the output; "
            "pass ids=<all record ids> or records=<the records> to keep every record as its own entity",
            UserWarning, stacklevel=3,
        )
    if ids is None:
        node_ids = pd.Index(pd.unique(np.concatenate([left, right]))) if len(left) else pd.Index([], dtype=object)
    else:
        node_ids = pd.Index(pd.unique(np.asarray(list(ids), dtype=object)))
    il, ir = node_ids.get_indexer(left), node_ids.get_indexer(right)
    if ids is not None and ((il < 0).any() or (ir < 0).any()):
        # ids may have been read as text on one side and numbers on the other: retry as text
        sidx = pd.Index(node_ids.astype(str))
        il2, ir2 = sidx.get_indexer(left.astype(str)), sidx.get_indexer(right.astype(str))
        if sidx.is_unique and (il2 >= 0).all() and (ir2 >= 0).all():
            il, ir = il2, ir2
        else:
            bad = pd.unique(np.concatenate([left[il < 0], right[ir < 0]]))
            raise ValueError(
                f"scored pairs reference {len(bad)} id(s) not in ids, e.g. {list(bad[:5])}; "
                "pass every record id (ids= or records=)"
            )
    P = np.stack([il, ir], axis=1).astype(np.int64) if len(il) else np.empty((0, 2), np.int64)
    self_pair = P[:, 0] == P[:, 1]
    if self_pair.any():
        P, prob = P[~self_pair], prob[~self_pair]
    # one pair per unordered couple (the highest probability wins)
    if len(P):
        P = np.sort(P, axis=1)
        o = np.lexsort((-prob, P[:, 1], P[:, 0]))
        P, prob = P[o], prob[o]
        first = np.r_[True, (P[1:, 0] != P[:-1, 0]) | (P[1:, 1] != P[:-1, 1])]
        P, prob = P[first], prob[first]
    w = to_weights(prob, weights)
    n_completed = 0
    if complete_components and (scorer is not None or rec_df is not None):
        extra, px, n_completed = _complete(node_ids, P, prob, w, weights, thr, rec_df, id_col, scorer, fields,
                                           complete_components)
        if n_completed:
            P = np.concatenate([P, extra])
            prob = np.concatenate([prob, px])
            w = np.concatenate([w, to_weights(px, weights)])
    if method == "hierarchical":
        kw["prob"] = prob
        if threshold_probability is not None:
            kw.setdefault("p_threshold", float(threshold_probability))
    if id_column == cluster_column:
        raise ValueError(f"id_column and cluster_column must differ; both are {id_column!r}")
    if one_to_one is not None:  # node ids are (source, id) keys: (source column, key -> (source, id))
        from trustlab.er.one_to_one import cluster_one_to_one

        keys = [one_to_one[1][k] for k in node_ids]
        src = np.array([k[0] for k in keys], dtype=object)
        res = cluster_one_to_one(len(node_ids), P, w, src, threshold=thr, **kw)
    else:
        res = cluster_pairs(len(node_ids), P, w, method=method, threshold=thr, **kw)
    res.info["n_completed_pairs"] = int(n_completed)
    res.info["n_scored_pairs"] = int(len(P))
    labels = pd.factorize(res.labels)[0].astype(np.int64)  # numbered in order of first appearance
    if one_to_one is not None:
        return pd.DataFrame({one_to_one[0]: [k[0] for k in keys], id_column: [k[1] for k in keys],
                             cluster_column: labels}), res
    return pd.DataFrame({id_column: node_ids.to_numpy(dtype=object) if len(node_ids) else [],
                         cluster_column: labels}), res


def _keys(src: Any, ids: Any, names: dict) -> np.ndarray:
    """``"<source>\\x1f<id>"`` keys of (source, id) pairs; ``names`` maps each key back."""
    out = np.empty(len(ids), dtype=object)
    for k, (s, i) in enumerate(zip(src, ids)):
        out[k] = key = f"{s}\x1f{i}"
        names.setdefault(key, (str(s), i))
    return out


def _with_sources(sp: ScoredPairs, predictions: Any, ids: Any, records: Any, scorer: Any,
                  source_col: str) -> tuple[ScoredPairs, Any, dict]:
    """One-to-one: key every record by (source, id), from Splink's ``<source_col>_l`` /
    ``_r`` columns (ids need to be unique only within their source)."""
    frame = _to_pandas(predictions)
    cols = [f"{source_col}_l", f"{source_col}_r"]
    if not isinstance(frame, pd.DataFrame) or any(c not in frame.columns for c in cols):
        got = list(map(str, frame.columns)) if isinstance(frame, pd.DataFrame) else type(frame).__name__
        raise ValueError(f"one_to_one=True needs the source of every record: columns {cols} (Splink's link "
                         f"output; other names via source_col=...); got {got}")
    if records is not None or scorer is not None:
        raise ValueError("one_to_one=True takes ids= as (source, id) pairs; records= and scorer= (completion) "
                         "are not supported with it")
    names: dict = {}
    if ids is not None:
        ids = list(ids)
        if not all(isinstance(x, (tuple, list)) and len(x) == 2 for x in ids):
            raise ValueError("with one_to_one=True, ids= must be (source, id) pairs, e.g. [('A', 1), ('B', 1)]")
        ids = list(_keys([x[0] for x in ids], [x[1] for x in ids], names))
    sp = ScoredPairs(_keys(frame[cols[0]], sp.left, names), _keys(frame[cols[1]], sp.right, names), sp.prob,
                     sp.source)
    return sp, ids, names


_COMMON_DOC = """
    ids : sequence, optional
        All record ids; records with no scored pair become singletons. Default: the ids
        seen in the pairs (records with no pair are then unknown and absent).
    records : DataFrame, pyarrow Table or SplinkDataFrame, optional
        The records themselves (instead of ``ids``): every one is kept, and they enable
        completion (see the module docstring). Their id column is ``id_col``.
    id_col : str, optional
        Id column of ``records`` (default ``id``/``unique_id``/``rec_id`` when present).
    method : {"xer", "connected_components", "hierarchical"}
    weights : {"logit", "centered"}
        Signed weights from probabilities (log-odds or ``p - 0.5``).
    threshold : float, optional
        Cut on the signed weight scale (log-odds with ``weights="logit"``).
    threshold_probability : float, optional
        The same cut given as a match probability in [0, 1] (e.g. 0.5).
    id_column, cluster_column : str
        Output column names; Splink's are ``"unique_id"`` and ``"cluster_id"``.
    scorer : callable, optional
        ``scorer(left_ids, right_ids) -> probabilities`` for pairs the external tool
        did not score (completion inside candidate clusters).
    fields : optional
        Fields compared by the default completion model (inferred when None).
    complete_components : int
        Largest candidate cluster that is completed (0 disables completion; default
        :data:`~trustlab.er.defaults.COMPLETE_COMPONENTS`, as :func:`trustlab.resolve`).
    **kwargs
        Passed to :func:`trustlab.er.cluster_pairs` (e.g. ``time_limit``).

    Returns
    -------
    (DataFrame with ``id_column`` and ``cluster_column``, ClusterResult)
        ``ClusterResult.info`` holds ``n_scored_pairs`` and ``n_completed_pairs``.
"""


def _common_doc(func: Callable) -> Callable:
    """Fill ``{common_parameters}`` in ``func``'s docstring with the parameters shared by the
    two clustering entry points (a docstring must be a plain literal: a ``"..." + X`` expression
    is not one, and left ``__doc__`` None)."""
    func.__doc__ = func.__doc__.replace("    {common_parameters}\n", _COMMON_DOC.lstrip("\n"))
    return func


#: the declared constraints shared by the two entry points that cluster others' scores
_CLUSTER_IDS_PARAMS = {
    "ids": ["array-like", None], "id_col": [str, None], "method": [str],
    "weights": [{"logit", "centered"}], "threshold": [Interval(numbers.Real, None, None), None],
    "threshold_probability": [Interval(numbers.Real, 0, 1, closed="neither"), None],
    "id_column": [str], "cluster_column": [str], "scorer": ["callable", None],
    "complete_components": [Interval(numbers.Integral, 0, None, closed="left")],
}


@validate_params({"predictions": [object], **_CLUSTER_IDS_PARAMS,
                  "left_col": [str, None], "right_col": [str, None], "prob_col": [str, None],
                  "one_to_one": ["boolean"], "source_col": [str]})
@_common_doc
def cluster_splink_predictions(
    predictions: Any,
    *,
    ids: Sequence | None = None,
    records: Any = None,
    id_col: str | None = None,
    method: str = "xer",
    weights: str = "logit",
    threshold: float | None = None,
    threshold_probability: float | None = None,
    id_column: str = "id",
    cluster_column: str = "entity_id",
    scorer: Callable | None = None,
    fields: Any = None,
    complete_components: int = COMPLETE_COMPONENTS,
    left_col: str | None = None,
    right_col: str | None = None,
    prob_col: str | None = None,
    one_to_one: bool = False,
    source_col: str = "source_dataset",
    **kwargs: Any,
) -> tuple[pd.DataFrame, ClusterResult]:
    """Cluster Splink predictions (or any table of scored pairs) into entities.

    Parameters
    ----------
    predictions : SplinkDataFrame, pyarrow Table, DataFrame, recordlinkage Series/MultiIndex
        ``linker.inference.predict()`` as it comes (or ``.as_pandas_dataframe()``,
        ``.as_duckdbpyrelation().arrow()``…); columns ``unique_id_l``, ``unique_id_r`` and
        ``match_probability`` (or ``match_weight``), other names via ``left_col``,
        ``right_col``, ``prob_col``. recordlinkage's MultiIndex outputs are read too.
    one_to_one : bool
        The sources are each duplicate-free (Splink ``link_only`` of deduplicated tables):
        exact one-to-one clustering by :func:`trustlab.er.one_to_one.cluster_one_to_one`
        (two sources: a maximum-weight assignment with its LP-dual certificate; more:
        clique partitioning with same-source pairs forbidden), instead of a greedy
        best-link rule. Records are keyed by (source, id) from ``<source_col>_l`` /
        ``<source_col>_r``; ``ids=`` then takes (source, id) pairs, the output gets a
        ``source_col`` column first, and completion (``records=``, ``scorer=``) is off.
    source_col : str
        Splink's source column name (``source_dataset``), for ``one_to_one``.
    {common_parameters}
    Examples
    --------
    >>> pred = pd.DataFrame({"unique_id_l": [1, 2], "unique_id_r": [2, 3],
    ...                      "match_probability": [0.99, 0.2]})
    >>> df, _ = cluster_splink_predictions(pred, ids=[1, 2, 3, 4], threshold_probability=0.5,
    ...                                    id_column="unique_id", cluster_column="cluster_id")
    >>> df.values.tolist()
    [[1, 0], [2, 0], [3, 1], [4, 2]]
    """
    sp = read_scored_pairs(predictions, left_col=left_col, right_col=right_col, prob_col=prob_col)
    if one_to_one:
        if method != "xer":
            raise ValueError(f"one_to_one=True clusters exactly (method='xer'); got method={method!r}")
        sp, ids, names = _with_sources(sp, predictions, ids, records, scorer, source_col)
        kwargs["one_to_one"] = (source_col, names)
    return _cluster_ids(sp, ids=ids, records=records, id_col=id_col, method=method, weights=weights,
                        threshold=threshold, threshold_probability=threshold_probability, id_column=id_column,
                        cluster_column=cluster_column, scorer=scorer, fields=fields,
                        complete_components=complete_components, **kwargs)


@validate_params({"scored_pairs": [object], **_CLUSTER_IDS_PARAMS})
@_common_doc
def cluster_dedupe_pairs(
    scored_pairs: Any,
    *,
    ids: Sequence | None = None,
    records: Any = None,
    id_col: str | None = None,
    method: str = "xer",
    weights: str = "logit",
    threshold: float | None = None,
    threshold_probability: float | None = None,
    id_column: str = "id",
    cluster_column: str = "entity_id",
    scorer: Callable | None = None,
    fields: Any = None,
    complete_components: int = COMPLETE_COMPONENTS,
    **kwargs: Any,
) -> tuple[pd.DataFrame, ClusterResult]:
    """Cluster dedupe's output into entities.

    Parameters
    ----------
    scored_pairs : structured ndarray, sequence of ((id_a, id_b), score) or of (ids, scores)
        ``deduper.score(pairs)`` (fields ``pairs`` and ``score``), a list of scored
        pairs, or ``deduper.partition(...)``'s clusters; for clusters, each pair inside
        a cluster gets the smaller of its two records' confidences (an approximation:
        dedupe reports no pairwise score there). Any format of
        :func:`read_scored_pairs` is accepted too.
    {common_parameters}
    Examples
    --------
    >>> df, _ = cluster_dedupe_pairs([(("a", "b"), 0.9), (("b", "c"), 0.1)], ids=["a", "b", "c", "d"],
    ...                              method="connected_components")
    >>> df["entity_id"].tolist()
    [0, 0, 1, 2]
    >>> clusters = [(("a", "b"), (0.97, 0.95)), (("c",), (1.0,))]   # deduper.partition(...)
    >>> cluster_dedupe_pairs(clusters, ids=["a", "b", "c", "d"])[0]["entity_id"].tolist()
    [0, 0, 1, 2]
    """
    sp = read_scored_pairs(scored_pairs)
    if ids is None and records is None and sp.clusters is not None:
        ids = [x for c in sp.clusters for x in c]
    return _cluster_ids(sp, ids=ids, records=records, id_col=id_col, method=method, weights=weights,
                        threshold=threshold, threshold_probability=threshold_probability, id_column=id_column,
                        cluster_column=cluster_column, scorer=scorer, fields=fields,
                        complete_components=complete_components, **kwargs)


def splink_scorer(linker: Any, records: Any, *, id_col: str = "unique_id", batch: int = 200) -> Callable:
    """A ``scorer`` for :func:`cluster_splink_predictions` that asks a trained Splink
    ``linker`` for the pairs its blocking missed (``linker.inference.score_pairs``), so the
    completed pairs carry Splink's own probabilities.

    Parameters
    ----------
    linker : splink.Linker
        The trained linker that produced the predictions.
    records : DataFrame
        The records given to Splink (with ``id_col``).
    batch : int
        Right-hand records per ``score_pairs`` call (one call per left record and batch).

    Notes
    -----
    One Splink query per distinct left record (about 0.1–0.3 s each with DuckDB), so
    this is for a few hundred missing pairs; for more, ``records=`` (trustlab's own
    completion model, vectorised) is much faster.
    """
    df = _to_pandas(records)
    if id_col not in df.columns:
        raise ValueError(f"records have no column {id_col!r}; columns are {list(map(str, df.columns))}")
    recs = df.set_index(df[id_col].astype(str), drop=False)
    recs = recs.astype(object).where(recs.notna(), None)

    def score(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        out = np.zeros(len(left))
        pos: dict[tuple[str, str], list[int]] = {}
        for k, (a, b) in enumerate(zip(map(str, left), map(str, right))):
            pos.setdefault((a, b), []).append(k)
        by_left: dict[str, list[str]] = {}
        for a, b in pos:
            by_left.setdefault(a, []).append(b)
        for a, bs in by_left.items():
            for s in range(0, len(bs), batch):
                chunk = bs[s:s + batch]
                got = linker.inference.score_pairs([recs.loc[a].to_dict()],
                                                   [recs.loc[b].to_dict() for b in chunk]).as_pandas_dataframe()
                for _, row in got.iterrows():
                    for k in pos.get((str(row[f"{id_col}_l"]), str(row[f"{id_col}_r"])), []):
                        out[k] = float(row["match_probability"])
        return out

    return score
