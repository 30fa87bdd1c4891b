"""Issue 27 (pv43): the comparisons' per-record work kept between calls
(:func:`~trustlab.er.comparisons.prepared_records`), the feature matrix filled field by field
and the completed pairs appended in place (:func:`trustlab._chunks.extend_rows`) give the
same features, weights and entities as the path they replace: each kind's features stacked
from fresh per-record work, and ``vstack`` copies.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import trustlab
from trustlab import _chunks
from trustlab.er import comparisons as C
from trustlab.er import generate_records
from trustlab.er import pipeline as PL
from trustlab.er.kinds import Field, needed_features

_FIELDS = [Field("given_name", "name"), Field("surname", "name"), Field("surname", "string"),
           Field("address_1", "address"), Field("suburb", "tokens"), Field("postcode", "postcode"),
           Field("postcode", "code"), Field("soc_sec_id", "code"), Field("state", "exact"),
           Field("street_number", "numeric"), Field("phone", "phone"), Field("date_of_birth", "date"),
           Field("*", "record"), Field("#", "codes")]


def _records(n: int, seed: int) -> pd.DataFrame:
    df = generate_records(n, random_state=seed).drop(columns="entity").reset_index(drop=True)
    rng = np.random.default_rng(seed)
    df["phone"] = [f"0{rng.integers(2, 9)} {rng.integers(1000, 9999)} {rng.integers(1000, 9999)}"
                   if rng.random() < 0.8 else None for _ in range(n)]
    df.loc[df.index % 7 == 0, "address_1"] = None
    return df


def _stacked(df, pairs, fields, only):
    """The features as compare made them before: every kind's columns from fresh per-record
    work (no kept work), stacked at the end."""
    cols = []
    for f in fields:
        fc, _, _ = C.FEATURES[f.kind](df, f, pairs[:, 0], pairs[:, 1], fields,
                                      None if only is None else only.get(f.column))
        cols += fc
    return _chunks.column_stack(cols, len(pairs))


def _pairs(n, k, seed):
    rng = np.random.default_rng(seed)
    P = np.sort(rng.integers(0, n, size=(k, 2)), axis=1)
    P = P[P[:, 0] != P[:, 1]]
    near = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)  # neighbours: some duplicates
    return np.concatenate([P, near])


@pytest.mark.parametrize("only", [None, "needed"])
def test_compare_with_kept_records_equals_fresh_stacked_features(only):
    """Three batches of pairs compared inside one ``prepared_records`` block (the work per
    record made by the first and reused), and each compared on its own, equal, bit for bit,
    every kind's features computed afresh and stacked; two fields of one column with
    different kinds do not share their work."""
    df = _records(600, 3)
    want = needed_features(_FIELDS) if only else None
    batches = [_pairs(len(df), 2000, s) for s in (1, 2, 3)] + [np.zeros((0, 2), np.int64)]
    ref = [_stacked(df, P, _FIELDS, want) for P in batches]
    with C.prepared_records() as kept:
        inside = [C.compare(df, P, _FIELDS, only=want) for P in batches]
        assert len(kept) > 1  # the work was kept (besides the bytes left)
    alone = [C.compare(df, P, _FIELDS, only=want) for P in batches]
    for r, a, b in zip(ref, inside, alone):
        assert r.shape == a.X.shape == b.X.shape
        assert np.array_equal(r, a.X, equal_nan=True)
        assert np.array_equal(r, b.X, equal_nan=True)
    assert inside[0].names == alone[0].names and inside[0].primary == alone[0].primary


def test_kept_work_belongs_to_its_table():
    """Two tables of the same columns compared inside one block: each gets its own features
    (the work is found by the DataFrame object, never by its columns alone)."""
    a, b = _records(300, 5), _records(300, 6)
    P = _pairs(300, 1500, 7)
    with C.prepared_records():
        fa = C.compare(a, P, _FIELDS).X
        fb = C.compare(b, P, _FIELDS).X
        fa2 = C.compare(a, P, _FIELDS).X
    assert np.array_equal(fa, _stacked(a, P, _FIELDS, None), equal_nan=True)
    assert np.array_equal(fb, _stacked(b, P, _FIELDS, None), equal_nan=True)
    assert np.array_equal(fa2, fa, equal_nan=True)
    assert not np.array_equal(fa, fb, equal_nan=True)


def test_extend_rows_grows_in_place_or_copies():
    class Box:
        pass

    b = Box()
    b.x = np.arange(12.0).reshape(4, 3).copy()  # owns its data
    before = id(b.x)
    more = np.full((2, 3), -1.0)
    want = np.vstack([b.x, more])
    _chunks.extend_rows(b, "x", more)
    assert id(b.x) == before  # grown in place: nothing else held it
    assert np.array_equal(b.x, want)
    held = b.x  # another reference: a copy, the held array unchanged
    _chunks.extend_rows(b, "x", more)
    assert held.shape == (6, 3) and b.x.shape == (8, 3)
    assert np.array_equal(b.x, np.vstack([want, more]))
    b.v = np.arange(3, dtype=np.int32)  # another dtype: a copy of the common dtype
    _chunks.extend_rows(b, "v", np.array([2**40]))
    assert b.v.dtype == np.int64 and b.v.tolist() == [0, 1, 2, 2**40]
    b.view = np.arange(10.0)[::2]  # not owning its data: a copy
    _chunks.extend_rows(b, "view", np.ones(1))
    assert b.view.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 1.0]


def test_resolve_equals_the_path_without_kept_work_or_growth(monkeypatch):
    """resolve with blocking rules whose blocks chain into components that completion fills
    in: the features, field weights, probabilities and entities are those of the path that
    redoes every record's work per call and copies the arrays it appends to."""
    df = _records(2400, 11)

    def run():
        return trustlab.resolve(df, id_col="rec_id", blocking=["key:postcode", "key:surname", "key:given_name"])

    new = run()
    assert new.blocking.n_completed_pairs > 0  # the in-place appends ran
    with monkeypatch.context() as m:
        m.setattr(C, "_prepared", lambda df, key, make: make())
        m.setattr(PL, "extend_rows", lambda obj, name, more: setattr(obj, name, _chunks.vstack(
            [getattr(obj, name), more])))
        old = run()
    assert np.array_equal(new.features.X, old.features.X, equal_nan=True)
    assert np.array_equal(new.field_weights, old.field_weights, equal_nan=True)
    assert np.array_equal(new.prob, old.prob) and np.array_equal(new.pairs, old.pairs)
    assert np.array_equal(np.asarray(new.entity), np.asarray(old.entity))


@pytest.mark.parametrize("max_bytes", [0, 200_000])
def test_kept_work_stays_within_its_bound(max_bytes):
    """The kept work never goes beyond ``max_bytes`` (estimated); what does not fit is redone
    by each call, with the same features."""
    df = _records(600, 3)
    batches = [_pairs(len(df), 2000, s) for s in (1, 2)]
    with C.prepared_records(max_bytes=max_bytes) as kept:
        got = [C.compare(df, P, _FIELDS).X for P in batches]
        values = [v for k, v in kept.items() if k != C._BUDGET]
        assert sum(C._nbytes(v[1]) for v in values) <= max_bytes
        assert bool(values) == (max_bytes > 0)  # some pieces fit 200 kB, none fits 0
    for P, x in zip(batches, got):
        assert np.array_equal(x, _stacked(df, P, _FIELDS, None), equal_nan=True)
