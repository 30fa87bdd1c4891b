"""Stage 8 of :func:`trustlab.resolve`, *report*: what it returns, and how a clustering is scored against the truth:
:class:`Resolution` (entity ids, scored pairs, explanations, lookups) and :func:`evaluate`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from trustlab._validation import validate_params
from trustlab.er.blocking import BlockingStats
from trustlab.er.cluster import ClusterResult, _proof_summary
from trustlab.er.comparisons import FeatureMatrix

__all__ = ["Resolution", "evaluate"]


@validate_params({"pred": ["array-like"], "truth": ["array-like"]})
def evaluate(pred: Any, truth: Any) -> dict[str, float]:
    """All clustering metrics of predicted entity ids against true ones.

    Pairwise precision/recall/F1, B-cubed, homogeneity, completeness, V-measure, ARI,
    FMI, entity-count and entity-size errors (see :mod:`trustlab.metrics.clustering`).

    Parameters
    ----------
    pred : array-like of shape (n,)
        Predicted entity id per record (any hashable labels).
    truth : array-like of shape (n,)
        True entity id per record.

    Examples
    --------
    >>> evaluate([0, 0, 1], ["a", "a", "b"])["f1"]
    1.0
    """
    from trustlab.metrics.clustering import clustering_report

    return clustering_report(pred, truth)


@dataclass
class Resolution:
    """The result of :func:`resolve`: entity ids, scored pairs and explanations.

    Attributes
    ----------
    ids : numpy.ndarray
        The record ids, in the input's order.
    entity : numpy.ndarray
        Entity id per record (0..n_entities-1).
    id_col : str
        Name of the id column.
    pairs : numpy.ndarray of shape (k, 2)
        The scored candidate pairs (record positions).
    prob, weights : numpy.ndarray of shape (k,)
        Match probability and signed edge weight per pair.
    features : FeatureMatrix
        The similarity features of the pairs.
    clusters : ClusterResult
        Per-component solver information.
    blocking : BlockingStats
        What blocking did (rules, pairs, reduction ratio).
    seconds : dict
        Time per stage.
    metrics : dict or None
        Clustering metrics against ``truth`` (None without truth).
    baselines, model, field_weights, field_report, settings :
        The comparison baselines, the fitted scorer, per-pair field Bayes factors, the field
        report and the settings saved with the model.
    resolve_settings : ResolveSettings or None
        The settings of the call that made this result (``settings=`` with the keyword
        shortcuts applied); :func:`~trustlab.er.model.save_model` writes them.

    Examples
    --------
    >>> df = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["ann lee", "anne lee", "bob ray", "bob ray"],
    ...                    "ent": [0, 0, 1, 1]})
    >>> from trustlab.er import resolve
    >>> res = resolve(df, id_col="id", fields={"name": "name"}, labels="ent", truth="ent", train_fraction=1.0,
    ...               method="connected_components")
    >>> res.entity.tolist(), res.n_entities, res.to_frame().columns.tolist()
    ([0, 0, 1, 1], 2, ['id', 'entity_id'])
    """

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
    #: several tables: how their columns were paired (:class:`trustlab.er.linking.ColumnPairing`)
    column_pairing: Any = None
    #: the :class:`~trustlab.er.ResolveSettings` of the call (``settings=`` with the keyword
    #: shortcuts applied); :func:`~trustlab.er.model.save_model` writes them
    resolve_settings: Any = None

    @property
    def n_entities(self) -> int:
        if self.entity.dtype == object:  # labels kept as given (incremental resolution)
            return int(pd.unique(self.entity).size)
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
        if "one_to_one" in self.clusters.info:  # which exact solver kept each table's records apart
            out["one_to_one"] = self.clusters.info["one_to_one"]
        if self.field_report is not None:
            out["fields"] = [{"column": f.column, "kind": f.kind} for f in self.field_report.fields]
        if self.model is not None and hasattr(self.model, "problems_"):
            out["model_warnings"] = list(self.model.problems_)
        if self.baselines:
            out["baselines"] = self.baselines
        if self.column_pairing is not None:
            out["column_pairing"] = self.column_pairing.to_dict()
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
