"""MOXIE on any model: hybrid score, pairwise bias probe, adjective-context filter, POS vocabulary.

Kumar, Dixit & Shah (TrustNLP 2021): Sections 4.3 and 3.2.3/4.5, Appendices F.1 and C. The
classifier being explained (the *teacher*) and the fast surrogate used to screen substitutions
(the *student*; in the paper a trained MOXIE model) are the user's callables:
``fn(list_of_tokens) -> label or class scores``. Nothing here trains or downloads a model.

* :func:`hybrid_score` (Section 4.3) — unlike ratios, falling back to influence scores where
  the unlike ratios are uninformative (all equal, e.g. all 0), ties broken by influence.
* :func:`bias_probe` (Sections 3.2.3 and 4.5) — the pairwise control/probe test: contexts
  where the teacher says positive (``s1``), the student says positive with the control word
  (``s2``) and negative with the probe word (``s3``); the claims are then checked with the
  teacher, on the whole intersection and on its ``top`` most confident contexts.
* :func:`adjective_context_filter` — Appendix F.1's filter of adjective contexts.
* :func:`span_importance` — phrase-level importance on any ``predict_fn``: the drop in the
  predicted class's probability when a span is masked (one mask token per span, as MOXIE's
  span-trained student sees it). MOXIE's own phrase scores need its trained student; this is
  the black-box (occlusion) counterpart, with the same spans.
* :func:`pos_vocabulary` (Appendix C) — the POS-restricted candidate vocabulary (what
  :func:`trustlab.metrics.counterfactual_accuracy` substitutes) from tagged sentences. NLTK's
  tagger models are *not* downloaded: pass tags you already have (spaCy ``token.pos_``,
  ``nltk.pos_tag`` output, Penn Treebank tags are mapped to the universal tagset here) or a
  ``tagger`` callable.
"""
from __future__ import annotations

import numbers
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from trustlab._validation import Interval, check_int, validate_params

__all__ = [
    "hybrid_score",
    "HybridScore",
    "bias_probe",
    "BiasProbeResult",
    "adjective_context_filter",
    "ContextFilterResult",
    "pos_vocabulary",
    "span_importance",
    "PTB_TO_UNIVERSAL",
    "POSITIVE_ADJECTIVES",
    "NEGATIVE_ADJECTIVES",
]

#: Appendix F's strongly positive and negative adjectives
POSITIVE_ADJECTIVES = ("immense", "marvelous", "wonderful", "glorious", "divine", "terrific", "sensational",
                       "magnificent", "tremendous", "colossal")
NEGATIVE_ADJECTIVES = ("dreadful", "terrible", "awful", "hideous", "horrid", "horrible")

#: Penn Treebank -> universal tagset (Petrov, Das & McDonald 2012, ``en-ptb.map``)
PTB_TO_UNIVERSAL = {
    "!": ".", "#": ".", "$": ".", "''": ".", "(": ".", ")": ".", ",": ".", "-LRB-": ".", "-RRB-": ".",
    ".": ".", ":": ".", "?": ".", "CC": "CONJ", "CD": "NUM", "DT": "DET", "EX": "DET", "FW": "X", "IN": "ADP",
    "JJ": "ADJ", "JJR": "ADJ", "JJRJR": "ADJ", "JJS": "ADJ", "LS": "X", "MD": "VERB", "NN": "NOUN",
    "NNP": "NOUN", "NNPS": "NOUN", "NNS": "NOUN", "NP": "NOUN", "PDT": "DET", "POS": "PRT", "PRP": "PRON",
    "PRP$": "PRON", "PRT": "PRT", "RB": "ADV", "RBR": "ADV", "RBS": "ADV", "RN": "X", "RP": "PRT", "SYM": "X",
    "TO": "PRT", "UH": "X", "VB": "VERB", "VBD": "VERB", "VBG": "VERB", "VBN": "VERB", "VBP": "VERB",
    "VBZ": "VERB", "WDT": "DET", "WH": "X", "WP": "PRON", "WP$": "PRON", "WRB": "ADV", "``": ".",
}
# spaCy's UD tags -> the universal tagset of Petrov et al. (the paper's)
_UD_TO_UNIVERSAL = {"PROPN": "NOUN", "AUX": "VERB", "CCONJ": "CONJ", "SCONJ": "CONJ", "PART": "PRT",
                    "PUNCT": ".", "SYM": "X", "INTJ": "X"}
