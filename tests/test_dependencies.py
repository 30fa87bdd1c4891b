"""Every hard dependency in pyproject.toml is imported by the package (none is dead weight)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: distribution name -> import name, where they differ
IMPORT_NAME = {"scikit-learn": "sklearn"}


def test_every_hard_dependency_is_imported_somewhere():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "trustlab").rglob("*.py"))
    unused = []
    for dep in deps:
        dist = re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0]
        mod = IMPORT_NAME.get(dist, dist.replace("-", "_"))
        if not re.search(rf"^\s*(import|from)\s+{re.escape(mod)}\b", source, flags=re.M):
            unused.append(dist)
    assert unused == [], f"hard dependencies no module imports: {unused}; make them an extra or drop them"
