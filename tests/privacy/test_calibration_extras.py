"""PrivEmb extras: the sparse JL projection (P3.6) and Proposition 7's β trade-off."""
from __future__ import annotations

import math

import numpy as np
import pytest

from trustlab.privacy import distance_bound
from trustlab.privacy.calibration import calibrate_m, choose_beta, jl_distortion, projection_matrix


def test_gaussian_projection_is_unchanged_by_the_option():
    rng = np.random.Generator(np.random.PCG64(5))
    ref = rng.standard_normal((20, 40)) / math.sqrt(20)
    np.testing.assert_array_equal(projection_matrix(20, 40, 5), ref)
    np.testing.assert_array_equal(projection_matrix(20, 40, 5, kind="gaussian"), ref)
    with pytest.raises(ValueError, match="density applies"):
        projection_matrix(20, 40, 5, density=0.5)


@pytest.mark.parametrize("density", [1 / 3, None, 0.05])
def test_sparse_projection_entries_and_moments(density):
    m, d = 60, 400
    rho = 1 / math.sqrt(d) if density is None else density
    P = projection_matrix(m, d, 3, kind="sparse", density=density)
    vals = np.unique(np.round(P * math.sqrt(rho * m), 12))
    assert set(vals.tolist()) <= {-1.0, 0.0, 1.0}
    nz = np.count_nonzero(P) / P.size
    assert abs(nz - rho) < 4 * math.sqrt(rho * (1 - rho) / P.size)
    # unit variance per entry times m: E||Φx||² = ||x||²
    assert np.mean(P**2) * m == pytest.approx(1.0, rel=4 * math.sqrt(2 / (rho * P.size)))
    assert projection_matrix(m, d, 3, kind="sparse", density=density).tobytes() == P.tobytes()


def _median_distortion(X, Y, kind, density, seeds=5):
    r = [jl_distortion(projection_matrix(100, 300, s, kind=kind, density=density), X, Y) for s in range(seeds)]
    return {k: float(np.median([q[k] for q in r])) for k in ("norm", "inner", "distance")}


def test_sparse_distortion_matches_dense_on_dense_data_and_not_on_one_hot():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((40, 300)), rng.standard_normal((40, 300))
    dense = _median_distortion(X, Y, "gaussian", None)
    for density in (1 / 3, None):
        sparse = _median_distortion(X, Y, "sparse", density)
        for k in dense:
            assert sparse[k] <= 1.25 * dense[k], (density, k, sparse, dense)
    # Li et al.'s caveat: very sparse Φ on very sparse inputs (one-hot rows) distorts far more
    E, F = np.eye(300)[:40], np.eye(300)[40:80]
    dense_one_hot = _median_distortion(E, F, "gaussian", None)["norm"]
    assert _median_distortion(E, F, "sparse", None)["norm"] > 2 * dense_one_hot
    assert _median_distortion(E, F, "sparse", 1 / 3)["norm"] <= 1.25 * dense_one_hot


def test_choose_beta_is_the_brute_force_minimiser_of_prop7():
    d, n, tau, delta = 300, 2200, 4.0, 1e-6
    for eps in (1.0, 10.0, 1e4, 1e7):
        c = choose_beta(d, n, eps, tau, delta)
        grid = [b / 100 for b in range(5, 100) if calibrate_m(d, delta, b / 100) <= d]
        vals = [distance_bound(tau, calibrate_m(d, delta, b), n, eps, b, delta) for b in grid]
        assert c.beta == pytest.approx(grid[int(np.argmin(vals))])
        assert c.bound == pytest.approx(min(vals))
        np.testing.assert_allclose(c.projection_term + c.noise_term, c.bounds)
        assert np.all(np.diff(c.projection_term) > 0) and np.all(np.diff(c.ms) <= 0)
    # the paper's regime (eps <= 10): the noise term dominates, so the largest beta wins
    assert choose_beta(d, n, 10.0, tau, delta).beta == 0.99
    # almost no noise: the projection term decides and a smaller beta wins
    assert choose_beta(d, n, 1e7, tau, delta).beta < 0.5
    assert choose_beta(d, n, 10.0, tau, delta, betas=[0.5, 0.7, 0.9]).beta == 0.9
    with pytest.raises(ValueError, match="m > d"):
        choose_beta(10, n, 10.0, tau, delta, betas=[0.5])


@pytest.mark.parametrize("projection", ["achlioptas", "very_sparse"])
def test_privatize_with_a_sparse_projection(projection, tmp_path):
    from trustlab.privacy import privatize, release_log_density
    from trustlab.privacy.calibration import PROJECTIONS
    from trustlab.privacy.io import privatize_file

    X = np.random.default_rng(0).standard_normal((30, 64))
    Wg, rg = privatize(X, epsilon=5, m=20, random_state=3)
    Ws, rs = privatize(X, epsilon=5, m=20, random_state=3, projection=projection)
    assert rg.projection == "gaussian" and rs.projection == projection and rs.phi_seed == rg.phi_seed
    Pg = projection_matrix(20, 64, rg.phi_seed)
    Ps = projection_matrix(20, 64, rs.phi_seed, **PROJECTIONS[projection])
    assert not np.allclose(Pg, Ps)
    # same noise key, different public Φ: the noise is identical, the projection is the sparse one
    np.testing.assert_allclose(Ws - X @ Ps.T, Wg - X @ Pg.T, atol=1e-9)
    # the exact density rebuilds the right Φ from the record
    assert release_log_density(Ws, X, rs).mean() > release_log_density(Ws, X, {**rs.to_dict(),
                                                                               "projection": "gaussian"}).mean()
    np.save(tmp_path / "x.npy", X)
    with pytest.warns(UserWarning, match="reproducible"):   # an integer seed on a file release
        info = privatize_file(tmp_path / "x.npy", tmp_path / "w.npy", epsilon=5, m=20, random_state=3,
                              projection=projection, dtype=np.float64)
    np.testing.assert_allclose(np.load(tmp_path / "w.npy"), Ws)
    assert info["projection"] == projection
    _, r1 = privatize(X, epsilon=5, mechanism="m1", random_state=3)
    assert r1.projection == "none"
