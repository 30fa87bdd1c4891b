"""Record the exact pricing calls of one ``partition`` run (branch and price's
``price_start`` / ``price_resume``) for the pricing benchmark (bench/pricing_profile.py).

Usage: PYTHONPATH=. python bench/pricing_capture.py FAMILY N SEED TIME_LIMIT OUT.pkl

Every exact pricing search is stored as a dict ``W, pi, k, lb, nodes, complete``
(``nodes``: the search nodes the run spent on it, ``complete``: whether it finished).
"""
from __future__ import annotations

import pickle
import sys
import time

import numpy as np

import trustlab
from trustlab.solvers import colgen
from trustlab.solvers.synthetic import make_instance


def main() -> None:
    fam, n, seed, limit, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    W = make_instance(fam, n, random_state=seed)
    rec: list[dict] = []
    start0, resume0 = colgen.price_start, colgen.price_resume
    ids: dict[int, int] = {}

    def start(Wc, pi, k):
        st = start0(Wc, pi, k)
        ids[id(st[0])] = len(rec)
        rec.append(dict(W=np.array(Wc), pi=np.array(pi), k=int(k), lb=None, nodes=0, complete=False))
        return st

    def resume(st, lb, cap):
        nodes, done = resume0(st, lb, cap)
        r = rec[ids[id(st[0])]]
        r["lb"] = float(lb)
        r["nodes"] += int(nodes)
        r["complete"] = bool(done)
        return nodes, done

    colgen.price_start, colgen.price_resume = start, resume
    t = time.perf_counter()
    res = trustlab.partition(W, method="auto", time_limit=limit, random_state=0)
    dt = time.perf_counter() - t
    with open(out, "wb") as f:
        pickle.dump(rec, f)
    big = sorted(rec, key=lambda r: -r["nodes"])[:5]
    print(fam, n, seed, res.status, res.objective, res.bound,
          f"{dt:.1f}s", len(rec), "calls; top nodes", [(r["nodes"], r["complete"]) for r in big])


if __name__ == "__main__":
    main()
