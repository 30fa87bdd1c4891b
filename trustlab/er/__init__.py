"""trustlab.er: entity resolution end to end.

records → blocking → pairwise scoring → signed-weight graph → clique partitioning
(:func:`trustlab.solvers.partition`) → entity ids + explanations → evaluation.

The files are the stages, in the order :func:`resolve` runs them
(:data:`trustlab.er.pipeline.STAGES`); ``pipeline.py`` calls them top to bottom, and a
stage module calls no stage module before it (``tests/er/test_er_flow.py`` traces a
``resolve`` and checks):

==================  =========================================================================
stage               files
==================  =========================================================================
1 read              ``linking.py`` (several tables stacked, their columns paired, the table of
                    each record), ``records.py`` (files read, ids checked, placeholders)
2 fields            ``fields.py`` (which columns to compare, of which kind; field specs)
3 block             ``blocking.py`` (candidate pairs, their statistics)
4 compare           ``comparisons.py`` (similarity features of pairs: :func:`compare`)
5 score             ``scoring.py`` (:class:`FSModel`, :class:`SupervisedScorer`,
                    :func:`to_weights`, the pairs that complete small components)
6 cluster           ``cluster.py`` (:func:`cluster_pairs`), ``one_to_one.py``
7 persist           ``model.py`` (:func:`save_model` / :func:`load_model`),
                    ``incremental.py`` (:func:`resolve_incremental`)
8 report            ``resolution.py`` (:class:`Resolution`, :func:`evaluate`), ``report.py``
==================  =========================================================================

Shared by every stage, not stages themselves: ``kinds.py`` (the field-kind registry:
normalisers, comparison levels, blocking roles, inference hints, and what several stages
read of a kind), ``rules.py`` (the blocking-rule language and keys), ``defaults.py``
(default values and budgets), ``settings.py`` (:class:`ResolveSettings` and its checks).
Orchestrators: ``pipeline.py`` (:func:`resolve`), ``distributed.py`` (every stage on
Dask), ``incremental.py`` (new records against a saved model). Beside the path:
``interop.py`` (Splink / dedupe predictions clustered), ``synthetic.py`` (generators).
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
