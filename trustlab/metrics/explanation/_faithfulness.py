"""Faithfulness of Ding & Koehn: model consistency and input consistency."""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import Interval, check_int, check_interval, validate_params
from trustlab.metrics.explanation._common import _mean_ci, _ragged

WINOBIAS_GENDER_NOUNS = (
    "aunt", "boy", "bride", "brother", "daughter", "father", "girl", "granddaughter",
    "grandfather", "grandmother", "grandson", "groom", "husband", "lady", "lord", "man",
    "monk", "mother", "nun", "sister", "son", "uncle", "wife", "woman",
)


@dataclass
class ConsistencyResult(ResultMixin):
    """Result of :func:`model_consistency` / :func:`input_consistency`.

    ``value`` is the mean clamped Pearson r over the compared pairs; ``ci`` a 95%
    t-interval over pairs; ``n_skipped_length`` pairs were skipped because the vectors
    differ in length (as the released scripts do), ``n_undefined`` because r is undefined
    (a constant vector); ``r`` holds every pair's r (NaN where skipped).

    Attributes
    ----------
    value : float
        Mean clamped Pearson r over the compared pairs.
    n_pairs : int
        Pairs compared.
    n_skipped_length, n_undefined : int
        Pairs skipped for differing lengths, and for an undefined r.
    threshold : float
        The clamping threshold.
    ci : (float, float)
        95% t-interval of ``value``.
    r : numpy.ndarray
        Every pair's r (NaN where skipped).

    Examples
    --------
    >>> c = model_consistency([[1.0, 2.0, 3.0], [1.0, 0.0, 2.0]], [[2.0, 4.0, 7.0], [1.0, 1.0, 2.0]])
    >>> isinstance(c, ConsistencyResult), c.n_pairs, round(c.value, 3)
    (True, 2, 0.93)
    """

    value: float
    n_pairs: int
    n_skipped_length: int
    n_undefined: int
    threshold: float
    ci: tuple[float, float]
    r: np.ndarray = field(repr=False)


@validate_params({"x": ["array-like"], "y": ["array-like"], "threshold": [Interval(numbers.Real, 0, 1, closed='both')]})
def clamped_pearson(x: Any, y: Any, threshold: float = 0.01) -> float:
    """Pearson r after zeroing entries below ``threshold * max|.|`` (each vector its own max).

    The faithfulness recipe of Ding & Koehn (2021), ``NEGLECT_THRESH = 0.01``.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        The two saliency vectors.
    threshold : float
        Entries below ``threshold * max|.|`` of their own vector are set to 0.

    Examples
    --------
    The tiny 0.001 is zeroed, so ``y = 2 x`` exactly after clamping:

    >>> round(clamped_pearson([1.0, 2.0, 3.0, 0.001], [2.0, 4.0, 6.0, 0.0]), 12)
    1.0
    """
    from trustlab.kernels.explain import select_kernel

    t = check_interval(threshold, "threshold", low=0, high=1, closed="both", func="clamped_pearson")
    xv, xo = _ragged([x], "x")
    yv, yo = _ragged([y], "y")
    if xv.size != yv.size:
        raise ValueError(f"x has {xv.size} entries but y has {yv.size}; they must have the same length.")
    z = np.zeros(1, dtype=np.int64)
    return float(select_kernel("clamped_pearson_pairs", 0)(xv, xo, yv, yo, z, z, t)[0])


def _consistency(xv, xo, yv, yo, pi, pj, t) -> ConsistencyResult:
    from trustlab.kernels.explain import select_kernel

    work = int(np.diff(xo)[pi].sum()) * 3
    r = select_kernel("clamped_pearson_pairs", work)(xv, xo, yv, yo, pi, pj, t)
    skip = np.diff(xo)[pi] != np.diff(yo)[pj]
    undefined = np.isnan(r) & ~skip
    ok = r[~np.isnan(r)]
    if ok.size == 0:
        raise ValueError(
            "no pair of saliency vectors could be compared (all differ in length or are constant)."
        )
    return ConsistencyResult(
        value=float(ok.mean()),
        n_pairs=int(ok.size),
        n_skipped_length=int(skip.sum()),
        n_undefined=int(undefined.sum()),
        threshold=t,
        ci=_mean_ci(ok),
        r=r,
    )


@validate_params(
    {
        "saliency_a": ["array-like"],
        "saliency_b": ["array-like"],
        "threshold": [Interval(numbers.Real, 0, 1, closed="both")],
    }
)
def model_consistency(
    saliency_a: Sequence[Any], saliency_b: Sequence[Any], *, threshold: float = 0.01
) -> ConsistencyResult:
    """Model consistency: mean clamped Pearson r between two models' saliency, per example.

    Ding & Koehn compare a model M with its distilled M'. Each pair of vectors is
    clamped (entries with ``|psi| < threshold * max|psi|`` set to 0) and correlated;
    examples whose vectors differ in length are skipped (and counted), as in the
    released script.

    Parameters
    ----------
    saliency_a, saliency_b : sequence of 1-D arrays
        The same examples, in the same order.
    threshold : float in [0, 1], default 0.01

    Returns
    -------
    ConsistencyResult

    Examples
    --------
    >>> from trustlab.metrics.explanation import load_ding_koehn
    >>> a = load_ding_koehn("gender", "sota"); b = load_ding_koehn("gender", "distilled")
    >>> round(model_consistency(a.verum, b.verum).value, 3), round(model_consistency(a.malum, b.malum).value, 3)
    (0.656, 0.581)
    """
    t = check_interval(threshold, "threshold", low=0, high=1, closed="both", func="model_consistency")
    xv, xo = _ragged(saliency_a, "saliency_a")
    yv, yo = _ragged(saliency_b, "saliency_b")
    n = xo.size - 1
    if yo.size - 1 != n:
        raise ValueError(f"saliency_a has {n} examples but saliency_b has {yo.size - 1}; they must match.")
    idx = np.arange(n, dtype=np.int64)
    return _consistency(xv, xo, yv, yo, idx, idx, t)