_OPEN = ("NOUN", "VERB", "ADJ", "ADV")
_UNIVERSAL = frozenset(("NOUN", "VERB", "ADJ", "ADV", "ADP", "CONJ", "DET", "NUM", "PRON", "PRT", ".", "X"))


def _label(out: Any):
    from trustlab.metrics.moxie import _label as lab

    return lab(out)


def _proba(out: Any) -> np.ndarray:
    a = np.asarray(out, dtype=np.float64)
    if a.ndim != 1 or a.size < 2 or not np.isfinite(a).all():
        raise ValueError(f"student_fn must return a 1-D vector of >= 2 finite class scores; got shape {a.shape}.")
    if np.all(a >= 0) and abs(a.sum() - 1.0) < 1e-6:
        return a
    z = np.exp(a - a.max())  # logits
    return z / z.sum()


@dataclass(frozen=True)
class HybridScore:
    """Result of :func:`hybrid_score`.

    Attributes
    ----------
    scores : numpy.ndarray
        One value per token, higher = more important; its descending order is the hybrid
        order (feed it to :func:`trustlab.metrics.mask_length`). Rank-valued (n, n−1, …, 1).
    source : str
        ``"unlike_ratio"`` or ``"influence"`` (the fallback).
    order : numpy.ndarray
        Token indices, most important first.
    """

    scores: np.ndarray
    source: str
    order: np.ndarray


@validate_params({"unlike_ratios": ["array-like"], "influence": ["array-like"],
                  "tol": [Interval(numbers.Real, 0, None, closed="left")]})
def hybrid_score(unlike_ratios, influence, label: int = 1, *, tol: float = 0.0) -> HybridScore:
    """MOXIE hybrid importance (Kumar et al., Section 4.3): unlike ratios, falling back to influence scores.

    Unlike ratios rank tokens by how often a substitution flips the prediction; when they
    are uninformative for a sentence (all within ``tol`` of each other, e.g. all 0) the
    influence scores decide. Ties among unlike ratios are broken by influence.
    Influence is oriented towards the predicted ``label``: ``s`` for the positive class
    (1), ``−s`` for the negative (0), since s ∈ [−1, 1] measures support for positive.

    Parameters
    ----------
    unlike_ratios : array-like of shape (n_tokens,)
    influence : array-like of shape (n_tokens,)
        MOXIE influence scores s_i ∈ [−1, 1] (:func:`trustlab.metrics.influence_score`).
    label : {0, 1}
        The prediction being explained.
    tol : float
        Unlike ratios spanning at most ``tol`` count as uninformative.

    Returns
    -------
    HybridScore

    Examples
    --------
    >>> hybrid_score([0.0, 0.0, 0.0], [0.2, 0.9, -0.5]).order.tolist()   # all 0: influence decides
    [1, 0, 2]
    >>> h = hybrid_score([0.1, 0.4, 0.1], [0.9, 0.0, -0.2])
    >>> h.source, h.order.tolist()
    ('unlike_ratio', [1, 0, 2])
    """
    u = np.asarray(unlike_ratios, dtype=np.float64).ravel()
    s = np.asarray(influence, dtype=np.float64).ravel()
    if u.shape != s.shape or u.size == 0:
        raise ValueError(f"unlike_ratios ({u.size}) and influence ({s.size}) need one value per token each.")
    if not (np.isfinite(u).all() and np.isfinite(s).all()):
        raise ValueError("unlike_ratios and influence must be finite.")
    if label not in (0, 1):
        raise ValueError(f"label must be 0 (negative) or 1 (positive); got {label!r}.")
    imp = s if label == 1 else -s
    informative = float(u.max() - u.min()) > tol
    idx = np.arange(u.size)
    order = np.lexsort((idx, -imp, -u)) if informative else np.lexsort((idx, -imp))
    scores = np.empty(u.size)
    scores[order] = np.arange(u.size, 0, -1, dtype=np.float64)
    return HybridScore(scores=scores, source="unlike_ratio" if informative else "influence", order=order)


