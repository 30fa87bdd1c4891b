"""Root bound of the cutting-plane phase with and without odd-wheel / |S| >= 2 2-partition cuts
(issue 10; figures in bench/results/solvers_exact.md).

Run: ``.venv/bin/python bench/exact_root_cuts.py random,equicut 40 1 [seconds]``. The MIP phase is
stubbed out and branch and price is off, so the printed ``root`` is the bound where the LP phase
stopped (settled, or at the time cap); the new families are separated from the first round
(``strong_after_settle=False``).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from trustlab.solvers import cpp
from trustlab.solvers.heuristic import solve_heuristic
from trustlab.solvers.synthetic import make_instance

CONFIGS = {"triangle+2part": dict(odd_wheels=False, two_partition_general=False),
           "+wheel+2part(S>=2)": dict(strong_after_settle=False)}


def main(fams, ns, seeds, limit=60.0):
    cpp._mip_scip = lambda *a, **k: (None, None, False, False, 0)  # LP phase only
    for fam in fams:
        for n in ns:
            for seed in seeds:
                W = make_instance(fam, n, random_state=seed)
                A = ~np.eye(n, dtype=bool)
                lab, val = solve_heuristic(W, A, rng=np.random.default_rng(0))
                for name, kw in CONFIGS.items():
                    t = time.perf_counter()
                    r = cpp.solve_cpp(W, A, warm_labels=lab, warm_obj=val, integral=True, deadline=t + limit,
                                      options=cpp.CutOptions(colgen=False, **kw))
                    print(f"{fam}-{n}-s{seed} {name}: heuristic {val:.0f} root {r['root_bound']:.0f} "
                          f"(+{100 * (r['root_bound'] - val) / abs(val):.1f} %) {r['status']} rounds {r['lp_rounds']} "
                          f"cuts {r['cuts_by_family']} {time.perf_counter() - t:.1f} s load {os.getloadavg()[0]:.1f}",
                          flush=True)


if __name__ == "__main__":  # pragma: no cover
    a = sys.argv[1:]
    main(a[0].split(","), [int(x) for x in a[1].split(",")], [int(x) for x in a[2].split(",")],
         float(a[3]) if len(a) > 3 else 60.0)