@validate_params(
    {"saliency": ["array-like"], "groups": ["array-like"], "threshold": [Interval(numbers.Real, 0, 1, closed="both")]}
)
def input_consistency(
    saliency: Sequence[Any], groups: Sequence[Sequence[int]], *, threshold: float = 0.01
) -> ConsistencyResult:
    """Input consistency: mean clamped Pearson r between perturbed inputs of a template.

    Every group lists examples built from one template (only the perturbed words
    differ); its first member is the reference and each other member of the same length
    is compared with it (clamped Pearson, see :func:`model_consistency`).

    Parameters
    ----------
    saliency : sequence of 1-D arrays
    groups : sequence of sequence of int
        Example indices per template, reference first (see :func:`winobias_template_groups`).
    threshold : float in [0, 1], default 0.01

    Returns
    -------
    ConsistencyResult

    Examples
    --------
    Table 4a of Ding & Koehn, Transformer + SmoothGrad on Winobias (exp / alt):

    >>> from trustlab.metrics.explanation import load_ding_koehn
    >>> d = load_ding_koehn("gender", "sota")
    >>> g = winobias_template_groups(d.prefixes, max_groups=147)
    >>> round(input_consistency(d.verum, g).value, 3), round(input_consistency(d.malum, g).value, 3)
    (0.775, 0.752)
    """
    t = check_interval(threshold, "threshold", low=0, high=1, closed="both", func="input_consistency")
    xv, xo = _ragged(saliency, "saliency")
    n = xo.size - 1
    pi, pj = [], []
    for gi, g in enumerate(groups):
        g = [int(x) for x in g]
        if not g:
            continue
        if any(x < 0 or x >= n for x in g):
            raise ValueError(f"groups[{gi}] has an index outside [0, {n - 1}].")
        for x in g[1:]:
            pi.append(g[0])
            pj.append(x)
    if not pi:
        raise ValueError("groups gives no pair to compare; each group needs a reference and at least one more member.")
    return _consistency(xv, xo, xv, xo, np.asarray(pi, np.int64), np.asarray(pj, np.int64), t)


@validate_params(
    {
        "prefixes": ["array-like"],
        "block_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_groups": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "nouns": ["array-like"],
    }
)
def winobias_template_groups(
    prefixes: Sequence[str],
    *,
    block_size: int = 500,
    max_groups: int | None = None,
    nouns: Sequence[str] = WINOBIAS_GENDER_NOUNS,
) -> list[list[int]]:
    """Group Winobias prefixes by template, as the released ``group_by_content.sh`` does.

    Within each block of ``block_size`` consecutive lines (the script treats lines
    1-500 and 501-1000 separately), a template is the prefix with the first occurrence of
    each gendered noun replaced by ``','``; the sorted unique templates (byte order) are
    enumerated across blocks. A template's group is every line of its block that contains
    the template's second and third comma-separated fields as substrings (``cut -d, -f2``,
    ``-f3`` then ``grep``), in file order; the first member is the reference.

    Parameters
    ----------
    prefixes : sequence of str
    block_size : int, default 500
    max_groups : int or None
        Keep only the first groups. The released evaluation uses 147 (this reproduces
        Table 4a); ``None`` keeps all (283 on Winobias).
    nouns : sequence of str
        The gendered nouns to blank out.

    Returns
    -------
    list of list of int

    Examples
    --------
    >>> winobias_template_groups(["The man saw the nun because", "The woman saw the monk because"])
    [[0, 1]]
    """
    if len(prefixes) == 0:
        raise ValueError("prefixes is empty.")
    block_size = check_int(block_size, "block_size", low=1, func="winobias_template_groups")
    if max_groups is not None:
        max_groups = check_int(max_groups, "max_groups", low=1, func="winobias_template_groups")
    nounlist = list(nouns)
    groups: list[list[int]] = []
    for b0 in range(0, len(prefixes), block_size):
        block = [" ".join(str(p).split()) for p in prefixes[b0 : b0 + block_size]]
        templates = set()
        for line in block:
            toks = line.split()
            for w in nounlist:
                if w in toks:
                    toks[toks.index(w)] = ","
            templates.add(" ".join(toks))
        for tpl in sorted(templates, key=lambda s: s.encode("utf-8")):
            parts = tpl.split(",")
            f2 = parts[1] if len(parts) > 1 else tpl
            f3 = parts[2] if len(parts) > 2 else ("" if len(parts) > 1 else tpl)
            groups.append([b0 + i for i, line in enumerate(block) if f2 in line and f3 in line])
    return groups[:max_groups] if max_groups is not None else groups