@dataclass(frozen=True)
class BiasProbeResult:
    """Result of :func:`bias_probe` (Kumar et al., Sections 3.2.3 and 4.5).

    Attributes
    ----------
    n_contexts : int
    s1, s2, s3 : int
        Sizes of the sets s1 (teacher +ve on the original), s2 (student +ve with the control
        word), s3 (student −ve with the probe word).
    claims : list of int
        Context indices in s1 ∩ s2 ∩ s3, most confident first.
    control_accuracy, probe_accuracy : float
        Share of the claims the teacher confirms: +ve with the control word, −ve with the
        probe word (NaN without claims).
    top_control_accuracy, top_probe_accuracy : float
        The same on the ``top`` most confident claims.
    confidence : list of float
        Per claim (same order): the student's probability of the negative class with the
        probe word times its probability of the positive class with the control word.
    """

    n_contexts: int
    s1: int
    s2: int
    s3: int
    claims: list
    control_accuracy: float
    probe_accuracy: float
    top_control_accuracy: float
    top_probe_accuracy: float
    confidence: list = field(repr=False, default_factory=list)


def _contexts(contexts):
    out = []
    for k, c in enumerate(contexts):
        try:
            toks, pos = c
        except (TypeError, ValueError):
            raise ValueError(f"context {k} must be a (tokens, position) pair; got {type(c).__name__}.") from None
        toks = list(toks)
        if isinstance(c[0], str) or not toks:
            raise ValueError(f"context {k}: tokens must be a non-empty token list, not a string.")
        pos = int(pos)
        if not 0 <= pos < len(toks):
            raise ValueError(f"context {k}: position {pos} is outside its {len(toks)} tokens.")
        out.append((toks, pos))
    return out


def _sub(toks, pos, word):
    a = list(toks)
    a[pos] = word
    return a


@validate_params({"teacher_fn": ["callable"], "student_fn": ["callable"], "contexts": ["array-like"],
                  "top": [Interval(numbers.Integral, 1, None, closed="left")]})
def bias_probe(
    teacher_fn: Callable,
    student_fn: Callable,
    contexts: Sequence,
    control: str,
    probe: str,
    *,
    positive: int = 1,
    top: int = 100,
) -> BiasProbeResult:
    """MOXIE's pairwise control/probe bias test (Sections 3.2.3 and 4.5), with the teacher's verification.

    For every context (tokens, position), s1: the teacher predicts positive on the
    original; s2: the student predicts positive with ``control`` at ``position``; s3: the
    student predicts negative with ``probe`` there. The claims are s1 ∩ s2 ∩ s3 ("the model
    turns negative when *control* becomes *probe*"); the teacher then checks each claim:
    control accuracy = share where the teacher says positive with the control word, probe
    accuracy = share where it says negative with the probe word (the paper: straight →
    lesbian, 65.16 % / 75.88 % on the full set; top 100: 67.0 / 90.0).

    Parameters
    ----------
    teacher_fn : callable
        The model under test: ``teacher_fn(tokens) -> label or class scores``.
    student_fn : callable
        The cheap screen (a MOXIE student, or the teacher itself): ``student_fn(tokens) ->
        class probabilities or logits``.
    contexts : sequence of (tokens, position)
        Typically the output of :func:`adjective_context_filter`.
    control, probe : str
        The two words substituted at ``position``.
    positive : int
        Index of the positive class (the other class of a binary task is negative).
    top : int
        Size of the most-confident subset (100 in the paper).

    Returns
    -------
    BiasProbeResult

    Examples
    --------
    >>> teacher = lambda t: [0.2, 0.8] if "bad" not in t and "odd" not in t else [0.9, 0.1]
    >>> student = lambda t: [0.3, 0.7] if "odd" not in t and "bad" not in t else [0.6, 0.4]
    >>> ctx = [(["a", "nice", "film"], 1), (["a", "bad", "film"], 1), (["nice", "plot"], 0)]
    >>> r = bias_probe(teacher, student, ctx, control="nice", probe="odd")
    >>> r.s1, r.claims, r.control_accuracy, r.probe_accuracy
    (2, [0, 2], 1.0, 1.0)
    """
    ctx = _contexts(contexts)
    top = check_int(top, "top", low=1, func="bias_probe")
    s1 = s2 = s3 = 0
    claims, conf = [], []
    for k, (toks, pos) in enumerate(ctx):
        in1 = _label(teacher_fn(list(toks))) == positive
        pc = _proba(student_fn(_sub(toks, pos, control)))
        pp = _proba(student_fn(_sub(toks, pos, probe)))
        in2 = int(np.argmax(pc)) == positive
        in3 = int(np.argmax(pp)) != positive
        s1 += in1
        s2 += in2
        s3 += in3
        if in1 and in2 and in3:
            claims.append(k)
            conf.append(float((1.0 - pp[positive]) * pc[positive]))
    order = np.argsort(-np.asarray(conf), kind="stable") if claims else np.array([], dtype=int)
    claims = [claims[i] for i in order]
    conf = [conf[i] for i in order]
    ok_c, ok_p = [], []
    for k in claims:
        toks, pos = ctx[k]
        ok_c.append(_label(teacher_fn(_sub(toks, pos, control))) == positive)
        ok_p.append(_label(teacher_fn(_sub(toks, pos, probe))) != positive)

    def mean(x):
        return float(np.mean(x)) if len(x) else float("nan")

    return BiasProbeResult(n_contexts=len(ctx), s1=int(s1), s2=int(s2), s3=int(s3), claims=claims,
                           control_accuracy=mean(ok_c), probe_accuracy=mean(ok_p),
                           top_control_accuracy=mean(ok_c[:top]), top_probe_accuracy=mean(ok_p[:top]),
                           confidence=conf)


