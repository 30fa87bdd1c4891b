"""Hypothesis strategies for random graphs (one place for every clique test)."""
from __future__ import annotations

import networkx as nx
from hypothesis import strategies as st


@st.composite
def gnp_graphs(draw, max_n: int = 40):
    n = draw(st.integers(0, max_n))
    p = draw(st.sampled_from([0.0, 0.05, 0.15, 0.3, 0.5, 0.7, 0.9, 1.0]))
    seed = draw(st.integers(0, 2**31 - 1))
    return nx.gnp_random_graph(n, p, seed=seed)


@st.composite
def special_graphs(draw):
    kind = draw(st.sampled_from(["empty", "single", "complete", "star", "path", "union", "edgeless",
                                 "turan", "moon_moser"]))
    k = draw(st.integers(1, 12))
    if kind == "empty":
        return nx.Graph()
    if kind == "single":
        return nx.empty_graph(1)
    if kind == "complete":
        return nx.complete_graph(k)
    if kind == "star":
        return nx.star_graph(k)
    if kind == "path":
        return nx.path_graph(k)
    if kind == "edgeless":
        return nx.empty_graph(k)
    if kind == "turan":  # complete multipartite: many maximal cliques
        parts = draw(st.lists(st.integers(1, 4), min_size=1, max_size=5))
        return nx.complete_multipartite_graph(*parts)
    if kind == "moon_moser":  # 3^(n/3) maximal cliques, the worst case
        return nx.complete_multipartite_graph(*([3] * draw(st.integers(1, 5))))
    # disjoint union of a few random pieces (includes isolated vertices)
    parts = draw(st.lists(gnp_graphs(max_n=12), min_size=1, max_size=4))
    return nx.disjoint_union_all(parts) if parts else nx.Graph()


@st.composite
def wide_graphs(draw):
    """Neighbourhoods wider than one 64-bit word (exercise the multi-word bitsets):
    a few large overlapping cliques plus sparse noise, so degrees exceed 64 while the
    number of maximal cliques stays small enough for networkx."""
    import random

    n = draw(st.integers(70, 140))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = random.Random(seed)
    G = nx.gnp_random_graph(n, draw(st.sampled_from([0.0, 0.01, 0.03])), seed=seed)
    for _ in range(draw(st.integers(1, 4))):
        members = rng.sample(range(n), rng.randint(40, min(n, 100)))
        G.add_edges_from((a, b) for i, a in enumerate(members) for b in members[i + 1:])
    return G


any_graph = st.one_of(gnp_graphs(), special_graphs())
