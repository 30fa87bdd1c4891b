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
