"""End-to-end entity resolution: records -> blocking -> scoring -> graph -> clusters."""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from trustlab._validation import Interval, InvalidParameterError, check_interval, check_option, check_random_state, validate_params
from trustlab.er.blocking import BlockingStats, block, pair_completeness, reduction_ratio
from trustlab.er.cluster import CLUSTER_METHODS, ClusterResult, cluster_pairs
from trustlab.er.blocking import estimate_pair_completeness, rule_hits, setdiff_sorted
from trustlab.er.comparisons import FSModel
from trustlab.er.defaults import canonical_order, check_time_limit, default_rules, field_report, random_pairs
from trustlab.er.cluster import _proof_summary
from trustlab.er.linking import prepare_link
from trustlab.er.records import validate_records
from trustlab.er.scoring import FeatureMatrix, SupervisedScorer, compare, to_weights

__all__ = ["resolve", "Resolution", "evaluate"]


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def evaluate(pred: Any, truth: Any) -> dict[str, float]:
    """All clustering metrics of predicted entity ids against true ones.

    Pairwise precision/recall/F1, B-cubed, homogeneity, completeness, V-measure, ARI,
    FMI, entity-count and entity-size errors (see :mod:`trustlab.metrics.clustering`).

    Examples
    --------
    >>> evaluate([0, 0, 1], ["a", "a", "b"])["f1"]
    1.0
    """
    from trustlab.metrics.clustering import clustering_report

    return clustering_report(pred, truth)


def _entity_map(labels: Any, df: pd.DataFrame, id_col: str, what: str) -> np.ndarray:
    """Entity label per row (object array; None where unlabelled)."""
    n = len(df)
    if isinstance(labels, str):
        if labels not in df.columns:
            raise ValueError(
                f"{what} column {labels!r} not found in the records; available: {list(map(str, df.columns))}"
            )
        v = df[labels].to_numpy(dtype=object)
        return np.array([None if (x is None or (isinstance(x, float) and np.isnan(x)) or x == "") else x for x in v], dtype=object)
    if isinstance(labels, pd.Series):
        labels = labels.to_dict()
    if isinstance(labels, Mapping):
        pos = {k: i for i, k in enumerate(df[id_col].tolist())}
        spos = {str(k): i for k, i in pos.items()}
        out = np.full(n, None, dtype=object)
        unknown = []
        for k, v in labels.items():
            i = pos.get(k, spos.get(str(k)))
            if i is None:
                unknown.append(k)
            else:
                out[i] = v
        if unknown:
            raise ValueError(
                f"{what} reference {len(unknown)} id(s) not in the records' {id_col!r} column, e.g. {unknown[:5]}"
            )
        return out
    arr = np.asarray(labels, dtype=object)
    if arr.ndim == 1 and arr.shape[0] == n:
        return arr
    raise TypeError(
        f"{what} must be a column name, a mapping id -> entity, a Series or a sequence of length {n}; "
        f"got {type(labels).__name__}"
    )


