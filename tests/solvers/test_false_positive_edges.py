"""xER §6.2: the false-positive-edge diagnostic, against a brute-force count on networkx graphs."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from trustlab.solvers import false_positive_edges, partition


def _brute(G, result, gold_map):
    lab = dict(zip(result.nodes, result.labels.tolist()))
    g = {v: gold_map.get(v, ("alone", v)) for v in G.nodes}
    fp, tp, avoided = [], 0, []
    for u, v in itertools.combinations(G.nodes, 2):
        same_sol, same_gold = lab[u] == lab[v], g[u] == g[v]
        w = G[u][v]["weight"] if G.has_edge(u, v) else None
        if same_sol and same_gold:
            tp += 1
        elif same_sol:
            fp.append((frozenset((u, v)), w))
        elif not same_gold and w is not None:
            avoided.append((frozenset((u, v)), w))
    return fp, tp, avoided


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    n = 14
    gold_of = rng.integers(0, 5, n)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    for u, v in itertools.combinations(range(n), 2):
        if rng.random() < 0.6:
            mu = 0.5 if gold_of[u] == gold_of[v] else -0.5
            G.add_edge(u, v, weight=float(np.round(rng.normal(mu, 0.7), 3)))
    res = partition(G, method="cpp")
    gold_map = {v: int(gold_of[v]) for v in range(n) if v != 0}   # node 0: absent, a gold singleton
    fpe = false_positive_edges(res, gold_map)
    fp, tp, avoided = _brute(G, res, gold_map)
    assert {(frozenset((e["u"], e["v"])), e["weight"]) for e in fpe.edges} == set(fp)
    assert fpe.n_false_positive == len(fp) and fpe.n_true_positive == tp
    assert {(frozenset((e["u"], e["v"])), e["weight"]) for e in fpe.avoided} == set(avoided)
    assert fpe.precision == pytest.approx(tp / (tp + len(fp)) if tp + len(fp) else 1.0)
    ws = [e["weight"] for e in fpe.edges if e["weight"] is not None]
    assert ws == sorted(ws, reverse=True)
    # every merge's cross weight is the sum of its false-positive edge weights
    for mg in fpe.merges:
        assert mg["cross_weight"] == pytest.approx(sum(e["weight"] or 0.0 for e in fpe.edges
                                                       if e["cluster"] == mg["cluster"]))
    # gold as a list of clusters gives the same answer
    clusters = [[v for v in range(1, n) if gold_of[v] == k] for k in range(5)]
    again = false_positive_edges(res, [c for c in clusters if c])
    assert again.n_false_positive == fpe.n_false_positive and len(again.avoided) == len(fpe.avoided)


def test_paper_table8_node_25_is_avoided():
    G = nx.Graph()
    G.add_weighted_edges_from([(7, 12, 0.456), (7, 20, 0.999), (12, 20, 0.085),
                               (7, 25, -0.076), (12, 25, -0.156), (20, 25, -0.253)])
    fpe = false_positive_edges(partition(G, method="cpp"), {7: 0, 12: 0, 20: 0, 25: 1})
    assert fpe.edges == [] and fpe.precision == 1.0 and fpe.n_true_positive == 3
    assert sorted(e["u"] for e in fpe.avoided) == [7, 12, 20]
    assert sum(e["weight"] for e in fpe.avoided) == pytest.approx(-0.485)


def test_bad_input():
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, 1.0)])
    res = partition(G, method="cpp")
    with pytest.raises(ValueError, match="disjoint"):
        false_positive_edges(res, [[0, 1], [1]])
    with pytest.raises(TypeError, match="PartitionResult"):
        false_positive_edges(object(), {0: 0})
