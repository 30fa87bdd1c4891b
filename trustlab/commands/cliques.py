"""``trustlab cliques EDGEFILE``: enumerate the maximal cliques of an edge-list graph."""
from __future__ import annotations

import numbers
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from trustlab._validation import Interval
from trustlab.commands._common import (
    CLIError,
    add_output_flags,
    atomic_path,
    atomic_write,
    constrained,
    emit_json,
    show_progress,
)

HELP = "enumerate the maximal cliques of a graph given as an edge file"


_CAP0 = Interval(numbers.Integral, 0, None, closed="left")


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
    p.add_argument("--min-size", type=constrained("trustlab.cliques:maximal_cliques", "min_size"), default=1,
                   metavar="K", help="report only maximal cliques with at least K nodes (default: 1)")
    p.add_argument("--count", action="store_true",
                   help="only count the maximal cliques (no memory for the output; see --max-count)")
    p.add_argument("--max-count", type=constrained([_CAP0]), default=10**10, metavar="N",
                   help="with --count: stop with an error past N maximal cliques (default 10^10, a few "
                        "minutes of counting; 0 lifts the cap)")
    p.add_argument("--max-cliques", type=constrained([_CAP0]), default=0, metavar="N",
                   help="stop with an error past N cliques (default 0: no count cap)")
    p.add_argument("--max-output-bytes", type=constrained([_CAP0]), default=2**30, metavar="B",
                   help="stop with an error once the stored cliques pass B bytes (default 1 GiB; "
                        "0 lifts the cap)")
    p.add_argument("--output", "-o", metavar="FILE", default=None,
                   help="write the cliques to FILE (.txt: one clique per line; .npz: CSR arrays)")
    add_output_flags(p)
    p.set_defaults(func=run)


#: outputs up to this many stored members are formatted in Python while the formatting
#: kernels are neither compiled nor cached
_PY_WRITE_MAX_MEMBERS = 1_000_000

#: the text output is formatted in pieces of at most this many cliques and members (a
#: kernel call over the whole output held a signal until it returned)
_WRITE_CLIQUES = 1 << 20
_WRITE_MEMBERS = 1 << 22


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
    from trustlab.kernels._jit import kernel_ready
    from trustlab.kernels.cliques_cpu import clique_line_bytes, format_clique_lines

    enc = [str(x).encode("utf-8") for x in res.nodes.tolist()]
    if res.indices.shape[0] <= _PY_WRITE_MAX_MEMBERS and not kernel_ready(format_clique_lines):
        # the same bytes without compiling the two formatting kernels (~1 s of CPU cold)
        ip = res.indptr.tolist()
        ix = res.indices.tolist()
        with atomic_write(path, "wb") as fh:
            fh.write(b"".join(b" ".join([enc[i] for i in ix[ip[k]:ip[k + 1]]]) + b"\n"
                              for k in range(len(ip) - 1)))
        return
    lab_len = np.fromiter((len(b) for b in enc), dtype=np.int64, count=len(enc))
    lab_off = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum(lab_len, out=lab_off[1:])
    lab_buf = np.frombuffer(b"".join(enc), dtype=np.uint8) if enc else np.zeros(0, np.uint8)
    n_cl = len(res)
    ip_all = res.indptr
    with atomic_write(path, "wb") as fh:
        a = 0
        while a < n_cl:  # pieces of at most _WRITE_CLIQUES cliques and (past one clique) _WRITE_MEMBERS members:
            # no kernel call here works on the whole output, so a signal is handled between pieces
            b = min(n_cl, a + _WRITE_CLIQUES,
                    max(a + 1, int(np.searchsorted(ip_all, ip_all[a] + _WRITE_MEMBERS, "right")) - 1))
            ip = ip_all[a:b + 1]
            ends = np.cumsum(clique_line_bytes(ip, res.indices, lab_len))
            c0 = 0
            while c0 < b - a:  # blocks of about 32 MiB bound the extra memory
                base = int(ends[c0 - 1]) if c0 else 0
                c1 = max(c0 + 1, int(np.searchsorted(ends, base + (1 << 25), side="right")))
                c1 = min(c1, b - a)
                out = np.empty(int(ends[c1 - 1]) - base, dtype=np.uint8)
                w = format_clique_lines(ip, res.indices, lab_buf, lab_off, c0, c1, out)
                fh.write(memoryview(out)[:w])
                c0 = c1
            a = b


def run(args) -> int:
    from trustlab._backend import GPUUnavailableError
    from trustlab.cliques import maximal_cliques
    from trustlab.graph import read_edge_file

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = read_edge_file(args.edgefile)
    for w in caught:  # one line on stderr, never a warning traceback-style dump
        print(f"trustlab cliques: warning: {w.message}", file=sys.stderr)
    if args.count:
        from trustlab.cliques import CliqueCountLimitError, count_maximal_cliques

        try:
            n = count_maximal_cliques(g, min_size=args.min_size, backend=args.backend,
                                      max_count=args.max_count or None)
        except (GPUUnavailableError, CliqueCountLimitError) as exc:
            raise CLIError(str(exc)) from None
        summary = {"n_nodes": g.n_nodes, "n_edges": g.n_edges, "n_maximal_cliques": n,
                   "min_size": args.min_size, "seconds": round(time.perf_counter() - t0, 6)}
        if args.json:
            emit_json(summary)
        elif not args.quiet:
            print(f"{n} maximal cliques (min size {args.min_size}) in a graph of {g.n_nodes} nodes "
                  f"and {g.n_edges} edges ({summary['seconds']:.3f} s)")
        return 0
    from trustlab.cliques import CliqueOutputLimitError

    try:
        res = maximal_cliques(g, min_size=args.min_size, backend=args.backend,
                              progress=show_progress(args), max_cliques=args.max_cliques or None,
                              max_output_bytes=args.max_output_bytes or None)
    except (GPUUnavailableError, CliqueOutputLimitError) as exc:
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
