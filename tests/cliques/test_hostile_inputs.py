"""Hostile graphs for maximal_cliques: a declared size that cannot fit is refused
before anything is allocated (bench/results/hostile_inputs.md)."""
import numpy as np
import pytest
import scipy.sparse as sp

import trustlab
import trustlab._validation as validation


@pytest.fixture()
def small_machine(monkeypatch):
    monkeypatch.setattr(validation, "physical_memory", lambda: 2**30)  # 1 GiB


def test_one_edge_to_a_huge_node_id_is_refused(small_machine):
    # node ids index the nodes: "0 2000000000" means 2e9 nodes (~90 GiB of arrays)
    with pytest.raises(ValueError, match=r"2,000,000,001 nodes.*relabel the nodes"):
        trustlab.maximal_cliques(np.array([[0, 2_000_000_000]]))
    with pytest.raises(ValueError, match="2,000,000,001 nodes"):
        trustlab.count_maximal_cliques(np.array([[0, 2_000_000_000]]))


def test_huge_sparse_adjacency_is_refused(small_machine):
    A = sp.coo_matrix(([1.0], ([0], [1])), shape=(10**9, 10**9))
    with pytest.raises(ValueError, match="1,000,000,000 nodes"):
        trustlab.maximal_cliques(A)


def test_sizes_that_fit_still_run(small_machine):
    assert len(trustlab.maximal_cliques(np.array([[0, 1000]]), min_size=2)) == 1
