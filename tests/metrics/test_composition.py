"""S3.4 word-level composition (gradient·input and vector norm)."""
import doctest

import numpy as np
import pytest

from trustlab.metrics import compose_saliency, compose_word_saliency, model_consistency, plausibility
from trustlab.metrics import composition as comp


def test_hand_values():
    g = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 4.0]])
    e = np.array([[2.0, 1.0, 2.0], [1.0, 1.0, -1.0]])
    # 1*2 + -2*1 + 0.5*2 = 1 ; 0 + 3 - 4 = -1
    assert compose_word_saliency(g, e).tolist() == [1.0, -1.0]
    # norms sqrt(1+4+0.25), 5
    np.testing.assert_allclose(compose_word_saliency(g, method="norm"), [np.sqrt(5.25), 5.0])


def test_subwords_against_loop():
    rng = np.random.default_rng(3)
    g = rng.standard_normal((7, 5))
    e = rng.standard_normal((7, 5))
    wid = [-1, 0, 0, 1, 2, 2, 2]
    gi = compose_word_saliency(g, e, word_ids=wid)
    nm = compose_word_saliency(g, method="norm", word_ids=wid)
    for w in range(3):
        idx = [t for t, x in enumerate(wid) if x == w]
        assert gi[w] == pytest.approx(sum(float(g[t] @ e[t]) for t in idx))
        assert nm[w] == pytest.approx(float(np.sqrt(sum(g[idx].sum(0) ** 2))))


def test_feeds_plausibility_and_consistency():
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((n, 4)) for n in (3, 5, 4)]
    embs = [rng.standard_normal((n, 4)) for n in (3, 5, 4)]
    s = compose_saliency(grads, embs)
    cue = [[(0, 0)], [(1, 2)], [(3, 3)]]
    att = [[(1, 1)], [(0, 0)], [(0, 1)]]
    r = plausibility(s, s, cue, att, [True, True, True])
    ref = np.mean([max(s[i][a:b + 1].max() for a, b in cue[i]) > max(s[i][a:b + 1].max() for a, b in att[i])
                   for i in range(3)])
    assert r.value == pytest.approx(ref)
    # a saliency compared with itself is perfectly consistent
    assert model_consistency(s, s).value == pytest.approx(1.0)


def test_errors():
    with pytest.raises(ValueError, match="needs the input embeddings"):
        compose_word_saliency([[1.0]])
    with pytest.raises(ValueError, match="must be one of"):
        compose_word_saliency([[1.0]], method="l1")
    with pytest.raises(ValueError, match="shape"):
        compose_word_saliency([[1.0, 2.0]], [[1.0]])
    with pytest.raises(ValueError, match="one per token"):
        compose_word_saliency([[1.0]], [[1.0]], word_ids=[0, 1])


def test_doctests():
    assert doctest.testmod(comp).failed == 0
