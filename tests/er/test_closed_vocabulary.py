"""Short values from a closed vocabulary (states, cuisines, genres) are categories compared
exactly; short values from an open one (first names, surnames: a long tail of rarer values,
typos among them) are names, however many rows the table has.

The old hint read every short column with fewer distinct values than a fifth of its rows as
categories, a threshold that grows with the table: RLdata10000's first and last names (539
and 354 distinct in 10,000 rows) behind headers that say nothing were compared exactly and
the run found no match (F1 0.0). The columns here are generated: a Zipf-distributed name
column (the 50 commonest names hold about half the rows) and a 60-value category column
with 2 % typos (the 50 commonest values hold over 90 %).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.er import fields as F
from trustlab.er.kinds import CLOSED_SHARE, VOCABULARY, ColumnProfile

_LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def _words(rng: np.random.Generator, k: int) -> np.ndarray:
    return np.array(["".join(rng.choice(_LETTERS, rng.integers(4, 9))) for _ in range(k)])


def _typo(rng: np.random.Generator, w: str) -> str:
    i = int(rng.integers(0, len(w)))
    return w[:i] + str(rng.choice(_LETTERS)) + w[i + 1:]


def _names(rng: np.random.Generator, n: int) -> list[str]:
    """An open vocabulary: 3,000 names drawn with Zipf weights (s = 1), 3 % typos."""
    pool = _words(rng, 3000)
    w = 1.0 / np.arange(1, len(pool) + 1)
    out = list(rng.choice(pool, n, p=w / w.sum()))
    return [_typo(rng, v) if rng.random() < 0.03 else v for v in out]


def _categories(rng: np.random.Generator, n: int) -> list[str]:
    """A closed vocabulary: 60 values, geometric-like weights, 2 % typos."""
    pool = _words(rng, 60)
    w = 0.93 ** np.arange(len(pool))
    out = list(rng.choice(pool, n, p=w / w.sum()))
    return [_typo(rng, v) if rng.random() < 0.02 else v for v in out]


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    # headers that say nothing about the content (as in a headerless file)
    return pd.DataFrame({"c1": _names(rng, n), "c2": _categories(rng, n)})


def _kinds(df: pd.DataFrame) -> dict:
    rep = F.infer_fields_report(df)
    return {c.column: c.kind for c in rep.choices if c.role == "field" and c.column in df.columns}


def test_the_generated_columns_are_what_they_claim():
    """The name column is open and would have passed the old size-grown threshold; the
    category column is closed (so the test checks the rule, not the generator)."""
    df = _table(20000)
    for col, closed in (("c1", False), ("c2", True)):
        vc = df[col].value_counts()
        assert VOCABULARY <= len(vc) < 0.2 * len(df), (col, len(vc))  # the old hint's "short categories"
        assert (vc.iloc[:VOCABULARY].sum() / len(df) >= CLOSED_SHARE) == closed, col


@pytest.mark.parametrize("n", [2000, 20000])
def test_names_with_a_long_tail_are_names_and_categories_stay_exact(n):
    """At 20,000 rows the old hint read the name column as categories (exact)."""
    assert _kinds(_table(n)) == {"c1": "name", "c2": "exact"}


def test_the_kind_does_not_change_with_the_table_size():
    assert _kinds(_table(2000, seed=1)) == _kinds(_table(20000, seed=1))


def test_top_share_reads_the_whole_column_when_given():
    """``counts`` (the whole column's value counts) decides; the sample only without it."""
    s = pd.Series([f"v{i}" for i in range(100)] + ["a"] * 900)
    counts = s.value_counts()
    p = ColumnProfile("x", s.iloc[:100], len(s), len(counts), counts)
    assert p.top_share == pytest.approx((900 + 49) / 1000)
    assert ColumnProfile("x", s.iloc[:100], len(s), len(counts)).top_share == pytest.approx(0.5)
