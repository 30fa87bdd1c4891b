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

__all__ = ["preload_cython_blas"]

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
