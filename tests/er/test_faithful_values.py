"""Values come back exactly as read (issue 28, items 2 and 3): placeholder strings are
missing for matching only, and entity ids of an earlier output are labels."""
from __future__ import annotations

import pandas as pd
import pytest

from trustlab.cli import main
from trustlab.er import resolve
from trustlab.er.records import MISSING_PLACEHOLDERS

SENTINELS = ["Null", "Nan", "None", "N/A", "-", "?", "NULL", "#N/A", "NaN", " n/a ", "(null)", "<NA>"]


def _table(n: int = 24) -> pd.DataFrame:
    rows = []
    for i in range(n):
        rows.append({"id": f"{i:03d}", "given": ["Ann", "Anne", "Bob", "Bobby"][i % 4],
                     "surname": SENTINELS[i % len(SENTINELS)], "city": SENTINELS[(i * 5) % len(SENTINELS)]})
    return pd.DataFrame(rows)


def test_sentinels_are_placeholders_for_matching():
    assert all(s.strip().lower() in MISSING_PLACEHOLDERS for s in SENTINELS)


def test_resolve_output_keeps_placeholder_cells_exactly(tmp_path, capsys):
    df = _table()
    src = tmp_path / "r.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    rc = main(["resolve", str(src), "--fields", "given:name,surname:name,city:string", "-o", str(out), "-q"])
    assert rc == 0, capsys.readouterr().err
    back = pd.read_csv(out, dtype=str, keep_default_na=False).set_index("id")
    for col in ("given", "surname", "city"):
        assert back.loc[df["id"], col].tolist() == df[col].tolist()


def test_library_records_keep_cells_but_matching_ignores_them():
    df = _table()
    r = resolve(df, id_col="id", fields="given:name,surname:name,city:string")
    got = r.to_frame(records=True).set_index("id").loc[df["id"]]
    assert got["surname"].tolist() == df["surname"].tolist()
    assert got["city"].tolist() == df["city"].tolist()


def _first_run(tmp_path, capsys):
    rows = [{"id": str(i), "name": nm, "city": c} for i, (nm, c) in enumerate(
        [("ann lee", "oslo"), ("anne lee", "oslo"), ("bob ray", "rome"), ("bobby ray", "rome"),
         ("carl zu", "bern"), ("karl zu", "bern"), ("dan oh", "kyiv"), ("eve ng", "lima"),
         ("fay ma", "baku"), ("gus li", "doha"), ("hal bo", "riga"), ("ivy su", "oslo")])]
    src = tmp_path / "old.csv"
    pd.DataFrame(rows).to_csv(src, index=False)
    out, model = tmp_path / "out.csv", tmp_path / "m.json"
    rc = main(["resolve", str(src), "--fields", "name:name,city:string", "-o", str(out), "--save-model",
               str(model), "-q"])
    assert rc == 0, capsys.readouterr().err
    new = tmp_path / "new.csv"
    pd.DataFrame([{"id": "100", "name": "ann lee", "city": "oslo"},
                  {"id": "101", "name": "zed qu", "city": "nuuk"}]).to_csv(new, index=False)
    return out, model, new


@pytest.mark.parametrize("make_id", [
    lambda e: f"0.{e}",                       # non-integer ids (were truncated: 0.1 -> 0)
    lambda e: str(2**63 - 1 - e),             # near the int64 maximum (was OverflowError)
    lambda e: str(10**30 + e),                # beyond int64
    lambda e: f"E{e}",                        # text
    lambda e: f"1e{e + 1}",                   # looks like a float
    lambda e: f"{e:04d}",                     # leading zeros
])
def test_existing_entity_ids_are_labels(tmp_path, capsys, make_id):
    out, model, new = _first_run(tmp_path, capsys)
    old = pd.read_csv(out, dtype=str, keep_default_na=False)
    old["entity_id"] = [make_id(int(e)) for e in old["entity_id"]]
    ex = tmp_path / "existing.csv"
    old.to_csv(ex, index=False)
    out2 = tmp_path / "out2.csv"
    rc = main(["resolve", str(new), "--model", str(model), "--existing", str(ex), "-o", str(out2), "-q"])
    err = capsys.readouterr().err
    assert rc == 0, err
    back = pd.read_csv(out2, dtype=str, keep_default_na=False).set_index("id")
    # every existing record keeps its id, written exactly as it was read
    assert back.loc[old["id"], "entity_id"].tolist() == old["entity_id"].tolist()
    assert back["entity_id"].nunique() >= old["entity_id"].nunique()


