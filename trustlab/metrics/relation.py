"""Relation-extraction scores: TACRED-style micro P/R/F1 and multi-reference BLEU (Tang & Surdeanu,
TrustNLP 2021, Table 1).

* :func:`relation_micro_prf`: micro precision / recall / F1 with a **negative class**
  (``no_relation``), as the standard TACRED scorer computes them: precision = correct
  non-negative predictions / non-negative predictions, recall = correct non-negative
  predictions / non-negative gold labels. A wrong *positive* label counts against both.
* :func:`bleu`: corpus- or sentence-level BLEU with several references per hypothesis,
  uniform 1–4-gram weights, clipped n-gram counts and the brevity penalty against the
  closest reference length (ties: the shorter), matching NLTK's ``corpus_bleu`` /
  ``sentence_bleu``. The paper does not say which level or smoothing it used; the default
  is corpus level without smoothing, ``smoothing="method1"`` adds NLTK's ε = 0.1 to zero
  counts.
"""
from __future__ import annotations

import math
import numbers
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Hashable, Sequence

from trustlab._validation import Interval, Options, check_int, check_option, validate_params

__all__ = ["relation_micro_prf", "RelationScores", "bleu"]


@dataclass
class RelationScores:
    """Result of :func:`relation_micro_prf`; ``per_relation`` maps each positive relation to
    ``(correct, guessed, gold)`` counts."""

    precision: float
    recall: float
    f1: float
    correct: int
    guessed: int
    gold: int
    per_relation: dict = field(repr=False, default_factory=dict)


@validate_params({"gold": ["array-like"], "predicted": ["array-like"]})
def relation_micro_prf(gold: Sequence[Hashable], predicted: Sequence[Hashable], *,
                       negative: Hashable = "no_relation") -> RelationScores:
    """TACRED micro precision, recall and F1, with ``negative`` as the negative class.

    Parameters
    ----------
    gold, predicted : sequence of labels
        One relation label per test instance.
    negative : hashable
        The negative ("no relation") label.

    Returns
    -------
    RelationScores
        Precision is 1.0 when nothing positive is predicted (as in the TACRED scorer);
        recall is 0.0 when there is no positive gold label; F1 is 0.0 when both are 0.

    Examples
    --------
    >>> g = ["per:age", "no_relation", "org:founded", "per:title", "no_relation"]
    >>> p = ["per:age", "per:title",   "org:founded", "no_relation", "no_relation"]
    >>> r = relation_micro_prf(g, p)     # 2 correct of 3 guessed, of 3 gold
    >>> round(r.precision, 4), round(r.recall, 4), round(r.f1, 4)
    (0.6667, 0.6667, 0.6667)
    """
    g, p = list(gold), list(predicted)
    if len(g) != len(p):
        raise ValueError(f"gold has {len(g)} labels but predicted has {len(p)}; give one prediction per instance.")
    if not g:
        raise ValueError("no instances given.")
    correct: Counter = Counter()
    guessed: Counter = Counter()
    golds: Counter = Counter()
    for a, b in zip(g, p):
        if b != negative:
            guessed[b] += 1
        if a != negative:
            golds[a] += 1
        if a != negative and a == b:
            correct[a] += 1
    c, n_guess, n_gold = sum(correct.values()), sum(guessed.values()), sum(golds.values())
    prec = c / n_guess if n_guess else 1.0
    rec = c / n_gold if n_gold else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    rels = set(guessed) | set(golds)
    per = {r: (correct[r], guessed[r], golds[r]) for r in sorted(rels, key=str)}
    return RelationScores(prec, rec, f1, c, n_guess, n_gold, per)


