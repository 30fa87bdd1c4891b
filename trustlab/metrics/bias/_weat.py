"""WEAT (Caliskan et al. 2017; Azarpanah & Farhadloo 2021), the packaged word sets and the Table 3 summary."""
from __future__ import annotations

import json
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import (
    Interval,
    Options,
    check_int,
    check_interval,
    check_option,
    validate_params,
)
from trustlab.datasets import open_data
from trustlab.metrics.bias._permutation import ALTERNATIVES, weat_permutation_test
from trustlab.metrics.bias._similarity import (
    COVARIANCE_ESTIMATORS,
    SIMILARITIES,
    STATISTICS,
    _associations,
    weat_effect_size,
)
from trustlab.metrics.embeddings import Embeddings, MissingWordsWarning, as_embeddings


@dataclass(frozen=True)
class WEATResult(ResultMixin):
    """Result of :func:`weat`.

    Attributes
    ----------
    effect_size : float
        (mean_x s - mean_y s) / std_{X u Y} s with ``ddof``; signed.
    statistic : float
        Caliskan's test statistic sum_x s(x) - sum_y s(y) (signed; P2 reports its
        absolute value).
    p_value : float
    method, n_permutations, alternative, p_value_se :
        See :class:`PermutationResult`.
    similarity, statistic_name : str
    ddof : int
    sizes : dict
        Words used per set after dropping missing ones.
    dropped : dict
        Missing words per set (empty lists when none).
    associations_x, associations_y : list of float
        s(w, A, B) per target word.

    Examples
    --------
    >>> r = weat({"x": [1.0, 0.0], "y": [0.0, 1.0], "a": [1.0, 0.1], "b": [0.1, 1.0]}, ["x"], ["y"], ["a"], ["b"])
    >>> isinstance(r, WEATResult), r.method, r.sizes
    (True, 'exact', {'X': 1, 'Y': 1, 'A': 1, 'B': 1})
    """

    effect_size: float
    statistic: float
    p_value: float
    method: str
    n_permutations: int
    alternative: str
    p_value_se: float
    similarity: str
    statistic_name: str
    ddof: int
    sizes: dict
    dropped: dict
    associations_x: list = field(default_factory=list)
    associations_y: list = field(default_factory=list)
    name: str = ""

    def significant(self, alpha: float = 0.05) -> bool:
        return bool(self.p_value < alpha)


@dataclass(frozen=True)
class WEATSummary(ResultMixin):
    """Significance summary over several WEAT tests (Azarpanah & Farhadloo, Table 3).

    Attributes
    ----------
    n_significant : int
        Tests with p < ``alpha``.
    n_tests : int
    mean_abs_effect, sd_abs_effect : float
        Mean and sample SD (ddof=1) of |effect size| over the tests.
    alpha : float
    results : dict
        Test id -> :class:`WEATResult` as a dict.
    alternative : str
        The sidedness of every p-value ("greater"/"less" are one-sided, the default of
        :func:`weat_summary`; :func:`weat_test` and :func:`weat` default to "two-sided").

    Examples
    --------
    >>> s = weat_summary(load_weat_embeddings(), tests=[6, 7])
    >>> isinstance(s, WEATSummary), s.n_tests, sorted(s.results)
    (True, 2, ['6', '7'])
    """

    n_significant: int
    n_tests: int
    mean_abs_effect: float
    sd_abs_effect: float
    alpha: float
    results: dict
    alternative: str = ""


def _lookup_sets(emb: Embeddings, sets: Mapping[str, Any], on_missing: str):
    vecs, used, dropped = {}, {}, {}
    for key, words in sets.items():
        lk = emb.lookup(words, name=f"{key} set", on_missing=on_missing)
        vecs[key] = lk.vectors
        used[key] = lk.words
        dropped[key] = lk.missing
    return vecs, used, dropped


