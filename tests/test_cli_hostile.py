"""The CLI against hostile arguments: outputs that would destroy an input or each other,
missing output directories, non-UTF-8 text and warnings (bench/results/hostile_inputs.md).
Every user error is one line on stderr and exit status 2, before any work is done."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from trustlab.cli import main

CPLIB = "3\n1 -1\n2\n"


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "g.txt").write_text("0 1\n1 2\n")
    (tmp_path / "w.cplib").write_text(CPLIB)
    (tmp_path / "r.csv").write_text("id,name\n1,alice\n2,alicia\n3,bob\n")
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((5, 8)))
    return tmp_path


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return rc, cap.err


@pytest.mark.parametrize("argv, name, flag", [
    (["cliques", "{d}/g.txt", "-o", "{d}/g.txt"], "g.txt", "EDGEFILE"),
    (["partition", "{d}/w.cplib", "-o", "{d}/w.cplib"], "w.cplib", "INSTANCE"),
    (["resolve", "{d}/r.csv", "-o", "{d}/r.csv", "-q"], "r.csv", "INPUT"),
    (["privatize", "{d}/x.npy", "--epsilon", "1", "--m", "4", "-o", "{d}/o.npy", "--record", "{d}/x.npy"],
     "x.npy", "INPUT"),
])
def test_output_onto_the_input_is_refused(files, capsys, argv, name, flag):
    before = (files / name).read_bytes()
    rc, err = _run(capsys, *[a.format(d=files) for a in argv])
    assert rc == 2 and "would destroy the input" in err and flag in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (files / name).read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(files, capsys):
    rc, err = _run(capsys, "privatize", files / "x.npy", "--epsilon", "1", "--m", "4",
                   "-o", files / "o.npy", "--record", files / "o.npy")
    assert rc == 2 and "--output and --record both name" in err
    assert not (files / "o.npy").exists()


def test_missing_output_directory_is_reported_before_the_run(files, capsys, monkeypatch):
    import trustlab.er

    def boom(*a, **k):  # the resolution must not even start
        raise AssertionError("resolve ran")

    monkeypatch.setattr(trustlab.er, "resolve", boom)
    rc, err = _run(capsys, "resolve", files / "r.csv", "-o", files / "nodir" / "e.csv", "-q")
    assert rc == 2 and "output directory" in err and "does not exist" in err


@pytest.mark.parametrize("cmd", [["cliques"], ["partition", "--format", "edgelist"]])
def test_non_utf8_text_hint_matches_the_command(tmp_path, capsys, cmd):
    p = tmp_path / "latin.txt"
    p.write_bytes(b"caf\xe9 b 1\n")
    rc, err = _run(capsys, *cmd, p)
    # these commands have no --encoding option: do not tell the user to pass one
    assert rc == 2 and "not valid utf-8" in err and "--encoding" not in err and "iconv" in err


def test_resolve_still_suggests_encoding(tmp_path, capsys):
    p = tmp_path / "latin.csv"
    p.write_bytes(b"id,name\n1,caf\xe9\n2,cafe\n")
    rc, err = _run(capsys, "resolve", p, "-q")
    assert rc == 2 and "--encoding" in err


def test_warnings_are_one_line(tmp_path):
    src = tmp_path / "r.csv"
    src.write_text("id,name\n1,alice\n2,alicia\n3,bob\n")
    p = subprocess.run([sys.executable, "-m", "trustlab.cli", "resolve", str(src), "-q"],
                       capture_output=True, text=True, timeout=900)  # a hang guard only
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert lines and all(ln.startswith("trustlab resolve: warning: ") for ln in lines), p.stderr


@pytest.mark.parametrize("argv, flag", [
    (["partition", "{d}/w.cplib", "--time-limit=-1"], "--time-limit"),
    (["partition", "{d}/w.cplib", "-M", "0"], "-M"),
    (["privatize", "{d}/x.npy", "--epsilon", "1", "--m", "-1", "-o", "{d}/o.npy"], "--m"),
])
def test_bad_numbers_do_not_offer_none(files, capsys, argv, flag):
    # 'None' is how the library spells "not given"; a command line cannot pass it
    rc, err = _run(capsys, *[a.format(d=files) for a in argv])
    assert rc == 2 and f"argument {flag}: must be" in err and "or None" not in err


def test_resolve_labels_neither_column_nor_file(files, capsys):
    rc, err = _run(capsys, "resolve", files / "r.csv", "--labels", "nocol", "-q")
    assert rc == 2 and "neither a column of INPUT" in err and "['id', 'name']" in err


def test_output_that_is_a_directory_is_reported_before_the_run(files, capsys):
    (files / "outdir").mkdir()
    rc, err = _run(capsys, "partition", files / "w.cplib", "-o", files / "outdir")
    assert rc == 2 and "it is a directory; give a file name" in err
