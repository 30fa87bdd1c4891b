"""AEC precision at K and MOXIE influence / unlike ratio."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import softmax

from trustlab.metrics import explanation as ex


@settings(max_examples=60)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 1)), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n))))
def test_precision_at_k_brute_force(data):
    s, e = data
    ranked = sorted(range(len(s)), key=lambda i: (-s[i], i))  # stable: ties keep input order
    ks = list(range(1, len(s) + 1))
    ref = [sum(e[i] for i in ranked[:k]) / k for k in ks]
    np.testing.assert_allclose(ex.precision_at_k(s, e, ks), ref)
    assert ex.precision_at_k(s, e, 1) == ref[0]


def test_precision_at_k_known_counts():
    # 23 errors among the top 30 -> P@30 = 23/30 (AEC Table 4 style, 0.77)
    scores = np.linspace(1, 0, 100)
    err = np.zeros(100, int)
    err[:23] = 1
    err[40:60] = 1
    np.testing.assert_allclose(ex.precision_at_k(scores, err, [10, 30, 60]), [1.0, 23 / 30, 43 / 60])
    # shuffling the input order does not change the result without ties
    perm = np.random.default_rng(0).permutation(100)
    np.testing.assert_allclose(ex.precision_at_k(scores[perm], err[perm], [10, 30, 60]), [1.0, 23 / 30, 43 / 60])


def test_uncertainty_scores():
    p = np.array([[0.7, 0.2, 0.1], [0.34, 0.33, 0.33]])
    np.testing.assert_allclose(ex.uncertainty_scores(p), 1 - p.max(1))


def test_influence_matches_softmax():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(20, 2)) * 5
    np.testing.assert_allclose(ex.influence_score(z), 2 * softmax(z, axis=1)[:, 1] - 1)
    assert np.all(np.abs(ex.influence_score(z)) <= 1)
    np.testing.assert_allclose(ex.influence_score(z, positive=0), -ex.influence_score(z))


def test_unlike_ratio():
    preds = np.array([[1, 1, 0, 0, 0], [1, 1, 1, 1, 0]])
    np.testing.assert_allclose(ex.unlike_ratio(preds, [1, 0]), [0.6, 0.8])
    assert ex.unlike_ratio([0, 0, 1], 0) == pytest.approx(1 / 3)


def test_bad_input():
    with pytest.raises(ValueError, match="range"):
        ex.precision_at_k([0.1, 0.2], [0, 1], 3)
    with pytest.raises(ValueError, match="shape"):
        ex.precision_at_k([0.1, 0.2], [0, 1, 1], 1)
    with pytest.raises(ValueError, match="NaN"):
        ex.precision_at_k([0.1, np.nan], [0, 1], 1)
    with pytest.raises(ValueError, match="n_classes"):
        ex.influence_score([[1.0]])
    with pytest.raises(ValueError, match="empty"):
        ex.unlike_ratio([], 1)
