"""bench/er_perturb.py's reading of the files it perturbs: one-column files (no delimiter to
sniff) and the id columns the perturbations must leave alone."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def er_perturb():
    sys.path.insert(0, str(BENCH))  # it imports er_real from its own folder
    try:
        spec = importlib.util.spec_from_file_location("er_perturb_under_test", BENCH / "er_perturb.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.path.remove(str(BENCH))


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
