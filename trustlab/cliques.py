"""Maximal clique enumeration (Phase 1 of xER).

PLACEHOLDER: networkx-backed reference implementation with the final API contract.
The Numba/CUDA engine replaces the internals (same signature, same result type).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import networkx as nx
import numpy as np


@dataclass
class CliqueResult:
    """Maximal cliques in CSR form.

    ``indices[indptr[k]:indptr[k+1]]`` are the positions (into ``nodes``) of the
    members of clique ``k``; ``nodes`` holds the original node labels.
    """

    indptr: np.ndarray  # int64, len n_cliques + 1
    indices: np.ndarray  # int32 positions into `nodes`
    nodes: np.ndarray  # original labels (object or int array)

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def __iter__(self) -> Iterator[list]:
        for k in range(len(self)):
            yield [self.nodes[i] for i in self.indices[self.indptr[k]:self.indptr[k + 1]]]

    def sizes(self) -> np.ndarray:
        return np.diff(self.indptr)


def maximal_cliques(graph: Any, *, min_size: int = 1, backend: str = "auto") -> CliqueResult:
    G = graph if isinstance(graph, nx.Graph) else nx.Graph(list(map(tuple, np.asarray(graph))))
    nodes = np.array(list(G.nodes()), dtype=object)
    pos = {v: i for i, v in enumerate(nodes)}
    indptr, indices = [0], []
    for c in nx.find_cliques(G):
        if len(c) >= min_size:
            indices.extend(sorted(pos[v] for v in c))
            indptr.append(len(indices))
    return CliqueResult(np.asarray(indptr, np.int64), np.asarray(indices, np.int32), nodes)
