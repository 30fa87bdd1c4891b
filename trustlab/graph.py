"""Graph input normalisation: every accepted graph becomes one CSR adjacency.

:func:`as_csr_graph` turns a networkx graph, an ``(m, 2)`` integer edge array or a
SciPy sparse adjacency matrix into a :class:`CSRGraph`: a symmetric int32 CSR
adjacency (sorted neighbour lists, no self-loops, no duplicates) plus the original
node labels. Kernels receive only this form and never validate.

Normalisation rules (documented and tested):

* **self-loops** are dropped with a :class:`UserWarning` (a vertex is always
  "adjacent to itself" in a clique);
* **duplicate edges** (``(u, v)`` twice, or both ``(u, v)`` and ``(v, u)``) are
  merged silently: an undirected edge list often lists both directions;
* **directed graphs** (``nx.DiGraph``) are rejected; a sparse matrix must be
  symmetric or triangular (an upper- or lower-triangular matrix lists each
  undirected edge once, as in xER's ``i < j`` storage);
* **NaN weights** (networkx ``weight`` attribute or sparse ``data``) are rejected;
  explicit zeros stored in a sparse matrix are *not* edges;
* **edge arrays** must hold non-negative integers (floats are accepted only if every
  value is integral); ids are node ids ``0 .. n_nodes - 1``; ids not used by any
  edge are isolated nodes.
"""
from __future__ import annotations

import numbers
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._tables import as_pandas_table
from trustlab._validation import Interval, check_memory, validate_params

__all__ = ["CSRGraph", "as_csr_graph", "csr_from_edges", "read_edge_file"]

_INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True)
class CSRGraph:
    """A simple undirected graph in symmetric CSR form.

    Attributes
    ----------
    indptr : numpy.ndarray of int32, shape (n_nodes + 1,)
    indices : numpy.ndarray of int32, shape (2 * n_edges,)
        ``indices[indptr[v]:indptr[v+1]]`` are the neighbours of vertex ``v``, sorted
        ascending, without ``v`` itself.
    nodes : numpy.ndarray
        Original label of each vertex (int64 array when every label is an integer,
        otherwise an object array).
    n_self_loops : int
        Self-loops dropped during normalisation.
    """

    indptr: np.ndarray
    indices: np.ndarray
    nodes: np.ndarray
    n_self_loops: int = 0

    @property
    def n_nodes(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_edges(self) -> int:
        return int(self.indices.shape[0] // 2)

    def degrees(self) -> np.ndarray:
        """Degree of every vertex (int64)."""
        return np.diff(self.indptr).astype(np.int64)


def _labels_array(labels: list) -> np.ndarray:
    if all(isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))
           for x in labels):
        try:
            return np.asarray(labels, dtype=np.int64).reshape(len(labels))
        except OverflowError:
            pass
    out = np.empty(len(labels), dtype=object)
    out[:] = labels
    return out


def _warn_self_loops(n_loops: int, stacklevel: int = 4) -> None:
    warnings.warn(
        f"the graph has {n_loops} self-loop(s); they were dropped (a self-loop "
        "never changes which vertex sets are cliques).",
        UserWarning,
        stacklevel=stacklevel,
    )


@validate_params(
    {
        "src": ["array-like"],
        "dst": ["array-like"],
        "n": [Interval(numbers.Integral, 0, None, closed="left")],
        "warn_self_loops": ["boolean"],
        "nodes": ["array-like", None],
    }
)
def csr_from_edges(
    src: np.ndarray, dst: np.ndarray, n: int, *, warn_self_loops: bool = True, nodes: np.ndarray | None = None
) -> CSRGraph:
    """Build a :class:`CSRGraph` from validated int64 endpoint arrays in ``[0, n)``.

    Self-loops are dropped (with a warning unless ``warn_self_loops=False``) and
    duplicate/reversed edges merged.
    """
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    if nodes is None:
        nodes = np.arange(n, dtype=np.int64)
    if _use_csr_kernel(src.shape[0]) and _in_range(src, dst, n):
        from trustlab.kernels.cliques_cpu import edges_to_csr

        indptr, indices, n_loops = edges_to_csr(src, dst, n)
        if n_loops and warn_self_loops:
            _warn_self_loops(int(n_loops))
        return CSRGraph(indptr, indices, nodes, int(n_loops))
    indptr, indices, n_loops = _csr_numpy(src, dst, n)
    if n_loops and warn_self_loops:
        _warn_self_loops(n_loops)
    return CSRGraph(indptr, indices, nodes, n_loops)


