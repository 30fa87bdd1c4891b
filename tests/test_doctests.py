"""Every module's docstring examples run as written (one collector for the package)."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import trustlab

#: modules whose import needs an optional GPU stack
SKIP = {"trustlab.kernels.cliques_cuda", "trustlab.kernels.weat_cuda", "trustlab.kernels.privacy_gpu"}


def _modules() -> list[str]:
    names = ["trustlab"]
    for info in pkgutil.walk_packages(trustlab.__path__, prefix="trustlab."):
        if info.name not in SKIP:
            names.append(info.name)
    return sorted(names)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    mod = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(mod, name, globs=dict(vars(mod))):
        if test.examples:
            runner.run(test)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{res.failed} of {res.attempted} examples failed in {name}"