@validate_params(
    {
        "X": ["array-like"],
        "Y": ["array-like"],
        "A": ["array-like"],
        "B": ["array-like"],
        "similarity": [str],
        "statistic": [Options({"mean", "median", "min", "max", "discrete"})],
        "ddof": [Interval(numbers.Integral, 0, None, closed="left")],
        "permutations": [Interval(numbers.Integral, 1, 1000000000, closed="both"), Options({"auto", "exact"})],
        "exact_limit": [Interval(numbers.Integral, 1, None, closed="left")],
        "alternative": [Options({"two-sided", "greater", "less"})],
        "on_missing": [Options({"drop", "raise"})],
        "covariance": [str],
        "random_state": ["random_state"],
        "backend": [Options({"auto", "cpu", "gpu"})],
        "name": [str],
    }
)
def weat(
    embeddings: Any,
    X: Sequence[str],
    Y: Sequence[str],
    A: Sequence[str],
    B: Sequence[str],
    *,
    similarity: str = "cosine",
    statistic: str = "mean",
    ddof: int = 1,
    permutations: int | str = "auto",
    exact_limit: int = 1_000_000,
    alternative: str = "two-sided",
    on_missing: str = "drop",
    covariance: str = "graphical_lasso_cv",
    precision: tuple[np.ndarray, np.ndarray] | None = None,
    random_state: Any = None,
    backend: str = "auto",
    name: str = "",
) -> WEATResult:
    """Generalised Word Embedding Association Test with an exact or sampled p-value.

    Per target word w the association is
    s(w, A, B) = f_{a in A} sim(w, a) - f_{b in B} sim(w, b) with f the chosen
    ``statistic`` (mean: Caliskan's WEAT; median, min, max: Azarpanah & Farhadloo eq. 1),
    or, for ``statistic="discrete"``, min_{a, b} |sim(w, a) - sim(w, b)| (their eq. 2).
    The effect size is (mean_X s - mean_Y s) / std_{X u Y} s.

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    X, Y : sequence of str
        Target word sets (may differ in size; permutations keep the sizes).
    A, B : sequence of str
        Attribute word sets.
    similarity : {"cosine", "euclidean", "manhattan", "mahalanobis"}
        Distances are used as they are (not negated), as in Azarpanah & Farhadloo:
        their per-word sign is the reverse of cosine's; ``alternative="two-sided"``
        is unaffected.
    statistic : {"mean", "median", "min", "max", "discrete"}
    ddof : int
        Delta degrees of freedom of the effect-size SD; 1 reproduces Caliskan's values.
    permutations : "auto", "exact" or int
        See :func:`weat_permutation_test`.
    exact_limit : int
    alternative : {"two-sided", "greater", "less"}
    on_missing : {"drop", "raise"}
        Dropped words are listed in ``result.dropped`` and warned about.
    covariance : {"graphical_lasso_cv", "ledoit_wolf"}
        Mahalanobis only: estimator of the attribute-set precision matrix
        (GraphicalLassoCV(cv=3) is Azarpanah & Farhadloo's choice). Its cost is the catch:
        with 8 attribute words in 300 dimensions (WEAT 6) the graphical lasso is far from
        its regime (n ≪ d) and converges slowly — the default grid did not finish in 240 s,
        and even a coarse grid (``alphas=4, n_refinements=2, tol=1e-3``) took 108 s per
        attribute set on a loaded 2-core machine (noisy timing). ``"ledoit_wolf"`` is the
        practical choice (closed form, milliseconds; the whole WEAT 6 test with its exact
        permutation p-value ran in ~23 s there, effect size −1.85: distances have the
        opposite polarity to cosine). To use the paper's estimator anyway, fit it once per
        attribute set and pass ``precision=(P_A, P_B)`` to every test that shares the sets.
        A's precision is used for distances to a in A, B's for b in B. The paper fitted
        synonym-augmented attribute sets (not released), so Mahalanobis results are an
        approximation of theirs.
    precision : (P_A, P_B), optional
        Precomputed precision matrices (d x d); overrides ``covariance``.
    random_state : None, int or Generator
    backend : {"auto", "cpu", "gpu"}
    name : str
        Label stored in the result.

    Returns
    -------
    WEATResult

    Raises
    ------
    ValueError
        Empty sets, all words of a set missing, NaN vectors, unknown names, bad
        precision shapes, fewer than 2 target words.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> words = ["x1", "x2", "y1", "y2", "a1", "a2", "b1", "b2"]
    >>> emb = dict(zip(words, rng.normal(size=(8, 5))))
    >>> r = weat(emb, ["x1", "x2"], ["y1", "y2"], ["a1", "a2"], ["b1", "b2"])
    >>> r.method, r.n_permutations, -2 <= r.effect_size <= 2
    ('exact', 6, True)
    """
    func = "weat"
    check_option(similarity, "similarity", list(SIMILARITIES), func=func)
    check_option(statistic, "statistic", STATISTICS, func=func)
    check_option(on_missing, "on_missing", ["drop", "raise"], func=func)
    check_option(alternative, "alternative", ALTERNATIVES, func=func)
    ddof = check_int(ddof, "ddof", low=0, func=func)
    emb = as_embeddings(embeddings)
    vecs, used, dropped = _lookup_sets(emb, {"X": X, "Y": Y, "A": A, "B": B}, on_missing)
    if any(dropped.values()):
        warnings.warn(
            f"WEAT {name or ''}: dropped words with no vector: "
            f"{ {k: v for k, v in dropped.items() if v} } (listed in result.dropped).",
            MissingWordsWarning,
            stacklevel=2,
        )
    nx, ny = len(used["X"]), len(used["Y"])
    if nx + ny <= ddof:
        raise ValueError(f"ddof={ddof} needs more than {ddof} target words; X u Y has {nx + ny}.")
    W = np.vstack([vecs["X"], vecs["Y"]])
    if similarity in ("cosine",):
        for key in ("X", "Y", "A", "B"):
            zero = ~np.any(vecs[key] != 0, axis=1)  # (not the norm: it underflows for tiny vectors)
            if zero.any():
                z = [w for w, x in zip(used[key], zero) if x]
                raise ValueError(f"cosine similarity is undefined for the zero vectors of {z} (in {key}).")
    PA = PB = None
    if similarity == "mahalanobis":
        d = emb.dim
        if precision is not None:
            if not (isinstance(precision, (tuple, list)) and len(precision) == 2):
                raise ValueError("precision must be a pair (P_A, P_B) of d x d matrices.")
            PA = np.asarray(precision[0], dtype=np.float64)
            PB = np.asarray(precision[1], dtype=np.float64)
            for P, nm in ((PA, "P_A"), (PB, "P_B")):
                if P.shape != (d, d) or not np.isfinite(P).all():
                    raise ValueError(
                        f"precision {nm} must be a finite {d} x {d} matrix (embedding dim {d}); got shape {P.shape}."
                    )
        else:
            est = COVARIANCE_ESTIMATORS[covariance]
            for key in ("A", "B"):
                if len(used[key]) < 3:
                    raise ValueError(
                        f"Mahalanobis needs at least 3 words in {key} to estimate a covariance "
                        f"(3-fold CV); got {len(used[key])}. Pass precision=(P_A, P_B) instead."
                    )
            PA, PB = est(vecs["A"]), est(vecs["B"])
    sim = SIMILARITIES[similarity]
    SA = sim(W, vecs["A"], PA)
    SB = sim(W, vecs["B"], PB)
    s = np.ascontiguousarray(_associations(SA, SB, statistic), dtype=np.float64)
    sx, sy = s[:nx], s[nx:]
    es = weat_effect_size(sx, sy, ddof=ddof)
    perm = weat_permutation_test(
        s, nx, permutations=permutations, exact_limit=exact_limit, alternative=alternative,
        random_state=random_state, backend=backend,
    )
    return WEATResult(
        effect_size=es,
        statistic=float(sx.sum() - sy.sum()),
        p_value=perm.p_value,
        method=perm.method,
        n_permutations=perm.n_permutations,
        alternative=alternative,
        p_value_se=perm.p_value_se,
        similarity=similarity,
        statistic_name=statistic,
        ddof=ddof,
        sizes={k: len(v) for k, v in used.items()},
        dropped=dropped,
        associations_x=sx.tolist(),
        associations_y=sy.tolist(),
        name=name,
    )


