"""Field-kind inference reads each kind's recognition hints from the registry
(:data:`trustlab.er.kinds.KINDS`); the decisions are those of the if/elif chain it replaced.

``_old_classify`` below is a frozen copy of ``trustlab.er.fields._classify`` as it was
before the hints moved into the registry (the trusted slow reference); the tests run both
on every table shipped in the package, on every record generator and on crafted columns
that reach every rule, and require the same role, kind and reason for every column.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import trustlab
from trustlab.er import fields as F
from trustlab.er import kinds, synthetic
from trustlab.er.kinds import KINDS
from trustlab.er.records import read_records

# ----------------------------------------------------------------- the frozen reference
_ID_NAMES = re.compile(
    r"(^|[_\s\-])(id|uid|uuid|key|rec|record|recid|row)$|^(id|rid|uid|uuid|unique_id|record_id|rec_id|recid|row_id|pk)$",
    re.I,
)
_CODE_TOKEN = re.compile(r"(?<!\w)(?=[\w\-]*\d)(?=[\w\-]*[^\W\d_])(?!\d+(?:st|nd|rd|th)\b)[^\W_][\w\-]{2,}", re.I)
_UNNAMED = re.compile(r"Unnamed: \d+(_level_\d+)?")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)
_PHONE = re.compile(r"^\+?[\d\s\-\(\)\.]{7,20}$")
_DATE_SEP = re.compile(r"^(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T].*)?$")
_NAMEISH = ("name", "first", "last", "given", "surname", "middle", "fname", "lname", "forename", "author",
            "suburb", "city", "town", "county", "country", "company", "organisation", "organization", "firm")
_SOURCE = {"source", "src", "src_id", "source_id", "source_dataset", "dataset", "database", "db", "origin", "srcid"}


def _date_share(sample: pd.Series) -> float:
    s = sample.astype(str)
    sep = s.str.match(_DATE_SEP)
    d8 = s.str.fullmatch(r"\d{8}")
    ok8 = pd.Series(False, index=s.index)
    if d8.any():
        y = pd.to_numeric(s[d8].str[:4], errors="coerce")
        a = pd.to_numeric(s[d8].str[4:6], errors="coerce")
        b = pd.to_numeric(s[d8].str[6:8], errors="coerce")
        good = y.between(1800, 2100) & ((a.between(1, 12) & b.between(1, 31)) | (b.between(1, 12) & a.between(1, 31)))
        ok8[d8] = good.to_numpy()
    return float((sep | ok8).mean()) if len(s) else 0.0


def _old_classify(c: Any, s: pd.Series, n: int, id_col: str | None) -> F.FieldChoice:
    FieldChoice = F.FieldChoice
    name = str(c)
    lname = name.strip().lower()
    if id_col is not None and name == str(id_col):
        return FieldChoice(name, "id", None, "the record id column")
    if lname == "" or _UNNAMED.fullmatch(name.strip()):
        return FieldChoice(name, "unnamed", None, "blank header cell (e.g. a saved row index): not compared; "
                           "name the column to compare it")
    if F.is_truth_like(name) and not F._label_is_text(lname, s):
        return FieldChoice(name, "truth", None, "name looks like a true entity / label column; never compared "
                           "(pass it as truth= to evaluate)")
    if lname in _SOURCE:
        return FieldChoice(name, "source", None, "name looks like a source/dataset column")
    v = F._clean(s)
    if len(v) == 0 or (n > 1 and len(v) < max(2, 0.05 * n)):
        return FieldChoice(name, "empty", None, f"only {len(v)} of {n} values present")
    nun = int(v.astype(str).nunique())
    if nun <= 1 and n > 1:
        return FieldChoice(name, "constant", None, "a single distinct value")
    sv = v.astype(str)
    sample = sv.sample(min(len(sv), 500), random_state=0) if len(sv) > 500 else sv
    uniq_share = nun / len(v)
    idname = bool(_ID_NAMES.search(lname))
    fieldname = any(k in lname for k in ("zip", "post", "phone", "tel", "fax", "mail", "date", "dob", "birth",
                                         "name", "address", "street", "title", "ssn", "soc_sec"))
    if (
        uniq_share == 1.0
        and (idname or not fieldname)
        and len(v) == n
        and n > 20
        and (idname or sample.str.fullmatch(r"[\w\-\.:]+").mean() > 0.99 and sample.str.contains(r"\d").mean() > 0.99)
        and (idname or _date_share(sample) < 0.9)
    ):
        return FieldChoice(name, "id", None, "unique per record and id-like: a record id, not evidence")
    numeric = pd.to_numeric(sample, errors="coerce")
    num_share = float(numeric.notna().mean())
    mean_len = float(sample.str.len().mean())
    mean_tok = float(sample.str.split().str.len().mean())
    if sample.str.match(_EMAIL).mean() > 0.8 or ("mail" in lname and sample.str.contains("@").mean() > 0.5):
        return FieldChoice(name, "field", "email", "values look like e-mail addresses")
    if any(k in lname for k in ("date", "dob", "birth", "born")) or _date_share(sample) > 0.9:
        if _date_share(sample) > 0.5:
            return FieldChoice(name, "field", "date", "name or values look like dates")
    if any(k in lname for k in ("zip", "postcode", "postal", "post_code", "plz")):
        return FieldChoice(name, "field", "postcode", "name says postcode")
    if any(k in lname for k in ("phone", "fax", "tel", "mobile", "cell")) or (
            num_share < 0.5 and sample.str.match(_PHONE).mean() > 0.9 and sample.str.count(r"\d").mean() >= 7):
        return FieldChoice(name, "field", "phone", "name or values look like phone numbers")
    if lname in ("lat", "lon", "lng", "latitude", "longitude"):
        return FieldChoice(name, "field", "numeric", "a coordinate")
    if num_share > 0.95:
        x = numeric.dropna()
        integral = bool(np.all(np.isclose(x, np.round(x))))
        if integral and ("year" in lname or (x.between(1800, 2100).mean() > 0.95 and mean_len <= 4.5)):
            return FieldChoice(name, "field", "exact", "years: compared exactly")
        if integral and (sample.str.len().max() >= 6 or uniq_share > 0.5):
            return FieldChoice(name, "field", "code",
                               "numeric code (ids, numbers): edit distance on the digits")
        if integral:
            return FieldChoice(name, "field", "exact", "small integers / codes: compared exactly")
        return FieldChoice(name, "field", "numeric", "real numbers: relative difference")
    if "address" in lname or "street" in lname or "addr" in lname:
        return FieldChoice(name, "field", "address", "name says address")
    if (mean_tok <= 1.5 and nun >= max(50, 0.2 * len(v))
            and sample.str.fullmatch(r"(?=[^\d]*\d)[A-Za-z0-9][A-Za-z0-9\-\./_#]*").mean() > 0.8
            and sample.str.contains(r"[A-Za-z]").mean() > 0.3):  # added with the model kind
        return FieldChoice(name, "field", "model", "codes (model / part numbers): the same code or another one")
    if mean_tok > 12 or mean_len > 80:
        return FieldChoice(name, "field", "tokens", f"long free text ({mean_tok:.0f} words on average): token overlap")
    person = any(k in lname for k in ("name", "first", "last", "given", "surname", "forename", "author"))
    if mean_len < 12 and nun <= 10 and not person:
        return FieldChoice(name, "field", "exact", f"a few categories ({nun} distinct values)")
    if any(k in lname for k in _NAMEISH) and mean_tok <= 4:
        return FieldChoice(name, "field", "name", "name says a name/place; short text")
    top50 = sv.value_counts().iloc[:50].sum() / len(sv)  # changed in stop 39: a closed vocabulary only
    if mean_len < 12 and (nun < 50 or (nun < 0.2 * len(v) and top50 >= 0.9)):
        return FieldChoice(name, "field", "exact", f"short categories ({nun} distinct values)")
    if mean_tok <= 2.5 and sample.str.fullmatch(r"[^\d]+").mean() > 0.9:
        return FieldChoice(name, "field", "name", "short alphabetic text")
    if mean_tok >= 3 and sample.str.contains(_CODE_TOKEN).mean() >= 0.5:
        return FieldChoice(name, "field", "tokens", f"text with codes such as model numbers ({mean_tok:.1f} words on "
                           "average): token overlap, rare tokens weighing most")
    return FieldChoice(name, "field", "string", f"text ({mean_tok:.1f} words on average)")


# ----------------------------------------------------------------- the tables
DATA = Path(trustlab.__file__).parent / "data"
SHIPPED = sorted(p for p in DATA.rglob("*") if p.name.endswith((".csv", ".csv.gz")))


def _crafted(n: int = 300) -> pd.DataFrame:
    """Columns that reach every rule of the chain (and a few that sit on its edges)."""
    rng = np.random.default_rng(7)
    w = np.array(["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "zeta"])
    words = lambda k: [" ".join(rng.choice(w, k)) for _ in range(n)]  # noqa: E731
    digits = lambda k: ["".join(map(str, rng.integers(0, 10, k))) for _ in range(n)]  # noqa: E731
    return pd.DataFrame({
        "rid": [f"r{i}" for i in range(n)],
        "": rng.integers(0, 3, n),
        "Unnamed: 3": rng.integers(0, 3, n),
        "label": [f"class {i % 4}" for i in range(n)],
        "rdfs:label": words(2),
        "source": rng.choice(["a", "b"], n),
        "mostly_empty": [None] * max(0, n - 3) + ["x", "y", "z"][:n],
        "same": ["k"] * n,
        "contact": [f"{a}@{b}.org" for a, b in zip(rng.choice(w, n), rng.choice(w, n))],
        "mail_ish": [f"{a}@{b}" for a, b in zip(rng.choice(w, n), rng.choice(w, n))],
        "born": [f"19{rng.integers(10, 99)}-0{rng.integers(1, 9)}-1{rng.integers(0, 9)}" for _ in range(n)],
        "when": [f"{rng.integers(1, 28)}/{rng.integers(1, 12)}/20{rng.integers(10, 24)}" for _ in range(n)],
        "d8": [f"19{rng.integers(10, 99)}0{rng.integers(1, 9)}1{rng.integers(0, 9)}" for _ in range(n)],
        "birthday_text": words(1),
        "zip": digits(4),
        "plz_code": digits(5),
        "tel": digits(9),
        "contact_no": [f"({a}) {b}-{c}" for a, b, c in zip(digits(3), digits(3), digits(4))],
        "latitude": rng.uniform(-60, 60, n),
        "lng": rng.uniform(-60, 60, n),
        "pub_year": rng.integers(1950, 2020, n),
        "yr": rng.integers(1950, 2020, n),
        "serial": digits(8),
        "qty": rng.integers(0, 1000, n),
        "small_int": rng.integers(0, 4, n),
        "price": rng.uniform(1, 100, n).round(2),
        "addr": words(3),
        "street_line": words(2),
        "abstract": words(15),
        "blurb": ["x" * 90 + str(i) for i in range(n)],
        "colour": rng.choice(["red", "green", "blue"], n),
        "first": rng.choice(["ann", "bob", "cy"], n),
        "city": words(2),
        "organization": words(6),
        "grade": rng.choice([f"g{i}" for i in range(30)], n),
        "partno": rng.choice([f"TH-{i}PZ{i % 7}U" for i in range(100, 400)], n),
        "nickname_x": [s + "q" for s in words(2)],
        "kw": words(2),
        "product": [f"{a} WH-{b}XM4 {c}" for a, b, c in zip(words(2), digits(4), words(1))],
        "notes": [f"{a} {i}" for i, a in enumerate(words(3))],
        "mixed": [f"{a}{i}" for i, a in enumerate(words(1))],
        "mixed_nums": [str(x) if i % 3 else "n/a" for i, x in enumerate(rng.integers(0, 99, n))],
    })


GENERATORS = ("generate_records", "generate_people", "generate_citations", "generate_products",
              "generate_companies", "generate_books")
TABLES = [p.name for p in SHIPPED] + list(GENERATORS) + ["crafted", "crafted_small", "one_row"]


@functools.lru_cache(maxsize=None)
def _table(name: str) -> pd.DataFrame | None:
    if name in GENERATORS:
        return getattr(synthetic, name)(600, random_state=1)
    if name.startswith(("crafted", "one_row")):
        return _crafted({"crafted": 300, "crafted_small": 15, "one_row": 1}[name])
    try:
        return read_records(next(p for p in SHIPPED if p.name == name))
    except Exception:  # noqa: BLE001 - a shipped file that is not a record table
        return None


@pytest.mark.parametrize("name", TABLES)
def test_inferred_kinds_equal_the_old_rules(name):
    df = _table(name)
    if df is None:
        pytest.skip(f"{name} is not a record table")
    n = len(df)
    for id_col in (None, str(df.columns[0])):
        for c in df.columns:
            assert F._classify(c, df[c], n, id_col) == _old_classify(c, df[c], n, id_col), (name, c)


def test_every_hint_of_the_registry_decides_some_column():
    """The comparison above is only as good as its columns: each kind's hints (each rule of
    the old chain) must decide at least one column of the tables."""
    seen = set()
    for name in TABLES:
        df = _table(name)
        for c in [] if df is None else df.columns:
            ch = _old_classify(c, df[c], len(df), None)
            if ch.role == "field":
                seen.add((ch.kind, re.sub(r"\(.*", "", ch.reason).strip()))
    declared = {(k.name, h.label) for k in KINDS.values() for h in k.hints}
    assert declared <= seen, declared - seen
    assert len(declared) == len(kinds.HINT_ORDER) == len({r for r, _, _ in kinds.HINT_ORDER})  # unique ranks


def test_inference_is_a_loop_over_the_registry(monkeypatch):
    """A hint added to a kind's entry decides columns: nothing else holds the rules."""
    s = pd.Series([f"v{i} w" for i in range(40)])
    assert F._classify("ref", s, 40, None).kind != "email"
    extra = (5, "email", kinds.Hint(5, lambda p: p.lname == "ref", "test hint ({p.nun} values)"))
    monkeypatch.setattr(kinds, "HINT_ORDER", (extra, *kinds.HINT_ORDER))
    assert F._classify("ref", s, 40, None) == F.FieldChoice("ref", "field", "email", "test hint (40 values)")


