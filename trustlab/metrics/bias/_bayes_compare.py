"""The Bayesian bias model across embeddings (Dobrzeniecka & Urbaniak, "A Bayesian method of cosine-based
word2vec bias estimation", extended abstract): Google News, Reddit, hard-debiased Reddit, GloVe.

Dobrzeniecka & Urbaniak fit the same hierarchical model to the raw cosine distances of each
embedding and compare the posteriors. :func:`compare_bayesian_bias` does that on the bundled
data (:func:`load_bayes_data`, all 12 topic × embedding files of their repository) or on the
user's own frames, and summarises the *identified* quantity of the model: the contrast of two
connection coefficients, e.g. co[associated] − co[different] (m + co is additively
non-identified, but differences of co levels are not), with its HPDI per embedding and the
difference of that contrast between embeddings.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from trustlab._results import ResultMixin
from trustlab._validation import Interval, Options, check_random_state, validate_params
from trustlab.datasets import open_data
from trustlab.metrics.bias._bayesian import bayesian_bias, hpdi

__all__ = ["BAYES_TOPICS", "BAYES_EMBEDDINGS", "load_bayes_data", "compare_bayesian_bias", "BayesComparison"]

BAYES_TOPICS = ("religion", "gender", "race")
BAYES_EMBEDDINGS = ("google", "reddit", "reddit_debiased", "glove")


@validate_params({"topic": [Options(set(BAYES_TOPICS))], "embedding": [Options(set(BAYES_EMBEDDINGS))],
                  "drop_missing": ["boolean"]})
def load_bayes_data(topic: str = "religion", embedding: str = "reddit", *, drop_missing: bool = True):
    """Raw cosine distances of Dobrzeniecka & Urbaniak for one topic and embedding.

    Parameters
    ----------
    topic : {"religion", "gender", "race"}
    embedding : {"google", "reddit", "reddit_debiased", "glove"}
        word2vec GoogleNews, Reddit word2vec (Manzini et al.), the same after hard
        debiasing, or GloVe.
    drop_missing : bool
        Drop rows whose distance is the source's ``-100`` placeholder for a word missing
        from the embedding (GloVe lacks the attribute word "literaly": 15 / 14 / 18 rows for
        religion / gender / race; a cosine distance lies in [0, 2], and one -100 among
        thousands of values would dominate the residual SD of the model).

    Returns
    -------
    pandas.DataFrame
        Columns ``protected_word``, ``word_to_compare``, ``word_class``, ``connection``
        (associated / different / human / none), ``cosine_distance``; one row per pair
        (see ``trustlab/data/bayes/LICENSE-NOTES.md``).

    Examples
    --------
    >>> df = load_bayes_data("gender", "reddit_debiased")
    >>> len(df), sorted(df.connection.unique())
    (4704, ['associated', 'different', 'human', 'none'])
    """
    import pandas as pd

    parts = ("weat", "religion_reddit_cosine.csv.gz") if (topic, embedding) == ("religion", "reddit") else \
        ("bayes", f"{topic}_{embedding}.csv.gz")
    with open_data(*parts) as fh:
        df = pd.read_csv(fh, compression="gzip")
    if drop_missing:
        df = df[df["cosine_distance"].between(0.0, 2.0)].reset_index(drop=True)
    return df


@dataclass(frozen=True)
class BayesComparison(ResultMixin):
    """Result of :func:`compare_bayesian_bias`.

    Attributes
    ----------
    contrast : tuple of str
        The two connection levels (a, b) compared: co[a] − co[b].
    per_embedding : list of dict
        embedding, mean, hpdi_low, hpdi_high, includes_zero of co[a] − co[b], and n_obs.
    differences : list of dict
        For every ordered pair of embeddings (first, second): the posterior of
        contrast(second) − contrast(first) (independent fits: the difference of their
        draws), mean, HPDI, includes_zero.
    coefficients : list of dict
        Every coefficient of every fit, with an ``embedding`` column.
    hdi_prob : float
    fits : dict
        embedding -> :class:`BayesianBiasResult` (with its draws).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> con = np.repeat(["associated", "different"], 20)
    >>> df = pd.DataFrame({"protected_word": np.tile(["a", "b"], 20), "connection": con,
    ...                    "cosine_distance": 0.8 + np.where(con == "associated", -0.3, 0)
    ...                    + 0.05 * rng.standard_normal(40)})
    >>> r = compare_bayesian_bias({"w2v": df}, draws=100, warmup=50, random_state=0)
    >>> isinstance(r, BayesComparison), r.contrast, r.per_embedding[0]["n_obs"]
    (True, ('associated', 'different'), 40)
    >>> r.per_embedding[0]["mean"] < 0, r.per_embedding[0]["includes_zero"]
    (True, False)
    """

    contrast: tuple
    per_embedding: list
    differences: list
    coefficients: list
    hdi_prob: float
    fits: dict = field(repr=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"contrast": list(self.contrast), "per_embedding": self.per_embedding,
                "differences": self.differences, "coefficients": self.coefficients, "hdi_prob": self.hdi_prob}

    def to_frame(self):
        """``per_embedding`` as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.per_embedding)


