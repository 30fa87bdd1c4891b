"""SIGTERM ends the console command with 128 + 15 even where its exception cannot
propagate (issue 28): inside a finaliser, Python prints the handler's exception ("Exception
ignored in ...") and goes on, and a signal before ``main`` reaches its own handling used to
escape as a traceback."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32",
                                reason="POSIX signals")

DROPPED_IN_FINALISER = r"""
import os, signal, sys, time
import trustlab.cli as cli
import trustlab.commands.info as info

class Finaliser:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100):  # the handler runs in here: its exception cannot leave __del__
            time.sleep(0.001)

def run(args):
    Finaliser()  # collected at once
    for _ in range(600):  # 60 s of work in Python after the signal
        time.sleep(0.1)
    print("finished")
    return 0

info.run = run
sys.argv = ["trustlab", "info"]
cli.console_main()
"""

BEFORE_MAIN = r"""
import os, signal, sys
import trustlab.cli as cli

real = cli.build_parser

def build_parser():
    os.kill(os.getpid(), signal.SIGTERM)  # while the command line is parsed
    return real()

cli.build_parser = build_parser
sys.argv = ["trustlab", "info"]
cli.console_main()
"""


@pytest.mark.parametrize("script", [DROPPED_IN_FINALISER, BEFORE_MAIN], ids=["finaliser", "before-main"])
def test_sigterm_whose_exception_is_dropped_or_early_still_exits_143(script):
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=200)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "finished" not in proc.stdout
    assert "terminated by signal 15" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
