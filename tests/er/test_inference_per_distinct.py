"""The inference's per-value string work done once per distinct value (the same results as per row)."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from trustlab.er import fields as F
from trustlab.er import kinds
from trustlab.er.kinds import KINDS, Field

ODD = pd.Series(["x ", None, "X", " nan", "", "O'Neil,  Ann", "x ", np.nan, 3, 3.0, " NaN ", "ÉÈ-x"], dtype=object)


def _old_clean(s):
    v = s.dropna()
    if v.dtype == object or isinstance(v.dtype, pd.StringDtype):
        v = v.astype(str).str.strip()
        v = v[(v != "") & (v.str.lower() != "nan")]
    return v


def test_tf_key_normalises_each_distinct_value_once(monkeypatch):
    seen = []

    def spy(s):
        seen.append(len(s))
        return s.str.strip().str.lower()

    monkeypatch.setattr(kinds, "_ELEMENTWISE", frozenset({spy}))
    kind = dataclasses.replace(KINDS["name"], normalise=spy)
    s = pd.Series([" Ann", "bob", " Ann", "BOB "] * 250, index=np.arange(1000) * 3, name="c")
    got = kind.tf_key(s)
    assert seen == [3]
    pd.testing.assert_series_equal(got, s.str.strip().str.lower(), check_exact=True)


def test_tf_key_other_normaliser_sees_the_whole_column():
    seen = []

    def norm(s):
        seen.append(len(s))
        return s.str.lower()

    kind = dataclasses.replace(KINDS["name"], normalise=norm)
    kind.tf_key(pd.Series(["A", "A", "b"]))
    assert seen == [3]


@pytest.mark.parametrize("dtype", [object, "string"])
@pytest.mark.parametrize("kind", sorted(k for k in KINDS if KINDS[k].arity == 1))
def test_tf_keys_same_as_per_row(kind, dtype):
    s = ODD.astype(str) if dtype == "string" else ODD
    df = pd.DataFrame({"c": s.astype(dtype) if dtype == "string" else s})
    f = Field("c", kind)
    want = (KINDS[kind].normalise or kinds._lower)(df["c"].fillna("").astype(str)).fillna("").to_numpy(dtype=object)
    got = kinds.tf_keys(df, f)
    assert got.dtype == want.dtype and [type(x) for x in got] == [type(x) for x in want] and list(got) == list(want)


@pytest.mark.parametrize("s", [ODD, ODD.astype("string"), pd.Series([1.5, np.nan, 2.0]), pd.Series([], dtype=object),
                               pd.Series(["a", "a", " a"], index=[5, 2, 9], name="n")])
def test_clean_same_as_per_row(s):
    pd.testing.assert_series_equal(F._clean(s), _old_clean(s), check_exact=True)


def test_similarities_same_as_per_row():
    rng = np.random.default_rng(0)
    words = np.array(["ann lee", "Ann  Lee", "bob", "", "x y z", "lee ann", "O'Neil"], dtype=object)
    df = pd.DataFrame({"c": words[rng.integers(0, len(words), 300)]})
    df.loc[::7, "c"] = None
    pairs = rng.integers(0, len(df), (2000, 2))
    X = F._similarities(df, Field("c", "name"), pairs)
    key = F._keys(df, Field("c", "name"))
    toks = [set(str(v).lower().split()) if v is not None else set() for v in df["c"]]
    import re
    toks = [set(re.findall(r"\w+", (v or "").lower())) for v in df["c"]]
    for (a, b), (eq, jac) in zip(pairs, X):
        if key[a] == "" or key[b] == "":
            assert np.isnan(eq) and np.isnan(jac)
            continue
        assert eq == float(key[a] == key[b])
        u = toks[a] | toks[b]
        if u:
            assert jac == len(toks[a] & toks[b]) / len(u)
        else:
            assert np.isnan(jac)
