"""Bias metrics for word embeddings.

* :func:`weat` - the generalised Word Embedding Association Test (Caliskan et al. 2017;
  Azarpanah & Farhadloo 2021): cosine / Euclidean / Manhattan / Mahalanobis, statistics
  mean / median / min / max / the discrete-optimisation form, effect size with a ``ddof``
  parameter, and an exact or Monte-Carlo (without replacement) permutation p-value.
* :func:`weat_test`, :func:`weat_summary` - the ten Caliskan tests on the packaged,
  corrected word sets and the significance summary of Azarpanah & Farhadloo's Table 3.
* :func:`weat_permutation_test` - the permutation test alone, on per-word associations.
* :func:`mac` - Mean Average Cosine distance (Manzini et al. 2019) with its per-class
  breakdown.
* :func:`bayesian_bias` - the hierarchical normal model on raw cosine distances of
  Dobrzeniecka & Urbaniak, sampled by an exact blocked Gibbs sampler, with 89% HPDIs;
  :func:`hpdi`; :func:`weat_simulation` (the small-sample instability of the effect size);
  :func:`compare_bayesian_bias` and :func:`load_bayes_data` (the model across Google News,
  Reddit, hard-debiased Reddit and GloVe, all 12 bundled topic x embedding files).
* :func:`gender_direction`, :func:`direct_bias` - Bolukbasi et al. (2016) as used by
  Matthews et al. (2021); :func:`word_gender_bias` (per-word signed b(w) = cos(w, g)) and
  :func:`defining_set_bias` (b(w) summed or averaged over the defining words, Matthews et al.'s Figure 2).

Embeddings are accepted as a mapping word -> vector, a gensim ``KeyedVectors``, a
``(words, matrix)`` tuple or :class:`trustlab.metrics.embeddings.Embeddings`. Missing
words are dropped *and reported* (``result.dropped``, plus a
:class:`~trustlab.metrics.embeddings.MissingWordsWarning`) or, with
``on_missing="raise"``, rejected; they never change a test silently.

The package re-exports every name from its modules: ``_similarity`` (similarity
measures, effect size), ``_permutation`` (the permutation test), ``_weat`` (WEAT, the
packaged word sets and summary), ``_mac``, ``_bayesian`` (the hierarchical model and the
small-sample simulation), ``_bayes_compare`` (the comparison across embeddings) and
``_direct`` (gender direction, DirectBias).
"""
from trustlab.metrics.bias._bayes_compare import (  # noqa: F401
    BAYES_EMBEDDINGS,
    BAYES_TOPICS,
    BayesComparison,
    compare_bayesian_bias,
    load_bayes_data,
)
from trustlab.metrics.bias._bayesian import (  # noqa: F401
    BayesianBiasResult,
    bayesian_bias,
    hpdi,
    load_bayes_example,
    weat_simulation,
)
from trustlab.metrics.bias._direct import (  # noqa: F401
    DEFINITIONAL_PAIRS,
    DefiningSetBias,
    DirectBiasResult,
    GenderDirection,
    defining_set_bias,
    direct_bias,
    gender_direction,
    gendered_form_bias,
    word_gender_bias,
)
from trustlab.metrics.bias._mac import (  # noqa: F401
    MACResult,
    mac,
)
from trustlab.metrics.bias._permutation import (  # noqa: F401
    ALTERNATIVES,
    PermutationResult,
    _sample_distinct,
    weat_permutation_test,
)
from trustlab.metrics.bias._similarity import (  # noqa: F401
    COVARIANCE_ESTIMATORS,
    SIMILARITIES,
    STATISTICS,
    weat_effect_size,
)
from trustlab.metrics.bias._weat import (  # noqa: F401
    WEATResult,
    WEATSummary,
    _test_sets,
    load_weat_embeddings,
    load_weat_sets,
    weat,
    weat_summary,
    weat_test,
)

__all__ = [
    "WEATResult",
    "WEATSummary",
    "PermutationResult",
    "MACResult",
    "BayesianBiasResult",
    "GenderDirection",
    "DirectBiasResult",
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
    "BayesComparison",
    "gender_direction",
    "direct_bias",
    "gendered_form_bias",
    "word_gender_bias",
    "defining_set_bias",
    "DefiningSetBias",
    "SIMILARITIES",
    "STATISTICS",
]
