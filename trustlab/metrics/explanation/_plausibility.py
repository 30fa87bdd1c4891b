"""The plausibility test of Ding & Koehn (NAACL 2021) with its Random and Nearest baselines."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import validate_params
from trustlab.metrics.explanation._common import (
    _check_tokens,
    _expected_mask,
    _ragged,
    _span_sets,
    _spans_to_positions,
    _wilson,
)


@dataclass
class PlausibilityResult(ResultMixin):
    """Result of :func:`plausibility`.

    ``value`` is the overall pass rate ("all" = p_exp * exp + p_alt * alt); ``ci`` its
    95% Wilson interval; ``passed`` the indices of the passing examples (the released
    ``out.passed.idx``).

    Attributes
    ----------
    value : float
        Overall pass rate.
    expected_rate, alternative_rate : float
        Pass rates in the expected and the alternative scenario.
    p_expected, p_alternative : float
        Shares of the examples in each scenario.
    n, n_expected, n_alternative : int
        Examples used, in all and per scenario.
    n_passed, n_passed_expected, n_passed_alternative : int
        Passing examples, in all and per scenario.
    ci : (float, float)
        95% Wilson interval of ``value``.
    passed : numpy.ndarray
        Indices of the passing examples.
    dropped : int
        Examples left out (no cue or no attractor word).

    Examples
    --------
    >>> r = plausibility([[0.1, 0.9, 0.2]], [[0.3, 0.1, 0.5]], [[(1, 1)]], [[(2, 2)]], [0])
    >>> isinstance(r, PlausibilityResult), r.n, r.n_passed
    (True, 1, 1)
    """

    value: float
    expected_rate: float
    alternative_rate: float
    p_expected: float
    p_alternative: float
    n: int
    n_expected: int
    n_alternative: int
    n_passed: int
    n_passed_expected: int
    n_passed_alternative: int
    ci: tuple[float, float]
    passed: np.ndarray = field(repr=False)
    dropped: int = 0


@validate_params(
    {
        "verum": ["array-like"],
        "malum": ["array-like"],
        "cue_spans": ["array-like"],
        "attractor_spans": ["array-like"],
        "tokens": ["array-like", None],
    }
)
def plausibility(
    verum: Sequence[Any],
    malum: Sequence[Any],
    cue_spans: Sequence[Sequence[tuple[int, int]]],
    attractor_spans: Sequence[Sequence[tuple[int, int]]],
    expected: Any,
    *,
    tokens: Sequence[Any] | None = None,
) -> PlausibilityResult:
    """Ding & Koehn's plausibility test of saliency against cue and attractor words.

    For each example, the saliency of a set of spans is the maximum over its words (the
    max within each span, then over spans). In the **expected** scenario (the model
    prefers the expected tag) the example passes iff
    ``max_{w in cue} verum[w] > max_{w in attractor} verum[w]``; in the **alternative**
    scenario (it prefers the other tag) it passes iff
    ``max_{cue} malum < max_{attractor} malum``, i.e. the attractor, which supports the
    wrong prediction, gets the larger saliency towards it. Both comparisons are strict,
    as in the released evaluation code, which this reproduces exactly.

    Parameters
    ----------
    verum, malum : sequence of 1-D arrays
        Word-level saliency towards the expected / the alternative tag, one vector per
        example (:func:`read_saliency` reads the released files).
    cue_spans, attractor_spans : sequence of sequence of (start, end)
        Inclusive 0-based word spans (:func:`read_spans`).
    expected : array of int or bool
        Indices of the expected-scenario examples (``out.pos.idx``) or a boolean mask;
        all other examples are in the alternative scenario.
    tokens : sequence of str or of token lists, optional
        When given, every saliency vector must have one entry per token.

    Returns
    -------
    PlausibilityResult

    Raises
    ------
    ValueError
        Empty input, NaN saliency, ``verum``/``malum`` lengths that differ, spans outside
        the vector, or saliency lengths that do not match ``tokens``.

    Examples
    --------
    >>> r = plausibility([[0.1, 0.9, 0.2]], [[0.3, 0.1, 0.5]], [[(1, 1)]], [[(2, 2)]], [0])
    >>> r.value, r.passed.tolist()
    (1.0, [0])

    Reproducing the released pass list:

    >>> from trustlab.metrics.explanation import load_ding_koehn
    >>> d = load_ding_koehn("gender", "distilled")
    >>> r = plausibility(d.verum, d.malum, d.cue_spans, d.attractor_spans, d.expected)
    >>> r.n_passed, r.n_passed_expected, r.n_expected, r.n_passed_alternative, r.n_alternative
    (997, 324, 324, 673, 676)
    >>> bool(np.array_equal(r.passed, d.passed))
    True
    """
    from trustlab.kernels.explain import select_kernel

    v_val, v_off = _ragged(verum, "verum")
    m_val, m_off = _ragged(malum, "malum")
    n = v_off.size - 1
    lengths = np.diff(v_off)
    if m_off.size - 1 != n:
        raise ValueError(f"verum has {n} examples but malum has {m_off.size - 1}; they must match.")
    bad = np.flatnonzero(np.diff(m_off) != lengths)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"verum[{i}] has {int(lengths[i])} entries but malum[{i}] has {int(m_off[i + 1] - m_off[i])}; "
            "both must have one entry per word."
        )
    _check_tokens(tokens, lengths, "verum")
    c_pos, c_off = _spans_to_positions(cue_spans, lengths, "cue_spans")
    a_pos, a_off = _spans_to_positions(attractor_spans, lengths, "attractor_spans")
    exp = _expected_mask(expected, n)

    ragged_select_max = select_kernel("ragged_select_max", int(c_pos.size + a_pos.size) * 2)
    vc = ragged_select_max(v_val, v_off, c_pos, c_off)
    va = ragged_select_max(v_val, v_off, a_pos, a_off)
    mc = ragged_select_max(m_val, m_off, c_pos, c_off)
    ma = ragged_select_max(m_val, m_off, a_pos, a_off)
    ok = np.where(exp, vc > va, mc < ma)
    n_exp = int(exp.sum())
    n_alt = n - n_exp
    k_exp = int((ok & exp).sum())
    k_alt = int((ok & ~exp).sum())
    k = k_exp + k_alt
    return PlausibilityResult(
        value=k / n,
        expected_rate=k_exp / n_exp if n_exp else math.nan,
        alternative_rate=k_alt / n_alt if n_alt else math.nan,
        p_expected=n_exp / n,
        p_alternative=n_alt / n,
        n=n,
        n_expected=n_exp,
        n_alternative=n_alt,
        n_passed=k,
        n_passed_expected=k_exp,
        n_passed_alternative=k_alt,
        ci=_wilson(k, n),
        passed=np.flatnonzero(ok).astype(np.int64),
    )


@dataclass
class BaselineResult(ResultMixin):
    """Model-free plausibility baselines (pass rates in the expected / alternative scenario).

    ``random_*`` are the exact expectations under iid continuous random saliency;
    ``random_sd_*`` the standard deviation of one random draw's rate (over ``n`` examples);
    ``nearest_*`` give the top score to the cue/attractor word closest to the prediction
    point (the largest word index).

    Attributes
    ----------
    random_expected, random_alternative : float
        Expected pass rates under iid random saliency.
    random_sd_expected, random_sd_alternative : float
        Standard deviation of one random draw's pass rate.
    nearest_expected, nearest_alternative : float
        Pass rates of the nearest-word baseline.
    n : int
        Examples.
    n_overlap : int
        Examples whose cue and attractor spans overlap.

    Examples
    --------
    >>> b = plausibility_baselines([[(1, 1)], [(3, 3)]], [[(4, 4), (5, 5)], [(0, 0)]])
    >>> isinstance(b, BaselineResult), b.n, b.nearest_expected
    (True, 2, 0.5)
    """

    random_expected: float
    random_alternative: float
    random_sd_expected: float
    random_sd_alternative: float
    nearest_expected: float
    nearest_alternative: float
    n: int
    n_overlap: int


@validate_params({"cue_spans": ["array-like"], "attractor_spans": ["array-like"], "lengths": ["array-like", None]})
def plausibility_baselines(
    cue_spans: Sequence[Sequence[tuple[int, int]]],
    attractor_spans: Sequence[Sequence[tuple[int, int]]],
    lengths: Sequence[int] | None = None,
) -> BaselineResult:
    """Random and Nearest baselines of the plausibility test (Ding & Koehn, Table 3).

    Both are computed over all examples, as if every example were in the expected
    scenario (``*_expected``) or all in the alternative one (``*_alternative``).

    * **Random** (exact expectation, no simulation): with iid continuous scores the
      maximum over C ∪ A falls on each word with equal probability, so the expected
      pass rate is the mean of ``|C \\ A| / |C ∪ A|`` (and ``|A \\ C| / |C ∪ A|`` for the
      alternative scenario); with disjoint sets these are ``|C| / (|C| + |A|)`` and its
      complement. Words in both sets tie and pass neither test.
    * **Nearest**: the saliency of word ``j`` is ``j``, so the C ∪ A word nearest to the
      prediction point wins; expected passes iff the last cue word comes after the last
      attractor word, alternative iff it comes before.

    Parameters
    ----------
    cue_spans, attractor_spans : sequence of sequence of (start, end)
        Inclusive 0-based spans.
    lengths : sequence of int, optional
        Words per example; when given, spans are checked against it.

    Returns
    -------
    BaselineResult

    Examples
    --------
    >>> b = plausibility_baselines([[(1, 1)], [(3, 3)]], [[(4, 4), (5, 5)], [(0, 0)]])
    >>> round(b.random_expected, 4), b.nearest_expected
    (0.4167, 0.5)
    """
    if len(cue_spans) == 0:
        raise ValueError("cue_spans is empty; at least one example is required.")
    if len(cue_spans) != len(attractor_spans):
        raise ValueError(
            f"cue_spans has {len(cue_spans)} examples but attractor_spans has {len(attractor_spans)}."
        )
    if lengths is None:
        big = 1 + max(
            max(int(e) for s, e in sp) if len(sp) else 0 for sp in list(cue_spans) + list(attractor_spans)
        )
        lens = np.full(len(cue_spans), big, dtype=np.int64)
    else:
        lens = np.asarray(lengths, dtype=np.int64)
    cs = _span_sets(cue_spans, lens, "cue_spans")
    as_ = _span_sets(attractor_spans, lens, "attractor_spans")
    n = len(cs)
    pe = np.empty(n)
    pa = np.empty(n)
    ne = np.zeros(n, dtype=bool)
    na = np.zeros(n, dtype=bool)
    overlap = 0
    for i, (c, a) in enumerate(zip(cs, as_)):
        u = len(c | a)
        pe[i] = len(c - a) / u
        pa[i] = len(a - c) / u
        overlap += bool(c & a)
        mc, ma = max(c), max(a)
        ne[i] = mc > ma
        na[i] = mc < ma
    return BaselineResult(
        random_expected=float(pe.mean()),
        random_alternative=float(pa.mean()),
        random_sd_expected=float(math.sqrt(np.sum(pe * (1 - pe))) / n),
        random_sd_alternative=float(math.sqrt(np.sum(pa * (1 - pa))) / n),
        nearest_expected=float(ne.mean()),
        nearest_alternative=float(na.mean()),
        n=n,
        n_overlap=int(overlap),
    )