def _old_fields(choices):
    """The old joining of latitude + longitude into one latlon field (frozen copy; since stop 35 a
    longitude without a latitude is kept as a field of its own instead of being dropped)."""
    lat = next((c for c in choices if c.role == "field" and c.column.lower() in ("lat", "latitude")), None)
    lon = next(
        (c for c in choices if c.role == "field" and c.column.lower() in ("lon", "lng", "long", "longitude")), None
    )
    fields = []
    for c in choices:
        if c.role != "field" or (c is lon and lat is not None):
            continue
        if c is lat and lon is not None:
            fields.append((f"{lat.column},{lon.column}", "latlon"))
        else:
            fields.append((c.column, c.kind))
    return fields


@pytest.mark.parametrize("cols", [("lat", "lon"), ("Latitude", "LONG"), ("lon",), ("lat",), ("lat", "lng", "longitude"),
                                  ("longitude", "name", "latitude"), ("name",)])
def test_two_column_kind_is_joined_from_the_registry_names(cols):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({c: (rng.choice(["ann lee", "bob ray", "cy fox", "di moe"], 60) if c == "name"
                           else rng.uniform(-50, 50, 60).round(1)) for c in cols})
    df["city"] = rng.choice(["oslo town", "rome city", "bern berg"], 60)
    rep = F.infer_fields_report(df)
    got = [(f.column, f.kind) for f in rep.fields if f.kind not in ("record", "codes")]
    assert got == [f for f in _old_fields(rep.choices) if f[1] not in ("record", "codes")]
    assert any(k == "latlon" for _, k in got) == ({"lat", "latitude"} & {c.lower() for c in cols} != set()
                                                  and {"lon", "lng", "long", "longitude"} & {c.lower() for c in cols}
                                                  != set())


def test_a_longitude_without_a_latitude_is_still_compared():
    """It was dropped from the fields (nothing to join it with); now it is a numeric field."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"name": rng.choice(["ann lee", "bob ray", "cy fox", "di moe"], 60),
                       "lon": rng.choice(np.arange(-10, 10) * 1.5, 60)})  # repeats: not an id
    rep = F.infer_fields_report(df)
    assert ("lon", "numeric") in [(f.column, f.kind) for f in rep.fields]
