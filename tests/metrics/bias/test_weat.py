"""WEAT: effect sizes against Caliskan's published word2vec values, the exact
permutation p-value against brute-force enumeration, Monte-Carlo against exact."""
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from trustlab.kernels import weat as K
from trustlab.metrics import bias as B
from trustlab.metrics.embeddings import MissingWordsWarning

CALISKAN_W2V = {1: 1.54, 2: 1.63, 3: 0.58, 5: 0.72, 6: 1.89, 7: 0.97, 8: 1.24, 9: 1.30}


@pytest.fixture(scope="module")
def emb():
    return B.load_weat_embeddings()


def brute_p(s, nx, alternative):
    """Full enumeration in plain Python (the trusted slow path)."""
    s = list(map(float, s))
    n = len(s)
    ny = n - nx
    idx = range(n)

    def md(sub):
        sx = sum(s[i] for i in sub)
        return sx / nx - (sum(s) - sx) / ny

    obs = md(range(nx))
    vals = [md(c) for c in itertools.combinations(idx, nx)]
    tol = 1e-9
    if alternative == "greater":
        c = sum(v >= obs - tol for v in vals)
    elif alternative == "less":
        c = sum(v <= obs + tol for v in vals)
    else:
        c = sum(abs(v) >= abs(obs) - tol for v in vals)
    return c / len(vals), len(vals)


@pytest.mark.parametrize("test", sorted(CALISKAN_W2V))
def test_caliskan_effect_sizes(emb, test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        r = B.weat_test(emb, test, permutations=200, random_state=0)
    assert abs(r.effect_size - CALISKAN_W2V[test]) <= 0.01, (test, r.effect_size)
    assert r.ddof == 1 and r.similarity == "cosine" and r.statistic_name == "mean"


def test_weat3_uses_corrected_list(emb):
    d = B.load_weat_sets()
    assert d["tests"]["3"]["B"] == "unpleasant_3"
    u3 = d["sets"]["unpleasant_3"]
    assert {"bomb", "evil"} <= set(u3) and not {"agony", "prison"} & set(u3) and len(u3) == 25
    assert "Billy" in d["sets"]["young_people_names"] and "Bill" not in d["sets"]["young_people_names"]


def test_missing_words_are_reported_not_silent(emb):
    with pytest.warns(MissingWordsWarning, match="Billy"):
        r = B.weat_test(emb, 10)
    assert r.dropped["X"] == ["Billy"] and r.sizes["X"] == 7 and r.sizes["Y"] == 8
    with pytest.warns(MissingWordsWarning, match="axe"):
        r2 = B.weat_test(emb, 2, permutations=100, random_state=0)
    assert r2.dropped["Y"] == ["axe"]
    with pytest.raises(ValueError, match="Billy"):
        B.weat_test(emb, 10, on_missing="raise")


@pytest.mark.parametrize("test", [6, 7, 8, 9])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_pvalue_equals_full_enumeration(emb, test, alternative):
    r = B.weat_test(emb, test, alternative=alternative)
    assert r.method == "exact"
    s = np.r_[r.associations_x, r.associations_y]
    p, n = brute_p(s, r.sizes["X"], alternative)
    assert r.n_permutations == n == math.comb(r.sizes["X"] + r.sizes["Y"], r.sizes["X"])
    assert r.p_value == pytest.approx(p, abs=1e-15)


def test_exact_unequal_sizes_and_ties():
    s = [1.0, 1.0, 0.0, 0.0, 0.0]  # heavy ties
    for alt in ("two-sided", "greater", "less"):
        assert B.weat_permutation_test(s, 2, alternative=alt).p_value == pytest.approx(brute_p(s, 2, alt)[0])
    s = np.array([0.1, 0.2, 0.3]) / 3.0 * 7  # values whose sums round differently by order
    for alt in ("two-sided", "greater", "less"):
        assert B.weat_permutation_test(np.r_[s, s], 3, alternative=alt).p_value == pytest.approx(
            brute_p(np.r_[s, s], 3, alt)[0]
        )


@settings(max_examples=40)
@given(
    st.integers(1, 6), st.integers(1, 6),
    st.sampled_from(["two-sided", "greater", "less"]), st.integers(0, 2**32 - 1),
)
def test_exact_property_random(nx, ny, alternative, seed):
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=nx + ny), 2)  # rounding creates ties
    r = B.weat_permutation_test(s, nx, alternative=alternative)
    p, n = brute_p(s, nx, alternative)
    assert r.method == "exact" and r.n_permutations == n
    assert r.p_value == pytest.approx(p)


