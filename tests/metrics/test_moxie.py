"""MOXIE all-correct accuracy, MASKLENGTH and COUNTERFACTUAL_ACC with toy teachers."""
import doctest

import numpy as np
import pytest

from trustlab.metrics import (
    all_correct_accuracy,
    counterfactual_accuracy,
    mask_length,
    mask_length_summary,
    masked_context_predictions,
    moxie,
)

POS = {"good": 2.0, "great": 3.0, "fine": 1.0}
NEG = {"bad": -2.0, "awful": -3.0, "dull": -1.0}


def lexicon_teacher(tokens):
    """Toy sentiment classifier: sum of word polarities > 0 -> class 1; returns probabilities."""
    s = sum(POS.get(t, 0.0) + NEG.get(t, 0.0) for t in tokens)
    p1 = 1.0 / (1.0 + np.exp(-s))
    return np.array([1 - p1, p1])


def test_all_correct_hand_value_and_baseline():
    x = ["a", "good", "film"]
    base = masked_context_predictions(lexicon_teacher, x)
    assert base == [1, 0, 1]               # masking 'good' makes s = 0 -> class 0
    assert all_correct_accuracy([base, [1, 1, 1], [0, 0]], [1, 1, 0]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="one reference label per example"):
        all_correct_accuracy([[1]], [1, 0])


def brute_mask_length(f, toks, scores, m):
    order = sorted(range(len(toks)), key=lambda i: (-scores[i], i))
    p = int(np.argmax(f(toks)))
    for k in range(1, min(m, len(toks)) + 1):
        a = ["<mask>" if i in order[:k] else t for i, t in enumerate(toks)]
        if int(np.argmax(f(a))) != p:
            return k
    return -1


def test_mask_length_known_answers():
    toks = ["great", "plot", "but", "dull", "bad", "acting"]   # s = 3 - 1 - 2 = 0 -> class 0
    # most supportive of class 0: 'bad' then 'dull'; masking 'bad' gives s = 2 -> flips at k = 1
    assert mask_length(lexicon_teacher, toks, [0, 0, 0, 0.5, 0.9, 0], budget=5) == 1
    # 'great' first (s=-3, class 0, no flip), then 'plot', 'but', 'acting': never flips in budget 4
    assert mask_length(lexicon_teacher, toks, [4, 3, 2, 0, 0, 1], budget=4) == -1
    # budget larger than the sentence is capped; masking everything gives s=0 -> class 0, no flip
    assert mask_length(lexicon_teacher, toks, [4, 3, 2, 0, 0, 1], budget=100) == -1


def test_mask_length_matches_brute_force():
    rng = np.random.default_rng(0)
    words = list(POS) + list(NEG) + ["the", "film", "was"]
    for _ in range(200):
        n = int(rng.integers(1, 8))
        toks = list(rng.choice(words, n))
        sc = rng.integers(0, 3, n).astype(float)  # many ties
        m = int(rng.integers(1, 9))
        assert mask_length(lexicon_teacher, toks, sc, m) == brute_mask_length(lexicon_teacher, toks, sc, m)


def test_mask_length_summary():
    ex = [["good", "film"], ["great", "bad"], ["dull"], ["awful", "fine"]]
    sc = [[1, 0], [1, 0], [1], [1, 0]]
    r = mask_length_summary(lexicon_teacher, ex, sc, budget=2)
    # 1: mask good -> flip at 1; 2: s=1 class1, mask great -> -2 -> flip 1; 3: dull class0, masked -> 0 class 0: -1
    # 4: s=-2 class0, mask awful -> 1 -> flip 1
    assert r.lengths.tolist() == [1, 1, -1, 1]
    assert r.coverage == pytest.approx(75.0)
    assert r.average_length == 1.0


def test_counterfactual_accuracy_known_answer():
    vocab = ["bad", "awful", "dull", "fine", "great", "film"]
    # a fake student: its probability of class 1 for each replacement word
    p1 = np.array([0.05, 0.01, 0.3, 0.6, 0.99, 0.45])
    y = np.column_stack([1 - p1, p1])
    x = ["a", "good", "film"]          # teacher: class 1
    r = counterfactual_accuracy(lexicon_teacher, x, 1, vocab, y)
    # ranked by p1 ascending: awful, bad, dull, film, fine, great; student argmax 0 for the first 4
    assert r.words == ["awful", "bad", "dull", "film"]
    # teacher with each: awful -3 ->0 ✓, bad ->0 ✓, dull ->0 ✓, film 0 -> class 0 ✓
    assert (r.size, r.correct, r.accuracy) == (4, 4, 100.0)
    r2 = counterfactual_accuracy(lexicon_teacher, x, 1, vocab, y, top=2)
    assert r2.words == ["awful", "bad"] and r2.size == 2
    # a student that is wrong: says 'fine' and 'great' flip
    r3 = counterfactual_accuracy(lexicon_teacher, x, 1, vocab, np.column_stack([p1, 1 - p1]))
    assert set(r3.words) == {"fine", "great"} and r3.correct == 0 and r3.accuracy == 0.0


def test_counterfactual_none_found():
    y = np.tile([0.1, 0.9], (3, 1))
    r = counterfactual_accuracy(lexicon_teacher, ["good"], 0, ["a", "b", "c"], y)
    assert (r.size, r.accuracy) == (0, 0.0)
    assert moxie.counterfactual_summary([r])["n_contexts"] == 0


def test_errors():
    with pytest.raises(TypeError, match="callable"):
        mask_length("nope", ["a"], [1.0], 1)
    with pytest.raises(ValueError, match="one score per token"):
        mask_length(lexicon_teacher, ["a", "b"], [1.0], 1)
    with pytest.raises(TypeError, match="not a string"):
        mask_length(lexicon_teacher, "a b", [1.0], 1)
    with pytest.raises(ValueError, match="student_proba"):
        counterfactual_accuracy(lexicon_teacher, ["a"], 0, ["x"], [[0.5, 0.5], [0.5, 0.5]])


def test_doctests():
    assert doctest.testmod(moxie).failed == 0
