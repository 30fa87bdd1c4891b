"""Old vs new exact pricing on recorded calls (from bench/pricing_capture.py).

Usage: PYTHONPATH=. python bench/pricing_profile.py OLD_KERNEL.py CAPTURE.pkl [...] [--cap NODES]

``OLD_KERNEL.py`` is a copy of another ``trustlab/kernels/cpp_pricing.py`` (e.g.
``git show main:trustlab/kernels/cpp_pricing.py > /tmp/old_pricing.py``); it is run
against this checkout's kernel on every distinct recorded call. Prints nodes, CPU
seconds (``time.process_time``: the machine is shared), whether the search finished,
and whether both returned the same top-k values.
"""
from __future__ import annotations

import importlib
import os
import pickle
import sys
import time

import numpy as np

import trustlab.kernels.cpp_pricing as new


def load(path: str):
    """Import the file as a top-level module (by name, so Numba can cache it)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    return importlib.import_module(os.path.splitext(os.path.basename(path))[0])


def run(mod, W, pi, k, lb, cap):
    st = mod.price_start(W, pi, k)
    t = time.process_time()
    nodes, done = mod.price_resume(st, lb, cap)
    return st[5][: st[7][0]].copy(), int(nodes), bool(done), time.process_time() - t


def main() -> None:
    args = sys.argv[1:]
    cap = 0
    if "--cap" in args:
        i = args.index("--cap")
        cap = int(float(args[i + 1]))
        del args[i:i + 2]
    old = load(args[0])
    tiny = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 2.0], [-1.0, 2.0, 0.0]])
    for mod in (old, new):  # compile outside the timings
        run(mod, tiny, np.ones(3), 2, 0.0, 0)
    print(f"load {os.getloadavg()[0]:.2f}")
    for path in args[1:]:
        recs = pickle.load(open(path, "rb"))
        recs = recs if isinstance(recs, list) else [recs]
        seen = set()
        for r in recs:
            key = (r["W"].tobytes(), r["pi"].tobytes(), r["k"])
            if key in seen:
                continue
            seen.add(key)
            lb = r.get("lb") or 0.0
            vo, no, do, to = run(old, r["W"], r["pi"], r["k"], lb, cap)
            vn, nn, dn, tn = run(new, r["W"], r["pi"], r["k"], lb, cap)
            same = do and dn and vo.size == vn.size and np.allclose(vo, vn, atol=1e-7)
            print(f"{os.path.basename(path)} n={r['W'].shape[0]} k={r['k']} lb={lb:g} | old {no:.3g} nodes "
                  f"{to:.1f}s {'done' if do else 'CAP'} | new {nn:.3g} nodes {tn:.1f}s {'done' if dn else 'CAP'} | "
                  f"nodes x{no / max(nn, 1):.1f} time x{to / max(tn, 1e-9):.1f} | "
                  f"{'same top-k' if same else 'n/a (capped)' if not (do and dn) else 'DIFFERENT'} "
                  f"(found {vn.size}) | load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
