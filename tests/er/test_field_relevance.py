"""Field relevance (trustlab.er.relevance): columns that carry no identity are found by the
evidence of the other fields and kept out of the fields, the whole-record comparison and
the blocking; columns that do carry identity are kept (issue 27, stop 49)."""
import numpy as np
import pandas as pd
import pytest

import trustlab
from trustlab.er.fields import infer_fields_report
from trustlab.er.kinds import Field
from trustlab.er.relevance import judge_fields, suspect_shape
from trustlab.er.synthetic import generate_records

_NOTES = ("call back", "verified", "duplicate?", "check address", "moved", "see email", "vip", "old record")


def _with_noise(df: pd.DataFrame, seed: int = 0, id_col: str = "rec_id") -> pd.DataFrame:
    """The table plus the noise columns of bench/er_perturb.py's ``extra`` presentation."""
    rng = np.random.default_rng(seed)
    n = len(df)
    others = [c for c in df.columns if c not in (id_col, "entity")]
    text = df[others].fillna("").astype(str).agg(" ".join, axis=1).str.split().str.join(" ").to_numpy()
    out = df.copy()
    out.insert(0, "row_no", [str(k + 1) for k in range(n)])
    out["status"] = "ACTIVE"
    out["notes"] = np.where(rng.random(n) < 0.10, np.asarray(_NOTES, dtype=object)[rng.integers(0, 8, n)], "")
    out["comment"] = text[rng.permutation(n)]
    when = pd.Timestamp("2026-03-10") + pd.to_timedelta(rng.integers(0, 3 * 86400, n), unit="s")
    out["exported_at"] = when.strftime("%Y-%m-%d %H:%M:%S")
    return out


