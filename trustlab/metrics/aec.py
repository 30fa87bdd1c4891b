"""Accountable Error Characterization (AEC) error classifier (Misra, Liu & Mahmud, TrustNLP 2021).

The third step of the AEC pipeline: given interpretable features of instances a base classifier has
already labelled, and whether it was wrong on each, train a two-class *error classifier*:

1. **Balanced undersampling**: the majority class (usually the correct predictions) is
   sampled without replacement down to the size of the minority class (4,655 + 4,655 = 9,310
   in the paper).
2. **80/20 split** (stratified): 7,448 / 1,862 in the paper.
3. **Random forest** (scikit-learn) with **5-fold stratified CV** on the 80% part, refit on
   all of it, scored on the 20% held out (accuracy and :func:`precision_at_k` of P(error)).
4. **Feature ranking** by impurity importance (the paper lists the top 100).

:func:`conversational_cues` computes the model-free conversational-cue features (AEC feature
group (d); Oraby et al. 2017 lexical cues, normalised by sentence length);
:mod:`trustlab.metrics.aec_features` computes the
dependency-triple, NRC-emotion (your lexicon file) and entity-type features (a–c) from your
spaCy-like parses, and :func:`~trustlab.metrics.aec_features.aec_feature_matrix` all four.
"""
from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from trustlab._validation import Interval, check_int, check_interval, check_random_state, validate_params
from trustlab.metrics.explanation import precision_at_k

__all__ = ["balanced_undersample", "error_classifier", "ErrorClassifierResult", "conversational_cues",
           "CUE_NAMES"]


def _seed(random_state: Any) -> int:
    return int(check_random_state(random_state).integers(0, 2**31 - 1))


def _labels(is_error: Any, n: int | None = None) -> np.ndarray:
    e = np.asarray(is_error)
    if e.ndim != 1 or e.size == 0:
        raise ValueError(f"is_error must be a non-empty 1-D array of bool/0-1; got shape {e.shape}.")
    if not np.all((e == 0) | (e == 1)):
        raise ValueError("is_error must be boolean or 0/1 (1 = the base model was wrong).")
    if n is not None and e.size != n:
        raise ValueError(f"is_error has {e.size} entries but X has {n} rows.")
    return e.astype(np.int64)


@validate_params({"is_error": ["array-like"], "random_state": ["random_state"]})
def balanced_undersample(is_error: Any, random_state: Any = None) -> np.ndarray:
    """Indices of a class-balanced subsample: every minority instance plus an equal number of
    majority instances drawn without replacement (AEC, Misra et al. 2021).

    Returns the sorted indices into ``is_error``.

    Parameters
    ----------
    is_error : array-like of bool or 0/1, shape (n,)
        Whether the base classifier was wrong on each instance.
    random_state : None, int or numpy.random.Generator
        Seed of the draw.

    Examples
    --------
    >>> idx = balanced_undersample([0, 0, 0, 1, 0, 1, 0], random_state=0)
    >>> len(idx), int(sum([0, 0, 0, 1, 0, 1, 0][i] for i in idx))
    (4, 2)
    """
    e = _labels(is_error)
    err = np.flatnonzero(e == 1)
    ok = np.flatnonzero(e == 0)
    if err.size == 0 or ok.size == 0:
        raise ValueError(f"is_error needs both classes; got {err.size} errors and {ok.size} correct predictions.")
    rng = check_random_state(random_state)
    k = min(err.size, ok.size)
    if ok.size > k:
        ok = rng.choice(ok, size=k, replace=False)
    else:
        err = rng.choice(err, size=k, replace=False)
    return np.sort(np.concatenate([err, ok]))


