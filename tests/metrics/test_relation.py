"""P1.7 TACRED micro P/R/F1 with a negative class; P1.8 multi-reference BLEU vs NLTK."""
import doctest

import numpy as np
import pytest

from trustlab.metrics import bleu, relation, relation_micro_prf


def test_micro_prf_hand_values():
    g = ["a", "a", "b", "NR", "NR", "c", "b"]
    p = ["a", "b", "b", "a", "NR", "NR", "NR"]
    r = relation_micro_prf(g, p, negative="NR")
    # guessed non-NR: a,b,b,a = 4; gold non-NR: a,a,b,c,b = 5; correct: a, b = 2
    assert (r.correct, r.guessed, r.gold) == (2, 4, 5)
    assert r.precision == 0.5 and r.recall == 0.4 and r.f1 == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    assert r.per_relation["a"] == (1, 2, 2)
    # TACRED conventions on empty sides
    assert relation_micro_prf(["x", "NR"], ["NR", "NR"], negative="NR").precision == 1.0
    assert relation_micro_prf(["NR"], ["x"], negative="NR").recall == 0.0


def test_micro_prf_matches_sklearn():
    from sklearn.metrics import precision_recall_fscore_support
    rng = np.random.default_rng(0)
    labels = ["no_relation", "r1", "r2", "r3"]
    for _ in range(30):
        g = list(rng.choice(labels, 50, p=[0.5, 0.2, 0.2, 0.1]))
        p = list(rng.choice(labels, 50, p=[0.4, 0.2, 0.2, 0.2]))
        r = relation_micro_prf(g, p)
        ref = precision_recall_fscore_support(g, p, labels=["r1", "r2", "r3"], average="micro", zero_division=0)
        assert (r.precision, r.recall, r.f1) == pytest.approx(ref[:3])


def test_bleu_hand_value():
    # hypothesis 5 tokens, closest ref 6: p = 1, 3/4, 2/3, 1/2; BP = exp(1 - 6/5)
    hyp = "the cat sat on mat".split()
    refs = ["the cat sat on a mat".split(), "a cat sat on the mat".split()]
    ref = np.exp(1 - 6 / 5) * (1 * 0.75 * (2 / 3) * 0.5) ** 0.25
    assert bleu([hyp], [refs]) == pytest.approx(ref)
    assert bleu([hyp], [refs], level="sentence") == pytest.approx(ref)
    assert bleu(["x y".split()], [[["a", "b", "c"]]]) == 0.0


def test_bleu_matches_nltk():
    nb = pytest.importorskip("nltk.translate.bleu_score")
    rng = np.random.default_rng(1)
    vocab = list("abcdefg")
    for trial in range(40):
        hyps, refs = [], []
        for _ in range(int(rng.integers(1, 6))):
            hyps.append(list(rng.choice(vocab, int(rng.integers(1, 9)))))
            refs.append([list(rng.choice(vocab, int(rng.integers(1, 9)))) for _ in range(int(rng.integers(1, 4)))])
        sm = nb.SmoothingFunction().method1
        assert bleu(hyps, refs, smoothing="method1") == pytest.approx(nb.corpus_bleu(refs, hyps, smoothing_function=sm))
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref0 = nb.corpus_bleu(refs, hyps)
                ref_s = np.mean([nb.sentence_bleu(r, h, smoothing_function=sm) for h, r in zip(hyps, refs)])
        assert bleu(hyps, refs) == pytest.approx(ref0, abs=1e-9)
        assert bleu(hyps, refs, level="sentence", smoothing="method1") == pytest.approx(ref_s)


def test_errors():
    with pytest.raises(ValueError, match="one prediction per instance"):
        relation_micro_prf(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="token list"):
        bleu(["a b c"], [[["a"]]])
    with pytest.raises(ValueError, match="must be one of"):
        bleu([["a"]], [[["a"]]], smoothing="method7")


def test_doctests():
    assert doctest.testmod(relation).failed == 0
