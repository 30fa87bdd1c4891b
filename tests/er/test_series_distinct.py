"""Per-record string passes computed once per distinct value (stop 53) equal the passes over
every row (``series_pieces``, main's path) bit for bit: values, dtype, index and name."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab import _chunks
from trustlab._chunks import series_distinct, series_pieces
from trustlab.er import comparisons, kinds, records
from trustlab.er.kinds import KINDS, Field

_WORDS = ["Ann  Lee", "ann lee", "O'Neil, Ann", "TH-50PZ850U", "th50pz850u 4gb", "5th ave 94304", "", " ",
          "N/A", " null ", "-", "MSMT2G/TQ x", "12345", "1995.", "1995,", "san francisco", "Zürich 8001",
          "g06f/17 30", "--", "?"]


def _column(seed: int, n: int = 3000, na: bool = True) -> pd.Series:
    rng = np.random.default_rng(seed)
    vals = np.array(_WORDS + [f"w{k} {k % 7}" for k in range(40)], dtype=object)
    s = pd.Series(vals[rng.integers(0, vals.size, n)], dtype=object, name="col")
    if na:
        s[rng.random(n) < 0.1] = None
        s[rng.random(n) < 0.1] = np.nan
    s.index = rng.permutation(n) + 7  # not a RangeIndex
    return s


def _same(a: pd.Series, b: pd.Series) -> None:
    assert a.dtype == b.dtype and a.name == b.name and a.index.equals(b.index)
    assert a.equals(b) or a.tolist() == b.tolist()  # lists (str.split) compare as values


_FNS = {
    "lower": lambda p: p.str.lower(),
    "clean_words": comparisons._clean_words,
    "split": lambda p: p.fillna("").astype(str).str.lower().str.findall(r"\w+"),
    "len": lambda p: p.str.len(),
    "contains": lambda p: p.str.contains(r"\d"),
    "astype_str": lambda p: p.astype(str).str.strip(),
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fn", sorted(_FNS))
def test_series_distinct_equals_every_row(seed, fn, monkeypatch):
    s = _column(seed, na=seed % 2 == 0)
    ref = series_pieces(s, _FNS[fn])
    _same(series_distinct(s, _FNS[fn]), ref)
    _same(series_distinct(s, _FNS[fn], size=100), ref)  # the distinct values in pieces
    monkeypatch.setattr(_chunks, "ITEMS", 50)  # factorized piece by piece
    _same(series_distinct(s, _FNS[fn]), ref)


def test_series_distinct_falls_back_where_a_hash_table_merges_values():
    s = pd.Series([1, 1.0, True, "1", "a", "a", None] * 5, dtype=object)
    fn = lambda p: p.astype(str)  # noqa: E731
    _same(series_distinct(s, fn), fn(s))  # 1, 1.0 and True are three strings
    calls = []
    series_distinct(pd.Series(["x", "y"] * 50, dtype=object), lambda p: calls.append(len(p)) or p)
    assert calls == [2]  # a column of repeated strings: once per distinct value
    u = pd.Series([f"v{k}" for k in range(100)], dtype=object)
    _same(series_distinct(u, lambda p: p.str.upper()), u.str.upper())  # all distinct: whole
    e = pd.Series([], dtype=object)
    _same(series_distinct(e, lambda p: p.str.upper()), e.str.upper())
    st = pd.Series(["a", "b", "a", None], dtype="string")  # not object: whole
    _same(series_distinct(st, lambda p: p.str.upper()), st.str.upper())


def _codes_of_main(ex: pd.Series) -> pd.Series:
    """``kinds._codes_of`` as on main (every row)."""
    norm = ex.str.replace(r"[-/._+#*]+", "", regex=True)
    digit = norm.str.contains(r"\d")
    alpha = norm.str.contains(r"[^\W\d_]")
    ordinal = norm.str.fullmatch(r"\d+(st|nd|rd|th|s)")
    keep = (digit & alpha & (norm.str.len() >= 4) & ~ordinal) | norm.str.fullmatch(r"\d{5,}")
    return norm[keep.fillna(False)]


@pytest.mark.parametrize("seed", range(3))
def test_codes_and_tf_keys_equal_main(seed):
    s = _column(seed)
    words = s.fillna("").astype(str).str.lower().str.split(kinds._CODE_SPLIT, regex=True).explode().dropna()
    words = words[words.str.len() >= 4]
    _same(kinds._codes_of(words), _codes_of_main(words))
    df = pd.DataFrame({"col": s})
    for kind in ("name", "exact", "postcode", "string", "code", "model"):
        f = Field("col", kind)
        ref = KINDS[kind].tf_key(df["col"].fillna("").astype(str)).fillna("").to_numpy(dtype=object)
        got = kinds.tf_keys(df, f)
        assert got.dtype == object and got.tolist() == ref.tolist()


def test_placeholders_equal_main():
    s = _column(1)
    df = pd.DataFrame({"id": range(len(s)), "a": s.to_numpy(), "b": [1, "N/A", 2.0, None] * (len(s) // 4)})
    got = records.placeholders_to_missing(df, "id")
    for c in ("a", "b"):
        low = df[c].map(lambda v: v.strip().lower() if isinstance(v, str) else v)
        ref = df[c].mask(low.isin(records.MISSING_PLACEHOLDERS).to_numpy(), np.nan)
        _same(got[c], ref)
    assert got["a"].isna().sum() > df["a"].isna().sum()


def test_text_and_token_sets_equal_every_row():
    s = _column(2).reset_index(drop=True)
    arr, miss = comparisons._text(s)
    ref = series_pieces(s, comparisons._clean_words)
    assert arr.tolist() == ref.to_numpy(dtype=object).tolist() and np.array_equal(miss, (ref == "").to_numpy())
    ip, ix = comparisons._token_sets(s)
    tok = s.fillna("").astype(str).str.lower().str.findall(r"\w+")
    from trustlab._chunks import factorize
    ids = factorize(tok.explode().dropna())[0]
    # the same sets per record, numbered in order of first appearance
    assert ip[-1] == len({(r, t) for r, t in zip(tok.explode().dropna().index, ids)})
    toks = comparisons._tokens_of(s)
    _same(toks, s.fillna("").astype(str).str.lower().str.findall(kinds._RECORD_TOKEN))
