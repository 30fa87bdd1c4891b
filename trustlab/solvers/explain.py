"""Explanations of a clique partition (xER section 6.2, computed)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._validation import validate_params

__all__ = ["explain", "Explanation", "false_positive_edges", "FalsePositiveEdges"]


@dataclass
class Explanation:
    """What keeps a node (or a cluster) where it is, and the optimality certificate.

    For a node: ``contribution`` is the weight between the node and the rest of its
    cluster; ``alternatives`` lists, for every other cluster the node may join (all
    pairs allowed) and for "alone", the change of the objective if the node moved
    there (``delta``); ``best_alternative`` is the least costly one. For a cluster:
    ``contribution`` is its internal weight, ``members`` the per-member contributions and
    ``alternatives`` the outside nodes/clusters with the objective change of adding or
    merging them. ``bound``/``gap``/``status`` are the certificate of the result: when
    ``status == "optimal"`` no move (of any size) can improve the objective.

    Attributes
    ----------
    kind : {"node", "cluster"}
        What is explained.
    target : node label or list
        The node (or the cluster's members).
    cluster : list
        The members of the cluster the target is in.
    contribution : float
        Weight between the node and the rest of its cluster (or the cluster's internal weight).
    weights : dict
        Weight from the target to every other member of its cluster.
    alternatives : list of dict
        Every move considered, with the objective change ``delta``.
    best_alternative : dict or None
        The least costly alternative.
    objective, bound, gap : float
        The partition's certificate (see :class:`~trustlab.solvers.api.PartitionResult`).
    status : str
        ``"optimal"`` when no move of any size can improve the objective.
    members : dict
        For a cluster: each member's contribution.

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.solvers import explain, partition
    >>> r = partition(np.array([[0, 2, -1], [2, 0, -1], [-1, -1, 0]]), random_state=0)
    >>> e = explain(r, 0)
    >>> e.cluster, e.contribution, e.status
    ([0, 1], 2.0, 'optimal')
    """

    kind: str
    target: Any
    cluster: list
    contribution: float
    weights: dict
    alternatives: list = field(default_factory=list)
    best_alternative: dict | None = None
    objective: float = 0.0
    bound: float = 0.0
    gap: float = 0.0
    status: str = ""
    members: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def __str__(self) -> str:
        lines = []
        if self.kind == "node":
            lines.append(f"node {self.target!r} is in cluster {self.cluster} and contributes "
                         f"{self.contribution:+.6g} to it")
            for k, v in self.weights.items():
                lines.append(f"  w({self.target!r}, {k!r}) = {v:+.6g}")
            if self.best_alternative is not None:
                b = self.best_alternative
                lines.append(f"best alternative: {b['move']} {b['cluster']} changes the objective by "
                             f"{b['delta']:+.6g}")
        else:
            lines.append(f"cluster {self.cluster} has internal weight {self.contribution:+.6g}")
            for k, v in self.members.items():
                lines.append(f"  member {k!r} contributes {v:+.6g}")
            if self.best_alternative is not None:
                b = self.best_alternative
                lines.append(f"best alternative: {b['move']} {b['target']!r} changes the objective by "
                             f"{b['delta']:+.6g}")
        lines.append(f"certificate: objective {self.objective:.6g}, bound {self.bound:.6g}, gap "
                     f"{self.gap:.3g} ({self.status})")
        return "\n".join(lines)


def _row(P, i: int) -> dict[int, float]:
    idx, w = P.neighbors(i)
    return dict(zip(idx.tolist(), w.tolist()))


def explain(result, node: Any = None, *, cluster: Any = None) -> Explanation:
    """Explain a node's or a cluster's place in a :class:`PartitionResult`.

    Parameters
    ----------
    result : PartitionResult
    node : node label, optional
        Explain this node (a label as in ``result.nodes``).
    cluster : int or collection of node labels, optional
        Explain this cluster: its index in ``result.clusters`` or its members.

    Returns
    -------
    Explanation

    Raises
    ------
    ValueError
        Neither or both of ``node`` and ``cluster`` given, an unknown node, or a node set
        that is not a cluster of the result.

    Examples
    --------
    >>> import networkx as nx
    >>> from trustlab.solvers import partition
    >>> G = nx.Graph()
    >>> G.add_weighted_edges_from([(7, 12, 0.456), (7, 20, 0.999), (12, 20, 0.085),
    ...                            (7, 25, -0.076), (12, 25, -0.156), (20, 25, -0.253)])
    >>> e = explain(partition(G, method="cpp"), 25)
    >>> e.best_alternative["cluster"], round(e.best_alternative["delta"], 3)
    ([7, 12, 20], -0.485)
    """
    P = getattr(result, "_problem", None)
    if P is None:
        raise TypeError(f"explain expects a PartitionResult from trustlab.partition; got {type(result).__name__}.")
    if (node is None) == (cluster is None):
        raise ValueError("explain needs exactly one of node=... or cluster=....")
    pos = {v: i for i, v in enumerate(P.nodes)}
    labels = np.asarray(result.labels)
    cert = dict(objective=result.objective, bound=result.bound, gap=result.gap, status=result.status)
    if node is not None:
        if node not in pos:
            raise ValueError(f"node {node!r} is not in the partition (it has {len(P.nodes)} nodes).")
        i = pos[node]
        row = _row(P, i)
        own = labels[i]
        mates = [j for j in np.flatnonzero(labels == own).tolist() if j != i]
        weights = {P.nodes[j]: row[j] for j in mates}
        contrib = float(sum(weights.values()))
        alts = []
        if mates:
            alts.append({"move": "leave to be alone", "cluster": [node], "delta": -contrib})
        cand = {labels[j] for j in row} - {own}
        for c in sorted(cand):
            mem = np.flatnonzero(labels == c).tolist()
            if all(j in row for j in mem):  # every pair allowed
                gain = float(sum(row[j] for j in mem))
                alts.append({"move": "join", "cluster": sorted([P.nodes[j] for j in mem], key=_key),
                             "delta": gain - contrib, "weights": {P.nodes[j]: row[j] for j in mem}})
        alts.sort(key=lambda a: -a["delta"])
        return Explanation(kind="node", target=node, cluster=sorted([P.nodes[j] for j in mates + [i]], key=_key),
                           contribution=contrib, weights=weights, alternatives=alts,
                           best_alternative=alts[0] if alts else None, **cert)
    # cluster
    if isinstance(cluster, (int, np.integer)) and not isinstance(cluster, bool):
        if not 0 <= int(cluster) < len(result.clusters):
            raise ValueError(f"cluster index {cluster} out of range [0, {len(result.clusters)}).")
        members = [pos[v] for v in result.clusters[int(cluster)]]
    else:
        try:
            members = [pos[v] for v in cluster]
        except KeyError as exc:
            raise ValueError(f"node {exc.args[0]!r} is not in the partition.") from None
        except TypeError:
            raise ValueError("cluster must be a cluster index or a collection of node labels.") from None
        if not members or len({labels[j] for j in members}) != 1 or \
                int(np.sum(labels == labels[members[0]])) != len(set(members)):
            raise ValueError(f"{sorted(cluster, key=_key)} is not a cluster of this partition.")
    c = labels[members[0]]
    mem = np.flatnonzero(labels == c).tolist()
    rows = {j: _row(P, j) for j in mem}
    per = {P.nodes[j]: float(sum(rows[j][k] for k in mem if k != j)) for j in mem}
    internal = float(sum(per.values()) / 2)
    alts = []
    for j in mem:
        if len(mem) > 1:
            alts.append({"move": "remove", "target": P.nodes[j], "delta": -per[P.nodes[j]]})
    outside = set().union(*[set(r) for r in rows.values()]) - set(mem)
    other_clusters = {labels[v] for v in outside}
    for oc in sorted(other_clusters):
        omem = np.flatnonzero(labels == oc).tolist()
        if all(v in rows[j] for j in mem for v in omem):
            d = float(sum(rows[j][v] for j in mem for v in omem))
            alts.append({"move": "merge with", "target": sorted([P.nodes[v] for v in omem], key=_key), "delta": d})
    for v in sorted(outside):
        if all(v in rows[j] for j in mem):
            vrow = _row(P, v)
            vown = [k for k in np.flatnonzero(labels == labels[v]).tolist() if k != v]
            d = float(sum(rows[j][v] for j in mem)) - float(sum(vrow[k] for k in vown))
            alts.append({"move": "add", "target": P.nodes[v], "delta": d})
    alts.sort(key=lambda a: -a["delta"])
    return Explanation(kind="cluster", target=sorted([P.nodes[j] for j in mem], key=_key),
                       cluster=sorted([P.nodes[j] for j in mem], key=_key), contribution=internal,
                       weights={}, alternatives=alts, best_alternative=alts[0] if alts else None,
                       members=per, **cert)


def _key(v):
    return (0, v, "") if isinstance(v, (int, float, np.integer, np.floating)) else (1, 0, str(v))


@dataclass
class FalsePositiveEdges:
    """Solution edges that contradict the gold clusters (xER §6.2, see :func:`false_positive_edges`).

    Attributes
    ----------
    edges : list of dict
        One per false-positive pair (together in the solution, apart in gold): ``u``, ``v``,
        ``weight`` (None when the pair has no edge), ``cluster`` (solution cluster index),
        ``gold_u``, ``gold_v``; sorted by weight, largest first (the most confident errors).
    merges : list of dict
        Per solution cluster that joins several gold clusters: ``cluster`` (index),
        ``gold`` (the gold cluster ids it joins, with their members), ``cross_weight``
        (the total weight between the gold parts: a positive value is why the merge pays).
    avoided : list of dict
        Edges between different gold clusters that the graph offered (they survived
        blocking) but the solution left out, sorted by weight, largest first: the
        errors the objective prevented (node 25 of the paper's Table 8).
    n_true_positive, n_false_positive : int
        Co-clustered pairs that agree / disagree with gold.
    precision : float
        Pairwise precision n_tp / (n_tp + n_fp) (1.0 when no pair is co-clustered).

    Examples
    --------
    >>> import networkx as nx
    >>> from trustlab.solvers import partition
    >>> G = nx.Graph()
    >>> G.add_weighted_edges_from([(1, 2, 1.0), (2, 3, 0.5), (1, 3, 0.2)])
    >>> fp = false_positive_edges(partition(G, method="cpp"), [[1, 2], [3]])
    >>> isinstance(fp, FalsePositiveEdges), fp.n_true_positive, fp.n_false_positive, round(fp.precision, 3)
    (True, 1, 2, 0.333)
    >>> [(e["u"], e["v"], e["weight"]) for e in fp.edges], fp.merges[0]["cross_weight"]
    ([(2, 3, 0.5), (1, 3, 0.2)], 0.7)
    """

    edges: list
    merges: list
    avoided: list
    n_true_positive: int
    n_false_positive: int
    precision: float

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@validate_params({"gold": ["mapping", "array-like"]})
def false_positive_edges(result, gold) -> FalsePositiveEdges:
    """The false-positive-edge diagnostic of xER §6.2: which solution pairs contradict gold, and why.

    A pair of nodes placed in one cluster by the solution but in different gold clusters
    is a false positive. For each, this lists its edge weight; for each solution cluster
    that merges gold clusters, the total weight across the gold parts (positive: the
    objective gains from the merge, so the error comes from the scores, not the solver);
    and the cross-gold edges the solution *avoided* although blocking kept them (the
    paper's example: node 25 is linked to the gold triangle (7, 12, 20) but its total
    weight to it is negative, so the optimum leaves it out and precision is kept).

    Parameters
    ----------
    result : PartitionResult
        From :func:`trustlab.partition`.
    gold : mapping or sequence of collections
        The gold clusters: ``{node: cluster_id}`` or a list of clusters (node collections).
        Nodes of the result absent from gold are gold singletons (as in xER's metrics).

    Returns
    -------
    FalsePositiveEdges

    Raises
    ------
    TypeError
        ``result`` is not a PartitionResult.
    ValueError
        A node appears in two gold clusters.

    Examples
    --------
    >>> import networkx as nx
    >>> from trustlab.solvers import partition
    >>> G = nx.Graph()
    >>> G.add_weighted_edges_from([(7, 12, 0.456), (7, 20, 0.999), (12, 20, 0.085),
    ...                            (7, 25, -0.076), (12, 25, -0.156), (20, 25, -0.253),
    ...                            (25, 30, 0.4), (30, 7, -0.9)])
    >>> fp = false_positive_edges(partition(G, method="cpp"), [[7, 12, 20], [25], [30]])
    >>> [(e["u"], e["v"], e["weight"]) for e in fp.edges], round(fp.precision, 3)
    ([(25, 30, 0.4)], 0.75)
    >>> [(a["u"], a["v"]) for a in fp.avoided][:2]
    [(7, 25), (12, 25)]
    """
    P = getattr(result, "_problem", None)
    if P is None:
        raise TypeError("false_positive_edges expects a PartitionResult from trustlab.partition; "
                        f"got {type(result).__name__}.")
    if isinstance(gold, dict):
        gmap = dict(gold)
    else:
        try:
            clusters = [list(c) for c in gold]
        except TypeError:
            raise ValueError("gold must be a mapping node -> cluster id or a list of clusters (node "
                             f"collections); got {type(gold).__name__}.") from None
        gmap = {}
        for k, c in enumerate(clusters):
            for v in c:
                if v in gmap:
                    raise ValueError(f"node {v!r} is in gold clusters {gmap[v]} and {k}; gold clusters must "
                                     "be disjoint.")
                gmap[v] = k
    nodes = P.nodes
    # a unique gold id per node; absent nodes are singletons
    gid = [("gold", gmap[v]) if v in gmap else ("alone", i) for i, v in enumerate(nodes)]
    show = [g[1] if g[0] == "gold" else None for g in gid]
    labels = np.asarray(result.labels)
    edges, merges = [], []
    tp = fp = 0
    for c in np.unique(labels).tolist():
        mem = np.flatnonzero(labels == c).tolist()
        if len(mem) < 2:
            continue
        rows = {j: _row(P, j) for j in mem}
        parts: dict = {}
        for j in mem:
            parts.setdefault(gid[j], []).append(j)
        for a_i, a in enumerate(mem):
            for b in mem[a_i + 1:]:
                if gid[a] == gid[b]:
                    tp += 1
                    continue
                fp += 1
                u, v = sorted((a, b), key=lambda k: _key(nodes[k]))
                edges.append({"u": nodes[u], "v": nodes[v], "weight": rows[a].get(b), "cluster": int(c),
                              "gold_u": show[u], "gold_v": show[v]})
        if len(parts) > 1:
            keys = list(parts)
            cross = sum(rows[a].get(b, 0.0) for x in range(len(keys)) for y in range(x + 1, len(keys))
                        for a in parts[keys[x]] for b in parts[keys[y]])
            merges.append({"cluster": int(c),
                           "gold": [{"gold": show[parts[k][0]],
                                     "members": sorted([nodes[j] for j in parts[k]], key=_key)} for k in keys],
                           "cross_weight": float(cross)})
    avoided = []
    for i in range(len(nodes)):
        idx, w = P.neighbors(i)
        for j, wt in zip(idx.tolist(), w.tolist()):
            if j > i and gid[i] != gid[j] and labels[i] != labels[j]:
                u, v = sorted((i, j), key=lambda k: _key(nodes[k]))
                avoided.append({"u": nodes[u], "v": nodes[v], "weight": float(wt), "gold_u": show[u],
                                "gold_v": show[v]})
    edges.sort(key=lambda e: (-(e["weight"] if e["weight"] is not None else -np.inf), _key(e["u"]), _key(e["v"])))
    avoided.sort(key=lambda e: (-e["weight"], _key(e["u"]), _key(e["v"])))
    return FalsePositiveEdges(edges=edges, merges=merges, avoided=avoided, n_true_positive=tp,
                              n_false_positive=fp, precision=tp / (tp + fp) if tp + fp else 1.0)
