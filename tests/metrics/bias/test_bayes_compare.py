"""Seed S2: the Bayesian bias model across Google News, Reddit, hard-debiased Reddit and GloVe."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.metrics.bias import (
    BAYES_EMBEDDINGS,
    BAYES_TOPICS,
    bayesian_bias,
    compare_bayesian_bias,
    load_bayes_data,
    load_bayes_example,
)

ROWS = {"religion": 4830, "gender": 4704, "race": 5868}
GLOVE_MISSING = {"religion": 15, "gender": 14, "race": 18}


@pytest.mark.parametrize("topic", BAYES_TOPICS)
def test_every_bundled_file_loads(topic):
    for emb in BAYES_EMBEDDINGS:
        df = load_bayes_data(topic, emb)
        missing = GLOVE_MISSING[topic] if emb == "glove" else 0
        assert len(df) == ROWS[topic] - missing
        assert list(df.columns) == ["protected_word", "word_to_compare", "word_class", "connection",
                                    "cosine_distance"]
        assert sorted(df.connection.unique()) == ["associated", "different", "human", "none"]
        assert df.cosine_distance.between(0, 2).all()
    raw = load_bayes_data(topic, "glove", drop_missing=False)
    assert (raw.cosine_distance == -100).sum() == GLOVE_MISSING[topic]
    # the same pairs in every embedding of a topic
    pairs = [set(zip(load_bayes_data(topic, e, drop_missing=False).protected_word,
                     load_bayes_data(topic, e, drop_missing=False).word_to_compare)) for e in BAYES_EMBEDDINGS]
    assert all(p == pairs[0] for p in pairs)


def test_religion_reddit_is_the_bundled_example():
    pd.testing.assert_frame_equal(load_bayes_data("religion", "reddit"), load_bayes_example())


def _frame(shift, rng, n=100):
    con = np.repeat(["associated", "different", "none"], n // 2)
    return pd.DataFrame({"protected_word": np.tile(["a", "b"], con.size // 2), "connection": con,
                         "cosine_distance": 0.8 + np.where(con == "associated", shift, 0.0)
                         + 0.05 * rng.standard_normal(con.size)})


def test_comparison_equals_separate_fits_and_finds_the_planted_bias():
    rng = np.random.default_rng(1)
    data = {"biased": _frame(-0.15, rng), "clean": _frame(0.0, rng)}
    kw = dict(draws=300, warmup=100, chains=2)
    r = compare_bayesian_bias(data, random_state=5, **kw)
    seeds = np.random.default_rng(5)
    for name in data:
        ref = bayesian_bias(data[name], random_state=int(seeds.integers(0, 2**63 - 1)), **kw)
        x = ref.draws["co[associated]"] - ref.draws["co[different]"]
        row = next(e for e in r.per_embedding if e["embedding"] == name)
        assert row["mean"] == pytest.approx(float(x.mean()))
    by = {e["embedding"]: e for e in r.per_embedding}
    assert not by["biased"]["includes_zero"] and by["biased"]["hpdi_high"] < 0
    assert by["clean"]["includes_zero"]
    (d,) = r.differences
    assert (d["first"], d["second"]) == ("biased", "clean") and d["mean"] == pytest.approx(0.15, abs=0.05)
    assert not d["includes_zero"]
    with pytest.raises(ValueError, match="connection levels"):
        compare_bayesian_bias(data, contrast=("associated", "human"), **kw)


def test_hard_debiasing_moves_the_religion_contrast_to_zero():
    r = compare_bayesian_bias(topic="religion", embeddings=("reddit", "reddit_debiased"), draws=400, warmup=150,
                              random_state=0)
    by = {e["embedding"]: e for e in r.per_embedding}
    assert by["reddit"]["mean"] < -0.03        # associated attribute words are closer (HPDI upper end ~0)
    assert by["reddit_debiased"]["includes_zero"]
    assert abs(by["reddit_debiased"]["mean"]) < abs(by["reddit"]["mean"]) / 5
