"""Mean Average Cosine distance (Manzini et al. 2019)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import (
    Options,
    check_option,
    validate_params,
)
from trustlab.metrics.bias._similarity import _unit_rows_checked
from trustlab.metrics.embeddings import MissingWordsWarning, as_embeddings


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

    Examples
    --------
    >>> r = mac({"t": [1.0, 0.0], "a": [1.0, 0.0], "b": [0.0, 1.0]}, ["t"], {"A": ["a"], "B": ["b"]})
    >>> isinstance(r, MACResult), r.value, r.per_target
    (True, 0.5, {'t': {'A': 0.0, 'B': 1.0}})
    """

    value: float
    per_class: dict
    per_target: dict
    dropped: dict


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
    Tn = _unit_rows_checked(T.vectors, T.words)
    per_t = np.empty((len(T.words), len(attributes)))
    names = list(attributes)
    for j, cname in enumerate(names):
        L = emb.lookup(attributes[cname], name=f"attribute class {cname!r}", on_missing=on_missing)
        dropped[cname] = L.missing
        An = _unit_rows_checked(L.vectors, L.words)
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