def _pair_f1(pred, truth) -> float:
    p = pd.DataFrame({"p": np.asarray(pred).astype(str), "t": np.asarray(truth).astype(str)})

    def pairs(col):
        s = p.groupby(col).size()
        return int((s * (s - 1) // 2).sum())

    both = int((p.groupby(["p", "t"]).size().pipe(lambda s: s * (s - 1) // 2)).sum())
    pp, tp = pairs("p"), pairs("t")
    return 2 * both / max(1, pp + tp)


@pytest.fixture(scope="module")
def people():
    return generate_records(1500, random_state=3)


def test_noise_columns_are_not_compared(people):
    """The noise columns are reported as noise (or constant / id) and the original fields,
    the whole record and the codes comparison are built from the original columns only."""
    df = _with_noise(people)
    rep = infer_fields_report(df, exclude=["entity"], id_col="rec_id")
    role = {c.column: c.role for c in rep.choices}
    assert role["status"] == "constant"
    assert role["row_no"] == "id"  # unique per record in one table
    assert role["comment"] == "noise" and role["notes"] == "noise" and role["exported_at"] == "noise"
    base = infer_fields_report(people, exclude=["entity"], id_col="rec_id")
    assert [(f.column, f.kind) for f in rep.fields] == [(f.column, f.kind) for f in base.fields]
    reasons = {c.column: c.reason for c in rep.choices}
    assert "timestamp" in reasons["exported_at"] and "no evidence of identity" in reasons["comment"]


def test_noise_columns_give_the_same_entities(people):
    """A small generated table with the noise columns added resolves to the same entities
    as without them (the noise columns are left out before blocking and fitting)."""
    plain = trustlab.resolve(people.drop(columns=["entity"]), id_col="rec_id", random_state=0)
    noisy = trustlab.resolve(_with_noise(people).drop(columns=["entity"]), id_col="rec_id", random_state=0)
    a = pd.Series(np.asarray(plain.entity), index=plain.to_frame()["rec_id"].to_numpy())
    b = pd.Series(np.asarray(noisy.entity), index=noisy.to_frame()["rec_id"].to_numpy()).loc[a.index]
    same = pd.crosstab(a.to_numpy(), b.to_numpy())
    assert (same.gt(0).sum(axis=1) == 1).all() and (same.gt(0).sum(axis=0) == 1).all()
    assert _pair_f1(np.asarray(plain.entity), people.set_index("rec_id").loc[a.index, "entity"]) > 0.9


def test_judge_fields_verdicts():
    """Two name fields that agree on the same people are relevant; a random category, a
    random copy of another record's text and a timestamp are not."""
    rng = np.random.default_rng(1)
    first, last = rng.integers(0, 500, 1000), rng.integers(0, 500, 1000)
    df = pd.DataFrame({"first": [f"f{v}" for v in np.repeat(first, 2)],
                       "last": [f"l{v}" for v in np.repeat(last, 2)],
                       "cat": rng.choice(list("abcdef"), 2000)})
    df["copy"] = (df["first"] + " " + df["last"]).to_numpy()[rng.permutation(2000)]
    when = pd.Timestamp("2026-03-10") + pd.to_timedelta(rng.integers(0, 3 * 86400, 2000), unit="s")
    df["when"] = when.strftime("%Y-%m-%d %H:%M:%S")
    ev = judge_fields(df, [Field("first", "exact"), Field("last", "exact"), Field("cat", "exact"),
                           Field("copy", "string"), Field("when", "date")])
    v = {c: e.verdict for c, e in ev.items()}
    assert v["first"] == v["last"] == "relevant"
    assert v["cat"] == "noise" and v["copy"] == "noise" and v["when"] == "suspect"
    # the same table without the name fields: no field can be shown relevant, so none is
    # called noise (a category and a copy alone cannot be told from identity by their values)
    ev2 = judge_fields(df, [Field("cat", "exact"), Field("copy", "string")])
    assert {e.verdict for e in ev2.values()} == {"undecided"}


def test_aligned_counter_is_kept_across_tables():
    """A running row number of two linked tables is dropped when the rows are not aligned,
    kept when row k of one table is the same entity as row k of the other (an id that
    matches across the tables)."""
    rng = np.random.default_rng(2)
    n = 600
    first, last = rng.integers(0, 300, n), rng.integers(0, 300, n)
    a = pd.DataFrame({"first": [f"f{v}" for v in first], "last": [f"l{v}" for v in last]})
    b = a.copy()
    rows = [str(k + 1) for k in range(n)]
    for aligned, want in ((True, "relevant"), (False, "suspect")):
        bb = b if aligned else b.iloc[rng.permutation(n)].reset_index(drop=True)
        df = pd.concat([a.assign(no=rows), bb.assign(no=rows)], ignore_index=True)
        src = np.repeat([0, 1], n)
        ev = judge_fields(df, [Field("first", "exact"), Field("last", "exact"), Field("no", "code")], sources=src)
        assert ev["no"].shape == "counter"
        assert ev["no"].verdict == want, (aligned, ev["no"])


def test_suspect_shapes():
    assert suspect_shape(pd.Series([str(i) for i in range(5, 65)])) == "counter"
    assert suspect_shape(pd.Series([str(i) for i in range(5, 65)] + ["70"])) is None  # a gap: not consecutive
    assert suspect_shape(pd.Series([str(i % 40) for i in range(60)])) is None  # repeats in one table
    sec = np.random.default_rng(0).integers(0, 3 * 86400, 300)
    ts = (pd.Timestamp("2026-03-10") + pd.to_timedelta(sec, unit="s")).strftime("%Y-%m-%d %H:%M:%S")
    assert suspect_shape(pd.Series(ts)) == "timestamp"
    assert suspect_shape(pd.Series(ts).str.slice(0, 10)) is None  # the same dates without a time of day
    assert suspect_shape(pd.Series([f"19{50 + i % 40}-0{1 + i % 9}-1{i % 10}" for i in range(300)])) is None
    assert suspect_shape(pd.Series(["2026-03-10 00:00:00"] * 300)) is None  # one time of day: a date


def test_given_fields_are_not_judged(people):
    """fields= given by the caller are compared as given, noise or not."""
    df = _with_noise(people)
    r = trustlab.resolve(df.drop(columns=["entity"]).head(300), id_col="rec_id",
                         fields={"given_name": "name", "surname": "name", "notes": "exact"})
    assert [f.column for f in r.field_report.fields] == ["given_name", "surname", "notes"]


def _few_duplicates(n: int = 6000, dup: float = 0.1, seed: int = 0) -> pd.DataFrame:
    """People with common first and last names and birth dates, 10 % of them twice (half of
    the copies with one name or date part altered): the pairs that agree on one field are
    mostly namesakes, as in RLdata10000; plus ``comment``, the text of another record."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"first": [f"fn{k}" for k in rng.integers(0, 120, n)],
                       "last": [f"ln{k}" for k in rng.integers(0, 150, n)],
                       "by": rng.integers(1930, 2000, n).astype(str), "bm": rng.integers(1, 13, n).astype(str),
                       "bd": rng.integers(1, 29, n).astype(str)}).astype(object)
    k = int(dup * n)
    d = df.iloc[rng.choice(n, k, replace=False)].copy()
    for i in range(k):
        if rng.random() < 0.5:
            j = d.columns.get_loc(str(rng.choice(["first", "last", "bm", "bd"])))
            d.iat[i, j] = d.iat[i, j] + "x"
    df = pd.concat([df, d], ignore_index=True)
    df["comment"] = df.agg(" ".join, axis=1).to_numpy()[rng.permutation(len(df))]
    return df


def test_noise_on_likely_matches_of_a_conjunction():
    """Few duplicates: no single field's pairs are enriched enough in matches to judge by
    (every field undecided in the first pass), but the pairs that agree on two or three
    fields together far more often than chance are; the text of another record agrees on
    them as on random pairs and is noise, every identity field gains there and is kept."""
    df = _few_duplicates()
    fields = [Field("first", "name"), Field("last", "name"), Field("by", "exact"), Field("bm", "exact"),
              Field("bd", "exact"), Field("comment", "string")]
    ev = judge_fields(df, fields)
    assert ev["comment"].verdict == "noise" and ev["comment"].conjunction
    assert ev["comment"].upper < 0.05
    for c in ("first", "last", "by", "bm", "bd"):
        assert ev[c].verdict == "undecided" and ev[c].upper > 0.5, (c, ev[c])
    rep = infer_fields_report(df, id_col=None)
    role = {c.column: c.role for c in rep.choices}
    assert role["comment"] == "noise" and "likely matches" in {c.column: c.reason for c in rep.choices}["comment"]
    assert all(role[c] == "field" for c in ("first", "last", "by", "bm", "bd"))


def test_no_conjunction_without_duplicates():
    """The same table without its duplicates: no conjunction agrees more often than chance,
    so nothing is called noise (there are no likely matches to judge by)."""
    df = _few_duplicates(dup=0.0)
    fields = [Field("first", "name"), Field("last", "name"), Field("by", "exact"), Field("bm", "exact"),
              Field("bd", "exact"), Field("comment", "string")]
    assert {e.verdict for e in judge_fields(df, fields).values()} == {"undecided"}
