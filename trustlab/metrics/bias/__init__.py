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
  :func:`hpdi`; :func:`weat_simulation` (the small-sample instability of the effect size).
* :func:`gender_direction`, :func:`direct_bias` - Bolukbasi et al. (2016) as used by
  Matthews et al. (2021).

Embeddings are accepted as a mapping word -> vector, a gensim ``KeyedVectors``, a
``(words, matrix)`` tuple or :class:`trustlab.metrics.embeddings.Embeddings`. Missing
words are dropped *and reported* (``result.dropped``, plus a
:class:`~trustlab.metrics.embeddings.MissingWordsWarning`) or, with
``on_missing="raise"``, rejected; they never change a test silently.
"""
from __future__ import annotations

import numbers

import json
import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._backend import resolve_backend
from trustlab.datasets import open_data
from trustlab._validation import (
    Registry,
    check_int,
    check_interval,
    check_option,
    check_random_state,
)
from trustlab.metrics.embeddings import Embeddings, MissingWordsWarning, as_embeddings
from trustlab._validation import Interval, Options, validate_params

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
    "gender_direction",
    "direct_bias",
    "gendered_form_bias",
    "SIMILARITIES",
    "STATISTICS",
]

ALTERNATIVES = ("two-sided", "greater", "less")
# exact enumeration is always capped (memory: 8 bytes per partition)
_EXACT_HARD_CAP = 50_000_000


# ---------------------------------------------------------------------------
# result objects
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class PermutationResult(ResultMixin):
    """Permutation test of a two-group mean difference of per-word associations.

    Attributes
    ----------
    p_value : float
    method : {"exact", "monte-carlo"}
    n_permutations : int
        Partitions enumerated (exact) or distinct partitions sampled (Monte Carlo,
        not counting the observed one).
    n_partitions : int
        C(n_x + n_y, n_x), capped at int64 max.
    alternative : str
    p_value_se : float
        Monte-Carlo standard error sqrt(p(1-p)/M) (0 for exact).
    """

    p_value: float
    method: str
    n_permutations: int
    n_partitions: int
    alternative: str
    p_value_se: float = 0.0


@dataclass(frozen=True)
class WEATResult(ResultMixin):
    """Result of :func:`weat`.

    Attributes
    ----------
    effect_size : float
        (mean_x s - mean_y s) / std_{X u Y} s with ``ddof``; signed.
    statistic : float
        Caliskan's test statistic sum_x s(x) - sum_y s(y) (signed; P2 reports its
        absolute value).
    p_value : float
    method, n_permutations, alternative, p_value_se :
        See :class:`PermutationResult`.
    similarity, statistic_name : str
    ddof : int
    sizes : dict
        Words used per set after dropping missing ones.
    dropped : dict
        Missing words per set (empty lists when none).
    associations_x, associations_y : list of float
        s(w, A, B) per target word.
    """

    effect_size: float
    statistic: float
    p_value: float
    method: str
    n_permutations: int
    alternative: str
    p_value_se: float
    similarity: str
    statistic_name: str
    ddof: int
    sizes: dict
    dropped: dict
    associations_x: list = field(default_factory=list)
    associations_y: list = field(default_factory=list)
    name: str = ""

    def significant(self, alpha: float = 0.05) -> bool:
        return bool(self.p_value < alpha)


@dataclass(frozen=True)
class WEATSummary(ResultMixin):
    """Significance summary over several WEAT tests (Azarpanah & Farhadloo, Table 3).

    Attributes
    ----------
    n_significant : int
        Tests with p < ``alpha``.
    n_tests : int
    mean_abs_effect, sd_abs_effect : float
        Mean and sample SD (ddof=1) of |effect size| over the tests.
    alpha : float
    results : dict
        Test id -> :class:`WEATResult` as a dict.
    alternative : str
        The sidedness of every p-value ("greater"/"less" are one-sided, the default of
        :func:`weat_summary`; :func:`weat_test` and :func:`weat` default to "two-sided").
    """

    n_significant: int
    n_tests: int
    mean_abs_effect: float
    sd_abs_effect: float
    alpha: float
    results: dict
    alternative: str = ""


@dataclass(frozen=True)
class MACResult(ResultMixin):
    """Mean Average Cosine distance (Manzini et al. 2019).

    Attributes
    ----------
    value : float
        MAC(T, A) = mean over targets t and attribute classes A_j of S(t, A_j), with
        S(t, A_j) the mean cosine *distance* (1 - cos) from t to the words of A_j.
    per_class : dict
        Class name -> mean over targets of S(t, A_j).
    per_target : dict
        Target -> {class name -> S(t, A_j)}.
    dropped : dict
    """

    value: float
    per_class: dict
    per_target: dict
    dropped: dict


@dataclass(frozen=True)
class BayesianBiasResult(ResultMixin):
    """Posterior summary of :func:`bayesian_bias`.

    Attributes
    ----------
    model : {"connection", "cell"}
    coefficients : list of dict
        One row per coefficient: name, kind (``protected_word``, ``connection`` or
        ``cell``), level, mean, sd, hpdi_low, hpdi_high, includes_zero, rhat.
    sigma : dict
        Posterior mean / HPDI of the residual SD.
    hdi_prob : float
    n_draws, n_chains, n_obs : int
    draws : dict
        Coefficient name -> array (n_chains * n_draws,) of posterior draws.
    """

    model: str
    coefficients: list
    sigma: dict
    hdi_prob: float
    n_draws: int
    n_chains: int
    n_obs: int
    draws: dict = field(repr=False, default_factory=dict)

    def to_frame(self):
        """Coefficient table as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.coefficients)

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k != "draws"}
        return d


@dataclass(frozen=True)
class GenderDirection(ResultMixin):
    """Bolukbasi gender direction: PC1 of the centred definitional-pair vectors.

    Attributes
    ----------
    vector : numpy.ndarray
        Unit vector g, oriented so that the female word of each pair scores higher on
        average (female positive).
    explained_variance_ratio : numpy.ndarray
        Of all principal components of the 2K x d matrix.
    dominance : float
        explained_variance_ratio[0] - explained_variance_ratio[1] (1.0 for one pair).
    pairs : list of (female, male)
        Pairs used.
    dropped : list of (female, male)
        Pairs with a missing word (dropped as a pair).
    """

    vector: np.ndarray
    explained_variance_ratio: np.ndarray
    dominance: float
    pairs: list
    dropped: list


@dataclass(frozen=True)
class DirectBiasResult(ResultMixin):
    """DirectBias_c = mean_w |cos(w, g)|^c, with the signed per-word cos(w, g)."""

    value: float
    c: float
    per_word: dict
    dropped: list


# ---------------------------------------------------------------------------
# similarity measures and statistics
# ---------------------------------------------------------------------------
SIMILARITIES = Registry("similarity")
STATISTICS = ("mean", "median", "min", "max", "discrete")
COVARIANCE_ESTIMATORS = Registry("covariance estimator")


@SIMILARITIES.register("cosine")
def _sim_cosine(W: np.ndarray, A: np.ndarray, precision=None) -> np.ndarray:
    Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
    An = A / np.linalg.norm(A, axis=1, keepdims=True)
    return Wn @ An.T


