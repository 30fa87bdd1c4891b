"""Explanation metrics that take attribution (saliency) vectors as input; no model needed.

* **Plausibility test** of Ding & Koehn (NAACL 2021): cue vs attractor sets, expected and
  alternative scenarios, with the Random and Nearest baselines
  (:func:`plausibility`, :func:`plausibility_baselines`).
* **Faithfulness** of Ding & Koehn: model consistency and input consistency, the mean
  Pearson correlation after zeroing small saliencies (:func:`model_consistency`,
  :func:`input_consistency`, :func:`winobias_template_groups`).
* **Mass accuracy** of GECOBench (Wilming et al.) with token aggregation, and its
  uniform-random baseline (:func:`mass_accuracy`, :func:`mass_accuracy_uniform_baseline`);
  the GECO **co-occurrence dataset bias** (:func:`geco_cooccurrence_bias`), the model-free
  **Pattern Variant** (:func:`pattern_variant_attributions`, word-level approximation) and the
  Wilcoxon test of gender attribution differences (:func:`attribution_difference_test`).
* Decoy applicability / productivity / coverage (Idahl et al. 2021, :func:`decoy_statistics`).
* AEC **precision at K** (Misra et al. 2021) and the MOXIE **influence score** and
  **unlike ratio** (Kumar et al. 2021).
* Readers for the released formats (Ding & Koehn saliency/span/index files, GECO jsonl)
  and loaders for the copies bundled with trustlab (:func:`load_ding_koehn`,
  :func:`load_geco`).

Every metric returns a small dataclass with the value, the counts behind it, a
confidence interval where one is meaningful, and what was dropped.
"""
from __future__ import annotations

import numbers

import ast
import gzip
import io
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from trustlab._results import ResultMixin
from trustlab.datasets import read_text
from trustlab._validation import check_interval, check_int, check_option
from trustlab._validation import Interval, Options, validate_params

__all__ = [
    # readers / loaders
    "read_saliency",
    "read_spans",
    "read_indices",
    "read_geco_jsonl",
    "load_ding_koehn",
    "load_geco",
    "DingKoehnData",
    "GecoData",
    # plausibility
    "plausibility",
    "plausibility_baselines",
    "PlausibilityResult",
    "BaselineResult",
    # faithfulness
    "clamped_pearson",
    "model_consistency",
    "input_consistency",
    "winobias_template_groups",
    "ConsistencyResult",
    # GECOBench
    "aggregate_attributions",
    "mass_accuracy",
    "mass_accuracy_uniform_baseline",
    "MassAccuracyResult",
    "geco_cooccurrence_bias",
    "CooccurrenceBiasResult",
    "pattern_variant_attributions",
    "attribution_difference_test",
    "AttributionDifferenceResult",
    # decoys (Idahl et al.)
    "decoy_statistics",
    "DecoyStatistics",
    # AEC / MOXIE
    "precision_at_k",
    "uncertainty_scores",
    "influence_score",
    "unlike_ratio",
]

WINOBIAS_GENDER_NOUNS = (
    "aunt", "boy", "bride", "brother", "daughter", "father", "girl", "granddaughter",
    "grandfather", "grandmother", "grandson", "groom", "husband", "lady", "lord", "man",
    "monk", "mother", "nun", "sister", "son", "uncle", "wife", "woman",
)


# --------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------
def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def _mean_ci(x: np.ndarray) -> tuple[float, float]:
    """95% Student-t interval for the mean of ``x`` (NaN when fewer than 2 values)."""
    n = x.size
    if n < 2:
        return (math.nan, math.nan)
    from scipy.stats import t

    m = float(x.mean())
    se = float(x.std(ddof=1)) / math.sqrt(n)
    h = float(t.ppf(0.975, n - 1)) * se
    return (m - h, m + h)


def _open_text(path: str | os.PathLike):
    """Open a text file, transparently gunzipping ``*.gz``."""
    p = os.fspath(path)
    if os.path.isdir(p):
        raise IsADirectoryError(f"expected a file, got the directory {p!r}")
    if not os.path.exists(p):
        raise FileNotFoundError(f"no such file: {p!r}")
    if p.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(p, "rb"), encoding="utf-8")
    return open(p, encoding="utf-8")


def _lines_of(source: Any, what: str) -> list[str]:
    """Lines from a path, a file object or an already split list of strings."""
    if isinstance(source, (str, os.PathLike)):
        with _open_text(source) as fh:
            return fh.read().splitlines()
    if hasattr(source, "read"):
        return source.read().splitlines()
    if isinstance(source, Iterable):
        return [str(s) for s in source]
    raise TypeError(f"{what} must be a path, a file object or a list of lines; got {type(source).__name__}")


def _parse_vector(s: str, lineno: int, what: str) -> np.ndarray:
    s = s.strip()
    if s.startswith("[") and s.endswith("]"):
        s = s[1:-1]
    if not s.strip():
        return np.empty(0, dtype=np.float64)
    try:
        v = np.array([float(t) for t in s.split(",")], dtype=np.float64)
    except ValueError:
        raise ValueError(
            f"{what}: line {lineno} is not a list of numbers: {s[:60]!r}. Expected one "
            "Python/JSON list per line, e.g. [0.1, -0.2, 0.3]."
        ) from None
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what}: line {lineno} contains NaN or infinity; saliency must be finite.")
    return v


