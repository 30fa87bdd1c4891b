"""MOXIE P7.5, P7.9-P7.11 on tiny models built here: hybrid score, bias probe, context filter, POS vocabulary."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from trustlab.metrics import counterfactual_accuracy, mask_length
from trustlab.metrics.moxie_probe import (
    PTB_TO_UNIVERSAL,
    adjective_context_filter,
    bias_probe,
    hybrid_score,
    pos_vocabulary,
)

WEIGHTS = {"good": 2.0, "great": 2.5, "wonderful": 3.0, "terrible": -3.0, "awful": -2.5, "bad": -2.0,
           "odd": -1.2, "plain": 0.3, "film": 0.1, "plot": -0.1}


def _model(bias=0.0, w=WEIGHTS):
    def f(tokens):
        z = bias + sum(w.get(t, 0.0) for t in tokens)
        return [1 / (1 + np.exp(z)), 1 / (1 + np.exp(-z))]   # P(neg), P(pos)
    return f


def test_hybrid_score_falls_back_and_breaks_ties():
    h = hybrid_score([0, 0, 0, 0], [0.1, -0.9, 0.5, 0.0], label=0)   # negative prediction: -s ranks
    assert h.source == "influence" and h.order.tolist() == [1, 3, 0, 2]
    h = hybrid_score([0.2, 0.5, 0.2, 0.0], [0.1, -0.3, 0.7, 0.9])
    assert h.source == "unlike_ratio" and h.order.tolist() == [1, 2, 0, 3]
    assert hybrid_score([0.2, 0.21], [0.0, 1.0], tol=0.05).source == "influence"
    # the scores drive MASKLENGTH in the hybrid order
    teacher = lambda t: int(sum(WEIGHTS.get(x, 0) for x in t) > 0)   # noqa: E731
    toks = ["good", "film", "great", "plot"]
    h = hybrid_score([0, 0, 0, 0], [0.9, 0.0, 0.8, -0.1])
    assert mask_length(teacher, toks, h.scores, budget=4) == 2
    with pytest.raises(ValueError, match="one value per token"):
        hybrid_score([0.1], [0.1, 0.2])


def _contexts(n=60, seed=0):
    rng = np.random.default_rng(seed)
    words = list(WEIGHTS) + ["the", "a", "story"]
    out = []
    for _ in range(n):
        toks = list(rng.choice(words, 4))
        out.append((toks, int(rng.integers(0, 4))))
    return out


def test_bias_probe_matches_brute_force():
    teacher, student = _model(0.5), _model(0.8)
    ctx = _contexts()
    r = bias_probe(teacher, student, ctx, control="plain", probe="odd", top=5)
    s1 = {k for k, (t, p) in enumerate(ctx) if np.argmax(teacher(t)) == 1}
    sub = lambda t, p, w: t[:p] + [w] + t[p + 1:]   # noqa: E731
    s2 = {k for k, (t, p) in enumerate(ctx) if np.argmax(student(sub(t, p, "plain"))) == 1}
    s3 = {k for k, (t, p) in enumerate(ctx) if np.argmax(student(sub(t, p, "odd"))) == 0}
    assert (r.s1, r.s2, r.s3) == (len(s1), len(s2), len(s3))
    assert set(r.claims) == s1 & s2 & s3 and len(r.claims) > 5
    conf = [student(sub(*ctx[k], "odd"))[0] * student(sub(*ctx[k], "plain"))[1] for k in r.claims]
    assert conf == sorted(conf, reverse=True)
    ok_c = [np.argmax(teacher(sub(*ctx[k], "plain"))) == 1 for k in r.claims]
    ok_p = [np.argmax(teacher(sub(*ctx[k], "odd"))) == 0 for k in r.claims]
    assert r.control_accuracy == pytest.approx(np.mean(ok_c)) and r.probe_accuracy == pytest.approx(np.mean(ok_p))
    assert r.top_probe_accuracy == pytest.approx(np.mean(ok_p[:5]))
    # the teacher as its own student: every claim is confirmed
    same = bias_probe(teacher, teacher, ctx, control="plain", probe="odd")
    assert same.control_accuracy == 1.0 and same.probe_accuracy == 1.0
    with pytest.raises(ValueError, match="outside"):
        bias_probe(teacher, student, [(["a"], 3)], control="plain", probe="odd")


def test_adjective_context_filter_reasons():
    teacher = _model(0.0)
    inverted = _model(0.0, {k: -v for k, v in WEIGHTS.items()})
    ctx = [(["a", "good", "film"], 1), (["a", "bad", "film"], 1), (["the", "film", "x"], 1),
           (["a", "good", "film"], 1)]
    r = adjective_context_filter(teacher, teacher, ctx, tags=["JJ", "ADJ", "NOUN", "ADJ"])
    assert r.kept_index == [0, 3] and r.dropped["teacher_not_positive"] == [1]
    assert r.dropped["not_adjective"] == [2]
    r = adjective_context_filter(teacher, inverted, ctx[:1])
    assert r.dropped["student_inverted"] == [0]
    constant = lambda t: [0.2, 0.8]   # noqa: E731
    r = adjective_context_filter(teacher, constant, ctx[:1], replacements=["good", "bad"])
    assert r.dropped["student_insensitive"] == [0] and r.kept == []


def test_pos_vocabulary_rules_and_inputs():
    tagged = [[("A", "DT"), ("fine", "JJ"), ("film", "NN"), ("runs", "VBZ"), ("2", "CD"), ("...", ":")],
              [("fine", "RB"), ("fine", "JJ"), ("and", "CC"), ("it", "PRP"), ("up", "RP"), ("@x", "SYM")],
              [("quickly", "RB"), ("on", "IN"), ("a1", "."), ("film", "VB")]]
    v = pos_vocabulary(tagged)
    assert v["ADJ"] == ["fine"] and v["NOUN"] == ["film"] and v["VERB"] == ["runs"] and v["ADV"] == ["quickly"]
    assert v["DET"] == ["A"] and v["CONJ"] == ["and"] and v["PRON"] == ["it"] and v["PRT"] == ["up"]
    assert v["ADP"] == ["on"] and v["."] == ["..."]            # "a1" has alphanumerics: not punctuation
    assert not any("2" in ws for ws in v.values())            # NUM excluded
    assert pos_vocabulary(tagged, lowercase=True)["DET"] == ["a"]
    # spaCy-like tokens (UD tags) and a tagger callable give the same
    spacy = [[SimpleNamespace(text=w, pos_=p) for w, p in [("Paris", "PROPN"), ("is", "AUX"), ("big", "ADJ")]]]
    assert pos_vocabulary(spacy)["NOUN"] == ["Paris"] and pos_vocabulary(spacy)["VERB"] == ["is"]
    tagger = lambda toks: [(w, "JJ" if w == "big" else "NN") for w in toks]   # noqa: E731
    assert pos_vocabulary([["big", "city"]], tagger=tagger)["ADJ"] == ["big"]
    closed = pos_vocabulary(tagged, closed_class=[[("the", "DT")]])
    assert closed["DET"] == ["the"] and closed["ADJ"] == ["fine"]
    assert PTB_TO_UNIVERSAL["PRP$"] == "PRON"
    with pytest.raises(ValueError, match="tagger"):
        pos_vocabulary([["plain", "tokens"]])
    # the ADJ vocabulary is what counterfactual_accuracy substitutes
    vocab = pos_vocabulary([[("good", "JJ"), ("awful", "JJ"), ("plain", "JJ")]])["ADJ"]
    student = np.array([_model(0.0)(["a", w]) for w in vocab])
    teacher = lambda t: int(np.argmax(_model(0.0)(t)))   # noqa: E731
    res = counterfactual_accuracy(teacher, ["a", "good"], 1, vocab, student)
    assert res.words == ["awful"] and res.accuracy == 100.0


def test_span_importance_is_occlusion():
    from trustlab.metrics.moxie_probe import span_importance

    f = _model(0.0)
    toks = ["good", "film", "awful", "plot"]
    spans = [(0, 0), (0, 1), (2, 3), (1, 2)]
    got = span_importance(f, toks, spans, mask_token="<m>")
    lab = int(np.argmax(f(toks)))
    for (a, b), g in zip(spans, got):
        ref = f(toks)[lab] - f(toks[:a] + ["<m>"] + toks[b + 1:])[lab]
        assert g == pytest.approx(ref)
    # word-level occlusion is the one-token span
    assert span_importance(f, toks, [(2, 2)], label=1)[0] < 0      # "awful" works against positive
    with pytest.raises(ValueError, match="outside"):
        span_importance(f, toks, [(3, 5)])
