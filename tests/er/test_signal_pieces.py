"""Long C calls of the comparison and blocking stages run in bounded pieces (issue 28:
SIGTERM exits within 2 s), and the pieces never change a result: every fast path here is
checked against the same computation done in one call (the code before the change)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import trustlab
from trustlab import _chunks
from trustlab.er import scoring
from trustlab.er.blocking import block, default_blocking_rules, rule_hits
from trustlab.er.fields import infer_fields_report
from trustlab.er.records import read_records

DATA = Path(trustlab.__file__).parent / "data" / "er"


def _one_piece(monkeypatch):
    """Pieces so large that every call covers all items (the unchunked reference)."""
    for mod, name in [(_chunks, "ITEMS"), (_chunks, "CHARS"), (_chunks, "BYTES"),
                      (scoring, "_DEDUP"), (scoring, "_JACCARD_CHUNK")]:
        monkeypatch.setattr(mod, name, 1 << 62)


def _small_pieces(monkeypatch, items=997, chars=20_011):
    monkeypatch.setattr(_chunks, "ITEMS", items)
    monkeypatch.setattr(_chunks, "CHARS", chars)
    monkeypatch.setattr(_chunks, "BYTES", 1 << 17)
    monkeypatch.setattr(scoring, "_DEDUP", 5 * items + 3)
    monkeypatch.setattr(scoring, "_JACCARD_CHUNK", 7_001)


def _case(name, n=None):
    df = read_records(DATA / name).reset_index(drop=True)
    df = df.iloc[:n].reset_index(drop=True) if n else df
    fields = infer_fields_report(df).fields
    pairs = block(df, default_blocking_rules(fields, len(df)))
    return df, fields, pairs


@pytest.mark.parametrize("name", ["csv_example.csv.gz", "restaurant.csv"])
def test_compare_in_pieces_is_identical_and_every_cpdist_call_is_bounded(monkeypatch, name):
    df, fields, pairs = _case(name, 1000)
    pairs = pairs[:: max(1, len(pairs) // 20_000)]
    kinds = {f.kind for f in fields}
    assert {"record"} & kinds and len(pairs) > 10_000  # text, tokens and whole-record features
    with monkeypatch.context() as m:
        _one_piece(m)
        ref = scoring.compare(df, pairs, fields)
    real = scoring.process.cpdist
    calls = []

    def recording(a, b, **kw):
        calls.append((len(a), sum(map(len, a)) + sum(map(len, b))))
        return real(a, b, **kw)

    monkeypatch.setattr(scoring.process, "cpdist", recording)
    _small_pieces(monkeypatch)
    got = scoring.compare(df, pairs, fields)
    assert got.names == ref.names
    assert got.X.tobytes() == ref.X.tobytes()  # bit for bit, NaN included
    assert got.X.flags.c_contiguous
    assert len(calls) > 10
    # a call holds at most ITEMS pairs and CHARS characters (or one longer pair)
    assert all(k <= 997 and (c <= 20_011 or k == 1) for k, c in calls)


def test_rule_hits_in_pieces_equals_isin(monkeypatch):
    df, fields, pairs = _case("csv_example.csv.gz", 1200)
    rules = default_blocking_rules(fields, len(df))
    sub = pairs[::2]
    n = len(df)
    code = sub[:, 0] * n + sub[:, 1]
    ref = np.stack([np.isin(code, (pr := block(df, [r]))[:, 0] * n + pr[:, 1]) for r in rules], axis=1)
    _small_pieces(monkeypatch, items=101)
    got = rule_hits(df, rules, sub)
    assert got.any() and np.array_equal(got, ref)


def test_text_spans_cover_every_pair_once_within_the_budget():
    rng = np.random.default_rng(0)
    words = np.array(["", "a", "abc" * 5, "x" * 200, "hello world"], dtype=object)
    a, b = words[rng.integers(0, 5, 3000)], words[rng.integers(0, 5, 3000)]
    a[5] = None  # not a string: counted as one character
    sp = list(_chunks.text_spans(a, b, chars=500, size=64))
    assert sp[0][0] == 0 and sp[-1][1] == 3000 and all(x[1] == y[0] for x, y in zip(sp, sp[1:]))
    cost = np.array([len(x) if isinstance(x, str) else 1 for x in a]) + np.array([len(x) for x in b])
    assert all(e - s <= 64 and (cost[s:e].sum() <= 500 or e - s == 1) for s, e in sp)


def test_piecewise_stacks_equal_numpy(monkeypatch):
    monkeypatch.setattr(_chunks, "BYTES", 100)
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((57, 4)), rng.standard_normal((13, 4))
    assert np.array_equal(_chunks.vstack([A, B]), np.vstack([A, B]))
    p, q = rng.integers(0, 9, (40, 2)), rng.integers(0, 9, (3, 2))
    assert np.array_equal(_chunks.vstack([p, q]), np.concatenate([p, q]))
    assert np.array_equal(_chunks.vstack([A[:, 0], B[:, 1]]), np.concatenate([A[:, 0], B[:, 1]]))
    cols = [A[:, k].copy() for k in range(4)]
    assert np.array_equal(_chunks.column_stack(cols, 57), np.column_stack(cols))
    assert _chunks.column_stack([], 5).shape == (5, 0)
