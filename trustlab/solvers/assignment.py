"""Exact maximum-weight bipartite matching with an LP-duality certificate.

Two sources that each hold an entity at most once (one-to-one linkage): every entity is
one record, or one record of each side, and the best clustering is a maximum-weight
matching on the positive cross pairs. Bipartite matching is a linear program with an
integral polytope, so the optimum is certified by a dual solution:

    max  sum_e w_e x_e   s.t.  sum_{e at v} x_e <= 1,  x >= 0
    min  sum_v y_v       s.t.  y_u + y_v >= w_uv (every edge),  y >= 0

Any feasible ``y`` bounds every matching from above (weak duality); one with
``sum(y) == objective`` proves the matching optimal. :func:`max_weight_matching` solves
each connected component with SciPy's ``linear_sum_assignment`` (dense, small
components) or ``min_weight_full_bipartite_matching`` (sparse, large ones), then builds
``y`` from shortest alternating-path distances (Bellman-Ford on the residual graph) and
checks it independently: feasibility on every edge and the dual total.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import connected_components, min_weight_full_bipartite_matching

from trustlab._validation import Interval, validate_params

__all__ = ["MatchingResult", "max_weight_matching"]

#: components with at most this many cells (left x right) are solved on a dense matrix
DENSE_MAX_CELLS = 1_000_000
#: relative tolerance of the certificate check (floating-point sums of the weights)
CERT_RTOL = 1e-9


@dataclass
class MatchingResult:
    """The outcome of :func:`max_weight_matching`.

    Attributes
    ----------
    mate_left : numpy.ndarray
        For every left node, its matched right node (-1: unmatched).
    mate_right : numpy.ndarray
        For every right node, its matched left node (-1: unmatched).
    objective : float
        Total weight of the matched edges.
    bound : float
        Upper bound on every matching, from the dual solution (equals ``objective``
        when ``status == "optimal"``; the dual total as computed is ``dual_objective``).
    status : str
        ``"optimal"`` when the dual certificate checks (every edge constraint holds and
        the dual total equals the objective, both within ``CERT_RTOL`` relative), else
        ``"feasible"`` (never seen; it would mean a solver or rounding failure).
    dual_left, dual_right : numpy.ndarray
        The certificate ``y``: non-negative, ``y_l[i] + y_r[j] >= w_ij`` on every edge
        (after raising left duals by any rounding violation, so it is always feasible).
    component_left, component_right : numpy.ndarray
        Component id of every node in the positive-edge graph (-1 for isolated nodes).
    components : list of dict
        Per component with two or more edges: ``n_left``, ``n_right``, ``n_edges``,
        ``objective``, ``bound``, ``status`` (its own certificate checked, as above) and
        ``solver`` (``"dense"`` or ``"sparse"``). A component of one edge is matched by it.
    dual_objective : float
    max_violation : float
        Largest violation of a dual constraint before the rounding repair.
    """

    mate_left: np.ndarray
    mate_right: np.ndarray
    objective: float
    bound: float
    status: str
    dual_left: np.ndarray
    dual_right: np.ndarray
    component_left: np.ndarray
    component_right: np.ndarray
    components: list = field(default_factory=list)
    dual_objective: float = 0.0
    max_violation: float = 0.0

    @property
    def pairs(self) -> np.ndarray:
        """The matched ``(left, right)`` pairs, by left node."""
        i = np.flatnonzero(self.mate_left >= 0)
        return np.stack([i, self.mate_left[i]], axis=1)


def _solve_component_dense(li: np.ndarray, rj: np.ndarray, w: np.ndarray, nl: int, nr: int) -> np.ndarray:
    """Matched edge indices of one component (local node ids ``li``/``rj``)."""
    C = np.zeros((nl, nr))
    C[li, rj] = -w
    r, c = linear_sum_assignment(C)
    M = np.full((nl, nr), -1, np.int64)
    M[li, rj] = np.arange(li.size)
    e = M[r, c]
    return e[e >= 0]


def _solve_component_sparse(li: np.ndarray, rj: np.ndarray, w: np.ndarray, nl: int, nr: int) -> np.ndarray:
    """As :func:`_solve_component_dense` on a sparse graph: a full matching of the graph
    with a dummy partner for every node (left ``i`` may stay single through its dummy
    ``nr + i``, right ``j`` through ``nl + j``; dummy-dummy edges mirror the real ones),
    every cost shifted by a constant so that none is zero (a perfect matching has
    ``nl + nr`` edges, so the shift changes no comparison)."""
    shift = 2.0 * float(w.max())  # every cost in [max w, 2 max w): positive, and on the weights' scale
    m = li.size
    rows = np.concatenate([li, np.arange(nl), nl + np.arange(nr), nl + rj])
    cols = np.concatenate([rj, nr + np.arange(nl), np.arange(nr), nr + li])
    cost = np.concatenate([shift - w, np.full(nl + nr, shift), np.full(m, shift)])
    G = sp.csr_matrix((cost, (rows, cols)), shape=(nl + nr, nl + nr))
    r, c = min_weight_full_bipartite_matching(G)
    real = (r < nl) & (c < nr)
    key = li.astype(np.int64) * nr + rj
    o = np.argsort(key)
    hit = np.searchsorted(key[o], r[real].astype(np.int64) * nr + c[real])
    return o[hit]


def _duals(n_left: int, n_right: int, L: np.ndarray, R: np.ndarray, w: np.ndarray, mate_left: np.ndarray,
           matched: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Dual solution from shortest distances ``d`` in the residual graph of an optimal
    matching: arcs ``source -> i`` (0) for unmatched left ``i``, ``source -> j`` (0) for
    every right ``j``, ``i -> j`` (``-w``) for unmatched edges and ``j -> i`` (``+w``) for
    matched ones. An optimal matching has no negative cycle there (it would be an
    improving alternating cycle or path), and ``y_l = d(left)``, ``y_r = -d(right)`` is
    dual feasible with complementary slackness, so its total is the objective."""
    n = n_left + n_right
    src = n
    u = np.concatenate([np.full(int((mate_left < 0).sum()), src), np.full(n_right, src),
                        L[~matched], n_left + R[matched]])
    v = np.concatenate([np.flatnonzero(mate_left < 0), n_left + np.arange(n_right),
                        n_left + R[~matched], L[matched]])
    ln = np.concatenate([np.zeros(int((mate_left < 0).sum()) + n_right), -w[~matched], w[matched]])
    d = np.full(n + 1, np.inf)
    d[src] = 0.0
    eps = 1e-12 * scale  # relaxations smaller than this are rounding (zero-length cycles of ties)
    for _ in range(n + 2):
        cand = d[u] + ln
        nd = d.copy()
        np.minimum.at(nd, v, cand)
        changed = nd < d - eps
        if not changed.any():
            break
        d = np.where(changed, nd, d)
    yl = np.maximum(d[:n_left], 0.0)
    yr = np.maximum(-d[n_left:n], 0.0)
    return yl, yr


