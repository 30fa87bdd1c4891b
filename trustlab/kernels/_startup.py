"""Cheaper first Numba dispatch in a fresh process.

The first call of any ``@njit`` function (even one loaded from the on-disk cache)
initialises Numba's CPU target, which imports ``numba.np.arraymath``; that module
checks for BLAS by importing ``scipy.linalg.cython_blas``, which executes the whole
``scipy.linalg`` package (~0.3-0.5 s, most of it SciPy's array-API shim pulling in
``numpy.f2py``). No trustlab kernel calls BLAS from Numba code, and the check only
needs the Cython BLAS/LAPACK extension modules, so :func:`preload_cython_blas`
loads exactly those two extension modules under their canonical names before the
first dispatch. They are the same shared objects ``scipy.linalg`` would load (a
later ``import scipy.linalg`` finds them in ``sys.modules`` and reuses them), so
nothing is loaded twice. It does nothing when ``scipy.linalg`` is already imported,
when the files cannot be found, or when ``TRUSTLAB_NO_BLAS_PRELOAD`` is set; any
error leaves the normal import path in charge.
"""
from __future__ import annotations

import os
import sys

__all__ = ["preload_cython_blas", "warm_caches"]

_done = False


def preload_cython_blas() -> None:
    global _done
    if _done:
        return
    _done = True
    if os.environ.get("TRUSTLAB_NO_BLAS_PRELOAD") or "scipy.linalg" in sys.modules:
        return
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.util.find_spec("scipy")
        if spec is None or not spec.submodule_search_locations:
            return
        base = os.path.join(list(spec.submodule_search_locations)[0], "linalg")
        loaded = {}
        for name in ("cython_blas", "cython_lapack"):
            full = f"scipy.linalg.{name}"
            if full in sys.modules:
                continue
            path = next((os.path.join(base, name + suf) for suf in importlib.machinery.EXTENSION_SUFFIXES
                         if os.path.exists(os.path.join(base, name + suf))), None)
            if path is None:
                return
            mspec = importlib.util.spec_from_file_location(full, path)
            if mspec is None or mspec.loader is None:
                return
            loaded[full] = mspec
        import scipy  # noqa: F401  (the parent package: cheap, no submodules)

        for full, mspec in loaded.items():
            mod = importlib.util.module_from_spec(mspec)
            sys.modules[full] = mod
            try:
                mspec.loader.exec_module(mod)
            except BaseException:
                sys.modules.pop(full, None)
                raise
    except Exception:  # pragma: no cover - fall back to Numba's own import
        return


def warm_caches(verbose: bool = False) -> dict[str, float]:
    """Compile (or load) the on-disk Numba cache of the common kernels once.

    Meant for a packaging or post-install step (``python -m trustlab.kernels``),
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

        from trustlab.commands.cliques import _write_output, read_edge_file
        from trustlab.cliques import maximal_cliques

        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "g.txt")
            with open(p, "w") as fh:
                fh.write("0 1\n1 2\n2 0\n2 3\n")
            _write_output(maximal_cliques(read_edge_file(p)), os.path.join(tmp, "c.txt"))

    def _privacy():
        from trustlab.privacy import privatize

        for dt in (np.float32, np.float64):
            X = np.random.default_rng(0).standard_normal((8, 40)).astype(dt)
            privatize(X, epsilon=1.0, m=4)
            privatize(X, epsilon=1.0, m=4, dtype=np.float64)
            privatize(X, epsilon=1.0, mechanism="m1")
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

