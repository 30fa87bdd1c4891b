"""Bias metrics on embeddings of any scale (found by a scale sweep 1e-300..1e300): the
metrics are scale-free (cosine; effect sizes are ratios), but norms and squares
overflowed (WEAT effect size 0.0 at 1e160, with raw overflow warnings) or underflowed
(non-zero vectors of 1e-300 refused as "zero vectors")."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from trustlab.metrics import direct_bias, gender_direction, mac, weat


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    return words, rng.normal(0, 1, (40, 20))


def scores(words, V, similarity):
    X, Y, A, B = words[:8], words[8:16], words[16:24], words[24:32]
    emb = dict(zip(words, V))
    r = weat(emb, X, Y, A, B, similarity=similarity, permutations=200, random_state=0)
    out = [r.effect_size, r.p_value]
    if similarity == "cosine":
        g = gender_direction(emb, list(zip(X, Y)))
        out += [mac(emb, X, {"a": A, "b": B}).value, direct_bias(emb, A, g).value]
    return np.array(out)


@pytest.mark.parametrize("similarity", ["cosine", "euclidean", "manhattan"])
@pytest.mark.parametrize("scale", [2.0**-1000, 1e-300, 1e-160, 1e160, 1e300])
def test_bias_metrics_do_not_depend_on_the_scale(table, similarity, scale):
    words, V = table
    want = scores(words, V, similarity)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / underflow warning either
        got = scores(words, V * scale, similarity)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_zero_vectors_are_still_refused(table):
    words, V = table
    V = V.copy()
    V[3] = 0.0
    with pytest.raises(ValueError, match="zero vectors of \\['w3'\\]"):
        scores(words, V, "cosine")