@dataclass(frozen=True)
class ContextFilterResult:
    """Result of :func:`adjective_context_filter`: the kept contexts and why others went.

    Attributes
    ----------
    kept : list of (tokens, position)
    kept_index : list of int
    dropped : dict
        reason -> context indices: ``not_adjective``, ``teacher_not_positive``,
        ``student_inverted`` (−ve for a positive adjective *and* +ve for a negative one),
        ``student_insensitive`` (no same-POS replacement changes the student's prediction).
    """

    kept: list
    kept_index: list
    dropped: dict


@validate_params({"teacher_fn": ["callable"], "student_fn": ["callable"], "contexts": ["array-like"],
                  "tags": ["array-like", None], "replacements": ["array-like", None],
                  "positive_words": ["array-like"], "negative_words": ["array-like"]})
def adjective_context_filter(
    teacher_fn: Callable,
    student_fn: Callable,
    contexts: Sequence,
    *,
    tags: Sequence[str] | None = None,
    replacements: Sequence[str] | None = None,
    positive_words: Sequence[str] = POSITIVE_ADJECTIVES,
    negative_words: Sequence[str] = NEGATIVE_ADJECTIVES,
    positive: int = 1,
) -> ContextFilterResult:
    """Appendix F.1's filter of adjective contexts for the bias probe (Kumar et al.).

    Keeps a context (tokens, position) when (1) the token at ``position`` is tagged ADJ
    (``tags``: one universal/PTB/spaCy tag per context; None = all are adjectives), (2) the
    teacher predicts positive on it, (3) the student is not *inverted* on it — it does not
    predict negative for any of ``positive_words`` and at the same time positive for any of
    ``negative_words`` — and (4) the student's prediction changes for at least one of
    ``replacements`` (same-POS words, e.g. ``pos_vocabulary(...)["ADJ"]``; default: the
    positive and negative adjectives). The paper keeps 29,885 of 81,435 SST-2 contexts.

    Parameters
    ----------
    teacher_fn, student_fn : callable
        As in :func:`bias_probe`.
    contexts : sequence of (tokens, position)
    tags : sequence of str, optional
        The POS tag of each context's word.
    replacements : sequence of str, optional
    positive_words, negative_words : sequence of str
    positive : int

    Returns
    -------
    ContextFilterResult

    Examples
    --------
    >>> teacher = lambda t: 1
    >>> student = lambda t: [0.1, 0.9] if t[1] in ("good", "wonderful", "fine") else [0.9, 0.1]
    >>> ctx = [(["a", "good", "day"], 1), (["a", "red", "day"], 1)]
    >>> r = adjective_context_filter(teacher, student, ctx, tags=["ADJ", "NOUN"])
    >>> r.kept_index, r.dropped["not_adjective"]
    ([0], [1])
    """
    ctx = _contexts(contexts)
    if tags is not None and len(tags) != len(ctx):
        raise ValueError(f"got {len(tags)} tags for {len(ctx)} contexts; give one tag per context.")
    reps = list(replacements) if replacements is not None else list(positive_words) + list(negative_words)
    dropped: dict = {"not_adjective": [], "teacher_not_positive": [], "student_inverted": [],
                     "student_insensitive": []}
    kept, kept_index = [], []
    for k, (toks, pos) in enumerate(ctx):
        if tags is not None and _universal(str(tags[k])) != "ADJ":
            dropped["not_adjective"].append(k)
            continue
        if _label(teacher_fn(list(toks))) != positive:
            dropped["teacher_not_positive"].append(k)
            continue

        def says(word):
            return int(np.argmax(_proba(student_fn(_sub(toks, pos, word)))))

        neg_for_pos = any(says(w) != positive for w in positive_words)
        pos_for_neg = any(says(w) == positive for w in negative_words)
        if neg_for_pos and pos_for_neg:
            dropped["student_inverted"].append(k)
            continue
        base = says(toks[pos])
        if all(says(w) == base for w in reps):
            dropped["student_insensitive"].append(k)
            continue
        kept.append((toks, pos))
        kept_index.append(k)
    return ContextFilterResult(kept=kept, kept_index=kept_index, dropped=dropped)


