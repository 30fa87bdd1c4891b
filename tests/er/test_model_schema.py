"""Crafted model files (issue 28, item 7): every value is checked against the declared
schema (trustlab.er.model.MODEL_SCHEMA) before use, with a one-line error."""
from __future__ import annotations

import copy
import json

import pytest

from trustlab.cli import main
from trustlab.er import generate_records, resolve
from trustlab.er.model import MODEL_SCHEMA, MODEL_VERSION, check_model_dict, load_model, save_model

F = "given_name:name,surname:name,date_of_birth:date"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    df = generate_records(120, random_state=3)
    r = resolve(df, id_col="rec_id", fields=F)
    p = tmp_path_factory.mktemp("m") / "model.json"
    save_model(r, p)
    return json.loads(p.read_text())


def _set(d, path, value):
    *head, last = path
    for k in head:
        d = d[k]
    if value is _DEL:
        del d[last]
    else:
        d[last] = value


_DEL = object()

CASES = [
    (("scorer", "u", 0), [0.0, 0.0, 0.0, 0.0], r"scorer\.u\[0\]\[0\] must be > 0"),
    (("scorer", "m"), "short", r"scorer\.m has 2 row\(s\) but the model has 3 field"),
    (("scorer", "u", 1), [0.5, 0.5], r"scorer\.u\[1\] has 2 value"),
    (("scorer", "u", 1), [0.2, 0.2, 0.2, 0.2], r"scorer\.u\[1\] .*sums to 0\.8"),
    (("scorer", "lambda"), _DEL, r"scorer lacks the required key 'lambda'"),
    (("fields",), _DEL, r"the top level lacks the required key 'fields'"),
    (("scorer", "lambda"), 2, r"scorer\.lambda must be > 0 and < 1; got 2"),
    (("settings", "method"), "os.system", r"settings\.method must be one of \['xer'"),
    (("settings", "time_limit"), "x", r"settings\.time_limit must be a finite number or a JSON null; got 'x'"),
    (("settings", "max_block_size"), -1, r"settings\.max_block_size must be >= 2; got -1"),
    (("settings", "surprise"), 1, r"settings has the unknown key 'surprise'"),
    (("scorer", "fields", 0, "column"), "other", r"scorer\.fields .* differ from the model's fields"),
    (("fields", 0, "kind"), "eval", r"fields\[0\]\.kind must be one of"),
    (("version",), MODEL_VERSION + 1, r"newer than this trustlab"),
    (("version",), "1", r"version must be a JSON integer"),
    (("scorer", "type"), "os.system", r"scorer\.type must be one of \['FSModel', 'SupervisedScorer'\]"),
    (("scorer", "tf_tables"), {"nope": {"a": 0.5}}, r"scorer\.tf_tables names column"),
    (("blocking",), [], r"blocking must hold at least 1"),
    (("scorer", "comparison_levels", "name"), [[[[1]]]], r"nested deeper"),
]


@pytest.mark.parametrize("path, value, match", CASES, ids=[".".join(map(str, c[0])) + f"={c[1]!r}"[:30]
                                                            for c in CASES])
def test_crafted_model_files_are_refused(tmp_path, saved, path, value, match):
    d = copy.deepcopy(saved)
    if value == "short":
        value = d["scorer"]["m"][:2]
    _set(d, path, value)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=match) as info:
        load_model(p)
    assert "bad.json" in str(info.value) and "\n" not in str(info.value)


def test_saved_models_pass_the_schema(saved):
    check_model_dict(saved)
    assert MODEL_SCHEMA["properties"]["version"]["maximum"] == MODEL_VERSION


@pytest.mark.parametrize("text, match", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"format": "trustlab.er.model", "version": 1, "x": NaN}', "NaN"),
])
def test_hostile_json_text(tmp_path, text, match):
    p = tmp_path / "m.json"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_model(p)


def test_cli_crafted_model_is_one_line_error(tmp_path, saved, capsys):
    d = copy.deepcopy(saved)
    d["scorer"]["u"][0] = [0.0, 0.0, 0.0, 0.0]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    src = tmp_path / "r.csv"
    generate_records(30, random_state=4).to_csv(src, index=False)
    rc = main(["resolve", str(src), "--id-col", "rec_id", "--model", str(p), "-o", str(tmp_path / "o.csv"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "scorer.u[0]" in err and "Traceback" not in err
    assert not (tmp_path / "o.csv").exists()
