"""``trustlab partition``: clique partitioning of a CP-Lib matrix or weighted edge list."""
from __future__ import annotations

from trustlab.commands._common import (
    PARALLELISM_OPTION,
    CLIError,
    add_output_flags,
    atomic_write,
    constrained,
    deprecated_alias,
    emit_json,
    seed_type,
    show_progress,
)

_API = "trustlab.solvers.api:partition"  # the declared constraints the options share


def register(sub) -> None:
    p = sub.add_parser(
        "partition",
        help="clique partitioning (exact CPP with certificates, xER QSP/LSP, SPP, heuristic)",
        description="Partition a weighted graph into cliques of maximum within-cluster weight. "
        "cplib: first number n, then the upper triangle row by row, with or without the (zero) diagonal, "
        "or the full symmetric matrix (every pair is an edge). "
        "edgelist: 'i j weight' lines; a missing pair may not share a cluster.",
    )
    p.add_argument("instance", metavar="INSTANCE", help="instance file")
    p.add_argument("--format", choices=["cplib", "edgelist"], default="cplib", help="instance format (default cplib)")
    p.add_argument("--method", choices=["auto", "cpp", "qsp", "spp", "heuristic"], default="auto",
                   help="cpp: exact, proves optimality; qsp: xER's quadratic set packing over maximal cliques "
                   "(CP-SAT); spp: set packing over all cliques (CP-SAT); heuristic: pivot + local search, "
                   "approximate; auto: cpp on components up to 400 nodes, heuristic above (default auto)")
    p.add_argument(
        "--time-limit",
        type=constrained(_API, "time_limit"),
        default=None,
        metavar="S",
        help="wall-clock seconds for the whole call, shared by the components "
        "(default: 60 + 0.1 per node, at most 600; inf: no limit)",
    )
    p.add_argument(PARALLELISM_OPTION, type=constrained(_API, "n_jobs"), default=None, metavar="N",
                   help="threads on this machine: components solved in parallel, the threads left to a "
                   "component run cpp's exact pricing (default: the CPU count)")
    portfolio = p.add_argument("--cpsat-portfolio", dest="workers", type=constrained(_API, "workers"), default=None,
                               metavar="N", help="CP-SAT search workers (its num_workers) for qsp, spp: below 8 one "
                               "worker with linearization level 2, from 8 up CP-SAT's default portfolio "
                               "(default: 1)")
    deprecated_alias(p, "--workers", portfolio)
    p.add_argument("-M", "--partitions-per-clique", dest="M", type=constrained(_API, "M"), default=None,
                   help="partitions per maximal clique for qsp (the xER paper's M; default 10)")
    p.add_argument("--seed", type=seed_type(), default=0, help="random seed of the heuristic (default 0)")
    p.add_argument("--output", "-o", default=None, metavar="FILE",
                   help="write 'node<TAB>cluster' lines here (atomically)")
    add_output_flags(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from trustlab.solvers import partition
    from trustlab.solvers.io import read_instance

    data = read_instance(args.instance, args.format)
    if args.time_limit is not None and args.time_limit <= 0:
        raise CLIError(f"--time-limit must be > 0 seconds, got {args.time_limit}")
    res = partition(data, method=args.method, time_limit=args.time_limit, M=args.M, workers=args.workers,
                    n_jobs=args.jobs, random_state=args.seed, progress=show_progress(args))
    if args.output:
        with atomic_write(args.output) as fh:
            for v, l in zip(res.nodes, res.labels.tolist()):
                fh.write(f"{v}\t{l}\n")
    if args.json:
        d = res.to_dict(include_labels=True)
        d.update(exact_summary(d["components"]))
        emit_json(d)
        return 0
    print(f"status      {res.status}")
    print(f"objective   {res.objective:.10g}")
    print(f"bound       {res.bound:.10g}")
    print(f"gap         {res.gap:.3g}")
    print(f"n_clusters  {res.n_clusters}")
    print(f"seconds     {res.seconds:.3f}")
    if args.verbose:
        for k, c in enumerate(res.clusters):
            print(f"cluster {k}: {' '.join(map(str, c))}")
    return 0


def exact_summary(components: list[dict]) -> dict:
    """Whole-instance summary of the exact solver's statistics for ``--json``.

    ``root_bound``: sum over components of the proven bound at the end of the
    cutting-plane phase (a component without one, e.g. solved by the heuristic,
    contributes its final bound), so it is itself a proven bound; ``cuts_by_family``
    and ``nodes`` are summed; ``phase`` is where the largest component ended.
    """
    if not components:
        return {"root_bound": 0.0, "cuts_by_family": {}, "nodes": 0, "phase": "trivial"}
    fams: dict[str, int] = {}
    for c in components:
        for k, v in (c.get("cuts_by_family") or {}).items():
            fams[k] = fams.get(k, 0) + int(v)
    big = max(components, key=lambda c: c.get("size", 0))
    return {
        "root_bound": float(sum(c.get("root_bound", c["bound"]) for c in components)),
        "cuts_by_family": fams,
        "nodes": int(sum(c.get("nodes", 0) for c in components)),
        "phase": big.get("phase", big.get("method", "")),
    }