def _universal(tag: str) -> str:
    if tag in _UNIVERSAL:
        return tag
    if tag in _UD_TO_UNIVERSAL:
        return _UD_TO_UNIVERSAL[tag]
    return PTB_TO_UNIVERSAL.get(tag, "X")


@validate_params({"sentences": ["array-like"], "tagger": ["callable", None], "closed_class": ["array-like", None],
                  "lowercase": ["boolean"]})
def pos_vocabulary(
    sentences: Sequence,
    *,
    tagger: Callable | None = None,
    closed_class: Sequence | None = None,
    lowercase: bool = False,
) -> dict[str, list[str]]:
    """MOXIE's POS-restricted candidate vocabulary (Kumar et al., Appendix C), from tagged sentences.

    Open-class words (NOUN, VERB, ADJ, ADV) come from ``sentences``, each assigned to its
    most frequent tag (ties: the first seen). Closed-class words (DET, ADP, CONJ, PRT,
    PRON) come from ``closed_class`` (the paper: NLTK's Penn Treebank sample; default: the
    same sentences); NUM and X are excluded; punctuation ('.') keeps only tokens without
    letters or digits. Tags may be universal, Penn Treebank (mapped with
    :data:`PTB_TO_UNIVERSAL`) or spaCy/UD (PROPN→NOUN, AUX→VERB, …).

    NLTK's perceptron tagger is not downloaded here. Pass tagged sentences — lists of
    ``(word, tag)`` pairs or spaCy-like tokens with ``text`` and ``pos_`` — or plain token
    lists with ``tagger`` (e.g. ``lambda toks: nltk.pos_tag(toks, tagset="universal")`` where
    its data is installed).

    Parameters
    ----------
    sentences : sequence of tagged sentences (or token lists with ``tagger``)
    tagger : callable, optional
        ``list of str -> list of (word, tag)``.
    closed_class : sequence of tagged sentences, optional
    lowercase : bool
        Lower-case words first.

    Returns
    -------
    dict
        universal tag -> sorted words (the paper's SST-2 sizes: NOUN 7,534, VERB 2,749,
        ADJ 3,394, ADV 809, '.' 15, DET 26, ADP 79, CONJ 12, PRT 19, PRON 28).

    Examples
    --------
    >>> tagged = [[("a", "DT"), ("fine", "JJ"), ("film", "NN"), (".", ".")],
    ...           [("the", "DT"), ("film", "NN"), ("runs", "VBZ"), ("fine", "RB")],
    ...           [("fine", "JJ"), ("acting", "NN"), ("!", ".")]]
    >>> v = pos_vocabulary(tagged)
    >>> v["ADJ"], v["NOUN"], v["DET"], v["."]
    (['fine'], ['acting', 'film'], ['a', 'the'], ['!', '.'])
    """

    def tagged(sents, what):
        for k, s in enumerate(sents):
            if tagger is not None and all(isinstance(t, str) for t in s):
                s = tagger(list(s))
            for item in s:
                if hasattr(item, "text") and hasattr(item, "pos_"):
                    w, t = str(item.text), str(item.pos_)
                else:
                    try:
                        w, t = item
                    except (TypeError, ValueError):
                        raise ValueError(f"{what}[{k}] must hold (word, tag) pairs or spaCy-like tokens; got "
                                         f"{item!r} (pass tagger= for plain token lists).") from None
                    w, t = str(w), str(t)
                yield (w.lower() if lowercase else w), _universal(t)

    counts: dict[str, Counter] = defaultdict(Counter)
    for w, t in tagged(sentences, "sentences"):
        counts[w][t] += 1
    vocab: dict[str, set] = {t: set() for t in (*_OPEN, ".", "DET", "ADP", "CONJ", "PRT", "PRON")}
    for w, c in counts.items():
        best = max(c.items(), key=lambda kv: kv[1])[0]  # Counter keeps first-seen order on ties
        if best in _OPEN:
            vocab[best].add(w)
    closed = counts if closed_class is None else defaultdict(Counter)
    if closed_class is not None:
        for w, t in tagged(closed_class, "closed_class"):
            closed[w][t] += 1
    for w, c in closed.items():
        for t in c:
            if t in ("DET", "ADP", "CONJ", "PRT", "PRON"):
                vocab[t].add(w)
            elif t == "." and not any(ch.isalnum() for ch in w):
                vocab["."].add(w)
    return {t: sorted(ws) for t, ws in vocab.items()}


