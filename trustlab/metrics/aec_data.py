"""AEC data preparation (Misra, Liu & Mahmud 2021, §3.1): SST's 5 → 3 label merge and near-duplicate removal.

The base classifier of AEC is trained on SST with *very negative* and *negative* merged into
negative, *positive* and *very positive* into positive, neutral kept, and near duplicates
removed (3,304 negative / 1,622 neutral / 3,605 positive). The paper does not define "near
duplicate"; :func:`remove_near_duplicates` offers exact matching after normalisation (the
default) and a token-set Jaccard threshold, both documented choices.
"""
from __future__ import annotations

import numbers
import re
from typing import Any, Sequence

import numpy as np

from trustlab._validation import Interval, validate_params

__all__ = ["sst_three_way", "remove_near_duplicates", "SST_THREE_WAY_NAMES"]

SST_THREE_WAY_NAMES = ("negative", "neutral", "positive")
_FIVE = {"very negative": 0, "negative": 0, "neutral": 1, "positive": 2, "very positive": 2}
_NORM = re.compile(r"[^\w]+")


@validate_params({"labels": ["array-like"]})
def sst_three_way(labels: Sequence[Any]) -> np.ndarray:
    """Merge SST's five sentiment classes into three (AEC §3.1): 0 negative, 1 neutral, 2 positive.

    Accepts the class indices 0–4 (very negative … very positive), their names, or SST's
    phrase sentiment values in [0, 1] (floats, SST's five bins [0, .2], (.2, .4], (.4, .6],
    (.6, .8], (.8, 1], merged: [0, .4] negative, (.4, .6] neutral, (.6, 1] positive).

    Parameters
    ----------
    labels : sequence of int, str or float
        One SST label per item: a class index 0..4, a class name ("very negative",
        "negative", "neutral", "positive", "very positive"; case and ``_`` for spaces
        ignored) or a sentiment value in [0, 1]. Kinds may be mixed; a float is always read
        as a sentiment value (``1.0`` is positive, not the index 1).

    Returns
    -------
    numpy.ndarray of int64
        The three-way labels (0 negative, 1 neutral, 2 positive; names in
        :data:`SST_THREE_WAY_NAMES`), one per label.

    Raises
    ------
    ValueError
        A label is none of the above (a bool, an index outside 0..4, an unknown name or a
        value outside [0, 1]).

    Examples
    --------
    >>> sst_three_way([0, 1, 2, 3, 4]).tolist(), sst_three_way(["very positive", "neutral"]).tolist()
    ([0, 0, 1, 2, 2], [2, 1])
    >>> sst_three_way([0.1, 0.5, 0.61]).tolist()
    [0, 1, 2]
    """
    out = []
    for k, v in enumerate(labels):
        if isinstance(v, (bool, np.bool_)):
            raise ValueError(f"labels[{k}] = {v!r}: give SST class indices 0..4, names or values in [0, 1].")
        if isinstance(v, str):
            key = v.strip().lower().replace("_", " ")
            if key not in _FIVE:
                raise ValueError(f"labels[{k}] = {v!r} is not an SST class name ({sorted(_FIVE)}).")
            out.append(_FIVE[key])
        elif isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, bool):
            if not 0 <= int(v) <= 4:
                raise ValueError(f"labels[{k}] = {v!r}: SST class indices are 0..4.")
            out.append((0, 0, 1, 2, 2)[int(v)])
        elif isinstance(v, (numbers.Real, np.floating)) and 0.0 <= float(v) <= 1.0:
            f = float(v)
            out.append(0 if f <= 0.4 else 1 if f <= 0.6 else 2)
        else:
            raise ValueError(f"labels[{k}] = {v!r}: give SST class indices 0..4, names or values in [0, 1].")
    return np.asarray(out, dtype=np.int64)


def _normalise(t: str) -> str:
    return " ".join(_NORM.sub(" ", t.lower()).split())


@validate_params({"texts": ["array-like"], "threshold": [Interval(numbers.Real, 0, 1, closed="right")]})
def remove_near_duplicates(texts: Sequence[str], *, threshold: float = 1.0) -> list[int]:
    """Indices of the texts to keep after removing near duplicates (first occurrence kept).

    Texts are lower-cased and stripped of punctuation and extra whitespace. With
    ``threshold=1`` (default) two texts are duplicates when the normalised strings are equal;
    below 1, when the Jaccard similarity of their token sets is at least ``threshold``
    (compared with every kept text sharing a token: exact, not MinHash).

    Parameters
    ----------
    texts : sequence of str
    threshold : float in (0, 1]

    Returns
    -------
    list of int

    Examples
    --------
    >>> remove_near_duplicates(["A fine film.", "a fine film", "A fine, fine film!", "Dull."])
    [0, 2, 3]
    >>> remove_near_duplicates(["a fine film indeed", "a fine film", "dull"], threshold=0.7)
    [0, 2]
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not one string.")
    keep: list[int] = []
    seen: set[str] = set()
    sets: list[frozenset] = []
    index: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str.")
        norm = _normalise(t)
        if norm in seen:
            continue
        if threshold < 1.0:
            toks = frozenset(norm.split())
            cands = {j for w in toks for j in index.get(w, ())}
            if any(len(toks & sets[j]) / max(len(toks | sets[j]), 1) >= threshold for j in cands):
                continue
            for w in toks:
                index.setdefault(w, []).append(len(sets))
            sets.append(toks)
        seen.add(norm)
        keep.append(i)
    return keep
