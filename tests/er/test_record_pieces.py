"""The per-record passes of the comparison stage run in pieces of records (issue 28: SIGTERM
exits within 2 s), with the same results.

``pd.to_datetime``, ``pd.factorize`` and the pandas string methods of ``code_tokens`` and the
text features were one call over every record (or every word of every record: 2M words at
200,000 records, ~0.6 s of CPU, a few seconds at 1M), during which a signal waits. They now
run on pieces: :func:`trustlab._chunks.factorize` and :func:`trustlab._chunks.series_pieces`.
The references below are the one-call computations (the code before the change).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab import _chunks
from trustlab.er import comparisons, kinds
from trustlab.er.blocking import block, default_blocking_rules
from trustlab.er.fields import infer_fields_report
from trustlab.er.synthetic import generate_records

_VALUES = np.array(["a", "b", None, np.nan, 1, 1.0, True, "é", "", 0.0, -0.0, pd.NA, pd.NaT, 2**70,
                    float("inf"), "A", " a"], dtype=object)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_factorize_in_pieces_equals_pandas(size):
    rng = np.random.default_rng(size)
    for trial in range(60):
        n = int(rng.integers(0, 80))
        if trial % 3 == 0:  # strings only
            x = np.array([f"w{v}" for v in rng.zipf(1.5, n)], dtype=object)
        else:  # mixed objects, missing values of every pandas spelling, values equal across types
            x = _VALUES[rng.integers(0, len(_VALUES), n)]
        for arg in (x, pd.Series(x, index=np.arange(n) * 3)):
            codes, uniq = _chunks.factorize(arg, size)
            ref_codes, ref_uniq = pd.factorize(arg)
            assert codes.tolist() == ref_codes.tolist()
            ref_uniq = list(ref_uniq)
            assert len(uniq) == len(ref_uniq)
            assert all(type(a) is type(b) and (a is b or a == b) for a, b in zip(uniq, ref_uniq))


def test_factorize_of_other_dtypes_is_one_pandas_call():
    x = np.array([3, 1, 3, 2])
    codes, uniq = _chunks.factorize(x, 1)
    assert codes.tolist() == [0, 1, 0, 2] and uniq.tolist() == [3, 1, 2]


def test_series_pieces_equal_one_call():
    s = pd.Series(["Ann", None, "BOB x", "c"] * 25, index=np.arange(100)[::-1])

    def fn(p):
        return p.fillna("").str.lower().str.split()

    got = _chunks.series_pieces(s, fn, size=7)
    ref = fn(s)
    assert got.index.equals(ref.index) and got.tolist() == ref.tolist()


def _code_tokens_one_call(text: pd.Series) -> pd.Series:
    """``code_tokens`` as it was: every string method over all records at once."""
    words = text.fillna("").astype(str).str.lower().str.split(kinds._CODE_SPLIT, regex=True)
    ex = words.explode().dropna()
    ex = ex[ex.str.len() >= 4]
    head = ex[ex.str.contains("/", regex=False)].str.split("/").str[0]
    ex = pd.concat([ex, head])
    norm = ex.str.replace(r"[-/._+#*]+", "", regex=True)
    digit = norm.str.contains(r"\d")
    alpha = norm.str.contains(r"[^\W\d_]")
    ordinal = norm.str.fullmatch(r"\d+(st|nd|rd|th|s)")
    keep = (digit & alpha & (norm.str.len() >= 4) & ~ordinal) | norm.str.fullmatch(r"\d{5,}")
    return norm[keep.fillna(False)]


def test_code_tokens_in_pieces_equal_the_one_call_version(monkeypatch):
    rng = np.random.default_rng(4)
    words = ["TH-50PZ850U", "MSMT2G/TQ", "ab12/cd34", "5th", "4gb", "123456", "x", None, "a/b", "SONY",
             "kdl-40/v", "98765/43210", "", "12"]
    text = pd.Series([" ".join(str(w) for w in rng.choice(np.array(words, dtype=object), rng.integers(0, 5)))
                      if rng.random() > 0.05 else None for _ in range(400)])
    ref = _code_tokens_one_call(text)
    assert len(ref) > 100 and (ref.index.to_numpy()[1:] < ref.index.to_numpy()[:-1]).any()  # heads after words
    monkeypatch.setattr(kinds, "_CODE_ROWS", 7)
    got = kinds.code_tokens(text)
    assert got.index.equals(ref.index) and got.tolist() == ref.tolist()
    assert kinds.code_tokens(text.iloc[:0]).empty


def test_comparison_passes_see_one_piece_and_give_the_same_features(monkeypatch):
    df = generate_records(600, random_state=3).drop(columns=["entity"])
    df = df.astype(str).reset_index(drop=True)
    fields = infer_fields_report(df).fields
    assert {"date", "record"} <= {f.kind for f in fields}
    pairs = block(df, default_blocking_rules(fields, len(df)))
    assert len(pairs) > 1000
    with monkeypatch.context() as m:  # one piece: the calls as they were
        for name in ("ITEMS", "ROWS"):
            m.setattr(_chunks, name, 1 << 62, raising=False)
        m.setattr(kinds, "_CODE_ROWS", 1 << 62, raising=False)
        ref = comparisons.compare(df, pairs, fields)
    seen = {"factorize": [], "to_datetime": []}
    real_fact, real_dt = pd.factorize, pd.to_datetime

    def fact(values, *a, **k):
        if np.asarray(values).dtype == object:  # record values and words (not the int pair codes of _distinct)
            seen["factorize"].append(len(values))
        return real_fact(values, *a, **k)

    def dt(arg, *a, **k):
        seen["to_datetime"].append(len(arg))
        return real_dt(arg, *a, **k)

    monkeypatch.setattr(pd, "factorize", fact)
    monkeypatch.setattr(pd, "to_datetime", dt)
    monkeypatch.setattr(_chunks, "ITEMS", 97)
    monkeypatch.setattr(_chunks, "ROWS", 50, raising=False)  # (raising=False: the old code fails below)
    monkeypatch.setattr(kinds, "_CODE_ROWS", 50, raising=False)
    got = comparisons.compare(df, pairs, fields)
    assert got.names == ref.names and got.X.tobytes() == ref.X.tobytes()  # bit for bit, NaN included
    assert seen["to_datetime"] and max(seen["to_datetime"]) <= 50
    assert len(seen["factorize"]) > 20 and max(seen["factorize"]) <= 97


def test_pair_passes_in_pieces_equal_one_call(monkeypatch):
    """The FS match probability's row sums and blocking's pair stack, in pieces of pairs: the same arrays
    (regression guard: the values were already these; the pieces bound how long a signal waits)."""
    from trustlab.er import blocking
    from trustlab.er.scoring import FSModel

    rng = np.random.default_rng(2)
    W = rng.standard_normal((5003, 9))
    W[rng.random(W.shape) < 0.1] = np.nan
    model = FSModel.__new__(FSModel)
    model.lambda_ = 0.01
    ref = 1.0 / (1.0 + np.exp(-np.clip(np.log(0.01 / 0.99) + W.sum(1), -50, 50)))
    monkeypatch.setattr(_chunks, "ITEMS", 97)
    monkeypatch.setattr(_chunks, "BYTES", 160)
    got = model.proba_from_field_weights(W)
    assert np.array_equal(got, ref, equal_nan=True)
    rec = rng.integers(0, 400, 3000)
    key = rng.integers(0, 60, 3000)
    pairs = blocking._pairs_from_membership(rec, key, 1000)
    assert pairs.shape[1] == 2 and len(pairs) > 10_000 and pairs.dtype == np.int64 and pairs.flags.c_contiguous
    monkeypatch.setattr(_chunks, "BYTES", 1 << 40)  # one piece: np.stack as before
    assert np.array_equal(pairs, blocking._pairs_from_membership(rec, key, 1000))
