"""Input normalisation (trustlab.graph) and its documented errors."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.cliques import maximal_cliques
from trustlab.graph import CSRGraph, as_csr_graph


def edge_set(g: CSRGraph):
    out = set()
    for v in range(g.n_nodes):
        nb = g.indices[g.indptr[v]:g.indptr[v + 1]]
        assert np.all(np.diff(nb) > 0), "neighbour lists must be sorted and duplicate-free"
        assert v not in nb, "no self-loops"
        for u in nb:
            out.add((min(v, int(u)), max(v, int(u))))
    return out


@settings(max_examples=80)
@given(st.integers(1, 30), st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=120))
def test_edge_array_normalisation_matches_networkx(n, edges):
    edges = [(u % n, v % n) for u, v in edges]
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, v in edges if u != v)
    arr = np.array(edges, dtype=np.int64).reshape(-1, 2)
    if any(u == v for u, v in edges):
        with pytest.warns(UserWarning, match="self-loop"):
            g = as_csr_graph(arr, n_nodes=n)
    else:
        g = as_csr_graph(arr, n_nodes=n)
    assert g.indptr.dtype == np.int32 and g.indices.dtype == np.int32
    assert g.n_nodes == n and g.n_edges == G.number_of_edges()
    assert edge_set(g) == {(min(u, v), max(u, v)) for u, v in G.edges()}
    # symmetric
    A = sp.csr_matrix((np.ones(len(g.indices)), g.indices, g.indptr), shape=(n, n))
    assert (A != A.T).nnz == 0


def test_duplicates_and_reversed_edges_are_merged():
    g = as_csr_graph(np.array([[0, 1], [1, 0], [0, 1], [1, 2]]))
    assert g.n_edges == 2 and edge_set(g) == {(0, 1), (1, 2)}


def test_self_loops_dropped_with_warning():
    G = nx.Graph([(0, 1), (1, 1), (1, 2)])
    with pytest.warns(UserWarning, match="1 self-loop"):
        res = maximal_cliques(G)
    assert res.to_sets() == {frozenset({0, 1}), frozenset({1, 2})}
    A = sp.csr_matrix(np.array([[1, 1], [1, 0]]))
    with pytest.warns(UserWarning, match="self-loop"):
        assert as_csr_graph(A).n_edges == 1


def test_float_ids_accepted_only_when_integral():
    assert as_csr_graph(np.array([[0.0, 1.0], [1.0, 2.0]])).n_edges == 2
    with pytest.raises(ValueError, match="integer node ids"):
        as_csr_graph(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match="NaN"):
        as_csr_graph(np.array([[np.nan, 1.0]]))


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (np.array([[0, -1]]), ValueError, "negative node id"),
        (np.array([0, 1, 2]), ValueError, r"shape \(m, 2\)"),
        (np.array([[0, 1, 2]]), ValueError, r"shape \(m, 2\)"),
        (np.array([["a", "b"]]), TypeError, "integer node ids"),
        (np.array([[True, False]]), TypeError, "integer node ids"),
        ([[0, 1], [2]], (ValueError, TypeError), "edge"),
        ("edges.txt", TypeError, "networkx.Graph"),
        (None, TypeError, "networkx.Graph"),
        (np.array([[0, 2**40]]), ValueError, "too large"),
    ],
)
def test_bad_edge_arrays(bad, exc, match):
    with pytest.raises(exc, match=match):
        maximal_cliques(bad)


def test_out_of_range_ids_with_n_nodes():
    with pytest.raises(ValueError, match=r"n_nodes=3"):
        as_csr_graph(np.array([[0, 1], [2, 3]]), n_nodes=3)
    g = as_csr_graph(np.array([[0, 1]]), n_nodes=4)
    assert g.n_nodes == 4 and g.degrees().tolist() == [1, 1, 0, 0]
    with pytest.raises(ValueError, match="n_nodes"):
        as_csr_graph(np.array([[0, 1]]), n_nodes=-1)


def test_directed_graphs_rejected():
    with pytest.raises(ValueError, match="directed"):
        maximal_cliques(nx.DiGraph([(0, 1)]))
    A = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]]))  # a directed 3-cycle
    with pytest.raises(ValueError, match="not symmetric"):
        maximal_cliques(A)


def test_triangular_sparse_accepted():
    A = sp.csr_matrix(np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]]))
    assert maximal_cliques(A).to_sets() == {frozenset({0, 1, 2})}
    assert maximal_cliques(A.T.tocsr()).to_sets() == {frozenset({0, 1, 2})}


def test_sparse_nan_and_explicit_zeros():
    A = sp.csr_matrix(np.array([[0, np.nan], [np.nan, 0]]))
    with pytest.raises(ValueError, match="NaN"):
        maximal_cliques(A)
    B = sp.csr_matrix((np.array([0.0, 0.0, 2.0, 2.0]), (np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1]))),
                      shape=(3, 3))
    assert B.nnz == 4
    assert as_csr_graph(B).n_edges == 1  # stored zeros are not edges
    with pytest.raises(ValueError, match="square"):
        maximal_cliques(sp.csr_matrix(np.ones((2, 3))))


def test_nan_weight_in_networkx_rejected():
    G = nx.Graph()
    G.add_edge("a", "b", weight=float("nan"))
    with pytest.raises(ValueError, match="NaN weight"):
        maximal_cliques(G)
    G["a"]["b"]["weight"] = 0.3
    assert len(maximal_cliques(G)) == 1


def test_multigraph_parallel_edges_merged():
    G = nx.MultiGraph([(0, 1), (0, 1), (1, 2)])
    g = as_csr_graph(G)
    assert g.n_edges == 2


def test_empty_inputs():
    assert len(maximal_cliques(nx.Graph())) == 0
    assert len(maximal_cliques(np.zeros((0, 2), dtype=int))) == 0
    assert len(maximal_cliques([])) == 0
    assert maximal_cliques([]).max_size == 0
    assert as_csr_graph(as_csr_graph([[0, 1]])).n_edges == 1  # CSRGraph passes through
