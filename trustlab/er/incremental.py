"""Stage 7, *persist/incremental*: new records resolved against an existing clustering with
stable entity ids (an orchestrator of its own: it blocks, compares, scores and clusters).

**Incremental resolution** (``resolve(new_records, model=..., existing=old_output)``):
the new records are blocked and scored against the existing records (and each other)
with the saved model; every existing entity is treated as one node (its records stay
together), the pairs between the nodes that a new record links are completed, and the
partition layer clusters the nodes exactly as :func:`trustlab.er.resolve` would
(``xer``). Then:

* an existing entity id **never changes unless new evidence merges entities**: when a
  new record's scores join two or more existing entities into one cluster, the merged
  entity keeps the **smallest** of their ids and the records of the others change to it;
* existing entities are never split, and records of entities untouched by the new
  records keep their id whatever happens elsewhere;
* new records that join no existing entity get fresh ids above the largest existing id,
  numbered in the order of their smallest record id (not of the input rows).

So adding records renumbers nothing: only the records of merged entities change id.
"""
from __future__ import annotations

import numbers
import os
import re
import time
from typing import Any

import numpy as np
import pandas as pd

from trustlab._validation import Interval, validate_params
from trustlab.er.blocking import BlockingStats, block, reduction_ratio
from trustlab.er.cluster import cluster_pairs
from trustlab.er.comparisons import FeatureMatrix
from trustlab.er.defaults import COMPLETE_COMPONENTS, MIN_CLUSTERING_SECONDS, check_pair_budget
from trustlab.er.kinds import pair_width
from trustlab.er.linking import _as_frame
from trustlab.er.model import load_model
from trustlab.er.records import placeholders_to_missing
from trustlab.er.resolution import Resolution
from trustlab.er.scoring import _component_completion, to_weights

__all__ = ["resolve_incremental", "check_existing"]


_INT_TEXT = re.compile(r"[+-]?[0-9]+")


