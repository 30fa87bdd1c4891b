"""The README's quick start and CI must agree (two commands; CI runs the test one)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _quick_start_commands():
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## Quick start\s*\n(.*?)^## ", text, flags=re.S | re.M)
    assert m, "README.md has no '## Quick start' section"
    blocks = re.findall(r"```(?:bash|sh|console)?\n(.*?)```", m.group(1), flags=re.S)
    assert len(blocks) == 1, "the quick start must be exactly one fenced code block"
    return [ln.strip() for ln in blocks[0].splitlines() if ln.strip() and not ln.strip().startswith("#")]


def test_quick_start_is_two_commands():
    cmds = _quick_start_commands()
    assert len(cmds) == 2, cmds
    assert "pip install" in cmds[0] and "trustlab" in cmds[0]
    assert "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command():
    test_cmd = _quick_start_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_cmd in ci, f"CI must run exactly {test_cmd!r}"
