"""``trustlab warmup``: fill the Numba on-disk cache of the kernels once.

Run it as a packaging or post-install step so that the first real call after an
install does not pay the one-off compilation. Numba compiles under one process-wide
lock (threads do not compile in parallel), so with ``--jobs N`` the kernel families
compile in up to N separate interpreters at once, each writing its own kernels to the
shared cache.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["FAMILIES", "warm_caches", "register", "run"]


def _cliques():
    import numpy as np

    from trustlab.cliques import _enumerate_cpu, _run_chunks, count_cliques
    from trustlab.graph import as_csr_graph
    from trustlab.kernels.cliques_cpu import edges_to_csr

    # the kernels themselves: the public calls would take their exact cold-cache Python
    # paths on a graph this small and compile nothing
    g = as_csr_graph(np.array([[0, 1], [1, 2], [2, 0], [2, 3]]))
    _enumerate_cpu(g, 1)
    _run_chunks(g, 1, materialize=False)
    count_cliques(g)
    edges_to_csr(np.array([0, 1]), np.array([1, 2]), 3)


def _cliques_cli():
    import tempfile

    import numpy as np

    from trustlab.graph import _read_int_edges_fast
    from trustlab.kernels.cliques_cpu import clique_line_bytes, format_clique_lines

    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "g.txt")
        with open(p, "w") as fh:
            fh.write("0 1\n1 2\n2 0\n2 3\n")
        _read_int_edges_fast(Path(p))  # the reader kernels (read_edge_file would read it in Python)
    ip = np.array([0, 2], np.int64)
    ix = np.array([0, 1], np.int32)
    lab_len = np.ones(2, np.int64)
    out = np.empty(int(clique_line_bytes(ip, ix, lab_len).sum()), np.uint8)
    format_clique_lines(ip, ix, np.frombuffer(b"01", np.uint8), np.array([0, 1, 2], np.int64), 0, 1, out)


def _privacy():
    import numpy as np

    from trustlab.kernels.privacy_cpu import noise_into
    from trustlab.privacy import mechanisms, privatize
    from trustlab.privacy.mechanisms import _PARALLEL_ROWS

    # the kernels themselves: on inputs this small the public calls would take the exact
    # NumPy twins of a cold cache and compile nothing
    left = mechanisms._twin_work_left[0]
    mechanisms._twin_work_left[0] = 0
    try:
        for dt in (np.float32, np.float64):
            X = np.random.default_rng(0).standard_normal((8, 40)).astype(dt)
            privatize(X, epsilon=1.0, m=4)
            privatize(X, epsilon=1.0, m=4, dtype=np.float64)
            privatize(X, epsilon=1.0, mechanism="m1")
        # the parallel fused float32 projection + noise (chunks of >= _PARALLEL_ROWS rows)
        X = np.zeros((_PARALLEL_ROWS, 8), np.float32)
        privatize(X, epsilon=1.0, m=4)
        privatize(X, epsilon=1.0, m=4, dtype=np.float64)
    finally:
        mechanisms._twin_work_left[0] = left
    for dt in (np.float32, np.float64):
        P = np.zeros((2, 3), dt)
        noise_into(P, P, 1.0, np.uint64(1), np.uint64(2), np.int64(0))
    noise_into(np.zeros((2, 3)), np.zeros((2, 3), np.float32), 1.0, np.uint64(1), np.uint64(2), np.int64(0))


def _partition():
    import numpy as np

    from trustlab.solvers import colgen, heuristic, partition, sparse

    heuristic.ensure_compiled()  # the search every method starts with
    colgen.ensure_compiled()  # branch and price's pricing (cpp, components <= 64 nodes)
    sparse.ensure_compiled()  # the O(n + m) search of large sparse components
    W = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    partition(W, method="cpp", random_state=0)


def _resolve():
    from trustlab.kernels import er

    for name in er._LOADERS:  # explicit signatures: the first lookup compiles (or loads) it
        getattr(er, name)


def _weat():
    from trustlab.kernels import weat

    for name in weat._LOADERS:
        getattr(weat, name)


#: kernel family -> the function that compiles (or loads) its kernels, in the order
#: parallel runs start them (the longest first)
FAMILIES = {
    "partition": _partition,
    "cliques": _cliques,
    "privacy": _privacy,
    "cliques CLI I/O": _cliques_cli,
    "resolve": _resolve,
    "weat": _weat,
}

_CHILD = ("import json, sys, time\n"
          "from trustlab.commands.warmup import FAMILIES\n"
          "t = time.perf_counter()\n"
          "FAMILIES[sys.argv[1]]()\n"
          "print(json.dumps(time.perf_counter() - t))\n")


def warm_caches(verbose: bool = False, jobs: int = 1, families=None) -> dict[str, float]:
    """Compile (or load) the on-disk Numba cache of the kernels once.

    Meant for a packaging or post-install step (``trustlab warmup``), so that the first
    real call after an install does not pay the one-off compilation (tens of seconds on
    a small CPU). Nothing runs in the background.

    Parameters
    ----------
    verbose : bool
        Print each family's seconds as it finishes.
    jobs : int
        Families compiled at once. 1: one after the other in this process. More: each
        family in its own interpreter, up to ``jobs`` at a time (Numba compiles under
        a process-wide lock, so only separate processes compile in parallel; on a
        2-core machine two jobs take about half the time of one).
    families : iterable of str, optional
        Names from :data:`FAMILIES` (default: all).

    Returns
    -------
    dict
        Seconds per family (measured where it ran).

    Examples
    --------
    >>> from trustlab.commands.warmup import warm_caches
    >>> sorted(warm_caches(families=["weat"]))
    ['weat']
    """
    names = list(FAMILIES) if families is None else list(families)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise ValueError(f"warm_caches: unknown kernel families {unknown}; valid: {list(FAMILIES)}")
    if jobs < 1:
        raise ValueError(f"warm_caches: jobs must be >= 1; got {jobs}")
    out: dict[str, float] = {}
    if jobs == 1:
        for name in names:
            t = time.perf_counter()
            FAMILIES[name]()
            out[name] = time.perf_counter() - t
            if verbose:
                print(f"{name}: {out[name]:.1f} s", flush=True)
        return out
    pending = list(names)
    running: dict[str, subprocess.Popen] = {}
    errors = []
    while pending or running:
        while pending and len(running) < jobs:
            name = pending.pop(0)
            running[name] = subprocess.Popen([sys.executable, "-c", _CHILD, name], stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True)
        for name, p in list(running.items()):
            if p.poll() is None:
                continue
            stdout, stderr = p.communicate()
            del running[name]
            if p.returncode:
                errors.append(f"{name}: {stderr.strip().splitlines()[-1] if stderr.strip() else p.returncode}")
                continue
            out[name] = float(stdout.strip().splitlines()[-1])
            if verbose:
                print(f"{name}: {out[name]:.1f} s", flush=True)
        time.sleep(0.05)
    if errors:
        raise RuntimeError("warm_caches: " + "; ".join(errors))
    return out


def register(subparsers) -> None:
    import numbers

    from trustlab._validation import Interval
    from trustlab.commands._common import add_output_flags, constrained

    p = subparsers.add_parser(
        "warmup", help="compile the Numba kernels once (a post-install step)",
        description="Compile (or load) the on-disk Numba cache of the partition, entity-resolution, clique, "
                    "privacy and WEAT kernels, so that the first real call after an install does not pay the "
                    "compilation.")
    p.add_argument("--jobs", type=constrained([Interval(numbers.Integral, 1, 64, closed="both")]), default=1,
                   help="kernel families compiled at once, each in its own process (default 1: one after the "
                        "other in this process; more helps only on an idle multi-core machine)")
    add_output_flags(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from trustlab.commands._common import emit_json

    jobs = args.jobs
    t = time.perf_counter()
    out = warm_caches(verbose=not args.json and not getattr(args, "quiet", False), jobs=jobs)
    total = time.perf_counter() - t
    if args.json:
        emit_json({"families": out, "jobs": jobs, "seconds": total})
    elif not getattr(args, "quiet", False):
        print(f"total: {total:.1f} s ({jobs} at once)")
    return 0
