"""In-process maximal cliques from an edge array, conversion included: trustlab vs igraph.

Each tool starts from the same ``(m, 2)`` int64 NumPy edge array and ends with every
maximal clique in its own result type:

* trustlab: ``maximal_cliques(E)`` (validation, CSR conversion, degeneracy order,
  enumeration on ``numba.get_num_threads()`` threads, a ``CliqueResult`` of CSR arrays);
* igraph: ``g = igraph.Graph(n); g.add_edges(E); g.maximal_cliques()`` (a list of tuples).
  ``add_edges`` on the array was the fastest of the conversions tried
  (``Graph(n, edges=E)``, ``Graph(n, edges=E.tolist())``: 2-3x slower), so igraph gets it.

The runs alternate (trustlab, igraph, trustlab, ...) so load drift hits both; the best of
``--rounds`` is reported per tool, with the clique count checked equal. Wall seconds and
CPU seconds of the process (all threads: for trustlab's two threads the CPU ratio is the
one-core ratio, the conservative one on a busy machine) are both given. Families: the two
the target was set on (random geometric 20k, Barabási–Albert 50k) and three not tuned on
(Erdős–Rényi G(n, m) sparse, Holme–Kim power-law cluster, a stochastic block model).

With ``--count`` trustlab runs ``count_maximal_cliques(E)`` (the count only, nothing
stored) against the same igraph call (python-igraph exposes no count-only maximal-clique
function), so that row shows what a caller who needs only the number pays.

Run::

    PYTHONPATH=. python bench/bench_cliques_inprocess.py [--families rgg,ba,...] [--rounds 5] [--count]
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np


def _er(n, m, seed):
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n, size=(int(m * 1.05), 2))
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(np.sort(e, axis=1), axis=0)
    rng.shuffle(e)
    return e[:m]


def _nx_edges(make):
    def f():
        return np.array(make().edges(), dtype=np.int64).reshape(-1, 2)
    return f


def families():
    import networkx as nx

    return {
        "rgg_20k_0.02": _nx_edges(lambda: nx.random_geometric_graph(20_000, 0.02, seed=1)),
        "ba_50k_10": _nx_edges(lambda: nx.barabasi_albert_graph(50_000, 10, seed=2)),
        # not tuned on
        "er_200k_800k": lambda: _er(200_000, 800_000, 5),
        "holme_kim_40k_8_0.5": _nx_edges(lambda: nx.powerlaw_cluster_graph(40_000, 8, 0.5, seed=6)),
        "sbm_300x50_0.3_1e-4": _nx_edges(lambda: nx.stochastic_block_model(
            [50] * 300, np.where(np.eye(300, dtype=bool), 0.3, 1e-4).tolist(), seed=7, sparse=True)),
    }


def main() -> None:
    import igraph as ig

    from trustlab.cliques import count_maximal_cliques, maximal_cliques

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    fams = families()
    ap.add_argument("--families", default=",".join(fams))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", action="store_true", help="trustlab counts only (count_maximal_cliques)")
    a = ap.parse_args()
    run_tl = (lambda E: count_maximal_cliques(E)) if a.count else (lambda E: len(maximal_cliques(E)))
    import numba

    print(f"# {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"numba threads {numba.get_num_threads()}, igraph {ig.__version__}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}"
          + (", trustlab count only" if a.count else ""))
    print("| family | nodes | edges | maximal cliques | trustlab wall (s) | igraph wall (s) | igraph / trustlab wall "
          "| trustlab CPU (s) | igraph CPU (s) | igraph / trustlab CPU | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    run_tl(np.array([[0, 1], [1, 2], [2, 0], [2, 3]] * 20_000))  # compile / load every kernel used

    def run_ig(E, n):
        g = ig.Graph(n=n)
        g.add_edges(E)
        return g.maximal_cliques()

    for name in a.families.split(","):
        E = fams[name]()
        n = int(E.max()) + 1
        load = os.getloadavg()[0]
        tt, ti, ct, ci = [], [], [], []
        for _ in range(a.rounds):
            t, c = time.perf_counter(), time.process_time()
            res = run_tl(E)
            tt.append(time.perf_counter() - t)
            ct.append(time.process_time() - c)
            t, c = time.perf_counter(), time.process_time()
            out = run_ig(E, n)
            ti.append(time.perf_counter() - t)
            ci.append(time.process_time() - c)
            assert res == len(out), (name, res, len(out))
            del out
        print(f"| {name} | {n:,} | {len(E):,} | {res:,} | {min(tt):.3f} | {min(ti):.3f} | "
              f"**{min(ti) / min(tt):.1f}x** | {min(ct):.3f} | {min(ci):.3f} | {min(ci) / min(ct):.1f}x "
              f"| {load:.1f}-{os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