def test_parallel_exact_kernel_matches_serial():
    rng = np.random.default_rng(1)
    s = rng.normal(size=22)
    T = K.binomial_table(22, 11)
    N = int(T[22, 11])
    a, b = np.empty(N), np.empty(N)
    K.exact_subset_sums(s, 11, T, 13, a, 0)
    K.exact_subset_sums_serial(s, 11, T, 1, b, 0)
    assert np.array_equal(a, b)
    # spot-check ranks against itertools order
    combs = itertools.islice(itertools.combinations(range(22), 11), 0, None, 70001)
    for r, c in zip(range(0, N, 70001), combs):
        assert a[r] == pytest.approx(s[list(c)].sum())


@pytest.mark.parametrize("test", [6, 8])
def test_monte_carlo_agrees_with_exact(emb, test):
    ex = B.weat_test(emb, test, alternative="greater")
    mc = B.weat_test(emb, test, alternative="greater", permutations=5000, random_state=3)
    assert mc.method == "monte-carlo" and mc.n_permutations == 5000
    se = math.sqrt(ex.p_value * (1 - ex.p_value) / 5000)
    assert abs(mc.p_value - ex.p_value) <= 4 * se + 2 / 5000


def test_monte_carlo_samples_are_distinct_and_exclude_observed():
    s = np.random.default_rng(0).normal(size=10)
    # C(10, 5) = 252 splits; ask the rejection sampler for 250 of the 251 non-observed ones
    sums = B._sample_distinct(s, 5, 250, 7, "cpu")
    assert sums.size == 250
    all_sums = {round(float(s[list(c)].sum()), 12) for c in itertools.combinations(range(10), 5)}
    obs = round(float(s[:5].sum()), 12)
    got = [round(float(x), 12) for x in sums]
    assert len(set(got)) == 250 and set(got) <= all_sums and obs not in got
    # p-value formula (1 + count) / (1 + M): M = 250 of the 251 other splits leaves one out
    r = B.weat_permutation_test(s, 5, permutations=250, random_state=7, alternative="greater")
    p_exact, _ = brute_p(s, 5, "greater")
    c_other = round(p_exact * 252) - 1  # extreme splits other than the observed one
    assert r.method == "monte-carlo"
    assert r.p_value in (pytest.approx((1 + c_other) / 251), pytest.approx(c_other / 251))


def test_monte_carlo_large_n_uses_distinct_keys():
    # n > 128 switches to 128-bit Zobrist keys
    s = np.random.default_rng(0).normal(size=140)
    r = B.weat_permutation_test(s, 70, permutations=2000, random_state=0)
    assert r.method == "monte-carlo" and r.n_permutations == 2000 and 0 < r.p_value <= 1


def test_sampler_independent_of_threads_and_reproducible():
    s = np.random.default_rng(2).normal(size=30)
    lo, hi = K.element_keys(30)
    outs = []
    for kern, ch in ((K.sample_subset_sums, 7), (K.sample_subset_sums_serial, 1)):
        o = np.empty(5000)
        ol = np.empty(5000, np.uint64)
        oh = np.empty(5000, np.uint64)
        kern(s, 15, np.uint64(99), 0, lo, hi, ch, o, ol, oh)
        outs.append((o, ol))
    assert np.array_equal(outs[0][1], outs[1][1]) and np.array_equal(outs[0][0], outs[1][0])
    # keys are exact bitmasks: popcount k, and sums match the subsets
    for i in range(20):
        idx = [j for j in range(30) if (int(outs[0][1][i]) >> j) & 1]
        assert len(idx) == 15 and outs[0][0][i] == pytest.approx(s[idx].sum())
    a = B.weat_permutation_test(s, 15, permutations=3000, random_state=5)
    b = B.weat_permutation_test(s, 15, permutations=3000, random_state=5)
    assert a == b


