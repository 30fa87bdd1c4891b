"""The CLI's signal handling lives in the console entry point only: ``main()`` (a library
call, used in-process by tests) leaves the process's signal handlers as it found them."""
import signal
import subprocess
import sys

import numpy as np
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


SIGTERM_MID_COMPARISON = r"""
import json, os, signal, sys, threading
import trustlab.cli as c
from trustlab.er import comparisons
try:
    from trustlab import _chunks
    _chunks.CHARS = 20_000  # small pieces, so that a small input makes many of them
except ImportError:  # before pieces existed
    pass
real = comparisons.process.cpdist
state = {"calls": 0, "inflight": 0, "at_signal": None, "chars_after": 0}

def send():
    state["at_signal"] = state["calls"]
    state["chars_after"] += state["inflight"]  # the call in progress when the signal is sent
    os.kill(os.getpid(), signal.SIGTERM)

def cpdist(a, b, **kw):
    chars = sum(map(len, a)) + sum(map(len, b))
    state["calls"] += 1
    if state["at_signal"] is not None:
        state["chars_after"] += chars  # a call started after the signal
    state["inflight"] = chars
    if state["calls"] == 3:  # the signal arrives while this call scores its pairs
        threading.Thread(target=send).start()
    return real(a, b, **kw)

comparisons.process.cpdist = cpdist
with c.signal_cleanup():
    rc = c.main(["resolve", sys.argv[1], "--id-col", "rec_id", "-o", sys.argv[2], "-q"])
print(json.dumps(state))
sys.exit(rc)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")
def test_sigterm_mid_comparison_exits_143_at_the_next_piece(tmp_path):
    """SIGTERM arriving while rapidfuzz scores pairs ends ``resolve`` with 128 + 15 before
    another piece of pairs is started (one long C call over every pair used to delay the
    handler by seconds), and leaves no temporary file beside the output."""
    from trustlab.er.synthetic import generate_records

    inp = tmp_path / "recs.csv"
    generate_records(1500, random_state=0).drop(columns=["entity"]).to_csv(inp, index=False)
    out = tmp_path / "out.csv"
    out.write_text("old output\n")
    proc = subprocess.run([sys.executable, "-c", SIGTERM_MID_COMPARISON, str(inp), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "terminated by signal 15" in proc.stderr and "Traceback" not in proc.stderr
    import json

    state = json.loads(proc.stdout.strip().splitlines()[-1])
    assert state["at_signal"] is not None
    # the handler ran before a second piece was started after the signal, so at most two
    # pieces (of <= 20,000 characters) were scored after it: one call over every pair
    # of a field (the code before the pieces) scored ~1.5 million characters
    assert state["calls"] - state["at_signal"] <= 1, state
    assert state["chars_after"] <= 2 * 20_000, state
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "recs.csv"]
    assert out.read_text() == "old output\n"


class _Stop(BaseException):
    pass


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")
def test_components_on_threads_are_dropped_when_a_signal_arrives(monkeypatch):
    """A signal while components are solved on threads ends ``partition`` at once: the
    components not started yet are dropped (``with ThreadPoolExecutor`` solved every one
    of them before the exception got out: 57 s after a SIGTERM on 600 components)."""
    import os
    import threading
    import time

    import scipy.sparse as sp

    from trustlab.solvers import api, partition

    real = api._solve_task
    calls = []
    lock = threading.Lock()

    def slow(*a, **k):
        with lock:
            calls.append(1)
            if len(calls) == 4:
                os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.02)
        return real(*a, **k)

    monkeypatch.setattr(api, "_solve_task", slow)
    n_comp = 300
    rows = np.concatenate([[3 * c, 3 * c, 3 * c + 1] for c in range(n_comp)])
    cols = np.concatenate([[3 * c + 1, 3 * c + 2, 3 * c + 2] for c in range(n_comp)])
    W = sp.coo_matrix((np.tile([1.0, -0.5, 2.0], n_comp), (rows, cols)), shape=(3 * n_comp, 3 * n_comp))

    def stop(signum, frame):
        raise _Stop

    old = signal.signal(signal.SIGUSR1, stop)
    try:
        with pytest.raises(_Stop):
            partition(W, method="heuristic", n_jobs=2, random_state=0)
    finally:
        signal.signal(signal.SIGUSR1, old)
    time.sleep(0.2)  # the running ones end on their own
    assert 4 <= len(calls) < n_comp // 5, len(calls)


def test_console_exit_after_a_signal_does_not_wait_for_worker_threads():
    """After SIGTERM/SIGHUP (status 128 + signum) the console script exits at once even when a
    worker thread is still inside a solver; the interpreter's own exit waits for it."""
    code = ("import sys, threading, trustlab.cli as c\n"
            "threading.Thread(target=threading.Event().wait, daemon=False).start()  # never ends\n"
            "c.main = lambda argv=None: 143\n"
            "sys.argv = ['trustlab', 'info']\n"
            "c.console_main()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 143, out.stderr


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")
def test_a_failure_while_a_signal_unwinds_still_exits_128_plus_signum(monkeypatch, capsys):
    """A library interrupted by SIGTERM may fail in its own clean-up (a Numba compilation
    cut in the middle left its dispatcher broken: ``RuntimeError: no compiled object yet``,
    exit 1 with a traceback); the command still ends as the signal: 143, one line."""
    import os

    from trustlab.commands import info

    sent = []

    def interrupted(args):
        try:
            if not sent:
                sent.append(1)
                os.kill(os.getpid(), signal.SIGTERM)  # the handler raises here
        finally:
            raise RuntimeError("no compiled object yet")  # the interrupted library's clean-up fails

    monkeypatch.setattr(info, "run", interrupted)
    with cli.signal_cleanup():
        rc = cli.main(["info"])
    assert rc == 128 + signal.SIGTERM
    assert capsys.readouterr().err.strip() == "trustlab info: terminated by signal 15"
    # the record of the signal goes with the handlers: a later error is an error again
    with pytest.raises(RuntimeError):
        cli.main(["info"])
