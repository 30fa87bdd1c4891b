"""Clique partitioning heuristic on CP-Lib-like and literature instance families.

Families from :mod:`trustlab.solvers.synthetic` (cluster editing, uniform random
integers in [-100, 100], machine-cell formation, equicut-like; and the heuristics
literature's families: unplanted signed G(n, p) graphs, uniform integers in [-a, a] with
a density, rounded Gaussian weights), as the variants in ``VARIANTS``, generated with
seeds the heuristic was never tuned on (instance ``random_state = seed * 1000 + n``;
tuning used seeds 1, 2, 31, 32: 1000+n, 2000+n, 31000+n, 32000+n).

Per instance:
* ``heuristic``: ``partition(W, method="heuristic", time_limit=10, random_state=0)``
  (stops by its own patience rule or at 10 s);
* ``long``: the heuristic itself with another seed, patience off, for ``LONG`` seconds;
* ``cpsat`` (n <= 100 only): OR-Tools CP-SAT, 8 workers, on the triangle model
  (every triangle inequality), ``PEER_LIMIT`` seconds, measured in the same run;
* ``best``: the best value any of them found (``proven`` if CP-SAT closed the gap).

Published instances (``--published``, read from the CP-Lib folders in ``CPLIB_DIRS``,
colon-separated, default ../shared/data/cpp/cplib; missing files are skipped): Charon &
Hudry's ``rand100-5`` and ``rand100-100`` (best known 1407 and 24296, Brusco & Köhn;
Zhou, Hao & Goëffon) and CP-Lib's ``corr40-*``/``corr60-*`` (proven optima in
``Optimal/``) and ``corr80-*`` (best known, CP-Lib paper's table): the same 10 s
heuristic against the published value (and a long run with ``--long-published S``).

Run the tables (writes bench/results/solvers_families.md and *_raw.jsonl):
    .venv/bin/python bench/bench_solvers_families.py [--long S] [--peer S] [--sizes 50,80,100]
        [--families cluster_editing,signed_gnp,...] [--seeds 9001,9002] [--published]
``--long-from RAW.jsonl`` reuses the long runs of an earlier run (rows with the same
variant, n and seed) instead of repeating them.
pytest-benchmark style (heuristic only, one row per family and size):
    .venv/bin/python -m pytest bench/bench_solvers_families.py --benchmark-enable -p no:cacheprovider
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from trustlab.solvers import partition
from trustlab.solvers.heuristic import solve_heuristic
from trustlab.solvers.io import read_cplib, read_cplib_optimum
from trustlab.solvers.synthetic import make_instance

HERE = Path(__file__).resolve().parent
RAW = HERE / "results" / "solvers_families_raw.jsonl"
MD = HERE / "results" / "solvers_families.md"
#: instance variants: label -> (family of make_instance, generator keywords)
VARIANTS = {
    "cluster_editing": ("cluster_editing", {}),
    "equicut": ("equicut", {}),
    "mcf": ("mcf", {}),
    "random": ("random", {}),
    "signed_gnp": ("signed_gnp", {}),  # unplanted +-1, p = 0.5 (= cluster editing with flip 0.5)
    "signed_gnp-p0.3": ("signed_gnp", {"p": 0.3}),
    "uniform": ("uniform", {}),  # [-5, 5], dense: rand100-5, p500-5-*
    "uniform-d0.3": ("uniform", {"density": 0.3}),
    "uniform100-d0.5": ("uniform", {"max_weight": 100, "density": 0.5}),
    "gauss": ("gauss", {}),  # round(Normal(0, 50)): gauss500-100-*
}
FAMS = ["cluster_editing", "equicut", "mcf", "random"]  # the default run: CP-Lib-like families
SMALL = (50, 80, 100)
LARGE = (200, 500)
SEED = 7  # default instance seed: random_state = SEED * 1000 + n (never used in tuning)
LONG = 60.0
PEER_LIMIT = 30.0
#: published instances: name -> (CP-Lib folder, best known value or None to read Optimal/, source)
PUBLISHED = {
    "rand100-5": ("Random", 1407.0, "best known (Brusco & Köhn 2009; Zhou, Hao & Goëffon 2016)"),
    "rand100-100": ("Random", 24296.0, "best known (Brusco & Köhn 2009; Zhou, Hao & Goëffon 2016)"),
    **{f"corr40-{k}": ("Correlation", None, "proven optimum (CP-Lib)") for k in range(1, 11)},
    **{f"corr60-{k}": ("Correlation", None, "proven optimum (CP-Lib)") for k in range(1, 11)},
    **dict(zip([f"corr80-{k}" for k in range(1, 11)],
               [("Correlation", float(v), "best known (CP-Lib table)")
                for v in (4724, 4667, 4993, 4504, 5090, 4465, 5088, 4757, 4430, 5071)])),
}
CPLIB_DIRS = [Path(d) for d in os.environ.get(
    "CPLIB_DIRS", str(HERE.parent.parent / "shared" / "data" / "cpp" / "cplib")).split(os.pathsep) if d]


def instance(label: str, n: int, seed: int = SEED) -> np.ndarray:
    family, kwargs = VARIANTS[label]
    return make_instance(family, n, random_state=seed * 1000 + n, **kwargs)


def published(name: str):
    """(W, best value, source) of a published instance, or None if no CP-Lib folder holds it."""
    folder, best, source = PUBLISHED[name]
    for d in CPLIB_DIRS:
        f = d / folder / f"{name}.txt"
        if f.exists():
            if best is None:
                opt = d / folder / "Optimal" / f"{name}_opt.txt"
                if not opt.exists():
                    return None
                best = read_cplib_optimum(opt)[0]
            return read_cplib(f), float(best), source
    return None


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


def heuristic_runs(W: np.ndarray, seeds: tuple = (0,)) -> dict:
    """The 10 s heuristic with each ``random_state`` in ``seeds``: the first run's value
    and seconds, and with several seeds every value and the slowest run."""
    runs = [partition(W, method="heuristic", time_limit=10, random_state=s) for s in seeds]
    out = dict(heuristic=runs[0].objective, heuristic_s=runs[0].seconds)
    if len(seeds) > 1:
        out.update(heuristic_seeds=list(seeds), heuristic_all=[r.objective for r in runs],
                   heuristic_max_s=max(r.seconds for r in runs))
    return out


def _reaches(row: dict) -> None:
    """``reaches_best`` (every seed's run reaches ``best``) and ``hits`` (how many do)."""
    vals = row.get("heuristic_all", [row["heuristic"]])
    row["hits"] = sum(v >= row["best"] - 1e-9 for v in vals)
    row["reaches_best"] = row["hits"] == len(vals)


def measure(family: str, n: int, long_s: float, peer_s: float, seed: int = SEED, reuse: dict | None = None,
            peer_max_n: int = 100, peer_workers: int = 8, heuristic_seeds: tuple = (0,)) -> dict:
    W = instance(family, n, seed)
    load = os.getloadavg()[0]
    row = dict(family=family, n=n, seed=seed * 1000 + n, **heuristic_runs(W, heuristic_seeds), load=load)
    old = (reuse or {}).get((family, n, seed * 1000 + n))
    if old is not None:
        row.update(long=old["long"], long_s=old["long_s"], long_reused=True)
        if "cpsat" in old:  # the peer's run of the same instance, reused with it
            row.update({k: old[k] for k in ("cpsat", "cpsat_bound", "cpsat_status", "cpsat_s")}, cpsat_reused=True)
    else:
        row.update(long=long_run(W, long_s), long_s=long_s)
    if n <= peer_max_n and peer_s > 0 and "cpsat" not in row:
        obj, bound, status, sec = cpsat_triangles(W, peer_s, workers=peer_workers)
        row.update(cpsat=obj, cpsat_bound=bound, cpsat_status=status, cpsat_s=sec)
    vals = [v for v in (*row.get("heuristic_all", [row["heuristic"]]), row["long"], row.get("cpsat")) if v is not None]
    row["best"] = max(vals)
    row["proven"] = row.get("cpsat_status") == "OPTIMAL"
    _reaches(row)
    return row


# ------------------------------------------------------------------ pytest-benchmark


@pytest.mark.parametrize("family, n", [(f, n) for f in VARIANTS for n in SMALL + LARGE])
def test_heuristic_family(benchmark, family, n):
    W = instance(family, n)
    r = benchmark.pedantic(partition, args=(W,), kwargs=dict(method="heuristic", time_limit=10, random_state=0),
                           rounds=1, iterations=1)
    assert r.objective <= r.bound + 1e-9


# ------------------------------------------------------------------ tables


def _secs(r: dict) -> str:
    """random_state 0's seconds, and the slowest seed's with several."""
    return f"{r['heuristic_s']:.2f}" + (f" (max {r['heuristic_max_s']:.2f})" if "heuristic_max_s" in r else "")


def _hit_cell(r: dict) -> str:
    """'yes' / 'no (ratio)' for one seed; 'k of m seeds' (and the worst ratio) for several."""
    vals = r.get("heuristic_all")
    if vals is None:
        return "yes" if r["reaches_best"] else "no (" + format(r["heuristic"] / r["best"], ".4f") + ")"
    worst = min(vals) / r["best"]
    return f"{r['hits']} of {len(vals)} seeds" + ("" if r["reaches_best"] else f" (worst {worst:.4f})")


def write_md(rows: list[dict], pub: list[dict], cmd: str, started: str, loads: tuple, peer: tuple) -> None:
    """Append this run's tables to MD as a new section (the file keeps earlier runs)."""
    seeds = sorted({r["seed"] // 1000 for r in rows})
    lines = [
        "",
        f"## Run of {started} UTC",
        "",
        f"Command: `{cmd}`  ",
        f"Date: {started} (UTC). Machine: 2-core x86-64, 24 GiB, no GPU, shared with other jobs; "
        f"load average at start/end {loads[0]:.1f} / {loads[1]:.1f} (per row: `load`, the 1-min load "
        f"average before the row). Python {platform.python_version()}. Code: {_git_head()}.",
        "",
    ]
    if rows:
        lines += [
            f"Instances: `make_instance(family, n, random_state=seed * 1000 + n, **kwargs)` for the variants of "
            f"`VARIANTS` (seeds {', '.join(map(str, seeds))}: never used in tuning). "
            "`heuristic` = `partition(W, method=\"heuristic\", time_limit=10, random_state=0)` (stops by its "
            "patience rule or at 10 s; with `--heuristic-seeds`, the value and seconds are random_state 0's, "
            "the last column counts the seeds whose run reaches the best); `long` = the same search with another "
            "seed, patience off, for the "
            "stated seconds (`r` = reused from an earlier run, `--long-from`, with its CP-SAT run); `CP-SAT` = "
            "OR-Tools CP-SAT with "
            f"{peer[1]} workers on the full triangle model (n <= {peer[0]}), measured in the same run; "
            "`best` = best value any of them found (`*` = proven optimal by CP-SAT).",
            "",
            "| variant | n | seed | heuristic | s | load | long run | CP-SAT (status, s) | best | heuristic = best |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            cp = "—"
            if r.get("cpsat") is not None:
                cp = (f"{r['cpsat']:g} ({r['cpsat_status'].lower()}, {r['cpsat_s']:.0f} s"
                      f"{' r' if r.get('cpsat_reused') else ''})")
            best = f"{r['best']:g}{'*' if r['proven'] else ''}"
            hit = _hit_cell(r)
            lines.append(f"| {r['family']} | {r['n']} | {r['seed']} | {r['heuristic']:g} | {_secs(r)} | "
                         f"{r['load']:.1f} | {r['long']:g} ({r['long_s']:.0f} s{' r' if r.get('long_reused') else ''}) "
                         f"| {cp} | {best} | {hit} |")
    if pub:
        lines += [
            "",
            "Published instances (`--published`): the same 10 s heuristic against the published value "
            "(`best` = the published value, or a better one if any run found it).",
            "",
            "| instance | n | heuristic | s | load | long run | best | source | heuristic = best |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in pub:
            lr = "—" if r.get("long") is None else f"{r['long']:g} ({r['long_s']:.0f} s)"
            hit = _hit_cell(r)
            lines.append(f"| {r['name']} | {r['n']} | {r['heuristic']:g} | {_secs(r)} | {r['load']:.1f} | "
                         f"{lr} | {r['best']:g} | {r['source']} | {hit} |")
    small = [r for r in rows + pub if r["n"] <= 100]
    hit = sum(r["reaches_best"] for r in small)
    lines += ["", f"Target (heuristic reaches the best known value on every instance of n <= 100 within 10 s): "
              f"{hit} of {len(small)} — {'met' if hit == len(small) else 'not met'}.", ""]
    if not MD.exists():
        lines = ["# Clique partitioning heuristic on CP-Lib-like families"] + lines
    with open(MD, "a") as fh:
        fh.write("\n".join(lines))


def _git_head() -> str:
    """The code measured: ``BENCH_CODE`` if set (e.g. an older copy on PYTHONPATH), else git HEAD."""
    if os.environ.get("BENCH_CODE"):
        return os.environ["BENCH_CODE"]
    try:
        out = subprocess.run(["git", "-C", str(HERE), "log", "-1", "--format=%h"], capture_output=True, text=True,
                             timeout=10)
        dirty = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--", "../trustlab"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        head = out.stdout.strip() or "?"
        return f"commit {head}" + (" (trustlab/ modified)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def measure_published(name: str, long_s: float, heuristic_seeds: tuple = (0,)) -> dict | None:
    got = published(name)
    if got is None:
        return None
    W, best, source = got
    load = os.getloadavg()[0]
    row = dict(name=name, n=W.shape[0], **heuristic_runs(W, heuristic_seeds), best=best, source=source, load=load)
    if long_s > 0:
        row.update(long=long_run(W, long_s), long_s=long_s)
    row["best"] = max(best, row.get("long", best), *row.get("heuristic_all", [row["heuristic"]]))
    _reaches(row)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--long", type=float, default=LONG, help="seconds of the long heuristic run")
    ap.add_argument("--long-large", type=float, default=None, help="long run for n > 100 (default --long)")
    ap.add_argument("--long-from", default=None, help="raw jsonl of an earlier run whose long runs to reuse")
    ap.add_argument("--peer", type=float, default=PEER_LIMIT, help="CP-SAT seconds (0: skip)")
    ap.add_argument("--peer-max-n", type=int, default=100, help="largest n given to CP-SAT")
    ap.add_argument("--peer-workers", type=int, default=8, help="CP-SAT workers")
    ap.add_argument("--sizes", default=",".join(map(str, SMALL + LARGE)))
    ap.add_argument("--families", default=",".join(FAMS), help=f"variants, of {', '.join(VARIANTS)}")
    ap.add_argument("--seeds", default=str(SEED), help="instance seeds (random_state = seed * 1000 + n)")
    ap.add_argument("--published", action="store_true", help="also the published instances (CPLIB_DIRS)")
    ap.add_argument("--heuristic-seeds", default="0", help="random_state values of the 10 s heuristic runs")
    ap.add_argument("--long-published", type=float, default=0.0, help="long run seconds on published instances")
    ap.add_argument("--long-published-names", default="rand100-5,rand100-100",
                    help="the published instances given a long run")
    a = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    load0 = os.getloadavg()[0]
    reuse = {}
    if a.long_from:
        for line in Path(a.long_from).read_text().splitlines():
            r = json.loads(line)
            if "long" in r and "family" in r:
                reuse[(r["family"], r["n"], r["seed"])] = r
    hseeds = tuple(int(x) for x in a.heuristic_seeds.split(","))
    rows, pub = [], []
    RAW.parent.mkdir(parents=True, exist_ok=True)
    partition(instance("random", 20), method="heuristic", random_state=0)  # JIT warm-up
    for fam in [f for f in a.families.split(",") if f]:
        for n in map(int, a.sizes.split(",")):
            for seed in map(int, a.seeds.split(",")):
                long_s = a.long if n <= 100 or a.long_large is None else a.long_large
                row = measure(fam, n, long_s, a.peer, seed=seed, reuse=reuse, peer_max_n=a.peer_max_n,
                              peer_workers=a.peer_workers, heuristic_seeds=hseeds)
                rows.append(row)
                print(json.dumps(row), flush=True)
                with open(RAW, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    if a.published:
        for name in PUBLISHED:
            row = measure_published(name, a.long_published if name in a.long_published_names.split(",") else 0.0,
                                    heuristic_seeds=hseeds)
            if row is not None:
                pub.append(row)
                print(json.dumps(row), flush=True)
                with open(RAW, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    cmd = "python bench/bench_solvers_families.py " + " ".join(
        f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}") for k, v in vars(a).items()
        if v is not None and v is not False)
    write_md(rows, pub, cmd, started, (load0, os.getloadavg()[0]), (a.peer_max_n, a.peer_workers))


if __name__ == "__main__":
    main()