def _ngrams(tokens: Sequence[Any], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _tokens(x: Any, what: str) -> list:
    if isinstance(x, str):
        raise TypeError(f"{what} must be a token list, not a string; split it first (e.g. s.split()).")
    return list(x)


@validate_params(
    {
        "hypotheses": ["array-like"],
        "references": ["array-like"],
        "max_n": [Interval(numbers.Integral, 1, 100, closed="both")],
        "level": [Options({"corpus", "sentence"})],
        "smoothing": [Options({"none", "method1"})],
    }
)
def bleu(
    hypotheses: Sequence[Sequence[Any]],
    references: Sequence[Sequence[Sequence[Any]]],
    *,
    max_n: int = 4,
    level: str = "corpus",
    smoothing: str = "none",
) -> float:
    """Multi-reference BLEU with uniform n-gram weights (NLTK-compatible).

    Parameters
    ----------
    hypotheses : sequence of token lists
    references : sequence of (sequence of token lists)
        For each hypothesis, one or more reference token lists.
    max_n : int
        Highest n-gram order (4: weights 1/4 each).
    level : {"corpus", "sentence"}
        ``"corpus"``: one BLEU from n-gram counts and lengths summed over all hypotheses
        (NLTK ``corpus_bleu``). ``"sentence"``: the mean of per-hypothesis BLEU
        (NLTK ``sentence_bleu``).
    smoothing : {"none", "method1"}
        ``"none"``: BLEU is 0 when some order has no match. ``"method1"``: zero matches
        count as ε = 0.1 (NLTK ``SmoothingFunction().method1``).

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> hyp = ["the", "cat", "sat", "on", "the", "mat"]
    >>> refs = [["the", "cat", "sat", "on", "a", "mat"], ["a", "cat", "sat", "on", "the", "mat"]]
    >>> round(bleu([hyp], [refs]), 4)      # 'cat sat on the' is in neither reference
    0.9554
    >>> round(bleu([["the", "cat", "sat", "on", "mat"]], [refs]), 4)   # one 4-gram match of 2
    0.5789
    """
    level = check_option(level, "level", ("corpus", "sentence"), func="bleu")
    smoothing = check_option(smoothing, "smoothing", ("none", "method1"), func="bleu")
    max_n = check_int(max_n, "max_n", low=1, func="bleu")
    hyps = [_tokens(h, "each hypothesis") for h in hypotheses]
    if len(hyps) != len(references):
        raise ValueError(f"hypotheses has {len(hyps)} entries but references has {len(references)}; "
                         "give a list of references for every hypothesis.")
    if not hyps:
        raise ValueError("no hypotheses given.")
    refs = []
    for i, rs in enumerate(references):
        if isinstance(rs, str) or len(rs) == 0:
            raise ValueError(f"references[{i}] must be a non-empty list of token lists.")
        refs.append([_tokens(r, "each reference") for r in rs])
    if level == "sentence":
        return sum(_bleu_counts([h], [r], max_n, smoothing) for h, r in zip(hyps, refs)) / len(hyps)
    return _bleu_counts(hyps, refs, max_n, smoothing)


def _bleu_counts(hyps: list, refs: list, max_n: int, smoothing: str) -> float:
    num = [0] * max_n
    den = [0] * max_n
    hyp_len = ref_len = 0
    for h, rs in zip(hyps, refs):
        for n in range(1, max_n + 1):
            hc = _ngrams(h, n)
            if not hc:
                den[n - 1] += 1  # as NLTK: an empty order counts 0 matches of max(1, 0) n-grams
                continue
            mx: Counter = Counter()
            for r in rs:
                for gram, cnt in _ngrams(r, n).items():
                    if cnt > mx[gram]:
                        mx[gram] = cnt
            num[n - 1] += sum(min(c, mx[gram]) for gram, c in hc.items())
            den[n - 1] += sum(hc.values())
        hyp_len += len(h)
        ref_len += min((len(r) for r in rs), key=lambda L: (abs(L - len(h)), L))
    if num[0] == 0:
        return 0.0
    logs = []
    for n in range(max_n):
        d = max(1, den[n])
        if num[n] == 0:
            if smoothing == "none":
                return 0.0
            logs.append(math.log(0.1 / d))
        else:
            logs.append(math.log(num[n] / d))
    bp = 1.0 if hyp_len > ref_len else (math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0)
    return bp * math.exp(sum(logs) / max_n)
