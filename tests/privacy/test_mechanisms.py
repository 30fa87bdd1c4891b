"""Statistical and API tests of PrivEmb (M2) and M1."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats
from scipy.spatial.distance import cdist

from trustlab._backend import GPUUnavailableError
from trustlab.privacy import (
    beta_for_m,
    calibrate_m,
    empirical_sensitivity,
    jl_distortion,
    nearest_neighbor_swap,
    privatize,
    privatize_dask,
    projection_matrix,
)
from trustlab.privacy.evaluation import load_embeddings_subset


def _noise(X, W, rec):
    if rec.mechanism == "m1":
        return W - X
    return W - X @ projection_matrix(rec.m, rec.d, rec.phi_seed).T


# ---------------------------------------------------------------- samplers
@pytest.mark.parametrize("mechanism,d,m,eps,beta", [("privemb", 20, 8, 2.0, 0.5), ("m1", 7, None, 3.0, 0.9)])
def test_radius_moments_and_law(mechanism, d, m, eps, beta):
    n = 20_000
    X = np.random.default_rng(1).standard_normal((n, d))
    W, rec = privatize(X, epsilon=eps, beta=beta, m=m, mechanism=mechanism, random_state=3)
    R = np.linalg.norm(_noise(X, W, rec), axis=1)
    k = rec.m  # Gamma shape must equal the dimension the noise lives in
    scale = (1 + beta) / eps if mechanism == "privemb" else 1 / eps
    assert rec.noise_scale == pytest.approx(scale)
    mean, var = k * scale, k * scale**2
    assert abs(R.mean() - mean) < 5 * math.sqrt(var / n)
    # Var of the sample variance of a Gamma(k): (mu4 - var^2)/n with mu4 = 3k(k+2) scale^4
    se_var = math.sqrt((3 * k * (k + 2) * scale**4 - var**2) / n)
    assert abs(R.var() - var) < 5 * se_var
    assert stats.kstest(R, stats.gamma(k, scale=scale).cdf).pvalue > 1e-4
    # a wrong shape (e.g. d instead of m) is detectably different
    if mechanism == "privemb":
        assert stats.kstest(R, stats.gamma(d, scale=scale).cdf).pvalue < 1e-6


def test_noise_direction_is_isotropic():
    n, m = 20_000, 6
    W, rec = privatize(np.zeros((n, 12)), epsilon=1.0, beta=0.7, m=m, random_state=5)
    U = W / np.linalg.norm(W, axis=1, keepdims=True)
    assert np.all(np.abs(U.mean(0)) < 5 * math.sqrt(1 / (m * n)))
    C = U.T @ U / n
    # E[u u^T] = I/m; entries have sd about 1/(m sqrt(n)) (off-diagonal), tested at 6 sd
    assert np.max(np.abs(C - np.eye(m) / m)) < 6 * math.sqrt(2.0 / n) / m
    # a uniform-direction projection onto a fixed axis: (u_1 + 1)/2 ~ Beta((m-1)/2, (m-1)/2)
    a = (m - 1) / 2
    assert stats.kstest((U[:, 0] + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-4


def test_fresh_independent_draw_per_vector():
    x = np.random.default_rng(0).standard_normal(100)
    X = np.tile(x, (4000, 1))  # the same vector repeated: every copy must get its own noise
    W, rec = privatize(X, epsilon=1.0, beta=0.9, random_state=7)
    N = _noise(X, W, rec)
    assert len({row.tobytes() for row in N}) == N.shape[0]
    r = np.corrcoef(N[:-1].ravel(), N[1:].ravel())[0, 1]
    assert abs(r) < 5 / math.sqrt(N[1:].size)
    R = np.linalg.norm(N, axis=1)
    assert abs(np.corrcoef(R[:-1], R[1:])[0, 1]) < 5 / math.sqrt(R.size)


def test_noise_is_added_in_float64():
    X = np.random.default_rng(0).standard_normal((200, 50)).astype(np.float32)
    for mech in ("privemb", "m1"):
        W, rec = privatize(X, epsilon=1.0, mechanism=mech, beta=0.9, random_state=1, dtype="float64")
        assert W.dtype == np.float64
        # values not representable in float32: the noise was not rounded to float32
        assert np.mean(W != W.astype(np.float32).astype(np.float64)) > 0.99
        W32, rec32 = privatize(X, epsilon=1.0, mechanism=mech, beta=0.9, random_state=1)
        assert W32.dtype == np.float32  # the release follows X's dtype by default
        # float32 end to end = the float32 rounding of the float64 release (same streams)
        np.testing.assert_array_equal(W32, W.astype(np.float32))


def test_default_randomness_is_os_entropy_and_seed_is_reproducible():
    X = np.random.default_rng(0).standard_normal((50, 100))
    W1, r1 = privatize(X, epsilon=2.0)
    W2, r2 = privatize(X, epsilon=2.0)
    assert r1.phi_seed != r2.phi_seed
    assert not np.allclose(W1, W2)
    W3, r3 = privatize(X, epsilon=2.0, random_state=11)
    W4, r4 = privatize(X, epsilon=2.0, random_state=11, chunk_size=7)
    assert r3.phi_seed == r4.phi_seed
    np.testing.assert_allclose(W3, W4, rtol=0, atol=1e-10)  # only GEMM blocking may differ
    V1, _ = privatize(X, epsilon=2.0, mechanism="m1", random_state=11)
    V2, _ = privatize(X, epsilon=2.0, mechanism="m1", random_state=11, chunk_size=3)
    np.testing.assert_array_equal(V1, V2)


def test_release_record_contents():
    X = np.random.default_rng(0).standard_normal((100, 300))
    W, rec = privatize(X, epsilon=10, delta=1e-6, beta=0.9, random_state=0)
    d = rec.to_dict()
    for key in ("epsilon", "delta", "beta", "m", "phi_seed", "version", "library", "mechanism"):
        assert key in d
    assert d["m"] == 54 and d["epsilon"] == 10 and d["beta"] == 0.9 and d["delta"] == 1e-6
    # nothing about the noise seed: the only seed is the public projection's
    assert [k for k in d if "seed" in k or "key" in k] == ["phi_seed"]
    assert "key" not in repr(rec).lower().replace("phi_seed", "")
    # the recorded phi seed rebuilds the projection actually used (noise has the right law)
    N = _noise(X, W, rec)
    assert abs(np.linalg.norm(N, axis=1).mean() - 54 * 1.9 / 10) < 5 * math.sqrt(54) * 0.19 / 10
    # a fixed random_state never leaks into the record
    assert 0 not in [v for k, v in d.items() if k != "n" and isinstance(v, int)] or d["phi_seed"] != 0
    assert rec.spectral_norm == pytest.approx(np.linalg.norm(projection_matrix(54, 300, rec.phi_seed), 2))
    assert 0 < rec.empirical_sensitivity <= rec.spectral_norm + 1e-9


# ---------------------------------------------------------------- projection
def test_projection_moments():
    m, d = 50, 400
    P = projection_matrix(m, d, seed=123)
    z = P.ravel() * math.sqrt(m)
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / z.size)
    assert stats.kstest(z, "norm").pvalue > 1e-4
    np.testing.assert_array_equal(P, projection_matrix(m, d, seed=123))
    # E[P^T P] = I_d
    G = P.T @ P
    assert abs(np.diag(G).mean() - 1) < 5 * math.sqrt(2 / m) / math.sqrt(d)


def test_calibration_reproduces_paper_pairing():
    for beta, m_paper in ((0.93, 50), (0.66, 100), (0.468, 200)):
        m = calibrate_m(300, 1e-6, beta)
        raw = (math.sqrt(math.log2(300)) + math.sqrt(math.log(1e6))) ** 2 / beta**2
        assert abs(raw - m_paper) / m_paper < 0.015  # the fitted formula (50.1, 99.6, 198.0)
        assert m == math.ceil(raw) and abs(m - m_paper) <= max(1, 0.015 * m_paper)
        assert round(beta_for_m(300, m_paper, 1e-6), 2) == pytest.approx(round(beta, 2), abs=0.0051)
    assert calibrate_m(300, 1e-6, 0.9) == 54 and calibrate_m(300, 1e-6, 0.5) == 174
    assert calibrate_m(768, 1e-6, 0.9) > calibrate_m(300, 1e-6, 0.9)


@pytest.mark.parametrize("beta", [0.5, 0.7, 0.9])
def test_jl_distortion_within_beta_on_word2vec(beta):
    data = load_embeddings_subset()
    X = data["vectors"]
    XA, XB = X[data["pair_a"]], X[data["pair_b"]]
    m = calibrate_m(300, 1e-6, beta)
    for seed in range(3):
        dist = jl_distortion(projection_matrix(m, 300, seed), XA, XB)
        assert dist["norm"] <= beta and dist["inner"] <= beta and dist["distance"] <= beta
        assert jl_distortion(projection_matrix(m, 300, seed), X[200:1200])["norm"] <= beta


def test_empirical_sensitivity_matches_bruteforce():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 25))
    P = projection_matrix(10, 25, 4)
    brute = max(np.linalg.norm(P @ (X[i] - X[j])) / np.linalg.norm(X[i] - X[j])
                for i in range(40) for j in range(i + 1, 40))
    assert empirical_sensitivity(P, X) == pytest.approx(brute, rel=1e-9)
    assert brute <= np.linalg.norm(P, 2) + 1e-12


# ---------------------------------------------------------------- nearest neighbour swap
@settings(max_examples=40)
@given(arrays(np.int8, st.tuples(st.integers(1, 12), st.just(4)), elements=st.integers(-3, 3)),
       arrays(np.int8, st.tuples(st.integers(1, 15), st.just(4)), elements=st.integers(-3, 3)))
def test_nn_swap_exact_with_ties(Q, V):
    Q = Q.astype(np.float64)
    V = V.astype(np.float64)
    want = cdist(Q, V).argmin(1)  # exact for small integers; ties -> lowest index
    np.testing.assert_array_equal(nearest_neighbor_swap(Q, V, block=4), want)
    np.testing.assert_array_equal(nearest_neighbor_swap(Q, V, block=5, precision="float32"), want)


def test_nn_swap_float32_path_is_exact_on_near_ties():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((3000, 64))
    V[1::2] = V[::2] + 1e-7 * rng.standard_normal((1500, 64))  # near-duplicate pairs
    Q = V[rng.integers(0, 3000, 500)] + 1e-4 * rng.standard_normal((500, 64))
    want = cdist(Q, V, "sqeuclidean").argmin(1)
    np.testing.assert_array_equal(nearest_neighbor_swap(Q, V, precision="float32", block=700), want)


def test_m1_with_vocab_returns_vocab_rows():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((30, 8))
    rel = privatize(V[:10], epsilon=50.0, mechanism="m1", vocab=V, random_state=1)
    W, rec = rel
    assert rec.vocab_swap and rel.indices.shape == (10,)
    np.testing.assert_array_equal(W, V[rel.indices])


# ---------------------------------------------------------------- dask, gpu stand-in
def test_dask_path_equals_in_memory():
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(0).standard_normal((120, 100))
    W, rec = privatize_dask(da.from_array(X, chunks=(25, 40)), epsilon=3, beta=0.8, random_state=4)
    W0, rec0 = privatize(X, epsilon=3, beta=0.8, random_state=4)
    np.testing.assert_allclose(W.compute(), W0, atol=1e-10)
    assert rec.phi_seed == rec0.phi_seed and rec.m == rec0.m


def test_gpu_code_path_with_numpy_stand_in(monkeypatch):
    """The GPU release's plumbing (Φᵀ per dtype, row offsets, copies back) run through a
    NumPy stand-in for CuPy, with the kernels replaced by their NumPy reference: the
    release is X Φᵀ + the reference noise, and the same whatever the chunking."""
    import types

    from trustlab.kernels import privacy_gpu
    from trustlab.privacy import mechanisms

    class FakeArray(np.ndarray):  # what the stand-in "device" returns
        def get(self, out=None):
            a = np.asarray(self)
            return a.copy() if out is None else (np.copyto(out, a), out)[1]

    fake = types.SimpleNamespace(
        asarray=lambda a, dtype=None: np.array(a, dtype=dtype).view(FakeArray),
        empty=lambda shape, dtype=None: np.empty(shape, dtype=dtype).view(FakeArray),
        matmul=lambda a, b, out=None: np.matmul(a, b, out=out),
        float64=np.float64,
    )

    def noise_into(P, out, scale, key, row_offset):
        out[...] = np.asarray(P) + privacy_gpu.noise_reference(out.shape[0], out.shape[1], scale, key, row_offset)
        return int(np.count_nonzero(~np.isfinite(out)))

    monkeypatch.setattr(privacy_gpu, "get_cupy", lambda: fake)
    monkeypatch.setattr(privacy_gpu, "_noise_into", noise_into)
    monkeypatch.setattr(mechanisms, "resolve_backend", lambda *a, **k: "gpu")
    X = np.random.default_rng(0).standard_normal((300, 16))
    W, rec = privatize(X, epsilon=2.0, beta=0.6, m=5, backend="gpu", random_state=0, chunk_size=70)
    W2, _ = privatize(X, epsilon=2.0, beta=0.6, m=5, backend="gpu", random_state=0, chunk_size=1000)
    np.testing.assert_array_equal(W, W2)
    mech = mechanisms.make_mechanism(16, epsilon=2.0, beta=0.6, m=5, backend="cpu", random_state=0)
    key = privacy_gpu.philox_key(mech._key0, mech._key1)
    want = X @ mech.phi.T + privacy_gpu.noise_reference(300, 5, (1 + 0.6) / 2.0, key)
    np.testing.assert_allclose(W, want, rtol=1e-12, atol=1e-12)
    W32, _ = privatize(X.astype(np.float32), epsilon=2.0, beta=0.6, m=5, backend="gpu", random_state=0)
    assert W32.dtype == np.float32 and np.abs(W32 - want).max() < 1e-4 * np.abs(want).max()


@pytest.mark.skipif(__import__("trustlab._backend", fromlist=["x"]).gpu_available(), reason="a GPU is present")
def test_gpu_backend_unavailable_is_explained():
    with pytest.raises(GPUUnavailableError, match="backend='cpu'"):
        privatize(np.ones((3, 4)), epsilon=1.0, m=2, backend="gpu")


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,match", [
    ({"epsilon": 0}, "epsilon"), ({"epsilon": -1}, "epsilon"), ({"epsilon": float("nan")}, "epsilon"),
    ({"epsilon": 1, "delta": 0}, "delta"), ({"epsilon": 1, "delta": 1}, "delta"),
    ({"epsilon": 1, "beta": 0}, "beta"), ({"epsilon": 1, "beta": 1.0}, "beta"),
    ({"epsilon": 1, "beta": 0.2}, "exceeds the input dimension"),
    ({"epsilon": 1, "m": 301}, "exceeds the input dimension"),
    ({"epsilon": 1, "mechanism": "laplace"}, "mechanism"),
    ({"epsilon": 1, "backend": "tpu"}, "backend"),
    ({"epsilon": 1, "mechanism": "m1", "m": 20}, "m must be None"),
    ({"epsilon": 1, "vocab": np.ones((3, 300))}, "'m1' only"),
    ({"epsilon": 1, "mechanism": "m1", "vocab": np.ones((3, 299))}, "dimension"),
    ({"epsilon": 1, "mechanism": "m1", "vocab": np.full((3, 300), np.nan)}, "NaN"),
])
def test_bad_parameters(kwargs, match):
    X = np.ones((5, 300))
    with pytest.raises(ValueError, match=match):
        privatize(X, **kwargs)


def test_bad_vectors():
    X = np.ones((5, 10))
    X[2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        privatize(X, epsilon=1, m=3)
    X[2, 3] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        privatize(X, epsilon=1, m=3)
    with pytest.raises(ValueError, match="2D"):
        privatize(np.ones(10), epsilon=1)
    with pytest.raises(TypeError, match="epsilon"):
        privatize(np.ones((2, 10)), epsilon="big")


def test_m_above_d_override():
    W, rec = privatize(np.ones((4, 10)), epsilon=1, m=12, allow_m_above_d=True, random_state=0)
    assert W.shape == (4, 12) and rec.calibration == "explicit"
