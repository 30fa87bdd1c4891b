"""The privacy guarantee itself (PrivEmb P3.1): release density ratios bounded by exp(ε d(x, x'))."""
from __future__ import annotations

import math

import numpy as np
import pytest

from trustlab.privacy import noise_log_density, privacy_loss, privatize, projection_matrix, release_log_density


@pytest.mark.parametrize("m,closed", [
    (1, lambda r, s: np.exp(-r / s) / (2 * s)),                     # Laplace
    (2, lambda r, s: np.exp(-r / s) / (2 * math.pi * s**2)),        # 2-D: ∫ e^{-r/s} 2πr dr = 2π s²
    (3, lambda r, s: np.exp(-r / s) / (8 * math.pi * s**3)),        # 3-D: ∫ e^{-r/s} 4πr² dr = 8π s³
])
def test_noise_density_matches_closed_forms(m, closed):
    rng = np.random.default_rng(m)
    Z = rng.standard_normal((50, m)) * 3
    s = 0.7
    np.testing.assert_allclose(np.exp(noise_log_density(Z, scale=s)), closed(np.linalg.norm(Z, axis=1), s),
                               rtol=1e-12)


def test_noise_density_integrates_to_one_radially():
    from scipy import integrate, special

    m, s = 7, 1.3
    area = 2 * math.pi ** (m / 2) / special.gamma(m / 2)
    f = lambda r: math.exp(noise_log_density(np.r_[r, np.zeros(m - 1)], scale=s)) * area * r ** (m - 1)  # noqa: E731
    total, _ = integrate.quad(f, 0, np.inf)
    assert total == pytest.approx(1.0, rel=1e-8)


@pytest.mark.parametrize("mechanism", ["privemb", "m1"])
def test_privacy_loss_never_exceeds_the_bound(mechanism):
    rng = np.random.default_rng(0)
    d = 10
    X = rng.standard_normal((2, d))
    kw = dict(beta=0.5, m=8) if mechanism == "privemb" else {}
    W, rec = privatize(np.vstack([X[0]] * 200), epsilon=2.0, mechanism=mechanism, random_state=1, **kw)
    phi = np.eye(d) if mechanism == "m1" else projection_matrix(rec.m, d, rec.phi_seed)
    for x, x2 in ((X[0], X[1]), (X[0], X[0] + 1e-3 * X[1])):
        # the released draws and adversarial outputs far along the line through Φx, Φx'
        far = phi @ x + np.outer([5.0, 50.0, -50.0], phi @ (x - x2))
        pl = privacy_loss(np.vstack([W, far]), x, x2, rec)
        if pl.guaranteed:
            assert np.abs(pl.loss).max() <= pl.bound * (1 + 1e-9)
        # the loss is exactly bounded by ||Φ(x-x')||/σ, and that bound is attained far along the line
        lim = pl.stretch * np.linalg.norm(x - x2) / rec.noise_scale
        assert np.abs(pl.loss).max() == pytest.approx(lim, rel=1e-6)
    # loss = difference of the two release log densities
    pl = privacy_loss(W, X[0], X[1], rec)
    np.testing.assert_allclose(pl.loss, release_log_density(W, X[0], rec) - release_log_density(W, X[1], rec),
                               atol=1e-9)


def _max_bin_log_ratio(a, b, width, min_count=200):
    """Largest |ln(P_a(bin) / P_b(bin))| minus 4 standard errors, over bins with enough counts."""
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    edges = np.arange(lo, hi + width, width)
    ca, _ = np.histogram(a, edges)
    cb, _ = np.histogram(b, edges)
    ok = (ca >= min_count) & (cb >= min_count)
    lr = np.abs(np.log(ca[ok] / a.size) - np.log(cb[ok] / b.size))
    se = np.sqrt(1 / ca[ok] + 1 / cb[ok])
    return float(np.max(lr - 4 * se)), float(np.max(lr))


def test_release_histograms_respect_the_bound_and_the_test_has_power():
    """A statistical test of the *sampler*: released outputs for neighbouring inputs, projected
    on the line through Φx and Φx', have bin probabilities within exp(ε d(x, x')) of each other;
    a release with 4x less noise than ε promises fails the same test."""
    d, m, n = 6, 3, 150_000
    eps, beta = 1.0, 0.5
    x = np.zeros(d)
    x2 = np.r_[1.0, np.zeros(d - 1)]
    X = np.vstack([np.tile(x, (n, 1)), np.tile(x2, (n, 1))])

    def projected(epsilon):
        W, rec = privatize(X, epsilon=epsilon, beta=beta, m=m, random_state=7, phi_seed=11)
        pl = privacy_loss(W[:1], x, x2, rec)
        u = projection_matrix(m, d, 11) @ (x2 - x)
        u /= np.linalg.norm(u)
        return W[:n] @ u, W[n:] @ u, pl

    a, b, pl = projected(eps)
    assert pl.guaranteed, pl.stretch  # phi_seed 11 stretches x2 - x by at most 1 + beta
    excess, raw = _max_bin_log_ratio(a, b, width=0.25)
    assert excess <= pl.bound
    # the test is not vacuous: the 1-D log-ratio reaches a good part of the bound in the tails
    assert raw >= 0.4 * pl.stretch * eps / (1 + beta)
    a, b, _ = projected(4 * eps)       # claims eps, releases with 4x less noise
    excess, _ = _max_bin_log_ratio(a, b, width=0.25)
    assert excess > pl.bound
