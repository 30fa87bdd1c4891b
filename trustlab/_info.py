"""Environment report used by ``trustlab info`` and :func:`trustlab.show_versions`."""
from __future__ import annotations

import importlib
import os
import platform
import sys
from typing import Any

_PACKAGES = ("numpy", "scipy", "numba", "networkx", "ortools", "pandas", "sklearn",
             "rapidfuzz", "matplotlib", "cupy", "numba_cuda", "igraph", "dask", "pyarrow")


def _version(name: str) -> str:
    try:
        mod = importlib.import_module(name)
    except Exception:
        return "not installed"
    return str(getattr(mod, "__version__", "installed"))


def info_dict() -> dict[str, Any]:
    """Versions, thread counts and backend availability as a plain dict."""
    from trustlab import __version__
    from trustlab._backend import backend_report

    try:
        import numba

        threads = {"numba_threads": numba.get_num_threads(), "numba_threading_layer": _layer()}
    except Exception:  # pragma: no cover
        threads = {}
    return {
        "trustlab": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        **threads,
        "packages": {p: _version(p) for p in _PACKAGES},
        "backends": backend_report(),
    }


def _layer() -> str:
    import numba

    try:
        return str(numba.config.THREADING_LAYER)
    except Exception:  # pragma: no cover
        return "unknown"


def show_versions() -> None:
    """Print :func:`info_dict` in a readable form.

    Examples
    --------
    >>> show_versions()  # doctest: +ELLIPSIS
    trustlab: ...
    python: ...
    """
    d = info_dict()
    for k, v in d.items():
        print(f"{k}: {v}")