@SIMILARITIES.register("euclidean")
def _sim_euclidean(W, A, precision=None):
    from scipy.spatial.distance import cdist

    return cdist(W, A, "euclidean")


@SIMILARITIES.register("manhattan")
def _sim_manhattan(W, A, precision=None):
    from scipy.spatial.distance import cdist

    return cdist(W, A, "cityblock")


@SIMILARITIES.register("mahalanobis")
def _sim_mahalanobis(W, A, precision):
    # d(w, a) = sqrt((w - a)^T P (w - a)), P the (sparse) precision of the attribute set
    WP = W @ precision
    AP = A @ precision
    q = (
        np.einsum("ij,ij->i", WP, W)[:, None]
        + np.einsum("ij,ij->i", AP, A)[None, :]
        - 2.0 * (WP @ A.T)
    )
    return np.sqrt(np.maximum(q, 0.0))


@COVARIANCE_ESTIMATORS.register("graphical_lasso_cv")
def _prec_glasso(A: np.ndarray) -> np.ndarray:
    from sklearn.covariance import GraphicalLassoCV

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return GraphicalLassoCV(cv=3).fit(A).precision_
        except (FloatingPointError, ValueError, np.linalg.LinAlgError) as exc:
            raise ValueError(
                f"GraphicalLassoCV(cv=3) failed on a {A.shape[0]} x {A.shape[1]} attribute set ({exc}); "
                "use covariance='ledoit_wolf' or pass precision=(P_A, P_B)."
            ) from None


@COVARIANCE_ESTIMATORS.register("ledoit_wolf")
def _prec_lw(A: np.ndarray) -> np.ndarray:
    from sklearn.covariance import LedoitWolf

    return LedoitWolf().fit(A).precision_


def _associations(SA: np.ndarray, SB: np.ndarray, statistic: str) -> np.ndarray:
    """s(w, A, B) for every row w from the similarity blocks SA (n, |A|), SB (n, |B|)."""
    if statistic == "discrete":
        # min_{a, b} |sim(w, a) - sim(w, b)| via sorting: for each w, the closest pair
        # between two sorted 1-D sets.
        out = np.empty(SA.shape[0])
        for i in range(SA.shape[0]):
            a = np.sort(SA[i])
            b = SB[i]
            pos = np.searchsorted(a, b)
            lo = a[np.clip(pos - 1, 0, a.size - 1)]
            hi = a[np.clip(pos, 0, a.size - 1)]
            out[i] = min(np.abs(b - lo).min(), np.abs(b - hi).min())
        return out
    f = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}[statistic]
    return f(SA, axis=1) - f(SB, axis=1)


@validate_params({"sx": ["array-like"], "sy": ["array-like"], "ddof": [Interval(numbers.Integral, 0, None, closed='left')]})
def weat_effect_size(sx: Sequence[float], sy: Sequence[float], ddof: int = 1) -> float:
    """WEAT effect size (mean(sx) - mean(sy)) / std(sx u sy, ddof).

    ``ddof=1`` (sample SD) reproduces Caliskan et al.'s published values; the
    Bayesian-WEAT abstract's simulation table implies ``ddof=0``.

    Examples
    --------
    >>> round(weat_effect_size([1.0, 2.0], [0.0, 0.5]), 4)
    1.4639
    """
    sx = np.asarray(sx, dtype=np.float64)
    sy = np.asarray(sy, dtype=np.float64)
    allv = np.concatenate([sx, sy])
    if ddof >= allv.size:
        raise ValueError(
            f"ddof={ddof} needs more than {ddof} target words in X u Y; got {allv.size}."
        )
    sd = allv.std(ddof=ddof)
    diff = sx.mean() - sy.mean()
    if sd == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return float(diff / sd)


# ---------------------------------------------------------------------------
# permutation test
# ---------------------------------------------------------------------------
def _n_partitions(n: int, k: int) -> int:
    return math.comb(n, k)


def _count_extreme(md: np.ndarray, md_obs: float, tol: float, alternative: str) -> int:
    if alternative == "greater":
        return int(np.count_nonzero(md >= md_obs - tol))
    if alternative == "less":
        return int(np.count_nonzero(md <= md_obs + tol))
    return int(np.count_nonzero(np.abs(md) >= abs(md_obs) - tol))


def _sample_distinct(s, k, m, seed, backend):
    """m distinct random k-subsets (as sums), excluding the identity subset 0..k-1."""
    from trustlab.kernels import weat as K

    n = s.shape[0]
    lo_keys, hi_keys = K.element_keys(n)
    obs_lo = np.bitwise_xor.reduce(lo_keys[:k]) if k else np.uint64(0)
    obs_hi = np.bitwise_xor.reduce(hi_keys[:k]) if k else np.uint64(0)
    sums = np.empty(0)
    klo = np.empty(0, dtype=np.uint64)
    khi = np.empty(0, dtype=np.uint64)
    start = 0
    seed = np.uint64(seed)
    for _ in range(1000):
        need = m - sums.size
        if need <= 0:
            break
        batch = int(need * 1.02) + 16
        bs, bl, bh = _draw_batch(s, k, seed, start, batch, lo_keys, hi_keys, backend)
        start += batch
        sums = np.concatenate([sums, bs])
        klo = np.concatenate([klo, bl])
        khi = np.concatenate([khi, bh])
        first = _first_occurrences(klo, khi)
        keep = first[~((klo[first] == obs_lo) & (khi[first] == obs_hi))]
        sums, klo, khi = sums[keep], klo[keep], khi[keep]
    if sums.size < m:  # pragma: no cover - only if m is close to C, which callers avoid
        raise RuntimeError(f"could not draw {m} distinct splits; use permutations='exact'.")
    return sums[:m]


def _first_occurrences(klo: np.ndarray, khi: np.ndarray) -> np.ndarray:
    """Sorted indices of the first occurrence of each distinct (lo, hi) key."""
    if not khi.any():
        order = np.argsort(klo, kind="stable")
        sk = klo[order]
        new = np.empty(sk.size, dtype=bool)
        new[:1] = True
        new[1:] = sk[1:] != sk[:-1]
    else:
        order = np.lexsort((khi, klo))  # stable: ties keep generation order
        sl, sh = klo[order], khi[order]
        new = np.empty(sl.size, dtype=bool)
        new[:1] = True
        new[1:] = (sl[1:] != sl[:-1]) | (sh[1:] != sh[:-1])
    return np.sort(order[new])


def _draw_batch(s, k, seed, start, m, lo_keys, hi_keys, backend):
    from trustlab.kernels import weat as K

    if backend == "gpu":
        from trustlab.kernels.weat_cuda import sample_subset_sums_cuda

        return sample_subset_sums_cuda(s, k, seed, start, m, lo_keys, hi_keys)
    out = np.empty(m)
    out_lo = np.empty(m, dtype=np.uint64)
    out_hi = np.empty(m, dtype=np.uint64)
    K.sample_kernel(m * k)(s, k, seed, start, lo_keys, hi_keys, K.n_chunks(m), out, out_lo, out_hi)
    return out, out_lo, out_hi


def _exact_sums(s: np.ndarray, k: int) -> np.ndarray:
    from trustlab.kernels import weat as K

    n = s.shape[0]
    T = K.binomial_table(n, k)
    total = int(T[n, k])
    out = np.empty(total)
    K.exact_kernel(total * k)(s, k, T, K.n_chunks(total), out)
    return out


