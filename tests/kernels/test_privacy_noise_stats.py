"""Large-sample statistical checks of the fused noise kernel's output (fixed keys, so
deterministic): >= 10^6 draws against SciPy's distributions."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from trustlab.kernels import privacy_cpu as K


def _noise(n, k, scale, key=(101, 202), dtype=np.float64):
    P = np.zeros((n, k), dtype=np.float32)
    out = np.empty((n, k), dtype=dtype)
    assert K.noise_into(out, P, scale, np.uint64(key[0]), np.uint64(key[1]), np.int64(0)) == 0
    return out.astype(np.float64)


def test_radius_and_direction_law_on_a_million_coordinates():
    n, k, scale = 150_000, 8, 1.7  # 1.2M coordinates
    N = _noise(n, k, scale)
    r = np.linalg.norm(N, axis=1)
    assert stats.kstest(r, stats.gamma(k, scale=scale).cdf).pvalue > 1e-4
    assert abs(r.mean() - k * scale) < 5 * math.sqrt(k) * scale / math.sqrt(n)
    U = (N / r[:, None]).ravel()  # coordinates of a uniform direction: (u+1)/2 ~ Beta((k-1)/2, (k-1)/2)
    a = (k - 1) / 2
    assert stats.kstest((U + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-4
    # chi-square on 50 equiprobable bins of the same law
    edges = stats.beta(a, a).ppf(np.linspace(0, 1, 51))
    counts = np.histogram((U + 1) / 2, bins=edges)[0]
    assert stats.chisquare(counts).pvalue > 1e-4


def test_normals_ks_chisquare_and_moments_on_two_million_draws():
    Z = np.empty((20_000, 100))
    K.fill_normals(Z, np.uint64(7), np.uint64(8), np.int64(0))
    z = Z.ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-4
    edges = stats.norm.ppf(np.linspace(0, 1, 101))
    assert stats.chisquare(np.histogram(z, bins=edges)[0]).pvalue > 1e-4
    n = z.size
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / n)
    assert abs(stats.skew(z)) < 5 * math.sqrt(6 / n)
    assert abs(stats.kurtosis(z)) < 5 * math.sqrt(24 / n)


def test_coordinates_rows_and_neighbouring_rows_uncorrelated():
    n, k = 100_000, 12
    N = _noise(n, k, 1.0, key=(5, 6))
    C = np.corrcoef(N.T)  # within a row: coordinates uncorrelated
    assert np.abs(C[np.triu_indices(k, 1)]).max() < 5 / math.sqrt(n)
    # neighbouring rows (consecutive stream indices, same parallel block or not)
    for lag in (1, 8, 64):
        c = np.corrcoef(N[:-lag].ravel(), N[lag:].ravel())[0, 1]
        assert abs(c) < 5 / math.sqrt(N[lag:].size)
    # radii of neighbouring rows independent (rank correlation)
    r = np.linalg.norm(N, axis=1)
    assert abs(stats.spearmanr(r[:-1], r[1:]).statistic) < 5 / math.sqrt(n)


def test_fused_float32_output_thread_count_invariant():
    import numba

    P = np.random.default_rng(0).standard_normal((20_000, 9)).astype(np.float32)
    a = np.empty(P.shape, np.float32)
    b = np.empty(P.shape, np.float32)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        K.noise_into(a, P, 0.8, np.uint64(1), np.uint64(9), np.int64(3))
    finally:
        numba.set_num_threads(old)
    K.noise_into(b, P, 0.8, np.uint64(1), np.uint64(9), np.int64(3))
    np.testing.assert_array_equal(a, b)