#: below this many edges the NumPy conversion takes milliseconds: no kernel is even imported
_CSR_KERNEL_MIN_EDGES = 20_000
#: from this many edges the conversion kernel pays for its own cold compile (about 1 s of
#: CPU against about 0.2 us per edge for the NumPy sorts)
_CSR_COMPILE_PAYS = 5_000_000


def _use_csr_kernel(m: int) -> bool:
    """Whether :func:`csr_from_edges` converts with the counting-sort kernel (same
    result as :func:`_csr_numpy`, 4-6x faster) rather than the NumPy sorts: for inputs
    of at least ``_CSR_KERNEL_MIN_EDGES`` edges once the kernel is compiled or in
    Numba's cache, and for very large inputs always. On a cold cache a mid-sized
    conversion is thus not held up by a compile."""
    if m < _CSR_KERNEL_MIN_EDGES or 2 * m > _INT32_MAX:
        return False
    if m >= _CSR_COMPILE_PAYS:
        return True
    from trustlab.kernels._jit import kernel_ready
    from trustlab.kernels.cliques_cpu import edges_to_csr

    return kernel_ready(edges_to_csr)


def _in_range(src: np.ndarray, dst: np.ndarray, n: int) -> bool:
    return bool(src.shape[0] == dst.shape[0] and (src.shape[0] == 0 or (
        min(int(src.min()), int(dst.min())) >= 0 and max(int(src.max()), int(dst.max())) < n)))


