"""The ER kernels' NumPy twins (run while the kernels are cold) give the kernels' output.

On an empty Numba cache ``resolve`` used to compile the block-pair and small-component
kernels (~3 s of CPU) before doing milliseconds of work; the twins must return exactly
what the kernels return, so entities never depend on the state of the cache.
"""
import numpy as np
import pytest

import trustlab.kernels.er as K


def _blocks(rng, n_blocks, max_size):
    sizes = rng.integers(0, max_size + 3, n_blocks)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    members = rng.permutation(int(starts[-1]) * 3)[: starts[-1]].astype(np.int64)
    return members, starts


def _both(monkeypatch, fn, args_fn):
    res = []
    for ready in (True, False):  # the kernel, then the twin
        monkeypatch.setattr(K, "is_ready", lambda name, _r=ready: _r)
        args = args_fn()
        r = fn(*args)
        res.append((r, [a.copy() for a in args if isinstance(a, np.ndarray)]))
    return res


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_size", [1, 2, 5, 40])
def test_block_pairs_twin_is_identical(monkeypatch, seed, max_size):
    rng = np.random.default_rng(seed)
    members, starts = _blocks(rng, int(rng.integers(0, 60)), max_size)
    (c1, _), (c2, _) = _both(monkeypatch, K.block_pair_count, lambda: (starts, max_size))
    assert c1 == c2 == int(K.count_block_pairs(starts, np.int64(max_size)))

    def args():
        return members, starts, max_size, np.full(c1, -1, np.int64), np.full(c1, -1, np.int64)
    (_, a1), (_, a2) = _both(monkeypatch, K.block_pairs, args)
    assert all(np.array_equal(x, y) for x, y in zip(a1, a2))
    assert c1 == 0 or (a1[3] >= 0).all()


def test_block_pairs_twin_on_empty_and_single_blocks(monkeypatch):
    monkeypatch.setattr(K, "is_ready", lambda name: False)
    assert K.block_pair_count(np.array([0], np.int64), 5) == 0
    left, right = np.empty(0, np.int64), np.empty(0, np.int64)
    K.block_pairs(np.empty(0, np.int64), np.array([0], np.int64), 5, left, right)
    left, right = np.empty(1, np.int64), np.empty(1, np.int64)
    K.block_pairs(np.array([7, 9, 4], np.int64), np.array([0, 1, 1, 3], np.int64), 5, left, right)
    assert (left[0], right[0]) == (4, 9)


def _components(rng, sizes, integer):
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    nodes = rng.permutation(int(starts[-1]) + 5)[: starts[-1]].astype(np.int64)
    woff = np.concatenate([[0], np.cumsum(np.asarray(sizes) ** 2)[:-1]]).astype(np.int64)
    blocks = []
    for m in sizes:
        w = rng.integers(-3, 4, (m, m)).astype(float) if integer else rng.normal(0.2, 1.0, (m, m))
        w = np.triu(w, 1)
        w[np.triu(rng.random((m, m)) < 0.15, 1)] = -np.inf  # forbidden pairs
        w = w + w.T
        np.fill_diagonal(w, -np.inf)
        blocks.append(w.ravel())
    return nodes, starts, woff, np.concatenate(blocks) if blocks else np.empty(0)


@pytest.mark.parametrize("integer", [True, False])  # integer weights: many ties, first-best rule
@pytest.mark.parametrize("seed", range(4))
def test_small_components_twin_is_identical(monkeypatch, seed, integer):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, 40)
    nodes, starts, woff, wflat = _components(rng, sizes, integer)
    (_, a1), (_, a2) = _both(monkeypatch, K.small_component_labels,
                             lambda: (nodes, starts, woff, wflat, np.full(nodes.size, -1, np.int64)))
    assert np.array_equal(a1[4], a2[4]) and (a1[4] >= 0).all()


def test_small_components_all_forbidden_and_all_zero(monkeypatch):
    rng = np.random.default_rng(0)
    nodes, starts, woff, _ = _components(rng, [3, 4], True)
    for fill in (-np.inf, 0.0):
        wflat = np.full(9 + 16, fill)
        (_, a1), (_, a2) = _both(monkeypatch, K.small_component_labels,
                                 lambda: (nodes, starts, woff, wflat, np.full(nodes.size, -1, np.int64)))
        assert np.array_equal(a1[4], a2[4])


def test_restricted_growth_strings_count_set_partitions():
    for m, bell in [(1, 1), (2, 2), (3, 5), (4, 15), (5, 52), (6, 203), (7, 877)]:
        R = K._restricted_growth_strings(m)
        assert R.shape == (bell, m) and len({tuple(r) for r in R}) == bell
        assert [tuple(r) for r in R] == sorted(tuple(r) for r in R)  # lexicographic, as the kernel
