"""Explanation metrics that take attribution (saliency) vectors as input; no model needed.

* **Plausibility test** of Ding & Koehn (NAACL 2021): cue vs attractor sets, expected and
  alternative scenarios, with the Random and Nearest baselines
  (:func:`plausibility`, :func:`plausibility_baselines`).
* **Faithfulness** of Ding & Koehn: model consistency and input consistency, the mean
  Pearson correlation after zeroing small saliencies (:func:`model_consistency`,
  :func:`input_consistency`, :func:`winobias_template_groups`, :func:`syneval_template_groups`).
* Ding & Koehn's test-case construction rules on your own annotations: number agreement from
  parses (:func:`agreement_cases`) and gender agreement from coreference clusters
  (:func:`gender_agreement_cases`).
* **Mass accuracy** of GECOBench (Wilming et al.) with token aggregation, and its
  uniform-random baseline (:func:`mass_accuracy`, :func:`mass_accuracy_uniform_baseline`);
  the GECO **co-occurrence dataset bias** (:func:`geco_cooccurrence_bias`), the model-free
  **Pattern Variant** (:func:`pattern_variant_attributions`, word-level approximation) and the
  Wilcoxon test of gender attribution differences (:func:`attribution_difference_test`);
  the GECO **gender-swap generator** for your own sentences (:func:`gender_swap`,
  :func:`geco_variants`: D_A / D_S, name substitution, ground-truth masks).
* Decoy applicability / productivity / coverage (Idahl et al. 2021, :func:`decoy_statistics`).
* AEC **precision at K** (Misra et al. 2021) and the MOXIE **influence score** and
  **unlike ratio** (Kumar et al. 2021).
* Readers for the released formats (Ding & Koehn saliency/span/index files, GECO jsonl)
  and loaders for the copies bundled with trustlab (:func:`load_ding_koehn`,
  :func:`load_geco`).

Every metric returns a small dataclass with the value, the counts behind it, a
confidence interval where one is meaningful, and what was dropped.

The package re-exports every name from its modules: ``_readers`` (readers and bundled
loaders), ``_plausibility``, ``_faithfulness`` (model and input consistency), ``_geco``
(mass accuracy and the other GECOBench metrics), ``_decoys``, ``_error_detection``
(precision at K, influence, unlike ratio) and ``_common`` (shared helpers).
"""
from trustlab.metrics.explanation._agreement_cases import agreement_cases  # noqa: F401
from trustlab.metrics.explanation._common import (  # noqa: F401
    _wilson,
)
from trustlab.metrics.explanation._decoys import (  # noqa: F401
    DecoyStatistics,
    decoy_statistics,
)
from trustlab.metrics.explanation._error_detection import (  # noqa: F401
    influence_score,
    precision_at_k,
    uncertainty_scores,
    unlike_ratio,
)
from trustlab.metrics.explanation._faithfulness import (  # noqa: F401
    WINOBIAS_GENDER_NOUNS,
    ConsistencyResult,
    clamped_pearson,
    input_consistency,
    model_consistency,
    winobias_template_groups,
)
from trustlab.metrics.explanation._geco import (  # noqa: F401
    AttributionDifferenceResult,
    CooccurrenceBiasResult,
    MassAccuracyResult,
    aggregate_attributions,
    attribution_difference_test,
    geco_cooccurrence_bias,
    mass_accuracy,
    mass_accuracy_uniform_baseline,
    pattern_variant_attributions,
)
from trustlab.metrics.explanation._geco_generate import (  # noqa: F401
    GENDER_PAIRS,
    GenderSwap,
    geco_variants,
    gender_swap,
)
from trustlab.metrics.explanation._gender_agreement_cases import gender_agreement_cases  # noqa: F401
from trustlab.metrics.explanation._plausibility import (  # noqa: F401
    BaselineResult,
    PlausibilityResult,
    plausibility,
    plausibility_baselines,
)
from trustlab.metrics.explanation._readers import (  # noqa: F401
    DingKoehnData,
    GecoData,
    _open_text,
    load_ding_koehn,
    load_geco,
    read_geco_jsonl,
    read_indices,
    read_saliency,
    read_spans,
)
from trustlab.metrics.explanation._syneval_groups import (  # noqa: F401
    SYNEVAL_SECTIONS,
    syneval_template_groups,
)

__all__ = [
    # readers / loaders
    "read_saliency",
    "read_spans",
    "read_indices",
    "read_geco_jsonl",
    "load_ding_koehn",
    "load_geco",
    "DingKoehnData",
    "GecoData",
    # plausibility
    "plausibility",
    "plausibility_baselines",
    "PlausibilityResult",
    "BaselineResult",
    # faithfulness
    "clamped_pearson",
    "model_consistency",
    "input_consistency",
    "winobias_template_groups",
    "ConsistencyResult",
    # GECOBench
    "aggregate_attributions",
    "mass_accuracy",
    "mass_accuracy_uniform_baseline",
    "MassAccuracyResult",
    "geco_cooccurrence_bias",
    "CooccurrenceBiasResult",
    "pattern_variant_attributions",
    "attribution_difference_test",
    "gender_swap",
    "geco_variants",
    "syneval_template_groups",
    "SYNEVAL_SECTIONS",
    "agreement_cases",
    "gender_agreement_cases",
    "GenderSwap",
    "GENDER_PAIRS",
    "AttributionDifferenceResult",
    # decoys (Idahl et al.)
    "decoy_statistics",
    "DecoyStatistics",
    # AEC / MOXIE
    "precision_at_k",
    "uncertainty_scores",
    "influence_score",
    "unlike_ratio",
]
