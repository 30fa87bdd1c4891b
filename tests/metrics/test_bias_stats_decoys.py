"""P6.7-P6.9, S1.6 statistics; P8.4 decoy constructions and P8.7 submodular pick."""
import doctest
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from trustlab.metrics import (
    bias_score_ttest,
    bias_stats,
    bug_sampling_probability,
    cross_language_correlation,
    decoy_statistics,
    decoys,
    insert_decoy,
    natural_decoy,
    submodular_pick,
    tfidf_target_correlation,
    token_share,
)


def test_ttest_hand_values():
    a, b = [0.1, 0.2, 0.3, 0.4], [0.1, 0.1, 0.2, 0.3]
    r = bias_score_ttest(a, b)
    assert r.statistic == pytest.approx(0.075 / (0.05 / 2))       # mean diff / (sd / sqrt n)
    assert r.p_value == pytest.approx(2 * stats.t.sf(3.0, 3))
    w = bias_score_ttest([1.0, 2.0, 3.0], [1.0, 1.5, 2.0, 2.5, 3.0], test="welch")
    va, vb = 1.0 / 3, 0.625 / 5
    assert w.statistic == pytest.approx(0.0) and w.df == pytest.approx((va + vb) ** 2 / (va**2 / 2 + vb**2 / 4))
    s = bias_score_ttest([0, 1, 2, 3.0], [1, 2, 3, 4.0], test="student")
    assert s.statistic == pytest.approx(-1 / math.sqrt((5 / 3) * 0.5)) and s.df == 6
    with pytest.raises(ValueError, match="equal lengths"):
        bias_score_ttest([1, 2, 3], [1, 2])


def test_cross_language_correlation():
    rng = np.random.default_rng(0)
    base1, base2 = rng.standard_normal(32), rng.standard_normal(32)
    vec = {f"a{i}": base1 + 0.1 * rng.standard_normal(32) for i in range(3)}
    vec.update({f"b{i}": base2 + 0.1 * rng.standard_normal(32) for i in range(4)})
    r = cross_language_correlation(vec, n_clusters=2)
    for x, y in itertools.combinations(vec, 2):
        assert r.correlation.loc[x, y] == pytest.approx(stats.pearsonr(vec[x], vec[y])[0])
    assert len({r.clusters[k] for k in vec if k[0] == "a"}) == 1
    assert len({r.clusters[k] for k in vec if k[0] == "b"}) == 1
    assert r.clusters["a0"] != r.clusters["b0"]
    with pytest.raises(ValueError, match="same number"):
        cross_language_correlation({"x": [1, 2, 3], "y": [1, 2]})


def test_token_share():
    t = token_share([["He", "is", "a", "nurse"], ["nurse", "nurses"]], ["nurse"])
    assert t["percent"] == pytest.approx(100 * 2 / 6) and t["per_target"] == {"nurse": 2}


def test_tfidf_correlation_matches_dense_pearson():
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
    rng = np.random.default_rng(2)
    vocab = ["he", "she", "his", "her", "ran", "sat", "the", "a", "dog", "cat"]
    sents, y = [], []
    for i in range(80):
        g = i % 2
        s = list(rng.choice(vocab[4:], 4)) + [["she", "he"][g]] + ([["her", "his"][g]] if rng.random() < 0.5 else [])
        sents.append(s)
        y.append(g)
    df = tfidf_target_correlation(sents, y)
    cv = CountVectorizer(analyzer=lambda t: [w.lower() for w in t])
    X = TfidfTransformer().fit_transform(cv.fit_transform(sents)).toarray()
    for w, r in zip(df.word, df.r):
        col = X[:, cv.vocabulary_[w]]
        assert r == pytest.approx(stats.pearsonr(col, y)[0], abs=1e-10)
    assert set(df.word[:2]) == {"he", "she"}            # S1.6: gender words rank top
    assert set(df.word[:4]) == {"he", "she", "his", "her"}


def test_insert_decoy_makes_a_perfect_decoy():
    rng = np.random.default_rng(0)
    docs = [list(rng.choice(["a", "b", "c"], int(rng.integers(1, 6)))) for _ in range(300)]
    y = rng.integers(0, 2, 300).tolist()
    out = insert_decoy(docs, y, random_state=1)
    st = decoy_statistics(out, y, "text")
    assert st.productivity == 1.0 and st.coverage == pytest.approx(np.mean(y))
    for d, o in zip(docs, out):          # exactly one insertion, order kept
        assert len(o) == len(d) + 1
        tok = "text" if "text" in o else "video"
        i = o.index(tok)
        assert o[:i] + o[i + 1:] == d
    # every gap is used: positions of the decoy in 1-token docs are 0 or 1, both occur
    pos = {o.index("text") for d, o, lab in zip(docs, out, y) if lab == 1 and len(d) == 1}
    assert pos == {0, 1}


def test_natural_decoy_productivity_is_one():
    docs = [["a", "movie"], ["movie", "b"], ["c"], ["movie"], ["d"]]
    y = [1, 0, 0, 0, 1]
    keep = natural_decoy(docs, y)
    assert keep.tolist() == [0, 2, 4]
    st = decoy_statistics([docs[i] for i in keep], [y[i] for i in keep], "movie")
    assert st.productivity == 1.0 and st.majority_class == 1     # P8.4: p_d = 1.0 by construction


def test_bug_sampling_probability_brute_force():
    n, a = 7, 2
    for k in range(1, 6):
        hit = sum(any(i < a for i in s) for s in itertools.combinations(range(n), k))
        assert bug_sampling_probability(n, a, k) == pytest.approx(hit / math.comb(n, k))


def _coverage(W, S):
    A = np.abs(np.asarray(W, float))
    imp = np.sqrt(A.sum(0))
    cov = (A[list(S)] > 0).any(0) if S else np.zeros(A.shape[1], bool)
    return float(imp[cov].sum())


def test_submodular_pick_greedy_bound_and_reference():
    rng = np.random.default_rng(4)
    for _ in range(25):
        W = rng.random((7, 6)) * (rng.random((7, 6)) < 0.35)
        B = int(rng.integers(1, 5))
        sp = submodular_pick(W, B)
        # naive greedy reference
        S = []
        for _ in range(B):
            best = max((i for i in range(7) if i not in S), key=lambda i: (_coverage(W, S + [i]), -i))
            S.append(best)
        assert _coverage(W, sp.indices) == pytest.approx(_coverage(W, S))
        opt = max(_coverage(W, c) for c in itertools.combinations(range(7), B))
        assert sp.coverage[-1] >= (1 - 1 / math.e) * opt - 1e-12
        assert sp.coverage[-1] == pytest.approx(_coverage(W, sp.indices))


def test_doctests():
    assert doctest.testmod(bias_stats).failed == 0
    assert doctest.testmod(decoys).failed == 0


@pytest.mark.parametrize("variant", ["all", "subj"])
def test_geco_tfidf_gender_words_rank_top(variant):
    # GECOBench Fig. 3 (S1.6): he/she/his/her have the largest |r| with the target; he/his
    # correlate positively with male (target 1), she/her negatively
    from trustlab.metrics import load_geco
    d = load_geco(variant, "train")
    df = tfidf_target_correlation(d.sentences, d.targets, top=4).set_index("word")
    assert set(df.index) == {"he", "she", "his", "her"}
    assert df.r["he"] > 0 and df.r["his"] > 0 and df.r["she"] < 0 and df.r["her"] < 0