def _component_completion(n: int, pairs: np.ndarray, w: np.ndarray, limit: int) -> np.ndarray:
    """All pairs inside positive components of 3..limit records that are not in ``pairs``."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from trustlab.kernels import er as K

    pos = w > 0
    g = sp.coo_matrix((np.ones(int(pos.sum()), np.int8), (pairs[pos, 0], pairs[pos, 1])), shape=(n, n))
    k, comp = connected_components(g, directed=False)
    sizes = np.bincount(comp, minlength=k)
    sel = (sizes[comp] >= 3) & (sizes[comp] <= limit)
    if not sel.any():
        return np.empty((0, 2), np.int64)
    rec = np.flatnonzero(sel).astype(np.int64)
    key = comp[rec]
    o = np.argsort(key, kind="stable")
    rec, key = rec[o], key[o]
    bounds = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True]).astype(np.int64)
    total = K.count_block_pairs(bounds, np.int64(limit))
    a = np.empty(total, np.int64)
    b = np.empty(total, np.int64)
    K.fill_block_pairs(np.ascontiguousarray(rec), bounds, np.int64(limit), a, b)
    code = a * n + b
    have = pairs[:, 0] * n + pairs[:, 1]
    code = setdiff_sorted(code, have)
    return np.stack([code // n, code % n], axis=1)


def _pair_labels(labels: pd.DataFrame, df: pd.DataFrame, id_col: str) -> tuple[np.ndarray, np.ndarray]:
    cols = list(labels.columns)
    if len(cols) < 3:
        raise ValueError(
            "pair labels need three columns: left id, right id and match (1/0 or true/false); "
            f"got columns {cols}"
        )
    pos = {str(k): i for i, k in enumerate(df[id_col].tolist())}
    l = labels[cols[0]].astype(str).map(pos)
    r = labels[cols[1]].astype(str).map(pos)
    bad = l.isna() | r.isna()
    if bad.any():
        ex = labels.loc[bad, cols[:2]].head(3).values.tolist()
        raise ValueError(
            f"pair labels reference {int(bad.sum())} pair(s) with ids not in the records' {id_col!r} column, e.g. {ex}"
        )
    y = labels[cols[2]]
    if y.dtype == object:
        y = y.astype(str).str.lower().map({"1": 1, "0": 0, "true": 1, "false": 0, "match": 1, "distinct": 0, "yes": 1, "no": 0})
        if y.isna().any():
            raise ValueError(f"pair label column {cols[2]!r} must hold 1/0 or true/false")
    P = np.stack([l.to_numpy(np.int64), r.to_numpy(np.int64)], axis=1)
    P = np.sort(P, axis=1)
    return P, y.to_numpy().astype(int)


@dataclass
class Resolution:
    """The result of :func:`resolve`: entity ids, scored pairs and explanations."""

    ids: np.ndarray
    entity: np.ndarray
    id_col: str
    pairs: np.ndarray
    prob: np.ndarray
    weights: np.ndarray
    features: FeatureMatrix
    clusters: ClusterResult
    blocking: BlockingStats
    seconds: dict = field(default_factory=dict)
    metrics: dict | None = None
    baselines: dict = field(default_factory=dict)
    model: Any = None
    #: per pair (rows of ``pairs``) and field: natural-log Bayes factor of the field's
    #: comparison level (unsupervised Fellegi-Sunter only; None for supervised scorers)
    field_weights: np.ndarray | None = None
    #: the fields compared and why (:class:`trustlab.er.fields.FieldInference`)
    field_report: Any = None
    #: rows in the order they were processed (row-order independence); internal
    order: np.ndarray | None = None
    source: np.ndarray | None = None
    source_col: str | None = None
    link_type: str = "dedupe_only"
    records: pd.DataFrame | None = None
    #: clustering settings saved with the model (method, weights, threshold, ...)
    settings: dict = field(default_factory=dict)

    @property
    def n_entities(self) -> int:
        return int(self.entity.max()) + 1 if self.entity.size else 0

    def to_frame(self, records: bool = False) -> pd.DataFrame:
        """``DataFrame`` with the id column and ``entity_id`` (and the source column
        first when several tables were resolved), one row per input record; with
        ``records=True`` the records' other columns follow."""
        if self.source is not None:
            out = pd.DataFrame({self.source_col: self.source, self.id_col: self.ids, "entity_id": self.entity})
        else:
            out = pd.DataFrame({self.id_col: self.ids, "entity_id": self.entity})
        if records and self.records is not None:
            rest = self.records.drop(columns=[c for c in self.records.columns if c in out.columns or
                                              str(c).startswith("__trustlab")])
            out = pd.concat([out, rest.reset_index(drop=True)], axis=1)
        return out

    def summary(self) -> dict:
        """Headline numbers (and all metrics when the truth was given)."""
        out: dict[str, Any] = {"n_records": int(self.ids.size), "n_entities": self.n_entities}
        if self.metrics:
            out.update(self.metrics)
        out["seconds"] = round(float(self.seconds.get("total", 0.0)), 4)
        out["blocking"] = self.blocking.to_dict()
        st = pd.Series(self.clusters.status).value_counts().to_dict() if self.clusters.status else {}
        out["component_status"] = {str(k): int(v) for k, v in st.items()}
        out["objective"] = float(self.clusters.objective)
        out.update(_proof_summary(self.clusters))
        if self.field_report is not None:
            out["fields"] = [{"column": f.column, "kind": f.kind} for f in self.field_report.fields]
        if self.model is not None and hasattr(self.model, "problems_"):
            out["model_warnings"] = list(self.model.problems_)
        if self.baselines:
            out["baselines"] = self.baselines
        return out

    # ------------------------------------------------------------ explanations
    def _row(self, record_id: Any) -> int:
        hit = np.flatnonzero(self.ids == record_id)
        if hit.size == 0:
            hit = np.flatnonzero(self.ids.astype(str) == str(record_id))
        if hit.size == 0:
            raise KeyError(f"record id {record_id!r} is not in the resolved records")
        return int(hit[0])

    def explain_entity(self, entity_id: int) -> dict:
        """Members, within-cluster weight, and the optimality status/gap of its component.

        Examples
        --------
        >>> import trustlab, pandas as pd
        >>> df = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["ann lee", "anne lee", "bob ray", "bob rae"],
        ...                    "ent": [0, 0, 1, 1]})
        >>> r = trustlab.resolve(df, id_col="id", fields={"name": "name"}, labels="ent", train_fraction=1.0)
        >>> e = r.explain_entity(int(r.entity[0]))
        >>> sorted(e["records"]), e["status"]
        ([1, 2], 'closed_form')
        """
        rows = np.flatnonzero(self.entity == entity_id)
        if rows.size == 0:
            raise KeyError(f"entity {entity_id!r} does not exist (valid: 0..{self.n_entities - 1})")
        e = self.entity
        inside = (e[self.pairs[:, 0]] == entity_id) & (e[self.pairs[:, 1]] == entity_id)
        comp = int(self.clusters.component[rows[0]])
        return {
            "entity_id": int(entity_id),
            "records": self.ids[rows].tolist(),
            "within_weight": float(self.weights[inside].sum()),
            "n_scored_pairs": int(inside.sum()),
            "min_pair_probability": float(self.prob[inside].min()) if inside.any() else None,
            "component": comp,
            "status": self.clusters.status[comp] if self.clusters.status else "unknown",
            "gap": float(self.clusters.gap[comp]) if len(self.clusters.gap) else float("nan"),
        }

    def explain_record(self, record_id: Any, *, agree_at: float = 0.8) -> dict:
        """Evidence for the record's entity and against each alternative entity.

        For its own entity and every other entity it has a scored pair with, the total
        weight of joining it, and per field whether the values mostly agreed
        (main similarity >= ``agree_at``) or disagreed.
        """
        i = self._row(record_id)
        touch = (self.pairs[:, 0] == i) | (self.pairs[:, 1] == i)
        idx = np.flatnonzero(touch)
        other = np.where(self.pairs[idx, 0] == i, self.pairs[idx, 1], self.pairs[idx, 0])
        ents = self.entity[other]
        fm = self.features
        prim = {fm.fields[k].column: fm.primary[k] for k in range(len(fm.fields))}
        alts = []
        for ent in np.unique(np.r_[ents, self.entity[i]]):
            sel = ents == ent
            rec = {
                "entity_id": int(ent),
                "assigned": bool(ent == self.entity[i]),
                "weight": float(self.weights[idx[sel]].sum()),
                "n_pairs": int(sel.sum()),
                "agreed": [],
                "disagreed": [],
            }
            if sel.any():
                for col, c in prim.items():
                    v = fm.X[idx[sel], c]
                    v = v[~np.isnan(v)]
                    if v.size:
                        (rec["agreed"] if v.mean() >= agree_at else rec["disagreed"]).append(col)
            alts.append(rec)
        alts.sort(key=lambda r: (-r["assigned"], -r["weight"]))
        return {"record": record_id, "entity_id": int(self.entity[i]), "alternatives": alts}


