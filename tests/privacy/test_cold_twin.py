"""The private release's NumPy twins give the kernels' bits.

On a cold Numba cache a small release runs :mod:`trustlab.kernels.privacy_numpy` instead
of compiling the noise kernels (~5 s of CPU); the released vectors must be the same bits
as the kernels', so a release never depends on the state of the cache.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import trustlab.kernels._jit as jit
import trustlab.kernels.privacy_cpu as K
import trustlab.kernels.privacy_numpy as T
from trustlab.privacy import mechanisms, privatize

_KEYS = [(np.uint64(1), np.uint64(2)), (np.uint64(0), np.uint64(0)),
         (np.uint64(2**64 - 1), np.uint64(0x9E3779B97F4A7C15))]


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n,k", [(1, 1), (7, 3), (8, 8), (13, 54), (301, 1), (400, 2), (64, 3), (33, 300)])
@pytest.mark.parametrize("keys", range(len(_KEYS)))
def test_noise_twin_is_bit_identical(n, k, keys):
    key0, key1 = _KEYS[keys]
    rng = np.random.default_rng(n * 1000 + k + keys)
    off = int(rng.integers(0, 2**62)) if keys else 0
    for pdt, odt in [(np.float64, np.float64), (np.float32, np.float32), (np.float32, np.float64),
                     (np.float64, np.float32)]:
        P = (rng.standard_normal((n, k)) * 3.0).astype(pdt)
        want, got = np.empty((n, k), odt), np.empty((n, k), odt)
        b1 = K.noise_into_serial(want, P, 1.9, key0, key1, np.int64(off))
        b2 = T.noise_into(got, P, 1.9, key0, key1, off)
        assert b1 == b2 == 0 and _same(want, got)
    # in place, and the parallel kernel (same bits as the serial one)
    P = rng.standard_normal((n, k))
    want = P.copy()
    K.noise_into(want, want, 0.5, key0, key1, np.int64(off))
    T.noise_into(P, P, 0.5, key0, key1, off)
    assert _same(want, P)


def test_noise_twin_counts_non_finite_like_the_kernel():
    P = np.random.default_rng(0).standard_normal((20, 6)).astype(np.float32)
    P[3, 2], P[11, 0], P[12, 5] = np.nan, np.inf, 3e38  # the last overflows float32 after the noise
    want, got = np.empty_like(P), np.empty_like(P)
    b1 = K.noise_into_serial(want, P, 1e38, np.uint64(5), np.uint64(6), np.int64(0))
    b2 = T.noise_into(got, P, 1e38, np.uint64(5), np.uint64(6), 0)
    assert b1 == b2 > 0
    assert np.array_equal(np.isfinite(want), np.isfinite(got))
    assert _same(want[np.isfinite(want)], got[np.isfinite(got)])


@pytest.mark.parametrize("shape", [1.0, 1.5, 2.0, 3.0, 54.0, 300.0])
def test_samplers_twin_is_bit_identical(shape):
    key0, key1 = np.uint64(11), np.uint64(12)
    want, got = np.empty(3000), np.empty(3000)
    K.fill_gamma(want, shape, key0, key1, np.int64(7))
    T.fill_gamma(got, shape, key0, key1, 7)
    assert _same(want, got)
    want, got = np.empty((200, 40)), np.empty((200, 40))
    K.fill_normals(want, key0, key1, np.int64(int(shape)))
    T.fill_normals(got, key0, key1, int(shape))
    assert _same(want, got)
    want, got = np.empty(100, np.uint64), np.empty(100, np.uint64)
    K.fill_raw(want, key0, key1, np.int64(int(shape)))
    T.fill_raw(got, key0, key1, int(shape))
    assert _same(want, got)


def _project_both(X, phi):
    BT = K.padded_projection(phi)
    want = np.empty((X.shape[0], phi.shape[0]), np.float32)
    got = np.empty_like(want)
    K.project_into(want, X, BT)
    T.project_into(got, X, BT)
    return want, got


@pytest.mark.parametrize("seed", range(4))
def test_projection_twin_is_bit_identical(seed):
    rng = np.random.default_rng(seed)
    n, d, m = int(rng.integers(1, 200)), int(rng.integers(1, 300)), int(rng.integers(1, 140))
    X = (rng.standard_normal((n, d)) * 10.0 ** int(rng.integers(-30, 30))).astype(np.float32)
    want, got = _project_both(X, rng.standard_normal((m, d)))
    assert _same(want, got)


def test_projection_twin_rounds_fused_multiply_adds_correctly():
    # fma(1 + 2**-15, 1 - 2**-15, 2**24 + 2) = RN(2**24 + 3 - 2**-30) = 2**24 + 2; a float64
    # sum rounded to float32 would land on the midpoint 2**24 + 3 and round to 2**24 + 4
    a = 2.0 ** -15
    X = np.array([[1.0, 1.0 + a], [-1.0, 1.0 + a], [2.0 ** -70, 1.0 + a]], np.float32)
    phi = np.array([[2.0 ** 24 + 2.0, 1.0 - a], [-(2.0 ** 24 + 2.0), -(1.0 - a)]])
    want, got = _project_both(X, phi)
    assert _same(want, got)
    assert want[0, 0] == 2.0 ** 24 + 2.0 and want[1, 0] == -(2.0 ** 24 + 2.0)
    naive = (X.astype(np.float64) @ phi.T.astype(np.float32).astype(np.float64)).astype(np.float32)
    assert naive[0, 0] != want[0, 0]  # the case a naive float64 emulation gets wrong
    # float32 subnormal results, and overflow to inf
    X = np.array([[1e-20, -3e-21, 2e-25], [3e38, 3e38, 1.0]], np.float32)
    want, got = _project_both(X, np.array([[1e-20, 1e-19, -1e-15], [1.0, 1.0, 1.0]]))
    assert _same(want, got) and 0 < abs(want[0, 0]) < 2.0 ** -126 and np.isinf(want[1, 1])


def test_fused_twin_is_bit_identical():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((45, 30)).astype(np.float32)
    BT = K.padded_projection(rng.standard_normal((9, 30)))
    for odt in (np.float32, np.float64):
        want, got = np.empty((45, 9), odt), np.empty((45, 9), odt)
        b1 = K.project_noise_into_serial(want, X, BT, 2.5, np.uint64(3), np.uint64(4), np.int64(100))
        b2 = T.project_noise_into(got, X, BT, 2.5, np.uint64(3), np.uint64(4), 100)
        assert b1 == b2 == 0 and _same(want, got)


@pytest.mark.parametrize("kw", [dict(m=20), dict(m=20, dtype=np.float64), dict(mechanism="m1")])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_privatize_cold_and_warm_give_the_same_release(monkeypatch, kw, dt):
    X = np.random.default_rng(1).standard_normal((300, 40)).astype(dt)
    monkeypatch.setattr(jit, "kernel_ready", lambda d: True)
    warm = privatize(X, epsilon=1.0, random_state=3, **kw)  # the kernels (compiled if the cache is empty)
    monkeypatch.setattr(jit, "kernel_ready", lambda d: False)
    calls = []
    for name in ("noise_into", "project_noise_into"):
        f = getattr(T, name)
        monkeypatch.setattr(T, name, lambda *a, _f=f, _n=name: calls.append(_n) or _f(*a))
    cold = privatize(X, epsilon=1.0, random_state=3, **kw)  # NumPy twins
    assert calls  # the cold path ran
    assert _same(cold.vectors, warm.vectors)


def test_twin_work_is_bounded(monkeypatch):
    monkeypatch.setattr(jit, "kernel_ready", lambda d: False)
    monkeypatch.setattr(mechanisms, "_twin_work_left", [1000])
    assert mechanisms._use_twin(K.noise_into_serial, 600)
    assert not mechanisms._use_twin(K.noise_into_serial, 600)  # over what is left: the kernel
    assert mechanisms._use_twin(K.noise_into_serial, 400)
    monkeypatch.setattr(jit, "kernel_ready", lambda d: True)
    monkeypatch.setattr(mechanisms, "_twin_work_left", [1000])
    assert not mechanisms._use_twin(K.noise_into_serial, 1)  # a ready kernel is always used


def test_a_small_release_on_an_empty_cache_compiles_nothing(tmp_path):
    code = ("import numpy as np\n"
            "from trustlab.privacy import privatize\n"
            "import trustlab.kernels.privacy_cpu as K\n"
            "X = np.random.default_rng(0).standard_normal((50, 30)).astype(np.float32)\n"
            "privatize(X, epsilon=1.0, m=8, random_state=1)\n"
            "privatize(X.astype(np.float64), epsilon=1.0, mechanism='m1', random_state=1)\n"
            "print(sum(len(getattr(K, f).overloads) for f in dir(K) if hasattr(getattr(K, f), 'overloads')))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[-1] == "0"
