"""Record, then compare, ``branch_and_price`` outcomes on a few hundred deterministic runs.

Used to check that a refactoring of :func:`trustlab.solvers.colgen.branch_and_price` (one
function -> the ``_BranchAndPrice`` class with named stages) changed no behaviour: labels,
objective, bound, status, root bound and every counter (``bp_nodes``, ``cg_iterations``,
``early_branched``, ``columns``) must be identical, run by run.

Runs are deterministic: fixed seeds, no deadline (so no clock-dependent caps), one pricing
thread, plus option variants (no warm master, no tabu pricing, no early branching, small
iteration and pricing-node caps that end in ``gave_up``).

    python bench/check_bnp_identical.py record /tmp/bnp_before.pkl    # on the old code
    python bench/check_bnp_identical.py compare /tmp/bnp_before.pkl   # on the new code
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time

import numpy as np


def instances():
    """(name, W, A, kwargs) for every run."""
    variants = [
        {},
        {"warm_master": False},
        {"tabu_pricing": False},
        {"early_branch": False},
        {"max_iterations": 5},
        {"short_price_nodes": 50, "max_price_nodes": 200},
        {"early_price_nodes": 1, "k_price": 5},
    ]
    runs = []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(5, 23))
        density = float(rng.choice([1.0, 1.0, 0.8, 0.5]))
        integral = bool(seed % 3 != 2)
        W = rng.normal(0, 1, (n, n)) * 5.0
        if integral:
            W = np.round(W)
        W = np.triu(W, 1)
        W = W + W.T
        A = np.triu(rng.random((n, n)) < density, 1)
        A = A | A.T
        warm = np.arange(n, dtype=np.int64)  # singletons, objective 0
        for v, kw in enumerate(variants):
            runs.append((f"seed{seed}-v{v}", W, A, dict(warm_labels=warm, warm_obj=0.0, integral=integral,
                                                        random_state=seed + v, **kw)))
    # disjoint odd cycles (+1 on the cycle, -1 elsewhere, plus noise): the set-partitioning LP
    # is fractional on an odd cycle, so these branch (Ryan-Foster) and exercise the search
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        lengths = rng.choice([5, 5, 7], size=int(rng.integers(2, 5)))
        n = int(lengths.sum())
        integral = bool(seed % 2 == 0)
        W = -np.ones((n, n))
        start = 0
        for ln in lengths:
            for i in range(ln):
                u, v = start + i, start + (i + 1) % ln
                W[u, v] = W[v, u] = 1.0
            start += ln
        W += rng.integers(-1, 2, (n, n)) * (rng.random((n, n)) < 0.1) if integral else rng.normal(0, 0.05, (n, n))
        W = np.triu(W, 1)
        W = W + W.T
        A = np.triu(rng.random((n, n)) < 0.9, 1)
        A = A | A.T
        warm = np.arange(n, dtype=np.int64)
        for v, kw in enumerate(variants):
            runs.append((f"cycles{seed}-v{v}", W, A, dict(warm_labels=warm, warm_obj=0.0, integral=integral,
                                                          random_state=seed + v, **kw)))
    return runs


def run_all():
    from trustlab.solvers.colgen import branch_and_price

    out = {}
    for name, W, A, kw in instances():
        r = branch_and_price(W, A, threads=1, deadline=None, **kw)
        out[name] = {k: (np.asarray(v).tolist() if k == "labels" else v) for k, v in r.items()}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["record", "compare"])
    ap.add_argument("path")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    got = run_all()
    secs = time.perf_counter() - t0
    statuses = {}
    for r in got.values():
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    nodes = sum(r["bp_nodes"] for r in got.values())
    print(f"{len(got)} runs in {secs:.1f} s; statuses {statuses}; {nodes} branch-and-price nodes in all; "
          f"{sum(r['bp_nodes'] > 1 for r in got.values())} runs branched")
    if args.mode == "record":
        with open(args.path, "wb") as f:
            pickle.dump(got, f)
        print(f"recorded to {args.path}")
        return 0
    with open(args.path, "rb") as f:
        want = pickle.load(f)
    diff = [k for k in want if want[k] != got.get(k)]
    missing = set(want) ^ set(got)
    if diff or missing:
        for k in diff[:10]:
            print("DIFFERENT", k, {f: (want[k][f], got[k].get(f)) for f in want[k] if want[k][f] != got[k].get(f)})
        print(f"{len(diff)} of {len(want)} runs differ; {len(missing)} missing")
        return 1
    print(f"identical: {len(want)} of {len(want)} runs (labels, objective, bound, status, root_bound, "
          "bp_nodes, cg_iterations, early_branched, columns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
