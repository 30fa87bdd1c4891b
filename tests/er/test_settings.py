"""ResolveSettings: one source of truth for resolve's settings (names, defaults, constraints),
its JSON round trip, keyword/settings precedence and its place in the model file."""
from __future__ import annotations

import dataclasses
import inspect
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import trustlab
from trustlab._settings import UNSET
from trustlab._validation import InvalidParameterError
from trustlab.er import ResolveSettings, generate_records, load_model, resolve, save_model
from trustlab.er.model import MODEL_VERSION

#: resolve's keywords that describe one run, not its settings
RUN_ONLY = {"records", "settings", "labels", "truth", "existing", "random_state", "progress", "client"}
FIELDS = "given_name:name,surname:name,date_of_birth:date,soc_sec_id:string"


@pytest.fixture(scope="module")
def people():
    return generate_records(150, random_state=3)


def _quiet(*a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve(*a, **k)


# ----------------------------------------------------------------------------- one source of truth


def test_resolve_keywords_are_the_settings_fields():
    params = inspect.signature(resolve).parameters
    shortcuts = {n for n in params if n not in RUN_ONLY}
    assert shortcuts == set(ResolveSettings.field_names())
    # no second copy of the defaults: every shortcut defaults to UNSET, the class holds the values
    assert all(params[n].default is UNSET for n in shortcuts)
    assert set(ResolveSettings.defaults()) == shortcuts
    # and resolve declares the very constraint objects of the class (model also takes a saved model there)
    declared = resolve.__trustlab_params__
    for name, cons in ResolveSettings.CONSTRAINTS.items():
        if name != "model":
            assert [str(c) for c in declared[name]] == [str(c) for c in ResolveSettings.__trustlab_params__[name]]


def test_groups_cover_every_field_once():
    grouped = [f for g in ResolveSettings.GROUPS.values() for f in g]
    assert sorted(grouped) == sorted(ResolveSettings.field_names())
    assert set(ResolveSettings.CONSTRAINTS) == set(ResolveSettings.field_names())


def test_settings_are_frozen_and_copy_their_inputs():
    fields = {"given_name": "name"}
    s = ResolveSettings(fields=fields, blocking=["token:surname"])
    fields["surname"] = "name"  # the caller's dict changes later: the settings do not
    assert s.fields == {"given_name": "name"} and s.blocking == ("token:surname",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.method = "hierarchical"


# ----------------------------------------------------------------------------- JSON round trip


def test_round_trip_through_json():
    s = ResolveSettings(id_col="rec_id", fields={"given_name": "name", "surname": "name"},
                        blocking=["token:surname", "key:postcode"], max_block_size=50, scorer="fellegi_sunter",
                        weights="logit", threshold=0.25, time_limit=3, M=4, solver_options={"method": "cpp"},
                        compare_methods=["connected_components"], complete_components=0, link_type="link_only",
                        source_col="src", one_to_one=["a"], column_map={"name": "full_name"})
    d = json.loads(json.dumps(s.to_dict()))
    assert d["format"] == "trustlab.er.settings" and d["version"] == 1
    back = ResolveSettings.from_dict(d)
    assert back == s
    assert back.time_limit == 3.0 and back.one_to_one == ("a",)


def test_from_dict_takes_a_partial_hand_written_file():
    s = ResolveSettings.from_dict({"method": "connected_components"})
    assert s == ResolveSettings(method="connected_components")


@pytest.mark.parametrize("d, match", [
    ({"format": "trustlab.er.model"}, r"format is 'trustlab.er.model', expected 'trustlab.er.settings'"),
    ({"version": 99}, r"version 99 is not one this trustlab reads \(1 to 1\); upgrade trustlab"),
    ({"metod": "xer"}, r"unknown setting\(s\) 'metod' \(did you mean 'method'\?\)"),
    ({"max_block_size": "big"}, r"'max_block_size' parameter of ResolveSettings must be an int in the range "
                                r"\[2, inf\)\. Got 'big' instead"),
])
def test_from_dict_refuses_with_the_cause(d, match):
    with pytest.raises(InvalidParameterError, match=match):
        ResolveSettings.from_dict(d)


def test_to_dict_names_a_value_json_cannot_hold():
    s = ResolveSettings(solver_options={"client": object()})
    with pytest.raises(ValueError, match=r"solver_options\['client'\] holds object .*pass such values to the call"):
        s.to_dict()


# ----------------------------------------------------------------------------- validation messages


@pytest.mark.parametrize("field, bad, fix", [
    ("max_block_size", 1, "an int in the range [2, inf)"),
    ("train_fraction", 0, "a float in the range (0, 1]"),
    ("weights", "linear", "one of ['centered', 'logit']"),
    ("method", "louvain", "one of ['xer', 'connected_components', 'hierarchical']"),
    ("compare_methods", ["louvain"], "one of ['xer', 'connected_components', 'hierarchical']"),
    ("time_limit", -1, "a float in the range (0, inf) or None"),
])
def test_messages_name_the_field_the_value_and_the_fix(field, bad, fix):
    with pytest.raises(InvalidParameterError) as info:
        ResolveSettings(**{field: bad})
    msg = str(info.value)
    assert f"'{field}' parameter of ResolveSettings" in msg and fix in msg
    assert repr(bad if not isinstance(bad, list) else bad[0]) in msg
    # the same field given to resolve: the same template, naming resolve
    with pytest.raises(InvalidParameterError, match=f"'{field}' parameter of resolve"):
        resolve(pd.DataFrame({"name": ["a", "b"]}), **{field: bad})


def test_cross_field_rules_and_unknown_names():
    with pytest.raises(ValueError, match="needs method='xer'"):
        ResolveSettings(one_to_one=True, method="hierarchical")
    with pytest.raises(InvalidParameterError, match=r"solver_options.*unknown key\(s\) \['bogus'\]"):
        ResolveSettings(solver_options={"bogus": 1})
    with pytest.raises(InvalidParameterError, match=r"'threshhold' \(did you mean 'threshold'\?\)"):
        ResolveSettings().replace(threshhold=0.2)
    with pytest.raises(InvalidParameterError, match="'settings' parameter of resolve"):
        resolve(pd.DataFrame({"name": ["a", "b"]}), settings="xer")


# ----------------------------------------------------------------------------- precedence and identity


def test_settings_give_the_same_resolution_as_keywords(people):
    kw = dict(id_col="rec_id", fields=FIELDS, method="connected_components", weights="logit", max_block_size=50,
              blocking=["token:surname", "key:date_of_birth"], complete_components=10)
    a = _quiet(people, **kw)
    b = _quiet(people, settings=ResolveSettings(**kw))
    c = _quiet(people, settings=ResolveSettings(**kw).to_dict())  # its dict is read as well
    for r in (b, c):
        np.testing.assert_array_equal(a.entity, r.entity)
        np.testing.assert_array_equal(a.pairs, r.pairs)
        np.testing.assert_array_equal(a.prob, r.prob)
        assert a.settings == r.settings and a.resolve_settings == r.resolve_settings


def test_keywords_override_settings(people):
    base = ResolveSettings(id_col="rec_id", fields=FIELDS, method="connected_components", weights="logit")
    r = _quiet(people, settings=base, method="xer", threshold=0.1)
    assert r.resolve_settings == base.replace(method="xer", threshold=0.1)
    assert r.settings["method"] == "xer" and r.settings["threshold"] == 0.1 and r.settings["weights"] == "logit"
    ref = _quiet(people, settings=base.replace(method="xer", threshold=0.1))
    np.testing.assert_array_equal(r.entity, ref.entity)
    # a keyword equal to the class default still wins over the settings
    assert _quiet(people, settings=base, weights="centered").resolve_settings.weights == "centered"


def test_defaults_come_from_the_class(people):
    r = _quiet(people, id_col="rec_id", fields=FIELDS)
    assert r.resolve_settings == ResolveSettings(id_col="rec_id", fields=FIELDS)
    defaults = ResolveSettings.defaults()
    assert r.settings["method"] == defaults["method"] and r.settings["weights"] == defaults["weights"]


# ----------------------------------------------------------------------------- the model file


def test_save_model_writes_the_settings_and_load_model_reads_them(people, tmp_path):
    s = ResolveSettings(id_col="rec_id", fields=FIELDS, weights="logit", threshold=0.05, max_block_size=80)
    r = _quiet(people, settings=s)
    p = save_model(r, tmp_path / "model.json")
    d = json.loads(p.read_text())
    assert d["version"] == MODEL_VERSION == 2
    assert d["resolve_settings"] == s.to_dict()
    m = load_model(p)
    assert m.resolve_settings == s
    # training again from the file's settings gives the same entities
    again = _quiet(people, settings=m.resolve_settings)
    np.testing.assert_array_equal(again.entity, r.entity)


def test_a_version_1_model_file_still_loads(people, tmp_path):
    r = _quiet(people, id_col="rec_id", fields=FIELDS, method="connected_components", weights="logit")
    p = save_model(r, tmp_path / "model.json")
    d = json.loads(p.read_text())
    d.pop("resolve_settings")
    d["version"] = 1  # what trustlab wrote before the settings block
    old = tmp_path / "old.json"
    old.write_text(json.dumps(d))
    m = load_model(old)
    rs = m.resolve_settings  # derived from the version-1 'settings' block and the fields
    assert (rs.method, rs.weights, rs.id_col, rs.max_block_size) == ("connected_components", "logit", "rec_id", 200)
    assert rs.fields == {"given_name": "name", "surname": "name", "date_of_birth": "date", "soc_sec_id": "string"}
    # and it applies exactly as the version-2 file does
    new = people.iloc[::-1]
    np.testing.assert_array_equal(_quiet(new, model=str(old)).entity, _quiet(new, model=str(p)).entity)


def test_a_model_file_with_bad_settings_is_refused_with_the_path(people, tmp_path):
    r = _quiet(people, id_col="rec_id", fields=FIELDS)
    p = save_model(r, tmp_path / "model.json")
    d = json.loads(p.read_text())
    d["resolve_settings"]["max_block_size"] = 1
    p.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"model\.json.*resolve_settings: The 'max_block_size' parameter"):
        load_model(p)


def test_top_level_export():
    assert trustlab.ResolveSettings is ResolveSettings
    assert "ResolveSettings" in trustlab.__all__ and "ResolveSettings" in trustlab.er.__all__


# ----------------------------------------------------------------------------- the CLI: --settings FILE


def test_cli_reads_a_settings_file_and_options_given_override_it(people, tmp_path, capsys):
    from trustlab.cli import main

    inp = tmp_path / "people.csv"
    people.to_csv(inp, index=False)
    sfile = tmp_path / "settings.json"
    sfile.write_text(json.dumps(ResolveSettings(id_col="rec_id", fields=FIELDS, method="connected_components",
                                                weights="logit").to_dict()))

    def run(*extra):
        capsys.readouterr()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(["resolve", str(inp), "--settings", str(sfile), "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    ref = _quiet(people, id_col="rec_id", fields=FIELDS, method="connected_components", weights="logit")
    out = run()
    assert out["method"] == "connected_components" and out["n_entities"] == ref.n_entities
    # an option given on the command line wins, even when it spells the parser's default
    out = run("--method", "xer", "--compare", "hierarchical")
    assert out["method"] == "xer" and list(out["baselines"]) == ["hierarchical"]
    # a saved model is a settings file too: the settings it was trained with
    mfile = tmp_path / "model.json"
    save_model(ref, mfile)
    sfile = mfile
    assert run()["method"] == "connected_components"


def test_cli_settings_file_errors_are_one_line(people, tmp_path, capsys):
    from trustlab.cli import main

    inp = tmp_path / "people.csv"
    people.to_csv(inp, index=False)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"metod": "xer"}))
    for path, msg in ((bad, "did you mean 'method'"), (tmp_path / "none.json", "No such file")):
        assert main(["resolve", str(inp), "--settings", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert msg in err and "\n" not in err


def test_incremental_resolution_carries_the_model_settings(people):
    s = ResolveSettings(id_col="rec_id", fields=FIELDS, weights="logit")
    r0 = _quiet(people.iloc[:100], settings=s)
    r1 = _quiet(people.iloc[100:], model=r0, existing=r0.to_frame(records=True))
    assert r1.resolve_settings == s


def test_save_model_leaves_the_run_resources_out(people, tmp_path):
    r = _quiet(people, id_col="rec_id", fields=FIELDS)
    # a Dask client in solver_options is a resource of the run, not a setting: not written
    r.resolve_settings = r.resolve_settings.replace(solver_options={"client": object(), "workers": 1})
    d = json.loads(save_model(r, tmp_path / "a.json").read_text())
    assert d["resolve_settings"]["solver_options"] == {"workers": 1}
    # another value JSON cannot hold: the model is still saved, without the block, and a warning says why
    r.resolve_settings = r.resolve_settings.replace(solver_options={"random_state": np.random.default_rng(0)})
    with pytest.warns(UserWarning, match=r"without its resolve_settings: solver_options\['random_state'\] holds"):
        p = save_model(r, tmp_path / "b.json")
    assert "resolve_settings" not in json.loads(p.read_text())
    assert load_model(p).resolve_settings.fields == dict(f.split(":") for f in FIELDS.split(","))