# --------------------------------------------------------------------------------------
# readers for the released formats
# --------------------------------------------------------------------------------------
@validate_params({"source": ["source"]})
def read_saliency(source: Any) -> list[np.ndarray]:
    """Read a Ding & Koehn saliency file (``out.verum`` / ``out.malum``).

    One example per line, written as a Python list of floats (``str(tensor.tolist())``);
    a bare number (a one-word prefix) is accepted too. ``*.gz`` files are decompressed.

    Parameters
    ----------
    source : path, file object or list of str

    Returns
    -------
    list of numpy.ndarray
        One float64 vector per example.

    Raises
    ------
    ValueError
        On a line that is not a list of finite numbers.

    Examples
    --------
    >>> [v.tolist() for v in read_saliency(["[0.5, -1.0]", "2.0"])]
    [[0.5, -1.0], [2.0]]
    """
    lines = _lines_of(source, "saliency")
    return [_parse_vector(s, i + 1, "saliency") for i, s in enumerate(lines) if s.strip() or i < len(lines) - 1]


@validate_params({"source": ["source"]})
def read_spans(source: Any) -> tuple[list[list[tuple[int, int]]], list[list[tuple[int, int]]]]:
    """Read a Ding & Koehn ``all.subjs.txt`` file: ``[(i, j), ...] ||| [(k, l), ...]``.

    The left list holds the cue spans (words agreeing with the expected tag), the right
    one the attractor spans; spans are 0-based and inclusive.

    Returns
    -------
    cue_spans, attractor_spans : list of list of (int, int)

    Examples
    --------
    >>> read_spans(["[(1, 1)] ||| [(4, 4), (6, 7)]"])
    ([[(1, 1)]], [[(4, 4), (6, 7)]])
    """
    cues, attrs = [], []
    for i, line in enumerate(_lines_of(source, "spans")):
        if not line.strip():
            continue
        parts = line.split("|||")
        if len(parts) != 2:
            raise ValueError(
                f"spans: line {i + 1} must look like '[(1, 1)] ||| [(4, 4)]'; got {line[:60]!r}."
            )
        try:
            c, a = (ast.literal_eval(p.strip()) for p in parts)
        except (ValueError, SyntaxError):
            raise ValueError(f"spans: line {i + 1} is not two lists of (start, end) pairs: {line[:60]!r}.") from None
        cues.append([(int(s), int(e)) for s, e in c])
        attrs.append([(int(s), int(e)) for s, e in a])
    return cues, attrs


@validate_params({"source": ["source"]})
def read_indices(source: Any) -> np.ndarray:
    """Read an index file (``out.pos.idx``, ``out.passed.idx``): one integer per line.

    Examples
    --------
    >>> read_indices(["3", "7", ""]).tolist()
    [3, 7]
    """
    vals = []
    for i, s in enumerate(_lines_of(source, "indices")):
        s = s.strip()
        if not s:
            continue
        try:
            vals.append(int(s))
        except ValueError:
            raise ValueError(f"indices: line {i + 1} is not an integer: {s!r}.") from None
    return np.asarray(vals, dtype=np.int64)


@dataclass
class DingKoehnData:
    """A Ding & Koehn test set with the released saliency outputs of one model.

    Attributes
    ----------
    prefixes : list of str
        The test prefixes (whitespace-tokenised).
    tags : numpy.ndarray
        The expected tag per example.
    cue_spans, attractor_spans : list of list of (int, int)
        Inclusive 0-based word spans.
    verum, malum : list of numpy.ndarray or None
        Saliency towards the expected / the alternative tag.
    expected : numpy.ndarray or None
        Indices of the examples whose prediction is the expected tag (``out.pos.idx``).
    passed : numpy.ndarray or None
        The released pass list (``out.passed.idx``), for checking.
    """

    prefixes: list[str]
    tags: np.ndarray
    cue_spans: list[list[tuple[int, int]]]
    attractor_spans: list[list[tuple[int, int]]]
    verum: list[np.ndarray] | None = None
    malum: list[np.ndarray] | None = None
    expected: np.ndarray | None = None
    passed: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.prefixes)


_DK_TASKS = {"gender": ("Winobias", "example-gender"), "number": ("Syneval", "example-number")}
_DK_ALIASES = {"winobias": "gender", "syneval": "number", "gender": "gender", "number": "number"}


@validate_params({"task": [str], "model": [Options({"sota", "distilled"})]})
def load_ding_koehn(task: str = "gender", model: str = "sota") -> DingKoehnData:
    """Load a bundled Ding & Koehn test set with the released Transformer + SmoothGrad saliency.

    Parameters
    ----------
    task : {"gender", "number"} (aliases "winobias", "syneval")
        ``"gender"`` is Winobias (1,000 prefixes), ``"number"`` is Syneval (6,280).
    model : {"sota", "distilled"}
        The full 16-layer Transformer LM or its 4-layer distilled model.

    Returns
    -------
    DingKoehnData

    Notes
    -----
    Copied from shuoyangd/tarsius (MIT), see ``trustlab/data/explain/LICENSE-NOTES.md``.

    Examples
    --------
    >>> d = load_ding_koehn("gender", "sota")
    >>> len(d), len(d.verum), len(d.expected)
    (1000, 1000, 347)
    """
    if not isinstance(task, str) or task.lower() not in _DK_ALIASES:
        raise ValueError(f"Unknown task {task!r}. Valid choices are: ['gender', 'number', 'syneval', 'winobias'].")
    task = _DK_ALIASES[task.lower()]
    check_option(model, "model", ["sota", "distilled"], func="load_ding_koehn")
    ds, ex = _DK_TASKS[task]
    prefixes = read_text("explain", "ding_koehn", ds, "all.prefx.txt.gz").splitlines()
    tags = read_indices(read_text("explain", "ding_koehn", ds, "all.tag.txt.gz").splitlines())
    cues, attrs = read_spans(read_text("explain", "ding_koehn", ds, "all.subjs.txt.gz").splitlines())
    sal = ("ding_koehn", "saliency", ex, model)
    return DingKoehnData(
        prefixes=prefixes,
        tags=tags,
        cue_spans=cues,
        attractor_spans=attrs,
        verum=read_saliency(read_text("explain", *sal, "out.verum.gz").splitlines()),
        malum=read_saliency(read_text("explain", *sal, "out.malum.gz").splitlines()),
        expected=read_indices(read_text("explain", *sal, "out.pos.idx.gz").splitlines()),
        passed=read_indices(read_text("explain", *sal, "out.passed.idx.gz").splitlines()),
    )


