"""The paper's qualitative results on the bundled word2vec subset, and the bounds."""
import numpy as np
import pytest

from trustlab.privacy import distance_bound, erm_excess_bound, inner_product_bound, noise_radius_bound, privatize
from trustlab.privacy.evaluation import evaluate, load_embeddings_subset, summarize


@pytest.fixture(scope="module")
def pair_results():
    return evaluate(epsilons=(1, 2, 5), betas=(0.5, 0.6, 0.7, 0.9), runs=2, svm=False, random_state=2)


def _mean(res, exp, mech, eps, beta=None):
    return next(r["mean"] for r in res["pairs"] if r["experiment"] == exp and r["mechanism"] == mech
                and r["epsilon"] == eps and r["beta"] == beta)


@pytest.mark.parametrize("eps", [1.0, 2.0, 5.0])
def test_m2_beats_m1_on_distances_and_gap_widens(pair_results, eps):
    m1 = _mean(pair_results, "distance", "m1", eps)
    m2 = [_mean(pair_results, "distance", "m2", eps, b) for b in (0.5, 0.6, 0.7, 0.9)]
    assert all(v < m1 for v in m2)
    assert all(a > b for a, b in zip(m2, m2[1:]))  # gap to M1 widens as beta grows


@pytest.mark.parametrize("eps", [1.0, 2.0, 5.0])
def test_m2_beats_m1_on_inner_products_and_gap_widens(pair_results, eps):
    # Expected noise-noise error ratio M2/M1 ~ (m/d)^1.5 (1+beta)^2: 0.99 at beta=0.5 (parity),
    # 0.66 at 0.6, 0.47 at 0.7, 0.22 at 0.9 -- so M2 must win from beta = 0.6 on.
    m1 = _mean(pair_results, "inner_product", "m1", eps)
    m2 = [_mean(pair_results, "inner_product", "m2", eps, b) for b in (0.6, 0.7, 0.9)]
    assert all(v < m1 for v in m2)
    assert all(a > b for a, b in zip(m2, m2[1:]))
    assert _mean(pair_results, "inner_product", "m2", eps, 0.5) < 1.15 * m1


def test_measured_errors_below_closed_form_bounds(pair_results):
    for r in pair_results["pairs"]:
        if r["mechanism"] == "m2":
            assert r["max"] <= r["bound"]
    tau = pair_results["config"]["tau"]
    assert distance_bound(tau, 54, 200, 1.0, 0.9) == pytest.approx(2 * 0.9 * tau + 4 * 54 * np.log(2 * 200 * 54 / 1e-6))
    assert inner_product_bound(tau, 54, 200, 1.0, 0.9) > distance_bound(tau, 54, 200, 1.0, 0.9)
    assert erm_excess_bound(tau, 54, 200, 10.0, 0.9, theta_norm=0) == 0


def test_claim6_noise_radius_bound_holds():
    W, rec = privatize(np.zeros((5000, 300)), epsilon=2.0, beta=0.9, random_state=0)
    assert np.linalg.norm(W, axis=1).max() <= noise_radius_bound(rec.m, 2.0, 0.9, gamma=1e-3)
    with pytest.raises(ValueError, match="gamma"):
        noise_radius_bound(10, 1.0, 0.5, gamma=0)


def test_svm_m2_at_least_m1_at_eps10_beta09():
    res = evaluate(epsilons=(10,), betas=(0.9,), runs=1, svm_runs=5, svm_max_per_class=700, random_state=1)
    s = summarize(res)
    assert s["svm_m2_ge_m1"], s["svm_accuracy"]
    assert res["svm_baseline"]["accuracy"] > 0.85  # the non-private words are separable


def test_loader_and_bad_input(tmp_path):
    d = load_embeddings_subset()
    assert d["vectors"].shape == (2200, 300) and set(np.unique(d["label"])) == {-1, 0, 1}
    np.savez(tmp_path / "e.npz", vectors=d["vectors"][:300], words=np.array(d["words"][:300]))
    d2 = load_embeddings_subset(tmp_path / "e.npz", n_pairs=50)
    assert len(d2["pair_a"]) == 50 and (d2["label"] == -1).sum() == 200
    with pytest.raises(FileNotFoundError):
        load_embeddings_subset(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="epsilon"):
        evaluate(epsilons=(0,), svm=False)
