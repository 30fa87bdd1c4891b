"""The console entry point's fast exit (``os._exit`` after the command returned):
exit statuses, flushed stdout/stderr and complete output files are unchanged."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd

from trustlab.er import generate_records

_CODE = "import sys; sys.argv = ['trustlab'] + sys.argv[1:]; from trustlab.cli import console_main; console_main()"


def _console(*argv, env=None):
    return subprocess.run([sys.executable, "-c", _CODE, *argv], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def test_fast_exit_keeps_outputs_and_status(tmp_path):
    src = tmp_path / "r.csv"
    generate_records(200, random_state=3).to_csv(src, index=False)
    out = tmp_path / "out.csv"
    pairs = tmp_path / "pairs.csv"
    p = _console("resolve", str(src), "--id-col", "rec_id", "--truth", "entity", "--time-limit", "5",
                 "-o", str(out), "--pairs", str(pairs), "--json")
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)  # the whole JSON document reached the pipe
    assert info["n_records"] == 200 and info["output"] == str(out)
    frame = pd.read_csv(out)
    assert len(frame) == 200 and frame["entity_id"].notna().all()
    assert len(pd.read_csv(pairs)) == info["blocking"]["n_candidate_pairs"]
    assert not [f for f in os.listdir(tmp_path) if f not in {"r.csv", "out.csv", "pairs.csv"}]  # no temp files left
    # the same run with the normal interpreter exit writes the same entities
    out2 = tmp_path / "out2.csv"
    q = _console("resolve", str(src), "--id-col", "rec_id", "--time-limit", "5", "-o", str(out2), "-q",
                 env={"TRUSTLAB_NO_FAST_EXIT": "1"})
    assert q.returncode == 0, q.stderr
    assert pd.read_csv(out2)["entity_id"].tolist() == frame["entity_id"].tolist()


def test_fast_exit_error_status_and_message(tmp_path):
    p = _console("resolve", str(tmp_path / "missing.csv"))
    assert p.returncode == 2
    assert p.stderr.startswith("trustlab resolve: error:") and len(p.stderr.strip().splitlines()) == 1
    assert _console("--version").returncode == 0
    assert _console("resolve", "--no-such-flag").returncode == 2


def test_console_lets_openblas_threads_sleep_unless_the_user_chose():
    """The console script sets OPENBLAS_THREAD_TIMEOUT before NumPy loads (OpenBLAS reads it
    at load time) and keeps a value the user set; importing the library changes nothing."""
    probe = ("import os, sys; from trustlab.cli import _quiet_blas_threads; _quiet_blas_threads(); "
             "import numpy; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}

    def run(code, e):
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=900,
                              check=True).stdout.strip()

    assert run(probe, env) == "4"
    assert run(probe, {**env, "OPENBLAS_THREAD_TIMEOUT": "20"}) == "20"
    late = "import numpy, os; from trustlab.cli import _quiet_blas_threads; " \
           "_quiet_blas_threads(); print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"
    assert run(late, env) == "None"  # too late once NumPy is loaded: left alone
    assert run("import os, trustlab.privacy; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))", env) == "None"
