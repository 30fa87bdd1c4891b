"""Cold and warm first run of each CLI job, each in a fresh Numba cache directory.

For every job a new, empty ``NUMBA_CACHE_DIR`` is made; the job's command runs once
(cold: every kernel it needs is compiled and written to that directory) and then
``--warm`` more times (warm: the same command loading the kernels from the cache).
Reported per job: wall seconds and CPU seconds (user + system of the child process;
CPU time is what a loaded machine inflates least), cold / warm ratios, and the
1-minute load average before each run; "same result" compares, cold against warm, the
printed JSON (timing fields dropped; ``partition``: status, objective and clusters) and
any output file byte for byte (the randomised jobs run with ``--seed 7``). Results are
printed as markdown rows and, with ``--json PATH``, appended as JSON lines.

Jobs that run exact NumPy / Python twins of their kernels while the kernels are cold
(``cliques``, ``bias weat``, ``privatize``) never fill the cache themselves, so their warm
runs are twin runs too; ``--kernels-warm`` adds, per job, the same command after the
job's kernel families were compiled into that cache (``warm_caches(families=...)``, what
``trustlab warmup`` does), the fairest warm figure for them (column "kernels-warm CPU").

Run::

    PYTHONPATH=. python bench/bench_firstcall.py [--jobs resolve,partition,...] [--warm 2] [--repeat 1]

The jobs (bundled data only, so the benchmark runs anywhere):

* ``resolve``: ``trustlab resolve --dataset csv_example`` (3,337 records);
* ``partition``: ``trustlab partition`` on the bundled CP-Lib ``cars`` instance (33 nodes, cpp);
* ``partition-sparse``: ``trustlab partition`` on a generated sparse edge list of 6,000 nodes
  (the O(n + m) sparse search);
* ``cliques``: ``trustlab cliques -o cl.txt`` on a generated random graph (2,000 nodes, 20,000
  edges);
* ``privatize``: ``trustlab privatize`` of 1,000 x 300 float32 vectors;
* ``bias-weat``: ``trustlab bias weat`` (all ten Caliskan tests on the bundled subset);
* ``warmup``: ``trustlab warmup`` itself (its cold run is the post-install cost).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _inputs(tmp: str) -> dict[str, list[str]]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 300)).astype(np.float32)
    np.save(os.path.join(tmp, "X.npy"), X)
    n, m = 2000, 20_000
    e = rng.integers(0, n, (2 * m, 2))
    e = np.unique(np.sort(e[e[:, 0] != e[:, 1]], axis=1), axis=0)[:m]
    np.savetxt(os.path.join(tmp, "g.edges"), e, fmt="%d")
    # sparse weighted graph: 6,000 nodes on a ring with chords, weights N(0.2, 1)
    n2 = 6000
    a = np.arange(n2)
    rows = np.concatenate([a, a, rng.integers(0, n2, n2)])
    cols = np.concatenate([(a + 1) % n2, (a + 7) % n2, rng.integers(0, n2, n2)])
    keep = rows != cols
    rows, cols = np.minimum(rows[keep], cols[keep]), np.maximum(rows[keep], cols[keep])
    pairs = np.unique(np.stack([rows, cols], 1), axis=0)
    w = np.round(rng.normal(0.2, 1.0, len(pairs)), 3)
    with open(os.path.join(tmp, "sparse.edges"), "w") as fh:
        for (i, j), x in zip(pairs, w):
            fh.write(f"{i} {j} {x}\n")
    cp = os.path.join(ROOT, "trustlab", "data", "cplib", "cars.txt")
    return {
        "resolve": ["resolve", "--dataset", "csv_example", "--json", "-q", "-o", os.path.join(tmp, "ent.csv")],
        "partition": ["partition", cp, "--json", "-q"],
        "partition-sparse": ["partition", os.path.join(tmp, "sparse.edges"), "--format", "edgelist", "--json", "-q"],
        "cliques": ["cliques", os.path.join(tmp, "g.edges"), "--json", "-q", "-o", os.path.join(tmp, "cl.txt")],
        "privatize": ["privatize", os.path.join(tmp, "X.npy"), "--epsilon", "1", "--seed", "7", "--output",
                      os.path.join(tmp, "Xp.npy"), "--json", "-q"],
        "bias-weat": ["bias", "weat", "--seed", "7", "--json", "-q"],
        "warmup": ["warmup"],
    }


#: job -> the ``trustlab warmup`` kernel families it uses (for ``--kernels-warm``)
FAMILIES = {"resolve": ["resolve", "partition"], "partition": ["partition"], "partition-sparse": ["partition"],
            "cliques": ["cliques", "cliques CLI I/O"], "privatize": ["privacy"], "bias-weat": ["weat"], "warmup": []}


def _warm_kernels(name: str, cache: str) -> None:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = f"from trustlab.commands.warmup import warm_caches; warm_caches(families={FAMILIES[name]!r})"
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT, capture_output=True)


def _run(argv: list[str], cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "trustlab.cli", *argv], capture_output=True, text=True, env=env,
                       cwd=ROOT)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode:
        raise RuntimeError(f"{argv} failed ({p.returncode}): {p.stderr[-800:]}")
    out = {"wall": wall, "cpu": cpu, "load": load}
    try:
        js = json.loads(p.stdout.strip().splitlines()[-1])
        for k in ("component_status", "status", "n_entities", "objective"):
            if isinstance(js, dict) and k in js:
                out[k] = js[k]
        if argv[0] != "partition":  # (its JSON carries budget and work counters)
            out["digest"] = _digest(js, argv)
        elif isinstance(js, dict) and "clusters" in js:
            out["clusters"] = js["clusters"]
    except (ValueError, IndexError):
        pass
    return out


def _strip_timings(x):
    if isinstance(x, dict):
        return {k: _strip_timings(v) for k, v in x.items()
                if not any(t in k.lower() for t in ("second", "time", "elapsed", "wall", "cpu", "created"))}
    if isinstance(x, list):
        return [_strip_timings(v) for v in x]
    return x


def _digest(js, argv: list[str]) -> str:
    """SHA-256 of the printed JSON without its timing fields, plus the bytes of any
    output file the job wrote: equal digests = the same result, cold and warm."""
    import hashlib

    h = hashlib.sha256(json.dumps(_strip_timings(js), sort_keys=True).encode())
    for flag in ("-o", "--output"):
        if flag in argv:
            path = argv[argv.index(flag) + 1]
            if os.path.exists(path):
                with open(path, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", default="resolve,partition,partition-sparse,cliques,privatize,bias-weat,warmup")
    ap.add_argument("--warm", type=int, default=2, help="warm runs per job (the best is reported)")
    ap.add_argument("--repeat", type=int, default=1, help="fresh-cache repetitions per job (the best cold)")
    ap.add_argument("--json", default=None, help="append one JSON line per job here")
    ap.add_argument("--kernels-warm", action="store_true",
                    help="also run each job once more after compiling its kernel families into the cache")
    a = ap.parse_args()
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    kw = a.kernels_warm
    print("| job | cold wall | warm wall | wall ratio | cold CPU | warm CPU | CPU ratio | load (cold/warm) "
          "| same result |" + (" kernels-warm CPU | cold / kernels-warm CPU |" if kw else ""))
    print("|---|---|---|---|---|---|---|---|---|" + ("---|---|" if kw else ""))
    with tempfile.TemporaryDirectory() as tmp:
        jobs = _inputs(tmp)
        for name in a.jobs.split(","):
            argv = jobs[name]
            colds, warms = [], []
            kwarms: list[dict] = []
            for _ in range(a.repeat):
                with tempfile.TemporaryDirectory(dir=tmp) as cache:
                    colds.append(_run(argv, cache))
                    warms += [_run(argv, cache) for _ in range(a.warm)]
                    if kw:
                        _warm_kernels(name, cache)
                        kwarms += [_run(argv, cache) for _ in range(max(1, a.warm))]
            c = min(colds, key=lambda r: r["wall"])
            w = min(warms, key=lambda r: r["wall"])
            keys = ("component_status", "status", "n_entities", "objective", "digest", "clusters")
            same = all(r.get(k) == colds[0].get(k) for r in colds + warms + kwarms for k in keys)
            row = (f"| {name} | {c['wall']:.2f} s | {w['wall']:.2f} s | {c['wall'] / w['wall']:.1f}x "
                   f"| {c['cpu']:.2f} s | {w['cpu']:.2f} s | {c['cpu'] / max(w['cpu'], 1e-9):.1f}x "
                   f"| {c['load']:.1f} / {w['load']:.1f} | {same} |")
            if kw:
                k = min(kwarms, key=lambda r: r["cpu"])
                row += f" {k['cpu']:.2f} s | {c['cpu'] / max(k['cpu'], 1e-9):.1f}x |"
            print(row, flush=True)
            if a.json:
                with open(a.json, "a") as fh:
                    fh.write(json.dumps({"job": name, "argv": argv, "cold": colds, "warm": warms,
                                         "kernels_warm": kwarms,
                                         "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")


if __name__ == "__main__":
    main()