@validate_params(
    {
        "n_left": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_right": [Interval(numbers.Integral, 0, None, closed="left")],
        "left": ["array-like"],
        "right": ["array-like"],
        "weights": ["array-like"],
    }
)
def max_weight_matching(n_left: int, n_right: int, left: Any, right: Any, weights: Any) -> MatchingResult:
    """Maximum-weight matching of a bipartite graph, exactly, with a dual certificate.

    Only edges of positive weight can be in a maximum-weight matching; the others are
    ignored. Each connected component is solved on its own (dense assignment up to
    ``DENSE_MAX_CELLS`` cells, sparse full matching above); ties between optimal
    matchings are broken by SciPy's deterministic order of the node indices, so the same
    input gives the same matching.

    Parameters
    ----------
    n_left, n_right : int
        Number of nodes on each side.
    left, right : array-like of int, shape (m,)
        The two ends of every edge (``left[k]`` in ``[0, n_left)``, ``right[k]`` in
        ``[0, n_right)``); a repeated edge keeps its largest weight.
    weights : array-like of float, shape (m,)
        Finite edge weights.

    Returns
    -------
    MatchingResult

    Examples
    --------
    A chain a-b 0.9, b-c 0.95, c-d 0.9 (a, c left; b, d right): greedy takes b-c (0.95);
    the optimum takes a-b and c-d (1.8), and the dual proves it.

    >>> r = max_weight_matching(2, 2, [0, 1, 1], [0, 0, 1], [0.9, 0.95, 0.9])
    >>> r.pairs.tolist(), round(r.objective, 6), r.status, round(r.bound, 6)
    ([[0, 0], [1, 1]], 1.8, 'optimal', 1.8)
    """
    L = np.asarray(left, dtype=np.int64).ravel()
    R = np.asarray(right, dtype=np.int64).ravel()
    w = np.asarray(weights, dtype=np.float64).ravel()
    if not (L.size == R.size == w.size):
        raise ValueError(f"left, right and weights must have the same length; got {L.size}, {R.size} and {w.size}")
    if L.size and (L.min() < 0 or L.max() >= n_left):
        raise ValueError(f"left node indices must lie in [0, {n_left - 1}]; got range [{L.min()}, {L.max()}]")
    if R.size and (R.min() < 0 or R.max() >= n_right):
        raise ValueError(f"right node indices must lie in [0, {n_right - 1}]; got range [{R.min()}, {R.max()}]")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contain NaN or infinity; give every edge a finite weight")
    # positive edges, one per (left, right) pair (the largest weight), sorted by (left, right)
    keep = w > 0
    L, R, w = L[keep], R[keep], w[keep]
    key = L * max(n_right, 1) + R
    o = np.lexsort((-w, key))
    key, L, R, w = key[o], L[o], R[o], w[o]
    first = np.r_[True, key[1:] != key[:-1]] if key.size else np.zeros(0, bool)
    L, R, w = L[first], R[first], w[first]
    n = n_left + n_right
    comp_l = np.full(n_left, -1, np.int64)
    comp_r = np.full(n_right, -1, np.int64)
    mate_l = np.full(n_left, -1, np.int64)
    mate_r = np.full(n_right, -1, np.int64)
    matched = np.zeros(L.size, bool)
    comps: list[dict] = []
    if L.size:
        g = sp.coo_matrix((np.ones(L.size, np.int8), (L, n_left + R)), shape=(n, n))
        _, lab = connected_components(g, directed=False)
        touched = np.zeros(n, bool)
        touched[L] = True
        touched[n_left + R] = True
        # number the components with an edge 0..k-1 in order of their smallest node
        _, cid = np.unique(lab[touched], return_inverse=True)
        comp_all = np.full(n, -1, np.int64)
        comp_all[touched] = cid
        comp_l, comp_r = comp_all[:n_left], comp_all[n_left:]
        ce = comp_l[L]
        k = int(cid.max()) + 1
        n_edges = np.bincount(ce, minlength=k)
        # one edge: it is the matching
        single = n_edges[ce] == 1
        matched[single] = True
        # the others, component by component
        order = np.flatnonzero(~single)
        order = order[np.argsort(ce[order], kind="stable")]
        bounds = np.flatnonzero(np.r_[True, ce[order][1:] != ce[order][:-1], True]) if order.size else []
        for s, t in zip(bounds[:-1], bounds[1:]):
            e = order[s:t]
            ul, li = np.unique(L[e], return_inverse=True)
            ur, rj = np.unique(R[e], return_inverse=True)
            solve = _solve_component_dense if ul.size * ur.size <= DENSE_MAX_CELLS else _solve_component_sparse
            matched[e[solve(li, rj, w[e], ul.size, ur.size)]] = True
            comps.append({"component": int(ce[e[0]]), "n_left": int(ul.size), "n_right": int(ur.size),
                          "n_edges": int(e.size), "solver": "dense" if solve is _solve_component_dense else "sparse"})
        mate_l[L[matched]] = R[matched]
        mate_r[R[matched]] = L[matched]
    objective = float(w[matched].sum())
    scale = max(1.0, float(np.abs(w).max()) if w.size else 1.0)
    yl, yr = _duals(n_left, n_right, L, R, w, mate_l, matched, scale)
    slack = w - yl[L] - yr[R]
    viol = float(np.max(slack, initial=0.0))
    if viol > 0:  # rounding: raise the left duals by their largest violation, so y is feasible
        np.maximum.at(yl, L, np.where(slack > 0, yl[L] + slack, yl[L]))
    dual = float(yl.sum() + yr.sum())
    tol = CERT_RTOL * max(scale, abs(objective))
    ok = abs(dual - objective) <= tol
    # per component: objective and dual total of its nodes
    if comps:
        k = int(max(comp_l.max(initial=-1), comp_r.max(initial=-1))) + 1
        cobj = np.bincount(comp_l[L[matched]], weights=w[matched], minlength=k)
        cdual = (np.bincount(comp_l[comp_l >= 0], weights=yl[comp_l >= 0], minlength=k)
                 + np.bincount(comp_r[comp_r >= 0], weights=yr[comp_r >= 0], minlength=k))
        for c in comps:  # each component's duals bound its own matchings: checked one by one
            cc = c["component"]
            c_ok = abs(cdual[cc] - cobj[cc]) <= CERT_RTOL * max(scale, abs(cobj[cc]))
            c["objective"] = float(cobj[cc])
            c["bound"] = float(cobj[cc]) if c_ok else float(cdual[cc])
            c["status"] = "optimal" if c_ok else "feasible"
    return MatchingResult(
        mate_left=mate_l, mate_right=mate_r, objective=objective, bound=objective if ok else max(dual, objective),
        status="optimal" if ok else "feasible", dual_left=yl, dual_right=yr, component_left=comp_l,
        component_right=comp_r, components=comps, dual_objective=dual, max_violation=max(viol, 0.0),
    )
