"""trustlab: fast, exact solvers and kernels for trustworthy NLP data work.

The top level is a thin, lazily-loaded re-export of the public API; every name
lives in (and is documented at) its home module. Importing :mod:`trustlab` does
not compile any Numba kernel or import CuPy.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> home module
_EXPORTS = {
    # Phase 1 of xER: maximal cliques
    "maximal_cliques": "trustlab.cliques",
    "count_cliques": "trustlab.cliques",
    "count_maximal_cliques": "trustlab.cliques",
    "CliqueResult": "trustlab.cliques",
    # Phase 2: clique partitioning
    "partition": "trustlab.solvers",
    "PartitionResult": "trustlab.solvers",
    "explain": "trustlab.solvers",
    # entity resolution
    "resolve": "trustlab.er",
    # private embedding release
    "privatize": "trustlab.privacy",
    # misc
    "show_versions": "trustlab._info",
    "check_random_state": "trustlab._validation",
    "GPUUnavailableError": "trustlab._backend",
}
_SUBPACKAGES = ("kernels", "solvers", "er", "privacy", "metrics", "datasets")

__all__ = sorted(_EXPORTS) + list(_SUBPACKAGES) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        mod = importlib.import_module(f"trustlab.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'trustlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
