"""Weighted clustering coefficient of an ER similarity graph (xER paper, Table 6 "CC").

The xER paper cites Wang et al. (2017), a survey of several weighted generalisations, without
saying which one it used. trustlab implements three, named explicitly:

* ``"onnela"`` (default; Onnela et al. 2005, networkx's ``clustering(G, weight=...)``):
  c_i = 1/(k_i(k_i−1)) Σ_{j,k} (ŵ_ij ŵ_jk ŵ_ki)^{1/3}, with ŵ = w / max(w).
* ``"barrat"`` (Barrat et al. 2004, igraph's ``transitivity_local_undirected(weights=...)``):
  c_i = 1/(s_i(k_i−1)) Σ_{j,k} (w_ij + w_ik)/2 · a_ij a_ik a_jk, with s_i the strength.
* ``"unweighted"``: the binary coefficient 2T_i / (k_i(k_i−1)) (weights ignored).

Sums run over ordered pairs (j, k). Nodes with degree < 2 get 0 and count in the average, as
in networkx's ``average_clustering`` (``count_zeros=True``). The weighted variants need
non-negative weights: ER similarity scores in [−1, 1] must be mapped first, e.g.
``(w + 1) / 2``. Note that none of these reduces to edge density, consistent with the
paper's observation that its CC differs from density at loose thresholds.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from trustlab._validation import Interval, Options, check_option, validate_params

__all__ = ["weighted_clustering_coefficient", "ClusteringCoefficientResult", "CLUSTERING_VARIANTS"]

CLUSTERING_VARIANTS = ("onnela", "barrat", "unweighted")


def _weighted_adjacency(graph: Any, weights: Any, n_nodes: int | None, weight: str) -> tuple[sp.csr_matrix, list]:
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover - networkx is a dependency
        nx = None
    if nx is not None and isinstance(graph, nx.Graph):
        if graph.is_directed() or graph.is_multigraph():
            raise ValueError("graph must be a simple undirected networkx Graph; got a directed or multi graph.")
        nodes = list(graph.nodes())
        W = nx.to_scipy_sparse_array(graph, nodelist=nodes, weight=weight, format="csr")
        W = sp.csr_matrix(W, dtype=np.float64)
    elif sp.issparse(graph) or (isinstance(graph, np.ndarray) and graph.ndim == 2 and weights is None
                                and graph.shape[0] == graph.shape[1] and graph.shape[1] != 2):
        W = sp.csr_matrix(graph, dtype=np.float64)
        if W.shape[0] != W.shape[1]:
            raise ValueError(f"an adjacency matrix must be square; got shape {W.shape}.")
        upper, lower = sp.triu(W, 1), sp.tril(W, -1)
        if upper.nnz and lower.nnz:
            if abs(W - W.T).max() > 1e-12:
                raise ValueError("the adjacency matrix is neither symmetric nor triangular.")
        else:
            W = W + W.T
        nodes = list(range(W.shape[0]))
    else:
        E = np.asarray(graph)
        if E.ndim != 2 or E.shape[1] != 2:
            raise ValueError(f"graph must be a networkx Graph, a square (sparse) adjacency matrix, or an (m, 2) "
                             f"edge array with weights=; got an array of shape {E.shape}.")
        if weights is None:
            weights = np.ones(E.shape[0])
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (E.shape[0],):
            raise ValueError(f"weights has shape {w.shape} but there are {E.shape[0]} edges.")
        if E.size and (not np.all(np.equal(np.mod(E, 1), 0)) or E.min() < 0):
            raise ValueError("edge ids must be non-negative integers.")
        E = E.astype(np.int64)
        n = int(E.max()) + 1 if E.size else 0
        n = n if n_nodes is None else int(n_nodes)
        if E.size and E.max() >= n:
            raise ValueError(f"edge id {int(E.max())} is >= n_nodes={n}.")
        keep = E[:, 0] != E[:, 1]
        E, w = E[keep], w[keep]
        lo, hi = np.minimum(E[:, 0], E[:, 1]), np.maximum(E[:, 0], E[:, 1])
        key = lo * max(n, 1) + hi
        _, first = np.unique(key, return_index=True)
        if first.size != key.size:
            raise ValueError("the edge list has duplicate edges (u, v) / (v, u); list each undirected edge once.")
        U = sp.coo_matrix((w, (lo, hi)), shape=(n, n)).tocsr()
        W = U + U.T
        nodes = list(range(n))
    W.setdiag(0)
    W.eliminate_zeros()
    if W.nnz and not np.all(np.isfinite(W.data)):
        raise ValueError("edge weights contain NaN or infinity.")
    return W.tocsr(), nodes


@dataclass
class ClusteringCoefficientResult:
    """Result of :func:`weighted_clustering_coefficient`: the average over all nodes
    (degree < 2 count as 0), the variant, and the per-node values (in node order)."""

    value: float
    variant: str
    per_node: np.ndarray = field(repr=False)
    nodes: list = field(repr=False, default_factory=list)


@validate_params(
    {
        "weights": ["array-like", None],
        "variant": [Options(set(CLUSTERING_VARIANTS))],
        "n_nodes": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "weight": [str],
    }
)
def weighted_clustering_coefficient(
    graph: Any,
    weights: Any | None = None,
    *,
    variant: str = "onnela",
    n_nodes: int | None = None,
    weight: str = "weight",
) -> ClusteringCoefficientResult:
    """Average (weighted) clustering coefficient, with the variant named.

    Parameters
    ----------
    graph : networkx.Graph, square adjacency matrix (dense or SciPy sparse; symmetric or
        triangular as in xER's i < j storage), or (m, 2) integer edge array
        A dense NumPy array of shape (2, 2) is read as two edges; pass a 2-node adjacency
        as a SciPy sparse matrix.
    weights : array of shape (m,), optional
        Edge weights for an edge array (default 1).
    variant : {"onnela", "barrat", "unweighted"}
        See the module docstring for the formulas.
    n_nodes : int, optional
        Number of nodes for an edge array (isolated nodes count as 0 in the average).
    weight : str
        Edge attribute name for networkx graphs.

    Returns
    -------
    ClusteringCoefficientResult

    Examples
    --------
    A triangle with weights 1, 1, 0.125 plus a pendant edge 0–3 (weight 1):

    >>> E = [(0, 1), (1, 2), (0, 2), (0, 3)]
    >>> r = weighted_clustering_coefficient(E, [1.0, 1.0, 0.125, 1.0])
    >>> r.per_node.round(4).tolist()      # node 0: 2·(0.125)^(1/3) / (3·2); nodes 1, 2: 0.5
    [0.1667, 0.5, 0.5, 0.0]
    >>> round(r.value, 4)
    0.2917
    >>> weighted_clustering_coefficient(E, [1.0, 1.0, 0.125, 1.0], variant="unweighted").per_node.tolist()
    [0.3333333333333333, 1.0, 1.0, 0.0]
    """
    variant = check_option(variant, "variant", CLUSTERING_VARIANTS, func="weighted_clustering_coefficient")
    W, nodes = _weighted_adjacency(graph, weights, n_nodes, weight)
    n = W.shape[0]
    if n == 0:
        raise ValueError("the graph has no nodes.")
    A = W.copy()
    A.data[:] = 1.0
    k = np.asarray(A.sum(axis=1)).ravel()
    denom_pairs = k * (k - 1)
    out = np.zeros(n)
    if variant == "unweighted":
        num = np.asarray((A @ A).multiply(A).sum(axis=1)).ravel()
        ok = denom_pairs > 0
        out[ok] = num[ok] / denom_pairs[ok]
    else:
        if W.nnz and W.data.min() < 0:
            raise ValueError(f"variant={variant!r} needs non-negative weights; got a minimum of {W.data.min():g}. "
                             "Map similarity scores first, e.g. (w + 1) / 2 for scores in [-1, 1], or use "
                             "variant='unweighted'.")
        if variant == "onnela":
            C = W.copy()
            if C.nnz:
                C.data = np.cbrt(C.data / C.data.max())
            num = np.asarray((C @ C).multiply(C).sum(axis=1)).ravel()
            ok = denom_pairs > 0
            out[ok] = num[ok] / denom_pairs[ok]
        else:  # barrat
            s = np.asarray(W.sum(axis=1)).ravel()
            num = np.asarray((W @ A).multiply(A).sum(axis=1)).ravel()
            den = s * (k - 1)
            ok = (k > 1) & (den > 0)
            out[ok] = num[ok] / den[ok]
    return ClusteringCoefficientResult(value=float(out.mean()), variant=variant, per_node=out, nodes=nodes)
