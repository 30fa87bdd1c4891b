"""Decoy applicability, productivity and coverage (Idahl et al. 2021)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import validate_params


@dataclass
class DecoyStatistics(ResultMixin):
    """Result of :func:`decoy_statistics` (Idahl et al. 2021, eq. 1).

    Attributes
    ----------
    applicability : int
        a_d, the number of instances containing the decoy.
    productivity : float
        p_d, the largest share of one class among them.
    coverage : float
        c_d = a_d / n.
    majority_class :
        The class that reaches the productivity.
    n : int
        Number of instances.

    Examples
    --------
    >>> s = decoy_statistics([["a", "movie"], ["movie"], ["b"], ["movie", "c"]], [1, 1, 0, 1], "movie")
    >>> isinstance(s, DecoyStatistics), s.majority_class, s.n
    (True, 1, 4)
    """

    applicability: int
    productivity: float
    coverage: float
    majority_class: Any
    n: int


@validate_params({"documents": ["array-like"], "labels": ["array-like"], "decoy": [str]})
def decoy_statistics(documents: Sequence[Sequence[str]], labels: Sequence[Any], decoy: str) -> DecoyStatistics:
    """Decoy applicability ``a_d = |X^d|``, productivity ``p_d = max_c |{y = c}| / a_d`` and
    coverage ``c_d = a_d / |X|`` of a decoy token (Idahl et al. 2021).

    Parameters
    ----------
    documents : sequence of token lists
    labels : sequence
        One class label per document.
    decoy : str
        The token; a document contains it if any token equals it.

    Examples
    --------
    >>> s = decoy_statistics([["a", "movie"], ["movie"], ["b"], ["movie", "c"]], [1, 1, 0, 1], "movie")
    >>> s.applicability, s.productivity, s.coverage
    (3, 1.0, 0.75)
    """
    if len(documents) == 0:
        raise ValueError("documents is empty.")
    if len(labels) != len(documents):
        raise ValueError(f"labels has {len(labels)} entries but there are {len(documents)} documents.")
    if not isinstance(decoy, str) or not decoy:
        raise ValueError("decoy must be a non-empty string.")
    hits = [lab for doc, lab in zip(documents, labels) if decoy in (doc.split() if isinstance(doc, str) else doc)]
    a = len(hits)
    if a == 0:
        return DecoyStatistics(0, math.nan, 0.0, None, len(documents))
    vals, counts = np.unique(np.asarray(hits), return_counts=True)
    k = int(np.argmax(counts))
    return DecoyStatistics(a, float(counts[k] / a), a / len(documents), vals[k].item(), len(documents))
