"""Inputs as they come: igraph graphs and pandas/pyarrow/polars edge tables for ``partition`` and
``maximal_cliques``, SciPy sparse matrices and gensim-style ``KeyedVectors`` for ``privatize``,
pyarrow/polars tables for ``resolve``; each accepted, or refused with a message naming the cause.
Every accepted form is checked against the form the library always took (networkx, dense arrays,
pandas)."""
import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import trustlab
from trustlab import maximal_cliques, partition, privatize

ig = pytest.importorskip("igraph")
pa = pytest.importorskip("pyarrow")


class PolarsLike:
    """A frame that, like polars, is no pandas object but converts with ``to_pandas()``."""

    def __init__(self, df):
        self._df = df
        self.columns = list(df.columns)

    def to_pandas(self):
        return self._df.copy()


def _signed_graph(seed=0, n=14, p=0.45):
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, p, seed=seed)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.integers(-3, 4))
    return nx.relabel_nodes(G, {i: f"n{i:02d}" for i in range(n)})


def _edge_frame(G, names=("source", "target", "weight")):
    return pd.DataFrame([(u, v, w) for u, v, w in G.edges(data="weight")], columns=list(names))


def _clusters(r):
    return sorted(sorted(c) for c in r.clusters)


# ------------------------------------------------------------------ partition
@pytest.mark.parametrize("seed", [0, 1])
def test_partition_edge_tables_and_igraph_match_networkx(seed):
    G = _signed_graph(seed)
    ref = partition(G, method="cpp", random_state=0)
    df = _edge_frame(G)
    g = ig.Graph.TupleList(df.itertuples(index=False), weights=True)
    for data in (df, pa.Table.from_pandas(df), PolarsLike(df), g):
        r = partition(data, method="cpp", random_state=0)
        assert r.status == ref.status == "optimal"
        assert r.objective == pytest.approx(ref.objective)
        assert r.bound == pytest.approx(ref.bound)
        # the same partition (the optimum may tie, so compare objective of the labels on G too)
        assert sum(G[u][v]["weight"] for c in r.clusters for i, u in enumerate(c) for v in c[i + 1:]
                   if G.has_edge(u, v)) == pytest.approx(ref.objective)
        assert all(G.has_edge(u, v) for c in r.clusters for i, u in enumerate(c) for v in c[i + 1:])


def test_partition_edge_table_is_not_read_as_one_edge():
    df = pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"], "weight": [2.0, -1.0]})
    r = partition(df, random_state=0)
    assert _clusters(r) == [["a", "b"], ["c"]] and r.objective == 2.0


def test_partition_explicit_and_detected_column_names():
    df = pd.DataFrame({"x": [1, 2], "y": [2, 3], "s": [1.0, 5.0]})
    assert _clusters(partition(df, source="x", target="y", weight="s", random_state=0)) == [[1], [2, 3]]
    assert _clusters(partition(df.rename(columns={"x": "SRC", "y": "dst", "s": "w"}), random_state=0)) == [[1], [2, 3]]
    # an unnamed (m, 3) frame, as from pd.DataFrame(array), is read by position
    assert _clusters(partition(pd.DataFrame([[1, 2, 1.0], [2, 3, 5.0]]), random_state=0)) == [[1], [2, 3]]


@pytest.mark.parametrize("data, match", [
    (pd.DataFrame({"a": [1], "b": [2], "weight": [1.0]}), "no recognisable source column.*source="),
    (pd.DataFrame({"source": [1], "target": [2]}), "no recognisable weight column.*weight="),
    (pd.DataFrame({"source": [1], "target": [2], "weight": ["x"]}), "weight column must be numeric"),
    (pd.DataFrame({"source": [1, None], "target": [2, 3], "weight": [1.0, 1.0]}), "missing values"),
])
def test_partition_refuses_unreadable_edge_tables_with_the_cause(data, match):
    with pytest.raises(ValueError, match=match):
        partition(data)


def test_partition_refuses_directed_or_multi_igraph_and_missing_weights():
    with pytest.raises(ValueError, match="directed"):
        partition(ig.Graph([(0, 1)], directed=True))
    multi = ig.Graph([(0, 1), (0, 1)])
    multi.es["weight"] = [1.0, 1.0]
    with pytest.raises(ValueError, match="parallel edges"):
        partition(multi)
    with pytest.raises(ValueError, match="no 'weight' edge attribute"):
        partition(ig.Graph([(0, 1)]))


def test_partition_igraph_without_names_uses_vertex_ids_and_keeps_isolated_vertices():
    g = ig.Graph(n=4, edges=[(0, 1), (1, 2)])
    g.es["weight"] = [1.0, -1.0]
    r = partition(g, random_state=0)
    assert r.nodes == [0, 1, 2, 3] and _clusters(r) == [[0, 1], [2], [3]]


