"""Explanations of a clique partition (xER section 6.2, computed)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["explain", "Explanation"]


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