@dataclass
class GecoData:
    """GECO sentences (GECOBench) in the released jsonl layout.

    Attributes
    ----------
    sentences : list of list of str
    ground_truth : list of numpy.ndarray
        0/1 per word: 1 marks the gendered (altered) words.
    targets : numpy.ndarray
        1 = male, 0 = female.
    sentence_idx : numpy.ndarray
        Links the male and female versions of a sentence.
    """

    sentences: list[list[str]]
    ground_truth: list[np.ndarray]
    targets: np.ndarray
    sentence_idx: np.ndarray

    def __len__(self) -> int:
        return len(self.sentences)


def _parse_geco_lines(lines: Iterable[str], what: str) -> GecoData:
    sents, gts, tg, idx = [], [], [], []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            s = [str(w) for w in rec["sentence"]]
            g = np.asarray(rec["ground_truth"], dtype=np.float64)
            t = int(rec["target"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{what}: line {i + 1} is not a GECO record with 'sentence', 'ground_truth' and "
                f"'target' ({exc})."
            ) from None
        if g.shape != (len(s),):
            raise ValueError(
                f"{what}: line {i + 1} has {len(s)} words but {g.size} ground-truth labels; they must match."
            )
        sents.append(s)
        gts.append(g)
        tg.append(t)
        idx.append(int(rec.get("sentence_idx", i)))
    if not sents:
        raise ValueError(f"{what}: no records found.")
    return GecoData(sents, gts, np.asarray(tg, dtype=np.int64), np.asarray(idx, dtype=np.int64))


@validate_params({"source": ["source"]})
def read_geco_jsonl(source: Any) -> GecoData:
    """Read a GECO jsonl file (``sentence``, ``ground_truth``, ``target``, ``sentence_idx``).

    Examples
    --------
    >>> rec = '{"sentence": ["He", "ran"], "ground_truth": [1, 0], "target": 1, "sentence_idx": 0}'
    >>> read_geco_jsonl([rec]).targets.tolist()
    [1]
    """
    return _parse_geco_lines(_lines_of(source, "GECO jsonl"), "GECO jsonl")


@validate_params({"variant": [Options({"all", "subj"})], "split": [Options({"train", "test"})]})
def load_geco(variant: str = "all", split: str = "test") -> GecoData:
    """Load a bundled GECO split: ``variant`` "all" (D_A) or "subj" (D_S), ``split`` "train"/"test".

    Notes
    -----
    Copied from braindatalab/gecobench (BSD-3-Clause); see ``LICENSE-NOTES.md``.

    Examples
    --------
    >>> len(load_geco("all", "test")), len(load_geco("subj", "train"))
    (644, 2576)
    """
    check_option(variant, "variant", ["all", "subj"], func="load_geco")
    check_option(split, "split", ["train", "test"], func="load_geco")
    text = read_text("explain", "geco", f"binary_gender_{variant}_{split}.jsonl.gz")
    return _parse_geco_lines(text.splitlines(), f"GECO {variant}/{split}")


# --------------------------------------------------------------------------------------
# ragged helpers
# --------------------------------------------------------------------------------------
def _ragged(vectors: Sequence[Any], name: str, *, allow_empty_rows: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Validate a sequence of 1-D numeric vectors and pack them as (values, offsets).

    One conversion per row, then every check runs once on the packed array.
    """
    if isinstance(vectors, np.ndarray) and vectors.ndim == 2:
        vals2 = np.ascontiguousarray(vectors, dtype=np.float64)
        vectors = list(vals2)
    if isinstance(vectors, (str, bytes)) or not isinstance(vectors, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of 1-D arrays (one per example); got {type(vectors).__name__}.")
    if len(vectors) == 0:
        raise ValueError(f"{name} is empty; at least one example is required.")
    try:
        arrs = [np.asarray(v, dtype=np.float64) for v in vectors]
    except (TypeError, ValueError):
        for i, v in enumerate(vectors):
            try:
                np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"{name}[{i}] is not a numeric vector.") from None
        raise
    shapes = [a.shape for a in arrs]
    if not all(len(sh) == 1 for sh in shapes):
        i = next(k for k, sh in enumerate(shapes) if len(sh) != 1)
        raise ValueError(f"{name}[{i}] must be 1-D; got shape {shapes[i]}.")
    lengths = np.fromiter((sh[0] for sh in shapes), dtype=np.int64, count=len(arrs))
    if not allow_empty_rows and np.any(lengths == 0):
        i = int(np.flatnonzero(lengths == 0)[0])
        raise ValueError(f"{name}[{i}] is empty; every example needs at least one word.")
    off = np.zeros(len(arrs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    values = np.concatenate(arrs) if off[-1] > 0 else np.empty(0, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.searchsorted(off, int(np.flatnonzero(~finite)[0]), side="right") - 1)
        raise ValueError(f"{name}[{i}] contains NaN or infinity; attributions must be finite.")
    return np.ascontiguousarray(values, dtype=np.float64), off


def _flat_spans(spans: Sequence[Sequence[tuple[int, int]]], lengths: np.ndarray, name: str):
    """Spans as flat arrays (example id, start, end), validated against the lengths."""
    if len(spans) != lengths.size:
        raise ValueError(
            f"{name} has {len(spans)} examples but the saliency has {lengths.size}; they must match."
        )
    counts = np.fromiter((len(sp) for sp in spans), dtype=np.int64, count=len(spans))
    if np.any(counts == 0):
        i = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"{name}[{i}] is empty; every example needs at least one span.")
    try:
        se = np.array([p for sp in spans for p in sp], dtype=np.int64).reshape(-1, 2)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold (start, end) integer pairs.") from None
    ex_id = np.repeat(np.arange(len(spans), dtype=np.int64), counts)
    s, e = se[:, 0], se[:, 1]
    bad = (s < 0) | (e < s) | (e >= lengths[ex_id])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        i = int(ex_id[k])
        raise ValueError(
            f"{name}[{i}] has span ({int(s[k])}, {int(e[k])}) outside the {int(lengths[i])} words of example {i} "
            "(spans are 0-based and inclusive; the saliency vector must have one entry per word)."
        )
    return ex_id, s, e


def _spans_to_positions(
    spans: Sequence[Sequence[tuple[int, int]]], lengths: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """Expand inclusive spans into word positions (CSR; a word may repeat, harmless for max)."""
    ex_id, s, e = _flat_spans(spans, lengths, name)
    width = e - s + 1
    start_of_span = np.repeat(s - np.r_[0, np.cumsum(width)[:-1]], width)
    pos = start_of_span + np.arange(int(width.sum()), dtype=np.int64)
    per_ex = np.bincount(ex_id, weights=width, minlength=len(spans)).astype(np.int64)
    off = np.zeros(len(spans) + 1, dtype=np.int64)
    np.cumsum(per_ex, out=off[1:])
    return np.ascontiguousarray(pos), off


def _span_sets(spans, lengths, name) -> list[frozenset]:
    ex_id, s, e = _flat_spans(spans, lengths, name)
    sets: list[set] = [set() for _ in range(len(spans))]
    for i, a, b in zip(ex_id.tolist(), s.tolist(), e.tolist()):
        sets[i].update(range(a, b + 1))
    return [frozenset(x) for x in sets]


def _expected_mask(expected: Any, n: int) -> np.ndarray:
    e = np.asarray(expected)
    if e.dtype == bool:
        if e.shape != (n,):
            raise ValueError(f"expected as a boolean mask must have shape ({n},); got {e.shape}.")
        return e.copy()
    if e.size and not np.issubdtype(e.dtype, np.integer):
        raise TypeError("expected must be a boolean mask or an array of example indices (out.pos.idx).")
    e = e.astype(np.int64).ravel()
    if e.size and (e.min() < 0 or e.max() >= n):
        raise ValueError(f"expected holds indices outside [0, {n - 1}]: min {e.min()}, max {e.max()}.")
    m = np.zeros(n, dtype=bool)
    m[e] = True
    return m


def _check_tokens(tokens: Sequence[Any] | None, lengths: np.ndarray, name: str) -> None:
    if tokens is None:
        return
    if len(tokens) != lengths.size:
        raise ValueError(f"tokens has {len(tokens)} examples but {name} has {lengths.size}.")
    for i, t in enumerate(tokens):
        nt = len(t.split()) if isinstance(t, str) else len(t)
        if nt != lengths[i]:
            raise ValueError(
                f"{name}[{i}] has {int(lengths[i])} attributions but example {i} has {nt} tokens; "
                "attribution vectors must have one entry per token."
            )


# --------------------------------------------------------------------------------------
# plausibility (Ding & Koehn)
# --------------------------------------------------------------------------------------
@dataclass
class PlausibilityResult(ResultMixin):
    """Result of :func:`plausibility`.

    ``value`` is the overall pass rate ("all" = p_exp * exp + p_alt * alt); ``ci`` its
    95% Wilson interval; ``passed`` the indices of the passing examples (the released
    ``out.passed.idx``).
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


@validate_params({"verum": ["array-like"], "malum": ["array-like"], "cue_spans": ["array-like"], "attractor_spans": ["array-like"], "tokens": ["array-like", None]})
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


# --------------------------------------------------------------------------------------
# faithfulness: model and input consistency
# --------------------------------------------------------------------------------------
@dataclass
class ConsistencyResult(ResultMixin):
    """Result of :func:`model_consistency` / :func:`input_consistency`.

    ``value`` is the mean clamped Pearson r over the compared pairs; ``ci`` a 95%
    t-interval over pairs; ``n_skipped_length`` pairs were skipped because the vectors
    differ in length (as the released scripts do), ``n_undefined`` because r is undefined
    (a constant vector); ``r`` holds every pair's r (NaN where skipped).
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


@validate_params({"saliency_a": ["array-like"], "saliency_b": ["array-like"], "threshold": [Interval(numbers.Real, 0, 1, closed='both')]})
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


@validate_params({"saliency": ["array-like"], "groups": ["array-like"], "threshold": [Interval(numbers.Real, 0, 1, closed='both')]})
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


@validate_params({"prefixes": ["array-like"], "block_size": [Interval(numbers.Integral, 1, None, closed='left')], "max_groups": [Interval(numbers.Integral, 1, None, closed='left'), None], "nouns": ["array-like"]})
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


# --------------------------------------------------------------------------------------
# GECOBench: mass accuracy and co-occurrence bias
# --------------------------------------------------------------------------------------
@validate_params({"attribution": ["array-like"], "word_ids": ["array-like", None]})
def aggregate_attributions(attribution: Any, word_ids: Sequence[int] | None = None) -> np.ndarray:
    """GECOBench aggregation of token attributions to normalised word importances.

    A 2-D ``(tokens, embedding_dims)`` attribution is first summed over the embedding
    dimensions; with ``word_ids`` (one word index per token, ``-1`` for special tokens to
    drop) sub-word tokens are summed into their word; finally the absolute values are
    normalised to sum to 1.

    Parameters
    ----------
    attribution : array of shape (tokens,) or (tokens, dims)
    word_ids : sequence of int, optional

    Returns
    -------
    numpy.ndarray
        Word-level importances summing to 1 (all zeros if every attribution is 0).

    Examples
    --------
    >>> aggregate_attributions([[1.0, -3.0], [0.5, 0.5], [2.0, 0.0]], word_ids=[0, 1, 1]).tolist()
    [0.4, 0.6]
    """
    a = np.asarray(attribution, dtype=np.float64)
    if a.ndim == 2:
        a = a.sum(axis=1)
    elif a.ndim != 1:
        raise ValueError(f"attribution must be 1-D (tokens) or 2-D (tokens, dims); got shape {a.shape}.")
    if a.size == 0:
        raise ValueError("attribution is empty.")
    if not np.all(np.isfinite(a)):
        raise ValueError("attribution contains NaN or infinity.")
    if word_ids is not None:
        w = np.asarray(word_ids, dtype=np.int64)
        if w.shape != a.shape:
            raise ValueError(f"word_ids has {w.size} entries but the attribution has {a.size} tokens.")
        keep = w >= 0
        if not keep.any():
            raise ValueError("word_ids marks every token as dropped (-1).")
        a = np.bincount(w[keep], weights=a[keep], minlength=int(w.max()) + 1)
    a = np.abs(a)
    s = a.sum()
    return a / s if s > 0 else a


@dataclass
class MassAccuracyResult(ResultMixin):
    """Result of :func:`mass_accuracy`: mean MA over sentences, 95% t-interval, per-sentence
    values (NaN for dropped sentences) and the indices dropped (all-zero attributions)."""

    value: float
    n: int
    ci: tuple[float, float]
    per_sentence: np.ndarray = field(repr=False)
    dropped: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0, np.int64))


def _gt_ragged(ground_truth: Sequence[Any], name: str = "ground_truth") -> tuple[np.ndarray, np.ndarray]:
    gv, go = _ragged(ground_truth, name)
    if not np.all((gv == 0) | (gv == 1)):
        raise ValueError(f"{name} must be 0/1 per word (1 marks a ground-truth word).")
    return gv, go


@validate_params({"attributions": ["array-like"], "ground_truth": ["array-like"], "word_ids": ["array-like", None], "tokens": ["array-like", None]})
def mass_accuracy(
    attributions: Sequence[Any],
    ground_truth: Sequence[Any],
    *,
    word_ids: Sequence[Sequence[int] | None] | None = None,
    tokens: Sequence[Any] | None = None,
) -> MassAccuracyResult:
    """GECOBench mass accuracy: the share of attribution mass on the ground-truth words.

    ``MA(h, s) = sum_j s_j h_j`` with ``s = |a| / sum |a|`` (after
    :func:`aggregate_attributions` for token-level or 2-D inputs), averaged over
    sentences. Sentences whose attributions are all zero have no MA; they are dropped and
    listed in ``dropped``.

    Parameters
    ----------
    attributions : sequence of arrays
        Per sentence: word-level vector, or token-level (tokens,) / (tokens, dims) with
        ``word_ids``.
    ground_truth : sequence of 0/1 arrays
        Per sentence, one label per word (GECO ``ground_truth``).
    word_ids : sequence of (sequence of int or None), optional
        Token-to-word maps (``-1`` drops a token), one per sentence.
    tokens : sequence of str or token lists, optional
        When given, checked against the word-level lengths.

    Returns
    -------
    MassAccuracyResult

    Raises
    ------
    ValueError
        Empty input, NaN, non-0/1 ground truth, or attribution vectors whose length does
        not match the words.

    Examples
    --------
    >>> r = mass_accuracy([[0.5, -0.5, 0.0], [1.0, 3.0]], [[1, 0, 0], [0, 1]])
    >>> r.value, r.per_sentence.tolist()
    (0.625, [0.5, 0.75])
    """
    from trustlab.kernels.explain import select_kernel

    if isinstance(attributions, (str, bytes)) or not isinstance(attributions, (Sequence, np.ndarray)):
        raise TypeError("attributions must be a sequence of arrays, one per sentence.")
    if len(attributions) == 0:
        raise ValueError("attributions is empty; at least one sentence is required.")
    if len(attributions) != len(ground_truth):
        raise ValueError(
            f"attributions has {len(attributions)} sentences but ground_truth has {len(ground_truth)}."
        )
    if word_ids is not None and len(word_ids) != len(attributions):
        raise ValueError(f"word_ids has {len(word_ids)} entries but attributions has {len(attributions)}.")
    av = None
    if word_ids is None:
        try:  # fast path: word-level 1-D vectors, validated once as a packed array
            av, ao = _ragged(attributions, "attributions")
        except ValueError as exc:
            if "must be 1-D" not in str(exc):
                raise
    if av is None:
        words = []
        for i, a in enumerate(attributions):
            wid = None if word_ids is None else word_ids[i]
            arr = np.asarray(a, dtype=np.float64)
            if arr.ndim == 1 and wid is None:
                words.append(arr)  # checked once, packed, by _ragged below
            else:
                try:
                    words.append(aggregate_attributions(arr, wid))
                except ValueError as exc:
                    raise ValueError(f"attributions[{i}]: {exc}") from None
        av, ao = _ragged(words, "attributions")
    gv, go = _gt_ragged(ground_truth)
    la, lg = np.diff(ao), np.diff(go)
    bad = np.flatnonzero(la != lg)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"attributions[{i}] has {int(la[i])} word attributions but ground_truth[{i}] has {int(lg[i])} words; "
            "attribution vectors must have one entry per word (pass word_ids to aggregate sub-word tokens)."
        )
    _check_tokens(tokens, la, "attributions")
    per = select_kernel("ragged_mass_accuracy", int(av.size))(av, ao, gv)
    keep = ~np.isnan(per)
    if not keep.any():
        raise ValueError("every sentence has all-zero attributions; mass accuracy is undefined.")
    vals = per[keep]
    return MassAccuracyResult(
        value=float(vals.mean()),
        n=int(vals.size),
        ci=_mean_ci(vals),
        per_sentence=per,
        dropped=np.flatnonzero(~keep).astype(np.int64),
    )


@validate_params({"ground_truth": ["array-like"]})
def mass_accuracy_uniform_baseline(ground_truth: Sequence[Any]) -> MassAccuracyResult:
    """Expected mass accuracy of uniform random attributions ``s ~ U(0,1)^d``: mean ``k/d``.

    By exchangeability each word receives an equal expected share of the normalised mass,
    so ``E[MA] = k/d`` exactly per sentence (``k`` ground-truth words out of ``d``).

    Examples
    --------
    >>> mass_accuracy_uniform_baseline([[1, 0, 0, 0], [1, 1]]).value
    0.625
    >>> round(mass_accuracy_uniform_baseline(load_geco("all", "test").ground_truth).value, 3)
    0.169
    """
    gv, go = _gt_ragged(ground_truth)
    lens = np.diff(go)
    per = np.add.reduceat(gv, go[:-1]) / lens
    return MassAccuracyResult(value=float(per.mean()), n=int(per.size), ci=(math.nan, math.nan), per_sentence=per)


@dataclass
class CooccurrenceBiasResult(ResultMixin):
    """Result of :func:`geco_cooccurrence_bias`: ``value = C_F / (C_F + C_M)`` (0.5 = balanced)."""

    value: float
    count_female: int
    count_male: int
    n_sentences: int


@validate_params({"sentences": ["array-like"], "targets": ["array-like"], "male_terms": ["array-like"], "female_terms": ["array-like"], "count_gender_terms": ["boolean"]})
def geco_cooccurrence_bias(
    sentences: Sequence[Sequence[str]],
    targets: Sequence[int],
    *,
    male_terms: Sequence[Sequence[str]] = (("he",), ("him", "his")),
    female_terms: Sequence[Sequence[str]] = (("she",), ("her",)),
    count_gender_terms: bool = True,
) -> CooccurrenceBiasResult:
    """GECO co-occurrence dataset bias ``bias_C(D) = C(D^F) / (C(D^F) + C(D^M))`` (GECOBench A.1.3).

    For each term group of a gender and each sentence of that gender (target 1 = male,
    0 = female) that contains a term of the group, every word occurrence counts (words
    lower-cased, spaces removed, ``','`` and ``'.'`` tokens dropped). 0.5 means balanced.

    Parameters
    ----------
    sentences : sequence of token lists
    targets : sequence of int (1 = male, 0 = female)
    male_terms, female_terms : sequence of term groups
        The GECOBench groups ``[[he], [him, his]]`` and ``[[she], [her]]``.
    count_gender_terms : bool, default True
        The released code also counts the gender terms themselves as co-occurring words
        (its filter never matches); True reproduces the published 0.4999 (D_A) and 0.4753
        (D_S) on the training splits. False excludes them (0.4998 / 0.4751).

    Returns
    -------
    CooccurrenceBiasResult

    Examples
    --------
    >>> d = load_geco("all", "train")
    >>> round(geco_cooccurrence_bias(d.sentences, d.targets).value, 4)
    0.4999
    >>> d = load_geco("subj", "train")
    >>> round(geco_cooccurrence_bias(d.sentences, d.targets).value, 4)
    0.4753
    """
    if len(sentences) == 0:
        raise ValueError("sentences is empty.")
    t = np.asarray(targets)
    if t.shape != (len(sentences),):
        raise ValueError(f"targets has shape {t.shape} but there are {len(sentences)} sentences.")
    if not np.all((t == 0) | (t == 1)):
        raise ValueError("targets must be 1 (male) or 0 (female).")
    groups_m = [tuple(g) for g in male_terms]
    groups_f = [tuple(g) for g in female_terms]
    gender = {w for g in groups_m + groups_f for w in g}
    drop = {",", "."}
    counts = {0: 0, 1: 0}
    for s, tg in zip(sentences, t.tolist()):
        if isinstance(s, str):
            raise TypeError("each sentence must be a list of tokens, not a string.")
        words = [w.lower().replace(" ", "") for w in s]
        words = [w for w in words if w not in drop]
        present = set(words)
        n_words = len(words) if count_gender_terms else sum(1 for w in words if w not in gender)
        for g in groups_m if tg == 1 else groups_f:
            if any(term in present for term in g):
                counts[tg] += n_words
    cf, cm = counts[0], counts[1]
    if cf + cm == 0:
        raise ValueError("no sentence contains a gender term of its own gender; the bias is undefined.")
    return CooccurrenceBiasResult(value=cf / (cf + cm), count_female=cf, count_male=cm, n_sentences=len(sentences))


@validate_params({"sentences": ["array-like"], "targets": ["array-like"], "fit_sentences": ["array-like", None], "fit_targets": ["array-like", None]})
def pattern_variant_attributions(
    sentences: Sequence[Sequence[str]],
    targets: Sequence[int],
    *,
    fit_sentences: Sequence[Sequence[str]] | None = None,
    fit_targets: Sequence[int] | None = None,
) -> list[np.ndarray]:
    """GECOBench Pattern Variant: a global, model-free attribution ``s_j = |Cov(tfidf_j(x), y)|``.

    Word ``j``'s importance is the absolute covariance, over the fitting sentences, between
    its tf-idf column (scikit-learn ``CountVectorizer`` on lower-cased words +
    ``TfidfTransformer`` with its defaults: smooth idf, l2 norm) and the target; every
    word of a sentence gets the value of its vocabulary entry (0 if unseen).

    **Approximation:** GECOBench works at BERT-token level; this is the word-level variant
    (on the GECO test splits it gives mass accuracy 0.992 for D_A and 0.749 for D_S, the
    seed catalogue's anchors).

    Parameters
    ----------
    sentences : sequence of token lists
        Sentences to attribute.
    targets : sequence of int
        Their labels (used for fitting when ``fit_*`` are not given).
    fit_sentences, fit_targets : optional
        Fit the tf-idf and covariances on another set (e.g. the training split).

    Returns
    -------
    list of numpy.ndarray
        One non-negative vector per sentence (pass to :func:`mass_accuracy`).

    Examples
    --------
    >>> d = load_geco("all", "test")
    >>> round(mass_accuracy(pattern_variant_attributions(d.sentences, d.targets), d.ground_truth).value, 3)
    0.992
    """
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    fs = sentences if fit_sentences is None else fit_sentences
    ft = targets if fit_targets is None else fit_targets
    if len(sentences) == 0 or len(fs) == 0:
        raise ValueError("sentences is empty.")
    y = np.asarray(ft, dtype=np.float64)
    if y.shape != (len(fs),):
        raise ValueError(f"targets has shape {y.shape} but there are {len(fs)} fitting sentences.")
    if len(fs) < 2:
        raise ValueError("the covariance needs at least 2 fitting sentences.")
    if any(isinstance(x, str) for x in fs) or any(isinstance(x, str) for x in sentences):
        raise TypeError("each sentence must be a list of tokens, not a string.")
    cv = CountVectorizer(analyzer=lambda toks: [str(w).lower() for w in toks])
    X = TfidfTransformer().fit_transform(cv.fit_transform(fs))
    yc = y - y.mean()
    cov = np.abs(np.asarray(X.T @ yc).ravel() / (len(y) - 1))  # columns' mean drops out: sum(yc) = 0
    voc = cv.vocabulary_
    return [np.array([cov[voc[w.lower()]] if w.lower() in voc else 0.0 for w in map(str, s)]) for s in sentences]


@dataclass
class AttributionDifferenceResult(ResultMixin):
    """Result of :func:`attribution_difference_test`: mean ``|s(x^F) - s(x^M)|`` on ground-truth
    words, and the Wilcoxon signed-rank test of the signed differences."""

    value: float
    statistic: float
    pvalue: float
    n_words: int
    differences: np.ndarray = field(repr=False)


@validate_params({"attributions_female": ["array-like"], "attributions_male": ["array-like"], "ground_truth": ["array-like"], "normalise": ["boolean"]})
def attribution_difference_test(
    attributions_female: Sequence[Any],
    attributions_male: Sequence[Any],
    ground_truth: Sequence[Any],
    *,
    normalise: bool = True,
) -> AttributionDifferenceResult:
    """GECOBench gender attribution difference on the ground-truth words of paired sentences.

    For sentence pairs (female / male version of the same sentence, same length),
    ``d = s(f, x^F) - s(f, x^M)`` on every ground-truth word; reports mean ``|d|`` and a
    two-sided Wilcoxon signed-rank test of ``d`` (scipy) against 0.

    Parameters
    ----------
    attributions_female, attributions_male : sequence of 1-D arrays
        Word-level attributions of the paired sentences, in the same order.
    ground_truth : sequence of 0/1 arrays
        Ground-truth masks (identical within a pair).
    normalise : bool, default True
        Take ``|a| / sum |a|`` per sentence first (GECOBench's normalisation).

    Examples
    --------
    >>> r = attribution_difference_test([[0.2, 0.8], [0.5, 0.5]], [[0.4, 0.6], [0.1, 0.9]], [[1, 1], [1, 0]])
    >>> r.n_words, round(r.value, 3)
    (3, 0.267)
    """
    from scipy.stats import wilcoxon

    fv, fo = _ragged(attributions_female, "attributions_female")
    mv, mo = _ragged(attributions_male, "attributions_male")
    gv, go = _gt_ragged(ground_truth)
    if not (np.array_equal(fo, mo) and np.array_equal(fo, go)):
        raise ValueError(
            "attributions_female, attributions_male and ground_truth must have the same number of "
            "sentences and one entry per word in each."
        )
    if normalise:
        def norm(v, o):
            a = np.abs(v)
            tot = np.add.reduceat(a, o[:-1])
            if np.any(tot == 0):
                raise ValueError("a sentence has all-zero attributions; cannot normalise.")
            return a / np.repeat(tot, np.diff(o))
        fv, mv = norm(fv, fo), norm(mv, mo)
    d = (fv - mv)[gv == 1]
    if d.size == 0:
        raise ValueError("no ground-truth word to compare.")
    if np.all(d == 0):
        stat, p = 0.0, 1.0
    else:
        res = wilcoxon(d)
        stat, p = float(res.statistic), float(res.pvalue)
    return AttributionDifferenceResult(float(np.abs(d).mean()), stat, p, int(d.size), d)


@dataclass
class DecoyStatistics(ResultMixin):
    """Result of :func:`decoy_statistics` (Idahl et al. 2021, eq. 1)."""

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


# --------------------------------------------------------------------------------------
# AEC precision at K, MOXIE influence and unlike ratio
# --------------------------------------------------------------------------------------
@validate_params({"scores": ["array-like"], "is_error": ["array-like"], "k": [Interval(numbers.Integral, 1, None, closed='left'), "array-like"]})
def precision_at_k(scores: Any, is_error: Any, k: int | Sequence[int]) -> float | np.ndarray:
    """AEC precision at K: the share of true errors among the K highest-scored instances.

    Instances are ranked by decreasing score; ties keep the input order (stable sort).

    Parameters
    ----------
    scores : 1-D array
        P(error) or any score, higher = more likely an error.
    is_error : 1-D array of bool/0-1
        Whether the base model was wrong on each instance.
    k : int or sequence of int
        1 <= K <= number of instances.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> precision_at_k([0.9, 0.1, 0.8, 0.7], [1, 1, 0, 1], [1, 2, 3])
    array([1.        , 0.5       , 0.66666667])
    """
    s = np.asarray(scores, dtype=np.float64)
    e = np.asarray(is_error)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array; got shape {s.shape}.")
    if e.shape != s.shape:
        raise ValueError(f"is_error has shape {e.shape} but scores has {s.shape}.")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contains NaN or infinity.")
    if not np.all((e == 0) | (e == 1)):
        raise ValueError("is_error must be boolean or 0/1.")
    ks = np.atleast_1d(np.asarray(k))
    ks_int = [check_int(int(x) if float(x).is_integer() else x, "k", low=1, high=s.size, func="precision_at_k") for x in ks]
    order = np.argsort(-s, kind="stable")
    hits = np.cumsum(e[order].astype(np.float64))
    out = np.array([hits[x - 1] / x for x in ks_int])
    return float(out[0]) if np.ndim(k) == 0 else out


@validate_params({"proba": ["array-like"]})
def uncertainty_scores(proba: Any) -> np.ndarray:
    """Least-confidence uncertainty ``1 - max_c p(c|x)`` (the AEC uncertainty baseline).

    Examples
    --------
    >>> uncertainty_scores([[0.9, 0.1], [0.5, 0.5]]).tolist()
    [0.09999999999999998, 0.5]
    """
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or p.size == 0:
        raise ValueError(f"proba must be a non-empty (n_samples, n_classes) array; got shape {p.shape}.")
    if not np.all(np.isfinite(p)):
        raise ValueError("proba contains NaN or infinity.")
    return 1.0 - p.max(axis=1)


@validate_params({"logits": ["array-like"], "positive": [Interval(numbers.Integral, 0, None, closed='left')]})
def influence_score(logits: Any, positive: int = 1) -> np.ndarray:
    """MOXIE influence score ``s = 2 * softmax(logits)[positive] - 1`` in [-1, 1].

    (The paper prints ``+ 1``, which contradicts its stated range; see the catalogue.)

    Examples
    --------
    >>> influence_score([[0.0, 0.0], [0.0, 50.0]]).round(6).tolist()
    [0.0, 1.0]
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim == 1:
        z = z[None, :]
    if z.ndim != 2 or z.shape[1] < 2 or z.shape[0] == 0:
        raise ValueError(f"logits must have shape (n, n_classes >= 2); got {np.shape(logits)}.")
    if not np.all(np.isfinite(z)):
        raise ValueError("logits contains NaN or infinity.")
    positive = check_int(positive, "positive", low=0, high=z.shape[1] - 1, func="influence_score")
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return 2.0 * p[:, positive] - 1.0


@validate_params({"predictions": ["array-like"]})
def unlike_ratio(predictions: Any, label: Any) -> float | np.ndarray:
    """MOXIE unlike ratio: the share of vocabulary substitutions whose prediction differs from ``label``.

    Parameters
    ----------
    predictions : array of shape (|V|,) or (n_contexts, |V|)
        Predicted class per substituted word (argmax of the student output).
    label : int or array of shape (n_contexts,)

    Returns
    -------
    float or numpy.ndarray (one ratio per context; multiply by 100 for the paper's tables)

    Examples
    --------
    >>> unlike_ratio([1, 0, 0, 1], 1)
    0.5
    """
    p = np.asarray(predictions)
    if p.size == 0:
        raise ValueError("predictions is empty.")
    if p.ndim == 1:
        return float(np.mean(p != label))
    if p.ndim != 2:
        raise ValueError(f"predictions must be 1-D or 2-D; got shape {p.shape}.")
    lab = np.asarray(label)
    if lab.ndim == 0:
        lab = np.full(p.shape[0], lab)
    if lab.shape != (p.shape[0],):
        raise ValueError(f"label must be a scalar or have shape ({p.shape[0]},); got {lab.shape}.")
    return np.mean(p != lab[:, None], axis=1)