def _csr_numpy(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(indptr, indices, n_self_loops)`` of the undirected edges ``src-dst`` by NumPy
    sorts (the reference the conversion kernel is tested against)."""
    loops = src == dst
    n_loops = int(loops.sum())
    if n_loops:
        keep = ~loops
        src, dst = src[keep], dst[keep]
    if 2 * src.shape[0] > _INT32_MAX:
        raise ValueError(
            f"the graph has {src.shape[0]} edges; at most {_INT32_MAX // 2} are supported "
            "(int32 CSR). Split the graph into connected components first."
        )
    # one int64 key per (row, column) and plain sorts: NumPy's hash-based np.unique and
    # a two-key lexsort took 1.7 s for a million edges, this takes 0.11 s
    lo = np.minimum(src, dst)
    hi = np.maximum(src, dst)
    key = np.sort(lo * n + hi)
    if key.size:
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]  # dedupe undirected edges
    lo = key // n if n else key
    hi = key - lo * n
    both = np.sort(np.concatenate([key, hi * n + lo]))  # both directions, row-major order
    indices = (both - (both // n) * n if n else both).astype(np.int32)
    counts = np.bincount(np.concatenate([lo, hi]), minlength=n) if n else np.zeros(0, np.int64)
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    return indptr, indices, n_loops


def _from_networkx(G) -> CSRGraph:
    if G.is_directed():
        raise ValueError(
            f"directed graphs are not supported (got {type(G).__name__}); cliques are "
            "defined on undirected graphs. Convert with G.to_undirected() first."
        )
    labels = list(G.nodes())
    n = len(labels)
    index = {v: i for i, v in enumerate(labels)}
    m = G.number_of_edges()
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    k = 0
    for u, v, w in G.edges(data="weight"):
        if w is not None:
            try:
                bad = w != w  # NaN check that works for numpy and python floats
            except Exception:
                bad = False
            if bad:
                raise ValueError(
                    f"edge ({u!r}, {v!r}) has a NaN weight; remove the edge or give it a "
                    "finite weight before enumerating cliques."
                )
        src[k] = index[u]
        dst[k] = index[v]
        k += 1
    return csr_from_edges(src[:k], dst[:k], n, nodes=_labels_array(labels))


# bytes per node of the CSR graph and of the clique enumeration that follows
# (int64 offsets and degrees, int32 orderings and ranks, the kernels' per-node state)
_BYTES_PER_NODE = 48


def _check_node_memory(n: int, what: str) -> None:
    """Refuse a node count whose per-node arrays alone exceed the machine's memory
    (e.g. one edge ``0 2000000000`` in an integer edge array means 2e9 nodes)."""
    check_memory(
        _BYTES_PER_NODE * int(n),
        f"{what} has {int(n):,} nodes; its per-node arrays",
        "relabel the nodes to 0..n-1 first (e.g. np.unique(edges, return_inverse=True)), "
        "or read the file with trustlab.graph.read_edge_file, which relabels",
    )


def _from_sparse(A) -> CSRGraph:
    import scipy.sparse as sp

    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(
            f"a sparse adjacency matrix must be square; got shape {A.shape}. Pass an "
            "(m, 2) edge array for an edge list."
        )
    n = int(A.shape[0])
    _check_node_memory(n, f"the {n} x {n} sparse adjacency matrix")
    C = sp.coo_matrix(A)
    data = C.data
    if data.dtype.kind in "fc" and not np.all(np.isfinite(data)):
        bad = int((~np.isfinite(data)).sum())
        raise ValueError(
            f"the sparse adjacency matrix has {bad} NaN/infinite value(s); remove or "
            "replace them (A.data = np.nan_to_num(A.data)) first."
        )
    nz = data != 0
    row = C.row[nz].astype(np.int64)
    col = C.col[nz].astype(np.int64)
    off = row != col
    upper = bool(np.all(row[off] < col[off]))
    lower = bool(np.all(row[off] > col[off]))
    if not (upper or lower):
        P = sp.coo_matrix((np.ones(row.shape[0], np.int8), (row, col)), shape=(n, n)).tocsr()
        P.sum_duplicates()
        P.data[:] = 1
        if (P != P.T).nnz:
            raise ValueError(
                "the sparse adjacency matrix is not symmetric, so it describes a directed "
                "graph; pass A + A.T (or a triangular matrix listing each edge once)."
            )
    return csr_from_edges(row, col, n)


def _from_edge_array(E: Any, n_nodes: int | None) -> CSRGraph:
    try:
        arr = np.asarray(E)
    except Exception as exc:  # ragged input
        raise ValueError(f"could not convert the edge list to an array: {exc}") from None
    if arr.dtype == object:
        raise TypeError(
            "edge array must hold integer node ids; got an object array (ragged lists or "
            "non-numeric labels). Build a networkx.Graph for arbitrary labels."
        )
    if arr.size == 0 and arr.ndim <= 2:
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"edge array must have shape (m, 2); got shape {arr.shape}. Pass one "
            "(u, v) pair per row."
        )
    kind = arr.dtype.kind
    if kind == "b" or kind not in "iuf":
        raise TypeError(
            f"edge array must hold integer node ids; got dtype {arr.dtype}. Build a "
            "networkx.Graph for non-integer labels."
        )
    if kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError("edge array contains NaN or infinite node ids; node ids must be integers.")
        if not np.all(arr == np.round(arr)):
            i = int(np.argwhere(arr != np.round(arr))[0][0])
            raise ValueError(
                f"edge array must hold integer node ids; row {i} is {arr[i].tolist()}. "
                "Node ids must be whole numbers."
            )
    if kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError("edge array holds node ids too large for int64.")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and int(arr.min()) < 0:
        i = int(np.argwhere(arr < 0)[0][0])
        raise ValueError(
            f"edge array holds a negative node id (row {i}: {arr[i].tolist()}); node ids "
            "must be in [0, n_nodes)."
        )
    max_id = int(arr.max()) if arr.size else -1
    if n_nodes is None:
        n = max_id + 1
    else:
        if isinstance(n_nodes, bool) or not isinstance(n_nodes, (numbers.Integral, np.integer)) or n_nodes < 0:
            raise ValueError(f"n_nodes must be a non-negative int; got {n_nodes!r}.")
        n = int(n_nodes)
        if max_id >= n:
            i = int(np.argwhere(arr >= n)[0][0])
            raise ValueError(
                f"edge array holds node id {max_id} but n_nodes={n} (row {i}: "
                f"{arr[i].tolist()}); node ids must be in [0, n_nodes)."
            )
    if n > _INT32_MAX:
        raise ValueError(
            f"node id {max_id} is too large (at most {_INT32_MAX - 1} supported); relabel the "
            "nodes to 0..n-1 first (e.g. np.unique(edges, return_inverse=True))."
        )
    _check_node_memory(n, f"the edge array (largest node id {max_id})")
    return csr_from_edges(arr[:, 0], arr[:, 1], n)



# ----------------------------------------------------------- inputs as they come
#: column names recognised as an edge table's endpoints and weight, in order of preference
SOURCE_NAMES = ("source", "src", "from", "u", "node1", "i")
TARGET_NAMES = ("target", "dst", "to", "v", "node2", "j")
WEIGHT_NAMES = ("weight", "w")


def _pick_column(columns: list, given: Any, names: tuple, role: str, kw: str, what: str, required: bool = True):
    if given is not None:
        if given not in columns:
            raise ValueError(f"{what} has no {role} column {given!r} ({kw}={given!r}); its columns are {columns}.")
        return given
    lower = {str(c).lower(): c for c in columns}
    for name in names:
        if name in lower:
            return lower[name]
    if not required:
        return None
    raise ValueError(
        f"{what} has no recognisable {role} column (looked for {', '.join(names)}); its columns are "
        f"{columns}. Name it with {kw}=<column>."
    )


def edge_table_columns(table: Any, *, source: Any = None, target: Any = None, weight: Any = None,
                       need_weight: bool = False, what: str = "the edge table") -> tuple:
    """The endpoint (and weight) columns of an edge table, as NumPy arrays.

    Columns are found by name: ``source``/``src``/``from``/``u``/``node1``/``i`` for the
    first endpoint, ``target``/``dst``/``to``/``v``/``node2``/``j`` for the second,
    ``weight``/``w`` for the weight (case-insensitive), or given explicitly. A frame whose
    columns are unnamed (``0, 1[, 2]``, as from ``pd.DataFrame(array)``) is read by position.

    Parameters
    ----------
    table : pandas.DataFrame, pyarrow.Table or polars.DataFrame
        One row per edge.
    source, target, weight : column name, optional
        Explicit column names (default: detected as above).
    need_weight : bool
        Refuse a table without a weight column (``weight`` is ``None`` in the result otherwise).
    what : str
        How error messages name the table.

    Returns
    -------
    (ndarray, ndarray, ndarray or None)
        First endpoints, second endpoints, weights (float64).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"src": ["a", "b"], "dst": ["b", "c"], "weight": [1.0, -2.0]})
    >>> s, t, w = edge_table_columns(df, need_weight=True)
    >>> s.tolist(), t.tolist(), w.tolist()
    (['a', 'b'], ['b', 'c'], [1.0, -2.0])
    """
    df = as_pandas_table(table)
    if df is None:
        raise TypeError(f"{what} must be a pandas, pyarrow or polars table; got {type(table).__name__}.")
    columns = list(df.columns)
    if (source is None and target is None and weight is None
            and columns == list(range(len(columns))) and len(columns) in (2, 3)):
        s, t = df[0].to_numpy(), df[1].to_numpy()
        w = df[2].to_numpy() if len(columns) == 3 else None
    else:
        sc = _pick_column(columns, source, SOURCE_NAMES, "source", "source", what)
        tc = _pick_column(columns, target, TARGET_NAMES, "target", "target", what)
        if sc == tc:
            raise ValueError(f"{what}: source and target name the same column {sc!r}; give two columns.")
        wc = _pick_column(columns, weight, WEIGHT_NAMES, "weight", "weight", what, required=need_weight)
        s, t = df[sc].to_numpy(), df[tc].to_numpy()
        w = df[wc].to_numpy() if wc is not None else None
    if need_weight and w is None:
        raise ValueError(f"{what} has no weight column; add one or name it with weight=<column>.")
    if w is not None:
        try:
            w = np.asarray(w, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{what}: the weight column must be numeric; got dtype {w.dtype}.") from None
    for arr, role in ((s, "source"), (t, "target")):
        if len(arr) and sys.modules["pandas"].isna(arr).any():
            raise ValueError(f"{what}: the {role} column has missing values; drop those rows first.")
    return s, t, w


def is_igraph(obj: Any) -> bool:
    """Whether ``obj`` is a python-igraph ``Graph`` (without importing igraph)."""
    ig = sys.modules.get("igraph")
    return ig is not None and isinstance(obj, ig.Graph)


def igraph_edges(G: Any, *, weight: str | None = None, what: str = "the igraph graph") -> tuple:
    """Node labels, endpoint index arrays and (optionally) weights of an undirected igraph ``Graph``.

    Labels are the ``name`` vertex attribute when the graph has one, else the vertex ids
    ``0..n-1``; every vertex is kept (isolated ones too).

    Parameters
    ----------
    G : igraph.Graph
        An undirected graph.
    weight : str, optional
        Edge attribute holding the weight; ``None`` reads no weights.
    what : str
        How error messages name the graph.

    Returns
    -------
    (list, ndarray, ndarray, ndarray or None)

    Examples
    --------
    >>> import igraph as ig
    >>> g = ig.Graph([(0, 1), (1, 2)])
    >>> g.es["weight"] = [1.0, -1.0]
    >>> labels, r, c, w = igraph_edges(g, weight="weight")
    >>> labels, r.tolist(), c.tolist(), w.tolist()
    ([0, 1, 2], [0, 1], [1, 2], [1.0, -1.0])
    """
    if G.is_directed():
        raise ValueError(f"{what} is directed; cliques and partitions need an undirected graph. "
                         "Use G.as_undirected() first.")
    n = G.vcount()
    labels = list(G.vs["name"]) if "name" in G.vs.attributes() else list(range(n))
    el = np.asarray(G.get_edgelist(), dtype=np.int64).reshape(-1, 2)
    w = None
    if weight is not None:
        if G.ecount() and weight not in G.es.attributes():
            raise ValueError(f"{what} has no {weight!r} edge attribute (it has {G.es.attributes()}); every "
                             "edge needs a weight (or pass weight=<attribute name>).")
        w = np.asarray(G.es[weight] if G.ecount() else [], dtype=np.float64)
    return labels, el[:, 0], el[:, 1], w


def _from_labelled_edges(labels: list, r: np.ndarray, c: np.ndarray, w: np.ndarray | None) -> CSRGraph:
    if w is not None and np.isnan(w).any():
        k = int(np.flatnonzero(np.isnan(w))[0])
        raise ValueError(f"edge ({labels[r[k]]!r}, {labels[c[k]]!r}) has a NaN weight; remove the edge or "
                         "give it a finite weight before enumerating cliques.")
    return csr_from_edges(r, c, len(labels), nodes=_labels_array(labels))


def factorize_endpoints(s: np.ndarray, t: np.ndarray, nodes: Any = None) -> tuple:
    """Node labels (sorted when they sort, else in order of first appearance, or ``nodes``)
    and the endpoints as int64 indices into them.

    Examples
    --------
    >>> import numpy as np
    >>> labels, r, c = factorize_endpoints(np.array(["b", "a"]), np.array(["c", "b"]))
    >>> labels, r.tolist(), c.tolist()
    (['a', 'b', 'c'], [1, 0], [2, 1])
    """
    import pandas as pd

    both = np.concatenate([np.asarray(s, dtype=object), np.asarray(t, dtype=object)])
    if nodes is not None:
        labels = list(nodes)
        index = pd.Index(labels)
        if not index.is_unique:
            raise ValueError("nodes must be distinct labels.")
        idx = index.get_indexer(both)
        if (idx < 0).any():
            raise ValueError(f"edge endpoint {both[int(np.flatnonzero(idx < 0)[0])]!r} is not in nodes.")
    else:
        codes, uniq = pd.factorize(both, sort=False)
        try:
            order = np.argsort(np.asarray(uniq, dtype=object), kind="stable")
        except TypeError:  # labels that do not sort (mixed types): first appearance
            order = np.arange(len(uniq))
        rank = np.empty(len(uniq), np.int64)
        rank[order] = np.arange(len(uniq))
        idx = rank[codes]
        labels = [_py_label(x) for x in np.asarray(uniq, dtype=object)[order].tolist()]
    m = len(s)
    return labels, idx[:m].astype(np.int64), idx[m:].astype(np.int64)


def _py_label(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x

@validate_params({"n_nodes": [Interval(numbers.Integral, 0, None, closed='left'), None]})
def as_csr_graph(graph: Any, *, n_nodes: int | None = None, source: Any = None, target: Any = None,
                 weight: Any = None) -> CSRGraph:
    """Normalise a graph to a :class:`CSRGraph`.

    Parameters
    ----------
    graph : networkx.Graph, array-like of shape (m, 2), scipy.sparse matrix or CSRGraph
        * ``networkx.Graph`` (or ``MultiGraph``; parallel edges merged): any hashable
          labels, kept in ``nodes`` in ``G.nodes()`` order;
        * integer edge array: one ``(u, v)`` row per edge, node ids ``0..n_nodes-1``;
        * SciPy sparse square adjacency: non-zero entries are edges; it must be
          symmetric, or triangular (each edge listed once);
        * ``igraph.Graph`` (undirected): labels from the ``name`` vertex attribute, else
          the vertex ids; isolated vertices kept;
        * edge table (pandas, pyarrow or polars): one row per edge, endpoint columns found
          by name (``source``/``target``, ``src``/``dst``, ``from``/``to``, ``u``/``v``, ...)
          or given with ``source=``/``target=``; any hashable labels, kept in ``nodes``
          (sorted); a ``weight`` column, when present, only has to be free of NaN;
        * a :class:`CSRGraph` is returned unchanged.
    n_nodes : int, optional
        Number of nodes for an edge array (default: largest id + 1). Ignored for
        other inputs.
    source, target, weight : column name, optional
        Columns of an edge table (default: detected by name, see above). Ignored for
        other inputs.

    Returns
    -------
    CSRGraph

    Raises
    ------
    ValueError
        Directed graph, asymmetric non-triangular matrix, NaN weights, negative or
        out-of-range ids, non-integral float ids, wrong shape.
    TypeError
        Unsupported input type or non-integer edge array.

    Warns
    -----
    UserWarning
        When self-loops are dropped.

    Examples
    --------
    >>> import numpy as np
    >>> g = as_csr_graph(np.array([[0, 1], [1, 2], [2, 0], [1, 0]]))
    >>> g.n_nodes, g.n_edges
    (3, 3)
    >>> g.indices[g.indptr[1]:g.indptr[2]].tolist()
    [0, 2]
    """
    if isinstance(graph, CSRGraph):
        return graph
    # A networkx graph or a SciPy sparse matrix can only exist once its package is
    # imported: check sys.modules instead of importing them (0.3-0.8 s of start-up).
    nx = sys.modules.get("networkx")
    if nx is not None and isinstance(graph, nx.Graph):
        return _from_networkx(graph)
    sp = sys.modules.get("scipy.sparse")
    if sp is not None and sp.issparse(graph):
        return _from_sparse(graph)
    if is_igraph(graph):
        labels, r, c, _ = igraph_edges(graph)
        return _from_labelled_edges(labels, r, c, None)
    table = as_pandas_table(graph)
    if table is not None and source is None and target is None and list(table.columns) == [0, 1]:
        return _from_edge_array(table.to_numpy(), n_nodes)  # pd.DataFrame(edge_array): node ids
    if table is not None:
        s, t, w = edge_table_columns(table, source=source, target=target, weight=weight)
        labels, r, c = factorize_endpoints(s, t)
        return _from_labelled_edges(labels, r, c, w)
    if isinstance(graph, (str, bytes, dict)) or graph is None:
        raise TypeError(
            f"graph must be a networkx.Graph, an igraph.Graph, an edge table (pandas, pyarrow, polars), an "
            f"(m, 2) integer edge array or a scipy sparse adjacency matrix; got {type(graph).__name__}. To "
            "read an edge file use trustlab.graph.read_edge_file(path)."
        )
    return _from_edge_array(graph, n_nodes)


@validate_params({"path": ["path"]})
def read_edge_file(path: str | Path) -> CSRGraph:
    r"""Read a whitespace-separated edge file into a :class:`CSRGraph`.

    One edge per line (``u v``); ``#`` starts a comment; blank lines are skipped;
    further columns (e.g. a weight) are ignored. Labels that all parse as integers
    are kept as integers, otherwise as strings. Only nodes that appear in an edge
    exist. Self-loops are dropped with a warning, duplicate edges merged.

    Plain ASCII files of integer labels (the usual case) are parsed and turned into
    CSR by Numba kernels (files up to 1 MiB by the Python reader while those kernels are
    neither compiled nor in Numba's cache: the same graph without their compile);
    anything else (string labels, non-ASCII bytes, malformed lines) goes through the
    exact Python reader, which also words the errors.

    Parameters
    ----------
    path : str or path-like
        The edge file (UTF-8 text).

    Returns
    -------
    CSRGraph
        ``nodes`` holds the labels (sorted; int64 if all are integers, else str).

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    IsADirectoryError
        ``path`` is a directory.
    ValueError
        A line with fewer than two labels (the message names the line), or text that
        is not UTF-8.

    Warns
    -----
    UserWarning
        When self-loops are dropped.

    Examples
    --------
    >>> _ = open("g.txt", "w").write("# triangle plus a tail\n1 2\n2 3\n3 1\n3 4 0.5\n")
    >>> g = read_edge_file("g.txt")
    >>> g.n_nodes, g.n_edges, g.nodes.tolist()
    (4, 4, [1, 2, 3, 4])
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a directory, not an edge file")
    if not path.exists():
        raise FileNotFoundError(f"edge file {str(path)!r} does not exist")
    g = None if _small_and_cold(path) else _read_int_edges_fast(path)
    return g if g is not None else _read_edge_file_python(path)


#: files up to this size are read by the exact Python reader while the reader kernels are
#: neither compiled nor cached (their cold compile costs about 2 s of CPU; the Python
#: reader takes about 0.05 s per 20,000 lines)
_PY_READ_MAX_BYTES = 1 << 20


def _small_and_cold(path: Path) -> bool:
    """A small file while the reader kernels are neither compiled nor cached: the
    Python reader returns the same graph without their compile."""
    if path.stat().st_size > _PY_READ_MAX_BYTES:
        return False
    from trustlab.kernels._jit import kernel_ready
    from trustlab.kernels.cliques_cpu import parse_int_edges

    return not kernel_ready(parse_int_edges)


def _read_int_edges_fast(path: Path) -> CSRGraph | None:
    from trustlab.kernels.cliques_cpu import compact_labels, edges_to_csr, parse_int_edges

    buf = np.fromfile(path, dtype=np.uint8)
    src, dst, m, ok = parse_int_edges(buf)
    del buf
    if not ok or 2 * m > _INT32_MAX:
        return None
    labels, sp, dp = compact_labels(src, dst)
    del src, dst
    indptr, indices, loops = edges_to_csr(sp, dp, labels.shape[0])
    if loops:
        _warn_self_loops(int(loops), stacklevel=5)
    return CSRGraph(indptr, indices, labels, int(loops))


def _read_edge_file_python(path: Path) -> CSRGraph:
    us: list[str] = []
    vs: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.split("#", 1)[0]
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 2:
                raise ValueError(
                    f"{path}:{lineno}: expected two node labels 'u v', got {line.strip()!r}"
                )
            us.append(parts[0])
            vs.append(parts[1])
    tokens = np.array(us + vs, dtype=object)
    try:
        import re

        digits = re.compile(r"[+-]?[0-9]+")  # decimal digits only: "1_000" stays a text label
        if not all(digits.fullmatch(t) for t in tokens):
            raise ValueError("not all labels are integers")
        ints = np.array([int(t) for t in tokens], dtype=np.int64)
        labels, inv = np.unique(ints, return_inverse=True)
    except (ValueError, OverflowError):
        labels, inv = np.unique(tokens.astype(str), return_inverse=True)
        labels = labels.astype(object)
    m = len(us)
    inv = inv.reshape(-1)
    return csr_from_edges(inv[:m], inv[m:], int(labels.shape[0]), nodes=labels)
