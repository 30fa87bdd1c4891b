"""The ``trustlab cliques`` command: --json output, files, errors (never a traceback)."""
from __future__ import annotations

import json
from importlib import resources

import networkx as nx
import numpy as np
import pytest

from trustlab.cli import main


def karate_path():
    return str(resources.files("trustlab") / "data" / "graphs" / "karate.edges")


def test_json_summary_on_bundled_graph(capsys):
    assert main(["cliques", karate_path(), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = list(nx.find_cliques(nx.karate_club_graph()))
    assert out["n_nodes"] == 34 and out["n_edges"] == 78
    assert out["n_maximal_cliques"] == len(ref)
    assert out["max_clique_size"] == max(map(len, ref))
    assert out["seconds"] >= 0 and out["backend"] == "cpu"


def test_text_output_file_and_labels(tmp_path, capsys):
    f = tmp_path / "g.txt"
    f.write_text("# a comment\nalice bob  # trailing comment\nbob carol 0.5\n\ncarol alice\ncarol dave\n")
    out = tmp_path / "cliques.txt"
    assert main(["cliques", str(f), "--output", str(out), "--min-size", "2", "-q"]) == 0
    lines = {frozenset(line.split()) for line in out.read_text().splitlines()}
    assert lines == {frozenset({"alice", "bob", "carol"}), frozenset({"carol", "dave"})}
    assert capsys.readouterr().out == ""


def test_npz_output(tmp_path, capsys):
    out = tmp_path / "c.npz"
    assert main(["cliques", karate_path(), "--output", str(out), "--json"]) == 0
    d = np.load(out)
    ref = {frozenset(c) for c in nx.find_cliques(nx.karate_club_graph())}
    got = {frozenset(d["nodes"][d["indices"][a:b]].tolist()) for a, b in zip(d["indptr"][:-1], d["indptr"][1:])}
    assert got == ref
    assert json.loads(capsys.readouterr().out)["output"] == str(out)


def test_integer_labels_are_compacted(tmp_path, capsys):
    f = tmp_path / "g.txt"
    f.write_text("10 20\n20 30\n30 10\n1000000 10\n")
    assert main(["cliques", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_nodes"] == 4 and out["n_maximal_cliques"] == 2 and out["max_clique_size"] == 3


@pytest.mark.parametrize(
    "content, args, match",
    [
        (None, [], "does not exist"),
        ("0 1\n2\n", [], r":2: expected two node labels"),
        ("0 1\n", ["--min-size", "0"], "--min-size"),
    ],
)
def test_errors_are_one_line(tmp_path, capsys, content, args, match):
    f = tmp_path / "g.txt"
    if content is not None:
        f.write_text(content)
    assert main(["cliques", str(f), *args]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert pytest.importorskip("re").search(match, err)


def test_missing_output_dir_and_directory_input(tmp_path, capsys):
    assert main(["cliques", karate_path(), "--output", str(tmp_path / "nope" / "x.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["cliques", str(tmp_path)]) == 2
    assert "directory" in capsys.readouterr().err


def test_self_loop_warning_is_one_line(tmp_path, capsys):
    f = tmp_path / "g.txt"
    f.write_text("0 1\n1 1\n")
    assert main(["cliques", str(f), "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["n_edges"] == 1
    assert "warning" in cap.err and "self-loop" in cap.err


def test_gpu_backend_without_device_is_a_clean_error(tmp_path, capsys):
    from trustlab._backend import gpu_available

    if gpu_available("numba-cuda"):
        pytest.skip("a GPU is present")
    rc = main(["cliques", karate_path(), "--backend", "gpu"])
    err = capsys.readouterr().err
    assert rc != 0 and "Traceback" not in err and "gpu" in err.lower()
