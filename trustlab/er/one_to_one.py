"""Stage 6 of :func:`trustlab.resolve`, *cluster*, for one-to-one linkage: sources that are
each duplicate-free, clustered exactly.

When every source holds an entity at most once, no entity may hold two records of one
source. :func:`cluster_one_to_one` takes scored pairs and the source of every record and
returns the best such clustering (the clique-partitioning objective: the total signed
weight of the pairs inside entities), with its certificate:

* **two duplicate-free sources** (the usual two-table linkage): an entity is one record
  or one record of each side, so the optimum is a maximum-weight bipartite matching on
  the positive cross pairs. :func:`trustlab.solvers.assignment.max_weight_matching`
  solves it exactly per component, at any component size and with no time limit, and
  proves it with an LP dual (status ``"optimal"``, ``bound == objective``);
* **three or more sources, or sources of which only some are duplicate-free**
  (``link_and_dedupe``): clique partitioning (``method="xer"``) with every pair inside a
  duplicate-free source forbidden (a pair that is not an edge may not share a cluster).
  This is exact (status ``"optimal"``) where the partition layer proves it, as usual
  (closed form, enumeration, ``cpp`` up to its size limit); a large component may end
  ``"time_limit"`` / ``"feasible"`` with its bound and gap reported.

Unlike a greedy "single best link" rule (e.g. Splink's ``cluster_using_single_best_links``),
which keeps the heaviest pair first and can lose on chains (a-b 0.9, b-c 0.95, c-d 0.9:
greedy keeps b-c alone, the optimum keeps a-b and c-d) and depends on the order of ties,
this returns an optimal clustering. Among several optimal clusterings (exact ties), the
one returned is fixed by the record order (``resolve`` puts records in a canonical order
by id first, so it does not depend on the input's row order).

With ``link_type="link_only"`` and ``method="xer"``, ``resolve`` already never puts two
records of one table together (same-table pairs are not compared, hence forbidden);
``one_to_one=True`` adds the exact assignment solver for two tables (proven optimal at
every component size, where clique partitioning of a large component may stop at its time
limit), makes the constraint available with ``link_and_dedupe`` (per source) and reports
which solver ran (``ClusterResult.info["one_to_one"]``, ``Resolution.summary()``).
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
import pandas as pd

from trustlab._validation import Interval, check_option, validate_params
from trustlab.er.cluster import ClusterResult, canonical_pairs, cluster_pairs

__all__ = ["cluster_one_to_one", "ONE_TO_ONE_SOLVERS"]

ONE_TO_ONE_SOLVERS = ("auto", "assignment", "clique_partitioning")


def _source_codes(sources: Any, n: int) -> tuple[np.ndarray, list]:
    src = np.asarray(sources, dtype=object).ravel()
    if src.shape[0] != n:
        raise ValueError(f"sources must give the source of every record: expected {n} values, got {src.shape[0]}")
    if pd.isna(pd.Series(src)).any():
        raise ValueError("sources has missing values; every record needs its source (table) name")
    codes, names = pd.factorize(pd.Series(src).astype(str), sort=True)
    return codes.astype(np.int64), [str(x) for x in names]


def _duplicate_free(duplicate_free: Any, names: list) -> np.ndarray:
    """Which source codes are duplicate-free (bool per source)."""
    if duplicate_free is None:
        return np.ones(len(names), bool)
    asked = [str(x) for x in duplicate_free]
    unknown = sorted(set(asked) - set(names))
    if unknown:
        raise ValueError(f"duplicate-free source(s) {unknown} are not among the records' sources {names}; "
                         "name sources as they appear in the source column")
    return np.isin(np.array(names, dtype=object), asked)


def _assignment(n: int, P: np.ndarray, w: np.ndarray, codes: np.ndarray) -> ClusterResult:
    """Two duplicate-free sources: a maximum-weight matching, with its dual certificate."""
    from trustlab.solvers.assignment import max_weight_matching

    left = np.flatnonzero(codes == 0)
    right = np.flatnonzero(codes == 1)
    pos = np.full(n, -1, np.int64)
    pos[left] = np.arange(left.size)
    pos[right] = np.arange(right.size)
    a_left = codes[P[:, 0]] == 0
    li = pos[np.where(a_left, P[:, 0], P[:, 1])]
    rj = pos[np.where(a_left, P[:, 1], P[:, 0])]
    mr = max_weight_matching(int(left.size), int(right.size), li, rj, w)
    labels = np.arange(n, dtype=np.int64)
    i = np.flatnonzero(mr.mate_left >= 0)
    labels[right[mr.mate_left[i]]] = left[i]
    # components of the positive graph: the matching's, then every isolated record on its own
    comp = np.full(n, -1, np.int64)
    comp[left] = mr.component_left
    comp[right] = mr.component_right
    k = int(comp.max(initial=-1)) + 1
    iso = np.flatnonzero(comp < 0)
    comp[iso] = k + np.arange(iso.size)
    k += iso.size
    sizes = np.bincount(comp, minlength=k)
    status = ["closed_form" if s <= 2 else "optimal" for s in sizes]
    for c in mr.components:
        if sizes[c["component"]] > 2:
            status[c["component"]] = c["status"]
    return ClusterResult(
        labels=np.unique(labels, return_inverse=True)[1].astype(np.int64), component=comp, status=status,
        gap=np.zeros(k), objective=mr.objective, bound=mr.bound, method="xer",
        info={"n_components": int(k), "n_edges": int(len(P)), "certificate": {
            "dual_objective": mr.dual_objective, "max_violation": mr.max_violation, "status": mr.status}},
    )


@validate_params(
    {
        "n": [Interval(numbers.Integral, 0, None, closed="left")],
        "pairs": ["array-like"],
        "weights": ["array-like"],
        "sources": ["array-like"],
        "duplicate_free": ["array-like", None],
        "threshold": [Interval(numbers.Real, None, None), None],
        "solver": [str],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "M": [Interval(numbers.Integral, 1, None, closed="left")],
        "solver_options": ["mapping", None],
        "max_default_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }
)
def cluster_one_to_one(
    n: int,
    pairs: Any,
    weights: Any,
    sources: Any,
    *,
    duplicate_free: Sequence[str] | None = None,
    threshold: float | None = None,
    solver: str = "auto",
    time_limit: float | None = None,
    M: int = 10,
    solver_options: dict | None = None,
    max_default_time: float | None = None,
) -> ClusterResult:
    """Cluster ``n`` records from scored pairs so that no entity holds two records of
    a duplicate-free source; exact, with a certificate.

    Parameters
    ----------
    n : int
        Number of records (labels are for rows ``0..n-1``).
    pairs : array-like of shape (m, 2)
        Record index pairs (order and repeats do not matter; a repeated pair keeps its
        largest weight).
    weights : array-like of shape (m,)
        Signed weights, positive = "same entity".
    sources : array-like of shape (n,)
        The source (table name) of every record.
    duplicate_free : sequence of str, optional
        The sources that hold each entity at most once (default: every source). Pairs
        inside these sources are forbidden; pairs inside the others may still merge
        (``link_and_dedupe``).
    threshold : float, optional
        Pairs with a weight below it are dropped (and may not share an entity).
    solver : {"auto", "assignment", "clique_partitioning"}
        ``"auto"``: the assignment when there are two sources, both duplicate-free;
        clique partitioning with the forbidden pairs otherwise. ``"assignment"`` is
        refused where it would not be exact.
    time_limit, M, solver_options
        For clique partitioning (:func:`trustlab.er.cluster_pairs`, ``method="xer"``).
    max_default_time : float, optional
        Accepted and no longer used: with no ``time_limit`` the clique partitioning
        runs under a deterministic work budget (see :func:`trustlab.er.cluster_pairs`),
        which the wall time a caller had left must not lower.

    Returns
    -------
    ClusterResult
        ``info["one_to_one"]`` names the solver used, the sources and how many
        same-source pairs were forbidden; ``status`` per component is ``"optimal"`` or
        ``"closed_form"`` where proven (with the assignment: always).

    Examples
    --------
    Sources A = {0, 2}, B = {1, 3}; the chain 0-1 (0.9), 1-2 (0.95), 2-3 (0.9) in
    centred weights (p - 0.5). Greedy best links keep only 1-2; the optimum keeps
    0-1 and 2-3:

    >>> r = cluster_one_to_one(4, [[0, 1], [1, 2], [2, 3]], [0.4, 0.45, 0.4], ["A", "B", "A", "B"])
    >>> r.labels.tolist(), round(r.objective, 6), r.info["one_to_one"]["solver"], r.status
    ([0, 0, 1, 1], 0.8, 'assignment', ['optimal'])
    """
    check_option(solver, "solver", list(ONE_TO_ONE_SOLVERS), func="cluster_one_to_one")
    P = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape[0] != P.shape[0]:
        raise ValueError(f"pairs and weights must have the same length; got {P.shape[0]} and {w.shape[0]}")
    if P.size and (P.min() < 0 or P.max() >= n):
        raise ValueError(f"pair indices must lie in [0, {n - 1}]; got range [{P.min()}, {P.max()}]")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contain NaN or infinity; give every pair a finite score")
    codes, names = _source_codes(sources, n)
    free = _duplicate_free(duplicate_free, names)
    P, w, _ = canonical_pairs(n, P, w)
    same = (codes[P[:, 0]] == codes[P[:, 1]]) & free[codes[P[:, 0]]]
    n_forbidden = int(same.sum())
    P, w = P[~same], w[~same]
    if threshold is not None:
        keep = w >= threshold
        P, w = P[keep], w[keep]
    exact_assignment = len(names) <= 2 and bool(free.all())
    if solver == "assignment" and not exact_assignment:
        raise ValueError(
            f"solver='assignment' is exact only for two sources that are both duplicate-free; got sources {names} "
            f"with duplicate-free {[s for s, f in zip(names, free) if f]}. Use solver='auto'.")
    use = "assignment" if solver == "auto" and exact_assignment else solver
    if use == "auto":
        use = "clique_partitioning"
    if use == "assignment" and len(names) == 2:
        res = _assignment(n, P, w, codes)
    elif use == "assignment":  # one source, duplicate-free: every record is its own entity
        res = cluster_pairs(n, np.zeros((0, 2), np.int64), np.zeros(0), method="xer")
    else:
        kw: dict[str, Any] = {"M": M, "solver_options": dict(solver_options or {})}
        if time_limit is not None:
            kw["time_limit"] = time_limit
        else:
            kw["max_default_time"] = max_default_time
        res = cluster_pairs(n, P, w, method="xer", **kw)
    res.info["one_to_one"] = {
        "solver": use, "sources": names, "duplicate_free": [s for s, f in zip(names, free) if f],
        "n_forbidden_pairs": n_forbidden,
    }
    return res