def load_weat_sets() -> dict[str, Any]:
    """The Caliskan et al. (2017) WEAT word sets and test definitions (corrected).

    Returns a dict with ``"sets"`` (name -> word list), ``"tests"`` (``"1"`` ..
    ``"10"`` -> {"name", "X", "Y", "A", "B"} naming sets) and ``"corrections"``.
    Relative to the copy packaged by ``wefe``, WEAT 3 uses Caliskan's unpleasant list
    (``bomb``, ``evil`` instead of ``agony``, ``prison``) and ``young_people_names``
    has ``Billy`` (Caliskan) instead of ``Bill``.

    Examples
    --------
    >>> d = load_weat_sets()
    >>> d["tests"]["6"]["X"], len(d["sets"]["career"])
    ('male_names', 8)
    """
    with open_data("weat", "weat_wordsets.json", mode="r", encoding="utf-8") as fh:
        return json.load(fh)


def load_weat_embeddings() -> Embeddings:
    """The word2vec GoogleNews vectors of the WEAT words (and the gender-direction
    pairs and P6 professions) shipped with trustlab, 300-d float32.

    Subset of the ``test_model.kv`` file shipped in the MIT-licensed ``wefe``
    package; see ``trustlab/data/weat/LICENSE-NOTES.md``.

    Examples
    --------
    >>> emb = load_weat_embeddings()
    >>> emb.dim, "flower" in emb or "aster" in emb
    (300, True)
    """
    with open_data("weat", "word2vec_weat_subset.npz") as fh:
        with np.load(fh, allow_pickle=False) as z:
            return Embeddings([str(w) for w in z["words"]], z["vectors"])


