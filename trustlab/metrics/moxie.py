"""MOXIE black-box evaluation metrics (Kumar, Dixit & Shah, TrustNLP 2021: all-correct accuracy,
Algorithm 1 MASKLENGTH, Algorithm 2 COUNTERFACTUAL_ACC).

The model being interpreted (the *teacher*) is only queried through a ``predict_fn``
callable: it takes a list of tokens and returns a label, or a vector of class scores /
probabilities (then its argmax is the label). Nothing here trains or loads a network.

* :func:`all_correct_accuracy`: an example is correct only if every token-level prediction
  equals its reference label (Table 2); :func:`masked_context_predictions` computes the
  paper's baseline, the teacher on each masked context ``f(x^i_mask)``.
* :func:`mask_length` (Algorithm 1, MASKLENGTH) and :func:`mask_length_summary`
  (Coverage and Average length masked, Figure 2).
* :func:`counterfactual_accuracy` (Algorithm 2, COUNTERFACTUAL_ACC) and
  :func:`counterfactual_summary` (median over contexts with at least one counterfactual,
  Figure 3).

Conventions fixed where the paper is ambiguous: MASKLENGTH masks the *most important* token
first (descending score; the pseudo-code's ascending ``argsort`` contradicts the text), ties
keep token order, and the budget is capped at the sequence length. Masks are cumulative.
COUNTERFACTUAL_ACC divides by ``size`` (the pseudo-code's ``count`` is a typo).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from trustlab._validation import Interval, check_int, validate_params

__all__ = [
    "all_correct_accuracy",
    "masked_context_predictions",
    "mask_length",
    "mask_length_summary",
    "MaskLengthResult",
    "counterfactual_accuracy",
    "counterfactual_summary",
    "CounterfactualResult",
]

PredictFn = Callable[[list], Any]


def _label(out: Any) -> Hashable:
    """A predict_fn answer as a label: argmax of a score vector, else the value itself."""
    if isinstance(out, (str, bytes)):
        return out
    a = np.asarray(out)
    if a.ndim == 0:
        v = a.item()
        return v
    if a.ndim == 1 and a.size > 0 and np.issubdtype(a.dtype, np.number):
        return int(np.argmax(a))
    raise ValueError(f"predict_fn must return a label or a 1-D vector of class scores; got shape {a.shape}.")


def _check_fn(predict_fn: Any, func: str) -> None:
    if not callable(predict_fn):
        raise TypeError(f"{func}: predict_fn must be a callable taking a list of tokens; got "
                        f"{type(predict_fn).__name__}.")


def _tokens(tokens: Any, name: str = "tokens") -> list:
    if isinstance(tokens, str):
        raise TypeError(f"{name} must be a sequence of tokens, not a string; split it first "
                        "(e.g. text.split()).")
    t = list(tokens)
    if not t:
        raise ValueError(f"{name} is empty.")
    return t


@validate_params({"token_predictions": ["array-like"], "references": ["array-like"]})
def all_correct_accuracy(token_predictions: Sequence[Sequence[Any]], references: Sequence[Any]) -> float:
    """MOXIE all-correct accuracy: the fraction of examples whose token-level predictions
    *all* equal the example's reference label.

    Parameters
    ----------
    token_predictions : sequence of sequences
        For example ``x``, the predictions ``g(x, i)`` for every token position ``i`` (the
        student), or ``f(x^i_mask)`` for the context-only baseline
        (:func:`masked_context_predictions`).
    references : sequence
        One reference label per example (the teacher's prediction ``f(x)`` in the paper).

    Returns
    -------
    float
        In [0, 1]; multiply by 100 for the paper's Table 2.

    Examples
    --------
    >>> all_correct_accuracy([[1, 1, 1], [1, 0, 1], [0, 0]], [1, 1, 0])
    0.6666666666666666
    """
    if len(token_predictions) != len(references):
        raise ValueError(f"token_predictions has {len(token_predictions)} examples but references has "
                         f"{len(references)}; pass one reference label per example.")
    if len(references) == 0:
        raise ValueError("no examples given.")
    correct = 0
    for i, (preds, ref) in enumerate(zip(token_predictions, references)):
        preds = list(preds)
        if not preds:
            raise ValueError(f"example {i} has no token predictions.")
        correct += all(p == ref for p in preds)
    return correct / len(references)


@validate_params({"predict_fn": ["callable"], "tokens": ["array-like"]})
def masked_context_predictions(predict_fn: PredictFn, tokens: Sequence[Any], mask_token: Any = "<mask>") -> list:
    """The teacher's prediction on every single-token masked context ``f(x^i_mask)``.

    This is MOXIE's context-only baseline for :func:`all_correct_accuracy`.

    Parameters
    ----------
    predict_fn : callable
        ``predict_fn(list_of_tokens)`` -> label, or a vector of class scores (argmax taken).
    tokens : sequence
        The example's tokens.
    mask_token :
        What replaces a masked token.

    Examples
    --------
    >>> positive = lambda toks: int("good" in toks)
    >>> masked_context_predictions(positive, ["a", "good", "film"])
    [1, 0, 1]
    """
    _check_fn(predict_fn, "masked_context_predictions")
    toks = _tokens(tokens)
    out = []
    for i in range(len(toks)):
        a = list(toks)
        a[i] = mask_token
        out.append(_label(predict_fn(a)))
    return out


@validate_params(
    {
        "predict_fn": ["callable"],
        "tokens": ["array-like"],
        "scores": ["array-like"],
        "budget": [Interval(numbers.Integral, 1, None, closed="left")],
    }
)
def mask_length(
    predict_fn: PredictFn,
    tokens: Sequence[Any],
    scores: Sequence[float],
    budget: int,
    mask_token: Any = "<mask>",
) -> int:
    """MOXIE MASKLENGTH (Algorithm 1): how many of the most important tokens must be masked
    before the teacher's prediction changes.

    Tokens are masked cumulatively in descending ``scores`` order (ties: earlier token first)
    for at most ``min(budget, len(tokens))`` steps; after each mask the teacher is queried.

    Parameters
    ----------
    predict_fn : callable
        ``predict_fn(list_of_tokens)`` -> label, or a vector of class scores (argmax taken).
    tokens : sequence
    scores : sequence of float
        One importance score per token (higher = supports the prediction more).
    budget : int
        Masking budget ``m`` (>= 1).
    mask_token : object
        What replaces a masked token.

    Returns
    -------
    int
        The first ``k`` (1-based) at which the prediction flips, or ``-1`` if it never does
        within the budget.

    Examples
    --------
    >>> teacher = lambda toks: int(toks.count("good") > toks.count("bad"))
    >>> toks = ["good", "good", "good", "bad"]
    >>> mask_length(teacher, toks, [0.9, 0.5, 0.1, -0.3], budget=3)   # mask 'good' twice
    2
    >>> mask_length(teacher, toks, [0.1, 0.2, 0.3, 0.9], budget=2)    # wrong words first
    -1
    """
    _check_fn(predict_fn, "mask_length")
    toks = _tokens(tokens)
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != (len(toks),):
        raise ValueError(f"scores has shape {s.shape} but there are {len(toks)} tokens; give one score per token.")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contains NaN or infinity.")
    budget = check_int(budget, "budget", low=1, func="mask_length")
    prediction = _label(predict_fn(list(toks)))
    order = np.argsort(-s, kind="stable")
    a = list(toks)
    for k in range(min(budget, len(toks))):
        a[int(order[k])] = mask_token
        if _label(predict_fn(list(a))) != prediction:
            return k + 1
    return -1


@dataclass
class MaskLengthResult:
    """Result of :func:`mask_length_summary`: coverage (% of examples flipped within the
    budget), the average number of masked tokens over flipped examples (NaN if none),
    the per-example lengths (-1 = not flipped) and the number of examples."""

    coverage: float
    average_length: float
    n: int
    lengths: np.ndarray = field(repr=False)


@validate_params(
    {
        "predict_fn": ["callable"],
        "examples": ["array-like"],
        "scores": ["array-like"],
        "budget": [Interval(numbers.Integral, 1, None, closed="left")],
    }
)
def mask_length_summary(
    predict_fn: PredictFn,
    examples: Sequence[Sequence[Any]],
    scores: Sequence[Sequence[float]],
    budget: int,
    mask_token: Any = "<mask>",
) -> MaskLengthResult:
    """MOXIE Coverage and Average length masked over a set of examples (Figure 2).

    Parameters
    ----------
    predict_fn : callable
        The teacher, as in :func:`mask_length`.
    examples : sequence of sequence
        Token lists.
    scores : sequence of sequence of float
        Importance score per token of each example.
    budget : int
        Masking budget ``m`` (>= 1).
    mask_token :
        What replaces a masked token.

    Examples
    --------
    >>> teacher = lambda toks: int(toks.count("good") > toks.count("bad"))
    >>> ex = [["good", "film"], ["good", "good", "good", "bad"], ["bad", "film"]]
    >>> sc = [[1.0, 0.0], [1.0, 0.5, 0.2, 0.0], [0.0, 1.0]]
    >>> r = mask_length_summary(teacher, ex, sc, budget=2)
    >>> r.coverage, r.average_length, r.lengths.tolist()
    (66.66666666666667, 1.5, [1, 2, -1])
    """
    if len(examples) != len(scores):
        raise ValueError(f"examples has {len(examples)} entries but scores has {len(scores)}.")
    if len(examples) == 0:
        raise ValueError("no examples given.")
    lengths = np.array([mask_length(predict_fn, x, s, budget, mask_token) for x, s in zip(examples, scores)],
                       dtype=np.int64)
    flipped = lengths > 0
    avg = float(lengths[flipped].mean()) if flipped.any() else float("nan")
    return MaskLengthResult(
        coverage=100.0 * float(flipped.sum()) / len(lengths), average_length=avg, n=len(lengths), lengths=lengths
    )


@dataclass
class CounterfactualResult:
    """Result of :func:`counterfactual_accuracy`: how many counterfactuals were tried
    (``size``), how many the teacher confirmed, the accuracy in % (0 when size is 0),
    and the replacement words tried."""

    size: int
    correct: int
    accuracy: float
    words: list = field(repr=False, default_factory=list)


@validate_params(
    {
        "predict_fn": ["callable"],
        "tokens": ["array-like"],
        "position": [Interval(numbers.Integral, 0, None, closed="left")],
        "vocabulary": ["array-like"],
        "student_proba": ["array-like"],
        "top": [Interval(numbers.Integral, 1, None, closed="left")],
    }
)
def counterfactual_accuracy(
    predict_fn: PredictFn,
    tokens: Sequence[Any],
    position: int,
    vocabulary: Sequence[Any],
    student_proba: Any,
    *,
    top: int = 10,
) -> CounterfactualResult:
    """MOXIE COUNTERFACTUAL_ACC (Algorithm 2) for one context ``(x, i)``.

    The teacher's prediction on ``x`` is ``p``. The candidate words are ranked by
    ``1 − student_proba[j, p]`` (most likely to flip first, stable order on ties); the
    first ``top`` whose student argmax differs from ``p`` are substituted at ``position``
    one at a time and the teacher is queried. A counterfactual is *correct* if the
    teacher's label changes. ``accuracy = 100·correct/size``.

    Parameters
    ----------
    predict_fn : callable
        The teacher: ``predict_fn(list_of_tokens)`` -> label or class-score vector. Labels
        must be class indices ``0..C-1`` matching the columns of ``student_proba``.
    tokens : sequence
    position : int
        The index ``i`` of the token to replace.
    vocabulary : sequence
        Replacement words (the POS-restricted vocabulary in the paper).
    student_proba : array of shape (len(vocabulary), n_classes)
        The student's class probabilities ``y_V`` with each word at ``position``.
    top : int
        At most this many counterfactuals (10 in the paper).

    Examples
    --------
    >>> teacher = lambda toks: int("bad" not in toks and "awful" not in toks)
    >>> vocab = ["bad", "awful", "okay", "fine"]
    >>> y = [[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.1, 0.9]]   # student: 'okay' flips, wrongly
    >>> r = counterfactual_accuracy(teacher, ["a", "great", "film"], 1, vocab, y)
    >>> r.size, r.correct, r.accuracy, r.words
    (3, 2, 66.66666666666667, ['bad', 'awful', 'okay'])
    """
    _check_fn(predict_fn, "counterfactual_accuracy")
    toks = _tokens(tokens)
    position = check_int(position, "position", low=0, high=len(toks) - 1, func="counterfactual_accuracy")
    top = check_int(top, "top", low=1, func="counterfactual_accuracy")
    vocab = list(vocabulary)
    y = np.asarray(student_proba, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] != len(vocab):
        raise ValueError(f"student_proba must have shape (len(vocabulary)={len(vocab)}, n_classes); got {y.shape}.")
    prediction = _label(predict_fn(list(toks)))
    if not isinstance(prediction, (int, np.integer)) or not 0 <= int(prediction) < y.shape[1]:
        raise ValueError(f"the teacher's label {prediction!r} is not a class index below "
                         f"n_classes={y.shape[1]} of student_proba.")
    p = int(prediction)
    order = np.argsort(-(1.0 - y[:, p]), kind="stable")
    differs = np.argmax(y, axis=1) != p
    selected = [int(j) for j in order if differs[j]][:top]
    correct = 0
    for j in selected:
        a = list(toks)
        a[position] = vocab[j]
        correct += _label(predict_fn(a)) != p
    size = len(selected)
    acc = 100.0 * correct / size if size else 0.0
    return CounterfactualResult(size=size, correct=correct, accuracy=acc, words=[vocab[j] for j in selected])


@validate_params({"results": ["array-like"]})
def counterfactual_summary(results: Sequence[CounterfactualResult]) -> dict:
    """Median counterfactual accuracy and size over contexts with at least one counterfactual
    (MOXIE reports a median accuracy of 90.0% on SST-2 dev).

    Parameters
    ----------
    results : sequence of CounterfactualResult
        One :func:`counterfactual_accuracy` result per context.

    Examples
    --------
    >>> rs = [CounterfactualResult(2, 2, 100.0), CounterfactualResult(0, 0, 0.0),
    ...       CounterfactualResult(4, 1, 25.0), CounterfactualResult(10, 9, 90.0)]
    >>> counterfactual_summary(rs)
    {'median_accuracy': 90.0, 'median_size': 4.0, 'n_contexts': 3, 'n_without': 1}
    """
    kept = [r for r in results if r.size > 0]
    if not kept:
        return {"median_accuracy": float("nan"), "median_size": float("nan"), "n_contexts": 0,
                "n_without": len(results)}
    return {
        "median_accuracy": float(np.median([r.accuracy for r in kept])),
        "median_size": float(np.median([r.size for r in kept])),
        "n_contexts": len(kept),
        "n_without": len(results) - len(kept),
    }
