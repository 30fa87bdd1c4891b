"""Record shapes the defaults were not developed on (bench/er_unseen.py): blocking on a
compound key of coarse fields, look-alike neighbours, product titles with model numbers,
placeholder strings, blank and padded header cells."""
from __future__ import annotations

import numpy as np
import pandas as pd

from trustlab.er import resolve
from trustlab.er.records import validate_records
from trustlab.er.synthetic import generate_people


def test_placeholder_strings_are_missing():
    """'N/A', 'null', 'None', '-', '?' were compared as values: two records agreeing only on
    'N/A' agreed on a rare value."""
    df = pd.DataFrame({"id": [1, 2, 3, 4], "city": ["Oslo", " N/A", "null", "?"], "zip": ["-", "None", "1", "2"]})
    out, idc = validate_records(df, None)
    assert idc == "id"
    assert out["city"].isna().tolist() == [False, True, True, True]
    assert out["zip"].isna().tolist() == [True, True, False, False]
    assert df["city"].tolist()[1] == " N/A"  # the caller's frame is not modified
    people = generate_people(300, random_state=2)
    truth = people.pop("cluster").to_numpy()
    bad = people.copy()
    bad.loc[bad.index % 3 == 0, "email"] = "N/A"
    bad.loc[bad.index % 4 == 0, "dob"] = "-"
    r = resolve(bad, truth=truth)
    assert r.metrics["precision"] > 0.97, r.metrics


def test_blank_and_padded_headers():
    people = generate_people(200, random_state=3)
    truth = people.pop("cluster").to_numpy()
    df = people.rename(columns={"id": " id "})
    df.insert(0, "Unnamed: 0", np.arange(len(df))[::-1])
    df.insert(3, "Unnamed: 7", ["x" if i % 2 else "y" for i in range(len(df))])
    r = resolve(df, truth=truth)
    assert r.id_col == " id "
    roles = {c.column: c.role for c in r.field_report.choices}
    assert roles["Unnamed: 0"] == roles["Unnamed: 7"] == "unnamed"
    assert "Unnamed: 7" not in [f.column for f in r.field_report.fields]
    assert r.metrics["f1"] > 0.95
