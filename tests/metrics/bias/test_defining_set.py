"""P6.2/P6.6: per-word signed gender bias and the defining-set summary."""
from __future__ import annotations

import math

import numpy as np
import pytest

from trustlab.metrics.bias import (
    DEFINITIONAL_PAIRS,
    defining_set_bias,
    direct_bias,
    gender_direction,
    word_gender_bias,
)
from trustlab.metrics.embeddings import MissingWordsWarning


def _emb(d=20, seed=0):
    rng = np.random.default_rng(seed)
    axis = np.zeros(d)
    axis[0] = 1.0
    emb = {}
    for f, m in DEFINITIONAL_PAIRS:
        base = rng.standard_normal(d)
        emb[f] = base + 1.5 * axis + 0.2 * rng.standard_normal(d)
        emb[m] = base - 1.5 * axis + 0.2 * rng.standard_normal(d)
    for w in ("nurse", "engineer", "teacher"):
        emb[w] = rng.standard_normal(d)
    return emb


def test_word_gender_bias_matches_a_loop_and_direct_bias():
    emb = _emb()
    g = gender_direction(emb)
    words = ["nurse", "engineer", "teacher", "woman", "man"]
    got = word_gender_bias(emb, words, g)
    for w in words:
        v = emb[w]
        ref = float(v @ g.vector / (np.linalg.norm(v) * np.linalg.norm(g.vector)))
        assert got[w] == pytest.approx(ref, abs=1e-12)
    assert list(got) == words
    db = direct_bias(emb, words[:3], g)
    assert db.per_word == pytest.approx({w: got[w] for w in words[:3]})
    assert db.value == pytest.approx(np.mean([abs(got[w]) for w in words[:3]]))
    # a raw array direction gives the same (scale-free) scores
    assert word_gender_bias(emb, words, 3 * g.vector) == pytest.approx(got)


def test_defining_set_bias_mean_sum_sign_and_missing_words():
    emb = _emb()
    g = gender_direction(emb)
    r = defining_set_bias(emb, g)
    assert r.female > 0 > r.male and r.dropped == []
    fem = [r.per_word[f] for f, _ in DEFINITIONAL_PAIRS]
    assert r.female == pytest.approx(np.mean(fem))
    s = defining_set_bias(emb, g, aggregate="sum")
    assert s.female == pytest.approx(math.fsum(fem)) and s.male == pytest.approx(7 * r.male)
    del emb["madam"]
    with pytest.warns(MissingWordsWarning, match="madam"):
        r2 = defining_set_bias(emb, g)
    assert r2.dropped == ["madam"] and r2.female == pytest.approx(np.mean(fem[:-1]))
    with pytest.raises(ValueError, match="direction must be"):
        word_gender_bias(emb, ["nurse"], np.ones(3))
    with pytest.raises(ValueError, match="no female defining word"), pytest.warns(MissingWordsWarning):
        defining_set_bias(emb, g, [("zz", "man")])
