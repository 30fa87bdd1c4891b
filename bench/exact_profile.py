"""Profiles of the exact CPP solver's stages (figures in bench/results/solvers_exact.md).

``bp FAMILY-N-SEED[,...] [seconds]``: branch and price alone (warm start from the heuristic),
with the master LP kept in HiGHS (``warm_master=True``) and re-solved from scratch by
``linprog`` (``False``); prints status, master iterations, columns and the time in the master
LP and in the two pricing stages.

``lp PATH|FAMILY-N-SEED METHOD [seconds]``: the cutting-plane phase alone (branch and price off,
MIP stubbed out), one line per LP round (rows, seconds, certificate).

``auto FAMILY-N-SEED[,...] [seconds]``: ``partition(W, method="auto", time_limit=seconds,
random_state=0)``; objective, bound, gap, status, phase and seconds per instance.

Run pinned to one core on a shared machine, e.g.
``taskset -c 1 .venv/bin/python bench/exact_profile.py bp random-40-1,equicut-40-1 60``.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from trustlab.solvers import colgen, cpp
from trustlab.solvers.heuristic import solve_heuristic
from trustlab.solvers.io import read_cplib
from trustlab.solvers.synthetic import make_instance


def _load(name):
    if name.endswith(".txt"):
        return read_cplib(name)
    fam, n, seed = name.rsplit("-", 2)
    return make_instance(fam, int(n), random_state=int(seed))


def _timed(acc, key, fn):
    def g(*a, **k):
        t = time.perf_counter()
        r = fn(*a, **k)
        c = acc.setdefault(key, [0, 0.0])
        c[0] += 1
        c[1] += time.perf_counter() - t
        return r
    return g


def bp(names, limit):
    for name in names:
        W = _load(name)
        n = W.shape[0]
        A = ~np.eye(n, dtype=bool)
        lab, val = solve_heuristic(W, A, rng=np.random.default_rng(0))
        for warm in (True, False):
            acc: dict = {}
            saved = colgen._lp, colgen.price_local, colgen.price_resume, colgen._WarmMaster.solve
            colgen._lp = _timed(acc, "master", colgen._lp)
            colgen._WarmMaster.solve = _timed(acc, "master", colgen._WarmMaster.solve)
            colgen.price_local = _timed(acc, "local pricing", colgen.price_local)
            colgen.price_resume = _timed(acc, "exact pricing (0.2 s slices)", colgen.price_resume)
            try:
                t = time.perf_counter()
                r = colgen.branch_and_price(W, A, warm_labels=lab, warm_obj=val, deadline=t + limit,
                                            integral=True, warm_master=warm)
                el = time.perf_counter() - t
            finally:
                colgen._lp, colgen.price_local, colgen.price_resume, colgen._WarmMaster.solve = saved
            parts = ", ".join(f"{k} {v[1]:.1f} s ({v[0]} calls)" for k, v in acc.items())
            print(f"{name} warm_master={warm}: {r['status']} objective {r['objective']:.0f} bound {r['bound']} "
                  f"nodes {r['bp_nodes']} iterations {r['cg_iterations']} columns {r['columns']} {el:.1f} s; "
                  f"{parts}; load {os.getloadavg()[0]:.2f}", flush=True)


def lp(name, method, limit):
    W = _load(name)
    n = W.shape[0]
    A = ~np.eye(n, dtype=bool)
    lab, val = solve_heuristic(W, A, rng=np.random.default_rng(0))
    orig = cpp._solve_lp
    t0 = time.perf_counter()

    def traced(w, Aub, nv, rem, method, lo=None, hi=None):
        t = time.perf_counter()
        r = orig(w, Aub, nv, rem, method, lo, hi)
        print(f"  rows {0 if Aub is None else Aub.shape[0]} {time.perf_counter() - t:.2f} s "
              f"certificate {None if r is None else r[1]} at {time.perf_counter() - t0:.1f} s", flush=True)
        return r

    cpp._solve_lp = traced
    cpp._mip_scip = lambda *a, **k: (None, None, False, False, 0)  # LP phase only
    r = cpp.solve_cpp(W, A, warm_labels=lab, warm_obj=val, integral=True, deadline=t0 + limit,
                      options=cpp.CutOptions(colgen=False, lp_method=method))
    print(f"{name} {method}: heuristic {val:.0f} bound {r['bound']:.0f} rounds {r['lp_rounds']} "
          f"{time.perf_counter() - t0:.1f} s load {os.getloadavg()[0]:.2f}")


def auto(names, limit):
    from trustlab.solvers import partition

    for name in names:
        r = partition(_load(name), method="auto", time_limit=limit, random_state=0)
        c = max(r.components, key=lambda c: c["size"]) if r.components else {}
        print(f"{name}: objective {r.objective:.0f} bound {r.bound:.0f} "
              f"gap {100 * (r.bound - r.objective) / max(abs(r.bound), 1):.1f} % {r.status} phase {c.get('phase')} "
              f"root {c.get('root_bound')} heuristic {c.get('heuristic_seconds', 0):.1f} s {r.seconds:.1f} s "
              f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":  # pragma: no cover
    a = sys.argv[1:]
    if a[0] in ("bp", "auto"):
        (bp if a[0] == "bp" else auto)(a[1].split(","), float(a[2]) if len(a) > 2 else 60.0)
    else:
        lp(a[1], a[2], float(a[3]) if len(a) > 3 else 60.0)
