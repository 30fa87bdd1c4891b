"""Rios & Lwowski (2020) aggregation helpers and a GenTemp-style template generator.

* :func:`seed_average` (Rios & Lwowski 2020): the metric vector f(Z, m) ∈ R^q, entry k the metric of model
  m trained on Z with embedding k, **averaged over the seeds** (10 in the paper).
* :func:`max_median_min` (Rios & Lwowski 2020): the max / median / min over embeddings of the
  per-embedding seed means (Tables 4–6).
* :func:`gentemp` (Rios & Lwowski 2020): gender-swapped template pairs for GAUC, FPED and FNED, built from
  the paper's word lists (Appendix B) with templates of Dixon et al.'s ``bias_madlibs.py``.

:func:`trustlab.metrics.roc_auc` on :func:`gentemp` texts scored by a model is GAUC;
:func:`trustlab.metrics.fped` / :func:`trustlab.metrics.fned` take its ``group`` column.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from trustlab._validation import Interval, check_int, check_random_state, validate_params

__all__ = ["seed_average", "max_median_min", "gentemp", "GENTEMP_WORDS", "GENTEMP_TEMPLATES"]


@validate_params({"value": [str], "seed": [str], "by": ["array-like"]})
def seed_average(scores: Any, *, value: str = "value", seed: str = "seed", by: Sequence[str] = ("embedding",)):
    """Average a metric over training seeds (Rios & Lwowski 2020: 10 seeds).

    Parameters
    ----------
    scores : array of shape (q, n_seeds) or pandas.DataFrame
        An array: row k holds the metric of embedding k for each seed; the result is the
        length-q metric vector. A long DataFrame: one row per run with the ``by`` columns, a
        ``seed`` column and a ``value`` column; the result has one row per ``by`` group with
        the mean, the standard deviation (ddof=1) and the number of seeds.
    value, seed : str
        Column names for a DataFrame.
    by : sequence of str
        Grouping columns for a DataFrame (e.g. ``("dataset", "model", "embedding")``).

    Returns
    -------
    numpy.ndarray or pandas.DataFrame

    Examples
    --------
    >>> seed_average([[0.90, 0.92, 0.94], [0.80, 0.86, 0.83]]).round(3).tolist()
    [0.92, 0.83]
    """
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(scores, pd.DataFrame):
        by = list(by)
        missing = [c for c in [*by, seed, value] if c not in scores.columns]
        if missing:
            raise ValueError(f"scores has no column(s) {missing}; it has {list(scores.columns)}. "
                             "Pass value=, seed= and by= to name yours.")
        if scores[value].isna().any():
            raise ValueError(f"column {value!r} has NaN values; drop or fill failed runs first.")
        dup = scores.duplicated([*by, seed])
        if dup.any():
            raise ValueError(f"{int(dup.sum())} rows repeat a ({', '.join(by)}, {seed}) combination; "
                             "each seed must appear once per group.")
        g = scores.groupby(by, sort=False)[value]
        out = g.agg(["mean", "std", "count"]).reset_index()
        return out.rename(columns={"count": "n_seeds"})
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"scores must be a 2-D array (embeddings, seeds) or a long DataFrame; got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise ValueError("scores contains NaN or infinity; drop or fill failed runs first.")
    return a.mean(axis=1)


@validate_params({"value": [str], "by": ["array-like", None]})
def max_median_min(vector: Any, *, value: str = "mean", by: Sequence[str] | None = None):
    """Max, median and min over embeddings of per-embedding means (Rios & Lwowski 2020, Tables 4–6).

    Parameters
    ----------
    vector : 1-D array or pandas.DataFrame
        A metric vector (e.g. from :func:`seed_average`), or a DataFrame from
        :func:`seed_average` with a ``value`` column, aggregated within ``by`` groups.
    value : str
        Value column of a DataFrame.
    by : sequence of str, optional
        Grouping columns of a DataFrame (e.g. ``("model",)``); None aggregates all rows.

    Returns
    -------
    dict or pandas.DataFrame
        ``{"max", "median", "min"}`` (the median of an even count is the mean of the two
        middle values).

    Examples
    --------
    >>> max_median_min([0.91, 0.93, 0.928, 0.916, 0.910])
    {'max': 0.93, 'median': 0.916, 'min': 0.91}
    """
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None and isinstance(vector, pd.DataFrame):
        if value not in vector.columns:
            raise ValueError(f"vector has no column {value!r}; it has {list(vector.columns)}.")
        if not by:
            return pd.DataFrame([max_median_min(vector[value].to_numpy())])
        g = vector.groupby(list(by), sort=False)[value]
        return g.agg(max="max", median="median", min="min").reset_index()
    v = np.asarray(vector, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"vector must be a non-empty 1-D array; got shape {v.shape}.")
    if not np.all(np.isfinite(v)):
        raise ValueError("vector contains NaN or infinity.")
    return {"max": float(v.max()), "median": float(np.median(v)), "min": float(v.min())}


# Rios & Lwowski, Appendix B (kept verbatim, including the typo "chartiable").
GENTEMP_WORDS = {
    "gender_pairs": [("male", "female"), ("man", "woman"), ("men", "women"), ("his", "hers"),
                     ("him", "her"), ("boy", "girl"), ("he", "she"), ("boys", "girls")],
    "adjective_negative": ["disgusting", "filthy", "nasty", "rude", "rotten", "horrible", "terrible", "awful",
                           "repulsive", "vile", "worst", "idiotic", "stupid", "moronic", "dumb", "ugly", "shitty",
                           "fucked", "bitchy", "asshole", "spiteful", "mean", "cruel", "hateful"],
    "adjective_positive": ["great", "fun", "nice", "neat", "happy", "good", "best", "fantastic", "wonderful",
                           "lovely", "excellent", "incredible", "friendly", "gracious", "kind", "caring", "hi",
                           "chartiable", "thoughtful", "selfless"],
    "verb_negative": ["kill", "murder", "hate", "destroy"],
    "verb_positive": ["hug", "congrats", "like", "love", "respect"],
}

# (template id, non-offensive template, offensive template), from Dixon et al.'s bias_madlibs.py
# with the identity slot filled by the gender term.
GENTEMP_TEMPLATES = [
    ("verb_adj", "{verb_positive} {identity}", "{verb_negative} {identity}"),
    ("am_hate_adj", "i am {identity}", "i hate {identity}"),
    ("being_adj", "being {identity} is {adjective_positive}.", "being {identity} is {adjective_negative}."),
    ("you_are_adj", "you are a {adjective_positive} {identity}", "you are a {adjective_negative} {identity}"),
]


@validate_params(
    {
        "n_pairs": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "words": ["mapping", None],
    }
)
def gentemp(n_pairs: int | None = None, *, random_state: Any = None, words: dict | None = None):
    """GenTemp-style gender-swapped templates for GAUC / FPED / FNED (Rios & Lwowski 2020).

    Every filled template is emitted twice, once with the male and once with the female term
    of a pair (a *pair*), with label 1 (offensive) for the negative-verb / negative-adjective
    / "i hate" versions and 0 otherwise. With all combinations this gives 792 pairs (1,584
    texts): 8 gender pairs × (5 + 4 verbs + 2 + 20 + 24 + 20 + 24 adjectives). The paper's
    GenTemp has 712 pairs drawn by Dixon et al.'s randomised generator, which cannot be
    reproduced exactly; ``n_pairs=712`` draws that many pairs without replacement (seeded by
    ``random_state``).

    Parameters
    ----------
    n_pairs : int, optional
        Sample this many pairs (default: all).
    random_state : None, int or Generator
        Used only when sampling.
    words : dict, optional
        Replace any of the word lists in :data:`GENTEMP_WORDS`.

    Returns
    -------
    pandas.DataFrame
        Columns ``text``, ``label`` (1 = offensive), ``group`` ("male"/"female"), ``term``,
        ``pair`` (pair id) and ``template``; male row first within each pair.

    Examples
    --------
    >>> df = gentemp()
    >>> len(df), int(df.label.sum()), df.group.value_counts().to_dict()
    (1584, 848, {'male': 792, 'female': 792})
    >>> df.text.iloc[0], df.text.iloc[1]
    ('hug male', 'hug female')
    >>> len(gentemp(712, random_state=0))
    1424
    """
    import pandas as pd

    w = {**GENTEMP_WORDS, **(words or {})}
    rows = []
    pair = 0
    for m_term, f_term in w["gender_pairs"]:
        for tid, good, bad in GENTEMP_TEMPLATES:
            for label, tmpl in ((0, good), (1, bad)):
                slots = [s for s in ("verb_positive", "verb_negative", "adjective_positive", "adjective_negative")
                         if "{" + s + "}" in tmpl]
                fills = w[slots[0]] if slots else [None]
                for fill in fills:
                    for group, term in (("male", m_term), ("female", f_term)):
                        kw = {"identity": term}
                        if slots:
                            kw[slots[0]] = fill
                        rows.append((tmpl.format(**kw), label, group, term, pair, tid))
                    pair += 1
    df = pd.DataFrame(rows, columns=["text", "label", "group", "term", "pair", "template"])
    if n_pairs is not None:
        n_pairs = check_int(n_pairs, "n_pairs", low=1, high=pair, func="gentemp")
        keep = np.sort(check_random_state(random_state).choice(pair, size=n_pairs, replace=False))
        df = df[df["pair"].isin(keep)].reset_index(drop=True)
    return df
