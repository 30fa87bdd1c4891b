"""The one-word sub-problem build of the CPU clique kernel (universes of at most 64 vertices).

:func:`trustlab.kernels.cliques_cpu.enumerate_chunk` builds a top-level sub-problem whose
forward row ``P`` has at most 64 vertices as one uint64 row per vertex; when ``P`` plus
the blocking earlier neighbours ``X'`` pass 64 vertices it starts over with the general
multi-word build. Both must give the arrays of the pure-Python twin (same cliques, same
order) and networkx's cliques, on graphs built so that a vertex's universe is exactly
63, 64 or 65 vertices (the switch-over) and on random graphs of the benchmark families.
"""
import networkx as nx
import numpy as np
import pytest

from trustlab._cliques_py import maximal_cliques_py
from trustlab.cliques import _enumerate_cpu, count_maximal_cliques
from trustlab.graph import as_csr_graph
from trustlab.kernels.cliques_cpu import _forward_counted, degeneracy_order, forward_adjacency


def _universe_sizes(g):
    """``|P| + |X'|`` of every vertex's top-level sub-problem, by sets."""
    ip, ix = g.indptr, g.indices
    _, rank, _ = degeneracy_order(ip, ix)
    fp, fx = forward_adjacency(ip, ix, rank)
    out = np.zeros(g.n_nodes, np.int64)
    for v in range(g.n_nodes):
        P = set(fx[fp[v]:fp[v + 1]].tolist())
        if not P:
            continue
        xs = sum(1 for x in ix[ip[v]:ip[v + 1]].tolist()
                 if rank[x] < rank[v] and P.intersection(fx[fp[x]:fp[x + 1]].tolist()))
        out[v] = len(P) + xs
    return out


def _hub_graph(k: int, n_x: int, seed: int) -> nx.Graph:
    """Vertex 0 with ``k`` later neighbours (a random graph among them, each also joined
    to every vertex of a ``k + 2``-clique of anchors so that vertex 0 is peeled before
    them) and ``n_x`` earlier neighbours (degree 2: vertex 0 and one of the ``k``), so
    that vertex 0's universe has exactly ``k + n_x`` vertices."""
    rng = np.random.default_rng(seed)
    G = nx.Graph()
    N = list(range(1, k + 1))
    G.add_edges_from((0, u) for u in N)
    G.add_edges_from((N[a], N[b]) for a, b in nx.gnp_random_graph(k, 0.2, seed=seed).edges())
    anchors = list(range(k + 1, 2 * k + 3))
    G.add_edges_from((a, b) for i, a in enumerate(anchors) for b in anchors[i + 1:])
    G.add_edges_from((u, a) for u in N for a in anchors)
    for j in range(n_x):
        x = 2 * k + 3 + j
        G.add_edges_from([(0, x), (x, int(rng.choice(N)))])
    return G


def _same_as_twin_and_networkx(G, min_sizes=(1, 2, 3)):
    g = as_csr_graph(G)
    for k in min_sizes:
        ip, ix = _enumerate_cpu(g, k)  # the kernels (never the twin)
        py = maximal_cliques_py(g.indptr, g.indices, k, budget=10 ** 9)
        assert np.array_equal(py[0], ip) and np.array_equal(py[1], ix)
        assert count_maximal_cliques(g, min_size=k) == ip.shape[0] - 1
        if k == 1:
            got = [frozenset(g.nodes[ix[ip[c]:ip[c + 1]]].tolist()) for c in range(ip.shape[0] - 1)]
            assert len(set(got)) == len(got)
            assert set(got) == {frozenset(c) for c in nx.find_cliques(G)}


@pytest.mark.parametrize("k, n_x", [(63, 0), (64, 0), (60, 3), (60, 4), (60, 5), (63, 1), (63, 2), (64, 1),
                                    (65, 0), (62, 9)])
def test_universe_at_the_word_boundary(k, n_x):
    G = _hub_graph(k, n_x, seed=k * 100 + n_x)
    g = as_csr_graph(G)
    assert _universe_sizes(g)[0] == k + n_x  # the construction hits the size it is meant to
    _same_as_twin_and_networkx(G)


def _family_graphs():
    rng = np.random.default_rng(30)
    for s in range(3):
        yield nx.gnp_random_graph(int(rng.integers(20, 200)), float(rng.uniform(0.02, 0.25)), seed=s)
        yield nx.barabasi_albert_graph(int(rng.integers(80, 400)), int(rng.integers(2, 30)), seed=s)
        yield nx.powerlaw_cluster_graph(int(rng.integers(80, 400)), int(rng.integers(2, 30)), 0.5, seed=s)
        yield nx.random_geometric_graph(int(rng.integers(100, 800)), float(rng.uniform(0.03, 0.15)), seed=s)
        yield nx.stochastic_block_model([int(rng.integers(10, 60))] * 5,
                                        np.where(np.eye(5, dtype=bool), 0.5, 0.02).tolist(), seed=s)


def test_random_families_match_twin_and_networkx():
    sizes = []
    for G in _family_graphs():
        _same_as_twin_and_networkx(G)
        sizes.append(_universe_sizes(as_csr_graph(G)).max())
    assert min(sizes) <= 64 < max(sizes)  # both builds ran


def test_forward_rows_of_an_asymmetric_adjacency():
    """The one-pass forward rows rely on a symmetric input having nnz / 2 forward
    entries; any other adjacency takes the counted path and gets the same rows."""
    rng = np.random.default_rng(5)
    for t in range(60):
        n = int(rng.integers(1, 25))
        A = rng.random((n, n)) < rng.uniform(0.05, 0.9)
        np.fill_diagonal(A, False)
        if t % 2:
            A |= A.T
        ip = np.concatenate([[0], np.cumsum(A.sum(1))]).astype(np.int32)
        ix = np.nonzero(A)[1].astype(np.int32)
        rank = rng.permutation(n).astype(np.int32)
        fp, fx = forward_adjacency(ip, ix, rank)
        cp, cx = _forward_counted(ip, ix, rank)
        rows = [[u for u in ix[ip[v]:ip[v + 1]] if rank[u] > rank[v]] for v in range(n)]
        assert fp.tolist() == cp.tolist() == np.concatenate([[0], np.cumsum([len(r) for r in rows])]).tolist()
        assert fx.tolist() == cx.tolist() == [u for r in rows for u in r]
