"""End-to-end check of the exact solver on one instance (used to compare pricing
kernels: run it once with ``PYTHONPATH`` on each checkout).

Usage: python bench/pricing_e2e.py FAMILY N SEED [TIME_LIMIT]   (synthetic family)
       python bench/pricing_e2e.py cplib PATH - [TIME_LIMIT]      (a CP-Lib file)

Prints one JSON line: objective, bound, status, seconds and the 1-minute load average
before and after (the machine is shared; timings are only comparable at similar load).
A tiny instance is solved first so that Numba compilation is not timed.
"""
from __future__ import annotations

import json
import os
import sys
import time

import trustlab
from trustlab.solvers.synthetic import make_instance


def main() -> None:
    fam, n, seed = sys.argv[1], sys.argv[2], sys.argv[3]
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
    if fam == "cplib":
        from trustlab.solvers.io import read_cplib
        W = read_cplib(n)
        W = W[0] if isinstance(W, tuple) else W
        name = os.path.basename(n)
    else:
        W = make_instance(fam, int(n), random_state=int(seed))
        name = f"{fam}-{n}-{seed}"
    trustlab.partition(make_instance("random", 12, random_state=0), method="auto", time_limit=10, random_state=0)
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    r = trustlab.partition(W, method="auto", time_limit=limit, random_state=0)
    dt = time.perf_counter() - t
    print(json.dumps(dict(instance=name, code=trustlab.__file__.split("/trustlab/")[0], objective=float(r.objective),
                          bound=float(r.bound), status=r.status, seconds=round(dt, 1),
                          load=[round(load0, 2), round(os.getloadavg()[0], 2)])), flush=True)


if __name__ == "__main__":
    main()
