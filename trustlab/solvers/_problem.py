"""Input normalisation for the clique partitioning solvers.

Every accepted input becomes a :class:`Problem`: ``n`` nodes with their original
labels and either a dense symmetric matrix (every pair is an edge, CP-Lib style) or
a symmetric edge list (a missing edge forbids co-clustering).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from trustlab._validation import check_memory

# bytes per node of a partition problem: its label, component index and singleton
# component array, its cluster id (Python objects for the labels and components)
_BYTES_PER_NODE = 200


def pair_objective(labels: np.ndarray, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray) -> float:
    """CPP objective of ``labels`` on an edge list: the total weight of the pairs
    ``(rows[k], cols[k])`` (each listed once) whose ends share a label.

    The dense-matrix form is the kernel :func:`trustlab.kernels.cpp_heuristic.objective`.
    """
    return float(weights[labels[rows] == labels[cols]].sum())


def positive_weight_bound(W: np.ndarray, A: np.ndarray) -> float:
    """The trivial CPP upper bound: the sum of the positive weights of allowed pairs
    (``W``, ``A`` dense and symmetric, so each pair is counted twice and halved)."""
    return float(np.where(A, np.maximum(W, 0.0), 0.0).sum() / 2)


def relative_gap(objective: float, bound: float) -> float:
    """Relative optimality gap ``(bound - objective) / max(|bound|, |objective|)``,
    clipped at 0 (0 when both are 0)."""
    den = max(abs(bound), abs(objective))
    return 0.0 if den == 0 else max(0.0, (bound - objective) / den)


@dataclass
class Problem:
    n: int
    nodes: list
    complete: bool
    W: np.ndarray | None = None  # dense (complete form)
    rows: np.ndarray | None = None  # edge form, i < j, unique
    cols: np.ndarray | None = None
    vals: np.ndarray | None = None
    _csr: Any = field(default=None, repr=False)

    # ---------------------------------------------------------------- helpers
    @property
    def integral(self) -> bool:
        v = self.W if self.complete else self.vals
        return bool(v.size == 0 or np.all(v == np.round(v)))

    def n_edges(self) -> int:
        return self.n * (self.n - 1) // 2 if self.complete else int(self.rows.size)

    def positive_edges(self) -> tuple[np.ndarray, np.ndarray]:
        if self.complete:
            r, c = np.nonzero(np.triu(self.W > 0, 1))
            return r, c
        m = self.vals > 0
        return self.rows[m], self.cols[m]

    def neighbors(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Allowed partners of node ``i`` and their weights."""
        if self.complete:
            idx = np.concatenate([np.arange(i), np.arange(i + 1, self.n)])
            return idx, self.W[i, idx]
        if self._csr is None:
            self._csr = edge_csr(self.n, self.rows, self.cols, self.vals)
        indptr, ind, dat = self._csr
        return ind[indptr[i]:indptr[i + 1]], dat[indptr[i]:indptr[i + 1]]

    def components(self, decompose: bool = True) -> list[np.ndarray]:
        """Connected components of the positive-edge graph (node index arrays)."""
        if not decompose:
            return [np.arange(self.n)]
        r, c = self.positive_edges()
        g = sp.coo_matrix((np.ones(r.size), (r, c)), shape=(self.n, self.n))
        k, lab = connected_components(g, directed=False)
        order = np.argsort(lab, kind="stable")
        splits = np.flatnonzero(np.diff(lab[order])) + 1
        return np.split(order, splits)

    def sub(self, idx: np.ndarray, comp_of: np.ndarray | None = None, cid: int = -1) -> tuple:
        """The sub-problem on ``idx``, small enough to ship to a worker: ``("dense", W,
        A)`` (complete form: its dense block and allowed mask) or ``("edges", m, rows,
        cols, vals)`` (graph form: its edges in local indices, ``rows < cols``).
        ``comp_of``/``cid`` select the edges by component label (faster than by
        membership)."""
        m = idx.size
        if self.complete:
            W = np.ascontiguousarray(self.W[np.ix_(idx, idx)])
            A = ~np.eye(m, dtype=bool)
            np.fill_diagonal(W, 0.0)
            return "dense", W, A
        pos = np.full(self.n, -1, np.int64)
        pos[idx] = np.arange(m)
        if comp_of is not None:
            sel = (comp_of[self.rows] == cid) & (comp_of[self.cols] == cid)
        else:
            sel = (pos[self.rows] >= 0) & (pos[self.cols] >= 0)
        r, c = pos[self.rows[sel]], pos[self.cols[sel]]
        return "edges", m, np.minimum(r, c), np.maximum(r, c), self.vals[sel]

    def objective(self, labels: np.ndarray) -> float:
        if self.complete:
            from trustlab.solvers.heuristic import search_objective

            return search_objective(self.W, np.asarray(labels, np.int64))
        return pair_objective(labels, self.rows, self.cols, self.vals)

    def is_feasible(self, labels: np.ndarray) -> bool:
        """Every cluster is a clique of the allowed graph."""
        if self.complete:
            return True
        sizes = np.bincount(labels)
        need = int((sizes * (sizes - 1) // 2).sum())
        have = int(np.count_nonzero(labels[self.rows] == labels[self.cols]))
        return have == need


def edge_csr(n: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> tuple:
    """Symmetric CSR ``(indptr, indices, weights)`` (int64, int64, float64) of the
    undirected edges ``rows[e]-cols[e]``: both directions, each row's entries in edge
    order."""
    r = np.concatenate([rows, cols])
    c = np.concatenate([cols, rows])
    v = np.concatenate([vals, vals])
    o = np.argsort(r, kind="stable")
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    return indptr, np.ascontiguousarray(c[o], dtype=np.int64), np.ascontiguousarray(v[o], dtype=np.float64)


def dense_from_edges(m: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense weights and allowed-pair mask of an ``m``-node edge-form (sub-)problem."""
    W = np.zeros((m, m))
    A = np.zeros((m, m), bool)
    W[rows, cols] = vals
    W[cols, rows] = vals
    A[rows, cols] = True
    A[cols, rows] = True
    return W, A


def _check_symmetric_dense(W: np.ndarray, what: str) -> None:
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"The weight matrix must be square; got {what} with shape {W.shape}.")
    if not np.all(np.isfinite(W)):
        bad = np.argwhere(~np.isfinite(W))[0]
        raise ValueError(
            f"The weight matrix contains NaN or infinite weights (first at {tuple(int(b) for b in bad)}). "
            "Remove or impute them; to forbid a pair use a graph/sparse/edge-list input without that edge."
        )
    off = np.abs(W - W.T)
    tol = 1e-9 * max(1.0, float(np.abs(W).max()) if W.size else 1.0)
    if off.size and off.max() > tol:
        i, j = np.unravel_index(int(np.argmax(off)), off.shape)
        raise ValueError(
            f"The weight matrix must be symmetric; W[{i},{j}]={float(W[i, j]):g} but W[{j},{i}]={float(W[j, i]):g}. "
            "Pass (W + W.T) / 2 or the upper triangle mirrored."
        )


def _from_edges(nodes: list, r: np.ndarray, c: np.ndarray, v: np.ndarray, what: str) -> Problem:
    n = len(nodes)
    if not np.all(np.isfinite(v)):
        k = int(np.flatnonzero(~np.isfinite(v))[0])
        raise ValueError(
            f"{what} has a NaN or infinite weight on edge ({nodes[r[k]]!r}, {nodes[c[k]]!r}). "
            "Remove the edge (to forbid the pair) or give it a finite weight."
        )
    keep = r != c
    r, c, v = r[keep], c[keep], v[keep]
    lo, hi = np.minimum(r, c), np.maximum(r, c)
    key = lo.astype(np.int64) * n + hi
    order = np.argsort(key, kind="stable")
    key, lo, hi, v = key[order], lo[order], hi[order], v[order]
    if key.size:
        dup = np.flatnonzero(key[1:] == key[:-1])
        if dup.size:
            bad = dup[np.abs(v[dup + 1] - v[dup]) > 1e-9 * np.maximum(1, np.abs(v[dup]))]
            if bad.size:
                k = int(bad[0])
                raise ValueError(
                    f"{what} is not symmetric: pair ({nodes[lo[k]]!r}, {nodes[hi[k]]!r}) has weights "
                    f"{float(v[k]):g} and {float(v[k + 1]):g}. Give each pair one weight."
                )
            first = np.concatenate([[True], key[1:] != key[:-1]])
            lo, hi, v = lo[first], hi[first], v[first]
    return Problem(n=n, nodes=list(nodes), complete=False, rows=lo.astype(np.int64),
                   cols=hi.astype(np.int64), vals=v.astype(np.float64))


def _node_labels(nodes: Sequence | None, n: int) -> list:
    """``nodes`` as a list of ``n`` distinct labels (``0..n-1`` when None)."""
    if nodes is None:
        return list(range(n))
    nl = list(nodes)
    if len(nl) != n:
        raise ValueError(f"nodes has {len(nl)} labels but the weight matrix has {n} rows; give one label per row.")
    try:
        distinct = len(set(nl))
    except TypeError:
        raise ValueError("node labels must be hashable (str, int, tuple...).") from None
    if distinct != n:
        seen, dup = set(), None
        for u in nl:
            if u in seen:
                dup = u
                break
            seen.add(u)
        raise ValueError(f"nodes must be distinct labels; {dup!r} appears more than once.")
    return nl


def _real_weights(a: Any, what: str) -> np.ndarray:
    """``a`` as float64, refusing complex and non-numeric values."""
    arr = np.asarray(a)
    if np.iscomplexobj(arr):
        raise ValueError(f"{what} must be real numbers; got complex values (drop the imaginary part first).")
    try:
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numeric.") from None


def as_problem(data: Any, *, weight: str = "weight", nodes: Sequence | None = None, source: Any = None,
               target: Any = None) -> Problem:
    """Normalise a networkx or igraph graph, dense/sparse matrix, edge table or edge list to a
    :class:`Problem`."""
    from trustlab.graph import as_pandas_table, edge_table_columns, factorize_endpoints, igraph_edges, is_igraph

    if is_igraph(data):
        if data.has_multiple():
            raise ValueError("partition needs a simple graph; the igraph graph has parallel edges. "
                             "Collapse them first (G.simplify(combine_edges='first')).")
        nl, r, c, v = igraph_edges(data, weight=weight)
        return _from_edges(nl, r, c, v, "The igraph graph")
    table = as_pandas_table(data)
    if table is not None:
        # an explicit weight= names the column; the default "weight" also finds "w"
        s, t, v = edge_table_columns(table, source=source, target=target,
                                     weight=None if weight == "weight" else weight, need_weight=True)
        nl, r, c = factorize_endpoints(s, t, nodes)
        return _from_edges(nl, r, c, v, "The edge table")
    # a networkx graph can only exist once networkx is imported: do not import it
    # (a few tenths of a second) for matrix or edge-list input
    nx = sys.modules.get("networkx")
    if nx is not None and isinstance(data, nx.Graph):
        if data.is_directed():
            raise ValueError("partition needs an undirected graph; got a directed graph. Use G.to_undirected().")
        if data.is_multigraph():
            raise ValueError("partition needs a simple graph; got a multigraph. Collapse parallel edges first.")
        nl = list(data.nodes())
        pos = {u: i for i, u in enumerate(nl)}
        r, c, v = [], [], []
        for a, b, d in data.edges(data=True):
            if weight not in d:
                raise ValueError(
                    f"edge ({a!r}, {b!r}) has no {weight!r} attribute; every edge needs a weight "
                    f"(or pass weight=<attribute name>)."
                )
            r.append(pos[a])
            c.append(pos[b])
            v.append(d[weight])
        vv = _real_weights(v, f"edge weights ({weight!r})")
        return _from_edges(nl, np.asarray(r, np.int64), np.asarray(c, np.int64), vv, "The graph")
    if sp.issparse(data):
        M = sp.coo_matrix(data)
        if M.shape[0] != M.shape[1]:
            raise ValueError(f"The weight matrix must be square; got a sparse matrix with shape {M.shape}.")
        n = M.shape[0]
        # every node (isolated ones too) gets a label, a component and a cluster:
        # refuse a declared size whose per-node state cannot fit before building it
        check_memory(_BYTES_PER_NODE * int(n), f"partition: the {n} x {n} sparse weight matrix has {n:,} "
                     "nodes; their per-node state",
                     "drop the isolated nodes (rows and columns without entries) and relabel the rest 0..n-1")
        r, c, v = M.row.astype(np.int64), M.col.astype(np.int64), _real_weights(M.data, "The sparse weights")
        if not np.all(np.isfinite(v)):
            raise ValueError("The sparse weight matrix contains NaN or infinite weights. Remove those entries.")
        # symmetry: both triangles (if given) must agree
        Mc = sp.csr_matrix(data, dtype=np.float64)
        diff = abs(Mc - Mc.T)
        upper_only = (sp.tril(Mc, -1).nnz == 0) or (sp.triu(Mc, 1).nnz == 0)
        if not upper_only and diff.nnz and diff.max() > 1e-9:
            d = sp.coo_matrix(diff)
            k = int(np.argmax(d.data))
            i, j = int(d.row[k]), int(d.col[k])
            raise ValueError(
                f"The sparse weight matrix must be symmetric (or one triangle only); "
                f"W[{i},{j}]={float(Mc[i, j]):g} but W[{j},{i}]={float(Mc[j, i]):g}."
            )
        nl = _node_labels(nodes, n)
        return _from_edges(nl, r, c, v, "The sparse weight matrix")
    if isinstance(data, np.ndarray) and (data.ndim != 2 or data.shape[1] != 3 or data.shape[0] == 3):
        # a square ndarray is a dense weight matrix (a (3, 3) array too); (m, 3) arrays are edge lists
        W = _real_weights(data, "The weight matrix")
        _check_symmetric_dense(W, "an array")
        W = W.copy()
        np.fill_diagonal(W, 0.0)
        n = W.shape[0]
        if n == 0:
            raise ValueError("The weight matrix is empty; at least one node is required.")
        nl = _node_labels(nodes, n)
        return Problem(n=n, nodes=nl, complete=True, W=W)
    # edge list: sequence of (i, j, w)
    if isinstance(data, np.ndarray):
        rows = [tuple(x) for x in data.tolist()]
    else:
        try:
            rows = [tuple(e) for e in data]
        except TypeError:
            raise TypeError(
                f"partition expects a networkx graph, a dense or sparse square weight matrix, or an "
                f"edge list of (i, j, weight); got {type(data).__name__}."
            ) from None
    if not rows:
        raise ValueError("The edge list is empty; give at least one (i, j, weight) edge.")
    if any(len(e) != 3 for e in rows):
        k = next(e for e in rows if len(e) != 3)
        if isinstance(data, str):
            raise TypeError("partition expects a networkx graph, a dense or sparse square weight matrix, or an "
                            "edge list of (i, j, weight); got a str (to read a file use "
                            "trustlab.solvers.io.read_cplib or read_edgelist).")
        hint = ""
        if all(len(e) == len(rows) for e in rows):  # nested lists forming a square matrix
            hint = " A square weight matrix must be a NumPy array or sparse matrix: pass np.asarray(W)."
        raise ValueError(f"Each edge must be (i, j, weight); got {k!r}.{hint}")
    ends = [e[0] for e in rows] + [e[1] for e in rows]
    if nodes is not None:
        nl = list(nodes)
        nl = _node_labels(nl, len(nl))  # distinct
    else:
        try:
            nl = sorted(set(ends))
        except TypeError:
            nl = list(dict.fromkeys(ends))
    pos = {u: i for i, u in enumerate(nl)}
    try:
        r = np.array([pos[e[0]] for e in rows], np.int64)
        c = np.array([pos[e[1]] for e in rows], np.int64)
    except KeyError as exc:
        raise ValueError(f"edge endpoint {exc.args[0]!r} is not in nodes.") from None
    v = _real_weights([e[2] for e in rows], "edge weights")
    return _from_edges(nl, r, c, v, "The edge list")
