"""The fused float32 release pipeline against the plain reference path, its
finiteness check, and the independence of the noise key from the published phi_seed."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from trustlab.cli import main
from trustlab.kernels import privacy_cpu as K
from trustlab.privacy import privatize, privatize_file, projection_matrix
from trustlab.privacy.mechanisms import _keys_from, make_mechanism


def _X(n=4000, d=40, dtype=np.float32, seed=0):
    X = np.random.default_rng(seed).standard_normal((n, d)) * (2.5 / math.sqrt(d))
    return X.astype(dtype)


def _reference_release(X, m, phi_seed, epsilon, beta, rng):
    """The pipeline before fusion, written plainly: float64 GEMM, then NumPy noise
    (normal direction normalised, Gamma(m, (1+β)/ε) radius)."""
    P = X.astype(np.float64) @ projection_matrix(m, X.shape[1], phi_seed).T
    Z = rng.standard_normal(P.shape)
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    R = rng.gamma(m, (1 + beta) / epsilon, size=P.shape[0])
    return P + Z * R[:, None]


def test_fused_float32_matches_reference_distributionally():
    X = _X()
    eps, beta = 2.0, 0.8
    W, rec = privatize(X, epsilon=eps, beta=beta, m=12, random_state=123)
    assert W.dtype == np.float32 and W.shape == (X.shape[0], 12)
    Phi = projection_matrix(rec.m, rec.d, rec.phi_seed)
    N = W.astype(np.float64) - X.astype(np.float64) @ Phi.T
    norms = np.linalg.norm(N, axis=1)
    scale = (1 + beta) / eps
    # radius ~ Gamma(m, (1+β)/ε): one-sample KS (fixed seed, so deterministic)
    assert stats.kstest(norms, stats.gamma(rec.m, scale=scale).cdf).pvalue > 1e-3
    # and two-sample KS against the reference (NumPy-noise) path
    ref = _reference_release(X, rec.m, rec.phi_seed, eps, beta, np.random.default_rng(5))
    ref_norms = np.linalg.norm(ref - X.astype(np.float64) @ Phi.T, axis=1)
    assert stats.ks_2samp(norms, ref_norms).pvalue > 1e-3
    # direction uniform on the sphere: (u_1 + 1)/2 ~ Beta((m-1)/2, (m-1)/2) for every axis
    U = N / norms[:, None]
    a = (rec.m - 1) / 2
    for j in (0, rec.m // 2, rec.m - 1):
        assert stats.kstest((U[:, j] + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-3
    assert np.linalg.norm(U.mean(axis=0)) < 5 / math.sqrt(U.shape[0])


@pytest.mark.parametrize("mechanism", ["privemb", "m1"])
def test_float32_release_is_rounded_float64_release(mechanism):
    X = _X(n=5000, d=30)  # > one parallel chunk and several chunks
    kw = {"m": 9} if mechanism == "privemb" else {}
    W64, r64 = privatize(X, epsilon=1.5, mechanism=mechanism, random_state=7, dtype=np.float64, chunk_size=3000, **kw)
    W32, r32 = privatize(X, epsilon=1.5, mechanism=mechanism, random_state=7, chunk_size=3000, **kw)
    assert r64.phi_seed == r32.phi_seed
    np.testing.assert_array_equal(W32, W64.astype(np.float32))


def test_serial_and_parallel_kernels_identical():
    P = np.random.default_rng(1).standard_normal((700, 13)).astype(np.float32)
    for dt in (np.float32, np.float64):
        a = np.empty(P.shape, dt)
        b = np.empty(P.shape, dt)
        assert K.noise_into(a, P, 0.9, np.uint64(3), np.uint64(4), np.int64(11)) == 0
        assert K.noise_into_serial(b, P, 0.9, np.uint64(3), np.uint64(4), np.int64(11)) == 0
        np.testing.assert_array_equal(a, b)


def test_no_copy_of_contiguous_input(monkeypatch):
    from trustlab.privacy import mechanisms

    X = _X(n=50)
    seen = []
    orig = mechanisms.Mechanism.apply

    def spy(self, Xc, off, out=None, dtype=None):
        seen.append(np.shares_memory(Xc, X))
        return orig(self, Xc, off, out=out, dtype=dtype)

    monkeypatch.setattr(mechanisms.Mechanism, "apply", spy)
    privatize(X, epsilon=1.0, m=10, random_state=0)
    assert seen == [True]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nonfinite_input_and_overflow_are_rejected(dtype):
    X = _X(n=300, dtype=dtype)
    X[123, 4] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinity.*\(123, 4\)"):
        privatize(X, epsilon=1.0, m=10, random_state=0)
    X[123, 4] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        privatize(X, epsilon=1.0, mechanism="m1", random_state=0)
    # the noise scale itself is infinite: only a larger epsilon helps (no "release in float64")
    with pytest.raises(ValueError, match="overflowed.*noise scale itself overflows: use a larger epsilon") as e:
        privatize(_X(n=300, dtype=dtype), epsilon=1e-308, m=10, random_state=0)
    assert "float64" not in str(e.value).split(").", 1)[1]
    if dtype == np.float32:
        # noise radius ~1e39: finite in float64, not representable in float32
        with pytest.raises(ValueError, match=r"overflowed float32.*or release in float64 \(dtype=np.float64\)"):
            privatize(_X(n=300), epsilon=1e-38, m=10, random_state=0)
        W, _ = privatize(_X(n=300), epsilon=1e-38, m=10, random_state=0, dtype="float64")
        assert np.isfinite(W).all()


def test_bad_dtype_is_rejected():
    with pytest.raises(ValueError, match="dtype"):
        privatize(_X(n=10), epsilon=1.0, m=5, dtype="int8")


# ------------------------------------------------------------ seed independence
def test_phi_seed_and_noise_key_are_independent_streams():
    for seed in range(25):
        phi_seed, k0, k1 = _keys_from(seed)
        # phi_seed and the key are not consecutive draws of one Generator
        g = np.random.default_rng(seed)
        assert phi_seed != int(g.integers(0, 2**63 - 1))
        # and phi_seed used as a seed reproduces neither key word
        for guess in (phi_seed, phi_seed & (2**32 - 1)):
            _, g0, g1 = _keys_from(guess)
            assert {int(g0), int(g1)}.isdisjoint({int(k0), int(k1)})
        assert 0 <= phi_seed < 2**63


def test_record_phi_seed_cannot_reproduce_the_noise():
    """An attacker holding the release and its record tries to
    regenerate the noise from the published phi_seed; the residual stays noise-sized."""
    X = _X(n=400, d=30, dtype=np.float64)
    W, rec = privatize(X, epsilon=1.0, m=12, random_state=4242)
    for attempt in (rec.phi_seed, np.random.default_rng(rec.phi_seed)):
        W_guess, _ = privatize(X, epsilon=1.0, m=12, random_state=attempt, phi_seed=rec.phi_seed)
        resid = np.linalg.norm(W - W_guess, axis=1)
        assert np.median(resid) > 0.5 * rec.m * rec.noise_scale  # ~ sqrt(2)*radius, never ~0
    # the honest holder of the seed does reproduce it (reproducibility kept)
    W2, rec2 = privatize(X, epsilon=1.0, m=12, random_state=4242)
    np.testing.assert_array_equal(W, W2)
    assert rec2.phi_seed == rec.phi_seed


def test_generator_and_seedsequence_random_state():
    X = _X(n=20, d=10)
    a, ra = privatize(X, epsilon=1.0, m=5, random_state=np.random.default_rng(3))
    b, rb = privatize(X, epsilon=1.0, m=5, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    c, rc = privatize(X, epsilon=1.0, m=5, random_state=np.random.SeedSequence(3))
    assert rc.phi_seed == make_mechanism(10, epsilon=1.0, m=5, random_state=np.random.SeedSequence(3)).phi_seed


def test_integer_seed_warns_when_writing_a_release(tmp_path, capsys):
    src = tmp_path / "x.npy"
    np.save(src, _X(n=30, d=20))
    with pytest.warns(UserWarning, match="for tests only"):
        privatize_file(src, tmp_path / "w.npy", epsilon=1.0, m=8, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        privatize_file(src, tmp_path / "w2.npy", epsilon=1.0, m=8)  # OS entropy: silent
    assert main(["privatize", str(src), "--epsilon", "1", "--output", str(tmp_path / "w3.npy"),
                 "--target-dim", "8", "--seed", "5", "--json"]) == 0
    cap = capsys.readouterr()
    json.loads(cap.out)
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("trustlab privatize: warning:") and "tests only" in lines[0]


def test_streamed_float32_file_equals_in_memory_float32(tmp_path):
    X = _X(n=2500, d=24)
    src = tmp_path / "x.npy"
    np.save(src, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        privatize_file(src, tmp_path / "w.npy", epsilon=2.0, m=8, random_state=1, chunk_size=999)
    W, _ = privatize(X, epsilon=2.0, m=8, random_state=1)
    got = np.load(tmp_path / "w.npy")
    assert got.dtype == np.float32
    # same streams and a row-local float32 projection: the same bits
    np.testing.assert_array_equal(got, W)


# ------------------------------------------------------- fused float32 projection
@pytest.mark.parametrize("n,d,m", [(1003, 300, 54), (777, 768, 58), (5, 7, 3), (300, 40, 70), (257, 30, 128),
                                   (2, 5, 1)])
def test_fused_projection_kernel_equals_projection_then_noise(n, d, m):
    """project_noise_into = project_into followed by noise_into in place, bit for bit
    (both dtypes, parallel and serial; row counts off the 4-row and 8-row groups, m
    across several 64-column panels); the projection is a float32 product."""
    X = _X(n=n, d=d)
    phi = projection_matrix(m, d, 3)
    BT = K.padded_projection(phi)
    assert BT.shape == (d, -(-m // 64) * 64) and not BT[:, m:].any()
    P = np.empty((n, m), np.float32)
    K.project_into(P, X, BT)
    exact = X.astype(np.float64) @ phi.astype(np.float32).astype(np.float64).T
    bound = d * 2.0**-24 * (np.abs(X).astype(np.float64) @ np.abs(phi.astype(np.float32)).astype(np.float64).T)
    assert np.all(np.abs(P - exact) <= bound)
    args = (0.7, np.uint64(3), np.uint64(4), np.int64(11))
    for dt in (np.float32, np.float64):
        want = P.astype(dt)
        assert K.noise_into(want, want, *args) == 0
        for kernel in (K.project_noise_into, K.project_noise_into_serial):
            got = np.empty((n, m), dt)
            assert kernel(got, X, BT, *args) == 0
            np.testing.assert_array_equal(got, want)


def test_float32_release_is_chunking_invariant_bit_for_bit():
    """Each row's projection and noise depend on that row only: any chunking (and the
    serial small-chunk kernels) give the same bits."""
    X = _X(n=9001, d=50)
    W, _ = privatize(X, epsilon=1.0, m=20, random_state=5)
    for chunk in (4096, 1000, 7):
        W2, _ = privatize(X, epsilon=1.0, m=20, random_state=5, chunk_size=chunk)
        np.testing.assert_array_equal(W2, W)
