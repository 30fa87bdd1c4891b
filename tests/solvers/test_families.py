"""CP-Lib-like instance families (trustlab.solvers.synthetic): shapes, determinism, and
small instances solved by brute force agree with the exact and heuristic solvers."""
from __future__ import annotations

import numpy as np
import pytest

from tests.reference import brute_force_cpp
from trustlab.solvers import partition
from trustlab.solvers.synthetic import FAMILIES, make_instance

FAMS = sorted(FAMILIES)


@pytest.mark.parametrize("family", FAMS)
def test_family_shape_and_determinism(family):
    W = make_instance(family, 20, random_state=5)
    assert W.shape == (20, 20) and W.dtype == np.float64 and W.flags.c_contiguous
    assert np.array_equal(W, W.T) and np.all(np.diag(W) == 0)
    assert np.all(W == np.round(W))  # every family is integral
    assert np.array_equal(W, make_instance(family, 20, random_state=5))
    assert not np.array_equal(W, make_instance(family, 20, random_state=6))
    assert (W > 0).any() and (W < 0).any()


def test_family_specific_structure():
    W = make_instance("random", 40, random_state=0)
    assert W.min() >= -100 and W.max() <= 100 and np.abs(W).max() > 80
    W = make_instance("cluster_editing", 30, random_state=0)
    off = W[~np.eye(30, dtype=bool)]
    assert set(np.unique(off).tolist()) == {-1.0, 1.0}
    W = make_instance("mcf", 30, random_state=0)
    p = 30 - 12  # parts first, machines last
    assert np.all(W[:p, :p] == 0) and np.all(W[p:, p:] == 0)
    assert set(np.unique(W[:p, p:]).tolist()) == {-1.0, 1.0}
    assert np.all((W[:p, p:] > 0).any(axis=0)) and np.all((W[:p, p:] > 0).any(axis=1))
    W = make_instance("equicut", 40, random_state=0)
    zero = (W == 0)[np.triu_indices(40, 1)].mean()
    assert 0.15 < zero < 0.35 and np.abs(W).max() <= 9


def test_unknown_family_lists_valid_names():
    with pytest.raises(ValueError, match="cluster_editing"):
        make_instance("nope", 5)


@pytest.mark.parametrize("family", FAMS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_instances_match_brute_force(family, seed):
    n = 9 if seed == 0 else 7 + seed % 2
    W = make_instance(family, n, random_state=100 + seed)
    opt, _ = brute_force_cpp(W, ~np.eye(n, dtype=bool))
    r = partition(W, method="cpp", random_state=seed)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(opt)
    assert r.bound == pytest.approx(opt)
    h = partition(W, method="heuristic", random_state=seed)
    assert h.objective == pytest.approx(opt)


def test_literature_family_structure():
    iu = np.triu_indices(60, 1)
    off = make_instance("signed_gnp", 60, random_state=0, p=0.3)[iu]
    assert set(np.unique(off).tolist()) == {-1.0, 1.0} and 0.25 < (off > 0).mean() < 0.35
    # p = 0.5 is cluster editing with flip = 0.5: no planted partition left
    off = make_instance("signed_gnp", 60, random_state=0)[iu]
    assert 0.45 < (off > 0).mean() < 0.55
    off = make_instance("uniform", 60, random_state=0)[iu]  # rand100-5 / p500-5-* shape
    assert off.min() == -5 and off.max() == 5 and 0.06 < (off == 0).mean() < 0.13
    assert set(np.unique(off).tolist()) == set(range(-5, 6))
    off = make_instance("uniform", 60, random_state=0, max_weight=100, density=0.4)[iu]
    assert 0.55 < (off == 0).mean() < 0.65 and np.abs(off).max() > 90
    off = make_instance("gauss", 60, random_state=0)[iu]  # gauss500-100-* shape
    assert 45 < off.std() < 55 and abs(off.mean()) < 4 and np.all(off == np.round(off))
    W = make_instance("gauss", 30, random_state=0, sigma=2.0, mean=-1.0, integer=False, density=0.5)
    off = W[np.triu_indices(30, 1)]
    assert np.any(off != np.round(off)) and 0.4 < (off == 0).mean() < 0.6
    assert np.array_equal(W, W.T) and np.all(np.diag(W) == 0)


@pytest.mark.parametrize("family, kwargs", [("signed_gnp", dict(p=1.5)), ("uniform", dict(max_weight=0)),
                                            ("uniform", dict(density=-0.1)), ("gauss", dict(sigma=0.0))])
def test_literature_families_reject_bad_parameters(family, kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        make_instance(family, 10, random_state=0, **kwargs)


@pytest.mark.parametrize("seed", range(4))
def test_float_gaussian_small_instances_match_brute_force(seed):
    W = make_instance("gauss", 9, random_state=200 + seed, sigma=1.0, mean=-0.2, integer=False)
    opt, _ = brute_force_cpp(W, ~np.eye(9, dtype=bool))
    assert partition(W, method="heuristic", random_state=seed).objective == pytest.approx(opt)
    r = partition(W, method="cpp", random_state=seed)
    assert r.status == "optimal" and r.objective == pytest.approx(opt)
