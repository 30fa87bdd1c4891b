"""GECOBench (Wilming et al.): mass accuracy, the co-occurrence dataset bias, the Pattern Variant
and the Wilcoxon test of gender attribution differences."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import validate_params
from trustlab.metrics.explanation._common import _check_tokens, _mean_ci, _ragged


@validate_params({"attribution": ["array-like"], "word_ids": ["array-like", None]})
def aggregate_attributions(attribution: Any, word_ids: Sequence[int] | None = None) -> np.ndarray:
    """GECOBench aggregation of token attributions to normalised word importances.

    A 2-D ``(tokens, embedding_dims)`` attribution is first summed over the embedding
    dimensions; with ``word_ids`` (one word index per token, ``-1`` for special tokens to
    drop) sub-word tokens are summed into their word; finally the absolute values are
    normalised to sum to 1.

    Parameters
    ----------
    attribution : array of shape (tokens,) or (tokens, dims)
    word_ids : sequence of int, optional

    Returns
    -------
    numpy.ndarray
        Word-level importances summing to 1 (all zeros if every attribution is 0).

    Examples
    --------
    >>> aggregate_attributions([[1.0, -3.0], [0.5, 0.5], [2.0, 0.0]], word_ids=[0, 1, 1]).tolist()
    [0.4, 0.6]
    """
    a = np.asarray(attribution, dtype=np.float64)
    if a.ndim == 2:
        a = a.sum(axis=1)
    elif a.ndim != 1:
        raise ValueError(f"attribution must be 1-D (tokens) or 2-D (tokens, dims); got shape {a.shape}.")
    if a.size == 0:
        raise ValueError("attribution is empty.")
    if not np.all(np.isfinite(a)):
        raise ValueError("attribution contains NaN or infinity.")
    if word_ids is not None:
        w = np.asarray(word_ids, dtype=np.int64)
        if w.shape != a.shape:
            raise ValueError(f"word_ids has {w.size} entries but the attribution has {a.size} tokens.")
        keep = w >= 0
        if not keep.any():
            raise ValueError("word_ids marks every token as dropped (-1).")
        a = np.bincount(w[keep], weights=a[keep], minlength=int(w.max()) + 1)
    a = np.abs(a)
    s = a.sum()
    return a / s if s > 0 else a


@dataclass
class MassAccuracyResult(ResultMixin):
    """Result of :func:`mass_accuracy`: mean MA over sentences, 95% t-interval, per-sentence
    values (NaN for dropped sentences) and the indices dropped (all-zero attributions).

    Attributes
    ----------
    value : float
        Mean mass accuracy over the sentences kept.
    n : int
        Sentences kept.
    ci : (float, float)
        95% t-interval of ``value``.
    per_sentence : numpy.ndarray
        Mass accuracy per sentence (NaN where dropped).
    dropped : numpy.ndarray
        Indices of the sentences dropped (all-zero attributions).

    Examples
    --------
    >>> r = mass_accuracy([[0.5, -0.5, 0.0], [1.0, 3.0]], [[1, 0, 0], [0, 1]])
    >>> isinstance(r, MassAccuracyResult), r.n, r.dropped.tolist()
    (True, 2, [])
    """

    value: float
    n: int
    ci: tuple[float, float]
    per_sentence: np.ndarray = field(repr=False)
    dropped: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0, np.int64))


def _gt_ragged(ground_truth: Sequence[Any], name: str = "ground_truth") -> tuple[np.ndarray, np.ndarray]:
    gv, go = _ragged(ground_truth, name)
    if not np.all((gv == 0) | (gv == 1)):
        raise ValueError(f"{name} must be 0/1 per word (1 marks a ground-truth word).")
    return gv, go


@validate_params(
    {
        "attributions": ["array-like"],
        "ground_truth": ["array-like"],
        "word_ids": ["array-like", None],
        "tokens": ["array-like", None],
    }
)
def mass_accuracy(
    attributions: Sequence[Any],
    ground_truth: Sequence[Any],
    *,
    word_ids: Sequence[Sequence[int] | None] | None = None,
    tokens: Sequence[Any] | None = None,
) -> MassAccuracyResult:
    """GECOBench mass accuracy: the share of attribution mass on the ground-truth words.

    ``MA(h, s) = sum_j s_j h_j`` with ``s = |a| / sum |a|`` (after
    :func:`aggregate_attributions` for token-level or 2-D inputs), averaged over
    sentences. Sentences whose attributions are all zero have no MA; they are dropped and
    listed in ``dropped``.

    Parameters
    ----------
    attributions : sequence of arrays
        Per sentence: word-level vector, or token-level (tokens,) / (tokens, dims) with
        ``word_ids``.
    ground_truth : sequence of 0/1 arrays
        Per sentence, one label per word (GECO ``ground_truth``).
    word_ids : sequence of (sequence of int or None), optional
        Token-to-word maps (``-1`` drops a token), one per sentence.
    tokens : sequence of str or token lists, optional
        When given, checked against the word-level lengths.

    Returns
    -------
    MassAccuracyResult

    Raises
    ------
    ValueError
        Empty input, NaN, non-0/1 ground truth, or attribution vectors whose length does
        not match the words.

    Examples
    --------
    >>> r = mass_accuracy([[0.5, -0.5, 0.0], [1.0, 3.0]], [[1, 0, 0], [0, 1]])
    >>> r.value, r.per_sentence.tolist()
    (0.625, [0.5, 0.75])
    """
    from trustlab.kernels.explain import select_kernel

    if isinstance(attributions, (str, bytes)) or not isinstance(attributions, (Sequence, np.ndarray)):
        raise TypeError("attributions must be a sequence of arrays, one per sentence.")
    if len(attributions) == 0:
        raise ValueError("attributions is empty; at least one sentence is required.")
    if len(attributions) != len(ground_truth):
        raise ValueError(
            f"attributions has {len(attributions)} sentences but ground_truth has {len(ground_truth)}."
        )
    if word_ids is not None and len(word_ids) != len(attributions):
        raise ValueError(f"word_ids has {len(word_ids)} entries but attributions has {len(attributions)}.")
    av = None
    if word_ids is None:
        try:  # fast path: word-level 1-D vectors, validated once as a packed array
            av, ao = _ragged(attributions, "attributions")
        except ValueError as exc:
            if "must be 1-D" not in str(exc):
                raise
    if av is None:
        words = []
        for i, a in enumerate(attributions):
            wid = None if word_ids is None else word_ids[i]
            arr = np.asarray(a, dtype=np.float64)
            if arr.ndim == 1 and wid is None:
                words.append(arr)  # checked once, packed, by _ragged below
            else:
                try:
                    words.append(aggregate_attributions(arr, wid))
                except ValueError as exc:
                    raise ValueError(f"attributions[{i}]: {exc}") from None
        av, ao = _ragged(words, "attributions")
    gv, go = _gt_ragged(ground_truth)
    la, lg = np.diff(ao), np.diff(go)
    bad = np.flatnonzero(la != lg)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"attributions[{i}] has {int(la[i])} word attributions but ground_truth[{i}] has {int(lg[i])} words; "
            "attribution vectors must have one entry per word (pass word_ids to aggregate sub-word tokens)."
        )
    _check_tokens(tokens, la, "attributions")
    per = select_kernel("ragged_mass_accuracy", int(av.size))(av, ao, gv)
    keep = ~np.isnan(per)
    if not keep.any():
        raise ValueError("every sentence has all-zero attributions; mass accuracy is undefined.")
    vals = per[keep]
    return MassAccuracyResult(
        value=float(vals.mean()),
        n=int(vals.size),
        ci=_mean_ci(vals),
        per_sentence=per,
        dropped=np.flatnonzero(~keep).astype(np.int64),
    )


@validate_params({"ground_truth": ["array-like"]})
def mass_accuracy_uniform_baseline(ground_truth: Sequence[Any]) -> MassAccuracyResult:
    """Expected mass accuracy of uniform random attributions ``s ~ U(0,1)^d``: mean ``k/d``.

    By exchangeability each word receives an equal expected share of the normalised mass,
    so ``E[MA] = k/d`` exactly per sentence (``k`` ground-truth words out of ``d``).

    Parameters
    ----------
    ground_truth : sequence of array-like
        0/1 per word of each sentence (1 = ground-truth word).

    Examples
    --------
    >>> mass_accuracy_uniform_baseline([[1, 0, 0, 0], [1, 1]]).value
    0.625
    >>> from trustlab.metrics.explanation import load_geco
    >>> round(mass_accuracy_uniform_baseline(load_geco("all", "test").ground_truth).value, 3)
    0.169
    """
    gv, go = _gt_ragged(ground_truth)
    lens = np.diff(go)
    per = np.add.reduceat(gv, go[:-1]) / lens
    return MassAccuracyResult(value=float(per.mean()), n=int(per.size), ci=(math.nan, math.nan), per_sentence=per)


@dataclass
class CooccurrenceBiasResult(ResultMixin):
    """Result of :func:`geco_cooccurrence_bias`: ``value = C_F / (C_F + C_M)`` (0.5 = balanced).

    Attributes
    ----------
    value : float
        ``C_F / (C_F + C_M)``.
    count_female, count_male : int
        Co-occurrence counts C_F and C_M.
    n_sentences : int

    Examples
    --------
    >>> r = geco_cooccurrence_bias([["she", "ran"], ["he", "sat"]], [0, 1])
    >>> isinstance(r, CooccurrenceBiasResult), r.value, r.n_sentences
    (True, 0.5, 2)
    """

    value: float
    count_female: int
    count_male: int
    n_sentences: int


@validate_params(
    {
        "sentences": ["array-like"],
        "targets": ["array-like"],
        "male_terms": ["array-like"],
        "female_terms": ["array-like"],
        "count_gender_terms": ["boolean"],
    }
)
def geco_cooccurrence_bias(
    sentences: Sequence[Sequence[str]],
    targets: Sequence[int],
    *,
    male_terms: Sequence[Sequence[str]] = (("he",), ("him", "his")),
    female_terms: Sequence[Sequence[str]] = (("she",), ("her",)),
    count_gender_terms: bool = True,
) -> CooccurrenceBiasResult:
    """GECO co-occurrence dataset bias ``bias_C(D) = C(D^F) / (C(D^F) + C(D^M))`` (GECOBench A.1.3).

    For each term group of a gender and each sentence of that gender (target 1 = male,
    0 = female) that contains a term of the group, every word occurrence counts (words
    lower-cased, spaces removed, ``','`` and ``'.'`` tokens dropped). 0.5 means balanced.

    Parameters
    ----------
    sentences : sequence of token lists
    targets : sequence of int (1 = male, 0 = female)
    male_terms, female_terms : sequence of term groups
        The GECOBench groups ``[[he], [him, his]]`` and ``[[she], [her]]``.
    count_gender_terms : bool, default True
        The released code also counts the gender terms themselves as co-occurring words
        (its filter never matches); True reproduces the published 0.4999 (D_A) and 0.4753
        (D_S) on the training splits. False excludes them (0.4998 / 0.4751).

    Returns
    -------
    CooccurrenceBiasResult

    Examples
    --------
    >>> from trustlab.metrics.explanation import load_geco
    >>> d = load_geco("all", "train")
    >>> round(geco_cooccurrence_bias(d.sentences, d.targets).value, 4)
    0.4999
    >>> d = load_geco("subj", "train")
    >>> round(geco_cooccurrence_bias(d.sentences, d.targets).value, 4)
    0.4753
    """
    if len(sentences) == 0:
        raise ValueError("sentences is empty.")
    t = np.asarray(targets)
    if t.shape != (len(sentences),):
        raise ValueError(f"targets has shape {t.shape} but there are {len(sentences)} sentences.")
    if not np.all((t == 0) | (t == 1)):
        raise ValueError("targets must be 1 (male) or 0 (female).")
    groups_m = [tuple(g) for g in male_terms]
    groups_f = [tuple(g) for g in female_terms]
    gender = {w for g in groups_m + groups_f for w in g}
    drop = {",", "."}
    counts = {0: 0, 1: 0}
    for s, tg in zip(sentences, t.tolist()):
        if isinstance(s, str):
            raise TypeError("each sentence must be a list of tokens, not a string.")
        words = [w.lower().replace(" ", "") for w in s]
        words = [w for w in words if w not in drop]
        present = set(words)
        n_words = len(words) if count_gender_terms else sum(1 for w in words if w not in gender)
        for g in groups_m if tg == 1 else groups_f:
            if any(term in present for term in g):
                counts[tg] += n_words
    cf, cm = counts[0], counts[1]
    if cf + cm == 0:
        raise ValueError("no sentence contains a gender term of its own gender; the bias is undefined.")
    return CooccurrenceBiasResult(value=cf / (cf + cm), count_female=cf, count_male=cm, n_sentences=len(sentences))


@validate_params(
    {
        "sentences": ["array-like"],
        "targets": ["array-like"],
        "fit_sentences": ["array-like", None],
        "fit_targets": ["array-like", None],
    }
)
def pattern_variant_attributions(
    sentences: Sequence[Sequence[str]],
    targets: Sequence[int],
    *,
    fit_sentences: Sequence[Sequence[str]] | None = None,
    fit_targets: Sequence[int] | None = None,
) -> list[np.ndarray]:
    """GECOBench Pattern Variant: a global, model-free attribution ``s_j = |Cov(tfidf_j(x), y)|``.

    Word ``j``'s importance is the absolute covariance, over the fitting sentences, between
    its tf-idf column (scikit-learn ``CountVectorizer`` on lower-cased words +
    ``TfidfTransformer`` with its defaults: smooth idf, l2 norm) and the target; every
    word of a sentence gets the value of its vocabulary entry (0 if unseen).

    **Approximation:** GECOBench works at BERT-token level; this is the word-level variant
    (on the GECO test splits it gives mass accuracy 0.992 for D_A and 0.749 for D_S, the
    seed catalogue's anchors).

    Parameters
    ----------
    sentences : sequence of token lists
        Sentences to attribute.
    targets : sequence of int
        Their labels (used for fitting when ``fit_*`` are not given).
    fit_sentences, fit_targets : optional
        Fit the tf-idf and covariances on another set (e.g. the training split).

    Returns
    -------
    list of numpy.ndarray
        One non-negative vector per sentence (pass to :func:`mass_accuracy`).

    Examples
    --------
    >>> from trustlab.metrics.explanation import load_geco
    >>> d = load_geco("all", "test")
    >>> round(mass_accuracy(pattern_variant_attributions(d.sentences, d.targets), d.ground_truth).value, 3)
    0.992
    """
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    fs = sentences if fit_sentences is None else fit_sentences
    ft = targets if fit_targets is None else fit_targets
    if len(sentences) == 0 or len(fs) == 0:
        raise ValueError("sentences is empty.")
    y = np.asarray(ft, dtype=np.float64)
    if y.shape != (len(fs),):
        raise ValueError(f"targets has shape {y.shape} but there are {len(fs)} fitting sentences.")
    if len(fs) < 2:
        raise ValueError("the covariance needs at least 2 fitting sentences.")
    if any(isinstance(x, str) for x in fs) or any(isinstance(x, str) for x in sentences):
        raise TypeError("each sentence must be a list of tokens, not a string.")
    cv = CountVectorizer(analyzer=lambda toks: [str(w).lower() for w in toks])
    X = TfidfTransformer().fit_transform(cv.fit_transform(fs))
    yc = y - y.mean()
    cov = np.abs(np.asarray(X.T @ yc).ravel() / (len(y) - 1))  # columns' mean drops out: sum(yc) = 0
    voc = cv.vocabulary_
    return [np.array([cov[voc[w.lower()]] if w.lower() in voc else 0.0 for w in map(str, s)]) for s in sentences]


@dataclass
class AttributionDifferenceResult(ResultMixin):
    """Result of :func:`attribution_difference_test`: mean ``|s(x^F) - s(x^M)|`` on ground-truth
    words, and the Wilcoxon signed-rank test of the signed differences.

    Attributes
    ----------
    value : float
        Mean ``|s(x^F) - s(x^M)|`` over the ground-truth words.
    statistic, pvalue : float
        Wilcoxon signed-rank statistic and p-value of the signed differences.
    n_words : int
        Ground-truth words compared.
    differences : numpy.ndarray
        The signed differences.

    Examples
    --------
    >>> r = attribution_difference_test([[0.2, 0.8], [0.5, 0.5]], [[0.4, 0.6], [0.1, 0.9]], [[1, 1], [1, 0]])
    >>> isinstance(r, AttributionDifferenceResult), r.n_words, r.pvalue
    (True, 3, 0.5)
    """

    value: float
    statistic: float
    pvalue: float
    n_words: int
    differences: np.ndarray = field(repr=False)


@validate_params(
    {
        "attributions_female": ["array-like"],
        "attributions_male": ["array-like"],
        "ground_truth": ["array-like"],
        "normalise": ["boolean"],
    }
)
def attribution_difference_test(
    attributions_female: Sequence[Any],
    attributions_male: Sequence[Any],
    ground_truth: Sequence[Any],
    *,
    normalise: bool = True,
) -> AttributionDifferenceResult:
    """GECOBench gender attribution difference on the ground-truth words of paired sentences.

    For sentence pairs (female / male version of the same sentence, same length),
    ``d = s(f, x^F) - s(f, x^M)`` on every ground-truth word; reports mean ``|d|`` and a
    two-sided Wilcoxon signed-rank test of ``d`` (scipy) against 0.

    Parameters
    ----------
    attributions_female, attributions_male : sequence of 1-D arrays
        Word-level attributions of the paired sentences, in the same order.
    ground_truth : sequence of 0/1 arrays
        Ground-truth masks (identical within a pair).
    normalise : bool, default True
        Take ``|a| / sum |a|`` per sentence first (GECOBench's normalisation).

    Examples
    --------
    >>> r = attribution_difference_test([[0.2, 0.8], [0.5, 0.5]], [[0.4, 0.6], [0.1, 0.9]], [[1, 1], [1, 0]])
    >>> r.n_words, round(r.value, 3)
    (3, 0.267)
    """
    from scipy.stats import wilcoxon

    fv, fo = _ragged(attributions_female, "attributions_female")
    mv, mo = _ragged(attributions_male, "attributions_male")
    gv, go = _gt_ragged(ground_truth)
    if not (np.array_equal(fo, mo) and np.array_equal(fo, go)):
        raise ValueError(
            "attributions_female, attributions_male and ground_truth must have the same number of "
            "sentences and one entry per word in each."
        )
    if normalise:
        def norm(v, o):
            a = np.abs(v)
            tot = np.add.reduceat(a, o[:-1])
            if np.any(tot == 0):
                raise ValueError("a sentence has all-zero attributions; cannot normalise.")
            return a / np.repeat(tot, np.diff(o))
        fv, mv = norm(fv, fo), norm(mv, mo)
    d = (fv - mv)[gv == 1]
    if d.size == 0:
        raise ValueError("no ground-truth word to compare.")
    if np.all(d == 0):
        stat, p = 0.0, 1.0
    else:
        res = wilcoxon(d)
        stat, p = float(res.statistic), float(res.pvalue)
    return AttributionDifferenceResult(float(np.abs(d).mean()), stat, p, int(d.size), d)
