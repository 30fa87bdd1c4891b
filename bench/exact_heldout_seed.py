"""Exact clique partitioning on one more held-out seed (bench/results/solvers_exact.md).

Usage: python bench/exact_heldout_seed.py N SEED OUT.jsonl FAMILY[,FAMILY...]

Runs ``partition(make_instance(family, N, random_state=SEED), method="auto", time_limit=60,
random_state=0)`` per family and appends one JSON row per instance to ``OUT.jsonl``
(objective, bound, status, wall seconds, phase and nodes of the largest component, load).
Point ``PYTHONPATH`` at another checkout to run an older version the same way.
"""
from __future__ import annotations

import json
import os
import sys
import time

from trustlab import partition
from trustlab.solvers.synthetic import make_instance


def main() -> None:
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    partition(make_instance("random", 12, random_state=0), method="auto", time_limit=5)  # compile first
    for fam in sys.argv[4].split(","):
        W = make_instance(fam, n, random_state=seed)
        load = os.getloadavg()[0]
        t = time.perf_counter()
        r = partition(W, method="auto", time_limit=60, random_state=0)
        dt = time.perf_counter() - t
        c = max(r.components, key=lambda c: c["size"])
        row = dict(name=f"{fam}-{n}-s{seed}", objective=r.objective, bound=r.bound, status=r.status,
                   seconds=round(dt, 1), phase=c.get("phase"), nodes=c.get("nodes"), load=round(load, 1))
        print(json.dumps(row), flush=True)
        with open(out, "a") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