# ------------------------------------------------------- to_frame / to_networkx
def test_partition_result_to_frame_and_to_networkx():
    G = _signed_graph(3)
    r = partition(G, method="cpp", random_state=0)
    frame = r.to_frame()
    assert frame.columns.tolist() == ["node", "cluster"]
    assert frame["node"].tolist() == list(G.nodes) and frame["cluster"].tolist() == r.labels.tolist()
    H = r.to_networkx()
    assert set(H.nodes) == set(G.nodes)
    assert {frozenset(e) for e in H.edges} == {frozenset(e) for e in G.edges}
    assert all(H[u][v]["weight"] == G[u][v]["weight"] for u, v in G.edges)
    cluster = dict(H.nodes(data="cluster"))
    assert [cluster[v] for v in G.nodes] == r.labels.tolist()
    within = r.to_networkx(edges="within")
    assert sum(w for _, _, w in within.edges(data="weight")) == pytest.approx(r.objective)
    assert all(cluster[u] == cluster[v] for u, v in within.edges)
    assert r.to_networkx(edges="none").number_of_edges() == 0
    with pytest.raises(ValueError, match="edges must be"):
        r.to_networkx(edges="all")


def test_partition_result_to_networkx_from_a_dense_matrix_has_every_pair():
    W = np.array([[0, 2, -1], [2, 0, -1], [-1, -1, 0]], float)
    H = partition(W, random_state=0).to_networkx()
    assert H.number_of_edges() == 3 and H[0][1]["weight"] == 2.0


# ------------------------------------------------------------ maximal_cliques
def _clique_set(res):
    return {frozenset(c) for c in res.to_list()}


def test_maximal_cliques_of_igraph_and_edge_tables_match_networkx():
    G = nx.karate_club_graph()
    ref = {frozenset(c) for c in nx.find_cliques(G)}
    assert _clique_set(maximal_cliques(ig.Graph.Famous("Zachary"))) == ref
    df = pd.DataFrame(list(G.edges), columns=["u", "v"])
    for data in (df, pa.Table.from_pandas(df), PolarsLike(df)):
        assert _clique_set(maximal_cliques(data)) == ref
    named = df.rename(columns={"u": "a", "v": "b"}).astype(str)
    assert _clique_set(maximal_cliques(named, source="a", target="b")) == {frozenset(map(str, c)) for c in ref}
    with pytest.raises(ValueError, match="no recognisable source column"):
        maximal_cliques(named)
    with pytest.raises(ValueError, match="directed"):
        maximal_cliques(ig.Graph([(0, 1)], directed=True))


def test_maximal_cliques_igraph_names_are_the_labels():
    g = ig.Graph.TupleList([("x", "y"), ("y", "z"), ("z", "x"), ("z", "w")])
    assert _clique_set(maximal_cliques(g)) == {frozenset("xyz"), frozenset("zw")}


# --------------------------------------------------------------------- privatize
class KeyedVectorsLike:
    """gensim's KeyedVectors as privatize sees it: ``.vectors`` and ``.index_to_key``."""

    def __init__(self, vectors):
        self.vectors = vectors
        self.index_to_key = [f"w{i}" for i in range(len(vectors))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_privatize_takes_sparse_matrices_and_keyed_vectors(dtype):
    X = sp.random(40, 100, density=0.3, format="csr", random_state=0, dtype=dtype)
    ref = privatize(X.toarray(), epsilon=5, random_state=1)
    for data in (X, X.tocoo(), KeyedVectorsLike(X.toarray())):
        out = privatize(data, epsilon=5, random_state=1)
        assert out.vectors.dtype == ref.vectors.dtype
        np.testing.assert_array_equal(out.vectors, ref.vectors)
    V = np.random.default_rng(2).standard_normal((10, 100))
    a = privatize(X.toarray(), epsilon=5, mechanism="m1", vocab=V, random_state=1)
    b = privatize(X, epsilon=5, mechanism="m1", vocab=KeyedVectorsLike(V), random_state=1)
    np.testing.assert_array_equal(a.vectors, b.vectors)


@pytest.mark.parametrize("data", [{"a": [1.0]}, "vectors.npy", None])
def test_privatize_refuses_non_matrices_with_the_cause(data):
    with pytest.raises(TypeError, match="2-D array of embedding vectors.*got (dict|str|NoneType)"):
        privatize(data, epsilon=1)


# ----------------------------------------------------------------------- resolve
def _resolve(records):
    return trustlab.resolve(records, id_col="id", fields={"name": "name"}, labels="ent", truth="ent",
                            train_fraction=1.0, method="connected_components", random_state=0)


def test_resolve_takes_pyarrow_and_polars_like_tables():
    df = pd.DataFrame({"id": [1, 2, 3, 4, 5], "ent": [0, 0, 1, 1, 2],
                       "name": ["ann lee", "anne lee", "bob ray", "bob rae", "cy di"]})
    ref = _resolve(df)
    for data in (pa.Table.from_pandas(df), PolarsLike(df)):
        r = _resolve(data)
        assert r.entity.tolist() == ref.entity.tolist() and r.metrics == ref.metrics


def test_resolve_names_why_a_table_cannot_be_read():
    class NoPyarrow(PolarsLike):
        def to_pandas(self):
            raise ImportError("to_pandas needs pyarrow")

    with pytest.raises(TypeError, match="could not convert the NoPyarrow to pandas: to_pandas needs pyarrow"):
        _resolve(NoPyarrow(pd.DataFrame({"id": [1]})))
    with pytest.raises(TypeError, match=r"records must be a table \(pandas DataFrame, pyarrow Table, polars"):
        _resolve(42)
