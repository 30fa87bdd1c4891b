"""trustlab.metrics: clustering, bias, explanation and reliability metrics.

Thin lazy re-export; each function lives in (and is documented at) its module:
:mod:`trustlab.metrics.clustering`, :mod:`trustlab.metrics.bias`,
:mod:`trustlab.metrics.explanation`, :mod:`trustlab.metrics.reliability`.
"""
from __future__ import annotations

import importlib
from typing import Any

# public name -> module (relative to trustlab.metrics); add yours with a one-line edit
_EXPORTS: dict[str, str] = {
}

_SUBMODULES = ("clustering", "bias", "explanation", "reliability", "embeddings")


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"trustlab.metrics.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        mod = importlib.import_module(f"trustlab.metrics.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'trustlab.metrics' has no attribute {name!r}")


def __dir__():
    return sorted(list(_EXPORTS) + list(_SUBMODULES))
