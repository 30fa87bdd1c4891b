"""Maximal cliques and clique counts against networkx and brute force."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cliques.clique_strategies import any_graph, gnp_graphs, wide_graphs
from trustlab.cliques import CliqueCountLimitError, CliqueResult, count_cliques, count_maximal_cliques, maximal_cliques


def nx_sets(G, min_size=1):
    return {frozenset(c) for c in nx.find_cliques(G) if len(c) >= min_size}


def brute_force_count(G, min_size=1):
    """Count all cliques by testing every vertex subset grown from smaller cliques."""
    nodes = list(G.nodes())
    total = 0
    level = [(v,) for v in nodes]
    size = 1
    idx = {v: i for i, v in enumerate(nodes)}
    while level:
        if size >= min_size:
            total += len(level)
        nxt = []
        for c in level:
            last = idx[c[-1]]
            for u in nodes[last + 1:]:
                if all(G.has_edge(u, w) for w in c):
                    nxt.append(c + (u,))
        level = nxt
        size += 1
    return total


def check_result(res: CliqueResult, G, min_size=1):
    assert isinstance(res, CliqueResult)
    assert res.indptr.dtype == np.int64 and res.indices.dtype == np.int32
    assert res.indptr[0] == 0 and res.indptr[-1] == res.indices.shape[0]
    sizes = res.sizes()
    assert np.all(sizes >= min_size)
    for k in range(len(res)):  # sorted, distinct members within each clique
        m = res.indices[res.indptr[k]:res.indptr[k + 1]]
        assert np.all(np.diff(m) > 0)
    got = res.to_sets()
    assert len(got) == len(res)  # no clique reported twice
    assert got == nx_sets(G, min_size)
    assert res.max_size == (max(map(len, got)) if got else 0)


@settings(max_examples=250)
@given(any_graph)
def test_maximal_cliques_equal_networkx(G):
    check_result(maximal_cliques(G, backend="cpu"), G)
    assert count_maximal_cliques(G, backend="cpu") == len(nx_sets(G))


@settings(max_examples=60)
@given(gnp_graphs(), st.integers(1, 6))
def test_min_size(G, k):
    check_result(maximal_cliques(G, min_size=k), G, k)
    assert count_maximal_cliques(G, min_size=k) == len(nx_sets(G, k))


@settings(max_examples=12)
@given(wide_graphs())
def test_multiword_bitsets(G):
    res = maximal_cliques(G)
    assert res.to_sets() == nx_sets(G)
    assert count_maximal_cliques(G) == len(res)


def test_hub_neighbourhoods():
    # hubs with far larger degree than their neighbours take the binary-search path
    G = nx.barabasi_albert_graph(600, 3, seed=1)
    G.add_edges_from((0, v) for v in range(1, 600))
    assert maximal_cliques(G).to_sets() == nx_sets(G)
    G = nx.powerlaw_cluster_graph(500, 5, 0.8, seed=2)
    assert maximal_cliques(G).to_sets() == nx_sets(G)


def test_moon_moser_count():
    # K_{3,3,...,3} with t parts has exactly 3**t maximal cliques, each of size t
    G = nx.complete_multipartite_graph(*([3] * 7))
    res = maximal_cliques(G)
    assert len(res) == 3 ** 7 and set(res.sizes().tolist()) == {7}


def test_labels_preserved_and_views():
    G = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    G.add_node("z")
    res = maximal_cliques(G)
    assert res.nodes.dtype == object
    assert sorted(map(sorted, res)) == [["a", "b", "c"], ["c", "d"], ["z"]]
    assert sorted(map(sorted, res.to_list())) == sorted(map(sorted, nx.find_cliques(G)))
    assert sorted(res[0]) in [["a", "b", "c"], ["c", "d"], ["z"]]
    with pytest.raises(IndexError):
        res[3]
    M = res.membership()
    assert M.shape == (5, 3) and M.sum() == 6
    assert "n_cliques=3" in repr(res)
    assert maximal_cliques(G, min_size=2).to_sets() == {frozenset("abc"), frozenset("cd")}


def test_integer_labels_and_inputs_agree():
    G = nx.relabel_nodes(nx.karate_club_graph(), {i: 100 + 3 * i for i in range(34)})
    res = maximal_cliques(G)
    assert res.nodes.dtype == np.int64
    assert res.to_sets() == nx_sets(G)
    E = np.array(nx.karate_club_graph().edges())
    A = nx.to_scipy_sparse_array(nx.karate_club_graph())
    ref = nx_sets(nx.karate_club_graph())
    assert maximal_cliques(E).to_sets() == ref
    assert maximal_cliques(A).to_sets() == ref
    assert maximal_cliques(sp.triu(A, format="csr")).to_sets() == ref
    assert maximal_cliques(E.tolist()).to_sets() == ref


def test_edge_array_isolated_ids_are_singletons():
    res = maximal_cliques(np.array([[0, 1], [3, 4]]))
    assert res.to_sets() == {frozenset({0, 1}), frozenset({2}), frozenset({3, 4})}
    assert maximal_cliques(np.array([[0, 1], [3, 4]]), min_size=2).to_sets() == {
        frozenset({0, 1}), frozenset({3, 4})}


def test_progress_callback():
    seen = []
    maximal_cliques(nx.karate_club_graph(), progress=seen.append)
    assert sum(seen) == 34


@settings(max_examples=120)
@given(gnp_graphs(max_n=16), st.integers(1, 5))
def test_count_cliques_brute_force(G, k):
    assert count_cliques(G, min_size=k) == brute_force_count(G, k)


def test_count_cliques_closed_forms():
    for n in range(0, 9):
        assert count_cliques(nx.complete_graph(n)) == 2 ** n - 1
        assert count_cliques(nx.complete_graph(n), min_size=2) == 2 ** n - 1 - n
    G = nx.gnp_random_graph(70, 0.6, seed=3)  # multi-word later-neighbourhoods
    assert count_cliques(G, min_size=3) == brute_force_count(G, 3)


def test_count_cliques_cap():
    G = nx.complete_graph(20)  # 2**20 - 1 cliques
    with pytest.raises(CliqueCountLimitError, match="max_count=1000"):
        count_cliques(G, max_count=1000)
    with pytest.raises(ValueError):  # CliqueCountLimitError is a ValueError (clean CLI error)
        count_cliques(G, max_count=0)
    assert count_cliques(nx.complete_graph(10), max_count=1023) == 1023


@pytest.mark.parametrize("func", [maximal_cliques, count_maximal_cliques, count_cliques])
def test_bad_parameters(func):
    G = nx.path_graph(3)
    with pytest.raises(ValueError, match="min_size"):
        func(G, min_size=0)
    with pytest.raises(TypeError, match="min_size"):
        func(G, min_size="2")


def test_bad_backend_and_gpu_without_device():
    from trustlab._backend import GPUUnavailableError, gpu_available

    with pytest.raises(ValueError, match="backend"):
        maximal_cliques(nx.path_graph(3), backend="tpu")
    if not gpu_available("numba-cuda"):
        with pytest.raises(GPUUnavailableError):
            maximal_cliques(nx.path_graph(3), backend="gpu")


def test_parallel_matches_single_thread():
    import numba

    G = nx.gnp_random_graph(400, 0.08, seed=5)
    ref = nx_sets(G)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = maximal_cliques(G)
        c1 = count_maximal_cliques(G)
    finally:
        numba.set_num_threads(old)
    many = maximal_cliques(G)
    assert one.to_sets() == many.to_sets() == ref
    assert c1 == count_maximal_cliques(G) == len(ref)


def test_brute_force_helper_is_sane():
    # guard the oracle itself on a graph counted by hand: triangle + pendant edge
    G = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3)])
    assert brute_force_count(G) == 4 + 4 + 1
    assert sum(1 for r in range(1, 5) for c in itertools.combinations(G, r)
               if all(G.has_edge(a, b) for a, b in itertools.combinations(c, 2))) == 9


def test_dense_wide_random_graph():
    G = nx.gnp_random_graph(130, 0.5, seed=7)  # degrees ~65: two-word bitsets, many cliques
    res = maximal_cliques(G)
    assert res.to_sets() == nx_sets(G)
    assert count_maximal_cliques(G) == len(res)
