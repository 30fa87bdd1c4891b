"""trustlab.er: entity resolution end to end.

records → blocking → pairwise scoring → signed-weight graph → clique partitioning
(:func:`trustlab.solvers.partition`) → entity ids + explanations → evaluation.
"""
from __future__ import annotations

from trustlab.er.blocking import (
    adaptive_blocking_rules,
    block,
    estimate_pair_completeness,
    pair_completeness,
    reduction_ratio,
)
from trustlab.er.cluster import CLUSTER_METHODS, ClusterResult, cluster_pairs
from trustlab.er.comparisons import compare
from trustlab.er.fields import FieldInference, infer_fields, infer_fields_report
from trustlab.er.incremental import resolve_incremental
from trustlab.er.interop import cluster_dedupe_pairs, cluster_splink_predictions
from trustlab.er.kinds import FIELD_KINDS, Field
from trustlab.er.model import load_model, save_model
from trustlab.er.one_to_one import cluster_one_to_one
from trustlab.er.pipeline import resolve
from trustlab.er.records import read_records
from trustlab.er.resolution import Resolution, evaluate
from trustlab.er.scoring import DegenerateModelWarning, FSModel, SupervisedScorer, to_weights
from trustlab.er.settings import ResolveSettings
from trustlab.er.synthetic import (
    generate_books,
    generate_citations,
    generate_companies,
    generate_people,
    generate_products,
    generate_records,
)

__all__ = [
    "resolve", "ResolveSettings", "resolve_incremental", "save_model", "load_model", "Resolution", "evaluate", "block",
    "pair_completeness", "reduction_ratio",
    "CLUSTER_METHODS", "ClusterResult", "cluster_pairs", "cluster_splink_predictions",
    "cluster_dedupe_pairs", "cluster_one_to_one", "FIELD_KINDS", "Field", "infer_fields", "read_records",
    "SupervisedScorer", "compare", "to_weights", "generate_records",
    "generate_people", "generate_citations", "generate_products", "generate_companies", "generate_books",
    "FSModel", "DegenerateModelWarning", "FieldInference",
    "infer_fields_report", "adaptive_blocking_rules", "estimate_pair_completeness",
]
