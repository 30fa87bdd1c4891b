"""Stage 6 of :func:`trustlab.resolve`, *cluster*: scored pairs into entities, ``xer``
(clique partitioning) and baselines (one-to-one linkage: :mod:`trustlab.er.one_to_one`).

All methods take ``n`` records, candidate ``pairs`` (i < j) and signed ``weights``
(positive = "same entity") and return one entity label per record.

* ``"xer"`` (default) — the xER model: drop pairs with weight below the blocking
  threshold ``T``, split into connected components of the positive-weight graph (an
  optimal clique partition never joins two such components), solve components of one
  or two records in closed form and all others with the partition layer
  (:func:`trustlab.solvers.partition`: maximal cliques + QSP/exact, with optimality
  status and gap per component). A pair that is not an edge may not share a cluster.
* ``"connected_components"`` — records linked by any pair with weight > ``threshold``
  share an entity (Splink / Zingg style).
* ``"hierarchical"`` — centroid-linkage hierarchical clustering per component on the
  distance ``1 - p`` (missing pair = 1), cut at ``1 - p_threshold`` (dedupe style).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from trustlab import _chunks
from trustlab._validation import Interval, Registry, check_interval, validate_params

__all__ = ["CLUSTER_METHODS", "ClusterResult", "cluster_pairs"]

CLUSTER_METHODS = Registry("clustering method")


@dataclass
class ClusterResult:
    """Entity label per record plus per-component solver information.

    ``component`` is each record's component id (positive-weight graph); ``status``
    and ``gap`` are indexed by component id (``"closed_form"`` for components of at
    most two records, ``"heuristic"`` for baselines).

    Attributes
    ----------
    labels : numpy.ndarray
        Entity id per record.
    component : numpy.ndarray
        Component id per record (components of the positive-weight graph).
    status : list of str
        Per component: the solver status (``"optimal"``, ``"time_limit"``, ...).
    gap : numpy.ndarray
        Per component: the relative optimality gap.
    objective, bound : float
        Total within-cluster weight and its proven upper bound.
    method : str
        The clustering method.
    info : dict
        Method details (e.g. completion counts from the interop entry points).

    Examples
    --------
    >>> r = cluster_pairs(4, [[0, 1], [1, 2], [0, 2], [2, 3]], [2.0, 1.0, 1.0, -1.0])
    >>> r.labels.tolist(), r.component.tolist(), r.status, r.objective == r.bound
    ([1, 1, 1, 0], [0, 0, 0, 1], ['optimal', 'closed_form'], True)
    """

    labels: np.ndarray
    component: np.ndarray
    status: list[str] = field(default_factory=list)
    gap: np.ndarray = field(default_factory=lambda: np.zeros(0))
    objective: float = float("nan")
    bound: float = float("nan")
    method: str = "xer"
    info: dict = field(default_factory=dict)


def _relabel(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels, return_inverse=True)[1].ravel().astype(np.int64)


def _components(n: int, pairs: np.ndarray, mask: np.ndarray) -> tuple[int, np.ndarray]:
    p = pairs[mask]
    g = sp.coo_matrix((np.ones(len(p), np.int8), (p[:, 0], p[:, 1])), shape=(n, n))
    return connected_components(g, directed=False)


def _objective(labels, pairs, weights) -> float:
    """The CPP objective of ``labels`` on the (i, j) rows of ``pairs``."""
    from trustlab.solvers._problem import pair_objective

    return pair_objective(labels, pairs[:, 0], pairs[:, 1], weights)


def _get_partition() -> Callable[..., Any]:
    """The partition layer's solver (one place, so tests can stand in for it)."""
    from trustlab.solvers import partition

    return partition


