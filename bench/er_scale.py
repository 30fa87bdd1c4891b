"""Entity resolution at scale with every stage on Dask (``trustlab.er.distributed``).

For each size N: ``trustlab.er.generate_records(N, random_state=0)`` written once as a
directory of parquet files (with the true ``entity`` column) and as a CSV without it; then,
each in its own subprocess so that peak memory is per run:

* ``distributed`` — ``resolve_distributed(directory, truth="entity")`` on a
  ``distributed.LocalCluster`` of ``--workers`` worker processes (one thread each): seconds,
  peak resident memory of each worker process and of the driver, pairwise F1;
* ``local`` (``--equivalence``) — ``trustlab.resolve`` in one process on the CSV with the
  fields and blocking rules the distributed run used, and whether the two runs give the
  same entities (same partition of the record ids);
* ``splink`` (``--splink``) — Splink 5 on DuckDB, the untuned set-up of
  ``bench/er_real_peers.py``, on the same CSV.

    .venv/bin/python bench/er_scale.py --n 1000000 [--splink] [--equivalence] [--md bench/results/er_scale.md]

With ``--chunk C`` (e.g. ``--n 10000000 --chunk 1000000 [--gen-jobs 2]``) the N records are
generated as ``ceil(N / C)`` independent pieces ``generate_records(C, random_state=k)``, each
written as parquet files and dropped before the next (memory: one piece's, ~1 GB at 1M; the
CSV only with ``--csv``); ids are offset so that they are unique, piece 0 is the unchunked
generation of C records, and no entity spans two pieces (see :func:`generate` for what else
differs from one big generation).

Prints one JSON line per run.
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
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process and its waited-for children."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _worker_usage() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_maxrss / 1024, r.ru_utime + r.ru_stime


def _pairwise(pred, truth) -> dict:
    from er_real import pairwise

    return {k: round(float(v), 4) for k, v in pairwise(np.asarray(pred), np.asarray(truth)).items()}


def generate(n: int, work: Path, chunk: int | None = None, csv: bool = True, jobs: int = 1) -> dict:
    """Write N generated records under ``work``: ``parquet/`` (with the true ``entity``
    column), ``truth.npy`` (the entity of each record, in the parquet files' order) and,
    with ``csv``, ``records.csv`` (without the entity column).

    Without ``chunk``: one ``generate_records(n, random_state=0)`` (the rows of stop 36–39).
    With ``chunk``: ``ceil(n / chunk)`` independent pieces ``generate_records(size_k,
    random_state=k)`` (k = 0, 1, …; every piece ``chunk`` records but perhaps the last),
    each generated, written and dropped before the next, so memory is one piece's (about
    1 GB at 1M records) whatever N. Record ids are ``rec-{k * chunk + i}`` and entity ids
    ``k * chunk + e``: unique across pieces, and piece 0 is exactly the unchunked
    generation of ``chunk`` records (so the chunked 1M equals the unchunked 1M, file for
    file, and the first ``m`` pieces of a larger set are the chunked ``m * chunk`` set).

    What differs from one big ``generate_records(n)``: (1) **no entity spans two pieces**
    (duplicates copy an original of their own piece); (2) the name vocabularies are drawn
    per piece: their sizes are the same as one big generation's once ``chunk`` >= 800,000
    (given names 20,000, surnames 200,000, streets 50,000, suburbs 10,000 are the caps,
    reached at 400k / 800k / 500k / 500k records), but each piece draws its own words, so
    over all pieces there are more distinct names (the two-syllable words, ~47,000, recur
    in every piece; most three-syllable ones do not) and fewer records share a name than
    in one big generation: fewer candidate pairs per record under name-keyed blocking;
    (3) suburb to postcode is a per-piece mapping (the postcode comes from the suburb's
    index). Per piece the duplicate rate (0.4), the corruption kinds and rates, and the
    ranges of dates of birth, street numbers and social security ids (shared by all
    pieces, so chance collisions across pieces remain) are those of one generation.
    """
    from trustlab.er import generate_records

    pq = work / "parquet"
    if chunk is None:
        if (work / "truth.npy").exists() and (work / "records.csv").exists() and pq.is_dir():
            return {"run": "generate", "records": n, "seconds": 0.0, "reused": str(work)}  # same seed: same data
        t0 = time.perf_counter()
        df = generate_records(n, random_state=0)
        pq.mkdir(parents=True, exist_ok=True)
        k = max(2, n // 125_000)
        for i, part in enumerate(np.array_split(np.arange(n), k)):
            df.iloc[part].to_parquet(pq / f"part-{i:03d}.parquet", index=False)
        truth = df.pop("entity").astype(str).to_numpy()
        df.to_csv(work / "records.csv", index=False)
        np.save(work / "truth.npy", truth.astype(object), allow_pickle=True)
        return {"run": "generate", "records": n, "seconds": round(time.perf_counter() - t0, 1), "files": k,
                "peak_mb": round(_peak_mb(), 1)}
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of records; got {chunk}")
    t0, c0 = time.perf_counter(), _cpu_s()
    pieces = [(k, min(chunk, n - k * chunk)) for k in range(-(-n // chunk))]
    (work / "pieces").mkdir(parents=True, exist_ok=True)
    pq.mkdir(parents=True, exist_ok=True)
    todo = [(k, m) for k, m in pieces if not (work / "pieces" / f"done-{k:04d}").exists()]
    args = [(str(work), k, m, chunk, csv) for k, m in todo]
    if jobs > 1 and len(args) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as ex:  # one piece per process at a time: memory is jobs pieces'
            piece_rows = list(ex.map(_piece, args))
    else:
        piece_rows = [_piece(a) for a in args]
    truth = np.concatenate([np.load(work / "pieces" / f"truth-{k:04d}.npy", allow_pickle=True) for k, _ in pieces])
    np.save(work / "truth.npy", truth, allow_pickle=True)
    if csv:
        with open(work / "records.csv", "wb") as f:
            for k, _ in pieces:
                with open(work / "pieces" / f"records-{k:04d}.csv", "rb") as g:
                    if k:
                        g.readline()  # the header once
                    f.write(g.read())
    return {"run": "generate", "records": n, "chunk": chunk, "pieces": len(pieces), "generated_now": len(todo),
            "seconds": round(time.perf_counter() - t0, 1), "cpu_seconds": round(_cpu_s() - c0, 1),
            "files": len(list(pq.glob("*.parquet"))), "peak_mb": round(_peak_mb(), 1),
            "piece_peak_mb": max([r["peak_mb"] for r in piece_rows], default=None)}


def _piece(a) -> dict:
    """Generate, write and drop piece ``k`` of a chunked generation (see :func:`generate`)."""
    from trustlab.er import generate_records

    work, k, m, chunk, csv = a
    work = Path(work)
    df = generate_records(m, random_state=k)
    off = k * chunk
    if off:
        df["rec_id"] = [f"rec-{off + i}" for i in range(m)]
        df["entity"] = df["entity"].to_numpy() + off
    files = max(2, m // 125_000)  # as the unchunked generation: 8 files a million records
    for i, part in enumerate(np.array_split(np.arange(m), files)):
        df.iloc[part].to_parquet(work / "parquet" / f"part-{k:04d}-{i:03d}.parquet", index=False)
    truth = df.pop("entity").astype(str).to_numpy().astype(object)
    np.save(work / "pieces" / f"truth-{k:04d}.npy", truth, allow_pickle=True)
    if csv:
        df.to_csv(work / "pieces" / f"records-{k:04d}.csv", index=False)
    (work / "pieces" / f"done-{k:04d}").write_text("")
    return {"piece": k, "records": m, "peak_mb": round(_peak_mb(), 1)}


def distributed_run(work: Path, workers: int, memory_limit: str) -> dict:
    import logging

    from distributed import Client, LocalCluster

    from trustlab.er.distributed import resolve_distributed

    logging.getLogger("distributed").setLevel(logging.ERROR)
    # stage progress (start, seconds) in WORK/distributed.log, readable while the run goes on
    h = logging.FileHandler(work / "distributed.log", mode="w")
    h.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log = logging.getLogger("trustlab.er.distributed")
    log.addHandler(h)
    log.setLevel(logging.INFO)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        load0 = os.getloadavg()[0]
        cpu0 = client.run(_worker_usage)
        t0, c0 = time.perf_counter(), _cpu_s()
        if os.environ.get("ER_SCALE_TASKS"):  # where the workers' time goes: per task kind, compute and transfer
            from distributed import get_task_stream

            with get_task_stream(client) as ts:
                res = resolve_distributed(str(work / "parquet"), client=client, id_col="rec_id", truth="entity",
                                          output=str(work / "out"))
            (work / "tasks.json").write_text(json.dumps(_task_summary(ts.data), indent=1))
        else:
            res = resolve_distributed(str(work / "parquet"), client=client, id_col="rec_id", truth="entity",
                                      output=str(work / "out"))
        sec, csec = time.perf_counter() - t0, _cpu_s() - c0
        usage = client.run(_worker_usage)
        peaks = {k: v[0] for k, v in usage.items()}
        wcpu = sum(v[1] - cpu0[k][1] for k, v in usage.items())
    finally:
        client.close()
        cluster.close()
    (work / "dist_settings.json").write_text(json.dumps({"fields": {f.column: f.kind for f in res.fields},
                                                         "rules": res.rules}))
    m = res.metrics
    return {"run": "distributed", "workers": workers, "memory_limit": memory_limit, "records": res.n_records,
            "seconds": round(sec, 1), "cpu_seconds": round(wcpu + csec, 1), "driver_cpu_seconds": round(csec, 1),
            "worker_cpu_seconds": round(wcpu, 1),
            # what compares with the peers' rows, which time their resolution only (their F1 is computed after
            # the clock stops): the run without its "evaluation" stage (the metrics against `truth`)
            "resolve_seconds": round(sec - res.seconds.get("evaluation", 0.0), 1),
            "resolve_cpu_seconds": round(wcpu + csec - res.cpu_seconds.get("evaluation", 0.0), 1),
            "load": [round(load0, 1), round(os.getloadavg()[0], 1)], "encoded_mb": res.blocking.get("encoded_mb"),
            "stage_seconds": {k: round(v, 1) for k, v in res.seconds.items()},
            "stage_cpu_seconds": {k: round(v, 1) for k, v in res.cpu_seconds.items()},
            "stage_memory_mb": res.memory_mb,
            "peak_mb_per_worker": sorted(round(v, 1) for v in peaks.values()), "driver_peak_mb": round(_peak_mb(), 1),
            "f1": round(m["f1"], 4), "precision": round(m["precision"], 4), "recall": round(m["recall"], 4),
            "n_entities": res.n_entities, "candidate_pairs": res.blocking["n_candidate_pairs"],
            "completed_pairs": res.blocking["n_completed_pairs"], "pair_partitions": res.blocking["pair_partitions"],
            "max_pairs_per_partition": res.blocking["max_pairs_per_partition"],
            "pair_completeness": res.blocking["pair_completeness"], "rules": res.rules,
            "fields": [f"{f.column}:{f.kind}" for f in res.fields], "inferred_on": res.settings["inferred_on"],
            "components": res.components}


def _task_summary(data: list) -> dict:
    """Seconds of compute, transfer, (de)serialisation and disk per task kind (the task
    name's prefix) from ``distributed``'s task stream."""
    from dask.utils import key_split

    out: dict = {}
    per_worker: dict = {}
    for t in data:
        k = key_split(t["key"])
        w = per_worker.setdefault(str(t.get("worker")), 0.0)
        per_worker[str(t.get("worker"))] = w + sum(s["stop"] - s["start"] for s in t.get("startstops", ())
                                                    if s["action"] == "compute")
        row = out.setdefault(k, {"tasks": 0, "compute": 0.0, "transfer": 0.0, "deserialize": 0.0, "disk": 0.0})
        row["tasks"] += 1
        for s in t.get("startstops", ()):
            act = s["action"]
            key = "disk" if "disk" in act else act if act in row else None
            if key is not None:
                row[key] += s["stop"] - s["start"]
    out = dict(sorted(((k, {a: round(b, 2) if isinstance(b, float) else b for a, b in v.items()})
                       for k, v in out.items()), key=lambda kv: -kv[1]["compute"]))
    return {"compute_seconds_per_worker": {k: round(v, 1) for k, v in per_worker.items()}, "tasks": out}


def _partition_of(ids, ent) -> set:
    s = pd.Series(np.asarray(ids, dtype=object))
    return set(s.groupby(pd.Series(ent).astype(str).to_numpy()).apply(frozenset).tolist())


def local_run(work: Path) -> dict:
    import trustlab

    st = json.loads((work / "dist_settings.json").read_text())
    truth = np.load(work / "truth.npy", allow_pickle=True)
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), _cpu_s()
    r = trustlab.resolve(str(work / "records.csv"), id_col="rec_id", fields=st["fields"], blocking=st["rules"])
    sec, csec = time.perf_counter() - t0, _cpu_s() - c0
    f = r.to_frame()
    out = pd.read_parquet(work / "out", columns=["rec_id", "entity_id"])
    a = _partition_of(f["rec_id"], f["entity_id"])
    b = _partition_of(out["rec_id"], out["entity_id"])
    recs = pd.read_csv(work / "records.csv", usecols=["rec_id"], dtype=str)["rec_id"]
    lab = pd.Series(r.entity, index=r.ids).reindex(recs.to_numpy()).to_numpy()  # the CSV's (and truth's) order
    return {"run": "local (same fields and rules)", "records": int(len(f)), "seconds": round(sec, 1),
            "cpu_seconds": round(csec, 1), "load": [round(load0, 1), round(os.getloadavg()[0], 1)],
            "peak_mb": round(_peak_mb(), 1), **_pairwise(lab, truth),
            "same_entities_as_distributed": a == b, "entities_only_in_one_run": len(a ^ b),
            "candidate_pairs": r.blocking.n_candidate_pairs}


def splink(work: Path) -> dict:
    from er_real_peers import splink_run

    truth = np.load(work / "truth.npy", allow_pickle=True)
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), _cpu_s()
    pred, info = splink_run([work / "records.csv"], None)
    sec, csec = time.perf_counter() - t0, _cpu_s() - c0
    return {"run": "splink (DuckDB)", "records": int(len(truth)), "seconds": round(sec, 1),
            "cpu_seconds": round(csec, 1), "load": [round(load0, 1), round(os.getloadavg()[0], 1)],
            "peak_mb": round(_peak_mb(), 1), **_pairwise(pred, truth),
            "entities": info.get("entities"), "pairs_scored_at_0.5": info.get("pairs_scored_at_0.5")}


RUNS = {"generate": None, "distributed": None, "local": local_run, "splink": splink}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="1000000", help="comma list of sizes")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="3.5GiB", help="Dask memory limit per worker")
    ap.add_argument("--splink", action="store_true")
    ap.add_argument("--equivalence", action="store_true", help="also the local resolve with the same rules")
    ap.add_argument("--work", default=None, help="directory for the generated data (default: a temporary one)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--md", default=None)
    ap.add_argument("--chunk", type=int, default=None,
                    help="generate N records as independent pieces of this many (bounded memory; see generate())")
    ap.add_argument("--csv", action="store_true", help="with --chunk: also write records.csv (for local / splink)")
    ap.add_argument("--gen-jobs", type=int, default=1, help="with --chunk: pieces generated in parallel processes")
    ap.add_argument("--one", nargs=3, metavar=("RUN", "WORK", "N"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        run, work, n = a.one
        work = Path(work)
        if run == "generate":
            row = generate(int(n), work, chunk=a.chunk, csv=a.csv or a.chunk is None, jobs=a.gen_jobs)
        elif run == "distributed":
            row = distributed_run(work, a.workers, a.memory_limit)
        else:
            row = RUNS[run](work)
        print("ROW " + json.dumps(row, default=str), flush=True)
        return 0
    rows = []
    load = os.getloadavg()
    for n in [int(float(x)) for x in a.n.split(",")]:
        base = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="er_scale_"))
        work = base / f"n{n}"
        work.mkdir(parents=True, exist_ok=True)
        runs = ["generate", "distributed"] + (["local"] if a.equivalence else []) + (["splink"] if a.splink else [])
        for run in runs:
            cmd = [sys.executable, __file__, "--one", run, str(work), str(n), "--workers", str(a.workers),
                   "--memory-limit", a.memory_limit, "--gen-jobs", str(a.gen_jobs)]
            cmd += (["--chunk", str(a.chunk)] if a.chunk else []) + (["--csv"] if a.csv else [])
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
                got = [json.loads(line[4:]) for line in p.stdout.splitlines() if line.startswith("ROW ")]
                row = got[0] if got else {"run": run, "records": n, "error": (p.stderr or p.stdout)[-800:]}
            except subprocess.TimeoutExpired:
                row = {"run": run, "records": n, "error": f"timeout after {a.timeout:.0f} s"}
            print(json.dumps(row, default=str), flush=True)
            rows.append(row)
            if run == "generate" and "error" in row:
                break
    if a.md:
        _write_md(a, rows, load)
    return 0


def _write_md(a, rows, load) -> None:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [
        "# Entity resolution at scale: every stage on Dask (bench/er_scale.py)", "",
        f"- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; commit {commit}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load average "
        f"at start {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (the cores are shared with other jobs: timings are "
        "noisy)",
        f"- command: `python bench/er_scale.py --n {a.n} --workers {a.workers} --memory-limit {a.memory_limit}"
        + (" --splink" if a.splink else "") + (" --equivalence" if a.equivalence else "") + f" --md {a.md}`",
        "- data: `trustlab.er.generate_records(N, random_state=0)`; distributed input: a directory of parquet "
        "files; local and Splink input: one CSV", "",
        "| run | records | seconds | CPU seconds | load (start, end) | peak MB | F1 (P / R) | notes |",
        "|---|---:|---:|---:|---|---:|---|---|",
    ]
    for r in rows:
        if r["run"] == "generate":
            continue
        if "error" in r:
            lines.append(f"| {r['run']} | {r['records']:,} | – | – | – | – | – | failed: {str(r['error'])[-200:]!r} |")
            continue
        if r["run"] == "distributed":
            peak = (" / ".join(f"{v:,.0f}" for v in r["peak_mb_per_worker"])
                    + f" (workers); {r['driver_peak_mb']:,.0f} (driver)")
            note = (f"{r['workers']} worker processes × 1 thread, limit {r['memory_limit']} each; "
                    f"{r['candidate_pairs']:,} candidate pairs in {r['pair_partitions']} partitions (max "
                    f"{r['max_pairs_per_partition']:,}); encoded records {r.get('encoded_mb')} MB; fields and rules "
                    f"inferred on {r['inferred_on']}; without the evaluation stage (what compares with the "
                    f"peers' rows): {r.get('resolve_seconds', '–')} s, {r.get('resolve_cpu_seconds', '–')} CPU s; "
                    f"stages (s, CPU s of driver and workers): "
                    + ", ".join(f"{k} {v} ({r.get('stage_cpu_seconds', {}).get(k, '–')})"
                                for k, v in r["stage_seconds"].items()))
        else:
            peak = f"{r['peak_mb']:,.0f}"
            note = ""
            if "same_entities_as_distributed" in r:
                note = (f"same fields and rules as the distributed run; same entities as distributed: "
                        f"**{r['same_entities_as_distributed']}** ({r['entities_only_in_one_run']} entities differ)")
        load = " / ".join(str(x) for x in r.get("load", []))
        lines.append(f"| {r['run']} | {r['records']:,} | {r['seconds']:,} | {r.get('cpu_seconds', '–')} | {load} | "
                     f"{peak} | {r['f1']} ({r['precision']} / {r['recall']}) | {note} |")
    Path(a.md).parent.mkdir(parents=True, exist_ok=True)
    Path(a.md).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