@validate_params({"associations": ["array-like"], "n_x": [Interval(numbers.Integral, 1, None, closed='left')], "permutations": [Interval(numbers.Integral, 1, 1000000000, closed='both'), Options({"auto", "exact"})], "exact_limit": [Interval(numbers.Integral, 1, None, closed='left')], "alternative": [Options({"two-sided", "greater", "less"})], "random_state": ["random_state"], "backend": [Options({"auto", "cpu", "gpu"})]})
def weat_permutation_test(
    associations: Any,
    n_x: int,
    *,
    permutations: int | str = "auto",
    exact_limit: int = 1_000_000,
    alternative: str = "two-sided",
    random_state: Any = None,
    backend: str = "auto",
) -> PermutationResult:
    """Permutation p-value for the difference of mean association between X and Y.

    The first ``n_x`` entries of ``associations`` are s(x, A, B) for x in X, the rest
    s(y, A, B) for y in Y. Under the null every split of X u Y into sizes
    (n_x, n_y) is equally likely. The statistic is the difference of means (for
    equal sizes this orders partitions exactly like Caliskan's sum difference S).

    * **exact**: all C(n_x + n_y, n_x) splits are enumerated (the observed split is
      one of them): p = #{extreme} / C.
    * **Monte Carlo**: ``permutations`` *distinct* splits other than the observed one
      are drawn uniformly without replacement; p = (1 + #{extreme}) / (1 + M), which is
      a valid (slightly conservative) p-value.

    Parameters
    ----------
    associations : array-like of shape (n_x + n_y,)
    n_x : int
    permutations : "auto", "exact" or int
        ``"auto"``: exact when C <= ``exact_limit``, else 100,000 sampled splits.
        An int M: exact when M >= C - 1 (enumeration is then cheaper), else M samples.
    exact_limit : int
        Largest number of splits enumerated under ``"auto"``.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: X more associated with A than Y is (Caliskan's one-sided test,
        for similarity measures); ``"two-sided"``: |difference| (P2's |S| form, valid
        for distance measures whose polarity is reversed).
    random_state : None, int or Generator
        Seed of the sampler (Monte Carlo only).
    backend : {"auto", "cpu", "gpu"}
        ``"gpu"`` samples on a CUDA device with numba.cuda (identical draws to the CPU
        kernel); exact enumeration always runs on the CPU.

    Returns
    -------
    PermutationResult

    Notes
    -----
    Ties: a split counts as "at least as extreme" when its statistic is within a
    relative rounding tolerance (~1e-12) of the observed one, so splits that are
    mathematically tied are never lost to floating-point summation order.

    Examples
    --------
    >>> r = weat_permutation_test([3.0, 2.0, 1.0, 0.0], 2, alternative="greater")
    >>> r.method, r.n_partitions, r.p_value
    ('exact', 6, 0.16666666666666666)
    """
    func = "weat_permutation_test"
    s = np.ascontiguousarray(np.asarray(associations, dtype=np.float64).ravel())
    n = s.size
    n_x = check_int(n_x, "n_x", low=1, high=max(1, n - 1), func=func)
    if n < 2 or n_x >= n:
        raise ValueError(f"need at least one word on each side; got n_x={n_x} of {n} associations.")
    if not np.isfinite(s).all():
        raise ValueError("associations contain NaN or infinity; check the input vectors.")
    check_option(alternative, "alternative", ALTERNATIVES, func=func)
    exact_limit = check_int(exact_limit, "exact_limit", low=1, high=_EXACT_HARD_CAP, func=func)
    n_y = n - n_x
    total = _n_partitions(n, n_x)
    if isinstance(permutations, str):
        check_option(permutations, "permutations", ["auto", "exact"], func=func)
        if permutations == "exact":
            if total > _EXACT_HARD_CAP:
                raise ValueError(
                    f"exact enumeration of C({n}, {n_x}) = {total:.3g} splits is too large "
                    f"(limit {_EXACT_HARD_CAP:,}); pass permutations=<int> to sample instead."
                )
            mode, m = "exact", total
        elif total <= exact_limit:
            mode, m = "exact", total
        else:
            mode, m = "mc", 100_000
    else:
        m = check_int(permutations, "permutations", low=1, func=func)
        mode = "mc"
    if mode == "mc" and m >= total - 1:
        mode, m = "exact", total  # enumerating every split is cheaper and exact
    # mean difference as a function of the X-side subset sum
    T = float(s.sum())
    a, b = 1.0 / n_x + 1.0 / n_y, T / n_y
    obs_sum = 0.0
    for v in s[:n_x]:  # sequential, the order the kernels sum the identity split in
        obs_sum += float(v)
    md_obs = obs_sum * a - b
    tol = 64.0 * np.finfo(float).eps * float(np.abs(s).sum()) * a
    if mode == "exact":
        sums = _exact_sums(s, n_x)
        c = _count_extreme(sums * a - b, md_obs, tol, alternative)
        return PermutationResult(c / sums.size, "exact", int(sums.size), int(min(total, 2**63 - 1)), alternative)
    rng = check_random_state(random_state)
    be = resolve_backend(backend, size=m * n, gpu_threshold=5_000_000, need="numba-cuda", func=func)
    seed = int(rng.integers(0, 2**63 - 1))
    if total <= 4 * m and total <= _EXACT_HARD_CAP:
        # dense regime: enumerate, then draw m of the other C - 1 splits without replacement
        allsums = _exact_sums(s, n_x)
        pick = np.random.default_rng(seed).choice(total - 1, size=m, replace=False) + 1
        sums = allsums[pick]
    else:
        sums = _sample_distinct(s, n_x, m, seed, be)
    c = _count_extreme(sums * a - b, md_obs, tol, alternative)
    p = (1.0 + c) / (1.0 + sums.size)
    se = math.sqrt(max(p * (1 - p), 0.0) / sums.size)
    return PermutationResult(p, "monte-carlo", int(sums.size), int(min(total, 2**63 - 1)), alternative, se)


# ---------------------------------------------------------------------------
# WEAT
# ---------------------------------------------------------------------------
def _lookup_sets(emb: Embeddings, sets: Mapping[str, Any], on_missing: str):
    vecs, used, dropped = {}, {}, {}
    for key, words in sets.items():
        lk = emb.lookup(words, name=f"{key} set", on_missing=on_missing)
        vecs[key] = lk.vectors
        used[key] = lk.words
        dropped[key] = lk.missing
    return vecs, used, dropped


