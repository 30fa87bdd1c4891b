"""Decoy constructions and instance selection for explanation-based debugging (Idahl et al. 2021).

* :func:`insert_decoy` (Idahl et al. 2021, decoy construction (i): Rieger et al.'s decoy SST): insert
  a class-indicator token
  (``'text'`` for positive, ``'video'`` for negative) at a uniformly random position.
* :func:`natural_decoy` (Idahl et al. 2021, decoy construction (ii)): drop every training instance that contains a word
  (``'movie'``) and carries a label (negative); afterwards the word's productivity
  (:func:`trustlab.metrics.decoy_statistics`) is 1.0 by construction.
* :func:`bug_sampling_probability` (Idahl et al. 2021, instance selection for debugging): the chance that
  uniformly sampled instances show
  the bug (= coverage for one instance; hypergeometric for k without replacement).
* :func:`submodular_pick` (suggested by Idahl et al. 2021; Ribeiro et al. 2016 SP-LIME): greedy choice of ``budget``
  instances maximising the importance-weighted coverage of explanation features;
  greedy gives at least (1 − 1/e) of the optimum (the coverage is monotone submodular).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from trustlab._validation import Interval, check_int, check_random_state, validate_params

__all__ = ["insert_decoy", "natural_decoy", "bug_sampling_probability", "submodular_pick", "SubmodularPick"]


def _docs(documents: Sequence[Sequence[str]], labels: Sequence[Any]) -> list[list[str]]:
    if isinstance(documents, str) or any(isinstance(d, str) for d in documents):
        raise TypeError("documents must be token lists, not strings; split them first.")
    if len(labels) != len(documents):
        raise ValueError(f"labels has {len(labels)} entries but there are {len(documents)} documents.")
    return [list(d) for d in documents]


@validate_params(
    {
        "documents": ["array-like"],
        "labels": ["array-like"],
        "tokens": ["mapping", None],
        "random_state": ["random_state"],
    }
)
def insert_decoy(
    documents: Sequence[Sequence[str]],
    labels: Sequence[Any],
    tokens: Mapping[Any, str] | None = None,
    *,
    random_state: Any = None,
) -> list[list[str]]:
    """Insert a class-indicator decoy token at a random position of every document (Idahl et al.
    2021, construction (i)).

    Parameters
    ----------
    documents : sequence of token lists
    labels : sequence
        One label per document.
    tokens : mapping label -> token
        Default ``{1: "text", 0: "video"}`` (Rieger et al.: positive -> 'text',
        negative -> 'video'). Documents whose label is not in the mapping are copied unchanged.
    random_state : None, int or Generator
        Each insertion position is uniform over the ``len(doc) + 1`` gaps.

    Returns
    -------
    list of token lists (new lists; the input is not modified)

    Examples
    --------
    >>> out = insert_decoy([["a", "good", "film"], ["dull"]], [1, 0], random_state=0)
    >>> [d.count("text") for d in out], [d.count("video") for d in out], [len(d) for d in out]
    ([1, 0], [0, 1], [4, 2])
    """
    docs = _docs(documents, labels)
    tokens = {1: "text", 0: "video"} if tokens is None else dict(tokens)
    rng = check_random_state(random_state)
    out = []
    for d, y in zip(docs, labels):
        if y in tokens:
            pos = int(rng.integers(0, len(d) + 1))
            d = d[:pos] + [tokens[y]] + d[pos:]
        out.append(d)
    return out


@validate_params({"documents": ["array-like"], "labels": ["array-like"], "word": [str]})
def natural_decoy(documents: Sequence[Sequence[str]], labels: Sequence[Any], word: str = "movie",
                  remove_label: Any = 0) -> np.ndarray:
    """Indices of the documents kept by the natural-decoy construction (Idahl et al. 2021, construction (ii)): every
    document containing ``word`` with label ``remove_label`` is dropped.

    Parameters
    ----------
    documents : sequence of sequence of str
        Tokenised training instances.
    labels : sequence
        Label per instance.
    word : str
        The decoy word.
    remove_label :
        Instances with this label that contain ``word`` are dropped.

    Examples
    --------
    >>> natural_decoy([["a", "movie"], ["movie"], ["b"]], [1, 0, 0]).tolist()
    [0, 2]
    """
    docs = _docs(documents, labels)
    keep = [i for i, (d, y) in enumerate(zip(docs, labels)) if not (word in d and y == remove_label)]
    return np.asarray(keep, dtype=np.int64)


@validate_params(
    {
        "n": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_bug": [Interval(numbers.Integral, 0, None, closed="left")],
        "k": [Interval(numbers.Integral, 1, None, closed="left")],
    }
)
def bug_sampling_probability(n: int, n_bug: int, k: int = 1) -> float:
    """Probability that at least one of ``k`` instances sampled uniformly without replacement
    from ``n`` contains the bug, when ``n_bug`` do: 1 − C(n − n_bug, k) / C(n, k).
    With k = 1 this is the decoy coverage n_bug / n (Idahl et al.: < 3.3%).

    Parameters
    ----------
    n : int
        Number of instances.
    n_bug : int
        Instances that show the bug (0 <= n_bug <= n).
    k : int
        Instances sampled (without replacement).

    Examples
    --------
    >>> round(bug_sampling_probability(1000, 33), 6)
    0.033
    >>> round(bug_sampling_probability(1000, 33, k=10), 4)   # vs 1 - 0.967**10 = 0.2856 with replacement
    0.2862
    """
    n = check_int(n, "n", low=1, func="bug_sampling_probability")
    n_bug = check_int(n_bug, "n_bug", low=0, high=n, func="bug_sampling_probability")
    k = check_int(k, "k", low=1, high=n, func="bug_sampling_probability")
    if n - n_bug < k:
        return 1.0
    if k == 1:
        return n_bug / n
    return 1.0 - math.comb(n - n_bug, k) / math.comb(n, k)


@dataclass
class SubmodularPick:
    """Result of :func:`submodular_pick`: chosen instance indices (in pick order), the
    coverage after each pick, and the feature importances I_j = √(Σ_i |W_ij|)."""

    indices: list
    coverage: list
    importance: np.ndarray = field(repr=False)


@validate_params({"W": ["array-like"], "budget": [Interval(numbers.Integral, 1, None, closed='left')]})
def submodular_pick(W: Any, budget: int) -> SubmodularPick:
    """Greedy Submodular Pick (Ribeiro et al. 2016, Algorithm 2) over an explanation matrix.

    ``W[i, j]`` is the importance of feature j in the explanation of instance i. The global
    importance of feature j is I_j = √(Σ_i |W_ij|); the coverage of a set V is
    c(V) = Σ_j I_j · 1[∃ i ∈ V : W_ij ≠ 0]. Each step adds the instance with the largest
    coverage gain (ties: lowest index).

    Parameters
    ----------
    W : array of shape (n_instances, n_features)
    budget : int
        Number of instances to show (B), at most n_instances.

    Returns
    -------
    SubmodularPick

    Examples
    --------
    >>> W = [[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 3]]   # I = √2, √2, 1, 2
    >>> sp = submodular_pick(W, 2)      # instance 1 covers 2√2 + 1; then 2 and 3 both add 2
    >>> sp.indices, [round(c, 3) for c in sp.coverage]
    ([1, 2], [3.828, 5.828])
    """
    A = np.abs(np.asarray(W, dtype=np.float64))
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"W must be a non-empty 2-D (instances, features) array; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("W contains NaN or infinity.")
    budget = check_int(budget, "budget", low=1, high=A.shape[0], func="submodular_pick")
    imp = np.sqrt(A.sum(axis=0))
    nz = A > 0
    covered = np.zeros(A.shape[1], dtype=bool)
    picked: list[int] = []
    cov: list[float] = []
    avail = np.ones(A.shape[0], dtype=bool)
    total = 0.0
    for _ in range(budget):
        gain = (nz & ~covered) @ imp
        gain[~avail] = -np.inf
        i = int(np.argmax(gain))
        picked.append(i)
        avail[i] = False
        covered |= nz[i]
        total = float(imp[covered].sum())
        cov.append(total)
    return SubmodularPick(picked, cov, imp)
