"""``trustlab warmup``: fill the Numba on-disk cache of the common kernels once.

Run it as a packaging or post-install step so that the first real call after an
install does not pay the one-off compilation.
"""
from __future__ import annotations

__all__ = ["warm_caches", "register", "run"]


def warm_caches(verbose: bool = False) -> dict[str, float]:
    """Compile (or load) the on-disk Numba cache of the common kernels once.

    Meant for a packaging or post-install step (``trustlab warmup``),
    so that the first real call after an install does not pay the one-off compilation
    (tens of seconds on a small CPU). Runs each family on a tiny input in this process;
    nothing runs in the background. Returns seconds per family.
    """
    import time

    import numpy as np

    def _cliques():
        from trustlab.cliques import count_cliques, count_maximal_cliques, maximal_cliques

        e = np.array([[0, 1], [1, 2], [2, 0], [2, 3]])
        maximal_cliques(e)
        count_maximal_cliques(e)
        count_cliques(e)

    def _cliques_cli():
        import os
        import tempfile

        from trustlab.cliques import maximal_cliques
        from trustlab.commands.cliques import _write_output
        from trustlab.graph import read_edge_file

        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "g.txt")
            with open(p, "w") as fh:
                fh.write("0 1\n1 2\n2 0\n2 3\n")
            _write_output(maximal_cliques(read_edge_file(p)), os.path.join(tmp, "c.txt"))

    def _privacy():
        from trustlab.privacy import privatize
        from trustlab.privacy.mechanisms import _PARALLEL_ROWS

        for dt in (np.float32, np.float64):
            X = np.random.default_rng(0).standard_normal((8, 40)).astype(dt)
            privatize(X, epsilon=1.0, m=4)
            privatize(X, epsilon=1.0, m=4, dtype=np.float64)
            privatize(X, epsilon=1.0, mechanism="m1")
        # the parallel fused float32 projection + noise (chunks of >= _PARALLEL_ROWS rows)
        X = np.zeros((_PARALLEL_ROWS, 8), np.float32)
        privatize(X, epsilon=1.0, m=4)
        privatize(X, epsilon=1.0, m=4, dtype=np.float64)
        from trustlab.kernels.privacy_cpu import noise_into

        for dt in (np.float32, np.float64):
            P = np.zeros((2, 3), dt)
            noise_into(P, P, 1.0, np.uint64(1), np.uint64(2), np.int64(0))
        noise_into(np.zeros((2, 3)), np.zeros((2, 3), np.float32), 1.0, np.uint64(1), np.uint64(2), np.int64(0))

    out = {}
    for name, fn in (("cliques", _cliques), ("cliques CLI I/O", _cliques_cli), ("privacy", _privacy)):
        t = time.perf_counter()
        fn()
        out[name] = time.perf_counter() - t
        if verbose:
            print(f"{name}: {out[name]:.1f} s")
    return out




def register(subparsers) -> None:
    p = subparsers.add_parser(
        "warmup", help="compile the Numba kernels once (a post-install step)",
        description="Compile (or load) the on-disk Numba cache of the clique and privacy kernels, so "
                    "that the first real call after an install does not pay the compilation.")
    p.set_defaults(func=run)


def run(args) -> int:
    for name, sec in warm_caches().items():
        print(f"{name}: {sec:.1f} s")
    return 0