@dataclass
class ErrorClassifierResult:
    """Result of :func:`error_classifier`.

    ``model`` is the fitted :class:`sklearn.ensemble.RandomForestClassifier`; ``cv_scores``
    the 5 fold accuracies on the training part; ``test_accuracy`` and ``test_precision_at_k``
    (dict K -> P@K of P(error) on the held-out part); ``ranking`` the ``(feature, importance)``
    pairs, most important first (at most ``top``); the index arrays say which rows of ``X``
    were used for training and testing.
    """

    model: Any = field(repr=False)
    cv_scores: np.ndarray
    test_accuracy: float
    test_precision_at_k: dict
    ranking: list = field(repr=False)
    train_index: np.ndarray = field(repr=False)
    test_index: np.ndarray = field(repr=False)

    @property
    def n_train(self) -> int:
        return int(self.train_index.size)

    @property
    def n_test(self) -> int:
        return int(self.test_index.size)

    def error_probability(self, X: Any) -> np.ndarray:
        """P(error) for new (e.g. unlabelled) instances, the AEC ranking score."""
        X = np.asarray(X, dtype=np.float64)
        return self.model.predict_proba(X)[:, list(self.model.classes_).index(1)]


@validate_params(
    {
        "X": ["array-like"],
        "is_error": ["array-like"],
        "feature_names": ["array-like", None],
        "undersample": ["boolean"],
        "test_size": [Interval(numbers.Real, 0, 1, closed="neither")],
        "cv": [Interval(numbers.Integral, 2, 1000, closed="both")],
        "n_estimators": [Interval(numbers.Integral, 1, 100000, closed="both")],
        "top": [Interval(numbers.Integral, 1, None, closed="left")],
        "k": ["array-like"],
        "random_state": ["random_state"],
    }
)
def error_classifier(
    X: Any,
    is_error: Any,
    *,
    feature_names: Sequence[str] | None = None,
    undersample: bool = True,
    test_size: float = 0.2,
    cv: int = 5,
    n_estimators: int = 100,
    top: int = 100,
    k: Sequence[int] = (10, 20, 30, 50, 100),
    random_state: Any = None,
) -> ErrorClassifierResult:
    """Train the AEC random-forest error classifier and rank its features.

    Parameters
    ----------
    X : array of shape (n, n_features)
        Interpretable features per instance (numeric, finite).
    is_error : array of shape (n,)
        1 where the base classifier was wrong.
    feature_names : sequence of str, optional
        Names for the ranking (default ``f0, f1, …``).
    undersample : bool
        Balance the classes first (:func:`balanced_undersample`); the paper does.
    test_size : float
        Held-out fraction (0.2 in the paper), stratified.
    cv : int
        Folds of stratified cross-validation on the training part (5).
    n_estimators : int
        Trees in the forest.
    top : int
        Length of the feature ranking (100 in the paper).
    k : sequence of int
        K values for precision at K on the held-out part (those larger than it are skipped).
    random_state : None, int or Generator
        Drives the undersampling, the split, the folds and the forest.

    Returns
    -------
    ErrorClassifierResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((400, 3))
    >>> err = (X[:, 1] + 0.3 * rng.standard_normal(400) > 0.8).astype(int)
    >>> r = error_classifier(X, err, feature_names=["a", "b", "c"], k=[10], random_state=0)
    >>> r.ranking[0][0], r.n_train + r.n_test == 2 * int(err.sum())
    ('b', True)
    >>> r.test_accuracy > 0.8
    True
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score, train_test_split

    Xa = np.asarray(X, dtype=np.float64)
    if Xa.ndim != 2 or Xa.shape[0] == 0 or Xa.shape[1] == 0:
        raise ValueError(f"X must be a 2-D (instances, features) array; got shape {Xa.shape}.")
    if not np.all(np.isfinite(Xa)):
        raise ValueError("X contains NaN or infinity; impute or drop those features first.")
    e = _labels(is_error, Xa.shape[0])
    names = [f"f{j}" for j in range(Xa.shape[1])] if feature_names is None else [str(n) for n in feature_names]
    if len(names) != Xa.shape[1]:
        raise ValueError(f"feature_names has {len(names)} names but X has {Xa.shape[1]} features.")
    test_size = check_interval(test_size, "test_size", low=0, high=1, func="error_classifier")
    cv = check_int(cv, "cv", low=2, func="error_classifier")
    n_estimators = check_int(n_estimators, "n_estimators", low=1, func="error_classifier")
    top = check_int(top, "top", low=1, func="error_classifier")
    rng = check_random_state(random_state)
    idx = balanced_undersample(e, rng) if undersample else np.arange(e.size)
    if min(int(e[idx].sum()), int((1 - e[idx]).sum())) < cv:
        raise ValueError(f"too few instances per class for {cv}-fold CV after undersampling "
                         f"({int(e[idx].sum())} errors, {int((1 - e[idx]).sum())} correct).")
    tr, te = train_test_split(idx, test_size=test_size, stratify=e[idx], random_state=_seed(rng))
    tr, te = np.sort(tr), np.sort(te)
    forest_seed = _seed(rng)

    def forest():
        return RandomForestClassifier(n_estimators=n_estimators, random_state=forest_seed, n_jobs=1)

    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=_seed(rng))
    cv_scores = cross_val_score(forest(), Xa[tr], e[tr], cv=folds, scoring="accuracy")
    model = forest().fit(Xa[tr], e[tr])
    p_err = model.predict_proba(Xa[te])[:, list(model.classes_).index(1)]
    acc = float(np.mean((p_err > 0.5).astype(np.int64) == e[te]))
    ks = [int(x) for x in k if 1 <= int(x) <= te.size]
    pak = dict(zip(ks, np.atleast_1d(precision_at_k(p_err, e[te], ks)).tolist())) if ks else {}
    imp = model.feature_importances_
    order = np.argsort(-imp, kind="stable")[:top]
    ranking = [(names[j], float(imp[j])) for j in order]
    return ErrorClassifierResult(model=model, cv_scores=np.asarray(cv_scores), test_accuracy=acc,
                                 test_precision_at_k=pak, ranking=ranking, train_index=tr, test_index=te)


CUE_NAMES = ("greeting", "thanks", "apology", "second_person", "yes_no_question", "wh_question")

_CUES = {
    "greeting": re.compile(r"\b(hi|hello|hey|greetings|good (morning|afternoon|evening))\b"),
    "thanks": re.compile(r"\b(thanks|thank you|thx|appreciate)\b"),
    "apology": re.compile(r"\b(sorry|apologi[sz]e|apologies|my bad)\b"),
    "second_person": re.compile(r"\b(you|your|yours|yourself|yourselves|u|ur)\b"),
}
_YESNO = re.compile(r"^\s*(do|did|can|could)\b[^?]*\?")
_WH = re.compile(r"^\s*(who|what|where)\b[^?]*\?")
_SENT = re.compile(r"[^.!?]*[.!?]?")


@validate_params({"texts": ["array-like"]})
def conversational_cues(texts: Sequence[str]) -> np.ndarray:
    """AEC feature group (d), conversational lexical cues (Oraby et al. 2017), per text, divided by the
    number of whitespace tokens.

    Columns (:data:`CUE_NAMES`): greeting, thanks, apology, second person (occurrence counts),
    yes/no questions (sentences starting with do/did/can/could and ending in '?') and
    wh-questions (starting with who/what/where). Matching is case-insensitive; the word lists
    are a small documented approximation of Oraby et al.'s cue lists.

    Parameters
    ----------
    texts : sequence of str
        The instances' texts.

    Examples
    --------
    >>> conversational_cues(["Thank you so much!", "Can you help me? Who knows"]).round(3).tolist()
    [[0.0, 0.25, 0.0, 0.25, 0.0, 0.0], [0.0, 0.0, 0.0, 0.167, 0.167, 0.0]]
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not one string; wrap it in a list.")
    out = np.zeros((len(texts), len(CUE_NAMES)))
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str.")
        low = t.lower()
        n = max(len(low.split()), 1)
        for j, name in enumerate(CUE_NAMES[:4]):
            out[i, j] = len(_CUES[name].findall(low))
        sents = [s for s in _SENT.findall(low) if s.strip()]
        out[i, 4] = sum(bool(_YESNO.match(s)) for s in sents)
        out[i, 5] = sum(bool(_WH.match(s)) for s in sents)
        out[i] /= n
    return out
