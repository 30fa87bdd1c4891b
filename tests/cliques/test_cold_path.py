"""Cold-cache paths of the clique engine give the kernels' results exactly.

On a cold Numba cache small graphs are enumerated by the pure-Python twin of the
kernels (:mod:`trustlab._cliques_py`), small edge files are read by the Python reader,
and small outputs are formatted in Python; edge arrays are converted by the NumPy sorts
until the counting-sort kernel is compiled. Every one of these must return the same
arrays (same cliques, same order) as the kernels, so results never depend on the
state of the cache.
"""
import json
import os
import subprocess
import sys
import warnings

import networkx as nx
import numpy as np
import pytest

import trustlab.kernels._jit as jit
from trustlab._cliques_py import TooBig, degeneracy_rank_py, forward_rows, maximal_cliques_py
from trustlab.cliques import (
    CliqueCountLimitError,
    CliqueOutputLimitError,
    _enumerate_cpu,
    count_maximal_cliques,
    maximal_cliques,
)
from trustlab.graph import _csr_numpy, as_csr_graph, csr_from_edges, read_edge_file
from trustlab.kernels.cliques_cpu import degeneracy_order, edges_to_csr, forward_adjacency


def _graphs():
    rng = np.random.default_rng(0)
    out = [nx.empty_graph(0), nx.empty_graph(5), nx.complete_graph(7), nx.path_graph(9)]
    for seed in range(60):
        n = int(rng.integers(1, 70))
        out.append(nx.gnp_random_graph(n, float(rng.uniform(0.0, 0.6)), seed=seed))
    for seed in range(4):
        out.append(nx.barabasi_albert_graph(300, 2 + seed, seed=seed))
        out.append(nx.powerlaw_cluster_graph(300, 3, 0.7, seed=seed))
        star = nx.star_graph(150)  # a hub in everyone's neighbourhood
        star.add_edges_from(nx.gnp_random_graph(151, 0.06, seed=seed).edges())
        out.append(star)
        out.append(nx.random_geometric_graph(200, 0.15, seed=seed))
    return out


GRAPHS = _graphs()


def test_python_twin_gives_the_kernels_arrays():
    checked = 0
    for G in GRAPHS:
        g = as_csr_graph(G)
        for k in (1, 2, 3, 5):
            try:
                py = maximal_cliques_py(g.indptr, g.indices, k)
            except TooBig:
                continue
            ip, ix = _enumerate_cpu(g, k)
            assert np.array_equal(py[0], ip) and np.array_equal(py[1], ix)
            assert py[0].dtype == ip.dtype and py[1].dtype == ix.dtype
            checked += 1
    assert checked >= 250


def test_python_twin_against_networkx():
    for G in GRAPHS[::5]:
        g = as_csr_graph(G)
        cp, cm = maximal_cliques_py(g.indptr, g.indices)
        got = {frozenset(g.nodes[cm[cp[k]:cp[k + 1]]].tolist()) for k in range(len(cp) - 1)}
        assert got == {frozenset(c) for c in nx.find_cliques(G)}


def test_python_peel_and_forward_rows_match_kernels():
    for G in GRAPHS[::3]:
        g = as_csr_graph(G)
        _, rank, _ = degeneracy_order(g.indptr, g.indices)
        assert np.array_equal(degeneracy_rank_py(g.indptr, g.indices), rank)
        fp, fx = forward_adjacency(g.indptr, g.indices, rank)
        fp2, fx2 = forward_rows(g.indptr, g.indices, rank)
        assert np.array_equal(fp, fp2) and np.array_equal(fx, fx2)


def test_python_twin_gives_up_past_its_budget():
    g = as_csr_graph(nx.gnp_random_graph(60, 0.7, seed=1))
    with pytest.raises(TooBig):
        maximal_cliques_py(g.indptr, g.indices, budget=1000)


@pytest.fixture
def cold(monkeypatch):
    """Every kernel looks uncompiled: the public calls take their cold paths."""
    monkeypatch.setattr(jit, "kernel_ready", lambda dispatcher: False)


@pytest.mark.parametrize("i", [5, 17, 40, 64, 66])
def test_public_calls_on_a_cold_cache_match_the_kernels(cold, i):
    g = as_csr_graph(GRAPHS[i])
    res = maximal_cliques(g, min_size=2)
    ip, ix = _enumerate_cpu(g, 2)
    assert np.array_equal(res.indptr, ip) and np.array_equal(res.indices, ix)
    assert count_maximal_cliques(g) == len(_enumerate_cpu(g, 1)[0]) - 1


def test_caps_on_the_cold_path_raise_as_the_kernels_do(cold):
    g = as_csr_graph(GRAPHS[66])
    n = len(maximal_cliques(g))
    assert n > 2
    with pytest.raises(CliqueOutputLimitError):
        maximal_cliques(g, max_cliques=1)
    with pytest.raises(CliqueOutputLimitError):
        maximal_cliques(g, max_output_bytes=16)
    with pytest.raises(CliqueCountLimitError):
        count_maximal_cliques(g, max_count=1)
    assert len(maximal_cliques(g, max_cliques=n)) == n


@pytest.mark.parametrize("seed", range(3))
def test_conversion_kernel_matches_numpy_sorts(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000))
    m = 30_000  # past the kernel's threshold
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    src[:50] = dst[:50]  # self-loops
    dst[50:100], src[50:100] = src[100:150], dst[100:150]  # reversed duplicates
    ip, ix, loops = edges_to_csr(src, dst, n)
    rp, rx, rloops = _csr_numpy(src, dst, n)
    assert np.array_equal(ip, rp) and np.array_equal(ix, rx) and loops == rloops
    with pytest.warns(UserWarning, match="self-loop"):
        g = csr_from_edges(src, dst, n)  # the kernel (compiled above)
    assert np.array_equal(g.indptr, rp) and np.array_equal(g.indices, rx) and g.n_self_loops == loops


def test_conversion_kernel_is_not_fed_out_of_range_ids():
    # the kernel would write out of bounds: such input takes the NumPy path as before
    src = np.arange(25_000) % 100
    dst = (np.arange(25_000) * 7 + 1) % 100
    dst[3] = 100  # id == n
    edges_to_csr(src[:1], dst[:1], 101)  # compiled: the kernel would be chosen
    g = csr_from_edges(src, dst, 100)
    rp, rx, _ = _csr_numpy(src, dst, 100)
    assert np.array_equal(g.indptr, rp) and np.array_equal(g.indices, rx)


_COLD_RUN = """
import sys
from trustlab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_cold_cli_compiles_no_clique_kernel_and_matches_the_kernels(tmp_path):
    rng = np.random.default_rng(3)
    e = rng.integers(0, 500, (3000, 2))
    f = tmp_path / "g.edges"
    np.savetxt(f, e, fmt="%d")
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    out = tmp_path / "cl.txt"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    p = subprocess.run([sys.executable, "-c", _COLD_RUN, "cliques", str(f), "-o", str(out), "--json", "-q"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    # nothing was compiled: no kernel of the clique engine reached the cache
    assert not [x.name for x in cache.rglob("*.nbi") if "cliques_cpu" in x.name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (self-loops, if the draw has any)
        g = read_edge_file(f)
    ip, ix = _enumerate_cpu(g, 1)  # the kernels
    labels = g.nodes.tolist()
    expect = "".join(" ".join(str(labels[i]) for i in ix[ip[k]:ip[k + 1]]) + "\n" for k in range(len(ip) - 1))
    assert out.read_text() == expect
    assert summary["n_maximal_cliques"] == len(ip) - 1