def _test_sets(test: int | str) -> tuple[str, dict[str, list[str]]]:
    d = load_weat_sets()
    key = str(test)
    if key not in d["tests"]:
        raise ValueError(f"Unknown WEAT test {test!r}. Valid choices are: {sorted(d['tests'], key=int)}.")
    t = d["tests"][key]
    return t["name"], {k: d["sets"][t[k]] for k in ("X", "Y", "A", "B")}


@validate_params({"test": [Interval(numbers.Integral, 1, None, closed='left'), str]})
def weat_test(embeddings: Any, test: int | str, **kwargs) -> WEATResult:
    """Run Caliskan's WEAT ``test`` (1..10) with the packaged, corrected word sets.

    ``kwargs`` go to :func:`weat`. The p-value is **two-sided** by default (``weat``'s
    ``alternative="two-sided"``), whereas :func:`weat_summary` defaults to one-sided p-values
    in the stereotype direction (Caliskan et al. and the Table 3 summary are one-sided); pass
    ``alternative="greater"`` for the one-sided value. ``result.alternative`` always says which.

    Parameters
    ----------
    embeddings : Embeddings or mapping
        Word vectors (e.g. :func:`load_weat_embeddings` or :func:`trustlab.metrics.load_embeddings`).
    test : int or str
        Caliskan et al.'s test number, 1 to 10 (as an int or a string such as "6").
    **kwargs
        Passed to :func:`weat` (``alternative``, ``similarity``, ``random_state``...).

    Examples
    --------
    >>> r = weat_test(load_weat_embeddings(), 6)
    >>> round(r.effect_size, 2), r.method, r.n_permutations
    (1.89, 'exact', 12870)
    """
    name, sets = _test_sets(test)
    kwargs.setdefault("name", f"WEAT {test}: {name}")
    return weat(embeddings, sets["X"], sets["Y"], sets["A"], sets["B"], **kwargs)


@validate_params(
    {
        "tests": ["array-like"],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "alternative": [Options({"auto", "two-sided", "greater", "less"})],
        "progress": ["boolean"],
    }
)
def weat_summary(
    embeddings: Any,
    tests: Sequence[int] = tuple(range(1, 11)),
    *,
    alpha: float = 0.01,
    alternative: str = "auto",
    progress: bool = False,
    **kwargs,
) -> WEATSummary:
    """Significance summary over WEAT tests (Azarpanah & Farhadloo, Table 3).

    Counts the tests with p < ``alpha`` and gives the mean and SD (ddof=1) of the
    absolute effect sizes. ``kwargs`` go to :func:`weat`.

    Parameters
    ----------
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
    tests : sequence of int
        Caliskan test numbers (default all ten).
    alpha : float
        Significance level; 0.01 is the paper's first significance marker.
    alternative : {"auto", "two-sided", "greater", "less"}
        ``"auto"``: one-sided in the stereotype direction, i.e. ``"greater"`` for
        cosine and ``"less"`` for the distance measures (whose polarity is reversed),
        ``"two-sided"`` for the (sign-free) discrete statistic. With the defaults,
        mean cosine on the shipped word2vec vectors gives 7 significant tests,
        (mean, SD) of |d| = (1.13, 0.55): Table 3's word2vec row is 7 (1.13, 0.54).
    progress : bool
        Show a tqdm progress bar.

    Examples
    --------
    >>> s = weat_summary(load_weat_embeddings(), tests=[6, 7, 8])
    >>> s.n_tests, s.n_significant
    (3, 2)
    """
    alpha = check_interval(alpha, "alpha", low=0, high=1, closed="neither", func="weat_summary")
    if len(tests) == 0:
        raise ValueError("tests is empty; pass at least one WEAT test number (1..10).")
    check_option(alternative, "alternative", ("auto",) + ALTERNATIVES, func="weat_summary")
    if alternative == "auto":
        if kwargs.get("statistic", "mean") == "discrete":
            alternative = "two-sided"
        elif kwargs.get("similarity", "cosine") == "cosine":
            alternative = "greater"
        else:
            alternative = "less"
    kwargs["alternative"] = alternative
    results = {}
    it = tests
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(tests, desc="WEAT", unit="test")
    for t in it:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingWordsWarning)
            results[str(t)] = weat_test(embeddings, t, **kwargs)
    d = np.array([abs(r.effect_size) for r in results.values()])
    return WEATSummary(
        n_significant=int(sum(r.p_value < alpha for r in results.values())),
        n_tests=len(results),
        mean_abs_effect=float(d.mean()),
        sd_abs_effect=float(d.std(ddof=1)) if d.size > 1 else 0.0,
        alpha=alpha,
        results={k: r.to_dict() for k, r in results.items()},
        alternative=alternative,
    )