@validate_params({"X": ["array-like"], "Y": ["array-like"], "A": ["array-like"], "B": ["array-like"], "similarity": [str], "statistic": [Options({"mean", "median", "min", "max", "discrete"})], "ddof": [Interval(numbers.Integral, 0, None, closed='left')], "permutations": [Interval(numbers.Integral, 1, 1000000000, closed='both'), Options({"auto", "exact"})], "exact_limit": [Interval(numbers.Integral, 1, None, closed='left')], "alternative": [Options({"two-sided", "greater", "less"})], "on_missing": [Options({"drop", "raise"})], "covariance": [str], "random_state": ["random_state"], "backend": [Options({"auto", "cpu", "gpu"})], "name": [str]})
def weat(
    embeddings: Any,
    X: Sequence[str],
    Y: Sequence[str],
    A: Sequence[str],
    B: Sequence[str],
    *,
    similarity: str = "cosine",
    statistic: str = "mean",
    ddof: int = 1,
    permutations: int | str = "auto",
    exact_limit: int = 1_000_000,
    alternative: str = "two-sided",
    on_missing: str = "drop",
    covariance: str = "graphical_lasso_cv",
    precision: tuple[np.ndarray, np.ndarray] | None = None,
    random_state: Any = None,
    backend: str = "auto",
    name: str = "",
) -> WEATResult:
    """Generalised Word Embedding Association Test with an exact or sampled p-value.

    Per target word w the association is
    s(w, A, B) = f_{a in A} sim(w, a) - f_{b in B} sim(w, b) with f the chosen
    ``statistic`` (mean: Caliskan's WEAT; median, min, max: Azarpanah & Farhadloo eq. 1),
    or, for ``statistic="discrete"``, min_{a, b} |sim(w, a) - sim(w, b)| (their eq. 2).
    The effect size is (mean_X s - mean_Y s) / std_{X u Y} s.

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    X, Y : sequence of str
        Target word sets (may differ in size; permutations keep the sizes).
    A, B : sequence of str
        Attribute word sets.
    similarity : {"cosine", "euclidean", "manhattan", "mahalanobis"}
        Distances are used as they are (not negated), as in Azarpanah & Farhadloo:
        their per-word sign is the reverse of cosine's; ``alternative="two-sided"``
        is unaffected.
    statistic : {"mean", "median", "min", "max", "discrete"}
    ddof : int
        Delta degrees of freedom of the effect-size SD; 1 reproduces Caliskan's values.
    permutations : "auto", "exact" or int
        See :func:`weat_permutation_test`.
    exact_limit : int
    alternative : {"two-sided", "greater", "less"}
    on_missing : {"drop", "raise"}
        Dropped words are listed in ``result.dropped`` and warned about.
    covariance : {"graphical_lasso_cv", "ledoit_wolf"}
        Mahalanobis only: estimator of the attribute-set precision matrix
        (GraphicalLassoCV(cv=3) is Azarpanah & Farhadloo's choice; it takes seconds to
        minutes in 300 dimensions). A's precision is used for distances to a in A, B's
        for b in B. The paper fitted synonym-augmented attribute sets (not released),
        so Mahalanobis results are an approximation of theirs.
    precision : (P_A, P_B), optional
        Precomputed precision matrices (d x d); overrides ``covariance``.
    random_state : None, int or Generator
    backend : {"auto", "cpu", "gpu"}
    name : str
        Label stored in the result.

    Returns
    -------
    WEATResult

    Raises
    ------
    ValueError
        Empty sets, all words of a set missing, NaN vectors, unknown names, bad
        precision shapes, fewer than 2 target words.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> words = ["x1", "x2", "y1", "y2", "a1", "a2", "b1", "b2"]
    >>> emb = dict(zip(words, rng.normal(size=(8, 5))))
    >>> r = weat(emb, ["x1", "x2"], ["y1", "y2"], ["a1", "a2"], ["b1", "b2"])
    >>> r.method, r.n_permutations, -2 <= r.effect_size <= 2
    ('exact', 6, True)
    """
    func = "weat"
    check_option(similarity, "similarity", list(SIMILARITIES), func=func)
    check_option(statistic, "statistic", STATISTICS, func=func)
    check_option(on_missing, "on_missing", ["drop", "raise"], func=func)
    check_option(alternative, "alternative", ALTERNATIVES, func=func)
    ddof = check_int(ddof, "ddof", low=0, func=func)
    emb = as_embeddings(embeddings)
    vecs, used, dropped = _lookup_sets(emb, {"X": X, "Y": Y, "A": A, "B": B}, on_missing)
    if any(dropped.values()):
        warnings.warn(
            f"WEAT {name or ''}: dropped words with no vector: "
            f"{ {k: v for k, v in dropped.items() if v} } (listed in result.dropped).",
            MissingWordsWarning,
            stacklevel=2,
        )
    nx, ny = len(used["X"]), len(used["Y"])
    if nx + ny <= ddof:
        raise ValueError(f"ddof={ddof} needs more than {ddof} target words; X u Y has {nx + ny}.")
    W = np.vstack([vecs["X"], vecs["Y"]])
    if similarity in ("cosine",):
        for key in ("X", "Y", "A", "B"):
            norms = np.linalg.norm(vecs[key], axis=1)
            if (norms == 0).any():
                z = [w for w, nv in zip(used[key], norms) if nv == 0]
                raise ValueError(f"cosine similarity is undefined for the zero vectors of {z} (in {key}).")
    PA = PB = None
    if similarity == "mahalanobis":
        d = emb.dim
        if precision is not None:
            if not (isinstance(precision, (tuple, list)) and len(precision) == 2):
                raise ValueError("precision must be a pair (P_A, P_B) of d x d matrices.")
            PA = np.asarray(precision[0], dtype=np.float64)
            PB = np.asarray(precision[1], dtype=np.float64)
            for P, nm in ((PA, "P_A"), (PB, "P_B")):
                if P.shape != (d, d) or not np.isfinite(P).all():
                    raise ValueError(
                        f"precision {nm} must be a finite {d} x {d} matrix (embedding dim {d}); got shape {P.shape}."
                    )
        else:
            est = COVARIANCE_ESTIMATORS[covariance]
            for key in ("A", "B"):
                if len(used[key]) < 3:
                    raise ValueError(
                        f"Mahalanobis needs at least 3 words in {key} to estimate a covariance "
                        f"(3-fold CV); got {len(used[key])}. Pass precision=(P_A, P_B) instead."
                    )
            PA, PB = est(vecs["A"]), est(vecs["B"])
    sim = SIMILARITIES[similarity]
    SA = sim(W, vecs["A"], PA)
    SB = sim(W, vecs["B"], PB)
    s = np.ascontiguousarray(_associations(SA, SB, statistic), dtype=np.float64)
    sx, sy = s[:nx], s[nx:]
    es = weat_effect_size(sx, sy, ddof=ddof)
    perm = weat_permutation_test(
        s, nx, permutations=permutations, exact_limit=exact_limit, alternative=alternative,
        random_state=random_state, backend=backend,
    )
    return WEATResult(
        effect_size=es,
        statistic=float(sx.sum() - sy.sum()),
        p_value=perm.p_value,
        method=perm.method,
        n_permutations=perm.n_permutations,
        alternative=alternative,
        p_value_se=perm.p_value_se,
        similarity=similarity,
        statistic_name=statistic,
        ddof=ddof,
        sizes={k: len(v) for k, v in used.items()},
        dropped=dropped,
        associations_x=sx.tolist(),
        associations_y=sy.tolist(),
        name=name,
    )


