"""Long C calls of the comparison and blocking stages run in bounded pieces (issue 28:
SIGTERM exits within 2 s), and the pieces never change a result: every fast path here is
checked against the same computation done in one call (the code before the change)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import trustlab
from trustlab import _chunks
from trustlab.er import comparisons
from trustlab.er.blocking import block, default_blocking_rules, rule_hits
from trustlab.er.fields import infer_fields_report
from trustlab.er.records import read_records

DATA = Path(trustlab.__file__).parent / "data" / "er"


def _one_piece(monkeypatch):
    """Pieces so large that every call covers all items (the unchunked reference)."""
    for mod, name in [(_chunks, "ITEMS"), (_chunks, "CHARS"), (_chunks, "BYTES"),
                      (comparisons, "_DEDUP"), (comparisons, "_JACCARD_CHUNK")]:
        monkeypatch.setattr(mod, name, 1 << 62)


def _small_pieces(monkeypatch, items=997, chars=20_011):
    monkeypatch.setattr(_chunks, "ITEMS", items)
    monkeypatch.setattr(_chunks, "CHARS", chars)
    monkeypatch.setattr(_chunks, "BYTES", 1 << 17)
    monkeypatch.setattr(comparisons, "_DEDUP", 5 * items + 3)
    monkeypatch.setattr(comparisons, "_JACCARD_CHUNK", 7_001)


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
        ref = comparisons.compare(df, pairs, fields)
    real = comparisons.process.cpdist
    calls = []

    def recording(a, b, **kw):
        calls.append((len(a), sum(map(len, a)) + sum(map(len, b))))
        return real(a, b, **kw)

    monkeypatch.setattr(comparisons.process, "cpdist", recording)
    _small_pieces(monkeypatch)
    got = comparisons.compare(df, pairs, fields)
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


# ---------------------------------------------------------------- sorts in pieces (issue 28)
# The whole-array sorts of resolve (np.unique of the level rows, the lexsort of
# cluster.canonical_pairs, the sort of _chunks.sorted_unique) took 1.4-3.5 s each at 200,000
# records, one C call during which a SIGTERM waits. They now sort pieces and merge them range by
# range (_chunks.argsort / sort / unique); the references below are the code before the change.

def _keys(rng, kind, n):
    if kind == "few":  # many ties
        return rng.integers(0, 5, n)
    if kind == "wide":
        return rng.integers(-(10**15), 10**15, n)
    if kind == "special":  # NaN, signed zeros, infinities
        return rng.choice(np.array([np.nan, -0.0, 0.0, 1.5, -2.0, np.inf, -np.inf]), n)
    if kind == "float":
        return rng.standard_normal(n).round(1)
    if kind == "heavy":  # one value holds most keys: a range of equal keys longer than a piece
        a = np.full(n, 3, np.int64)
        a[rng.random(n) < 0.1] = 7
        return a
    if kind == "sorted":
        return np.sort(rng.integers(0, 50, n))[::-1].copy()
    return rng.random(n) < 0.5  # bool


KINDS = ["few", "wide", "special", "float", "heavy", "sorted", "bool"]


@pytest.mark.parametrize("kind", KINDS)
def test_argsort_sort_unique_in_pieces_equal_numpy(kind):
    rng = np.random.default_rng(KINDS.index(kind))
    for n in [0, 1, 2, 7, 64, 65, 300, 2000]:
        a = _keys(rng, kind, n)
        for size in [2, 3, 8, 64, 5000]:  # many pieces, a few, one
            got = _chunks.argsort(a, size)
            assert got.dtype == np.intp and np.array_equal(got, np.argsort(a, kind="stable")), (n, size)
            assert np.array_equal(_chunks.sort(a, size), np.sort(a), equal_nan=a.dtype.kind == "f")
            if a.dtype.kind in "iu":
                ref = np.unique(a, return_index=True, return_inverse=True)
                got3 = _chunks.unique(a, size)
                assert all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in zip(ref, got3)), (n, size)


def _record_sort_calls(monkeypatch):
    """Sizes of every whole-array NumPy sort called while the test runs."""
    sizes = []
    for name in ["argsort", "sort", "lexsort", "unique"]:
        real = getattr(np, name)

        def rec(a, *args, _real=real, **kw):
            sizes.append(max((len(x) for x in a), default=0) if isinstance(a, tuple) else np.size(a))
            return _real(a, *args, **kw)

        monkeypatch.setattr(np, name, rec)
    return sizes


def test_every_sort_call_is_bounded(monkeypatch):
    rng = np.random.default_rng(5)
    a = rng.integers(0, 10**9, 50_000)
    a[::3] = 7  # a long range of equal keys
    ref = np.argsort(a, kind="stable"), np.sort(a), np.unique(a, return_index=True, return_inverse=True)
    sizes = _record_sort_calls(monkeypatch)
    got = _chunks.argsort(a, 1000), _chunks.sort(a, 1000), _chunks.unique(a, 1000)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    assert all(np.array_equal(x, y) for x, y in zip(got[2], ref[2]))
    assert len(sizes) > 50 and max(sizes) <= 2000


def _canonical_pairs_before(n, pairs, weights):  # cluster.canonical_pairs before the change
    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    ok = np.flatnonzero(lo != hi)
    lo, hi, w = lo[ok], hi[ok], np.asarray(weights)[ok]
    code = lo.astype(np.int64) * n + hi
    o = np.lexsort((-w, code))
    code, w, kept = code[o], w[o], ok[o]
    first = np.r_[True, code[1:] != code[:-1]] if code.size else np.zeros(0, bool)
    code, w, kept = code[first], w[first], kept[first]
    return np.stack([code // n, code % n], axis=1).astype(np.int64), w, kept


def _distinct_rows_inverse_before(G):  # comparisons._distinct_rows_inverse before the change
    import math
    if len(G) == 0:
        return G, np.zeros(0, np.int64)
    G64 = G.astype(np.int64) + 1
    base = max(5, int(G64.max()) + 1)
    if G.shape[1] * math.log(base) < 62 * math.log(2):
        code = np.zeros(len(G), np.int64)
        for c in range(G.shape[1]):
            code = code * base + G64[:, c]
        _, first, inv = np.unique(code, return_index=True, return_inverse=True)
        return G[first], inv.ravel()
    U, inv = np.unique(G, axis=0, return_inverse=True)
    return U, inv.ravel()


def _small_sorts(monkeypatch, size=64):
    monkeypatch.setattr(_chunks, "SORT", size, raising=False)
    monkeypatch.setattr(_chunks, "ITEMS", size)


@pytest.mark.parametrize("seed", range(6))
def test_canonical_pairs_in_pieces_equal_the_lexsort(monkeypatch, seed):
    from trustlab.er.cluster import canonical_pairs

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    for m in [0, 1, 40, 3000]:
        pairs = rng.integers(0, n, (m, 2))  # repeated pairs both ways round, self pairs
        w = rng.choice(np.array([-1.0, 0.0, -0.0, 0.5, 2.0, np.inf, np.nan]), m) if seed % 2 else \
            rng.standard_normal(m).round(1)
        ref = _canonical_pairs_before(n, pairs, w)
        with monkeypatch.context() as mp:
            _small_sorts(mp, 128)
            sizes = _record_sort_calls(mp)
            got = canonical_pairs(n, pairs, w)
        for x, y in zip(ref, got):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes()  # bit for bit, NaN and -0.0 included
        assert max(sizes, default=0) <= 2 * 128  # every sort call bounded (as m <= 128 ** 2 / 4)


@pytest.mark.parametrize("shape,hi", [((0, 3), 3), ((1, 4), 3), ((5000, 6), 3), ((5000, 3), 40),
                                      ((3000, 30), 3)])
def test_distinct_rows_inverse_in_pieces_equals_np_unique(monkeypatch, shape, hi):
    from trustlab.er.scoring import _distinct_rows_inverse

    rng = np.random.default_rng(shape[0] + shape[1])
    G = rng.integers(-1, hi + 1, shape).astype(np.int8)
    G[: len(G) // 2] = G[len(G) // 2: 2 * (len(G) // 2)]  # repeated rows
    ref = _distinct_rows_inverse_before(G)
    with monkeypatch.context() as mp:
        _small_sorts(mp)
        got = _distinct_rows_inverse(G)
    assert all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(ref, got))


def test_the_sorts_of_resolve_run_in_bounded_pieces(monkeypatch):
    """Fails before the change: each of these sorted its whole input in one NumPy call."""
    from trustlab._chunks import sorted_unique
    from trustlab.er.cluster import canonical_pairs
    from trustlab.er.scoring import _distinct_rows_inverse

    rng = np.random.default_rng(3)
    n, m = 500, 20_000
    pairs, w = rng.integers(0, n, (m, 2)), rng.standard_normal(m)
    G = rng.integers(-1, 4, (m, 5)).astype(np.int8)
    code = rng.integers(0, n * n, m)
    _small_sorts(monkeypatch, 256)
    sizes = _record_sort_calls(monkeypatch)
    canonical_pairs(n, pairs, w)
    _distinct_rows_inverse(G)
    sorted_unique(code)
    assert sizes and max(sizes) <= 2 * 256


def _resolve_bytes(df, **kw):
    from trustlab.er import resolve

    r = resolve(df, **kw)
    return {"labels": np.asarray(r.labels).tobytes() if hasattr(r, "labels") else None,
            "entity": r.entities.to_csv().encode() if hasattr(r, "entities") else None,
            "pairs": np.asarray(r.pairs).tobytes(), "prob": np.asarray(r.prob).tobytes(),
            "fw": np.asarray(r.field_weights).tobytes(), "forcing": bool(r.model.forcing_ and r.model.key_coef_),
            "record": bool(r.model.record_share_), "tf": bool(r.model.tf_tables_)}


@pytest.mark.parametrize("case", ["restaurant", "synthetic-key-rules"])
def test_resolve_with_small_pieces_is_byte_identical(monkeypatch, case):
    """Every stage cut into pieces (comparison, model weights, level rows, the sorts of
    blocking and clustering) gives the same pairs, weights, probabilities and entities."""
    from trustlab.er.synthetic import generate_records

    if case == "restaurant":
        df, kw = read_records(DATA / "restaurant.csv").reset_index(drop=True), {}
    else:
        df = generate_records(2500, random_state=3).drop(columns=["entity"])
        kw = {"id_col": "rec_id", "blocking": ["key:surname", "key:postcode", "token:address_1"]}
    with monkeypatch.context() as m:
        _one_piece(m)
        m.setattr(_chunks, "SORT", 1 << 62)
        ref = _resolve_bytes(df, **kw)
    _small_pieces(monkeypatch, items=4099)
    monkeypatch.setattr(_chunks, "SORT", 2053)
    got = _resolve_bytes(df, **kw)
    assert got == ref
    assert ref["record"] and ref["tf"]  # the paths cut into pieces


def test_field_weights_with_key_rules_in_pieces_are_identical(monkeypatch):
    """The key-rule prior of FSModel.field_weights (plain EM with ``key:`` rules) in pieces."""
    from trustlab.er.scoring import FSModel
    from trustlab.er.synthetic import generate_records

    df = generate_records(3000, random_state=4).drop(columns=["entity", "rec_id"])
    fields = infer_fields_report(df).fields
    rules = ["key:surname", "key:postcode", "token:address_1"]
    P = block(df, rules)
    rng = np.random.default_rng(0)
    R = np.unique(np.sort(rng.integers(0, len(df), (20_000, 2)), axis=1), axis=0)
    R = R[R[:, 0] != R[:, 1]]
    fm, fr = comparisons.compare(df, P, fields), comparisons.compare(df, R, fields)
    m = FSModel(fields, sessions=False).fit(df, P, fm, R, fr, rules=rules)
    assert m.forcing_ and m.key_coef_ and m.record_share_ and m.tf_tables_
    with monkeypatch.context() as mp:
        _one_piece(mp)
        ref = m.field_weights(df, P, fm)
    _small_pieces(monkeypatch, items=1009)
    sizes = []
    for name in ["isnan", "where", "log", "maximum", "sign"]:  # fails before: each ran over every pair at once
        real = getattr(np, name)
        monkeypatch.setattr(np, name, lambda *a, _real=real, **kw: sizes.append(np.size(a[0])) or _real(*a, **kw))
    got = m.field_weights(df, P, fm)
    assert len(P) > 10 * 1009 and got.tobytes() == ref.tobytes()
    assert len(sizes) > 100 and max(sizes) <= 1009 * len(fields)


@pytest.mark.filterwarnings("ignore:.*is not UTF-8")
def test_records_read_in_pieces_are_identical(monkeypatch, tmp_path):
    """read_records parses a text table in pieces of rows (pandas' C parser is one call per
    piece): the same frame as one read, for quoted line breaks, empty cells, a header-only
    file, another delimiter and a latin-1 file."""
    from trustlab.er import records

    odd = tmp_path / "odd.csv"
    odd.write_text('id,name,note\n1,"Ann\nSmith",\n2,,"x, y"\n3,Bob,"say ""hi"""\n' + "".join(
        f"{k},n{k},{'' if k % 3 else 'NA'}\n" for k in range(4, 200)))
    head = tmp_path / "head.csv"
    head.write_text("id,name\n")
    semi = tmp_path / "semi.csv"
    semi.write_text("id;name\n" + "".join(f"{k};v{k}\n" for k in range(50)))
    latin = tmp_path / "latin.csv"
    latin.write_bytes(("id,name\n" + "".join(f"{k},Jos\xe9 {k}\n" for k in range(60))).encode("latin-1"))
    files = [DATA / "restaurant.csv", DATA / "csv_example.csv.gz", odd, head, semi, latin]
    ref = [records._read_text_table(f, None, None) for f in files]
    assert len(ref[3]) == 0 and ref[5]["name"].iloc[0] == "Jos\xe9 0"
    monkeypatch.setattr(records, "_READ_ROWS", 7)
    for f, r in zip(files, ref):
        got = records._read_text_table(f, None, None)
        pd.testing.assert_frame_equal(got, r, check_exact=True)
        assert got.index.equals(r.index) and type(got.index) is type(r.index), f


def test_blocking_normalisation_in_pieces_is_identical(monkeypatch):
    from trustlab.er import rules as R

    df = read_records(DATA / "restaurant.csv").reset_index(drop=True)
    s = pd.concat([df["name"], pd.Series([None, float("nan"), 3, "Ünïcode — x!"])], ignore_index=True)
    ref = R._norm(s)
    rules = default_blocking_rules(infer_fields_report(df).fields, len(df))
    pairs = block(df, rules)
    monkeypatch.setattr(R, "_NORM_ROWS", 37)
    got = R._norm(s)
    pd.testing.assert_series_equal(got, ref)
    assert type(got.index) is type(ref.index)
    assert np.array_equal(block(df, rules), pairs)