@validate_params({
    "records": [object], "id_col": [str, None], "fields": [str, "sequence", "mapping", None],
    "labels": [str, "mapping", "array-like", None], "truth": [str, "mapping", "array-like", None],
    "method": [str], "blocking": [str, "sequence", None], "max_block_size": [Interval(numbers.Integral, 2, None, closed="left")],
    "scorer": [{"auto", "supervised", "fellegi_sunter"}], "C": [Interval(numbers.Real, 0, None, closed="neither")],
    "train_fraction": [Interval(numbers.Real, 0, 1, closed="right")], "weights": [{"centered", "logit"}],
    "threshold": [Interval(numbers.Real, None, None), None],
    "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None], "M": [Interval(numbers.Integral, 1, None, closed="left")],
    "solver_options": ["mapping", None], "compare_methods": ["sequence"],
    "complete_components": [Interval(numbers.Integral, 0, None, closed="left")], "random_state": ["random_state"], "progress": ["boolean"],
    "link_type": [{"dedupe_only", "link_only", "link_and_dedupe"}, None], "source_col": [str],
})
def resolve(
    records: Any,
    *,
    id_col: str | None = None,
    fields: Any = None,
    labels: Any = None,
    truth: Any = None,
    method: str = "xer",
    blocking: Sequence[str] | str | None = None,
    max_block_size: int = 200,
    scorer: str = "auto",
    model: str = "logistic",
    C: float = 10.0,
    train_fraction: float = 0.5,
    weights: str = "centered",
    threshold: float | None = None,
    time_limit: float | None = None,
    M: int = 10,
    solver_options: Mapping[str, Any] | None = None,
    compare_methods: Sequence[str] = (),
    complete_components: int = 1000,
    random_state: Any = 0,
    progress: bool = False,
    client: Any = None,
    link_type: str | None = None,
    source_col: str = "source_dataset",
    existing: Any = None,
) -> Resolution:
    """Resolve records into entities, with the evidence for every merge.

    records → blocking → pairwise scoring → signed-weight graph (threshold ``T``) →
    clique partitioning (``method="xer"``) → entity ids + explanations → evaluation.

    Parameters
    ----------
    records : DataFrame or path
        One row per record (CSV, ``.csv.gz`` or parquet path, or a DataFrame).
    id_col : str, optional
        Unique record id column (default: a column named ``id``, else the row number).
    fields : None, list, dict or str
        Columns to compare and their kinds (``{"name": "name", "zip": "exact"}``,
        ``"name:name,zip:exact"``); inferred when None.
    labels : None, str, mapping or DataFrame
        Training labels: a column / mapping of entity ids (a ``train_fraction`` share of
        the labelled candidate pairs trains the model, as in the xER paper's 50 % split),
        or a pair table ``(id_l, id_r, match)``. Without labels the scorer is
        unsupervised Fellegi–Sunter (EM).
    truth : None, str or mapping
        True entity ids for evaluation (metrics land in ``Resolution.metrics``).
    method : {"xer", "connected_components", "hierarchical"}
    blocking : list of str, optional
        Blocking rules (see :mod:`trustlab.er.blocking`); default: all pairs for
        up to 1,500 records, else token/key blocking on the fields.
    max_block_size : int
        Block purging size.
    scorer : {"auto", "supervised", "fellegi_sunter"}
    model : {"logistic", "ridge"}, or a saved model
        Supervised model kind; or a fitted model to apply without training: a path to a
        model JSON (:func:`trustlab.er.model.save_model`, CLI ``--save-model``), its
        dict, an :class:`~trustlab.er.model.ERModel` or an earlier :class:`Resolution`.
        Its fields, blocking rules, scorer, weights and threshold are used.
    existing : DataFrame or path, optional
        With a saved ``model``: an earlier output (ids, ``entity_id`` and the fields) to
        resolve ``records`` against incrementally; existing entity ids stay stable (they
        change only when new records merge entities; see :mod:`trustlab.er.model`).
    weights : {"centered", "logit"}
        Map probabilities to signed weights (``p - 0.5``, the default, or log-odds).
    threshold : float, optional
        xER blocking threshold T on the weights (pairs below it are dropped).
    time_limit, M, solver_options
        Passed to :func:`trustlab.solvers.partition` (``solver_options`` is a dict of
        extra keywords, e.g. ``{"method": "qsp"}`` is spelled ``solver_method`` there).
    complete_components : int
        After scoring, every pair inside a positive-weight component of up to this
        many records that blocking missed is scored too (0 disables). Blocking finds
        candidates; the clustering step then sees all the evidence inside each
        component, so a true entity split by blocking can still be one clique.
    compare_methods : sequence of str
        Baseline clustering methods to run on the same scores (metrics in
        ``Resolution.baselines`` when ``truth`` is given).
    random_state : int, Generator or None
        Seed for the training split.
    progress : bool
        Show a progress bar over the stages.
    client : dask.distributed.Client, optional
        Ship the partition layer's components (those with more than 6 records) to a
        Dask cluster (its ``scheduler=`` argument). Blocking, scoring and the small
        components always run locally (vectorised / Numba-parallel).
    link_type : {"dedupe_only", "link_only", "link_and_dedupe"}, optional
        With several tables (``records`` a list, tuple or dict of DataFrames / paths):
        ``"link_only"`` compares only records of different tables and never puts two
        records of one table in an entity (needs ``method="xer"``);
        ``"link_and_dedupe"`` (the default for several tables) compares all pairs. With
        one table, ``"link_only"`` reads the table of each record from ``source_col``.
        See :mod:`trustlab.er.linking`.
    source_col : str
        The source column added to (or read from) the records; Splink's name by default.
        The result's :meth:`Resolution.to_frame` has it first, then the id column (ids
        need to be unique only within their table) and ``entity_id``.

    Returns
    -------
    Resolution

    Notes
    -----
    What is exact and what is not: the clustering of each positive-weight component is
    exact (closed form for 1–2 records, enumeration of every set partition for 3–6, the
    partition layer's exact ``cpp`` up to 400 records, with status and gap per component
    in the explanations); larger components use the partition layer's heuristic
    (status ``"feasible"``, an upper bound is still reported). Blocking with purging may
    miss true pairs (``pair_completeness`` says how many when the truth is known), and the
    scores are model estimates: Fellegi–Sunter assumes fields agree independently given
    the match status, so its probabilities are approximate.

    Examples
    --------
    >>> import trustlab, pandas as pd
    >>> df = pd.DataFrame({"id": [1, 2, 3, 4],
    ...                    "name": ["ann lee", "anne lee", "bob ray", "bob rae"],
    ...                    "ent": [0, 0, 1, 1]})
    >>> r = trustlab.resolve(df, id_col="id", fields={"name": "name"}, labels="ent",
    ...                      truth="ent", train_fraction=1.0, method="connected_components")
    >>> r.metrics["f1"]
    1.0
    """
    from trustlab.er.model import is_saved_model, load_model, resolve_incremental

    fitted = load_model(model) if is_saved_model(model) else None
    if existing is not None:
        if fitted is None:
            raise ValueError("existing=... needs model=... (a saved model or a Resolution) to score the new records")
        return resolve_incremental(records, existing, fitted, id_col=id_col, threshold=threshold,
                                   time_limit=time_limit, complete_components=complete_components)
    if fitted is not None:  # apply a saved model: its fields, blocking and scorer; no training
        fields = fitted.fields if fields is None else fields
        weights = fitted.settings.get("weights", weights)
        threshold = fitted.settings.get("threshold") if threshold is None else threshold
        model = "logistic"
        labels = None
    t0 = time.perf_counter()
    secs: dict[str, float] = {}
    time_limit = check_time_limit(time_limit, func="resolve")
    if solver_options:
        import inspect

        from trustlab.solvers.api import partition

        valid = sorted(set(inspect.signature(partition).parameters) - {"graph_or_weights", "time_limit", "M"})
        unknown = sorted(set(map(str, solver_options)) - set(valid))
        if unknown:
            raise InvalidParameterError(
                f"The 'solver_options' parameter of resolve has unknown key(s) {unknown}; valid keys are "
                f"the keywords of trustlab.partition: {valid} (time_limit and M are resolve's own)."
            )
    if client is not None:
        solver_options = {**dict(solver_options or {}), "scheduler": client}
    check_option(method, "method", list(CLUSTER_METHODS), func="resolve")
    check_option(scorer, "scorer", ["auto", "supervised", "fellegi_sunter"], func="resolve")
    check_option(weights, "weights", ["logit", "centered"], func="resolve")
    check_interval(train_fraction, "train_fraction", low=0, high=1, closed="right", func="resolve")
    for m in compare_methods:
        check_option(m, "compare_methods", list(CLUSTER_METHODS), func="resolve")
    rng = check_random_state(random_state)
    records, id_col, make_link = prepare_link(records, id_col, link_type, source_col, method)
    df, id_col = validate_records(records, id_col)
    exclude = [c for c in (labels, truth) if isinstance(c, str)]
    if make_link is not None:  # the stacked tables' own id and source columns are not fields
        lk = make_link(df)
        exclude += [lk.id_col, lk.source_col]
    freport = field_report(fields, df, id_col=id_col, exclude=exclude)
    flds = freport.fields
    n = len(df)
    # process the rows in a canonical order (by id, or by content when the id is the row
    # number): results do not depend on the input's row order for a fixed seed
    order = canonical_order(df, id_col)
    if isinstance(labels, (list, tuple, np.ndarray)):
        labels = np.asarray(labels, dtype=object)[order]
    if isinstance(truth, (list, tuple, np.ndarray)):
        truth = np.asarray(truth, dtype=object)[order]
    df = df.iloc[order].reset_index(drop=True)
    link = make_link(df) if make_link else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=5, desc="resolve", unit="stage", leave=False)

    def step(name, t):
        secs[name] = time.perf_counter() - t
        if bar is not None:
            bar.set_postfix_str(name)
            bar.update(1)

    # labels / truth first, so bad ids fail before any work
    ent_labels = pair_lab = None
    if labels is not None:
        if isinstance(labels, pd.DataFrame):
            pair_lab = _pair_labels(labels, df, id_col)
        else:
            ent_labels = _entity_map(labels, df, id_col, "labels")
    truth_arr = _entity_map(truth, df, id_col, "truth") if truth is not None else None
    if truth_arr is not None and any(v is None for v in truth_arr):
        raise ValueError("truth must give an entity id for every record (some are missing)")

    t = time.perf_counter()
    if blocking is None and fitted is not None:
        blocking = fitted.rules_for(df)
    rules = blocking if blocking is not None else default_rules(df, flds, max_block_size=max_block_size)
    rules = [rules] if isinstance(rules, str) else list(rules)
    pairs = block(df, rules, max_block_size=max_block_size)
    if link is not None:
        pairs = link.keep(pairs)
    stats = BlockingStats(n_records=n, n_candidate_pairs=int(len(pairs)), reduction_ratio=reduction_ratio(len(pairs), n))
    stats.rules = list(rules)
    if truth_arr is not None:
        stats.pair_completeness = pair_completeness(pairs, truth_arr)
    step("blocking", t)

    t = time.perf_counter()
    use_sup = scorer == "supervised" or (scorer == "auto" and labels is not None)
    if fitted is not None:
        use_sup = fitted.supervised
    only = None if use_sup else FSModel(flds).needed_features()  # FS needs two features per field
    fm = compare(df, pairs, flds, only=only)
    step("features", t)

    t = time.perf_counter()
    if fitted is not None:
        mdl, use_sup = fitted.scorer, fitted.supervised
    elif use_sup:
        if labels is None:
            raise ValueError("scorer='supervised' needs labels=...; or use scorer='fellegi_sunter'")
        if pair_lab is not None:
            Xtr = compare(df, pair_lab[0], flds).X
            ytr = pair_lab[1]
        else:
            lab = np.array([v is not None for v in ent_labels])
            both = lab[pairs[:, 0]] & lab[pairs[:, 1]]
            cand = np.flatnonzero(both)
            if cand.size == 0:
                raise ValueError("no candidate pair has both records labelled; label more records")
            k = max(1, int(round(train_fraction * cand.size)))
            tr = rng.choice(cand, size=k, replace=False) if k < cand.size else cand
            le = pd.factorize(pd.Series(ent_labels[lab]).astype(str))[0]
            codes = np.full(n, -1, np.int64)
            codes[lab] = le
            ytr = (codes[pairs[tr, 0]] == codes[pairs[tr, 1]]).astype(int)
            Xtr = fm.X[tr]
        mdl = SupervisedScorer(model=model, C=C).fit(Xtr, ytr)
    else:
        # multi-level Fellegi-Sunter with TF adjustment; u from random record pairs
        # (Splink's estimate_u_using_random_sampling), EM seeded by a deterministic rule
        rp = random_pairs(n, rng)
        mdl = FSModel(flds).fit(df, pairs, fm, rp, compare(df, rp, flds, only=only))
        mdl.warn_if_degenerate(stacklevel=3)

    def _predict(P, F):
        if F.X.shape[0] == 0:
            return np.zeros(0)
        return mdl.predict_proba(F.X) if use_sup else mdl.predict_proba(df, P, F)

    fw = None if use_sup else mdl.field_weights(df, pairs, fm)
    prob = _predict(pairs, fm) if use_sup else mdl.proba_from_field_weights(fw)
    w = to_weights(prob, weights)
    if complete_components and len(pairs):
        extra = _component_completion(n, pairs, w, int(complete_components))
        if link is not None:
            extra = link.keep(extra)
        if len(extra):
            fx = compare(df, extra, flds, only=only)
            px = _predict(extra, fx)
            pairs = np.concatenate([pairs, extra])
            prob = np.concatenate([prob, px])
            w = np.concatenate([w, to_weights(px, weights)])
            fm.X = np.vstack([fm.X, fx.X])
            if fw is not None:
                fw = np.vstack([fw, mdl.field_weights(df, extra, fx)])
            stats.n_completed_pairs = int(len(extra))
    if blocking is None and not use_sup and len(rules) > 1 and len(pairs):
        stats.estimated_pair_completeness = estimate_pair_completeness(
            rule_hits(df, rules, pairs, max_block_size=max_block_size), prob > 0.5)
    step("scoring", t)

    t = time.perf_counter()
    kw: dict[str, Any] = {}
    if method == "xer":
        kw = {"time_limit": time_limit, "M": M, "solver_options": dict(solver_options or {})}
    if method == "hierarchical":
        kw = {"prob": prob}
    cr = cluster_pairs(n, pairs, w, method=method, threshold=threshold, **kw)
    step("clustering", t)

    t = time.perf_counter()
    metrics = None
    baselines: dict[str, Any] = {}
    if truth_arr is not None:
        metrics = evaluate(cr.labels, truth_arr.astype(str))
        metrics["pair_completeness"] = stats.pair_completeness
    for m in compare_methods:
        if m == method:
            continue
        tb = time.perf_counter()
        kwb = {"prob": prob} if m == "hierarchical" else ({"time_limit": time_limit, "M": M, "solver_options": dict(solver_options or {})} if m == "xer" else {})
        crb = cluster_pairs(n, pairs, w, method=m, threshold=threshold if m == "xer" else None, **kwb)
        entry: dict[str, Any] = {"n_entities": int(crb.labels.max()) + 1, "seconds": time.perf_counter() - tb}
        if truth_arr is not None:
            entry.update(evaluate(crb.labels, truth_arr.astype(str)))
        baselines[m] = entry
    step("evaluation", t)
    if bar is not None:
        bar.close()
    secs["total"] = time.perf_counter() - t0
    # back to the caller's row order
    inv = np.empty(n, np.int64)
    inv[order] = np.arange(n)
    cr.labels = cr.labels[inv]
    cr.component = cr.component[inv]
    pairs = np.sort(order[pairs], axis=1) if len(pairs) else pairs
    ids = df[id_col].to_numpy()[inv]
    if link is not None:
        ids = df[link.id_col].to_numpy()[inv]
        id_col = link.id_col
    return Resolution(
        ids=ids, entity=cr.labels, id_col=id_col, pairs=pairs, prob=prob, weights=w,
        features=fm, clusters=cr, blocking=stats, seconds=secs, metrics=metrics, baselines=baselines, model=mdl,
        field_weights=fw, field_report=freport, order=order,
        source=df[link.source_col].to_numpy()[inv] if link else None, source_col=link.source_col if link else None,
        link_type=link.link_type if link else "dedupe_only", records=df.iloc[inv].reset_index(drop=True),
        settings={"method": method, "weights": weights, "threshold": threshold, "max_block_size": max_block_size,
                  "time_limit": time_limit, "id_col": link.id_col if link else id_col, "n_training_records": n,
                  "link_type": link.link_type if link else "dedupe_only", "source_col": source_col},
    )