# ---------------------------------------------------------------------------
# packaged data
# ---------------------------------------------------------------------------
def load_weat_sets() -> dict[str, Any]:
    """The Caliskan et al. (2017) WEAT word sets and test definitions (corrected).

    Returns a dict with ``"sets"`` (name -> word list), ``"tests"`` (``"1"`` ..
    ``"10"`` -> {"name", "X", "Y", "A", "B"} naming sets) and ``"corrections"``.
    Relative to the copy packaged by ``wefe``, WEAT 3 uses Caliskan's unpleasant list
    (``bomb``, ``evil`` instead of ``agony``, ``prison``) and ``young_people_names``
    has ``Billy`` (Caliskan) instead of ``Bill``.

    Examples
    --------
    >>> d = load_weat_sets()
    >>> d["tests"]["6"]["X"], len(d["sets"]["career"])
    ('male_names', 8)
    """
    with open_data("weat", "weat_wordsets.json", mode="r", encoding="utf-8") as fh:
        return json.load(fh)


def load_weat_embeddings() -> Embeddings:
    """The word2vec GoogleNews vectors of the WEAT words (and the gender-direction
    pairs and P6 professions) shipped with trustlab, 300-d float32.

    Subset of the ``test_model.kv`` file shipped in the MIT-licensed ``wefe``
    package; see ``trustlab/data/weat/LICENSE-NOTES.md``.

    Examples
    --------
    >>> emb = load_weat_embeddings()
    >>> emb.dim, "flower" in emb or "aster" in emb
    (300, True)
    """
    with open_data("weat", "word2vec_weat_subset.npz") as fh:
        with np.load(fh, allow_pickle=False) as z:
            return Embeddings([str(w) for w in z["words"]], z["vectors"])


def _test_sets(test: int | str) -> tuple[str, dict[str, list[str]]]:
    d = load_weat_sets()
    key = str(test)
    if key not in d["tests"]:
        raise ValueError(f"Unknown WEAT test {test!r}. Valid choices are: {sorted(d['tests'], key=int)}.")
    t = d["tests"][key]
    return t["name"], {k: d["sets"][t[k]] for k in ("X", "Y", "A", "B")}


@validate_params({"test": [Interval(numbers.Integral, 1, None, closed='left'), str]})
def weat_test(embeddings: Any, test: int | str, **kwargs) -> WEATResult:
    """Run Caliskan's WEAT ``test`` (1..10) with the packaged, corrected word sets.

    ``kwargs`` go to :func:`weat`. The p-value is **two-sided** by default (``weat``'s
    ``alternative="two-sided"``), whereas :func:`weat_summary` defaults to one-sided p-values
    in the stereotype direction (Caliskan et al. and the Table 3 summary are one-sided); pass
    ``alternative="greater"`` for the one-sided value. ``result.alternative`` always says which.

    Examples
    --------
    >>> r = weat_test(load_weat_embeddings(), 6)
    >>> round(r.effect_size, 2), r.method, r.n_permutations
    (1.89, 'exact', 12870)
    """
    name, sets = _test_sets(test)
    kwargs.setdefault("name", f"WEAT {test}: {name}")
    return weat(embeddings, sets["X"], sets["Y"], sets["A"], sets["B"], **kwargs)


@validate_params({"tests": ["array-like"], "alpha": [Interval(numbers.Real, 0, 1, closed='neither')], "alternative": [Options({"auto", "two-sided", "greater", "less"})], "progress": ["boolean"]})
def weat_summary(
    embeddings: Any,
    tests: Sequence[int] = tuple(range(1, 11)),
    *,
    alpha: float = 0.01,
    alternative: str = "auto",
    progress: bool = False,
    **kwargs,
) -> WEATSummary:
    """Significance summary over WEAT tests (Azarpanah & Farhadloo, Table 3).

    Counts the tests with p < ``alpha`` and gives the mean and SD (ddof=1) of the
    absolute effect sizes. ``kwargs`` go to :func:`weat`.

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    tests : sequence of int
        Caliskan test numbers (default all ten).
    alpha : float
        Significance level; 0.01 is the paper's first significance marker.
    alternative : {"auto", "two-sided", "greater", "less"}
        ``"auto"``: one-sided in the stereotype direction, i.e. ``"greater"`` for
        cosine and ``"less"`` for the distance measures (whose polarity is reversed),
        ``"two-sided"`` for the (sign-free) discrete statistic. With the defaults,
        mean cosine on the shipped word2vec vectors gives 7 significant tests,
        (mean, SD) of |d| = (1.13, 0.55): Table 3's word2vec row is 7 (1.13, 0.54).
    progress : bool
        Show a tqdm progress bar.

    Examples
    --------
    >>> s = weat_summary(load_weat_embeddings(), tests=[6, 7, 8])
    >>> s.n_tests, s.n_significant
    (3, 2)
    """
    alpha = check_interval(alpha, "alpha", low=0, high=1, closed="neither", func="weat_summary")
    if len(tests) == 0:
        raise ValueError("tests is empty; pass at least one WEAT test number (1..10).")
    check_option(alternative, "alternative", ("auto",) + ALTERNATIVES, func="weat_summary")
    if alternative == "auto":
        if kwargs.get("statistic", "mean") == "discrete":
            alternative = "two-sided"
        elif kwargs.get("similarity", "cosine") == "cosine":
            alternative = "greater"
        else:
            alternative = "less"
    kwargs["alternative"] = alternative
    results = {}
    it = tests
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(tests, desc="WEAT", unit="test")
    for t in it:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingWordsWarning)
            results[str(t)] = weat_test(embeddings, t, **kwargs)
    d = np.array([abs(r.effect_size) for r in results.values()])
    return WEATSummary(
        n_significant=int(sum(r.p_value < alpha for r in results.values())),
        n_tests=len(results),
        mean_abs_effect=float(d.mean()),
        sd_abs_effect=float(d.std(ddof=1)) if d.size > 1 else 0.0,
        alpha=alpha,
        results={k: r.to_dict() for k, r in results.items()},
        alternative=alternative,
    )


# ---------------------------------------------------------------------------
# MAC
# ---------------------------------------------------------------------------
@validate_params({"targets": ["array-like"], "attributes": ["mapping"], "on_missing": [Options({"drop", "raise"})]})
def mac(
    embeddings: Any,
    targets: Sequence[str],
    attributes: Mapping[str, Sequence[str]],
    *,
    on_missing: str = "drop",
) -> MACResult:
    """Mean Average Cosine distance (Manzini et al. 2019) with per-class breakdown.

    S(t, A_j) = mean_{a in A_j} (1 - cos(t, a)); MAC = mean over t in T and classes
    A_j of S(t, A_j) (each class weighted equally, as in Manzini's code).

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    targets : sequence of str
        Protected (target) words T.
    attributes : mapping class name -> sequence of str
        Attribute classes A_j (e.g. stereotype lists per religion).
    on_missing : {"drop", "raise"}

    Returns
    -------
    MACResult

    Examples
    --------
    >>> emb = {"t": [1.0, 0.0], "a": [1.0, 0.0], "b": [0.0, 1.0]}
    >>> r = mac(emb, ["t"], {"A": ["a"], "B": ["b"]})
    >>> r.value, r.per_class
    (0.5, {'A': 0.0, 'B': 1.0})
    """
    check_option(on_missing, "on_missing", ["drop", "raise"], func="mac")
    if not isinstance(attributes, Mapping) or not attributes:
        raise ValueError("attributes must be a non-empty mapping class name -> list of words.")
    emb = as_embeddings(embeddings)
    T = emb.lookup(targets, name="targets", on_missing=on_missing)
    dropped = {"targets": T.missing}
    Tn = T.vectors / _safe_norm(T.vectors, T.words)
    per_t = np.empty((len(T.words), len(attributes)))
    names = list(attributes)
    for j, cname in enumerate(names):
        L = emb.lookup(attributes[cname], name=f"attribute class {cname!r}", on_missing=on_missing)
        dropped[cname] = L.missing
        An = L.vectors / _safe_norm(L.vectors, L.words)
        per_t[:, j] = (1.0 - Tn @ An.T).mean(axis=1)
    if any(dropped.values()):
        warnings.warn(
            f"MAC: dropped words with no vector: { {k: v for k, v in dropped.items() if v} }",
            MissingWordsWarning,
            stacklevel=2,
        )
    return MACResult(
        value=float(per_t.mean()),
        per_class={c: float(per_t[:, j].mean()) for j, c in enumerate(names)},
        per_target={t: {c: float(per_t[i, j]) for j, c in enumerate(names)} for i, t in enumerate(T.words)},
        dropped=dropped,
    )


