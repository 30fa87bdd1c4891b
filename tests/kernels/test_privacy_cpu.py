"""The CPU noise kernel against trusted references (pure-Python PRNG, SciPy distributions)."""
import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from trustlab.kernels import privacy_cpu as K

M64 = (1 << 64) - 1


def _splitmix(x):
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _ref_stream(key0, key1, row, count):
    """Pure-Python seeding + xoshiro256** (Blackman & Vigna reference algorithm)."""
    h = _splitmix(((row * 0xD1B54A32D192ED03) + key1) & M64) ^ key0
    s = []
    for _ in range(4):
        h = (h + 0x9E3779B97F4A7C15) & M64
        z = h
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        s.append(z ^ (z >> 31))
    rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64  # noqa: E731
    out = []
    for _ in range(count):
        out.append((rotl((s[1] * 5) & M64, 7) * 9) & M64)
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    return out


@pytest.mark.parametrize("key0,key1,row", [(0, 0, 0), (123, 456, 7), (M64, 2**63 + 5, 10**12)])
def test_xoshiro_stream_matches_reference(key0, key1, row):
    out = np.empty(16, dtype=np.uint64)
    K.fill_raw(out, np.uint64(key0), np.uint64(key1), np.int64(row))
    assert [int(v) for v in out] == _ref_stream(key0, key1, row, 16)


def test_ziggurat_tables_are_consistent():
    ki, wi, fi = K.zig_tables()
    # layer edges grow towards the tail, densities shrink
    x = wi[1:] * 2.0**52
    assert np.all(np.diff(x) > 0) and x[-1] == pytest.approx(3.6541528853610088)
    assert np.all(np.diff(fi) < 0)
    np.testing.assert_allclose(fi[1:], np.exp(-0.5 * x**2), rtol=1e-12)


def test_normals_match_standard_normal():
    Z = np.empty((4000, 100))
    K.fill_normals(Z, np.uint64(11), np.uint64(22), np.int64(0))
    z = Z.ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-4
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / z.size)
    # the tail branch (|x| > r = 3.654) fires at the right rate
    p_tail = 2 * stats.norm.sf(3.6541528853610088)
    k = int((np.abs(z) > 3.6541528853610088).sum())
    assert abs(k - p_tail * z.size) < 5 * math.sqrt(p_tail * z.size) + 1


@pytest.mark.parametrize("shape", [1.0, 2.5, 54.0, 300.0])
def test_gamma_matches_scipy(shape):
    g = np.empty(50_000)
    K.fill_gamma(g, shape, np.uint64(5), np.uint64(9), np.int64(0))
    assert stats.kstest(g, stats.gamma(shape).cdf).pvalue > 1e-4


def test_rows_are_independent_streams():
    Z = np.empty((3000, 8))
    K.fill_normals(Z, np.uint64(1), np.uint64(2), np.int64(0))
    c = np.corrcoef(Z[:-1].ravel(), Z[1:].ravel())[0, 1]
    assert abs(c) < 5 / math.sqrt(Z[1:].size)
    # a different key gives a different stream for the same row
    Z2 = np.empty((3000, 8))
    K.fill_normals(Z2, np.uint64(1), np.uint64(3), np.int64(0))
    assert not np.any(np.all(Z == Z2, axis=1))


def test_noise_is_chunk_and_offset_invariant():
    Y = np.zeros((500, 6))
    K.add_radial_noise(Y, 0.5, np.uint64(3), np.uint64(4), np.int64(0))
    Y2 = np.zeros((300, 6))
    K.add_radial_noise(Y2, 0.5, np.uint64(3), np.uint64(4), np.int64(200))
    np.testing.assert_array_equal(Y[200:], Y2)


def test_noise_kernel_thread_count_invariant():
    import numba

    old = numba.get_num_threads()
    Y1 = np.zeros((400, 10))
    Y2 = np.zeros((400, 10))
    try:
        numba.set_num_threads(1)
        K.add_radial_noise(Y1, 1.0, np.uint64(8), np.uint64(9), np.int64(0))
    finally:
        numba.set_num_threads(old)
    K.add_radial_noise(Y2, 1.0, np.uint64(8), np.uint64(9), np.int64(0))
    np.testing.assert_array_equal(Y1, Y2)


def test_nn_kernels_match_bruteforce():
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((50, 5))
    V = rng.standard_normal((40, 5))
    norms = (V**2).sum(1)
    best = np.full(50, np.inf)
    idx = np.zeros(50, dtype=np.int64)
    sec = np.full(50, np.inf)
    K.nn_top2_update(np.ascontiguousarray(Q @ V.T), norms, np.int64(0), best, idx, sec)
    S = norms[None, :] - 2 * Q @ V.T
    np.testing.assert_array_equal(idx, S.argmin(1))
    np.testing.assert_allclose(sec, np.sort(S, axis=1)[:, 1])


def test_fused_kernel_equals_in_place_kernel():
    P = np.random.default_rng(0).standard_normal((300, 9)).astype(np.float32)
    Y = P.astype(np.float64)
    K.add_radial_noise(Y, 0.7, np.uint64(1), np.uint64(2), np.int64(5))
    out = np.empty((300, 9))
    K.noise_into(out, P, 0.7, np.uint64(1), np.uint64(2), np.int64(5))
    np.testing.assert_array_equal(out, Y)


