"""The package's layering: CLI on top, library below it, kernels at the bottom.

* nothing below the CLI imports ``trustlab.cli`` or ``trustlab.commands``;
* kernels (``trustlab.kernels``) import only NumPy/Numba/stdlib and other kernels
  (plus the backend probes), never the layers that call them.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import trustlab

ROOT = Path(trustlab.__file__).parent
UPPER = ("trustlab.cli", "trustlab.commands")
KERNEL_MAY_IMPORT = ("trustlab.kernels", "trustlab._backend", "trustlab._lazy")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def _modules(sub: str = "") -> list[Path]:
    return sorted((ROOT / sub).rglob("*.py"))


@pytest.mark.parametrize("path", [p for p in _modules()
                                  if p.name != "cli.py" and "commands" not in p.relative_to(ROOT).parts],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_library_never_imports_the_cli(path):
    bad = [(ln, m) for ln, m in _imports(path) if any(m == u or m.startswith(u + ".") for u in UPPER)]
    assert not bad, f"{path.relative_to(ROOT)} imports the CLI layer: {bad}"


@pytest.mark.parametrize("path", _modules("kernels"), ids=lambda p: str(p.relative_to(ROOT)))
def test_kernels_import_only_kernels(path):
    bad = [(ln, m) for ln, m in _imports(path)
           if m.split(".")[0] == "trustlab"
           and not any(m == k or m.startswith(k + ".") for k in KERNEL_MAY_IMPORT)]
    assert not bad, f"{path.relative_to(ROOT)} imports from above the kernel layer: {bad}"
