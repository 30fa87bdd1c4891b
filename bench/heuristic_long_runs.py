"""The default 10 s heuristic against a long run of itself (issue 10: "the heuristic's value
against a long run (10 min) of itself").

For each instance: ``partition(W, method="heuristic", time_limit=10, random_state=0)``, then
``bench_solvers_families.long_run(W, SECONDS)`` (the same search, another seed, patience off).
Prints one JSON line per instance (value, seconds, 1-min load before / after).

    CPLIB_DIRS=DIR taskset -c 0 .venv/bin/python bench/heuristic_long_runs.py [SECONDS]

``rand100-100`` (Charon & Hudry, best known 24296) is read from ``CPLIB_DIRS`` (see
bench_solvers_families.py) and skipped when absent.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_solvers_families as B  # noqa: E402

from trustlab import partition  # noqa: E402

CASES = [("random", 100, 7), ("equicut", 100, 7), ("uniform", 100, 9001), ("gauss", 100, 9001),
         ("published", "rand100-100", None)]


def main() -> None:
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    for fam, n, seed in CASES:
        if fam == "published":
            got = B.published(n)
            if got is None:
                continue
            W, name = got[0], n
        else:
            W, name = B.instance(fam, n, seed), f"{fam}-{n}-s{seed * 1000 + n}"
        l0 = os.getloadavg()[0]
        h = partition(W, method="heuristic", time_limit=10, random_state=0)
        t = time.perf_counter()
        v = B.long_run(W, secs)
        el = round(time.perf_counter() - t, 1)
        load = [round(l0, 1), round(os.getloadavg()[0], 1)]
        print(json.dumps(dict(name=name, heuristic=h.objective, heuristic_s=round(h.seconds, 2), long=v, long_s=el,
                              load=load, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))), flush=True)


if __name__ == "__main__":
    main()
