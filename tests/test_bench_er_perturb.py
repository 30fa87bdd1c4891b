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
