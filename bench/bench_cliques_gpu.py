"""GPU maximal-clique kernel vs the CPU kernel (runs only on a real GPU).

Run:
    .venv/bin/python -m pytest bench/bench_cliques_gpu.py --benchmark-enable -p no:cacheprovider

Every benchmark is skipped when no real CUDA device is usable (and always under the CUDA
simulator, which is far too slow for these sizes). Families (as in bench_cliques.py):
G(n=100k, m=1M), random geometric (20k, r=0.02), Barabási–Albert (50k, 10),
powerlaw-cluster (50k, 15, 0.7) and dense G(300, 0.5). Peer: the CPU kernel,
``trustlab.maximal_cliques(csr_graph, backend="cpu")``, measured in the same run on the
same CSR input; target >= 10x the CPU kernel on the largest graphs. The GPU timing
includes the host-side degeneracy ordering, sub-problem construction, transfers and both
passes, i.e. the same work the CPU call does (CSR in, CSR out); ``test_gpu_public_api``
adds the public API's canonical member sort.
"""
from __future__ import annotations

import functools
import os

import networkx as nx
import numpy as np
import pytest

from trustlab._backend import cuda_simulator_enabled, gpu_available

_ROUNDS = int(os.environ.get("TRUSTLAB_BENCH_ROUNDS", "3"))


def _real_gpu() -> bool:
    return (not cuda_simulator_enabled()) and gpu_available("numba-cuda")


pytestmark = pytest.mark.skipif(not _real_gpu(), reason="needs a real CUDA device (numba.cuda)")