def test_duplicate_id_in_existing_is_an_error_naming_file_column_and_id(tmp_path, capsys):
    out, model, new = _first_run(tmp_path, capsys)
    old = pd.read_csv(out, dtype=str, keep_default_na=False)
    dup = pd.concat([old, old.iloc[[3]]])
    ex = tmp_path / "dup.csv"
    dup.to_csv(ex, index=False)
    rc = main(["resolve", str(new), "--model", str(model), "--existing", str(ex), "-o", str(tmp_path / "o.csv"),
               "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "dup.csv" in err and "'id'" in err and repr(str(old["id"].iloc[3])) in err
    assert not (tmp_path / "o.csv").exists()


FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "=cmd|' /C calc'!A0", "@SUM(A1:A2)", "+1 555 0100", "-2+3", "'=x"]


def _formula_table() -> pd.DataFrame:
    names = ["ann lee", "anne lee", "bob ray", "bobby ray", "carl zu", "karl zu"] * 2
    return pd.DataFrame({"id": [f"=r{i}" if i % 3 == 0 else str(i) for i in range(12)], "name": names,
                         "note": [FORMULAS[i % len(FORMULAS)] for i in range(12)], "n": ["-5", "+7", "-"] * 4})


@pytest.mark.parametrize("flag", [[], ["--no-formula-guard"]])
def test_formula_guard_on_csv_for_people(tmp_path, capsys, flag):
    df = _formula_table()
    src = tmp_path / "r.csv"
    df.to_csv(src, index=False)
    out, pairs = tmp_path / "out.csv", tmp_path / "pairs.csv"
    rc = main(["resolve", str(src), "--fields", "name:name", "-o", str(out), "--pairs", str(pairs), "-q", *flag])
    assert rc == 0, capsys.readouterr().err
    back = pd.read_csv(out, dtype=str, keep_default_na=False)
    cells = [v for c in ("id", "note", "n") for v in back[c]]
    if flag:  # verbatim, for programs
        assert set(back["note"]) == set(FORMULAS)
    else:
        runnable = [v for v in cells if v[:1] in "=@" or (v[:1] in "+-" and len(v) > 1 and not v[1:].isdigit())]
        assert runnable == []
        assert set(back["n"]) == {"-5", "+7", "-"}  # numbers and a lone dash stay as they are
        p = pd.read_csv(pairs, dtype=str, keep_default_na=False)
        assert not any(str(v).startswith("=") for c in p.columns for v in p[c])


def test_guarded_output_reads_back_exactly_as_existing(tmp_path, capsys):
    df = _formula_table()
    src = tmp_path / "r.csv"
    df.to_csv(src, index=False)
    out, model = tmp_path / "out.csv", tmp_path / "m.json"
    assert main(["resolve", str(src), "--fields", "name:name", "-o", str(out), "--save-model", str(model),
                 "-q"]) == 0
    new = tmp_path / "new.csv"
    pd.DataFrame({"id": ["=n1"], "name": ["ann lee"], "note": ["=1+1"], "n": ["-1"]}).to_csv(new, index=False)
    out2 = tmp_path / "out2.csv"
    rc = main(["resolve", str(new), "--model", str(model), "--existing", str(out), "-o", str(out2), "-q",
               "--no-formula-guard"])
    assert rc == 0, capsys.readouterr().err
    back = pd.read_csv(out2, dtype=str, keep_default_na=False).set_index("id")
    assert back.loc[df["id"], "note"].tolist() == df["note"].tolist()
    assert back.loc["=n1", "note"] == "=1+1"
