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

The same shim also runs when ``scipy.sparse`` or ``scipy.optimize`` are imported (the
ER pipeline needs both): it reads every public attribute of ``numpy``, which imports
``numpy.f2py`` (~0.1-0.25 s, with ``charset_normalizer``) although nothing uses it.
:func:`defer_numpy_f2py` registers ``numpy.f2py`` as a lazily loaded module
(:class:`importlib.util.LazyLoader`, the standard library's mechanism): the module
object exists, and its code runs on the first attribute access, so ``numpy.f2py``
behaves exactly as before for anyone who uses it. Skipped when ``numpy.f2py`` is
already imported or ``TRUSTLAB_NO_LAZY_F2PY`` is set.
"""
from __future__ import annotations

import os
import sys

__all__ = ["preload_cython_blas", "defer_numpy_f2py"]

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


def defer_numpy_f2py() -> None:
    if os.environ.get("TRUSTLAB_NO_LAZY_F2PY") or "numpy.f2py" in sys.modules:
        return
    try:
        import importlib.util

        import numpy

        spec = importlib.util.find_spec("numpy.f2py")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return
        spec.loader = importlib.util.LazyLoader(spec.loader)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["numpy.f2py"] = mod
        spec.loader.exec_module(mod)  # lazy: only arms the load on first attribute access
        numpy.f2py = mod  # what the import system sets on the parent package
    except Exception:  # pragma: no cover - leave numpy's own lazy import in charge
        sys.modules.pop("numpy.f2py", None)
