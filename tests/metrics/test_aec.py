"""AEC balanced undersampling, 80/20 split, random-forest error classifier, cue features."""
import doctest

import numpy as np
import pytest

from trustlab.metrics import aec, balanced_undersample, error_classifier, precision_at_k


def test_paper_sizes():
    # P4.2: 4,655 errors; undersample the correct ones -> 9,310, split 80/20 -> 7,448 / 1,862
    rng = np.random.default_rng(1)
    n_err, n_ok = 4655, 7009
    e = np.r_[np.ones(n_err, int), np.zeros(n_ok, int)][rng.permutation(n_err + n_ok)]
    idx = balanced_undersample(e, random_state=0)
    assert idx.size == 9310 and e[idx].sum() == 4655
    assert set(np.flatnonzero(e)) <= set(idx)           # every error kept
    X = rng.standard_normal((e.size, 2)) + e[:, None] * [1.0, 0.0]
    r = error_classifier(X, e, n_estimators=5, random_state=0, k=[10, 100])
    assert (r.n_train, r.n_test) == (7448, 1862)
    assert e[r.test_index].sum() == 931                 # stratified: half errors
    assert len(r.cv_scores) == 5
    assert r.ranking[0][0] == "f0"


def test_ranking_and_precision_at_k_consistent():
    rng = np.random.default_rng(5)
    n = 600
    X = rng.standard_normal((n, 4))
    e = (X[:, 2] - 0.5 * X[:, 0] + 0.3 * rng.standard_normal(n) > 1.0).astype(int)
    r = error_classifier(X, e, feature_names=list("abcd"), n_estimators=30, random_state=3, k=[5, 10, 20])
    names = [f for f, _ in r.ranking]
    assert names[0] == "c" and set(names[-2:]) == {"b", "d"}
    imp = [v for _, v in r.ranking]
    assert imp == sorted(imp, reverse=True) and sum(imp) == pytest.approx(1.0)
    p = r.error_probability(X[r.test_index])
    np.testing.assert_allclose(list(r.test_precision_at_k.values()), precision_at_k(p, e[r.test_index], [5, 10, 20]))
    assert np.mean((p > 0.5) == e[r.test_index]) == pytest.approx(r.test_accuracy)
    assert r.test_accuracy > 0.8 and np.all(r.cv_scores > 0.7)
    # reproducible with the same seed
    r2 = error_classifier(X, e, feature_names=list("abcd"), n_estimators=30, random_state=3, k=[5, 10, 20])
    assert np.array_equal(r.test_index, r2.test_index) and r.ranking == r2.ranking


def test_undersample_minority_is_correct_class():
    e = np.array([1] * 8 + [0] * 3)
    idx = balanced_undersample(e, random_state=2)
    assert idx.size == 6 and e[idx].sum() == 3 and set(np.flatnonzero(e == 0)) <= set(idx)


def test_conversational_cues_hand_values():
    c = aec.conversational_cues(["Hello, sorry about your order.", "What happened? Did you ship it?", ""])
    # 5 tokens: greeting, apology, second person each 1/5
    np.testing.assert_allclose(c[0], [0.2, 0, 0.2, 0.2, 0, 0])
    # 6 tokens: 'you' 1, one yes/no question, one wh-question
    np.testing.assert_allclose(c[1], [0, 0, 0, 1 / 6, 1 / 6, 1 / 6])
    assert c[2].sum() == 0


def test_errors():
    with pytest.raises(ValueError, match="both classes"):
        balanced_undersample([0, 0, 0])
    with pytest.raises(ValueError, match="rows"):
        error_classifier(np.zeros((4, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="NaN"):
        error_classifier(np.full((4, 2), np.nan), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="too few"):
        error_classifier(np.zeros((6, 1)), [0, 1, 0, 1, 0, 1])


def test_doctests():
    assert doctest.testmod(aec).failed == 0