def _status_of(res: Any, W: sp.coo_matrix) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Per-component (status, gap) from a PartitionResult.

    The partition layer reports ``components`` (dicts) for its positive-edge components
    of >= 2 nodes in scipy's labelling order; recompute that labelling to map them back.
    Returns (component id per sub-node, status per component, gap per component).
    """
    from trustlab.solvers._problem import relative_gap

    pos = W.data > 0
    g = sp.coo_matrix((np.ones(int(pos.sum()), np.int8), (W.row[pos], W.col[pos])), shape=W.shape)
    k, lab = connected_components(g, directed=False)
    sizes = np.bincount(lab, minlength=k)
    status = [str(getattr(res, "status", "unknown"))] * k
    gap = np.full(k, float(getattr(res, "gap", 0.0) or 0.0))
    comps = list(getattr(res, "components", []) or [])
    big = np.flatnonzero(sizes >= 2)
    if len(comps) == big.size:
        for c, st in zip(big, comps):
            get = st.get if isinstance(st, dict) else (lambda key, d=None, _s=st: getattr(_s, key, d))
            status[c] = str(get("status", status[c]))
            ob, bd = get("objective"), get("bound")
            if ob is not None and bd is not None and np.isfinite(bd):
                gap[c] = relative_gap(float(ob), float(bd))
    return lab, status, gap


#: components up to this size are solved by enumerating all set partitions (Bell(6) = 203)
ENUM_MAX = 6


def _enumerate_mid(n, pairs, weights, comp, sizes, mid):
    """Exact labels (globally unique per component) and objective for the ``mid`` components."""
    from trustlab.kernels import er as K

    nodes = np.flatnonzero(mid)
    o = np.argsort(comp[nodes], kind="stable")
    nodes = nodes[o].astype(np.int64)
    cn = comp[nodes]
    starts = np.flatnonzero(np.r_[True, cn[1:] != cn[:-1], True]).astype(np.int64)
    m = np.diff(starts)
    woff = np.r_[0, np.cumsum(m * m)[:-1]].astype(np.int64)
    local = np.empty(n, np.int64)
    local[nodes] = np.arange(nodes.size) - np.repeat(starts[:-1], m)
    cidx = np.full(n, -1, np.int64)
    cidx[nodes] = np.repeat(np.arange(m.size), m)
    wflat = np.full(int((m * m).sum()), -np.inf)
    e = mid[pairs[:, 0]] & (comp[pairs[:, 0]] == comp[pairs[:, 1]])
    a, b = pairs[e, 0], pairs[e, 1]
    cc = cidx[a]
    la, lb = local[a], local[b]
    mm = m[cc]
    wflat[woff[cc] + la * mm + lb] = weights[e]
    wflat[woff[cc] + lb * mm + la] = weights[e]
    out = np.empty(nodes.size, np.int64)
    K.small_component_labels(nodes, starts, woff, wflat, out)
    lab = np.full(n, -1, np.int64)
    lab[nodes] = cidx[nodes] * (ENUM_MAX + 1) + out
    return lab, _objective(lab, pairs[e], weights[e])


@CLUSTER_METHODS.register("xer")
def _cluster_xer(n, pairs, weights, *, threshold=-np.inf, time_limit=None, M=10, solver_method="auto",
                 solver_options=None, max_default_time=None, **_):
    keep = weights >= threshold
    pairs = pairs[keep]
    weights = weights[keep].copy()
    weights[weights == 0] = -1e-9  # zero-weight edges: never worth merging for
    k, comp = _components(n, pairs, weights > 0)
    sizes = np.bincount(comp, minlength=k)
    labels = comp.astype(np.int64).copy()  # singletons and pairs: component = entity
    status = ["closed_form"] * k
    gap = np.zeros(k)
    objective = 0.0
    bound = 0.0
    # closed form for components of size <= 2 (a pair is in one component only if w > 0)
    tiny = sizes[comp] <= 2
    tiny_edge = tiny[pairs[:, 0]] & (comp[pairs[:, 0]] == comp[pairs[:, 1]])
    objective += float(weights[tiny_edge].sum())
    bound += float(weights[tiny_edge].sum())
    # exact enumeration of all set partitions for components of 3..ENUM_MAX records
    mid = (sizes[comp] >= 3) & (sizes[comp] <= ENUM_MAX)
    if mid.any():
        lab_mid, obj_mid = _enumerate_mid(n, pairs, weights, comp, sizes, mid)
        labels[mid] = labels.max() + 1 + _relabel(lab_mid[mid])
        for c in np.unique(comp[mid]):
            status[c] = "optimal"
        objective += obj_mid
        bound += obj_mid
    big = sizes[comp] > ENUM_MAX
    if big.any():
        nodes = np.flatnonzero(big)
        pos = np.full(n, -1, np.int64)
        pos[nodes] = np.arange(nodes.size)
        inside = big[pairs[:, 0]] & big[pairs[:, 1]] & (comp[pairs[:, 0]] == comp[pairs[:, 1]])
        sp_pairs = pairs[inside]
        W = sp.coo_matrix(
            (weights[inside], (pos[sp_pairs[:, 0]], pos[sp_pairs[:, 1]])), shape=(nodes.size, nodes.size)
        )
        partition = _get_partition()
        kw = {"method": solver_method, "M": M, "random_state": 0, **(solver_options or {})}
        if time_limit is None:
            # safe default: a deterministic work budget scaled by the problem size, in
            # reference seconds of counted work (the same answer whatever the machine's
            # load; a wall-clock safety stop at several times it, see partition's work_limit)
            from trustlab.er.defaults import default_time_limit

            if kw.get("work_limit") is None:
                kw["work_limit"] = default_time_limit(int(sizes[sizes > ENUM_MAX].max()))
        else:
            kw["time_limit"] = time_limit
        res = partition(W, **kw)
        sub = np.asarray(res.labels, dtype=np.int64)
        # keep entities inside their component (the solver may number globally)
        labels[nodes] = labels.max() + 1 + _relabel(comp[nodes] * (sub.max() + 1) + sub)
        lab, st, gp = _status_of(res, W)
        for loc, glob in zip(lab, comp[nodes]):
            status[glob] = st[loc]
            gap[glob] = gp[loc]
        obj = getattr(res, "objective", None)
        objective += float(obj) if obj is not None else _objective(labels, sp_pairs, weights[inside])
        b = getattr(res, "bound", None)
        bound += float(b) if b is not None and np.isfinite(b) else float("nan")
    info = {"n_components": int(k), "n_solver_nodes": int(big.sum()), "n_edges": int(len(pairs))}
    if big.any():
        comps = getattr(res, "components", None) or []
        info["work_spent"] = float(sum(c.get("work_spent", 0.0) for c in comps))
        # components the triangle LP bound proved after their search (the exact solver's budget
        # ran out first; trustlab.solvers.bounds.triangle_lp_bound)
        info["proved_by_lp"] = int(sum(c.get("proved_by") == "lp" for c in comps))
        stopped = [int(c.get("size", 0)) for c in comps if c.get("safety_stop")]
        info["safety_stops"] = len(stopped)
        if stopped:
            import warnings

            warnings.warn(
                f"the clustering's wall-clock safety stop ended {len(stopped)} component(s) (largest "
                f"{max(stopped)} records) before their work budget: this machine ran far slower than the "
                "reference, and their entities may differ from another run's. Pass time_limit= for a "
                "wall-clock budget, or solver_options={'work_limit': ...} for a smaller work budget.",
                UserWarning, stacklevel=4)
    return ClusterResult(
        labels=_relabel(labels), component=comp.astype(np.int64), status=status, gap=gap,
        objective=objective, bound=bound, method="xer", info=info,
    )


def _proof_summary(cr: "ClusterResult") -> dict:
    """How many multi-record components were proven optimal, and the worst gap."""
    if not cr.status:
        return {}
    k = len(cr.status)
    sizes = np.bincount(cr.component, minlength=k)[:k]
    multi = sizes >= 2
    proven = multi & np.isin(np.asarray(cr.status, dtype=object), ["optimal", "closed_form"])
    gap = np.full(k, np.nan)
    m = min(k, len(cr.gap))
    gap[:m] = np.asarray(cr.gap, dtype=np.float64)[:m]
    ok = multi & np.isfinite(gap)
    # (one pass over the components: a set rebuilt per component made this quadratic, 20+ minutes
    # for the ~600,000 components of a million records)
    return {
        "n_components_multi": int(multi.sum()),
        "n_components_proven": int(proven.sum()),
        "max_gap": float(gap[ok].max()) if ok.any() else 0.0,
        "unproven_component_sizes": sorted(sizes[multi & ~proven].astype(int).tolist(), reverse=True)[:10],
    }


@CLUSTER_METHODS.register("connected_components")
def _cluster_cc(n, pairs, weights, *, threshold=0.0, **_):
    keep = weights > threshold
    k, comp = _components(n, pairs, keep)
    comp = comp.astype(np.int64)
    return ClusterResult(
        labels=comp.copy(), component=comp, status=["heuristic"] * k, gap=np.full(k, np.nan),
        objective=_objective(comp, pairs, weights), method="connected_components",
        info={"n_components": int(k)},
    )


def _sigmoid(w):
    return 1.0 / (1.0 + np.exp(-np.clip(w, -50, 50)))


@CLUSTER_METHODS.register("hierarchical")
def _cluster_hc(n, pairs, weights, *, threshold=0.0, prob=None, p_threshold=0.5, **_):
    from scipy.cluster.hierarchy import fcluster, linkage

    p = _sigmoid(weights) if prob is None else np.asarray(prob, np.float64)
    keep = weights > threshold
    k, comp = _components(n, pairs, keep)
    comp = comp.astype(np.int64)
    labels = comp * 0 - 1
    same = comp[pairs[:, 0]] == comp[pairs[:, 1]]
    sizes = np.bincount(comp, minlength=k)
    nodes_by = np.split(np.argsort(comp, kind="stable"), np.cumsum(sizes)[:-1])
    next_label = 0
    pc = pairs[same]
    pp = p[same]
    cc = comp[pc[:, 0]]
    o = np.argsort(cc, kind="stable")
    pc, pp, cc = pc[o], pp[o], cc[o]
    starts = np.searchsorted(cc, np.arange(k + 1))
    for c in range(k):
        nodes = nodes_by[c]
        m = nodes.size
        if m <= 2:
            labels[nodes] = next_label
            next_label += 1
            continue
        pos = {int(v): t for t, v in enumerate(nodes)}
        D = np.ones((m, m))
        seg = slice(starts[c], starts[c + 1])
        a = np.fromiter((pos[int(v)] for v in pc[seg, 0]), np.int64)
        b = np.fromiter((pos[int(v)] for v in pc[seg, 1]), np.int64)
        D[a, b] = 1.0 - pp[seg]
        D[b, a] = 1.0 - pp[seg]
        np.fill_diagonal(D, 0.0)
        iu = np.triu_indices(m, 1)
        Z = linkage(D[iu], method="centroid")
        f = fcluster(Z, t=1.0 - p_threshold, criterion="distance")
        labels[nodes] = next_label + f - 1
        next_label += int(f.max())
    return ClusterResult(
        labels=_relabel(labels), component=comp, status=["heuristic"] * k, gap=np.full(k, np.nan),
        objective=_objective(labels, pairs, weights), method="hierarchical",
        info={"n_components": int(k)},
    )


def canonical_pairs(n: int, pairs: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs as ``i < j`` without self pairs, one per pair (its largest weight), sorted by
    ``(i, j)``: ``(pairs, weights, kept)`` with ``kept`` the rows of the input they come from."""
    # every step in pieces of pairs (trustlab._chunks): a signal waits for one piece
    weights = np.asarray(weights)
    ok = np.flatnonzero(np.concatenate([pairs[a:b, 0] != pairs[a:b, 1] for a, b in _chunks.spans(len(pairs))]
                                       or [np.zeros(0, bool)]))
    code = np.empty(len(ok), np.int64)
    neg = np.empty(len(ok), (-weights[:0]).dtype)
    for a, b in _chunks.spans(len(ok)):
        p = pairs[ok[a:b]]
        code[a:b] = np.minimum(p[:, 0], p[:, 1]).astype(np.int64) * n + np.maximum(p[:, 0], p[:, 1])
        neg[a:b] = -weights[ok[a:b]]
    # np.lexsort((-w, code)) as two stable sorts, each in pieces
    o = _chunks.argsort(neg)
    o = _chunks.take(o, _chunks.argsort(_chunks.take(code, o)))
    first = np.empty(len(o), bool)
    for a, b in _chunks.spans(len(o)):  # the first pair of each code in the sorted order
        c = code[o[a:b]]
        first[a:b] = np.r_[True, c[1:] != c[:-1]] if a == 0 else np.r_[code[o[a - 1]] != c[0], c[1:] != c[:-1]]
    at = np.concatenate([o[a:b][first[a:b]] for a, b in _chunks.spans(len(o))] or [o[:0]])
    kept = np.empty(len(at), ok.dtype)
    w = np.empty(len(at), weights.dtype)
    out = np.empty((len(at), 2), np.int64)
    for a, b in _chunks.spans(len(at)):
        kept[a:b] = ok[at[a:b]]
        w[a:b] = weights[kept[a:b]]
        c = code[at[a:b]]
        out[a:b, 0], out[a:b, 1] = c // n, c % n
    return out, w, kept