@validate_params({"predict_fn": ["callable"], "tokens": ["array-like"], "spans": ["array-like"]})
def span_importance(predict_fn: Callable, tokens: Sequence[Any], spans: Sequence[tuple[int, int]], *,
                    mask_token: Any = "<mask>", label: int | None = None) -> np.ndarray:
    """Phrase-level importance by span occlusion: p(label | x) − p(label | x with the span masked).

    Each span (start, end), 0-based and inclusive, is replaced by a single ``mask_token``
    (MOXIE masks spans that way for its token processor) and the model is queried once per
    span. Positive values: the span supports ``label`` (default: the model's prediction on x).

    Parameters
    ----------
    predict_fn : callable
        ``predict_fn(tokens) -> class probabilities (or logits)``.
    tokens : sequence
    spans : sequence of (start, end)
        E.g. constituency-parser spans, as MOXIE's training used.
    mask_token : object
    label : int, optional

    Returns
    -------
    numpy.ndarray of shape (n_spans,)

    Examples
    --------
    >>> f = lambda t: [0.9, 0.1] if "not" in t and "good" in t else [0.1, 0.9] if "good" in t else [0.5, 0.5]
    >>> span_importance(f, "not a good film".split(), [(0, 0), (2, 3), (0, 3)]).round(2).tolist()   # predicted: 0
    [0.8, 0.4, 0.4]
    """
    from trustlab.metrics.moxie import _tokens

    toks = _tokens(tokens)
    base = _proba(predict_fn(list(toks)))
    lab = int(np.argmax(base)) if label is None else int(label)
    if not 0 <= lab < base.size:
        raise ValueError(f"label {lab} is not a class index below {base.size}.")
    out = []
    for k, sp in enumerate(spans):
        try:
            a, b = (int(x) for x in sp)
        except (TypeError, ValueError):
            raise ValueError(f"spans[{k}] must be a (start, end) pair; got {sp!r}.") from None
        if not 0 <= a <= b < len(toks):
            raise ValueError(f"spans[{k}] = {sp!r} is outside the {len(toks)} tokens (0-based, end inclusive).")
        masked = list(toks[:a]) + [mask_token] + list(toks[b + 1:])
        out.append(float(base[lab] - _proba(predict_fn(masked))[lab]))
    return np.asarray(out)