def _safe_norm(V: np.ndarray, words: Sequence[str]) -> np.ndarray:
    nv = np.linalg.norm(V, axis=1, keepdims=True)
    if (nv == 0).any():
        z = [w for w, x in zip(words, nv[:, 0]) if x == 0]
        raise ValueError(f"cosine is undefined for the zero vectors of {z}.")
    return nv


# ---------------------------------------------------------------------------
# Bayesian hierarchical model (seed S2)
# ---------------------------------------------------------------------------
@validate_params({"samples": ["array-like"], "prob": [Interval(numbers.Real, 0, 1, closed='right')]})
def hpdi(samples: Any, prob: float = 0.89) -> tuple[float, float]:
    """Highest posterior density interval: the shortest interval holding ``prob`` of
    the draws (McElreath's HPDI).

    Examples
    --------
    >>> lo, hi = hpdi(np.arange(100.0), 0.5)
    >>> hi - lo
    49.0
    """
    prob = check_interval(prob, "prob", low=0, high=1, closed="right", func="hpdi")
    x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    if x.size == 0 or not np.isfinite(x).all():
        raise ValueError("hpdi needs a non-empty array of finite draws.")
    n = x.size
    k = max(1, int(math.ceil(prob * n)))  # number of draws inside
    if k >= n:
        return float(x[0]), float(x[-1])
    widths = x[k - 1:] - x[: n - k + 1]
    i = int(np.argmin(widths))
    return float(x[i]), float(x[i + k - 1])


def _rhat(ch: np.ndarray) -> float:
    # split-R-hat (Gelman et al. BDA3) for draws of shape (chains, n)
    c, n = ch.shape
    h = n // 2
    if h < 2:
        return float("nan")
    sp = np.concatenate([ch[:, :h], ch[:, h: 2 * h]], axis=0)
    W = sp.var(axis=1, ddof=1).mean()
    B = h * sp.mean(axis=1).var(ddof=1)
    if W == 0:
        return 1.0
    var = (h - 1) / h * W + B / h
    return float(np.sqrt(var / W))


def _gibbs(Z, y, prior_mean, prior_sd, draws, warmup, chains, rng):
    """Blocked Gibbs for y ~ N(Z beta, sigma), beta ~ N(prior_mean, prior_sd),
    sigma ~ HalfCauchy(0, 1). beta | sigma is Gaussian (drawn jointly, so the additive
    non-identifiability of the model does not slow mixing); sigma | beta by an
    independence Metropolis-Hastings step with the inverse-gamma proposal from the
    likelihood (acceptance (1 + s2_old) / (1 + s2_new)), which is exact."""
    n, p = Z.shape
    ZtZ = Z.T @ Z
    Zty = Z.T @ y
    yty = float(y @ y)
    P0 = np.diag(1.0 / prior_sd**2)
    b0 = prior_mean / prior_sd**2
    out_b = np.empty((chains, draws, p))
    out_s = np.empty((chains, draws))
    accepted = 0
    for c in range(chains):
        beta = prior_mean + prior_sd * rng.standard_normal(p) * 0.1
        s2 = float(np.var(y)) * (0.5 + rng.random())
        for it in range(warmup + draws):
            Q = P0 + ZtZ / s2
            L = np.linalg.cholesky(Q)
            mu = np.linalg.solve(Q, b0 + Zty / s2)
            beta = mu + np.linalg.solve(L.T, rng.standard_normal(p))
            ssr = max(yty - 2.0 * beta @ Zty + beta @ ZtZ @ beta, 1e-300)
            # proposal tau ~ InvGamma((n - 1) / 2, ssr / 2)  (likelihood x 1/sqrt(tau) Jacobian)
            prop = (ssr / 2.0) / rng.gamma((n - 1) / 2.0)
            if rng.random() < (1.0 + s2) / (1.0 + prop):
                s2 = prop
                accepted += 1
            if it >= warmup:
                out_b[c, it - warmup] = beta
                out_s[c, it - warmup] = math.sqrt(s2)
    return out_b, out_s


def load_bayes_example():
    """Raw cosine distances for religion / Reddit word2vec (Manzini et al. lists),
    as packaged by Dobrzeniecka & Urbaniak; a pandas DataFrame with columns
    ``protected_word``, ``word_to_compare``, ``word_class``, ``connection``,
    ``cosine_distance``.

    Examples
    --------
    >>> df = load_bayes_example()
    >>> sorted(df.connection.unique())
    ['associated', 'different', 'human', 'none']
    """
    import pandas as pd

    with open_data("weat", "religion_reddit_cosine.csv.gz") as fh:
        return pd.read_csv(fh, compression="gzip")


