"""Columns a real export carries beside the record (a timestamp of the export, a notes column,
a free text about another record): Fellegi-Sunter finds their agreement no evidence of a
match, and :func:`trustlab.resolve` infers the fields again without them
(``FSModel.noise_fields``; bench/er_perturb.py's ``extra`` presentation)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from trustlab.er import resolve
from trustlab.er.kinds import Field
from trustlab.er.scoring import DegenerateModelWarning, FSModel


def _model(m, u, kinds, lam=0.01):
    fm = FSModel([Field(f"c{k}", kind) for k, kind in enumerate(kinds)])
    fm.m_, fm.u_, fm.lambda_ = np.asarray(m, float), np.asarray(u, float), lam
    return fm


def test_noise_fields_rules():
    m = [[0.60, 0.30, 0.05, 0.05],      # a name: agreement is evidence
         [0.001, 0.16, 0.83, 0.009],    # a timestamp: as in random pairs
         [0.99992, 0.00003, 0.00003, 0.00002],  # mostly "NA": matches never disagree...
         [0.00002, 0.00002, 0.00002, 0.99994],  # matches never agree (1999 vs 1999.0)
         [0.00009, 0.00009, 0.019, 0.981]]      # a far level: 2 matched pairs, chance
    u = [[0.01, 0.02, 0.07, 0.90],
         [0.001, 0.13, 0.86, 0.009],
         [0.968, 0.00001, 0.00001, 0.032],      # ...where random pairs would (1 in 30)
         [0.0046, 0.000001, 0.000001, 0.995],
         [0.00005, 0.00026, 0.0077, 0.992]]
    fm = _model(m, u, ["name", "date", "name", "exact", "string"])
    # 100 matched pairs expected (lambda * n_pairs)
    assert [f.column for f in fm.noise_fields(n_pairs=10_000)] == ["c1", "c4"]
    # with 1,000 the far level of c4 holds 19 matched pairs at 2.5 times the random rate: evidence
    assert [f.column for f in fm.noise_fields(n_pairs=100_000)] == ["c1"]
    # with 25 expected matches, c2's refutation is one matched pair at best: not enough to keep it
    fm.lambda_ = 0.025
    assert [f.column for f in fm.noise_fields(n_pairs=1_000)] == ["c1", "c2", "c4"]
    # an EM that found almost no matches (fewer than 20 expected) says nothing of noise: the
    # whole table would otherwise be noise (imdb_tmdb's extra presentation lost every field)
    fm.lambda_ = 1e-12
    assert fm.noise_fields(n_pairs=100_000) == []
    # the whole-record and codes comparisons are never noise
    rec = _model([[0.3, 0.3, 0.2, 0.2]], [[0.3, 0.3, 0.2, 0.2]], ["record"])
    assert rec.noise_fields(n_pairs=10_000) == []
    assert FSModel([Field("a", "name")]).noise_fields() == []  # not fitted


@pytest.fixture(scope="module")
def restaurant():
    from trustlab.datasets import load_er_dataset

    ds = load_er_dataset("restaurant")
    return ds.records.drop(columns=[ds.truth_col]).reset_index(drop=True), ds.records[ds.truth_col].to_numpy()


def _with_export_noise(df: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = len(df)
    text = df.drop(columns=["id"]).fillna("").astype(str).agg(" ".join, axis=1).to_numpy()
    out = df.copy()
    out["comment"] = text[rng.permutation(n)]  # the text of another record
    stamp = pd.Timestamp("2026-03-10") + pd.to_timedelta(rng.integers(0, 3 * 86400, n), unit="s")
    out["exported_at"] = stamp.strftime("%Y-%m-%d %H:%M:%S")
    return out


def _resolve(df, truth):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        return resolve(df, truth=truth)


def test_export_noise_columns_are_dropped(restaurant):
    df, truth = restaurant
    base = _resolve(df, truth)
    assert [c.column for c in base.field_report.choices if c.role == "noise"] == []
    r = _resolve(_with_export_noise(df), truth)
    noise = {c.column: c.reason for c in r.field_report.choices if c.role == "noise"}
    assert set(noise) == {"comment", "exported_at"}, r.field_report.describe()
    assert "no evidence of a match" in noise["comment"]
    assert {f.column for f in r.model.fields}.isdisjoint(noise)
    # the whole-record comparison is made of the record's own fields again (0.886 with the noise in it)
    assert r.metrics["f1"] >= base.metrics["f1"] - 0.01, (r.metrics, base.metrics)
    assert "noise_refit" in r.seconds


def test_given_fields_are_never_dropped(restaurant):
    df, truth = restaurant
    d = _with_export_noise(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        r = resolve(d, truth=truth, fields={"name": "name", "address": "address", "comment": "string"})
    assert [f.column for f in r.model.fields][:3] == ["name", "address", "comment"]
    assert "noise_refit" not in r.seconds


def test_a_key_rule_field_is_never_noise():
    """A field of a ``key:`` blocking rule: its m and u are not its evidence (the key prior and the
    blocking strata hold it), so they say nothing of noise (a names-only table lost its surname)."""
    fm = _model([[0.03, 0.001, 0.001, 0.968], [0.9, 0.05, 0.03, 0.02]],
                [[0.024, 0.001, 0.001, 0.974], [0.03, 0.005, 0.005, 0.96]], ["name", "name"], lam=0.003)
    assert [f.column for f in fm.noise_fields(n_pairs=100_000)] == ["c0"]
    fm.forcing_ = [["c0"]]
    assert fm.noise_fields(n_pairs=100_000) == []


def test_never_agreeing_matches_are_noise_only_where_random_pairs_agree():
    """Matches that never agree on a field random pairs agree on (a copied text of another
    record, 27 % far agreement) are noise; where random pairs do not agree either (a year
    written 1999 and 1999.0 in two tables) EM cannot tell, and the field is kept."""
    m = [[0.9, 0.05, 0.03, 0.02], [0.000005, 0.000006, 0.000007, 0.999982], [0.00002, 0.00002, 0.00002, 0.99994]]
    u = [[0.03, 0.005, 0.005, 0.96], [0.000836, 0.009016, 0.260252, 0.729896], [0.0046, 0.000001, 0.000001, 0.995]]
    fm = _model(m, u, ["name", "name", "exact"], lam=0.001)
    assert [f.column for f in fm.noise_fields(n_pairs=150_000)] == ["c1"]


def test_no_noise_when_the_match_class_is_most_pairs():
    """EM that calls (almost) every candidate pair a match (a table without duplicates) has a
    match class that is not the matches: nothing is noise (tests/er/test_unseen_shapes.py's
    table without duplicates lost its surname, birth date and city)."""
    fm = _model([[0.001, 0.16, 0.83, 0.009]], [[0.001, 0.13, 0.86, 0.009]], ["date"], lam=0.6)
    assert fm.noise_fields(n_pairs=100_000) == []
    fm.lambda_ = 0.01
    assert [f.column for f in fm.noise_fields(n_pairs=100_000)] == ["c0"]
