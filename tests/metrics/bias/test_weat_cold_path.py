"""The WEAT permutation test's NumPy twins give the kernels' bits.

On a cold Numba cache a small job runs NumPy twins of the subset-sum kernels instead
of compiling them (1-2 s of CPU); the sums, keys and therefore p-values must be the
same bits as the kernels', so a result never depends on the state of the cache.
"""
import numpy as np
import pytest

import trustlab.kernels._jit as jit
import trustlab.kernels.weat as K
from trustlab.metrics.bias import weat


@pytest.mark.parametrize("n,k,m,start,seed", [(16, 8, 3000, 0, 1), (50, 25, 2000, 77, 2**63 + 5),
                                              (7, 3, 100, 5, 0), (30, 1, 200, 0, 9), (120, 60, 300, 3, 4)])
def test_sample_twin_is_bit_identical(n, k, m, start, seed):
    s = np.random.default_rng(n).standard_normal(n)
    lo, hi = K.element_keys(n)
    out = np.empty(m)
    ol = np.empty(m, np.uint64)
    oh = np.empty(m, np.uint64)
    K.sample_kernel(m * k)(s, k, np.uint64(seed), start, lo, hi, K.n_chunks(m), out, ol, oh)
    a, b, c = K.sample_subset_sums_numpy(s, k, np.uint64(seed), start, m, lo, hi)
    assert np.array_equal(out, a) and np.array_equal(ol, b) and np.array_equal(oh, c)


@pytest.mark.parametrize("n,k", [(16, 8), (7, 3), (30, 1), (12, 0), (20, 4)])
def test_exact_twin_is_bit_identical(n, k):
    s = np.random.default_rng(k).standard_normal(n)
    T = K.binomial_table(n, k)
    total = int(T[n, k])
    for off in (0, total // 3):
        cnt = total - off
        o = np.empty(cnt)
        K.exact_kernel(cnt * k)(s, k, T, K.n_chunks(cnt), o, off)
        assert np.array_equal(o, K.exact_subset_sums_numpy(s, k, off, cnt))


def _emb():
    rng = np.random.default_rng(0)
    w = [f"w{i}" for i in range(40)]
    return w, dict(zip(w, rng.normal(size=(40, 6))))


@pytest.mark.parametrize("perm", ["exact", 5000])
def test_weat_cold_and_warm_give_the_same_result(monkeypatch, perm):
    w, emb = _emb()
    args = (emb, w[:8], w[8:16], w[16:28], w[28:])
    warm = weat(*args, permutations=perm, random_state=3)  # kernels
    monkeypatch.setattr(jit, "kernel_ready", lambda d: False)
    for name in ("exact_subset_sums", "exact_subset_sums_serial", "sample_subset_sums", "sample_subset_sums_serial"):
        monkeypatch.delitem(vars(K), name, raising=False)  # as in a fresh process: not loaded
    calls = []
    for name in ("sample_subset_sums_numpy", "exact_subset_sums_numpy"):
        f = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, _f=f, _n=name: calls.append(_n) or _f(*a))
    cold = weat(*args, permutations=perm, random_state=3)  # NumPy twins
    assert calls  # the cold path ran
    assert cold.p_value == warm.p_value and cold.effect_size == warm.effect_size
    assert cold.n_permutations == warm.n_permutations
