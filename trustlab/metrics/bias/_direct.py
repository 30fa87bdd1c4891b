"""Gender direction and DirectBias (Bolukbasi et al. 2016; as used by Matthews et al. 2021, P6)."""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import (
    Interval,
    Options,
    check_interval,
    validate_params,
)
from trustlab.metrics.bias._similarity import _unit_rows_checked, unit_rows
from trustlab.metrics.embeddings import MissingWordsWarning, as_embeddings


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

    Examples
    --------
    >>> g = gender_direction({"she": [1.0, 0.2], "he": [-1.0, 0.2]}, [("she", "he")])
    >>> isinstance(g, GenderDirection), g.pairs, g.dominance
    (True, [('she', 'he')], 1.0)
    """

    vector: np.ndarray
    explained_variance_ratio: np.ndarray
    dominance: float
    pairs: list
    dropped: list


@dataclass(frozen=True)
class DirectBiasResult(ResultMixin):
    """DirectBias_c = mean_w |cos(w, g)|^c, with the signed per-word cos(w, g).

    Attributes
    ----------
    value : float
        DirectBias_c over the words found.
    c : float
        The exponent.
    per_word : dict
        Word -> signed cos(w, g) (female positive).
    dropped : list
        Words without a vector.

    Examples
    --------
    >>> r = direct_bias({"nurse": [1.0, 1.0], "she": [1.0, 0.0]}, ["nurse"], [1.0, 0.0])
    >>> round(r.value, 4), {w: round(v, 4) for w, v in r.per_word.items()}, r.dropped
    (0.7071, {'nurse': 0.7071}, [])
    """

    value: float
    c: float
    per_word: dict
    dropped: list


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
                zero = [w for w, v in ((f, vf), (m, vm)) if not np.any(v)]
                if zero:
                    raise ValueError(f"cannot normalise the zero vector(s) of {zero} (pair ({f!r}, {m!r})); "
                                     "fix those rows of the embedding table, drop the pair, or pass "
                                     "normalize=False (Python API).")
                vf, vm = unit_rows(np.vstack([vf, vm]))
            mu = (vf + vm) / 2
            rows += [vf - mu, vm - mu]
            used.append((f, m))
        else:
            dropped.append((f, m))
    if not used:
        raise ValueError(f"none of the definitional pairs has both vectors: {pairs}.")
    if dropped:
        warnings.warn(
            f"gender_direction: dropped pairs with a missing word: {dropped}", MissingWordsWarning, stacklevel=2
        )
    M = np.vstack(rows)
    if not np.any(M):
        raise ValueError(f"the gender direction is undefined: the two words of every pair in {used} have "
                         "identical vectors. Check the embedding table.")
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


@validate_params(
    {
        "words": ["array-like"],
        "c": [Interval(numbers.Real, 0, None, closed="neither")],
        "on_missing": [Options({"drop", "raise"})],
    }
)
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
    if g.ndim != 1 or g.shape[0] != emb.dim or not np.isfinite(g).all() or not np.any(g):
        raise ValueError(
            f"direction must be a finite non-zero vector of length {emb.dim} (the embedding dim); got shape {g.shape}."
        )
    L = emb.lookup(words, name="words", on_missing=on_missing)
    if L.missing:
        warnings.warn(f"direct_bias: dropped words with no vector: {L.missing}", MissingWordsWarning, stacklevel=2)
    cosv = _unit_rows_checked(L.vectors, L.words) @ unit_rows(g[None, :])[0]
    return DirectBiasResult(
        value=float(np.mean(np.abs(cosv) ** c)),
        c=c,
        per_word={w: float(v) for w, v in zip(L.words, cosv)},
        dropped=L.missing,
    )


@validate_params({"scores": ["array-like"], "counts": ["array-like", None]})
def gendered_form_bias(scores: Sequence[float], counts: Sequence[float] | None = None) -> float:
    """Per-profession bias over grammatical forms (Matthews et al., TrustNLP 2021; their recommended weighted mean).

    The count-weighted mean sum_f n_f b_f / sum_f n_f of the per-form biases b_f (the
    paper's recommendation), or the unweighted mean when ``counts`` is None.

    Parameters
    ----------
    scores : sequence of float
        Bias b_f of each grammatical form f of the profession.
    counts : sequence of float, optional
        Corpus count n_f of each form (None: unweighted mean).

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


def _direction_vector(direction: Any, dim: int, func: str) -> np.ndarray:
    g = direction.vector if isinstance(direction, GenderDirection) else np.asarray(direction, dtype=np.float64)
    if g.ndim != 1 or g.shape[0] != dim or not np.isfinite(g).all() or not np.any(g):
        raise ValueError(f"{func}: direction must be a finite non-zero vector of length {dim} (the embedding "
                         f"dim), or a GenderDirection; got shape {g.shape}.")
    return g


@validate_params({"words": ["array-like"], "on_missing": [Options({"drop", "raise"})]})
def word_gender_bias(
    embeddings: Any,
    words: Sequence[str],
    direction: Any,
    *,
    on_missing: str = "drop",
) -> dict[str, float]:
    """Per-word signed gender bias b(w) = cos(w, g) (Matthews et al., TrustNLP 2021, Section 4, Figures 1–2).

    Female is positive, male negative when ``direction`` comes from
    :func:`gender_direction` (oriented female-positive). This is the per-word score that
    :func:`direct_bias` averages in absolute value, and that :func:`defining_set_bias`
    aggregates over the defining words.

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    words : sequence of str
    direction : GenderDirection or array-like of shape (d,)
    on_missing : {"drop", "raise"}
        Missing words are dropped with a :class:`MissingWordsWarning` (or rejected).

    Returns
    -------
    dict
        word -> cos(w, g), in the order of ``words`` (missing words left out).

    Examples
    --------
    >>> emb = {"she": [1.0, 0.2], "he": [-1.0, 0.2], "nurse": [0.6, 0.8]}
    >>> g = gender_direction(emb, [("she", "he")])
    >>> {w: round(v, 3) for w, v in word_gender_bias(emb, ["nurse", "he"], g).items()}
    {'nurse': 0.6, 'he': -0.981}
    """
    emb = as_embeddings(embeddings)
    g = _direction_vector(direction, emb.dim, "word_gender_bias")
    L = emb.lookup(words, name="words", on_missing=on_missing)
    if L.missing:
        warnings.warn(f"word_gender_bias: dropped words with no vector: {L.missing}", MissingWordsWarning,
                      stacklevel=2)
    if not L.words:
        return {}
    cosv = _unit_rows_checked(L.vectors, L.words) @ unit_rows(g[None, :])[0]
    return {w: float(v) for w, v in zip(L.words, cosv)}


@dataclass(frozen=True)
class DefiningSetBias(ResultMixin):
    """Aggregated per-word bias of the defining words (Matthews et al.'s Section 4.1, Figure 2).

    Attributes
    ----------
    female, male : float
        The aggregate ("mean" or "sum") of b(w) over the female and the male words.
    aggregate : str
    per_word : dict
        word -> b(w) for every defining word found.
    dropped : list
        Defining words without a vector.

    Examples
    --------
    >>> emb = {"she": [1.0, 0.0], "he": [-1.0, 0.0], "woman": [0.6, 0.8], "man": [-0.6, 0.8]}
    >>> pairs = [("she", "he"), ("woman", "man")]
    >>> r = defining_set_bias(emb, gender_direction(emb, pairs), pairs)
    >>> isinstance(r, DefiningSetBias), r.aggregate, round(r.female, 3), round(r.male, 3), r.dropped
    (True, 'mean', 0.8, -0.8, [])
    """

    female: float
    male: float
    aggregate: str
    per_word: dict
    dropped: list


@validate_params({"pairs": ["array-like"], "aggregate": [Options({"mean", "sum"})]})
def defining_set_bias(
    embeddings: Any,
    direction: Any,
    pairs: Sequence[tuple[str, str]] = DEFINITIONAL_PAIRS,
    *,
    aggregate: str = "mean",
) -> DefiningSetBias:
    """Defining-set summary: b(w) aggregated over the female and the male defining words (Figure 2).

    Matthews et al. (2021, Figure 2) summarise, per language, the gender bias of the words
    that define the direction. The paper does not say whether the bars are sums or means
    (an ambiguity of the catalogue), so both are offered; the mean (default) is comparable
    across languages with different numbers of pairs. Words are aggregated per side over
    the words that have a vector (missing ones are listed in ``dropped``).

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    direction : GenderDirection or array-like of shape (d,)
    pairs : sequence of (female, male)
        Defaults to the 7 pairs of Matthews et al.
    aggregate : {"mean", "sum"}

    Returns
    -------
    DefiningSetBias

    Examples
    --------
    >>> emb = {"she": [1.0, 0.2], "he": [-1.0, 0.2], "woman": [0.9, -0.1], "man": [-0.8, 0.3]}
    >>> pairs = [("she", "he"), ("woman", "man")]
    >>> r = defining_set_bias(emb, gender_direction(emb, pairs), pairs)
    >>> bool(r.female > 0 > r.male), sorted(r.per_word)
    (True, ['he', 'man', 'she', 'woman'])
    """
    emb = as_embeddings(embeddings)
    pairs = [tuple(p) for p in pairs]
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError("pairs must be a non-empty list of (female, male) word pairs.")
    g = _direction_vector(direction, emb.dim, "defining_set_bias")
    female = [f for f, _ in pairs]
    male = [m for _, m in pairs]
    dropped = [w for w in female + male if w not in emb]
    if dropped:
        warnings.warn(f"defining_set_bias: dropped words with no vector: {dropped}", MissingWordsWarning,
                      stacklevel=2)
    female = [w for w in female if w in emb]
    male = [w for w in male if w in emb]
    if not female or not male:
        raise ValueError(f"no {'female' if not female else 'male'} defining word has a vector; cannot summarise.")
    bf = word_gender_bias(emb, female, g)
    bm = word_gender_bias(emb, male, g)
    if not bf or not bm:
        raise ValueError(f"no {'female' if not bf else 'male'} defining word has a vector; cannot summarise.")
    agg = np.mean if aggregate == "mean" else np.sum
    return DefiningSetBias(female=float(agg(list(bf.values()))), male=float(agg(list(bm.values()))),
                           aggregate=aggregate, per_word={**bf, **bm}, dropped=dropped)
