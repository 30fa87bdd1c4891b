"""One mechanism for lazily loaded module attributes (PEP 562).

A package lists the names it re-exports and the module each lives in; nothing is
imported until a name is first looked up, then the value is stored in the package's
namespace so later lookups are plain attribute reads. Used by :mod:`trustlab`,
:mod:`trustlab.metrics` and :mod:`trustlab.privacy`.

Usage, at the bottom of a package's ``__init__.py``::

    __getattr__, __dir__ = lazy_exports(globals(), {"name": ".module"}, submodules=("module",))

:func:`lazy_attributes` is the general form: each name maps to a zero-argument loader
(e.g. a function that compiles a kernel on first use).
"""
from __future__ import annotations

import functools
import importlib
from typing import Any, Callable, Iterable, Mapping

__all__ = ["lazy_attributes", "lazy_exports"]


def lazy_attributes(namespace: dict, loaders: Mapping[str, Callable[[], Any]]):
    """Module ``__getattr__`` and ``__dir__`` for attributes produced on first use.

    Parameters
    ----------
    namespace : dict
        The module's ``globals()``; each loaded value is cached there.
    loaders : mapping of str to callable
        Attribute name -> zero-argument function returning its value.

    Returns
    -------
    (__getattr__, __dir__)
        Assign both at module level. ``dir(module)`` lists ``__all__`` when the module
        defines it (otherwise its globals) plus every lazy name.

    Examples
    --------
    >>> ns = {"__name__": "demo"}
    >>> getattr_, dir_ = lazy_attributes(ns, {"answer": lambda: 42})
    >>> getattr_("answer"), ns["answer"]
    (42, 42)
    >>> getattr_("question")
    Traceback (most recent call last):
    ...
    AttributeError: module 'demo' has no attribute 'question'
    """
    module_name = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        try:
            load = loaders[name]
        except KeyError:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}") from None
        value = load()
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace.get("__all__", namespace)) | set(loaders))

    return __getattr__, __dir__


def _attribute(module: str, package: str, name: str) -> Any:
    return getattr(importlib.import_module(module, package), name)


def lazy_exports(namespace: dict, exports: Mapping[str, str], submodules: Iterable[str] = ()):
    """Module ``__getattr__`` and ``__dir__`` re-exporting names from other modules on first use.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``.
    exports : mapping of str to str
        Public name -> the module that defines it, absolute (``"trustlab.cliques"``) or
        relative to the package (``".bias"``).
    submodules : iterable of str
        Submodules reachable as attributes (``trustlab.metrics.bias``) without an
        explicit import.

    Returns
    -------
    (__getattr__, __dir__)
        See :func:`lazy_attributes`.

    Examples
    --------
    >>> ns = {"__name__": "trustlab"}
    >>> getattr_, dir_ = lazy_exports(ns, {"check_random_state": "._validation"}, ("graph",))
    >>> getattr_("check_random_state").__name__, getattr_("graph").__name__
    ('check_random_state', 'trustlab.graph')
    >>> dir_()[-2:]
    ['check_random_state', 'graph']
    """
    package = namespace["__name__"]
    loaders: dict[str, Callable[[], Any]] = {
        name: functools.partial(_attribute, module, package, name) for name, module in exports.items()
    }
    for sub in submodules:
        loaders[sub] = functools.partial(importlib.import_module, f"{package}.{sub}")
    return lazy_attributes(namespace, loaders)


def defer_numpy_f2py() -> None:
    """Register ``numpy.f2py`` as a lazily loaded module (CLI processes only).

    SciPy's array-API shim runs when ``scipy.sparse`` or ``scipy.optimize`` are
    imported (the ER pipeline needs both) and reads every public attribute of
    ``numpy``, which imports ``numpy.f2py`` (~0.1-0.25 s, with ``charset_normalizer``)
    although nothing uses it. This registers it with
    :class:`importlib.util.LazyLoader` (the standard library's mechanism): the module
    object exists and its code runs on the first attribute access, so ``numpy.f2py``
    behaves exactly as before for anyone who uses it. Only the ``trustlab`` console
    command calls this (the process is its own); importing the library never does.
    Skipped when ``numpy.f2py`` is already imported or ``TRUSTLAB_NO_LAZY_F2PY`` is set.
    """
    import os
    import sys

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
