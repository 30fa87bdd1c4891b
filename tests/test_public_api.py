"""The thin public API resolves, and every CLI subcommand is wired and documented."""
import subprocess
import sys

import pytest

import trustlab
from trustlab.cli import COMMAND_MODULES, build_parser, main


@pytest.mark.parametrize("name", sorted(trustlab._EXPORTS))
def test_every_top_level_export_resolves(name):
    obj = getattr(trustlab, name)
    assert obj is not None
    if callable(obj) and not isinstance(obj, type):
        assert obj.__doc__, f"trustlab.{name} has no docstring"


def test_every_command_module_is_registered():
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"trustlab.commands.{name}")  # must exist
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for cmd in ("info", "cliques", "partition", "resolve", "privatize", "privacy-eval", "bias",
                "explain-metrics"):
        assert cmd in sub.choices, cmd


@pytest.mark.parametrize("cmd", ["cliques", "partition", "resolve", "privatize", "privacy-eval",
                                 "bias", "explain-metrics"])
def test_subcommand_help(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    assert "usage: trustlab" in capsys.readouterr().out


def test_console_script_runs_without_gpu_stack():
    out = subprocess.run([sys.executable, "-m", "trustlab.cli", "info", "--json"],
                         capture_output=True, text=True, check=True)
    assert '"cpu": true' in out.stdout


def test_missing_input_file_is_a_one_line_error(tmp_path, capsys):
    rc = main(["cliques", str(tmp_path / "nope.edges")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "Traceback" not in err and "error" in err