@validate_params(
    {
        "n": [Interval(numbers.Integral, 0, None, closed="left")],
        "pairs": ["array-like"],
        "weights": ["array-like"],
        "method": [str],
        "threshold": [Interval(numbers.Real, None, None), None],
    }
)
def cluster_pairs(
    n: int,
    pairs: Any,
    weights: Any,
    *,
    method: str = "xer",
    threshold: float | None = None,
    **kwargs: Any,
) -> ClusterResult:
    """Cluster ``n`` records from scored pairs.

    Parameters
    ----------
    n : int
        Number of records (labels are for rows ``0..n-1``).
    pairs : array-like of shape (m, 2)
        Record index pairs.
    weights : array-like of shape (m,)
        Signed weights, positive = "same entity".
    method : {"xer", "connected_components", "hierarchical"}
    threshold : float, optional
        ``xer``: blocking threshold T (pairs with lower weight are dropped and may not
        share a cluster; default keeps all pairs). Baselines: link threshold (default 0).
    **kwargs
        ``time_limit``, ``M``, ``solver_method``, ``solver_options`` (extra keywords
        for :func:`trustlab.solvers.partition`) for ``xer``; ``prob``/``p_threshold``
        for ``hierarchical``. ``xer`` with no ``time_limit`` (the default) solves under a
        deterministic work budget, :func:`~trustlab.er.defaults.default_time_limit` of the
        largest component in reference seconds of counted work (``work_limit`` of
        :func:`~trustlab.solvers.partition`, which ``solver_options`` may set), so its
        entities and statuses do not depend on the machine's load; a given
        ``time_limit`` is wall-clock seconds. (``max_default_time``, which capped the
        default by the wall time a caller had left, is accepted and no longer used.)

    Examples
    --------
    >>> r = cluster_pairs(4, [[0, 1], [2, 3]], [2.0, -1.0], method="connected_components")
    >>> r.labels.tolist()
    [0, 0, 1, 2]
    """
    fn = CLUSTER_METHODS[method]
    if kwargs.get("time_limit") is not None:
        from trustlab.er.defaults import check_time_limit

        kwargs["time_limit"] = check_time_limit(kwargs["time_limit"], func="cluster_pairs")
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).ravel()
    if weights.shape[0] != pairs.shape[0]:
        raise ValueError(f"pairs and weights must have the same length; got {pairs.shape[0]} and {weights.shape[0]}")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
        raise ValueError(f"pair indices must lie in [0, {n - 1}]; got range [{pairs.min()}, {pairs.max()}]")
    if not np.all(np.isfinite(weights)):
        raise ValueError("weights contain NaN or infinity; give every pair a finite score")
    P, w, kept = canonical_pairs(n, pairs, weights)
    if "prob" in kwargs and kwargs["prob"] is not None:
        kwargs["prob"] = np.asarray(kwargs["prob"], np.float64)[kept]
    if threshold is not None:
        check_interval(threshold, "threshold", func="cluster_pairs")
        kwargs["threshold"] = threshold
    return fn(n, P, w, **kwargs)
