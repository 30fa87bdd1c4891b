"""P5.11 weighted clustering coefficient against networkx (Onnela) and igraph (Barrat)."""
import doctest

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from trustlab.metrics import graph_stats, weighted_clustering_coefficient


def random_graph(seed, n=25, p=0.3):
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, p, seed=seed)
    for u, v in G.edges():
        G[u][v]["weight"] = float(rng.uniform(0.05, 1.0))
    return G


@pytest.mark.parametrize("seed", range(6))
def test_onnela_matches_networkx(seed):
    G = random_graph(seed, p=0.1 + 0.1 * seed)
    r = weighted_clustering_coefficient(G)
    ref = nx.clustering(G, weight="weight")
    np.testing.assert_allclose(r.per_node, [ref[v] for v in r.nodes], atol=1e-12)
    assert r.value == pytest.approx(nx.average_clustering(G, weight="weight"))
    assert weighted_clustering_coefficient(G, variant="unweighted").value == pytest.approx(nx.average_clustering(G))


@pytest.mark.parametrize("seed", range(4))
def test_barrat_matches_igraph(seed):
    ig = pytest.importorskip("igraph")
    G = random_graph(100 + seed, p=0.25)
    edges = list(G.edges())
    w = [G[u][v]["weight"] for u, v in edges]
    g = ig.Graph(n=G.number_of_nodes(), edges=edges)
    ref = g.transitivity_local_undirected(weights=w, mode="zero")
    r = weighted_clustering_coefficient(np.array(edges), w, variant="barrat", n_nodes=G.number_of_nodes())
    np.testing.assert_allclose(r.per_node, ref, atol=1e-12)


def test_barrat_hand_value():
    # triangle 0-1-2 (w01=1, w02=3, w12=2) plus pendant 0-3 (w=4): node 0 k=3, s=8
    # ordered pairs (1,2),(2,1): (1+3)/2 each -> 4; c0 = 4 / (8*2) = 0.25
    r = weighted_clustering_coefficient([(0, 1), (0, 2), (1, 2), (0, 3)], [1, 3, 2, 4], variant="barrat")
    assert r.per_node[0] == pytest.approx(0.25)
    assert r.per_node[1] == pytest.approx(1.0) and r.per_node[3] == 0.0


def test_input_forms_agree():
    G = random_graph(9)
    W = nx.to_numpy_array(G, nodelist=sorted(G.nodes()))
    a = weighted_clustering_coefficient(W).value
    b = weighted_clustering_coefficient(sp.triu(sp.csr_matrix(W), 1)).value  # xER i<j storage
    E = np.array([(u, v) for u, v in G.edges()])
    c = weighted_clustering_coefficient(E, [G[u][v]["weight"] for u, v in E], n_nodes=len(G)).value
    assert a == pytest.approx(b) == pytest.approx(c) == pytest.approx(nx.average_clustering(G, weight="weight"))


def test_not_density():
    # complete graph with one heavy triangle: unweighted CC = 1 = density, weighted < 1
    G = nx.complete_graph(5)
    for u, v in G.edges():
        G[u][v]["weight"] = 0.1
    for u, v in [(0, 1), (1, 2), (0, 2)]:
        G[u][v]["weight"] = 1.0
    assert weighted_clustering_coefficient(G, variant="unweighted").value == pytest.approx(1.0)
    assert weighted_clustering_coefficient(G).value < 0.5


def test_errors():
    with pytest.raises(ValueError, match="non-negative weights"):
        weighted_clustering_coefficient([(0, 1), (1, 2), (0, 2)], [0.5, -0.2, 0.3])
    assert (
        weighted_clustering_coefficient([(0, 1), (1, 2), (0, 2)], [0.5, -0.2, 0.3], variant="unweighted").value == 1.0
    )
    with pytest.raises(ValueError, match="must be one of"):
        weighted_clustering_coefficient([(0, 1)], variant="zhang")
    with pytest.raises(ValueError, match="duplicate"):
        weighted_clustering_coefficient([(0, 1), (1, 0)], [1, 1])


def test_doctests():
    assert doctest.testmod(graph_stats).failed == 0
