"""Exact data reduction before the exact solve (issue 27, item 3): before/after.

Two parts, each printed as a markdown table:

* ``dense``: CP-Lib-like dense cluster-editing instances (``make_instance(family, n,
  random_state=seed)``): what the reduction does to them (nodes after, merges,
  forbidden pairs, seconds) and, with ``--solve``, ``partition(W, method="auto")`` with
  its default time limit, ``reduce=False`` then ``reduce=True``.
* ``er``: ``trustlab.er.resolve`` with every default on real files (``jedai_cora``
  from ``../shared/data/er``, the bundled ``patent``), the solver's ``reduce`` off
  then on (``solver_options``): multi-record components, how many proven, the worst
  gap, the largest unproven ones, seconds. One unmeasured ``resolve`` of each data set
  runs first, so that neither run pays for compiling kernels (a cold Numba cache is a
  separate issue, item 6).

* ``cplib``: CP-Lib's cluster-editing instances (``ClusEdit/ce50-20`` ... ``ce80-60``,
  unit weights, from github.com/MMSorensen/CP-Lib; not shipped here: ``--cplib-dir``
  points at a folder holding ``ClusEdit/*.txt`` and ``ClusEdit/Optimal/*_opt.txt``),
  solved by ``partition(W)`` with every default (its time limit ``60 + n / 10`` s): status,
  objective / bound, gap, seconds, the published optimum, and what the reductions did (the
  presolve's merges and forbids; branch and price's node reduction: super-nodes merged,
  pairs forbidden, nodes it closed). The before column of ``bench/results/reduction.md``
  is this mode run on the commit before the node reduction.

* ``fixings``: for the same ``ClusEdit`` instances, how far the induced-cost rules of
  :func:`~trustlab.solvers.reduction.bound_fixings` are from firing in their best case
  (target = the published optimum): the positive weight ``P``, the conflict-triple packing
  bound ``LB``, the loss it leaves unexplained, the largest ``icf`` / ``icp`` and the smallest
  slack over all pairs (a pair is fixed when its slack is negative), and what the
  optimum-preserving pair rules do.

* ``captured``: the same, but the weighted graph ``resolve`` hands to ``partition`` is
  captured once (``reduce`` on, which does not change the graph) and ``partition`` is
  run on it again with ``reduce=False`` and ``True``, with the same time limit as the
  pipeline's (or ``--time-limit``): per-component statuses, and the reduction of the
  largest components.

Usage::

    python bench/bench_reduction.py dense --sizes 50,60,70,80 --families signed_gnp,cluster_editing [--solve]
    python bench/bench_reduction.py er --datasets cora,patent
    python bench/bench_reduction.py captured --datasets cora [--time-limit 3,5,8,13.65]
    python bench/bench_reduction.py cplib --cplib-dir DIR [--instances ce50-40,ce60-60] [--jsonl OUT]
    python bench/bench_reduction.py fixings --cplib-dir DIR [--instances ...]
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
        resolve(df, id_col=id_col)  # warm-up: every kernel either run uses is compiled before the clocks start
        for flag in (False, True):
            t = time.perf_counter()
            res = resolve(df, id_col=id_col, solver_options={"reduce": flag})
            s = res.summary()
            print(f"| {name} | {flag} | {s['n_components_multi']} | {s['n_components_proven']} | "
                  f"{s['max_gap']:.4f} | {s['unproven_component_sizes'][:5]} | {s['objective']:.2f} | "
                  f"{time.perf_counter() - t:.1f} |", flush=True)


def _plan(seen, time_limits):
    """(captured call, time limit, reduce flag): every limit with reduce off then on,
    then on then off (so neither always runs first)."""
    out = []
    for call in seen:
        for k, tl in enumerate(time_limits or [None]):
            for flag in ((False, True) if k % 2 == 0 else (True, False)):
                out.append((call, tl, flag))
    return out


def captured(datasets, time_limit) -> None:
    import trustlab.er.cluster as er_cluster
    from trustlab.er import resolve

    seen = []

    def spy(W, **kw):
        seen.append((W, kw))
        return partition(W, **kw)

    real = er_cluster._get_partition
    er_cluster._get_partition = lambda: spy
    try:
        for name in datasets:
            df, id_col = _records(name)
            seen.clear()
            resolve(df, id_col=id_col)
            shown = False
            for (W, kw0), tl, flag in _plan(seen, time_limit):
                kw = dict(kw0)
                if tl is not None:
                    kw["time_limit"] = tl
                t = time.perf_counter()
                r = partition(W, **{**kw, "reduce": flag})
                sec = time.perf_counter() - t
                st: dict = {}
                for c in r.components:
                    st[c["status"]] = st.get(c["status"], 0) + 1
                unp = sorted((c["size"] for c in r.components if c["status"] != "optimal"), reverse=True)
                print(f"{name}: reduce={flag}, time_limit {kw['time_limit']:.2f} s: {r.status}, objective "
                      f"{r.objective:.4f}, bound {r.bound:.4f}, {sec:.1f} s; components {st}; unproven sizes "
                      f"{unp[:8]}", flush=True)
                if flag and not shown:  # the reduction of the largest components, once
                    shown = True
                    print("| size | status | seconds | nodes after reduction | parts >= 2 nodes | merges "
                          "(both / single / similar / clique) | forbidden |")
                    print("|---|---|---|---|---|---|---|")
                    for c in sorted(r.components, key=lambda c: -c["size"])[:15]:
                        d = c.get("reduction", {})
                        merges = " / ".join(str(d.get(k)) for k in ("heavy_edge_both", "heavy_edge_single",
                                                                     "similar_neighbourhood", "almost_clique"))
                        print(f"| {c['size']} | {c['status']} | {c['seconds']:.2f} | {d.get('nodes_after')} | "
                              f"{d.get('parts', [])} | {merges} | {d.get('forbidden')} |")
    finally:
        er_cluster._get_partition = real


def cplib(folder: str, instances, jsonl) -> None:
    import glob
    import json

    from trustlab.solvers.io import read_cplib, read_cplib_optimum

    files = sorted(glob.glob(os.path.join(folder, "ClusEdit", "ce*.txt")))
    if instances:
        files = [f for f in files if os.path.basename(f)[:-4] in instances]
    print("| instance | n | status | objective / bound | gap | s | optimum | presolve merges / forbids "
          "| node reduction: merged / forbidden / closed | B&P nodes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in files:
        name = os.path.basename(path)[:-4]
        W = read_cplib(path)
        optf = os.path.join(folder, "ClusEdit", "Optimal", f"{name}_opt.txt")
        opt = read_cplib_optimum(optf)[0] if os.path.exists(optf) else None
        t = time.perf_counter()
        r = partition(W, method="auto", random_state=0)
        sec = time.perf_counter() - t
        c = r.components[0] if r.components else {}
        red = c.get("reduction") or {}
        pre = (sum(red.get(k, 0) for k in ("heavy_edge_both", "heavy_edge_single", "similar_neighbourhood",
                                           "almost_clique")), red.get("forbidden", 0))
        node = tuple(c.get(k) for k in ("node_merged", "node_forbidden", "node_reduced_closed"))
        row = dict(instance=name, n=W.shape[0], status=r.status, objective=r.objective, bound=r.bound, gap=r.gap,
                   seconds=round(sec, 1), optimum=opt, presolve=pre, node=node, bp_nodes=c.get("bp_nodes"),
                   phase=c.get("phase"), load=os.getloadavg()[0])
        print(f"| {name} | {W.shape[0]} | {r.status} | {r.objective:g} / {r.bound:g} | {r.gap:.3f} | {sec:.1f} | "
              f"{'-' if opt is None else f'{opt:g}'} | {pre[0]} / {pre[1]} | "
              f"{' / '.join('-' if v is None else str(v) for v in node)} | {c.get('bp_nodes', '-')} |", flush=True)
        if jsonl:
            with open(jsonl, "a") as f:
                f.write(json.dumps(row) + "\n")


def fixings(folder: str, instances) -> None:
    import glob

    import numpy as np

    from trustlab.solvers.io import read_cplib, read_cplib_optimum
    from trustlab.solvers.reduction import conflict_packing, reduce_problem

    files = sorted(glob.glob(os.path.join(folder, "ClusEdit", "Optimal", "ce*_opt.txt")))
    print("| instance | n | optimum | P | packing LB | P - LB - optimum | max icf | max icp "
          "| min slack (separate / join) | pair rules: merges / forbids |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for optf in files:
        name = os.path.basename(optf)[: -len("_opt.txt")]
        path = os.path.join(folder, "ClusEdit", f"{name}.txt")
        if (instances and name not in instances) or not os.path.exists(path):
            continue
        W = read_cplib(path)
        n = W.shape[0]
        A = ~np.eye(n, dtype=bool)
        opt = read_cplib_optimum(optf)[0]
        Wp = np.maximum(W, 0.0)
        P = float(np.triu(Wp, 1).sum())
        lb, L = conflict_packing(W, A)
        d = np.diag(L)
        rest = lb - d[:, None] - d[None, :] + L
        icf = Wp + np.minimum(Wp[:, None, :], Wp[None, :, :]).sum(2)
        Wu, Wv = W[:, None, :], W[None, :, :]
        t = np.where(((Wu > 0) & (Wv < 0)) | ((Wu < 0) & (Wv > 0)), np.minimum(np.abs(Wu), np.abs(Wv)), 0.0)
        idx = np.arange(n)
        t[idx, :, idx] = 0.0
        t[:, idx, idx] = 0.0
        icp = np.maximum(-W, 0.0) + t.sum(2)
        up = np.triu(A, 1)
        s1 = float((P - icf - rest)[up].min() - opt)
        s2 = float((P - icp - rest)[up].min() - opt)
        st = reduce_problem(W, A).stats
        merges = st["heavy_edge_both"] + st["heavy_edge_single"] + st["similar_neighbourhood"]
        print(f"| {name} | {n} | {opt:g} | {P:g} | {lb:g} | {P - lb - opt:g} | {icf[up].max():g} | "
              f"{icp[up].max():g} | {s1:g} / {s2:g} | {merges} / {st['forbidden']} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["dense", "er", "captured", "cplib", "fixings"])
    ap.add_argument("--cplib-dir", default=os.environ.get("CPLIB_DIR", ""),
                    help="folder holding ClusEdit/ (CP-Lib's cluster-editing instances)")
    ap.add_argument("--instances", default="", help="comma-separated names (default: every ClusEdit instance)")
    ap.add_argument("--jsonl", default="", help="append one JSON row per instance here")
    ap.add_argument("--families", default="signed_gnp,cluster_editing")
    ap.add_argument("--sizes", default="50,60,70,80")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--solve", action="store_true")
    ap.add_argument("--datasets", default="cora,patent")
    ap.add_argument("--time-limit", default=None, help="comma-separated seconds (default: the pipeline's)")
    a = ap.parse_args()
    _warm()
    if a.part == "dense":
        dense(a.families.split(","), [int(x) for x in a.sizes.split(",")], a.seed, a.solve)
    elif a.part == "er":
        er(a.datasets.split(","))
    elif a.part == "cplib":
        if not a.cplib_dir:
            raise SystemExit("cplib: give --cplib-dir (a folder with ClusEdit/), or set CPLIB_DIR")
        cplib(a.cplib_dir, [x for x in a.instances.split(",") if x], a.jsonl)
    elif a.part == "fixings":
        if not a.cplib_dir:
            raise SystemExit("fixings: give --cplib-dir (a folder with ClusEdit/), or set CPLIB_DIR")
        fixings(a.cplib_dir, [x for x in a.instances.split(",") if x])
    else:
        captured(a.datasets.split(","), [float(x) for x in a.time_limit.split(",")] if a.time_limit else None)


if __name__ == "__main__":
    main()
