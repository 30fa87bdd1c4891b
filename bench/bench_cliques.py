"""Maximal-clique benchmarks: trustlab vs igraph and networkx, same run, same graphs.

Run (one family at a time keeps each run short):

    .venv/bin/python -m pytest bench/bench_cliques.py --benchmark-enable -p no:cacheprovider \
        -k gnm --benchmark-json=/tmp/cliques_gnm.json

Families: G(n=100k, m=1M), random geometric (20k, r=0.02),
Barabási–Albert (50k, 10), powerlaw-cluster (50k, 15, 0.7), dense G(300, 0.5).
Every graph is built once (fixed seeds) and handed to each tool in its native form
(trustlab: a prebuilt CSRGraph; igraph: an igraph.Graph; networkx: an nx.Graph), so the
timings are of the enumeration only.

* ``trustlab_count``   -- ``count_maximal_cliques`` (count only)
* ``trustlab_csr``     -- ``maximal_cliques`` (cliques materialised as CSR arrays)
* ``igraph``           -- ``Graph.maximal_cliques()``: igraph's C enumeration, returned as a
  Python list of tuples. igraph has no count-only call for maximal cliques (only
  ``maximal_cliques(file=...)``, which formats text); this is the call a user makes.
* ``networkx``         -- ``sum(1 for _ in nx.find_cliques(G))`` (a generator: count only,
  no list kept). One round only (it is slow).

``test_peak_rss`` measures, in a fresh subprocess, the RSS growth of ``maximal_cliques``
on the dense graph against the size of the CSR output.
"""
from __future__ import annotations

import functools
import json
import subprocess
import sys

import numpy as np
import pytest

nx = pytest.importorskip("networkx")

from trustlab.cliques import count_maximal_cliques, maximal_cliques  # noqa: E402
from trustlab.graph import as_csr_graph  # noqa: E402


def _gnm(n, m, seed):
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n, size=(int(m * 1.05), 2))
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(np.sort(e, axis=1), axis=0)
    rng.shuffle(e)
    return e[:m]


FAMILIES = {
    "gnm_100k_1M": lambda: _gnm(100_000, 1_000_000, 0),
    "rgg_20k_0.02": lambda: np.array(nx.random_geometric_graph(20_000, 0.02, seed=1).edges()),
    "ba_50k_10": lambda: np.array(nx.barabasi_albert_graph(50_000, 10, seed=2).edges()),
    "plc_50k_15_0.7": lambda: np.array(nx.powerlaw_cluster_graph(50_000, 15, 0.7, seed=3).edges()),
    "dense_300_0.5": lambda: np.array(nx.gnp_random_graph(300, 0.5, seed=4).edges()),
}


@functools.lru_cache(maxsize=None)
def edges(name):
    return FAMILIES[name]()


@functools.lru_cache(maxsize=None)
def csr(name):
    return as_csr_graph(edges(name))


@functools.lru_cache(maxsize=None)
def expected(name):
    return count_maximal_cliques(csr(name), backend="cpu")


@pytest.fixture(scope="module", autouse=True)
def _warm_jit():
    maximal_cliques([[0, 1], [1, 2]], backend="cpu")
    count_maximal_cliques([[0, 1], [1, 2]], backend="cpu")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_trustlab_count(benchmark, name):
    g = csr(name)
    benchmark.group = name
    benchmark.extra_info.update(n_nodes=g.n_nodes, n_edges=g.n_edges)
    n = benchmark.pedantic(count_maximal_cliques, args=(g,), kwargs={"backend": "cpu"},
                           rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info["n_maximal_cliques"] = n
    assert n == expected(name)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_trustlab_csr(benchmark, name):
    g = csr(name)
    benchmark.group = name
    res = benchmark.pedantic(maximal_cliques, args=(g,), kwargs={"backend": "cpu"},
                             rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info["csr_bytes"] = int(res.indptr.nbytes + res.indices.nbytes)
    assert len(res) == expected(name)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_igraph(benchmark, name):
    ig = pytest.importorskip("igraph")
    g = csr(name)
    G = ig.Graph(n=g.n_nodes, edges=edges(name))
    benchmark.group = name
    out = benchmark.pedantic(G.maximal_cliques, rounds=3, iterations=1)
    assert len(out) == expected(name)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_networkx(benchmark, name):
    G = nx.Graph()
    G.add_nodes_from(range(csr(name).n_nodes))
    G.add_edges_from(edges(name).tolist())
    benchmark.group = name
    n = benchmark.pedantic(lambda: sum(1 for _ in nx.find_cliques(G)), rounds=1, iterations=1)
    assert n == expected(name)


_RSS_SCRIPT = r"""
import json, resource, numpy as np, networkx as nx, psutil
from trustlab.cliques import maximal_cliques
from trustlab.graph import as_csr_graph
g = as_csr_graph(np.array(nx.gnp_random_graph(300, 0.5, seed=4).edges()))
maximal_cliques([[0, 1]])  # JIT / cache load
base = psutil.Process().memory_info().rss
res = maximal_cliques(g)
# VmHWM is this address space's RSS high-water mark; unlike ru_maxrss it is reset at
# exec, so it does not inherit the (large) pytest parent's peak through fork+exec.
peak = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"base": base, "peak": peak, "csr": int(res.indptr.nbytes + res.indices.nbytes),
                  "n": len(res)}))
"""


def test_peak_rss(benchmark):
    pytest.importorskip("psutil")
    benchmark.group = "memory"
    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout.strip().splitlines()[-1])
    growth = max(d["peak"] - d["base"], 0)
    benchmark.extra_info.update(d, growth=growth, ratio=growth / d["csr"])
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    print(f"\npeak RSS growth {growth / 2**20:.1f} MiB for a {d['csr'] / 2**20:.1f} MiB CSR output "
          f"({growth / d['csr']:.2f}x)")
    assert growth <= 2 * d["csr"]
