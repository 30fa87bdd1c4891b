"""``trustlab cliques EDGEFILE``: enumerate the maximal cliques of an edge-list graph."""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from trustlab.commands._common import CLIError, add_output_flags, atomic_path, atomic_write, emit_json, show_progress

HELP = "enumerate the maximal cliques of a graph given as an edge file"


def read_edge_file(path: str | Path):
    """Read a whitespace-separated edge file into a :class:`~trustlab.graph.CSRGraph`.

    One edge per line (``u v``); ``#`` starts a comment; blank lines are skipped;
    further columns (e.g. a weight) are ignored. Labels that all parse as integers
    are kept as integers, otherwise as strings. Only nodes that appear in an edge
    exist. Self-loops are dropped with a warning, duplicate edges merged.
    """
    from trustlab.graph import csr_from_edges

    path = Path(path)
    if path.is_dir():
        raise CLIError(f"{str(path)!r} is a directory, not an edge file")
    if not path.exists():
        raise CLIError(f"edge file {str(path)!r} does not exist")
    us: list[str] = []
    vs: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.split("#", 1)[0]
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 2:
                raise CLIError(
                    f"{path}:{lineno}: expected two node labels 'u v', got {line.strip()!r}"
                )
            us.append(parts[0])
            vs.append(parts[1])
    tokens = np.array(us + vs, dtype=object)
    try:
        ints = np.array([int(t) for t in tokens], dtype=np.int64)
        labels, inv = np.unique(ints, return_inverse=True)
    except (ValueError, OverflowError):
        labels, inv = np.unique(tokens.astype(str), return_inverse=True)
        labels = labels.astype(object)
    m = len(us)
    inv = inv.reshape(-1)
    return csr_from_edges(inv[:m], inv[m:], int(labels.shape[0]), nodes=labels)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "cliques",
        help=HELP,
        description=(
            "Enumerate every maximal clique of an undirected graph (Phase 1 of xER). "
            "EDGEFILE has one 'u v' pair per line; '#' starts a comment. Without "
            "--output a summary is printed; with --output FILE the cliques are written "
            "one per line (space-separated labels), or as NumPy arrays (indptr, indices, "
            "nodes) when FILE ends in .npz."
        ),
    )
    p.add_argument("edgefile", metavar="EDGEFILE", help="whitespace-separated edge list")
    p.add_argument("--backend", choices=["auto", "cpu", "gpu"], default="auto",
                   help="where to run (default: auto)")
    p.add_argument("--min-size", type=int, default=1, metavar="K",
                   help="report only maximal cliques with at least K nodes (default: 1)")
    p.add_argument("--output", "-o", metavar="FILE", default=None,
                   help="write the cliques to FILE (.txt: one clique per line; .npz: CSR arrays)")
    add_output_flags(p)
    p.set_defaults(func=run)


def _write_output(res, out: str) -> None:
    path = Path(out)
    if path.suffix == ".npz":
        nodes = res.nodes
        if nodes.dtype == object:
            nodes = nodes.astype(str)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, indptr=res.indptr, indices=res.indices, nodes=nodes)
        return
    labels = [str(x) for x in res.nodes.tolist()]
    with atomic_write(path, "w", encoding="utf-8") as fh:
        indptr, indices = res.indptr, res.indices
        buf = []
        for k in range(len(res)):
            buf.append(" ".join(labels[i] for i in indices[indptr[k]:indptr[k + 1]]))
            if len(buf) >= 65536:
                fh.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            fh.write("\n".join(buf) + "\n")


def run(args) -> int:
    from trustlab._backend import GPUUnavailableError
    from trustlab.cliques import maximal_cliques

    if args.min_size < 1:
        raise CLIError(f"--min-size must be >= 1, got {args.min_size}")
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = read_edge_file(args.edgefile)
    for w in caught:  # one line on stderr, never a warning traceback-style dump
        print(f"trustlab cliques: warning: {w.message}", file=sys.stderr)
    try:
        res = maximal_cliques(g, min_size=args.min_size, backend=args.backend,
                              progress=show_progress(args))
    except GPUUnavailableError as exc:
        raise CLIError(str(exc)) from None
    if args.output:
        _write_output(res, args.output)
    seconds = time.perf_counter() - t0
    summary = {
        "n_nodes": g.n_nodes,
        "n_edges": g.n_edges,
        "n_maximal_cliques": len(res),
        "max_clique_size": res.max_size,
        "min_size": args.min_size,
        "backend": res.backend,
        "seconds": round(seconds, 6),
        "output": args.output,
    }
    if args.json:
        emit_json(summary)
    elif not args.quiet:
        print(
            f"{summary['n_maximal_cliques']} maximal cliques (largest: {summary['max_clique_size']}) "
            f"in a graph with {g.n_nodes} nodes and {g.n_edges} edges "
            f"[{res.backend}, {seconds:.3f} s]"
            + (f"; written to {args.output}" if args.output else "")
        )
    return 0
