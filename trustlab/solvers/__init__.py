"""Clique partitioning solvers (Phase 2 of xER): exact CPP with certificates, xER's
QSP/LSP, the SPP baseline, a Numba heuristic, and explanations.

>>> from trustlab.solvers import partition
>>> import numpy as np
>>> W = np.array([[0, 2, -1], [2, 0, -1], [-1, -1, 0]])
>>> r = partition(W)
>>> r.clusters, r.objective, r.status
([[0, 1], [2]], 2.0, 'optimal')
"""
from trustlab.solvers.api import METHODS, PartitionResult, partition
from trustlab.solvers.explain import Explanation, FalsePositiveEdges, explain, false_positive_edges
from trustlab.solvers.io import read_cplib, read_cplib_optimum, read_edgelist

__all__ = ["partition", "PartitionResult", "explain", "Explanation", "false_positive_edges", "FalsePositiveEdges",
           "METHODS", "read_cplib", "read_cplib_optimum", "read_edgelist"]