def test_sampler_is_uniform_over_subsets():
    # chi-square-ish check: each element lands in the subset with frequency k/n
    s = np.zeros(9)
    lo, hi = K.element_keys(9)
    m = 20000
    o = np.empty(m)
    ol = np.empty(m, np.uint64)
    oh = np.empty(m, np.uint64)
    K.sample_subset_sums_serial(s, 4, np.uint64(1), 0, lo, hi, 1, o, ol, oh)
    freq = np.array([np.mean((ol >> np.uint64(j)) & np.uint64(1)) for j in range(9)])
    assert np.all(np.abs(freq - 4 / 9) < 4 * math.sqrt((4 / 9) * (5 / 9) / m))
    counts = np.unique(ol, return_counts=True)[1]
    assert counts.size == math.comb(9, 4)
    exp = m / math.comb(9, 4)
    chi2 = ((counts - exp) ** 2 / exp).sum()
    assert chi2 < 125 + 5 * math.sqrt(2 * 125)  # df = 125


def _assoc_brute(W, A, Bv, sim, stat, PA=None, PB=None):
    def simf(w, M, P):
        if sim == "cosine":
            return np.array([w @ a / np.linalg.norm(w) / np.linalg.norm(a) for a in M])
        if sim == "euclidean":
            return np.array([np.linalg.norm(w - a) for a in M])
        if sim == "manhattan":
            return np.array([np.abs(w - a).sum() for a in M])
        return cdist(w[None], M, "mahalanobis", VI=P)[0]

    out = []
    for w in W:
        sa, sb = simf(w, A, PA), simf(w, Bv, PB)
        if stat == "discrete":
            out.append(min(abs(x - y) for x in sa for y in sb))
        else:
            f = getattr(np, stat)
            out.append(f(sa) - f(sb))
    return np.array(out)


@pytest.mark.parametrize("sim", ["cosine", "euclidean", "manhattan", "mahalanobis"])
@pytest.mark.parametrize("stat", ["mean", "median", "min", "max", "discrete"])
def test_generalised_associations_vs_bruteforce(sim, stat):
    rng = np.random.default_rng(4)
    d = 4
    words = [f"w{i}" for i in range(20)]
    V = rng.normal(size=(20, d))
    emb = (words, V)
    X, Y, A, Bs = words[:4], words[4:9], words[9:14], words[14:20]
    prec = None
    PA = PB = None
    if sim == "mahalanobis":
        PA = np.linalg.inv(np.cov(V[9:14].T) + np.eye(d))
        PB = np.linalg.inv(np.cov(V[14:20].T) + np.eye(d))
        prec = (PA, PB)
    r = B.weat(emb, X, Y, A, Bs, similarity=sim, statistic=stat, precision=prec)
    s = _assoc_brute(V[:9], V[9:14], V[14:20], sim, stat, PA, PB)
    np.testing.assert_allclose(np.r_[r.associations_x, r.associations_y], s, atol=1e-10)
    sx, sy = s[:4], s[4:]
    d_ref = (sx.mean() - sy.mean()) / np.std(s, ddof=1)
    assert r.effect_size == pytest.approx(d_ref, abs=1e-10)
    assert r.statistic == pytest.approx(sx.sum() - sy.sum())


def test_mahalanobis_graphical_lasso_cv_matches_sklearn():
    from sklearn.covariance import GraphicalLassoCV

    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(36)]
    V = rng.normal(size=(36, 3))
    X, Y, A, Bs = words[:6], words[6:12], words[12:24], words[24:36]
    r = B.weat((words, V), X, Y, A, Bs, similarity="mahalanobis")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PA = GraphicalLassoCV(cv=3).fit(V[12:24]).precision_
        PB = GraphicalLassoCV(cv=3).fit(V[24:36]).precision_
    s = _assoc_brute(V[:12], V[12:24], V[24:36], "mahalanobis", "mean", PA, PB)
    np.testing.assert_allclose(np.r_[r.associations_x, r.associations_y], s, atol=1e-8)
    r2 = B.weat((words, V), X, Y, A, Bs, similarity="mahalanobis", covariance="ledoit_wolf")
    assert np.isfinite(r2.effect_size)


