"""Statistics around per-word bias scores and dataset sanity checks.

* :func:`bias_score_ttest` (Matthews et al., "Gender Bias in Natural Language Processing Across
  Human Languages", TrustNLP 2021): t-test between per-word bias scores from two definitions
  (e.g. the original Bolukbasi sets vs modified ones). The
  paper does not say paired or independent; both are offered and the result says which.
* :func:`cross_language_correlation` (Matthews et al. 2021, Fig. 6): Pearson correlation between languages'
  per-profession bias vectors, plus an average-linkage hierarchical clustering on 1 − r.
* :func:`token_share` (Matthews et al. 2021, word-count statistics): percentage of target tokens
  (e.g. professions) among all tokens.
* :func:`tfidf_target_correlation` (Wilming et al., GECOBench, Fig. 3): Pearson r between every word's
  tf-idf column and the target, the dataset sanity check (he/she/his/her rank top on GECO).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from trustlab._validation import Interval, Options, check_option, validate_params

__all__ = ["bias_score_ttest", "TTestResult", "cross_language_correlation", "CrossLanguageResult",
           "token_share", "tfidf_target_correlation"]


@dataclass
class TTestResult:
    """Result of :func:`bias_score_ttest`: the t statistic, two-sided p-value, degrees of
    freedom, the test used, and the mean difference (a − b)."""

    statistic: float
    p_value: float
    df: float
    test: str
    mean_difference: float


def _vec(x: Any, name: str, min_size: int = 2) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or a.size < min_size:
        raise ValueError(f"{name} must be a 1-D array with at least {min_size} values; got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return a


@validate_params({"a": ["array-like"], "b": ["array-like"], "test": [Options({"paired", "welch", "student"})]})
def bias_score_ttest(a: Any, b: Any, *, test: str = "paired") -> TTestResult:
    """Two-sided t-test between two sets of per-word bias scores (Matthews et al. 2021).

    Parameters
    ----------
    a, b : 1-D arrays
        Per-word scores, e.g. cos(w, g) with the original and with the modified gender
        direction. ``"paired"`` needs the same words in the same order.
    test : {"paired", "welch", "student"}
        Paired t-test (scipy ``ttest_rel``), Welch's unequal-variance test, or Student's
        pooled-variance test (``ttest_ind``).

    Returns
    -------
    TTestResult

    Examples
    --------
    >>> r = bias_score_ttest([0.1, 0.2, 0.3, 0.4], [0.1, 0.1, 0.2, 0.3])   # differences 0, .1, .1, .1
    >>> round(r.statistic, 4), r.df, r.test
    (3.0, 3.0, 'paired')
    """
    from scipy import stats

    test = check_option(test, "test", ("paired", "welch", "student"), func="bias_score_ttest")
    a = _vec(a, "a")
    b = _vec(b, "b")
    if test == "paired":
        if a.shape != b.shape:
            raise ValueError(f"a paired test needs equal lengths; got {a.size} and {b.size}. Use test='welch'.")
        r = stats.ttest_rel(a, b)
        df = a.size - 1.0
    else:
        r = stats.ttest_ind(a, b, equal_var=(test == "student"))
        df = float(getattr(r, "df", np.nan))
    return TTestResult(float(r.statistic), float(r.pvalue), float(df), test, float(a.mean() - b.mean()))


@dataclass
class CrossLanguageResult:
    """Result of :func:`cross_language_correlation`: the Pearson matrix (pandas DataFrame,
    languages × languages), the SciPy linkage matrix (average linkage on 1 − r), the
    dendrogram leaf order, and the flat cluster label per language when asked for."""

    correlation: Any
    linkage: np.ndarray = field(repr=False)
    order: list = field(default_factory=list)
    clusters: dict = field(default_factory=dict)


@validate_params({"vectors": ["mapping"], "n_clusters": [Interval(numbers.Integral, 1, None, closed='left'), None]})
def cross_language_correlation(vectors: Mapping[str, Any], *, n_clusters: int | None = None) -> CrossLanguageResult:
    """Pearson correlation of per-profession bias vectors across languages, with clustering
    (Matthews et al. 2021, Fig. 6).

    Parameters
    ----------
    vectors : mapping language -> 1-D array
        The (weighted) bias score of each profession, professions in the same order for all
        languages (NaN entries are not allowed: drop professions missing in any language).
    n_clusters : int, optional
        Also cut the dendrogram into this many flat clusters.

    Returns
    -------
    CrossLanguageResult

    Examples
    --------
    >>> r = cross_language_correlation({"en": [0.1, 0.3, -0.2, 0.0], "es": [0.2, 0.5, -0.3, 0.1],
    ...                                 "de": [-0.1, -0.2, 0.3, 0.0]}, n_clusters=2)
    >>> round(float(r.correlation.loc["en", "es"]), 3), r.clusters["en"] == r.clusters["es"] != r.clusters["de"]
    (0.994, True)
    """
    import pandas as pd
    from scipy.cluster.hierarchy import fcluster, leaves_list, linkage
    from scipy.spatial.distance import squareform

    if len(vectors) < 2:
        raise ValueError(f"need at least 2 languages; got {len(vectors)}.")
    langs = list(vectors)
    M = (
        np.vstack([_vec(vectors[k], f"vectors[{k!r}]") for k in langs])
        if len({np.size(v) for v in vectors.values()}) == 1
        else None
    )
    if M is None:
        raise ValueError("all languages must have the same number of professions; got sizes "
                         f"{ {k: int(np.size(v)) for k, v in vectors.items()} }.")
    if np.any(M.std(axis=1) == 0):
        bad = [k for k, s in zip(langs, M.std(axis=1)) if s == 0]
        raise ValueError(f"constant bias vector(s) for {bad}: the correlation is undefined.")
    R = np.corrcoef(M)
    D = np.clip(1.0 - R, 0.0, 2.0)
    np.fill_diagonal(D, 0.0)
    Z = linkage(squareform(D, checks=False), method="average")
    order = [langs[i] for i in leaves_list(Z)]
    clusters = {}
    if n_clusters is not None:
        lab = fcluster(Z, t=int(n_clusters), criterion="maxclust")
        clusters = {k: int(c) for k, c in zip(langs, lab)}
    return CrossLanguageResult(pd.DataFrame(R, index=langs, columns=langs), Z, order, clusters)


@validate_params({"documents": ["array-like"], "targets": ["array-like"], "lowercase": ["boolean"]})
def token_share(documents: Sequence[Sequence[str]], targets: Sequence[str], *, lowercase: bool = True) -> dict:
    """Percentage of target tokens among all tokens, overall and per target (Matthews et al. 2021).

    Parameters
    ----------
    documents : sequence of sequence of str
        Tokenised documents.
    targets : sequence of str
        The target tokens (e.g. professions).
    lowercase : bool
        Compare lower-cased tokens.

    Examples
    --------
    >>> token_share([["the", "nurse", "and", "the", "Doctor"], ["a", "nurse"]], ["nurse", "doctor"])
    {'percent': 42.857142857142854, 'n_tokens': 7, 'n_target': 3, 'per_target': {'nurse': 2, 'doctor': 1}}
    """
    if isinstance(documents, str) or any(isinstance(d, str) for d in documents):
        raise TypeError("documents must be token lists, not strings; split them first.")
    norm = (lambda w: str(w).lower()) if lowercase else str
    tset = [norm(t) for t in targets]
    if not tset:
        raise ValueError("targets is empty.")
    per = {t: 0 for t in tset}
    n = 0
    for d in documents:
        for w in d:
            n += 1
            w = norm(w)
            if w in per:
                per[w] += 1
    if n == 0:
        raise ValueError("documents contain no tokens.")
    hit = sum(per.values())
    return {"percent": 100.0 * hit / n, "n_tokens": n, "n_target": hit, "per_target": per}


@validate_params(
    {
        "sentences": ["array-like"],
        "targets": ["array-like"],
        "top": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }
)
def tfidf_target_correlation(sentences: Sequence[Sequence[str]], targets: Sequence[Any], *, top: int | None = None):
    """Pearson r between each word's tf-idf column and the target (Wilming et al., GECOBench, Fig. 3).

    tf-idf as in GECOBench: scikit-learn ``CountVectorizer`` on lower-cased words and
    ``TfidfTransformer`` with its defaults (smooth idf, l2 row norm). Words whose column is
    constant get r = NaN and are listed last.

    Parameters
    ----------
    sentences : sequence of sequence of str
        Tokenised sentences.
    targets : sequence
        Binary target per sentence (e.g. 1 = male, 0 = female).
    top : int, optional
        Return only the first ``top`` rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``word`` and ``r``, sorted by decreasing |r| (first ``top`` rows if given).

    Examples
    --------
    >>> s = [["he", "ran"], ["she", "ran"], ["he", "sat"], ["she", "sat"]]
    >>> df = tfidf_target_correlation(s, [1, 0, 1, 0])
    >>> df.word.tolist()[:2], df.r.round(3).tolist()[:2]
    (['he', 'she'], [1.0, -1.0])
    """
    import pandas as pd
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    if len(sentences) < 3:
        raise ValueError(f"need at least 3 sentences for a correlation; got {len(sentences)}.")
    if any(isinstance(x, str) for x in sentences):
        raise TypeError("each sentence must be a list of tokens, not a string.")
    y = _vec(targets, "targets", min_size=3)
    if y.size != len(sentences):
        raise ValueError(f"targets has {y.size} entries but there are {len(sentences)} sentences.")
    if y.std() == 0:
        raise ValueError("targets is constant; the correlation is undefined.")
    cv = CountVectorizer(analyzer=lambda toks: [str(w).lower() for w in toks])
    X = TfidfTransformer().fit_transform(cv.fit_transform(sentences)).tocsc()
    n = y.size
    mx = np.asarray(X.mean(axis=0)).ravel()
    ex2 = np.asarray(X.multiply(X).mean(axis=0)).ravel()
    sx = np.sqrt(np.maximum(ex2 - mx**2, 0.0))
    cov = np.asarray(X.T @ (y - y.mean())).ravel() / n
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(sx > 1e-15, cov / (sx * y.std()), np.nan)
    words = cv.get_feature_names_out()
    df = pd.DataFrame({"word": words, "r": r})
    df = (
        df.assign(_k=np.where(np.isnan(r), np.inf, -np.abs(r)))
        .sort_values(["_k", "word"], kind="stable")
        .drop(columns="_k")
    )
    df = df.reset_index(drop=True)
    return df.head(top) if top is not None else df