def _as_int(v: Any) -> int | None:
    """The integer an entity id spells (an int, or text of decimal digits), else None.

    Ids are labels: this only orders them and picks fresh ids; they are never rewritten."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, str):
        if _INT_TEXT.fullmatch(v):
            return int(v)  # Python ints: no overflow near the int64 limit
    return None


def _id_key(v: Any) -> tuple:
    """Sort key of entity ids: integer-like ids by value (``"9"`` before ``"10"``), then
    other ids as text; ties (``"007"`` and ``"7"``) by their text."""
    i = _as_int(v)
    return (0, i, str(v)) if i is not None else (1, 0, str(v))


def _new_ids(old: Any, k: int) -> list:
    """``k`` fresh entity ids: above the largest id when every existing id is an integer
    (text stays text: ``"41"`` gives ``"42"``), else ``e0, e1, …`` not taken."""
    vals = list(pd.unique(pd.Series(list(old), dtype=object)))
    ints = [_as_int(v) for v in vals]
    if vals and all(i is not None for i in ints):
        top = max(ints)
        text = any(isinstance(v, str) for v in vals)
        return [str(top + 1 + i) if text else top + 1 + i for i in range(k)]
    taken = {str(v) for v in vals}
    out, i = [], 0
    while len(out) < k:
        c = f"e{i}"
        if c not in taken:
            out.append(c)
        i += 1
    return out


def check_existing(old: pd.DataFrame, id_col: str, entity_col: str, name: str = "existing") -> None:
    """Every record of an earlier output once, with an entity id (``name`` names the
    table or file in the messages)."""
    ids = old[id_col]
    if ids.isna().any():
        raise ValueError(f"{name}: column {id_col!r} has {int(ids.isna().sum())} record(s) without an id")
    dup = ids.astype(str).duplicated(keep=False)
    if dup.any():
        ex = list(pd.unique(ids[dup].astype(str)))[:5]
        raise ValueError(
            f"{name}: column {id_col!r} holds record id {ex[0]!r} more than once (duplicates: {ex}); an earlier "
            "output has each record once: remove the repeated rows"
        )
    ent = old[entity_col]
    if ent.isna().any():
        i = int(np.flatnonzero(ent.isna().to_numpy())[0])
        raise ValueError(f"{name}: column {entity_col!r} is empty for record {ids.iloc[i]!r} (and "
                         f"{int(ent.isna().sum()) - 1} more); every existing record needs its entity id")


@validate_params(
    {
        "records": [object], "existing": [object], "model": [object], "id_col": [str, None], "entity_col": [str],
        "method": [{"xer", "connected_components"}, None],
        "threshold": [Interval(numbers.Real, None, None), None],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "complete_components": [Interval(numbers.Integral, 0, None, closed="left")],
    }
)
def resolve_incremental(
    records: Any,
    existing: Any,
    model: Any,
    *,
    id_col: str | None = None,
    entity_col: str = "entity_id",
    method: str | None = None,
    threshold: float | None = None,
    time_limit: float | None = None,
    complete_components: int = COMPLETE_COMPONENTS,
):
    """Resolve new ``records`` against an ``existing`` clustering with a saved model.

    Parameters
    ----------
    records : DataFrame or path
        The new records (same columns as the model's fields; ids distinct from the
        existing ones).
    existing : DataFrame or path
        The earlier output: one row per record with its id, ``entity_col`` and the
        fields (what ``trustlab resolve --output`` writes).
    model : path, dict or ERModel
    id_col : str, optional
        Id column (default: the model's, else ``id``).
    entity_col : str
        Entity id column of ``existing``.
    time_limit : float, optional
        Wall-clock seconds for the whole call (default: the model's saved one): the
        clustering gets what scoring left of it (at least 0.05 s).
    complete_components : int
        Score the pairs blocking missed inside positive components of up to this many
        records (default :data:`~trustlab.er.defaults.COMPLETE_COMPONENTS`, as
        :func:`trustlab.resolve`; 0 disables).

    Returns
    -------
    Resolution
        Old and new records (old first) with their entity ids; see the module docstring
        for exactly when an existing id changes.

    Examples
    --------
    >>> import trustlab, pandas as pd
    >>> from trustlab.er import generate_records
    >>> df = generate_records(220, random_state=2)
    >>> old, new = df.iloc[:200], df.iloc[200:]
    >>> f = "given_name:name,surname:name,date_of_birth:date,soc_sec_id:string"
    >>> r0 = trustlab.resolve(old, id_col="rec_id", fields=f)
    >>> r1 = trustlab.resolve(new, model=r0, existing=r0.to_frame(records=True))
    >>> before = dict(zip(r0.ids, r0.entity))
    >>> after = dict(zip(r1.ids, r1.entity))
    >>> len(r1.ids), int(sum(after[k] != v for k, v in before.items()))
    (220, 0)
    """
    t0 = time.perf_counter()
    mdl = load_model(model)
    st = mdl.settings
    method = method or st.get("method", "xer")
    if method not in ("xer", "connected_components"):
        raise ValueError(f"incremental resolution supports method 'xer' or 'connected_components'; got {method!r}")
    weights = st.get("weights", "logit")
    if threshold is None:
        threshold = st.get("threshold")
    new = _as_frame(records, "records").reset_index(drop=True)
    old = _as_frame(existing, "existing").reset_index(drop=True)
    idc = id_col or st.get("id_col") or ("id" if "id" in new.columns else None)
    if idc is None or idc == "_row":
        raise ValueError(
            "incremental resolution needs a record id column in both tables; pass id_col=... (CLI --id-col)"
        )
    for nm, t, cols in (("records", new, [idc]), ("existing", old, [idc, entity_col])):
        miss = [c for c in cols + [c for f in mdl.fields for c in f.columns()] if c not in t.columns]
        if miss:
            raise ValueError(
                f"{nm} lacks column(s) {sorted(set(miss))} that the model or the ids need; it has "
                f"{list(map(str, t.columns))}" + (" (write the earlier output with its records: "
                                                   "`trustlab resolve ... --output`)" if nm == "existing" else "")
            )
    src = str(existing) if isinstance(existing, (str, os.PathLike)) else old.attrs.get("path")
    check_existing(old, idc, entity_col, f"existing file {src!r}" if src else "existing")
    clash = set(old[idc].astype(str)) & set(new[idc].astype(str))
    if clash:
        raise ValueError(f"{len(clash)} new record id(s) already exist, e.g. {sorted(clash)[:5]}; ids must be new")
    n_old, n_new = len(old), len(new)
    cols = [c for c in old.columns if c != entity_col]
    allc = list(dict.fromkeys([*cols, *new.columns]))
    df = pd.concat([old.reindex(columns=allc), new.reindex(columns=allc)], ignore_index=True)
    for c in allc:  # the old output was read back as text: align dtypes for comparisons
        if df[c].dtype == object:
            continue
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    n = len(df)
    raw, df = df, placeholders_to_missing(df, idc)  # placeholders are missing for matching only
    # 1. candidate pairs touching a new record
    rules = mdl.rules_for(df)
    if rules == ["all"] or "all" in rules:
        i_new = np.arange(n_old, n, dtype=np.int64)
        a = np.repeat(i_new, n)
        b = np.tile(np.arange(n, dtype=np.int64), n_new)
        P = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
        P = P[P[:, 0] != P[:, 1]]
        P = np.unique(P, axis=0)
    else:
        check_pair_budget(df, rules, int(st.get("max_block_size", 200)), pair_width(mdl.fields))  # before any pair
        P = block(df, rules, max_block_size=int(st.get("max_block_size", 200)))
        P = P[(P[:, 0] >= n_old) | (P[:, 1] >= n_old)]
    prob, fm = mdl.score(df, P)
    w = to_weights(prob, weights)
    # 2. nodes: one per existing entity, one per new record
    ent_codes, ent_vals = pd.factorize(old[entity_col].astype(str))
    n_ent = len(ent_vals)
    node = np.r_[ent_codes.astype(np.int64), n_ent + np.arange(n_new, dtype=np.int64)]
    n_nodes = n_ent + n_new
    # 3. complete record pairs between the nodes of each positive component
    wk = w if threshold is None else np.where(w >= threshold, w, -1.0)
    NP = np.sort(np.stack([node[P[:, 0]], node[P[:, 1]]], axis=1), axis=1) if len(P) else np.empty((0, 2), np.int64)
    members = pd.Series(np.arange(n_old)).groupby(ent_codes).apply(list).to_dict()
    if complete_components and len(NP):
        # node pairs inside positive components (of nodes) that no candidate pair covers
        extra_nodes = _component_completion(n_nodes, NP[NP[:, 0] != NP[:, 1]], wk[NP[:, 0] != NP[:, 1]],
                                            int(complete_components))
        # every record pair between two nodes of a component (also those blocking missed)
        touched = np.unique(np.r_[NP[wk > 0].ravel(), extra_nodes.ravel()])
        recs_of = {v: (members.get(v, []) if v < n_ent else [n_old + v - n_ent]) for v in touched.tolist()}
        have = set(map(tuple, P.tolist()))
        allnp = np.r_[NP[wk > 0], extra_nodes] if len(extra_nodes) else NP[wk > 0]
        add = []
        for u, v in {tuple(x) for x in allnp.tolist()}:
            if u == v:
                continue
            for ra in recs_of[u]:
                for rb in recs_of[v]:
                    q = (min(ra, rb), max(ra, rb))
                    if q not in have:
                        have.add(q)
                        add.append(q)
        if add:
            X = np.array(add, np.int64)
            px, fx = mdl.score(df, X)
            P = np.concatenate([P, X])
            prob = np.concatenate([prob, px])
            w = np.concatenate([w, to_weights(px, weights)])
            fm = FeatureMatrix(X=np.vstack([fm.X, fx.X]), names=fm.names, field_of=fm.field_of,
                               primary=fm.primary, fields=fm.fields)
            NP = np.sort(np.stack([node[P[:, 0]], node[P[:, 1]]], axis=1), axis=1)
    # 4. node weights: sum of the record-pair weights between two nodes
    keep = NP[:, 0] != NP[:, 1] if len(NP) else np.zeros(0, bool)
    if keep.any():
        code = NP[keep, 0] * n_nodes + NP[keep, 1]
        uc, inv = np.unique(code, return_inverse=True)
        NW = np.bincount(inv.ravel(), weights=w[keep])
        NPu = np.stack([uc // n_nodes, uc % n_nodes], axis=1)
    else:
        NPu, NW = np.empty((0, 2), np.int64), np.zeros(0)
    kw: dict[str, Any] = {}
    if method == "xer":
        budget = time_limit if time_limit is not None else st.get("time_limit")
        if budget is not None:  # wall time for the whole call: the clustering gets what is left
            budget = max(float(budget) - (time.perf_counter() - t0), MIN_CLUSTERING_SECONDS)
        kw = {"time_limit": budget}
    cr = cluster_pairs(n_nodes, NPu, NW, method=method, threshold=threshold, **kw)
    lab = cr.labels
    # 5. ids: existing ids kept exactly as given (labels: "0.1", "007" and ids past the
    # int64 range stay what they are); merges keep the smallest id; fresh ids for new clusters
    old_ids_of_node = pd.Series(old[entity_col].to_numpy(), dtype=object).groupby(ent_codes).first()
    cluster_id: dict[int, Any] = {}
    for e in range(n_ent):
        c = int(lab[e])
        v = old_ids_of_node.iloc[e]
        cluster_id[c] = v if c not in cluster_id else min(cluster_id[c], v, key=_id_key)
    fresh = sorted({int(lab[n_ent + k]) for k in range(n_new)} - set(cluster_id),
                   key=lambda c: min(str(x) for x in new[idc].to_numpy()[lab[n_ent:] == c]))
    ids_new = _new_ids(old[entity_col], len(fresh))
    for c, v in zip(fresh, ids_new):
        cluster_id[c] = v
    entity = np.array([cluster_id[int(lab[node[r]])] for r in range(n)], dtype=object)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and -2**63 <= v < 2**63
           for v in cluster_id.values()):
        entity = entity.astype(np.int64)  # integer ids given as integers (a DataFrame) stay integers
    n_merged = n_ent - len({int(lab[e]) for e in range(n_ent)})
    stats = BlockingStats(n_records=n, n_candidate_pairs=int(len(P)), reduction_ratio=reduction_ratio(len(P), n))
    stats.rules = list(rules)
    cr.info.update({"incremental": True, "n_existing": n_old, "n_new": n_new, "n_merged_entities": int(n_merged),
                    "n_new_entities": len(fresh)})
    fw = None
    if not mdl.supervised and hasattr(mdl.scorer, "field_weights"):
        fw = mdl.scorer.field_weights(df, P, fm) if len(P) else np.zeros((0, len(mdl.fields)))
    # per-record component for explanations: the node's cluster
    cr.labels = pd.factorize(entity)[0].astype(np.int64)
    cr.component = np.asarray(cr.component)[node]
    res = Resolution(
        ids=df[idc].to_numpy(), entity=entity, id_col=idc, pairs=P, prob=prob, weights=w, features=fm,
        clusters=cr, blocking=stats, seconds={"total": time.perf_counter() - t0}, model=mdl.scorer,
    )
    res.records = raw
    if hasattr(res, "field_weights"):
        res.field_weights = fw
    res.settings = dict(st)
    res.resolve_settings = mdl.resolve_settings  # the model's: save_model writes them on
    return res