def _gnm(n, m, seed):
    rng = np.random.default_rng(seed)
    seen = np.zeros(0, np.int64)
    while seen.size < m:
        k = int(1.2 * (m - seen.size)) + 16
        u = rng.integers(0, n, k)
        v = rng.integers(0, n, k)
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        key = lo[lo != hi] * n + hi[lo != hi]
        seen = np.unique(np.concatenate([seen, key]))
    seen = rng.permutation(seen)[:m]
    return np.stack([seen // n, seen % n], axis=1)


def _rgg(n, r, seed):
    from scipy.spatial import cKDTree

    pts = np.random.default_rng(seed).random((n, 2))
    return np.asarray(sorted(cKDTree(pts).query_pairs(r)), dtype=np.int64).reshape(-1, 2)


def _nx_edges(G):
    return np.asarray(list(G.edges()), dtype=np.int64).reshape(-1, 2)


FAMILIES = {
    "gnm_100k_1M": lambda: (100_000, _gnm(100_000, 1_000_000, 0)),
    "rgg_20k_r0.02": lambda: (20_000, _rgg(20_000, 0.02, 0)),
    "ba_50k_10": lambda: (50_000, _nx_edges(nx.barabasi_albert_graph(50_000, 10, seed=0))),
    "plc_50k_15_0.7": lambda: (50_000, _nx_edges(nx.powerlaw_cluster_graph(50_000, 15, 0.7, seed=0))),
    "gnp_300_0.5": lambda: (300, _nx_edges(nx.gnp_random_graph(300, 0.5, seed=0))),
    # not tuned on (the in-process benchmark's held-out families)
    "gnm_200k_800k": lambda: (200_000, _gnm(200_000, 800_000, 5)),
    "sbm_300x50_0.3_1e-4": lambda: (15_000, _nx_edges(nx.stochastic_block_model(
        [50] * 300, np.where(np.eye(300, dtype=bool), 0.3, 1e-4).tolist(), seed=7, sparse=True))),
    "gnp_500_0.3": lambda: (500, _nx_edges(nx.gnp_random_graph(500, 0.3, seed=3))),
    # held out from the stop-37 choices (second level of splitting, its items-per-warp rule)
    "gnp_400_0.4": lambda: (400, _nx_edges(nx.gnp_random_graph(400, 0.4, seed=11))),
    "gnp_2000_0.05": lambda: (2000, _nx_edges(nx.gnp_random_graph(2000, 0.05, seed=12))),
}


@functools.lru_cache(maxsize=None)
def _graph(name):
    import scipy.sparse as sp

    n, e = FAMILIES[name]()
    A = sp.coo_matrix((np.ones(len(e), np.int8), (e[:, 0], e[:, 1])), shape=(n, n))
    A = (A + A.T).tocsr()
    A.sort_indices()
    return n, e, A.indptr.astype(np.int64), A.indices.astype(np.int32)


@pytest.fixture(scope="module", autouse=True)
def _warm_up():
    from trustlab.kernels.cliques_cuda import enumerate_maximal_cliques_cuda

    ip = np.array([0, 2, 4, 6])
    ix = np.array([1, 2, 0, 2, 0, 1], np.int32)
    enumerate_maximal_cliques_cuda(ip, ix, 3)  # JIT-compile the kernel outside the timing


@pytest.mark.parametrize("family", list(FAMILIES))
def test_gpu_kernel(benchmark, family):
    from trustlab.kernels.cliques_cuda import enumerate_maximal_cliques_cuda

    n, _, ip, ix = _graph(family)
    benchmark.group = family
    benchmark.extra_info["peer"] = "trustlab CPU kernel"
    cp, ci = benchmark.pedantic(enumerate_maximal_cliques_cuda, args=(ip, ix, n), rounds=_ROUNDS, iterations=1,
                                warmup_rounds=1)
    benchmark.extra_info["n_maximal_cliques"] = int(len(cp) - 1)
    _, _, info = enumerate_maximal_cliques_cuda(ip, ix, n, return_info=True)
    benchmark.extra_info.update({k: v for k, v in info.items() if isinstance(v, (int, float))})


# the kernel's design choices, measured against the default in the same run: one level of
# work splitting instead of two, and the stop-35 kernel (one level, reductions through
# shared memory and barriers instead of warp shuffles). Stop 37 also measured the second
# level from other |P1| sizes (24, 96) and the adjacency rows in shared memory: both lost
# (bench/results/gpu.md).
VARIANTS = {
    "lean": {"lean": True},
    "one_level": {"split2_min": None},
    "stop35": {"split2_min": None, "warp_ops": "shared"},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("family", ["gnp_300_0.5", "gnp_500_0.3", "gnp_400_0.4", "gnp_2000_0.05"])
def test_gpu_kernel_variant(benchmark, family, variant):
    from trustlab.kernels.cliques_cuda import enumerate_maximal_cliques_cuda

    n, _, ip, ix = _graph(family)
    kw = VARIANTS[variant]
    benchmark.group = family
    benchmark.extra_info["variant"] = variant
    cp, ci = benchmark.pedantic(enumerate_maximal_cliques_cuda, args=(ip, ix, n), kwargs=kw, rounds=_ROUNDS,
                                iterations=1, warmup_rounds=1)
    benchmark.extra_info["n_maximal_cliques"] = int(len(cp) - 1)
    _, _, info = enumerate_maximal_cliques_cuda(ip, ix, n, return_info=True, **kw)
    benchmark.extra_info.update({k: v for k, v in info.items() if isinstance(v, (int, float))})


def _csr_graph(family):
    from trustlab.graph import CSRGraph

    n, _, ip, ix = _graph(family)
    return CSRGraph(indptr=ip.astype(np.int32), indices=ix, nodes=np.arange(n, dtype=np.int64))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_cpu_kernel(benchmark, family):
    # the same CSR input as the GPU row (an edge list would add its conversion, which
    # is most of the CPU time on the sparse families: 1.28 of 1.44 s on G(100k, 1M))
    import trustlab

    g = _csr_graph(family)
    benchmark.group = family
    res = benchmark.pedantic(trustlab.maximal_cliques, args=(g,), kwargs={"backend": "cpu"},
                             rounds=_ROUNDS,
                             iterations=1, warmup_rounds=1)
    benchmark.extra_info["n_maximal_cliques"] = int(len(res))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_gpu_public_api(benchmark, family):
    # maximal_cliques(backend="gpu") on the same CSR input: the kernel plus the API's
    # canonical sort of every clique's members
    import trustlab

    g = _csr_graph(family)
    benchmark.group = family
    res = benchmark.pedantic(trustlab.maximal_cliques, args=(g,), kwargs={"backend": "gpu"},
                             rounds=_ROUNDS, iterations=1, warmup_rounds=1)
    benchmark.extra_info["n_maximal_cliques"] = int(len(res))


@pytest.mark.parametrize("family", ["gnp_300_0.5", "rgg_20k_r0.02"])
def test_gpu_agrees_with_cpu(family):
    """Same clique count (and same clique set on the dense graph) as the CPU kernel."""
    import trustlab
    from trustlab.kernels.cliques_cuda import enumerate_maximal_cliques_cuda

    n, e, ip, ix = _graph(family)
    cp, ci = enumerate_maximal_cliques_cuda(ip, ix, n)
    res = trustlab.maximal_cliques(e, backend="cpu")
    assert len(cp) - 1 == len(res)
