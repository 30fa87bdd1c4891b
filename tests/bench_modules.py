"""Loading a script of ``bench/`` as a module under test (the scripts are not a package)."""
from __future__ import annotations

import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


@contextmanager
def bench_module(name: str):
    """``bench/<name>.py`` loaded as a fresh module, with ``bench/`` on ``sys.path`` while in
    use (the scripts import each other, e.g. ``er_real``, from their own folder)."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"{name}_under_test", BENCH / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.path.remove(str(BENCH))