@validate_params({"model": [Options({"connection", "cell"})], "draws": [Interval(numbers.Integral, 10, 10000000, closed='both')], "warmup": [Interval(numbers.Integral, 0, 10000000, closed='both')], "chains": [Interval(numbers.Integral, 1, 64, closed='both')], "hdi_prob": [Interval(numbers.Real, 0, 1, closed='neither')], "random_state": ["random_state"]})
def bayesian_bias(
    data: Any,
    *,
    model: str = "connection",
    draws: int = 2000,
    warmup: int = 500,
    chains: int = 4,
    hdi_prob: float = 0.89,
    random_state: Any = None,
) -> BayesianBiasResult:
    """Bayesian hierarchical estimate of cosine-distance bias (Dobrzeniecka & Urbaniak).

    Model ``"connection"``: cosine_distance_i ~ Normal(mu_i, sigma),
    mu_i = m[protected word] + co[connection], m ~ N(1, 0.5), co ~ N(0, 1),
    sigma ~ HalfCauchy(0, 1). Model ``"cell"``: mu_i = m[protected word x connection]
    with m ~ N(1, 0.5). The posterior is sampled by an exact blocked Gibbs sampler
    (NumPy; no Stan): the coefficients jointly from their Gaussian conditional, sigma
    by independence Metropolis-Hastings.

    Parameters
    ----------
    data : pandas.DataFrame or mapping of columns
        Needs ``protected_word``, ``connection`` and ``cosine_distance``. One row per
        (protected word, attribute word) pair: the raw data points, not means.
    model : {"connection", "cell"}
    draws, warmup, chains : int
    hdi_prob : float
        Mass of the HPDIs (0.89 as in the paper).
    random_state : None, int or Generator

    Returns
    -------
    BayesianBiasResult
        Per coefficient: posterior mean, SD, HPDI, whether it includes 0, split-R-hat.

    Notes
    -----
    m + co is additively non-identified and regularised only by the priors, so
    posteriors of m and co are wide and strongly (negatively) correlated; that is a
    property of the model, and the joint draw of the coefficients keeps the sampler
    mixing well regardless.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"protected_word": ["a", "a", "b", "b"] * 5,
    ...                    "connection": ["none", "associated"] * 10,
    ...                    "cosine_distance": np.linspace(0.6, 1.1, 20)})
    >>> r = bayesian_bias(df, draws=200, warmup=100, chains=2, random_state=0)
    >>> [c["name"] for c in r.coefficients]
    ['m[a]', 'm[b]', 'co[associated]', 'co[none]']
    """
    import pandas as pd

    func = "bayesian_bias"
    check_option(model, "model", ["connection", "cell"], func=func)
    draws = check_int(draws, "draws", low=10, func=func)
    warmup = check_int(warmup, "warmup", low=0, func=func)
    chains = check_int(chains, "chains", low=1, func=func)
    hdi_prob = check_interval(hdi_prob, "hdi_prob", low=0, high=1, closed="neither", func=func)
    df = pd.DataFrame(data) if not isinstance(data, pd.DataFrame) else data
    need = ["protected_word", "connection", "cosine_distance"]
    miss = [c for c in need if c not in df.columns]
    if miss:
        raise ValueError(f"data lacks column(s) {miss}; it has {list(df.columns)}. Needed: {need}.")
    if len(df) < 2:
        raise ValueError(f"data needs at least 2 rows; got {len(df)}.")
    y = pd.to_numeric(df["cosine_distance"], errors="coerce").to_numpy(np.float64)
    if not np.isfinite(y).all():
        bad = int((~np.isfinite(y)).sum())
        raise ValueError(f"cosine_distance has {bad} missing/non-numeric/infinite value(s); drop those rows first.")
    pw = df["protected_word"].astype(str).to_numpy()
    con = df["connection"].astype(str).to_numpy()
    rng = check_random_state(random_state)
    if model == "connection":
        pw_lv, pw_i = np.unique(pw, return_inverse=True)
        co_lv, co_i = np.unique(con, return_inverse=True)
        p1, p2 = len(pw_lv), len(co_lv)
        Z = np.zeros((y.size, p1 + p2))
        Z[np.arange(y.size), pw_i] = 1.0
        Z[np.arange(y.size), p1 + co_i] = 1.0
        prior_mean = np.r_[np.ones(p1), np.zeros(p2)]
        prior_sd = np.r_[np.full(p1, 0.5), np.ones(p2)]
        names = [f"m[{v}]" for v in pw_lv] + [f"co[{v}]" for v in co_lv]
        kinds = [("protected_word", v) for v in pw_lv] + [("connection", v) for v in co_lv]
    else:
        cell = np.char.add(np.char.add(pw.astype(str), "|"), con.astype(str))
        lv, ci = np.unique(cell, return_inverse=True)
        Z = np.zeros((y.size, len(lv)))
        Z[np.arange(y.size), ci] = 1.0
        prior_mean = np.ones(len(lv))
        prior_sd = np.full(len(lv), 0.5)
        names = [f"m[{v.replace('|', ', ')}]" for v in lv]
        kinds = [("cell", v.replace("|", ", ")) for v in lv]
    B, S = _gibbs(Z, y, prior_mean, prior_sd, draws, warmup, chains, rng)
    rows = []
    draws_d = {}
    for j, nm in enumerate(names):
        x = B[:, :, j]
        lo, hi = hpdi(x, hdi_prob)
        rows.append(
            {
                "name": nm,
                "kind": kinds[j][0],
                "level": kinds[j][1],
                "mean": float(x.mean()),
                "sd": float(x.std(ddof=1)),
                "hpdi_low": lo,
                "hpdi_high": hi,
                "includes_zero": bool(lo <= 0.0 <= hi),
                "rhat": _rhat(x),
            }
        )
        draws_d[nm] = x.ravel()
    slo, shi = hpdi(S, hdi_prob)
    return BayesianBiasResult(
        model=model,
        coefficients=rows,
        sigma={"mean": float(S.mean()), "hpdi_low": slo, "hpdi_high": shi, "rhat": _rhat(S)},
        hdi_prob=hdi_prob,
        n_draws=draws,
        n_chains=chains,
        n_obs=int(y.size),
        draws=draws_d,
    )


# ---------------------------------------------------------------------------
# small-sample WEAT simulation (seed S2.3)
# ---------------------------------------------------------------------------
@validate_params({"means": ["array-like"], "sigma": [Interval(numbers.Real, 0, None, closed='neither')], "n_targets": [Interval(numbers.Integral, 1, 1000000, closed='both')], "n_attributes": [Interval(numbers.Integral, 1, 1000000, closed='both')], "n_sims": [Interval(numbers.Integral, 1, 100000000, closed='both')], "ddof": [Interval(numbers.Integral, 0, None, closed='left')], "random_state": ["random_state"]})
def weat_simulation(
    means: Sequence[float] = (0.0, 0.0, 0.0, 0.0),
    sigma: float = 0.05,
    *,
    n_targets: int = 2,
    n_attributes: int = 5,
    n_sims: int = 10_000,
    ddof: int = 0,
    random_state: Any = None,
) -> np.ndarray:
    """Effect sizes of simulated small WEATs (the Bayesian-WEAT abstract's table).

    Each of ``n_targets`` words in X and in Y has ``n_attributes`` similarities to A
    and to B, drawn from Normal(cell mean, sigma) with cell means
    ``means = (X->A, X->B, Y->A, Y->B)``; the WEAT effect size (mean statistic) is
    computed per simulation. Shows how unstable the classic effect size is: under
    the null (all means equal) |d| is scale-free, its median is about 1 and
    P(|d| >= 1.8) is about 0.10 for 2 vs 2 targets with ``ddof=0``; with ``ddof=1``
    |d| <= sqrt(3) for 2 vs 2.

    Returns
    -------
    numpy.ndarray of shape (n_sims,)

    Examples
    --------
    >>> d = weat_simulation(n_sims=20000, random_state=0)
    >>> bool(0.9 < np.median(np.abs(d)) < 1.1)
    True
    """
    func = "weat_simulation"
    means = np.asarray(means, dtype=np.float64)
    if means.shape != (4,) or not np.isfinite(means).all():
        raise ValueError(f"means must be 4 finite numbers (X->A, X->B, Y->A, Y->B); got {means.tolist()}.")
    sigma = check_interval(sigma, "sigma", low=0, func=func)
    n_targets = check_int(n_targets, "n_targets", low=1, func=func)
    n_attributes = check_int(n_attributes, "n_attributes", low=1, func=func)
    n_sims = check_int(n_sims, "n_sims", low=1, func=func)
    ddof = check_int(ddof, "ddof", low=0, high=2 * n_targets - 1, func=func)
    rng = check_random_state(random_state)
    t, a = n_targets, n_attributes
    sim = rng.normal(0.0, sigma, size=(n_sims, 2 * t, 2, a))
    sim[:, :t, 0] += means[0]
    sim[:, :t, 1] += means[1]
    sim[:, t:, 0] += means[2]
    sim[:, t:, 1] += means[3]
    s = sim[:, :, 0].mean(axis=2) - sim[:, :, 1].mean(axis=2)  # (n_sims, 2t)
    diff = s[:, :t].mean(axis=1) - s[:, t:].mean(axis=1)
    return diff / s.std(axis=1, ddof=ddof)


