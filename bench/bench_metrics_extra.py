"""Graph, tf-idf and submodular-pick metrics against the peer a user would reach for.

Run:  .venv/bin/python -m pytest bench/bench_metrics_extra.py --benchmark-enable -p no:cacheprovider

* weighted clustering coefficient (Onnela) vs ``networkx.average_clustering(G, weight=...)``,
  and the Barrat variant vs igraph's ``transitivity_local_undirected(weights=...)``;
* tf-idf / target Pearson over all GECO words vs ``scipy.stats.pearsonr`` per dense column;
* greedy submodular pick vs a naive greedy loop.
Each benchmark checks that its result equals the peer's. Inputs are seeded synthetic data or
data bundled with trustlab.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from trustlab.metrics import load_geco, submodular_pick, tfidf_target_correlation, weighted_clustering_coefficient

ROUNDS = dict(rounds=3, iterations=1, warmup_rounds=1)


@pytest.fixture(scope="module")
def er_graph():
    rng = np.random.default_rng(0)
    G = nx.gnp_random_graph(2000, 0.01, seed=0)
    for u, v in G.edges():
        G[u][v]["weight"] = float(rng.uniform(0.05, 1.0))
    return G


def test_cc_onnela_trustlab(benchmark, er_graph):
    benchmark.group = "weighted CC Onnela, G(2000, 0.01)"
    r = benchmark.pedantic(weighted_clustering_coefficient, args=(er_graph,), **ROUNDS)
    assert r.value == pytest.approx(nx.average_clustering(er_graph, weight="weight"))


def test_cc_onnela_networkx(benchmark, er_graph):
    benchmark.group = "weighted CC Onnela, G(2000, 0.01)"
    benchmark.pedantic(nx.average_clustering, args=(er_graph,), kwargs={"weight": "weight"}, **ROUNDS)


def test_cc_barrat_trustlab(benchmark, er_graph):
    ig = pytest.importorskip("igraph")
    E = np.array(list(er_graph.edges()))
    w = [er_graph[u][v]["weight"] for u, v in E]
    benchmark.group = "weighted CC Barrat, G(2000, 0.01)"
    r = benchmark.pedantic(weighted_clustering_coefficient, args=(E, w), kwargs={"variant": "barrat", "n_nodes": 2000},
                           **ROUNDS)
    g = ig.Graph(n=2000, edges=E.tolist())
    np.testing.assert_allclose(r.per_node, g.transitivity_local_undirected(weights=w, mode="zero"), atol=1e-12)


def test_cc_barrat_igraph(benchmark, er_graph):
    ig = pytest.importorskip("igraph")
    E = np.array(list(er_graph.edges()))
    w = [er_graph[u][v]["weight"] for u, v in E]
    g = ig.Graph(n=2000, edges=E.tolist())
    benchmark.group = "weighted CC Barrat, G(2000, 0.01)"
    benchmark.pedantic(g.transitivity_local_undirected, kwargs={"weights": w, "mode": "zero"}, **ROUNDS)


@pytest.fixture(scope="module")
def geco():
    return load_geco("all", "train")


def test_tfidf_corr_trustlab(benchmark, geco):
    benchmark.group = "tf-idf/target Pearson, GECO all train"
    df = benchmark.pedantic(tfidf_target_correlation, args=(geco.sentences, geco.targets), **ROUNDS)
    assert df.word.iloc[0] == "he"


def _tfidf_corr_scipy(sentences, targets):
    from scipy.stats import pearsonr
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    cv = CountVectorizer(analyzer=lambda t: [w.lower() for w in t])
    X = TfidfTransformer().fit_transform(cv.fit_transform(sentences)).toarray()
    return {w: pearsonr(X[:, j], targets)[0] for w, j in cv.vocabulary_.items() if X[:, j].std() > 0}


def test_tfidf_corr_scipy(benchmark, geco):
    benchmark.group = "tf-idf/target Pearson, GECO all train"
    ref = benchmark.pedantic(_tfidf_corr_scipy, args=(geco.sentences, geco.targets), rounds=1, iterations=1)
    df = tfidf_target_correlation(geco.sentences, geco.targets).dropna().set_index("word")
    np.testing.assert_allclose(df.r.loc[list(ref)].to_numpy(), list(ref.values()), atol=1e-9)


@pytest.fixture(scope="module")
def expl():
    rng = np.random.default_rng(1)
    return rng.random((2000, 500)) * (rng.random((2000, 500)) < 0.02)


def _naive_pick(W, B):
    A = np.abs(W)
    imp = np.sqrt(A.sum(0))
    S = []
    for _ in range(B):
        best, gain = -1, -1.0
        for i in range(A.shape[0]):
            if i in S:
                continue
            c = imp[(A[S + [i]] > 0).any(0)].sum()
            if c > gain:
                best, gain = i, c
        S.append(best)
    return S


def test_pick_trustlab(benchmark, expl):
    benchmark.group = "submodular pick, 2000 x 500, B = 10"
    r = benchmark.pedantic(submodular_pick, args=(expl, 10), **ROUNDS)
    assert r.indices == _naive_pick(expl, 10)


def test_pick_naive(benchmark, expl):
    benchmark.group = "submodular pick, 2000 x 500, B = 10"
    benchmark.pedantic(_naive_pick, args=(expl, 10), rounds=1, iterations=1)
