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
    (["privatize", "{d}/x.npy", "--epsilon", "1", "--target-dim", "4", "-o", "{d}/o.npy", "--record", "{d}/x.npy"],
     "x.npy", "INPUT"),
])
def test_output_onto_the_input_is_refused(files, capsys, argv, name, flag):
    before = (files / name).read_bytes()
    rc, err = _run(capsys, *[a.format(d=files) for a in argv])
    assert rc == 2 and "would destroy the input" in err and flag in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (files / name).read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(files, capsys):
    rc, err = _run(capsys, "privatize", files / "x.npy", "--epsilon", "1", "--target-dim", "4",
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
    p.write_bytes(b"id,name\n1,\x93caf\xe9\x94\n2,cafe\n")  # cp1252 quotes: latin-1 is no safe guess
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
    (["partition", "{d}/w.cplib", "-M", "0"], "-M/--partitions-per-clique"),
    (["privatize", "{d}/x.npy", "--epsilon", "1", "--target-dim", "-1", "-o", "{d}/o.npy"], "--target-dim"),
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


# --- round 5 (issue 28): special files, sentinel strings, wide tables, big block limits,
# crafted models, subnormal weights, odd number spellings. Every command ends with status
# 0 or 2, a user error is one line, no traceback, and no special file is ever replaced.

def _walk_files(d):
    import json as _json

    (d / "sent.csv").write_text("id,name,city\n1,Null,N/A\n2,Null,-\n3,bob,?\n4,bobby,#N/A\n")
    cols = ",".join(f"c{j}" for j in range(300))
    (d / "wide.csv").write_text("id," + cols + "\n" + "\n".join(
        f"{i}," + ",".join(f"v{(i * j) % 7}x" for j in range(300)) for i in range(6)) + "\n")
    (d / "block.csv").write_text("id,name\n" + "\n".join(f"{i},smith w{i}" for i in range(400)) + "\n")
    (d / "sub.cplib").write_text("3\n1e-309 -1e-310\n2e-309\n")
    (d / "odd.cplib").write_text("3\n1_000 0x1p3\n2\n")
    (d / "deep.json").write_text("[" * 50_000 + "]" * 50_000)
    (d / "model.json").write_text(_json.dumps({"format": "trustlab.er.model", "version": 1,
                                               "fields": [{"column": "name", "kind": "name"}],
                                               "blocking": ["all"], "settings": {"method": "os.system"},
                                               "scorer": {"type": "FSModel"}}))


ROUND5 = [
    (["resolve", "{d}/sent.csv", "--fields", "name:name,city:string", "-o", "{d}/out.csv", "-q"], 0, None),
    (["resolve", "{d}/wide.csv", "-q"], 2, "field inference looks at tables of at most 256"),
    (["resolve", "{d}/r.csv", "--model", "{d}/deep.json", "-q"], 2, "nested too deeply"),
    (["resolve", "{d}/r.csv", "--model", "{d}/model.json", "-q"], 2, "settings.method must be one of"),
    (["partition", "{d}/sub.cplib", "--method", "heuristic", "-q"], 0, None),
    (["partition", "{d}/odd.cplib", "-q"], 2, "not a plain decimal number"),
    (["privatize", "{d}/x.npy", "--epsilon", "1", "--target-dim", "1_000", "-o", "{d}/o.npy"], 2, "--target-dim"),
    (["resolve", "{d}/block.csv", "--fields", "name:name", "--blocking", "token:name", "--max-block-size",
      "100000", "-q"], 2, "candidate pairs"),
]


@pytest.mark.parametrize("argv, want, says", ROUND5, ids=[" ".join(a[:2]) + f" #{i}" for i, (a, _, _) in
                                                           enumerate(ROUND5)])
def test_round5_walk(files, capsys, monkeypatch, argv, want, says):
    import trustlab.er.defaults as D

    monkeypatch.setattr(D, "memory_budget", lambda: 4 * 2**20)  # as if 4 MiB were left
    _walk_files(files)
    rc, err = _run(capsys, *[a.format(d=files) for a in argv])
    assert rc == want, err
    assert "Traceback" not in err
    if want == 2:
        assert err.count("\n") == 1 and says in err


def test_round5_sentinels_come_back(files, capsys):
    _walk_files(files)
    rc, err = _run(capsys, "resolve", files / "sent.csv", "--fields", "name:name,city:string",
                   "-o", files / "out.csv", "-q")
    assert rc == 0, err
    import pandas as pd

    back = pd.read_csv(files / "out.csv", dtype=str, keep_default_na=False).sort_values("id")
    assert back["name"].tolist() == ["Null", "Null", "bob", "bobby"]
    assert back["city"].tolist() == ["N/A", "-", "?", "#N/A"]


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs")
@pytest.mark.parametrize("argv", [
    ["cliques", "{d}/g.txt", "-o", "{out}", "-q"],
    ["partition", "{d}/w.cplib", "-o", "{out}", "-q"],
    ["resolve", "{d}/r.csv", "-o", "{out}", "-q"],
    ["privatize", "{d}/x.npy", "--epsilon", "1", "--target-dim", "4", "-o", "{d}/o.npy", "--record", "{out}", "-q"],
])
def test_round5_special_and_linked_outputs_are_never_replaced(files, capsys, argv):
    import os
    import stat
    import threading

    fifo = files / "fifo"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    t.start()
    rc, err = _run(capsys, *[a.format(d=files, out=fifo) for a in argv])
    t.join(10)
    assert rc == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got and got[0]
    real = files / "real.out"
    real.write_text("old")
    link = files / "link.out"
    link.symlink_to(real)
    rc, err = _run(capsys, *[a.format(d=files, out=link) for a in argv])
    assert rc == 0, err
    assert link.is_symlink() and real.read_text() != "old"