# ---------------------------------------------------------------------------
# gender direction and DirectBias (Bolukbasi et al.; P6)
# ---------------------------------------------------------------------------
DEFINITIONAL_PAIRS = (
    ("woman", "man"),
    ("daughter", "son"),
    ("mother", "father"),
    ("girl", "boy"),
    ("queen", "king"),
    ("wife", "husband"),
    ("madam", "sir"),
)


@validate_params({"pairs": ["array-like"], "normalize": ["boolean"]})
def gender_direction(
    embeddings: Any,
    pairs: Sequence[tuple[str, str]] = DEFINITIONAL_PAIRS,
    *,
    normalize: bool = True,
) -> GenderDirection:
    """Gender direction g = first principal component of the definitional pairs.

    For each (female, male) pair with mean mu_k, the rows v_f - mu_k and v_m - mu_k
    form a 2K x d matrix; g is its first right singular vector (PCA without further
    centring: the rows already sum to zero), oriented female-positive.

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    pairs : sequence of (female, male)
        Defaults to the 7 pairs of Matthews et al. (2021).
    normalize : bool
        Unit-normalise the word vectors first (Bolukbasi et al. do).

    Returns
    -------
    GenderDirection

    Examples
    --------
    >>> emb = {"she": [1.0, 0.2], "he": [-1.0, 0.2]}
    >>> g = gender_direction(emb, [("she", "he")])
    >>> np.round(g.vector, 3).tolist(), g.dominance
    ([1.0, 0.0], 1.0)
    """
    emb = as_embeddings(embeddings)
    pairs = [tuple(p) for p in pairs]
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError("pairs must be a non-empty list of (female, male) word pairs of equal length lists.")
    used, dropped = [], []
    rows = []
    for f, m in pairs:
        if f in emb and m in emb:
            vf = np.asarray(emb[f], dtype=np.float64)
            vm = np.asarray(emb[m], dtype=np.float64)
            if not (np.isfinite(vf).all() and np.isfinite(vm).all()):
                raise ValueError(f"the vector of {f!r} or {m!r} contains NaN or infinity.")
            if normalize:
                vf = vf / np.linalg.norm(vf)
                vm = vm / np.linalg.norm(vm)
            mu = (vf + vm) / 2
            rows += [vf - mu, vm - mu]
            used.append((f, m))
        else:
            dropped.append((f, m))
    if not used:
        raise ValueError(f"none of the definitional pairs has both vectors: {pairs}.")
    if dropped:
        warnings.warn(f"gender_direction: dropped pairs with a missing word: {dropped}", MissingWordsWarning, stacklevel=2)
    M = np.vstack(rows)
    _, sv, Vt = np.linalg.svd(M, full_matrices=False)
    ev = sv**2
    evr = ev / ev.sum() if ev.sum() > 0 else ev
    g = Vt[0]
    # orient: female words score higher on average
    score = np.mean([np.dot(M[2 * i], g) - np.dot(M[2 * i + 1], g) for i in range(len(used))])
    if score < 0:
        g = -g
    g = g / np.linalg.norm(g)
    dom = float(evr[0] - evr[1]) if evr.size > 1 else 1.0
    # one pair gives a rank-1 matrix: PC2 explains 0
    return GenderDirection(g, evr, dom, used, dropped)


@validate_params({"words": ["array-like"], "c": [Interval(numbers.Real, 0, None, closed='neither')], "on_missing": [Options({"drop", "raise"})]})
def direct_bias(
    embeddings: Any,
    words: Sequence[str],
    direction: Any,
    *,
    c: float = 1.0,
    on_missing: str = "drop",
) -> DirectBiasResult:
    """DirectBias_c = (1/|N|) sum_{w in N} |cos(w, g)|^c (Bolukbasi et al. 2016).

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    words : sequence of str
        Gender-neutral words N (e.g. professions).
    direction : GenderDirection or array-like of shape (d,)
    c : float
        Strictness (c = 1 in Matthews et al.).
    on_missing : {"drop", "raise"}

    Returns
    -------
    DirectBiasResult
        ``per_word`` holds the signed cos(w, g) (female positive).

    Examples
    --------
    >>> emb = {"nurse": [1.0, 1.0], "she": [1.0, 0.0], "he": [-1.0, 0.0]}
    >>> round(direct_bias(emb, ["nurse"], [1.0, 0.0]).value, 4)
    0.7071
    """
    c = check_interval(c, "c", low=0, closed="neither", func="direct_bias")
    emb = as_embeddings(embeddings)
    g = direction.vector if isinstance(direction, GenderDirection) else np.asarray(direction, dtype=np.float64)
    if g.ndim != 1 or g.shape[0] != emb.dim or not np.isfinite(g).all() or np.linalg.norm(g) == 0:
        raise ValueError(
            f"direction must be a finite non-zero vector of length {emb.dim} (the embedding dim); got shape {g.shape}."
        )
    L = emb.lookup(words, name="words", on_missing=on_missing)
    if L.missing:
        warnings.warn(f"direct_bias: dropped words with no vector: {L.missing}", MissingWordsWarning, stacklevel=2)
    cosv = (L.vectors / _safe_norm(L.vectors, L.words)) @ (g / np.linalg.norm(g))
    return DirectBiasResult(
        value=float(np.mean(np.abs(cosv) ** c)),
        c=c,
        per_word={w: float(v) for w, v in zip(L.words, cosv)},
        dropped=L.missing,
    )


@validate_params({"scores": ["array-like"], "counts": ["array-like", None]})
def gendered_form_bias(scores: Sequence[float], counts: Sequence[float] | None = None) -> float:
    """Per-profession bias over grammatical forms (Matthews et al. 2021, P6.5).

    The count-weighted mean sum_f n_f b_f / sum_f n_f of the per-form biases b_f (the
    paper's recommendation), or the unweighted mean when ``counts`` is None.

    Examples
    --------
    >>> # German "scientist": Wissenschaftler -0.06 (32,467), Wissenschaftlerin +0.32 (1,354)
    >>> round(gendered_form_bias([-0.06, 0.32], [32467, 1354]), 4), round(gendered_form_bias([-0.06, 0.32]), 2)
    (-0.0448, 0.13)
    """
    b = np.asarray(scores, dtype=np.float64).ravel()
    if b.size == 0 or not np.isfinite(b).all():
        raise ValueError("scores must be a non-empty list of finite per-form bias values.")
    if counts is None:
        return float(b.mean())
    n = np.asarray(counts, dtype=np.float64).ravel()
    if n.shape != b.shape:
        raise ValueError(f"counts has {n.size} entries but scores has {b.size}; give one count per form.")
    if not np.isfinite(n).all() or (n < 0).any() or n.sum() <= 0:
        raise ValueError("counts must be non-negative, finite and not all zero.")
    return float((n * b).sum() / n.sum())
