"""Hostile inputs to partition (bench/results/hostile_inputs.md)."""
import numpy as np
import pytest
import scipy.sparse as sp

import trustlab
import trustlab._validation as validation


def test_huge_declared_sparse_matrix_is_refused(monkeypatch):
    monkeypatch.setattr(validation, "physical_memory", lambda: 2**30)  # 1 GiB
    A = sp.coo_matrix(([1.0, 1.0], ([0, 10**9 - 1], [10**9 - 1, 0])), shape=(10**9, 10**9))
    with pytest.raises(ValueError, match=r"1,000,000,000 nodes.*drop the isolated nodes"):
        trustlab.partition(A)


@pytest.mark.parametrize("data, shown", [
    (np.array([[0.0, 1.0], [2.0, 0.0]]), "W[0,1]=1 but W[1,0]=2"),
    ([(0, 1, 1.0), (1, 0, 2.0)], "has weights 1 and 2"),
])
def test_asymmetric_weights_message_shows_plain_numbers(data, shown):
    with pytest.raises(ValueError) as exc:
        trustlab.partition(data)
    assert shown in str(exc.value) and "np.float64" not in str(exc.value)


def test_str_and_nested_list_matrix_get_a_pointer():
    with pytest.raises(TypeError, match="got a str"):
        trustlab.partition("instance.txt")
    W = [[0.0, 1.0, -1.0, 2.0], [1.0, 0.0, 1.0, 1.0], [-1.0, 1.0, 0.0, 1.0], [2.0, 1.0, 1.0, 0.0]]
    with pytest.raises(ValueError, match=r"np\.asarray\(W\)"):
        trustlab.partition(W)
    assert len(trustlab.partition(np.asarray(W)).labels) == 4
