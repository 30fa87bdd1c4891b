"""S4.2 seed averaging, S4.9 max/median/min, GenTemp-style templates for GAUC/FPED/FNED."""
import doctest

import numpy as np
import pandas as pd
import pytest

from trustlab.metrics import aggregation, fned, fped, gentemp, max_median_min, roc_auc, seed_average


def test_seed_average_array_and_frame_agree():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.0, (17, 10))
    v = seed_average(a)
    np.testing.assert_allclose(v, [np.mean(r) for r in a])
    df = pd.DataFrame([{"embedding": f"e{k}", "seed": s, "value": a[k, s]} for k in range(17) for s in range(10)])
    out = seed_average(df)
    np.testing.assert_allclose(out["mean"], v)
    np.testing.assert_allclose(out["std"], a.std(axis=1, ddof=1))
    assert (out["n_seeds"] == 10).all()


def test_max_median_min_hand_values():
    # 17 embeddings: the median is the 9th smallest
    v = np.arange(17) / 100 + 0.8
    assert max_median_min(v) == {"max": pytest.approx(0.96), "median": pytest.approx(0.88), "min": pytest.approx(0.8)}
    # even count: mean of the middle two
    assert max_median_min([0.1, 0.4, 0.2, 0.3])["median"] == pytest.approx(0.25)
    df = pd.DataFrame({"model": ["CNN"] * 3 + ["GRU"] * 3, "mean": [0.928, 0.916, 0.910, 0.939, 0.935, 0.925]})
    t = max_median_min(df, by=["model"]).set_index("model")
    assert t.loc["CNN"].tolist() == [0.928, 0.916, 0.910]   # Rios & Lwowski Table 4, Sexist AUC Impute, CNN row
    assert t.loc["GRU"].tolist() == [0.939, 0.935, 0.925]


def test_seed_average_errors():
    with pytest.raises(ValueError, match="NaN"):
        seed_average([[0.1, np.nan]])
    df = pd.DataFrame({"embedding": ["a", "a"], "seed": [0, 0], "value": [0.1, 0.2]})
    with pytest.raises(ValueError, match="repeat"):
        seed_average(df)
    with pytest.raises(ValueError, match="no column"):
        seed_average(df, by=("model",))


def test_gentemp_structure():
    df = gentemp()
    # 8 gender pairs x (9 verb + 2 am/hate + 44 being + 44 you-are) pairs, two texts each
    assert len(df) == 2 * 8 * 99
    for _, g in df.groupby("pair"):
        assert g.group.tolist() == ["male", "female"]
        assert g.label.nunique() == 1 and g.template.nunique() == 1
        m, f = g.text.tolist()
        mt, ft = g.term.tolist()
        assert m.split() == [ft if t == ft else (mt if t == mt else t) for t in m.split()]
        assert f == " ".join(ft if t == mt else t for t in m.split())
    assert "being boys is chartiable." in set(df.text)
    s = gentemp(712, random_state=0)
    assert len(s) == 1424 and s.pair.nunique() == 712
    assert s.equals(gentemp(712, random_state=0))


def test_gentemp_gauc_fped_fned_known_classifiers():
    df = gentemp()
    neg = (set(aggregation.GENTEMP_WORDS["adjective_negative"]) | set(aggregation.GENTEMP_WORDS["verb_negative"])) - {
        "hate"
    }
    fair = df.text.map(lambda t: float(any(w.strip(".") in neg for w in t.split())))
    # a lexicon classifier without 'hate' ignores gender: misses "hate X" and "i hate X",
    # 16 of the 424 offensive texts per group; 848 positives, 32 tied with all 736 negatives
    assert roc_auc(df.label, fair) == pytest.approx((816 + 0.5 * 32) / 848)
    assert fped(df.label, fair, df.group) == 0.0 and fned(df.label, fair, df.group) == 0.0
    # flag every female text too: FPR_f = 1, FPR_m = 0, FPR = 0.5 -> FPED = 1.0
    biased = np.maximum(fair, (df.group == "female").astype(float))
    assert fped(df.label, biased, df.group) == pytest.approx(1.0)
    # FNR_m = 16/424, FNR_f = 0, FNR = 8/424 -> FNED = 8/424 + 8/424
    assert fned(df.label, biased, df.group) == pytest.approx(16 / 424)


def test_doctests():
    assert doctest.testmod(aggregation).failed == 0
