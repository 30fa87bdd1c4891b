"""trustlab.metrics: clustering, bias, explanation and reliability metrics.

Thin lazy re-export; each function lives in (and is documented at) its module:
:mod:`trustlab.metrics.clustering`, :mod:`trustlab.metrics.bias`,
:mod:`trustlab.metrics.explanation`, :mod:`trustlab.metrics.reliability`,
:mod:`trustlab.metrics.composition` (gradient composition), :mod:`trustlab.metrics.moxie`
(black-box MOXIE metrics), :mod:`trustlab.metrics.moxie_probe` (hybrid score, bias probe,
context filter, POS vocabulary), :mod:`trustlab.metrics.aec` (error classifier),
:mod:`trustlab.metrics.graph_stats` (weighted clustering coefficient),
:mod:`trustlab.metrics.aggregation` (seed averaging, GenTemp), :mod:`trustlab.metrics.relation`
(relation-extraction P/R/F1, BLEU), :mod:`trustlab.metrics.bias_stats` and
:mod:`trustlab.metrics.decoys`.
"""
from trustlab._lazy import lazy_exports as _lazy_exports

# public name -> module (relative to trustlab.metrics); add yours with a one-line edit
_EXPORTS: dict[str, str] = {
    **{
        n: ".explanation"
        for n in (
            "plausibility",
            "plausibility_baselines",
            "model_consistency",
            "input_consistency",
            "winobias_template_groups",
            "syneval_template_groups",
            "agreement_cases",
            "gender_agreement_cases",
            "clamped_pearson",
            "mass_accuracy",
            "mass_accuracy_uniform_baseline",
            "aggregate_attributions",
            "geco_cooccurrence_bias",
            "precision_at_k",
            "uncertainty_scores",
            "influence_score",
            "unlike_ratio",
            "load_ding_koehn",
            "load_geco",
            "read_saliency",
            "read_spans",
            "read_indices",
            "read_geco_jsonl",
            "pattern_variant_attributions",
            "attribution_difference_test",
            "gender_swap",
            "geco_variants",
            "decoy_statistics",
        )
    },
    **{
        n: ".clustering"
        for n in (
            "pairwise_precision_recall_f1",
            "bcubed_precision_recall_f1",
            "homogeneity_completeness_v_measure",
            "adjusted_rand_index",
            "fowlkes_mallows",
            "cluster_count_error",
            "cluster_size_error",
            "clustering_report",
        )
    },
    **{
        n: ".bias"
        for n in (
            "weat",
            "weat_test",
            "weat_summary",
            "weat_permutation_test",
            "weat_effect_size",
            "load_weat_sets",
            "load_weat_embeddings",
            "mac",
            "bayesian_bias",
            "load_bayes_example",
            "hpdi",
            "weat_simulation",
            "load_bayes_data",
            "compare_bayesian_bias",
            "gender_direction",
            "direct_bias",
            "gendered_form_bias",
            "word_gender_bias",
            "defining_set_bias",
        )
    },
    **{n: ".embeddings" for n in ("Embeddings", "as_embeddings", "load_embeddings")},
    **{n: ".composition" for n in ("compose_word_saliency", "compose_saliency")},
    **{
        n: ".moxie"
        for n in (
            "all_correct_accuracy",
            "masked_context_predictions",
            "mask_length",
            "mask_length_summary",
            "counterfactual_accuracy",
            "counterfactual_summary",
        )
    },
    **{n: ".moxie_probe" for n in ("hybrid_score", "bias_probe", "adjective_context_filter", "pos_vocabulary",
                                    "span_importance")},
    **{n: ".aec_data" for n in ("sst_three_way", "remove_near_duplicates")},
    **{n: ".aec_features" for n in ("dependency_triples", "nrc_emotion_counts", "read_nrc_lexicon",
                                     "entity_type_counts", "aec_feature_matrix")},
    **{n: ".aec" for n in ("balanced_undersample", "error_classifier", "conversational_cues")},
    **{n: ".graph_stats" for n in ("weighted_clustering_coefficient",)},
    **{n: ".aggregation" for n in ("seed_average", "max_median_min", "gentemp")},
    **{n: ".relation" for n in ("relation_micro_prf", "bleu")},
    **{n: ".relation_rules" for n in ("pruned_dependency_tree", "negative_pairs", "top_rules")},
    **{
        n: ".bias_stats"
        for n in ("bias_score_ttest", "cross_language_correlation", "token_share", "tfidf_target_correlation")
    },
    **{n: ".decoys" for n in ("insert_decoy", "natural_decoy", "bug_sampling_probability", "submodular_pick")},
    **{
        n: ".reliability"
        for n in (
            "spearman",
            "cross_dataset_reliability",
            "cross_model_reliability",
            "downstream_instability",
            "roc_auc",
            "group_error_rates",
            "fped",
            "fned",
            "load_rios_lwowski",
            "average_over_models",
            "prediction_rates",
            "average_prediction_difference",
        )
    },
}

_SUBMODULES = (
    "clustering",
    "bias",
    "explanation",
    "reliability",
    "embeddings",
    "composition",
    "moxie",
    "moxie_probe",
    "aec",
    "aec_features",
    "aec_data",
    "graph_stats",
    "aggregation",
    "relation",
    "relation_rules",
    "bias_stats",
    "decoys",
)


__all__ = sorted(_EXPORTS) + list(_SUBMODULES)

__getattr__, __dir__ = _lazy_exports(globals(), _EXPORTS, _SUBMODULES)
