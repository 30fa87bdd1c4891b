"""bench/er_perturb.py's reading of the files it perturbs: one-column files (no delimiter to
sniff) and the id columns the perturbations must leave alone."""
from __future__ import annotations

import pandas as pd
import pytest

from tests.bench_modules import bench_module


@pytest.fixture(scope="module")
def er_perturb():
    with bench_module("er_perturb") as mod:
        yield mod


def test_one_column_file_is_read(er_perturb, tmp_path):
    p = tmp_path / "one.csv"
    pd.DataFrame({"organization": ["ACME, Inc.", "Acme Inc", "Foo GmbH"]}).to_csv(p, index=False)
    df = er_perturb._sniff_read(p)
    assert list(df.columns) == ["organization"] and df["organization"].tolist()[0] == "ACME, Inc."


@pytest.mark.parametrize("idc", ["record_id", "mention_id", "id"])
def test_sparse_keeps_the_id_column(er_perturb, idc):
    df = pd.DataFrame({idc: [str(i) for i in range(200)], "name": ["x"] * 200})
    out, _ = er_perturb.perturb(df, "sparse", 0)
    assert out[idc].tolist() == df[idc].tolist()
    assert (out["name"] == "").sum() > 0


def _table(idc="id", n=40):
    return pd.DataFrame({idc: [f"r{i}" for i in range(n)],
                         "title": [f"Sony DSC-W{i} camera" for i in range(n)],
                         "brand": ["Sony", "NA", "", " null "] * (n // 4),
                         "modelno": [f"DSC-W{i}" for i in range(n)],
                         "price": [f"{i}.99" for i in range(n)]})


def test_merged_name_and_description(er_perturb):
    df = _table()
    out, _ = er_perturb.perturb(df, "merged", 0)
    assert list(out.columns) == ["id", "name", "description"]
    assert out["id"].tolist() == df["id"].tolist()
    assert out["name"].tolist() == df["title"].tolist()
    # missing markers and empty cells are left out, no double spaces
    assert out["description"].tolist()[:4] == ["Sony DSC-W0 0.99", "DSC-W1 1.99", "DSC-W2 2.99", "DSC-W3 3.99"]


def test_merged_few_columns_one_text_and_one_column_unchanged(er_perturb):
    df = pd.DataFrame({"first": ["Ann", "", "Bo"], "last": ["Lee", "Kim", "NA"]})
    out, _ = er_perturb.perturb(df, "merged", 0)
    assert list(out.columns) == ["text"] and out["text"].tolist() == ["Ann Lee", "Kim", "Bo"]
    one = pd.DataFrame({"record_id": ["1", "2"], "affiliation": ["IBM,  Almaden", "MIT"]})
    out, _ = er_perturb.perturb(one, "merged", 0)
    assert out.equals(one)


def test_extra_adds_noise_columns_and_keeps_the_rest(er_perturb):
    df = _table(n=400)
    out, _ = er_perturb.perturb(df, "extra", 3)
    assert list(out.columns) == ["row_no", *df.columns, "status", "notes", "comment", "exported_at"]
    assert out[list(df.columns)].equals(df)  # the records and their order unchanged
    assert out["row_no"].tolist() == [str(i) for i in range(1, 401)]
    assert set(out["status"]) == {"ACTIVE"}
    assert 20 < (out["notes"] != "").sum() < 60
    texts = set(er_perturb.record_text(df, list(df.columns[1:])))
    assert set(out["comment"]) == texts  # a permutation of the records' texts
    assert (out["comment"] != er_perturb.record_text(df, list(df.columns[1:]))).mean() > 0.9
    assert out["exported_at"].str.match(r"^2026-03-1[0-2] \d\d:\d\d:\d\d$").all()
