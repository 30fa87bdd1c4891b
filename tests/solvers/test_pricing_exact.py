"""The exact pricing search (dynamic branching, refined bound) against enumeration of
all ``2^n`` node sets: the ``k`` best values with ``rc > lb``, forbidden pairs, and runs
resumed in slices equal to one uninterrupted run."""
from __future__ import annotations

import numpy as np
import pytest

from trustlab.kernels.cpp_pricing import price_resume, price_start, price_topk


def all_rc(W, pi):
    """rc of every nonempty subset (rows of ``M``)."""
    n = W.shape[0]
    codes = np.arange(1, 2**n, dtype=np.int64)
    M = ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)
    return 0.5 * np.einsum("si,ij,sj->s", M, W, M) - M @ pi, M.astype(bool)


def instance(rng, n, forbid=0.0, near_zero=False):
    W = np.round(rng.normal(0, 4, (n, n)))
    W = np.triu(W, 1)
    if forbid:
        big = 1.0 + np.abs(W).sum() * 2
        F = np.triu(rng.random((n, n)) < forbid, 1)
        W[F] = -big
    W = W + W.T
    if near_zero:
        # duals that leave only a few sets with a positive rc (the hard, late pricing calls)
        pi = 0.5 * np.maximum(W, 0).sum(axis=1) * rng.uniform(0.5, 1.0, n)
    else:
        pi = np.abs(rng.normal(0, 3, n))
    return W, pi


def check(W, pi, lb, k, rc, M):
    vals, masks, nf, nodes, complete = price_topk(W, pi, lb, k, 0)
    want = np.sort(rc[rc > lb + 1e-9])[::-1][:k]
    assert complete and nf == want.size
    np.testing.assert_allclose(vals[:nf], want, atol=1e-7)
    for q in range(nf):
        S = masks[q]
        idx = np.flatnonzero(S)
        assert idx.size > 0
        assert abs(W[np.ix_(idx, idx)].sum() / 2 - pi[idx].sum() - vals[q]) < 1e-7
    assert len({masks[q].tobytes() for q in range(nf)}) == nf
    return vals[:nf], masks[:nf]


@pytest.mark.parametrize("seed", range(24))
def test_pricing_top_k_equals_enumeration(seed):
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(6, 15))
    W, pi = instance(rng, n, forbid=0.15 if seed % 3 == 0 else 0.0, near_zero=seed % 2 == 1)
    rc, M = all_rc(W, pi)
    best = rc.max()
    for lb, k in ((0.0, 1), (0.0, 7), (0.0, 40), (2.5, 5), (-1e9, 3), (max(0.0, best - 1.0), 40)):
        check(W, pi, lb, k, rc, M)


@pytest.mark.parametrize("seed", range(6))
def test_pricing_resumed_in_slices_equals_one_run(seed):
    rng = np.random.default_rng(1300 + seed)
    n = 14
    W, pi = instance(rng, n, forbid=0.1 if seed % 2 else 0.0, near_zero=seed % 3 != 0)
    rc, M = all_rc(W, pi)
    for lb, k in ((0.0, 40), (0.0, 1), (1.0, 5)):
        vals, masks = check(W, pi, lb, k, rc, M)
        state = price_start(W, pi, k)
        total, done, calls = 0, False, 0
        while not done:
            nodes, done = price_resume(state, lb, 7)
            assert nodes <= 7
            total += nodes
            calls += 1
        assert calls > 1
        nf = int(state[7][0])
        np.testing.assert_array_equal(state[5][:nf], vals)
        np.testing.assert_array_equal(state[6][:nf], masks)
        *_, nodes_one, _ = price_topk(W, pi, lb, k, 0)
        assert total == nodes_one
