"""P1.1, P1.5, P1.6: pruned dependency trees (vs networkx), negative pairs, rule subsets."""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest

from trustlab.metrics.relation_rules import negative_pairs, pruned_dependency_tree, top_rules


def _random_tree(n, rng):
    order = rng.permutation(n)
    heads = [0] * n
    for pos in range(1, n):
        heads[order[pos]] = int(order[rng.integers(0, pos)]) + 1     # 1-based head among earlier nodes
    return heads


def _reference(heads, subj, obj, k):
    """networkx: LCA of all span tokens, tree paths to it, downward distances from the path."""
    G = nx.DiGraph()
    n = len(heads)
    G.add_nodes_from(range(n))
    G.add_edges_from((h - 1, i) for i, h in enumerate(heads) if h > 0)
    toks = list(range(subj[0], subj[1] + 1)) + list(range(obj[0], obj[1] + 1))
    lca = toks[0]
    for t in toks[1:]:
        lca = nx.lowest_common_ancestor(G, lca, t)
    path = set()
    for t in toks:
        path.update(nx.shortest_path(G, lca, t))
    dist = {}
    for i in range(n):
        d = [nx.shortest_path_length(G, p, i) for p in path if nx.has_path(G, p, i)]
        dist[i] = min(d) if d else -1
    keep = sorted(i for i in range(n) if 0 <= dist[i] <= k)
    return sorted(path), keep, lca


@pytest.mark.parametrize("seed", range(6))
def test_pruned_tree_matches_networkx(seed):
    rng = np.random.default_rng(seed)
    n = 14
    heads = _random_tree(n, rng)
    for _ in range(5):
        a, b = sorted(rng.choice(n, 2, replace=False))
        subj = (int(a), int(a) + int(rng.integers(0, 2)) if a + 1 < b else int(a))
        obj = (int(b), int(b))
        for k in (0, 1, 2):
            t = pruned_dependency_tree(heads, subj, obj, k=k)
            path, keep, lca = _reference(heads, subj, obj, k)
            assert (t.path, t.nodes, t.lca) == (path, keep, lca)
            A = t.adjacency
            assert (A == A.T).all() and A.sum() == 2 * (len(keep) - 1)   # a tree on the kept nodes
            assert nx.is_tree(nx.from_numpy_array(A[np.ix_(keep, keep)]))


def test_pruned_tree_from_spacy_like_tokens():
    heads = [3, 3, 0, 5, 3, 5, 5, 3]
    toks = [SimpleNamespace(i=i) for i in range(8)]
    for t, h in zip(toks, heads):
        t.head = toks[h - 1] if h else t
    a = pruned_dependency_tree(heads, (0, 0), (6, 6))
    b = pruned_dependency_tree(toks, (0, 0), (6, 6))
    assert a.nodes == b.nodes and (a.adjacency == b.adjacency).all()
    assert a.path == [0, 2, 4, 6] and a.nodes == [0, 1, 2, 3, 4, 5, 6, 7]
    with pytest.raises(ValueError, match="outside"):
        pruned_dependency_tree(heads, (0, 0), (8, 8))


def test_negative_pairs_brute_force():
    ms = ["A", "B", "C", "D"]
    pos = [("A", "per:children", "B"), ("C", "org:founded_by", "D"), ("B", "per:siblings", "C")]
    got = negative_pairs(ms, pos, inverse={"per:parents": "per:children"}, symmetric=["per:siblings"])
    skip = {("A", "B"), ("B", "A"), ("C", "D"), ("B", "C"), ("C", "B")}     # D->C stays: no inverse
    assert got == [(a, "no_relation", b) for a, b in itertools.permutations(ms, 2) if (a, b) not in skip]
    with pytest.raises(ValueError, match="not in mentions"):
        negative_pairs(ms, [("A", "r", "Z")])


def test_top_rules():
    counts = {f"r{i}": c for i, c in enumerate([3, 9, 9, 1, 0, 4, 7, 2, 5, 6])}
    ranked = ["r1", "r2", "r6", "r9", "r8", "r5", "r0", "r7", "r3", "r4"]
    for pct, n in ((20, 2), (40, 4), (60, 6), (80, 8), (100, 10), (25, 3)):
        assert top_rules(counts, pct) == ranked[:n]
    assert top_rules(["x", "y", "y"], 50) == ["y"]
    with pytest.raises(ValueError, match="empty"):
        top_rules({}, 20)
