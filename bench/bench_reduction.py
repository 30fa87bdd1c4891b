"""Exact data reduction before the exact solve (issue 27, item 3): before/after.

Two parts, each printed as a markdown table:

* ``dense``: CP-Lib-like dense cluster-editing instances (``make_instance(family, n,
  random_state=seed)``): what the reduction does to them (nodes after, merges,
  forbidden pairs, seconds) and, with ``--solve``, ``partition(W, method="auto")`` with
  its default time limit, ``reduce=False`` then ``reduce=True``.
* ``er``: ``trustlab.er.resolve`` with every default on real files (``jedai_cora``
  from ``../shared/data/er``, the bundled ``patent``), the solver's ``reduce`` off
  then on (``solver_options``): multi-record components, how many proven, the worst
  gap, the largest unproven ones, seconds. The kernels are compiled by a warm-up call
  first (a cold Numba cache is a separate issue, item 6).

Usage::

    python bench/bench_reduction.py dense --sizes 50,60,70,80 --families signed_gnp,cluster_editing [--solve]
    python bench/bench_reduction.py er --datasets cora,patent
"""
from __future__ import annotations

import argparse
import os
import time

from trustlab.solvers import partition
from trustlab.solvers.reduction import reduce_component
from trustlab.solvers.synthetic import make_instance

CORA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "er", "jedai_cora", "cora.csv")


def _warm() -> None:
    partition(make_instance("random", 30, random_state=0), method="auto", time_limit=30, random_state=0)


def dense(families, sizes, seed, solve) -> None:
    head = "| instance | nodes after | merges (both / single / similar / clique) | forbidden | reduction s |"
    if solve:
        head += " reduce=False: status, objective / bound, s | reduce=True: status, objective / bound, s |"
    print(head)
    print("|---|---|---|---|---|" + ("---|---|" if solve else ""))
    for fam in families:
        for n in sizes:
            W = make_instance(fam, n, random_state=seed)
            t = time.perf_counter()
            red = reduce_component(W, seed=0)
            s = red.stats
            row = (f"| {fam}-{n}-s{seed} | {s['nodes_after']} | {s['heavy_edge_both']} / {s['heavy_edge_single']} / "
                   f"{s['similar_neighbourhood']} / {s['almost_clique']} | {s['forbidden']} | "
                   f"{time.perf_counter() - t:.2f} |")
            if solve:
                for flag in (False, True):
                    t = time.perf_counter()
                    r = partition(W, method="auto", random_state=0, reduce=flag)
                    row += f" {r.status}, {r.objective:g} / {r.bound:g}, {time.perf_counter() - t:.1f} |"
            print(row, flush=True)


def _records(name):
    import pandas as pd

    if name == "cora":
        df = pd.read_csv(CORA, sep="|", dtype=str, keep_default_na=False)
        return df.loc[:, [c for c in df.columns if not c.startswith("Unnamed")]], "Entity Id"
    from trustlab.datasets import load_er_dataset

    ds = load_er_dataset(name)
    return ds.records, ds.id_col


def er(datasets) -> None:
    from trustlab.er import resolve

    print("| data | reduce | multi-record components | proven | worst gap | largest unproven | objective | s |")
    print("|---|---|---|---|---|---|---|---|")
    for name in datasets:
        df, id_col = _records(name)
        for flag in (False, True):
            t = time.perf_counter()
            res = resolve(df, id_col=id_col, solver_options={"reduce": flag})
            s = res.summary()
            print(f"| {name} | {flag} | {s['n_components_multi']} | {s['n_components_proven']} | "
                  f"{s['max_gap']:.4f} | {s['unproven_component_sizes'][:5]} | {s['objective']:.2f} | "
                  f"{time.perf_counter() - t:.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["dense", "er"])
    ap.add_argument("--families", default="signed_gnp,cluster_editing")
    ap.add_argument("--sizes", default="50,60,70,80")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--solve", action="store_true")
    ap.add_argument("--datasets", default="cora,patent")
    a = ap.parse_args()
    _warm()
    if a.part == "dense":
        dense(a.families.split(","), [int(x) for x in a.sizes.split(",")], a.seed, a.solve)
    else:
        er(a.datasets.split(","))


if __name__ == "__main__":
    main()
