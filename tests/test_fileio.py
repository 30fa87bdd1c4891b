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


# --- special files, symbolic links, orphaned temporary files (issue 28, items 1 and 5)

def _fifo_reader(path, box):
    import threading

    def read():
        with open(path, "rb") as fh:
            box.append(fh.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
@pytest.mark.parametrize("writer", ["write", "path"])
def test_fifo_output_is_streamed_never_replaced(tmp_path, writer):
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    box: list = []
    t = _fifo_reader(fifo, box)
    if writer == "write":
        with atomic_write(fifo) as fh:
            fh.write("hello\n")
    else:
        with atomic_path(fifo) as p:
            p.write_text("hello\n")
    t.join(10)
    assert box == [b"hello\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO, not a regular file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_cli_output_to_fifo_streams(tmp_path, capsys):
    import stat

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs")
    (tmp_path / "g.txt").write_text("0 1\n1 2\n2 0\n")
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    box: list = []
    t = _fifo_reader(fifo, box)
    rc = main(["cliques", str(tmp_path / "g.txt"), "-o", str(fifo), "-q"])
    t.join(10)
    assert rc == 0 and box == [b"0 1 2\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_output_writes_its_target(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with atomic_write(link) as fh:
        fh.write("new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    with atomic_path(link) as p:
        p.write_text("newer")
    assert link.is_symlink() and real.read_text() == "newer"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "target.txt")
    with atomic_write(dangling) as fh:
        fh.write("x")
    assert dangling.is_symlink() and (tmp_path / "target.txt").read_text() == "x"


def test_socket_output_is_refused_in_one_line(tmp_path, capsys):
    import socket

    if not hasattr(socket, "AF_UNIX"):
        pytest.skip("no Unix sockets")
    (tmp_path / "g.txt").write_text("0 1\n")
    sock_path = tmp_path / "s"
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(sock_path))
        rc = main(["cliques", str(tmp_path / "g.txt"), "-o", str(sock_path), "-q"])
        err = capsys.readouterr().err
        import stat

        assert stat.S_ISSOCK(os.stat(sock_path).st_mode)
    finally:
        s.close()
    assert rc == 2 and err.count("\n") == 1 and "socket" in err and "Traceback" not in err


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_temp_files_orphaned_by_a_kill_are_removed_by_the_next_write(tmp_path):
    out = tmp_path / "x.npy"
    host = _fileio._host_tag()
    dead = tmp_path / f".x.npy.tl{_dead_pid()}-{host}-abcdefgh.npy"
    alive = tmp_path / f".x.npy.tl{os.getppid()}-{host}-abcdefgh.npy"
    other_host = tmp_path / f".x.npy.tl{_dead_pid()}-00000000-abcdefgh.npy"
    for p in (dead, alive, other_host):
        p.write_bytes(b"partial")
    with atomic_path(out) as p:
        p.write_bytes(b"data")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert dead.name not in names  # its writer is gone
    assert alive.name in names and other_host.name in names  # may still be written
    assert out.read_bytes() == b"data"


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="no O_TMPFILE on this OS")
def test_atomic_write_leaves_no_name_a_kill_could_orphan(tmp_path):
    out = tmp_path / "o.txt"
    with atomic_write(out) as fh:
        fh.write("x")
        during = sorted(p.name for p in tmp_path.iterdir())
    if _fileio._open_tmpfile(tmp_path) is None:
        pytest.skip("this file system has no O_TMPFILE")
    assert during == []
    assert out.read_text() == "x"


SIGKILL_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from trustlab._fileio import atomic_path
    with atomic_path(sys.argv[1]) as p:
        p.write_bytes(b"x" * 1000)
        print("ready", flush=True)
        time.sleep(60)
    """
)


def test_sigkill_orphan_is_cleaned_at_the_next_run(tmp_path):
    out = tmp_path / "v.npy"
    proc = subprocess.Popen([sys.executable, "-c", SIGKILL_SCRIPT, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert len(list(tmp_path.iterdir())) == 1  # the hidden temporary file
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with atomic_path(out) as p:
        p.write_bytes(b"y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.npy"]


def test_privatize_commits_the_record_after_the_vectors(tmp_path, monkeypatch):
    import numpy as np

    from trustlab.privacy.io import privatize_file

    src = tmp_path / "x.npy"
    np.save(src, np.random.default_rng(0).standard_normal((50, 100)))
    order = []
    real = os.replace

    def spy(a, b, *args, **kw):
        order.append(os.path.basename(str(b)))
        return real(a, b, *args, **kw)

    monkeypatch.setattr(_fileio.os, "replace", spy)
    privatize_file(src, tmp_path / "y.npy", epsilon=2.0, m=8, record_path=tmp_path / "y.json")
    assert [n for n in order if n in ("y.npy", "y.json")] == ["y.npy", "y.json"]
    assert json_load(tmp_path / "y.json")["n"] == 50


def json_load(p):
    import json

    return json.loads(open(p).read())


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask") or not hasattr(signal, "SIGHUP"), reason="POSIX")
def test_held_signals_are_delivered_when_the_block_ends():
    got = []
    old = signal.signal(signal.SIGHUP, lambda s, f: got.append(s))
    try:
        with _fileio.held_signals() as hold:
            hold.start()
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.05)
            assert got == []  # held while both outputs are renamed
        for _ in range(100):
            if got:
                break
            time.sleep(0.01)
        assert got == [signal.SIGHUP]
    finally:
        signal.signal(signal.SIGHUP, old)