@njit(cache=False)
def _plain_release(out, P, scale, key0, key1, row_offset):
    """The row rule (stream definition 2), written out here independently of the module:
    per row, seed; the next k raw draws are the k ziggurat candidates; each candidate that
    fails the fast test is completed, in coordinate order, by the tail/wedge procedure on
    the continuing stream; all-zero directions are redrawn; then the Gamma(k) radius."""
    n, k = out.shape
    st = np.empty(4, dtype=np.uint64)
    raw = np.empty(k, dtype=np.uint64)
    z = np.empty(k)
    for i in range(n):
        K._seed_row(st, key0, key1, row_offset + i)
        ss = 0.0
        while ss == 0.0:
            for j in range(k):
                raw[j] = K._next(st)
            for j in range(k):
                idx, sign, rabs, x = K._zig_candidate(raw[j])
                if rabs >= K._KI[idx]:
                    x = K._normal_slow(st, idx, x, sign)
                z[j] = x
            for j in range(k):
                ss += z[j] * z[j]
        f = K._gamma(st, float(k)) * scale / math.sqrt(ss)
        for j in range(k):
            out[i, j] = np.float64(P[i, j]) + f * z[j]


@pytest.mark.parametrize("n,k", [(40_003, 37), (4001, 1), (3001, 2), (2999, 3), (999, 8), (1237, 54), (130, 65),
                                 (64, 128), (23, 300)])
def test_simd_kernel_is_bit_identical_to_plain_row_rule(n, k):
    """The SIMD kernel (8 rows per lane group, candidates first, scalar completion of
    the rejected ones, vector Gamma fast path) against the plain row-by-row rule, for
    every dtype pair, in place or not; n is not a multiple of 8 (the last rows take the
    scalar path) and k = 1..3 exercise the Gamma sampler's 1 + c x <= 0 branch."""
    P = np.random.default_rng(k).standard_normal((n, k)).astype(np.float32)
    args = (1.3, np.uint64(17), np.uint64(29), np.int64(123))
    for Pin in (P, P.astype(np.float64)):
        for dt in (np.float32, np.float64):
            want = np.empty(P.shape, dt)
            _plain_release(want, Pin, *args)
            for kernel in (K.noise_into, K.noise_into_serial, K.noise_into_reference):
                got = np.empty(P.shape, dt)
                assert kernel(got, Pin, *args) == 0
                np.testing.assert_array_equal(got, want)
            if Pin.dtype == dt:
                inplace = Pin.copy()
                K.noise_into(inplace, inplace, *args)
                np.testing.assert_array_equal(inplace, want)


def test_bit_identity_covers_the_rare_branches():
    """The streams compared above do take the tail (|z| > r) and wedge completions,
    and the Gamma radius's slow branches (normal rejected, squeeze failed, 1 + c x <= 0)."""
    Z = np.empty((40_003, 37))
    K.fill_normals(Z, np.uint64(17), np.uint64(29), np.int64(123))
    assert (np.abs(Z) > 3.6541528853610088).sum() > 100

    @njit(cache=False)
    def gamma_branches(n, k, key0, key1, row_offset):
        st = np.empty(4, dtype=np.uint64)
        z = np.empty(k)
        raw = np.empty(k, dtype=np.uint64)
        d = k - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        counts = np.zeros(3, dtype=np.int64)  # normal rejected, v <= 0, squeeze failed
        for i in range(n):
            K._seed_row(st, key0, key1, row_offset + i)
            K._row_direction(st, z, raw)
            idx, sign, rabs, x = K._zig_candidate(K._next(st))
            if rabs >= K._KI[idx]:
                counts[0] += 1
                continue
            v = 1.0 + c * x
            if v <= 0.0:
                counts[1] += 1
                continue
            x2 = x * x
            if not K._uniform(st) < 1.0 - 0.0331 * x2 * x2:
                counts[2] += 1
        return counts

    c37 = gamma_branches(40_003, 37, np.uint64(17), np.uint64(29), np.int64(123))
    assert c37[0] > 100 and c37[2] > 10
    assert gamma_branches(4001, 1, np.uint64(17), np.uint64(29), np.int64(123))[1] > 5


def test_first_candidates_match_pure_python_ziggurat():
    """Coordinates that passed the fast test are the row's j-th raw draw turned into a
    ziggurat value by Python arithmetic (layer = low byte, sign = bit 8, 52-bit magnitude)."""
    key0, key1, row_offset, k = 77, 88, 5, 54
    Z = np.empty((20, k))
    K.fill_normals(Z, np.uint64(key0), np.uint64(key1), np.int64(row_offset))
    ki = [int(v) for v in K._KI]
    checked = 0
    for i in range(Z.shape[0]):
        raw = _ref_stream(key0, key1, row_offset + i, k)
        for j, r in enumerate(raw):
            idx, sign, rabs = r & 0xFF, (r >> 8) & 1, (r >> 9) & ((1 << 52) - 1)
            if rabs < ki[idx]:
                want = float(rabs) * float(K._WI[idx]) * (-1.0 if sign else 1.0)
                assert Z[i, j] == want
                checked += 1
    assert checked > 0.97 * Z.size


def test_non_contiguous_arrays_take_the_generic_store():
    Y = np.zeros((300, 20))
    V = Y[:, ::2]
    assert K.noise_into(V, V, 1.0, np.uint64(1), np.uint64(2), np.int64(0)) == 0
    want = np.zeros((300, 10))
    K.noise_into_reference(want, want, 1.0, np.uint64(1), np.uint64(2), np.int64(0))
    np.testing.assert_array_equal(V, want)
    assert not Y[:, 1::2].any()
