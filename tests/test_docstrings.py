"""Every exported callable (``trustlab.__all__`` and every subpackage's ``__all__``) has a real
docstring with a Parameters section (where it takes parameters) and an Examples section whose
examples run (tests/test_doctests.py runs every module's examples, these included)."""
from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re

import pytest

import trustlab

#: exceptions and warnings take a message only: no Parameters section asked of them
_MESSAGE_ONLY = (BaseException,)


def _namespaces() -> list[str]:
    names = ["trustlab"] + [f"trustlab.{s}" for s in trustlab._SUBPACKAGES]
    for info in pkgutil.walk_packages(trustlab.__path__, prefix="trustlab."):
        if info.ispkg and info.name not in names and not info.name.startswith("trustlab.commands"):
            names.append(info.name)
    return [n for n in names if hasattr(importlib.import_module(n), "__all__")]


def _exports() -> list[tuple[str, object]]:
    seen, out = set(), []
    for ns in _namespaces():
        mod = importlib.import_module(ns)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{ns}.{name}", obj))
    return out


EXPORTS = _exports()


def _takes_parameters(obj) -> bool:
    if isinstance(obj, type) and issubclass(obj, _MESSAGE_ONLY):
        return False
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return True
    return any(p.name != "self" for p in sig.parameters.values())


def _section(doc: str, title: str) -> bool:
    return re.search(rf"^\s*{title}\n\s*-{{{len(title)}}}\s*$", doc, flags=re.M) is not None


def test_the_exports_are_all_found():
    # every subpackage with an __all__ is walked (a new one is picked up on its own)
    from trustlab.datasets import load_er_dataset
    from trustlab.metrics.bias import weat

    found = {id(obj) for _, obj in EXPORTS}
    wanted = (trustlab.resolve, weat, trustlab.privatize, trustlab.partition, load_er_dataset)
    assert all(id(f) in found for f in wanted)
    assert len(EXPORTS) > 150


@pytest.mark.parametrize("name, obj", EXPORTS, ids=[n for n, _ in EXPORTS])
def test_exported_callable_has_parameters_and_examples(name, obj):
    doc = obj.__doc__ or ""
    auto = f"{getattr(obj, '__name__', '')}("  # the docstring dataclasses make up
    assert doc.strip() and not doc.startswith(auto), f"{name} has no docstring of its own"
    if _takes_parameters(obj):
        want = ("Parameters", "Attributes") if isinstance(obj, type) else ("Parameters",)
        assert any(_section(doc, t) for t in want), f"{name}: no {' or '.join(want)} section"
    assert _section(doc, "Examples"), f"{name}: no Examples section"
    examples = doctest.DocTestParser().get_examples(doc)
    assert examples, f"{name}: its Examples section has no >>> example"
