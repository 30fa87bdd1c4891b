"""Private release of embedding vectors under Lipschitz (metric) differential privacy.

* :func:`privatize` — PrivEmb (M2, Feyisetan & Kasiviswanathan) and the M1 baseline
  (Feyisetan et al. 2020) with optional exact nearest-neighbour swap.
* :func:`privatize_file` — the same, streamed chunk by chunk from/to .npy, word2vec
  text/binary, parquet (and gensim KeyedVectors if gensim is installed).
* :func:`privatize_dask` — Dask arrays.
* :class:`ReleaseSettings` — the release parameters (mechanism, ε, δ, β, m, Φ) as one
  object, taken by every release entry point as ``settings=``.
* :func:`calibrate_m`, :func:`beta_for_m`, :func:`empirical_sensitivity`,
  :func:`jl_distortion` — choosing m and checking the drawn Φ; :func:`choose_beta` — the β
  minimising Prop 7's bound ("pick a larger β"); ``projection_matrix(kind="sparse")`` — the
  sparse JL matrix (Achlioptas; Li et al.).
* :mod:`trustlab.privacy.bounds` — Props 7–9 and Claim 6 of the PrivEmb paper.
* :func:`evaluate` — the paper's utility experiments (distance, inner product, SVM) with plots.
* :func:`privacy_loss`, :func:`release_log_density`, :func:`noise_log_density` — the exact
  release density and the privacy loss for two inputs, against the metric-DP bound (the PrivEmb
  paper's Definition 1).
* :func:`downstream_utility`, :func:`bow_encode` — the SentEval-style downstream protocol (the PrivEmb
  paper's Section 5.4 and Table 1):
  bag-of-words sentence encoder + logistic regression, before and after release.
"""
from trustlab._lazy import lazy_exports as _lazy_exports
from trustlab.privacy.bounds import (
    distance_bound,
    erm_excess_bound,
    inner_product_bound,
    noise_radius_bound,
)
from trustlab.privacy.calibration import (
    beta_for_m,
    calibrate_m,
    choose_beta,
    empirical_sensitivity,
    jl_distortion,
    projection_matrix,
)
from trustlab.privacy.mechanisms import (
    MECHANISMS,
    PrivateRelease,
    ReleaseRecord,
    make_mechanism,
    nearest_neighbor_swap,
    privatize,
    privatize_dask,
)
from trustlab.privacy.settings import ReleaseSettings

__all__ = [
    "privatize",
    "ReleaseSettings",
    "privatize_file",
    "privatize_dask",
    "PrivateRelease",
    "ReleaseRecord",
    "MECHANISMS",
    "make_mechanism",
    "nearest_neighbor_swap",
    "calibrate_m",
    "beta_for_m",
    "choose_beta",
    "projection_matrix",
    "empirical_sensitivity",
    "jl_distortion",
    "noise_radius_bound",
    "distance_bound",
    "inner_product_bound",
    "erm_excess_bound",
    "evaluate",
    "load_embeddings_subset",
    "downstream_utility",
    "bow_encode",
    "privacy_loss",
    "release_log_density",
    "noise_log_density",
]


# heavier modules (I/O, sklearn, matplotlib) load on first use
__getattr__, __dir__ = _lazy_exports(globals(), {
    **{n: ".io" for n in ("privatize_file", "read_vectors", "open_vectors")},
    **{n: ".evaluation" for n in ("evaluate", "load_embeddings_subset", "plot_results")},
    **{n: ".downstream" for n in ("downstream_utility", "bow_encode")},
    **{n: ".density" for n in ("privacy_loss", "release_log_density", "noise_log_density")},
})