@validate_params(
    {
        "datasets": ["mapping", None],
        "topic": [Options(set(BAYES_TOPICS))],
        "embeddings": ["array-like"],
        "contrast": ["array-like"],
        "draws": [Interval(numbers.Integral, 10, 10000000, closed="both")],
        "warmup": [Interval(numbers.Integral, 0, 10000000, closed="both")],
        "chains": [Interval(numbers.Integral, 1, 64, closed="both")],
        "hdi_prob": [Interval(numbers.Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }
)
def compare_bayesian_bias(
    datasets: Mapping[str, Any] | None = None,
    *,
    topic: str = "religion",
    embeddings: Sequence[str] = ("google", "reddit", "reddit_debiased"),
    contrast: Sequence[str] = ("associated", "different"),
    draws: int = 1000,
    warmup: int = 300,
    chains: int = 2,
    hdi_prob: float = 0.89,
    random_state: Any = None,
) -> BayesComparison:
    """Fit the Bayesian bias model per embedding and compare the bias contrast (Dobrzeniecka & Urbaniak).

    For each embedding, :func:`bayesian_bias` (model ``"connection"``) is fitted to its raw
    cosine distances; the bias is read from the identified contrast co[a] − co[b] of two
    connection levels (default associated − different: negative when stereotypically
    associated attributes are *closer* to the protected words than the other groups'
    attributes). The paper's reading: a bias estimate whose HPDI includes 0 is not evidence
    of bias, and debiasing should move the contrast towards 0.

    Parameters
    ----------
    datasets : mapping name -> DataFrame, optional
        Your own frames (columns as for :func:`bayesian_bias`). Default: the bundled data of
        ``topic`` for ``embeddings`` (:func:`load_bayes_data`).
    topic : {"religion", "gender", "race"}
        Used with the bundled data.
    embeddings : sequence of str
        Bundled embeddings to compare (ignored with ``datasets``).
    contrast : (str, str)
        The connection levels a, b of co[a] − co[b].
    draws, warmup, chains, hdi_prob, random_state
        As for :func:`bayesian_bias` (one independent seed per fit is drawn from
        ``random_state``).

    Returns
    -------
    BayesComparison

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> def frame(shift):
    ...     con = np.repeat(["associated", "different"], 50)
    ...     return pd.DataFrame({"protected_word": np.tile(["a", "b"], 50), "connection": con,
    ...                          "cosine_distance": 0.8 + np.where(con == "associated", shift, 0)
    ...                          + 0.05 * rng.standard_normal(100)})
    >>> r = compare_bayesian_bias({"biased": frame(-0.2), "debiased": frame(0.0)}, draws=300,
    ...                           warmup=100, random_state=0)
    >>> [(e["embedding"], e["includes_zero"]) for e in r.per_embedding]
    [('biased', False), ('debiased', True)]
    """
    contrast = tuple(str(c) for c in contrast)
    if len(contrast) != 2 or contrast[0] == contrast[1]:
        raise ValueError(f"contrast must be two different connection levels (a, b); got {contrast}.")
    if datasets is None:
        names = [str(e) for e in embeddings]
        bad = [e for e in names if e not in BAYES_EMBEDDINGS]
        if bad or not names:
            raise ValueError(f"embeddings must be a non-empty list from {list(BAYES_EMBEDDINGS)}; got {names}.")
        datasets = {e: load_bayes_data(topic, e) for e in names}
    if not datasets:
        raise ValueError("datasets is empty; give at least one name -> DataFrame.")
    rng = check_random_state(random_state)
    fits, per, coefs, cdraws = {}, [], [], {}
    for name, df in datasets.items():
        r = bayesian_bias(df, model="connection", draws=draws, warmup=warmup, chains=chains, hdi_prob=hdi_prob,
                          random_state=int(rng.integers(0, 2**63 - 1)))
        a, b = (f"co[{c}]" for c in contrast)
        if a not in r.draws or b not in r.draws:
            levels = sorted(k[3:-1] for k in r.draws if k.startswith("co["))
            raise ValueError(f"dataset {name!r} has connection levels {levels}; contrast {contrast} needs both.")
        x = r.draws[a] - r.draws[b]
        lo, hi = hpdi(x, hdi_prob)
        per.append({"embedding": str(name), "mean": float(x.mean()), "sd": float(x.std(ddof=1)), "hpdi_low": lo,
                    "hpdi_high": hi, "includes_zero": bool(lo <= 0.0 <= hi), "n_obs": r.n_obs})
        coefs += [{"embedding": str(name), **c} for c in r.coefficients]
        fits[str(name)] = r
        cdraws[str(name)] = x
    diffs = []
    keys = list(cdraws)
    for i, p in enumerate(keys):
        for q in keys[i + 1:]:
            n = min(cdraws[p].size, cdraws[q].size)
            x = cdraws[q][:n] - cdraws[p][:n]
            lo, hi = hpdi(x, hdi_prob)
            diffs.append({"first": p, "second": q, "mean": float(x.mean()), "hpdi_low": lo, "hpdi_high": hi,
                          "includes_zero": bool(lo <= 0.0 <= hi)})
    return BayesComparison(contrast=contrast, per_embedding=per, differences=diffs, coefficients=coefs,
                           hdi_prob=hdi_prob, fits=fits)
