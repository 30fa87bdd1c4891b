"""The CLI's signal handling lives in the console entry point only: ``main()`` (a library
call, used in-process by tests) leaves the process's signal handlers as it found them."""
import signal
import subprocess
import sys

import pytest

from trustlab import cli

SIGNALS = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]


def _handlers():
    return {s: signal.getsignal(s) for s in SIGNALS}


@pytest.mark.parametrize("argv", [["info", "--json"], ["cliques", "no-such-file.edges"], ["--version"]])
def test_main_leaves_signal_handlers_as_it_found_them(argv, capsys):
    def mine(signum, frame):  # a host application's own handler
        pass

    old = {s: signal.signal(s, mine) for s in SIGNALS}
    try:
        cli.main(argv)
        assert _handlers() == {s: mine for s in SIGNALS}
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def test_signal_cleanup_restores_the_handlers_it_found():
    before = _handlers()
    with cli.signal_cleanup():
        assert all(signal.getsignal(s) is not before[s] for s in SIGNALS)
    assert _handlers() == before


def test_signal_cleanup_restores_after_an_exception():
    before = _handlers()
    with pytest.raises(RuntimeError), cli.signal_cleanup():
        raise RuntimeError("boom")
    assert _handlers() == before


def test_console_entry_point_installs_the_cleanup_handlers():
    # the console script (and only it) turns SIGTERM into a clean exit; the end-to-end
    # check with a real signal is tests/test_fileio.py::test_cli_signal_removes_temp_files...
    code = ("import signal, sys, trustlab.cli as c\n"
            "c.main = lambda argv=None: 0 if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL else 3\n"
            "sys.argv = ['trustlab', 'info']\n"
            "c.console_main()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
