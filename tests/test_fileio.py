"""Atomic output: permissions, clean errors, and temp-file cleanup on signals."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from trustlab import _fileio
from trustlab._fileio import atomic_path, atomic_write, live_temp_files
from trustlab.cli import main


def test_permissions_follow_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "a.txt") as fh:
            fh.write("x")
        with atomic_path(tmp_path / "b.npy") as p:
            p.write_bytes(b"x")
    finally:
        os.umask(old)
    assert (os.stat(tmp_path / "a.txt").st_mode & 0o777) == 0o644
    assert (os.stat(tmp_path / "b.npy").st_mode & 0o777) == 0o644
    old = os.umask(0o077)
    try:
        with atomic_write(tmp_path / "c.txt") as fh:
            fh.write("x")
    finally:
        os.umask(old)
    assert (os.stat(tmp_path / "c.txt").st_mode & 0o777) == 0o600


def test_failure_keeps_old_output_and_no_temp(tmp_path):
    out = tmp_path / "o.txt"
    out.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(out) as fh:
            fh.write("new")
            raise RuntimeError("boom")
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.txt"]
    assert live_temp_files() == []


def test_missing_dir_and_directory_target(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        with atomic_write(tmp_path / "nope" / "o.txt"):
            pass
    with pytest.raises(IsADirectoryError, match="is a directory"):
        with atomic_path(tmp_path):
            pass


def test_read_only_file_system_is_one_line_cli_error(tmp_path, monkeypatch, capsys):
    def erofs(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", erofs)
    edges = tmp_path / "g.edges"
    edges.write_text("0 1\n1 2\n")
    rc = main(["cliques", str(edges), "--output", str(tmp_path / "out.npz"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and "Read-only file system" in err and "out.npz" in err


SCRIPT = textwrap.dedent(
    """
    import sys, time
    import pandas as pd
    import trustlab.cli as cli
    orig = pd.DataFrame.to_csv
    def slow(self, path, *a, **k):
        orig(self, path, *a, **k)
        print("ready", flush=True)
        time.sleep(60)
    pd.DataFrame.to_csv = slow
    with cli.signal_cleanup():  # what the console script does around main()
        rc = cli.main(["resolve", sys.argv[1], "--id-col", "rid", "--fields", "name:name",
                       "--output", sys.argv[2], "-q"])
    sys.exit(rc)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_cli_signal_removes_temp_files_and_keeps_old_output(tmp_path, sig):
    inp = tmp_path / "in.csv"
    inp.write_text("rid,name\na,ann lee\nb,anne lee\nc,bob ray\n")
    out = tmp_path / "clusters.csv"
    out.write_text("old output\n")
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(inp), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        line = ""
        while time.time() < deadline:
            line = proc.stdout.readline()
            if line.strip() == "ready" or not line:
                break
        assert line.strip() == "ready", proc.stderr.read()
        assert any(p.name.startswith(".clusters.csv.") for p in tmp_path.iterdir())
        proc.send_signal(sig)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read()
    assert rc == 128 + sig, err
    assert "Traceback" not in err and f"terminated by signal {int(sig)}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clusters.csv", "in.csv"]
    assert out.read_text() == "old output\n"


def test_terminated_exit_code_cleans_live_files(tmp_path):
    fd, tmp = tempfile.mkstemp(dir=tmp_path)
    os.close(fd)
    _fileio._LIVE.add(tmp)
    assert _fileio.terminated_exit_code(_fileio._Terminated(signal.SIGTERM)) == 128 + signal.SIGTERM
    assert not os.path.exists(tmp) and live_temp_files() == []
    assert _fileio.terminated_exit_code(RuntimeError()) is None
