"""``trustlab resolve`` on a Dask cluster: ``--client ADDRESS`` / ``--local-cluster N``, or a
directory as INPUT (every stage on Dask, :func:`trustlab.er.distributed.resolve_distributed`)."""
from __future__ import annotations

import numbers
import os
import sys
import time

from trustlab._validation import Interval
from trustlab.commands._common import CLIError, constrained, emit_json, show_progress

#: resolve options the distributed path does not take (dest name -> flag)
_LOCAL_ONLY = {"dataset": "--dataset", "labels": "--labels", "link_type": "--link-only/--link-type",
               "one_to_one": "--one-to-one", "save_model": "--save-model", "model": "--model",
               "existing": "--existing", "pairs": "--pairs", "report": "--report", "column_map": "--column-map",
               "compare": "--compare"}


def add_arguments(p) -> None:
    """The cluster options of ``trustlab resolve``."""
    g = p.add_argument_group("scale-out (every stage on Dask; INPUT a file or a directory of parquet/CSV files, "
                             "--output a directory of partitioned parquet)")
    g.add_argument("--client", metavar="ADDRESS", help="run on the Dask scheduler at ADDRESS (e.g. tcp://host:8786)")
    workers = constrained([Interval(numbers.Integral, 1, 256, closed="both")])
    g.add_argument("--local-cluster", metavar="N", type=workers, help="start a local Dask cluster of N worker "
                   "processes (one thread each) and run on it")
    g.add_argument("--work-dir", metavar="DIR", help="directory for the intermediates the workers write and read "
                   "(records, encodings, pairs; removed at the end; default: the system's temporary directory); on "
                   "several machines, one every worker can reach")


def wanted(args) -> bool:
    """Whether this run goes to the cluster: a cluster option, or one INPUT that is a directory."""
    return bool(args.client or args.local_cluster) or (len(args.input or []) == 1 and os.path.isdir(args.input[0]))


def run(args) -> int:
    """``trustlab resolve`` with every stage on Dask."""
    from trustlab.er.distributed import resolve_distributed

    bad = [flag for dest, flag in _LOCAL_ONLY.items() if getattr(args, dest, None) not in (None, False, "")]
    if bad:
        raise CLIError(f"{', '.join(bad)} cannot be combined with a Dask run (--client, --local-cluster or a "
                       "directory INPUT); drop them or resolve in memory")
    if len(args.input or []) != 1:
        raise CLIError("a Dask run reads one INPUT: a file, a directory or a glob of parquet/CSV files")
    if args.client and args.local_cluster:
        raise CLIError("give --client ADDRESS or --local-cluster N, not both")
    kw: dict = {"id_col": args.id_col, "fields": args.fields, "truth": args.truth, "method": args.method,
                "threshold": args.threshold, "time_limit": args.time_limit, "random_state": args.seed,
                "output": args.output, "progress": show_progress(args)}
    if args.blocking:
        from trustlab.er.rules import split_rules

        kw["blocking"] = split_rules(args.blocking)
    if args.max_block_size is not None:
        kw["max_block_size"] = args.max_block_size
    if getattr(args, "work_dir", None):
        kw["work_dir"] = args.work_dir
    src = args.input[0]
    if os.path.isfile(src):
        import dask.dataframe as dd

        src = dd.read_parquet(src) if src.endswith((".parquet", ".pq")) else \
            dd.read_csv(src, dtype=str, keep_default_na=False, na_values=[""], blocksize="64MB",
                        sep=args.sep or ",")
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=args.local_cluster, threads_per_worker=1) if args.local_cluster else None
    client = Client(cluster if cluster is not None else args.client)
    try:
        if not (args.quiet or args.json):
            sys.stderr.write(f"Dask dashboard: {client.dashboard_link}\n")
        res = resolve_distributed(src, client=client, **kw)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    out = {"input": args.input[0], "method": args.method, **res.summary()}
    out["seconds"]["wall"] = round(time.perf_counter() - t0, 4)
    if args.json:
        emit_json(out)
        return 0
    if not args.quiet:
        w = sys.stdout.write
        w(f"{res.n_records} records -> {res.n_entities} entities ({args.method}, on Dask) in "
          f"{res.seconds['total']:.2f} s; wrote {res.output}\n")
        w("fields: " + ", ".join(out["fields"]) + "\nblocking: " + "; ".join(res.rules) + "\n")
        b = res.blocking
        w(f"{b['n_candidate_pairs']} candidate pairs in {b['pair_partitions']} partitions, "
          f"{b['n_completed_pairs']} completed\n")
        if res.metrics:
            m = res.metrics
            w("pairwise P/R/F1 %.4f / %.4f / %.4f\n" % (m["precision"], m["recall"], m["f1"]))
    return 0
