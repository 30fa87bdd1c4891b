"""trustlab: fast, exact solvers and kernels for trustworthy NLP data work.

The top level is a thin, lazily-loaded re-export of the public API; every name
lives in (and is documented at) its home module. Importing :mod:`trustlab` does
not compile any Numba kernel or import CuPy.
"""
from trustlab._lazy import lazy_exports as _lazy_exports

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
    "ResolveSettings": "trustlab.er",
    # private embedding release
    "privatize": "trustlab.privacy",
    "ReleaseSettings": "trustlab.privacy",
    # misc
    "show_versions": "trustlab._info",
    "check_random_state": "trustlab._validation",
    "GPUUnavailableError": "trustlab._backend",
}
_SUBPACKAGES = ("kernels", "solvers", "er", "privacy", "metrics", "datasets")

__all__ = sorted(_EXPORTS) + list(_SUBPACKAGES) + ["__version__"]


__getattr__, __dir__ = _lazy_exports(globals(), _EXPORTS, _SUBPACKAGES)