def test_effect_size_ddof():
    sx, sy = [0.3, 0.1, 0.2], [0.0, -0.1, 0.05]
    allv = np.r_[sx, sy]
    for ddof in (0, 1):
        assert B.weat_effect_size(sx, sy, ddof) == pytest.approx(
            (np.mean(sx) - np.mean(sy)) / np.std(allv, ddof=ddof)
        )
    with pytest.raises(ValueError, match="ddof"):
        B.weat_effect_size([1.0], [2.0], ddof=2)


def test_summary_table3_word2vec(emb):
    s = B.weat_summary(emb, random_state=0)
    # Azarpanah & Farhadloo Table 3, word2vec mean-cosine: 7 (1.13, 0.54)
    assert s.n_significant == 7 and s.n_tests == 10
    assert abs(s.mean_abs_effect - 1.13) <= 0.01 and abs(s.sd_abs_effect - 0.54) <= 0.02
    ref = [abs(r["effect_size"]) for r in s.results.values()]
    assert s.mean_abs_effect == pytest.approx(np.mean(ref))
    assert s.sd_abs_effect == pytest.approx(np.std(ref, ddof=1))


def test_auto_permutation_modes():
    s = np.random.default_rng(0).normal(size=16)
    assert B.weat_permutation_test(s, 8).method == "exact"
    assert B.weat_permutation_test(s, 8, exact_limit=1000, random_state=0).method == "exact"  # 100k > C
    r = B.weat_permutation_test(s, 8, permutations=5000, random_state=0)  # dense: enumerate + subsample
    assert r.method == "monte-carlo" and r.n_permutations == 5000
    r = B.weat_permutation_test(s, 8, permutations=1000, random_state=0)  # sparse: rejection of duplicates
    assert r.method == "monte-carlo" and r.n_permutations == 1000
    assert B.weat_permutation_test(s, 8, permutations=20000).method == "exact"  # M >= C - 1
    r = B.weat_permutation_test(np.r_[s, s, s], 24, random_state=0)
    assert r.method == "monte-carlo" and r.n_permutations == 100_000 and r.p_value_se > 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(similarity="jaccard"), "similarity"),
        (dict(statistic="mode"), "statistic"),
        (dict(alternative="bigger"), "alternative"),
        (dict(permutations="some"), "permutations"),
        (dict(permutations=0), "permutations"),
        (dict(ddof=-1), "ddof"),
        (dict(on_missing="ignore"), "on_missing"),
        (dict(backend="tpu"), "backend"),
    ],
)
def test_bad_parameters(kwargs, match):
    emb = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [1.0, -1.0]}
    kwargs.setdefault("permutations", "auto")
    if kwargs.get("backend"):
        kwargs["permutations"] = 1  # force the sampler path
        kwargs.setdefault("random_state", 0)
    with pytest.raises(ValueError, match=match):
        B.weat(emb, ["a", "b"], ["c", "d"], ["a"], ["b"], **kwargs)


def test_bad_word_sets():
    emb = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "n": [np.nan, 1.0], "z": [0.0, 0.0]}
    with pytest.raises(ValueError, match="empty"):
        B.weat(emb, [], ["c"], ["a"], ["b"])
    with pytest.raises(ValueError, match="none of the"):
        B.weat(emb, ["q", "r"], ["c"], ["a"], ["b"])
    with pytest.raises(ValueError, match="NaN"):
        B.weat(emb, ["n"], ["c"], ["a"], ["b"])
    with pytest.raises(ValueError, match="zero vector"):
        B.weat(emb, ["z"], ["c"], ["a"], ["b"])
    with pytest.raises(TypeError, match="not a string"):
        B.weat(emb, "abc", ["c"], ["a"], ["b"])
    with pytest.raises(ValueError, match="Unknown WEAT test"):
        B.weat_test(emb, 11)
    with pytest.raises(ValueError, match="precision"):
        B.weat(emb, ["a"], ["c"], ["a"], ["b"], similarity="mahalanobis", precision=(np.eye(3), np.eye(3)))
    with pytest.raises(ValueError, match="at least 3 words"):
        B.weat(emb, ["a"], ["c"], ["a"], ["b"], similarity="mahalanobis")
    with pytest.raises(ValueError, match="too large"):
        B.weat_permutation_test(np.arange(60.0), 30, permutations="exact")
    with pytest.raises(ValueError, match="NaN"):
        B.weat_permutation_test([1.0, np.nan], 1)
