"""The one CPP objective (dense kernel + edge-list form) and the one gap formula, against
a plain double loop over the pairs."""
from __future__ import annotations

import numpy as np
import pytest

from trustlab.kernels.cpp_heuristic import objective
from trustlab.solvers._problem import as_problem, pair_objective, relative_gap


def _loop_objective(W, labels):
    n = W.shape[0]
    return sum(W[i, j] for i in range(n) for j in range(i + 1, n) if labels[i] == labels[j])


@pytest.mark.parametrize("seed", range(5))
def test_dense_and_edge_list_objectives_equal_the_double_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    W = rng.normal(size=(n, n))
    W = np.triu(W, 1) + np.triu(W, 1).T
    labels = rng.integers(0, max(1, n // 3), n).astype(np.int64)
    ref = _loop_objective(W, labels)
    assert objective(W, labels) == pytest.approx(ref, abs=1e-9)
    r, c = np.triu_indices(n, 1)
    assert pair_objective(labels, r, c, W[r, c]) == pytest.approx(ref, abs=1e-9)
    # both forms through the solvers' Problem (dense matrix, and a sparse matrix of the
    # same weights: every pair an edge)
    assert as_problem(W).objective(labels) == pytest.approx(ref, abs=1e-9)
    import scipy.sparse as sp

    P = as_problem(sp.coo_matrix(W))
    assert not P.complete
    assert P.objective(labels) == pytest.approx(ref, abs=1e-9)


def test_relative_gap():
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(8.0, 10.0) == pytest.approx(0.2)
    assert relative_gap(-10.0, -8.0) == pytest.approx(0.2)  # |bound| < |objective|: divide by 10
    assert relative_gap(10.0, 8.0) == 0.0  # an objective above the bound is clipped, not negative
