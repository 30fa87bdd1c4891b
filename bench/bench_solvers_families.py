"""Clique partitioning heuristic on CP-Lib-like instance families.

Families from :mod:`trustlab.solvers.synthetic` (cluster editing, uniform random
integers in [-100, 100], machine-cell formation, equicut-like), generated here with
seeds the heuristic was never tuned on (tuning used generator seeds 1000+n / 2000+n).

Per instance:
* ``heuristic``: ``partition(W, method="heuristic", time_limit=10, random_state=0)``
  (stops by its own patience rule or at 10 s);
* ``long``: the heuristic itself with another seed, patience off, for ``LONG`` seconds;
* ``cpsat`` (n <= 100 only): OR-Tools CP-SAT, 8 workers, on the triangle model
  (every triangle inequality), ``PEER_LIMIT`` seconds, measured in the same run;
* ``best``: the best value any of them found (``proven`` if CP-SAT closed the gap).

Run the tables (writes bench/results/solvers_families.md and *_raw.jsonl):
    .venv/bin/python bench/bench_solvers_families.py [--long S] [--peer S] [--sizes 50,80,100]
pytest-benchmark style (heuristic only, one row per family and size):
    .venv/bin/python -m pytest bench/bench_solvers_families.py --benchmark-enable -p no:cacheprovider
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pytest

from trustlab.solvers import partition
from trustlab.solvers.heuristic import solve_heuristic
from trustlab.solvers.synthetic import FAMILIES, make_instance

HERE = Path(__file__).resolve().parent
RAW = HERE / "results" / "solvers_families_raw.jsonl"
MD = HERE / "results" / "solvers_families.md"
FAMS = sorted(FAMILIES)
SMALL = (50, 80, 100)
LARGE = (200, 500)
SEED = 7  # instance seed: random_state = SEED * 1000 + n (never used in tuning)
LONG = 60.0
PEER_LIMIT = 30.0


def instance(family: str, n: int) -> np.ndarray:
    return make_instance(family, n, random_state=SEED * 1000 + n)


def cpsat_triangles(W: np.ndarray, time_limit: float, workers: int = 8):
    """The peer: the full triangle model in CP-SAT. Returns (objective, bound, status, seconds)."""
    from bench_solvers import triangle_model
    from ortools.sat.python import cp_model

    t = time.perf_counter()
    m = triangle_model(W)
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = max(1.0, time_limit - (time.perf_counter() - t))
    s.parameters.num_workers = workers
    st = s.solve(m)
    ok = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return (float(s.objective_value) if ok else None, float(s.best_objective_bound), s.status_name(st),
            time.perf_counter() - t)


def long_run(W: np.ndarray, seconds: float) -> float:
    n = W.shape[0]
    _, v = solve_heuristic(W, ~np.eye(n, dtype=bool), rng=np.random.default_rng(12345),
                           deadline=time.perf_counter() + seconds, patience=10**9, max_rounds=10**9)
    return v


def measure(family: str, n: int, long_s: float, peer_s: float) -> dict:
    W = instance(family, n)
    r = partition(W, method="heuristic", time_limit=10, random_state=0)
    row = dict(family=family, n=n, seed=SEED * 1000 + n, heuristic=r.objective, heuristic_s=r.seconds,
               long=long_run(W, long_s), long_s=long_s, load=os.getloadavg()[0])
    if n <= 100 and peer_s > 0:
        obj, bound, status, sec = cpsat_triangles(W, peer_s)
        row.update(cpsat=obj, cpsat_bound=bound, cpsat_status=status, cpsat_s=sec)
    vals = [v for v in (row["heuristic"], row["long"], row.get("cpsat")) if v is not None]
    row["best"] = max(vals)
    row["proven"] = row.get("cpsat_status") == "OPTIMAL"
    row["reaches_best"] = row["heuristic"] >= row["best"] - 1e-9
    return row


# ------------------------------------------------------------------ pytest-benchmark


@pytest.mark.parametrize("family, n", [(f, n) for f in FAMS for n in SMALL + LARGE])
def test_heuristic_family(benchmark, family, n):
    W = instance(family, n)
    r = benchmark.pedantic(partition, args=(W,), kwargs=dict(method="heuristic", time_limit=10, random_state=0),
                           rounds=1, iterations=1)
    assert r.objective <= r.bound + 1e-9


# ------------------------------------------------------------------ tables


def write_md(rows: list[dict], cmd: str, started: str, loads: tuple) -> None:
    lines = [
        "# Clique partitioning heuristic on CP-Lib-like families",
        "",
        f"Command: `{cmd}`  ",
        f"Date: {started} (UTC). Machine: 2-core x86-64, 24 GiB, no GPU, shared with other jobs; "
        f"load average at start/end {loads[0]:.1f} / {loads[1]:.1f}. Python {platform.python_version()}.",
        "",
        "Instances: `make_instance(family, n, random_state=7000 + n)` (seeds never used in tuning). "
        "`heuristic` = `partition(W, method=\"heuristic\", time_limit=10, random_state=0)` (stops by its "
        "patience rule or at 10 s); `long` = the same search with another seed, patience off, for the "
        "stated seconds; `CP-SAT` = OR-Tools CP-SAT with 8 workers on the full triangle model (n <= 100), "
        "measured in the same run; `best` = best value any of them found (`*` = proven optimal by CP-SAT).",
        "",
        "| family | n | heuristic | s | long run | CP-SAT (status, s) | best | heuristic = best |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cp = "—" if "cpsat" not in r else f"{r['cpsat']} ({r['cpsat_status'].lower()}, {r['cpsat_s']:.0f} s)"
        best = f"{r['best']:g}{'*' if r['proven'] else ''}"
        lines.append(f"| {r['family']} | {r['n']} | {r['heuristic']:g} | {r['heuristic_s']:.2f} | "
                     f"{r['long']:g} ({r['long_s']:.0f} s) | {cp} | {best} | "
                     f"{'yes' if r['reaches_best'] else 'no (' + format(r['heuristic'] / r['best'], '.4f') + ')'} |")
    small = [r for r in rows if r["n"] <= 100]
    hit = sum(r["reaches_best"] for r in small)
    lines += ["", f"Target (heuristic reaches the best known value on every instance of n <= 100 within 10 s): "
              f"{hit} of {len(small)} — {'met' if hit == len(small) else 'not met'}.", ""]
    MD.write_text("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--long", type=float, default=LONG, help="seconds of the long heuristic run")
    ap.add_argument("--long-large", type=float, default=None, help="long run for n > 100 (default --long)")
    ap.add_argument("--peer", type=float, default=PEER_LIMIT, help="CP-SAT seconds (0: skip)")
    ap.add_argument("--sizes", default=",".join(map(str, SMALL + LARGE)))
    ap.add_argument("--families", default=",".join(FAMS))
    a = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    load0 = os.getloadavg()[0]
    rows = []
    RAW.parent.mkdir(parents=True, exist_ok=True)
    partition(instance("random", 20), method="heuristic", random_state=0)  # JIT warm-up
    for fam in a.families.split(","):
        for n in map(int, a.sizes.split(",")):
            long_s = a.long if n <= 100 or a.long_large is None else a.long_large
            row = measure(fam, n, long_s, a.peer)
            rows.append(row)
            print(json.dumps(row), flush=True)
            with open(RAW, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    cmd = "python bench/bench_solvers_families.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(a).items() if v is not None)
    write_md(rows, cmd, started, (load0, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
