"""Which Numba kernels a CLI job compiles on its first run, and for how long.

Runs ``trustlab <job>`` (the jobs of ``bench_firstcall.py``) in a child process with a
new, empty ``NUMBA_CACHE_DIR``, cold and then warm, with ``numba.core.dispatcher.Dispatcher
.compile`` wrapped to time every call. A dispatcher compiles its callees inside its own
compile, so each function's *exclusive* seconds (its own minus its callees') are
reported, summed per function over its specialisations; a warm run's "compiles" are
loads from the cache. Wall seconds of a loaded machine; use it to see where a cold run's
extra time goes, not as a benchmark.

Run::

    PYTHONPATH=. python bench/trace_compiles.py [--jobs privatize,partition,...] [--top 15]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench_firstcall import _inputs  # noqa: E402

_CHILD = r"""
import json, os, runpy, sys, time
import numba.core.dispatcher as D
orig = D.Dispatcher.compile
stack, rec = [], []
def compile(self, sig):
    t = time.perf_counter()
    n0 = len(self.overloads)
    stack.append(0.0)
    try:
        return orig(self, sig)
    finally:
        dt = time.perf_counter() - t
        child = stack.pop()
        if stack:
            stack[-1] += dt
        if len(self.overloads) > n0:
            rec.append((dt - child, self.py_func.__module__ + "." + self.py_func.__qualname__, str(sig)))
D.Dispatcher.compile = compile
out = sys.argv[1]
def dump(*_):
    with open(out, "w") as fh:
        json.dump(rec, fh)
_exit = os._exit
def fast_exit(rc):
    dump(); _exit(rc)
os._exit = fast_exit
import atexit; atexit.register(dump)
sys.argv = ["trustlab"] + sys.argv[2:]
runpy.run_module("trustlab.cli", run_name="__main__")
"""


def trace(argv: list[str], cache: str, tmp: str) -> list:
    out = os.path.join(tmp, "trace.json")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", _CHILD, out, *argv], capture_output=True, text=True, env=env, cwd=ROOT)
    if p.returncode:
        raise RuntimeError(f"{argv} failed ({p.returncode}): {p.stderr[-800:]}")
    with open(out) as fh:
        return json.load(fh)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", default="privatize,partition,partition-sparse,resolve")
    ap.add_argument("--top", type=int, default=15, help="functions listed per job")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        jobs = _inputs(tmp)
        for name in a.jobs.split(","):
            with tempfile.TemporaryDirectory(dir=tmp) as cache:
                cold = trace(jobs[name], cache, tmp)
                warm = trace(jobs[name], cache, tmp)
            agg: dict[str, list] = {}
            for ex, fn, _sig in cold:
                r = agg.setdefault(fn, [0.0, 0])
                r[0] += ex
                r[1] += 1
            total = sum(r[0] for r in agg.values())
            print(f"\n### {name}: {len(cold)} specialisations compiled cold, {total:.2f} s (wall, exclusive); "
                  f"warm: {len(warm)} loaded from the cache, {sum(r[0] for r in warm):.2f} s\n")
            print("| function | specialisations | exclusive seconds |")
            print("|---|---|---|")
            for fn, (ex, n) in sorted(agg.items(), key=lambda kv: -kv[1][0])[: a.top]:
                print(f"| `{fn}` | {n} | {ex:.2f} |")
            rest = sorted(agg.items(), key=lambda kv: -kv[1][0])[a.top:]
            if rest:
                print(f"| {len(rest)} others | {sum(r[1] for _, r in rest)} | {sum(r[0] for _, r in rest):.2f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
