"""The Numba paths of the whole-record comparisons and of the distributed encodings against
the SciPy / pandas code they replace: the same values, bit for bit (issue 31's CPU time)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from trustlab import _chunks
from trustlab.er import comparisons as C
from trustlab.er import distributed as D


def _rows(rng, m: int, ncol: int, longest: int, unsorted: bool) -> tuple[np.ndarray, np.ndarray]:
    """CSR structure: rows of distinct columns, sorted unless ``unsorted``."""
    lens = rng.integers(0, longest + 1, m)
    cols = [rng.choice(ncol, size=min(int(k), ncol), replace=False) for k in lens]
    cols = [c if unsorted else np.sort(c) for c in cols]
    ptr = np.r_[0, np.cumsum([len(c) for c in cols])].astype(np.int64)
    return ptr, (np.concatenate(cols) if len(cols) else np.zeros(0)).astype(np.int64)


@pytest.mark.parametrize("unsorted", [False, True])
@pytest.mark.parametrize("longest", [12, 400])  # rows past NumPy's 8- and 128-value sum blocks
def test_rowwise_dot_equals_scipy_bit_for_bit(unsorted, longest, monkeypatch):
    rng = np.random.default_rng(longest + unsorted)
    for trial in range(12):
        m, ncol = int(rng.integers(2, 80)), int(rng.integers(longest + 1, 3 * longest + 10))
        ptr, cols = _rows(rng, m, ncol, longest, unsorted)
        wa = rng.random(cols.size) * 10.0 ** rng.uniform(-3, 3, cols.size)
        wb = np.ones(cols.size) if trial % 3 == 0 else rng.random(cols.size)
        A = sparse.csr_matrix((wa, cols, ptr), shape=(m, ncol))
        B = sparse.csr_matrix((wb, cols, ptr), shape=(m, ncol))
        i, j = rng.integers(0, m, 700), rng.integers(0, m, 700)
        monkeypatch.setattr(C, "_JACCARD_CHUNK", int(rng.integers(20, 5000)))  # several pieces
        got, ref = C._rowwise_dot(A, B, i, j), C._rowwise_dot_scipy(A, B, i, j)
        assert np.array_equal(got, ref), np.abs(got - ref).max()


def test_distributed_sparse_dot_equals_scipy_on_factorized_columns(monkeypatch):
    """Rows sorted by token hash with columns numbered by first appearance (as the encodings
    are compared): SciPy's general method sums in reverse, its canonical one (every row of a
    piece with increasing columns) forward; both reproduced."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        m = int(rng.integers(2, 60))
        vocab = np.unique(rng.integers(0, 2**64, 200, dtype=np.uint64))
        lens = rng.integers(0, 30 if trial % 2 else 2, m)  # rows of 0-1 tokens: every piece canonical
        tok = [np.sort(rng.choice(vocab, size=int(k), replace=False)) for k in lens]
        ptr = np.r_[0, np.cumsum(lens)].astype(np.int64)
        tok = np.concatenate(tok) if m else np.zeros(0, np.uint64)
        w, share = rng.random(tok.size), rng.random(tok.size)
        i, j = rng.integers(0, m, 500), rng.integers(0, m, 500)
        monkeypatch.setattr(C, "_JACCARD_CHUNK", int(rng.integers(5, 2000)))
        ids, key, canonical = D._row_keys(ptr, tok)
        assert np.array_equal(ids, pd.factorize(tok)[0])
        rows = (ptr, ids, key, canonical)
        if not tok.size:
            continue
        shape = (m, int(ids.max()) + 1)
        for a, b in ((w, w), (share, np.ones_like(share))):
            ref = C._rowwise_dot_scipy(sparse.csr_matrix((a, ids, ptr), shape=shape),
                                       sparse.csr_matrix((b, ids, ptr), shape=shape), i, j)
            assert np.array_equal(D._sparse_dot(rows, a, b, i, j), ref)


def test_cosine_in_common_merge_equals_scipy_products(monkeypatch):
    rng = np.random.default_rng(3)
    for _ in range(15):
        m, ncol = int(rng.integers(2, 120)), int(rng.integers(5, 200))
        ptr, cols = _rows(rng, m, ncol, 20, False)
        A = sparse.csr_matrix((rng.random(cols.size), cols, ptr), shape=(m, ncol))
        S = sparse.csr_matrix((rng.random(cols.size), cols, ptr), shape=(m, ncol))
        H = sparse.csr_matrix((rng.integers(1, 6, cols.size).astype(float), cols, ptr), shape=(m, ncol))
        bits = rng.integers(0, 32, m).astype(np.int64)
        i, j = rng.integers(0, m, 600), rng.integers(0, m, 600)
        cos = rng.random(600)
        got = C.missing_is_no_disagreement(cos.copy(), A, S, H, bits, i, j)
        with monkeypatch.context() as mp:  # rows taken as unsorted: SciPy's products of the gathered rows
            mp.setattr(C, "_rows_sorted", lambda p, q: np.zeros(len(p) - 1, bool))
            ref = C.missing_is_no_disagreement(cos.copy(), A, S, H, bits, i, j)
        assert np.array_equal(got, ref, equal_nan=True)


def test_text_spans_from_given_lengths_are_the_counted_ones():
    rng = np.random.default_rng(0)
    a = np.array(["x" * int(k) for k in rng.integers(0, 40, 3000)], dtype=object)
    b = np.array(["y" * int(k) for k in rng.integers(0, 40, 3000)], dtype=object)
    la, lb = _chunks._lengths(a), _chunks._lengths(b)
    assert list(_chunks.text_spans(a, b, chars=700, size=256, lengths=(la, lb))) == \
        list(_chunks.text_spans(a, b, chars=700, size=256))


def test_tf_lookup_and_frequencies_equal_the_pandas_forms():
    rng = np.random.default_rng(2)
    tab = {f"k{q}": float(x) for q, x in enumerate(rng.random(50))}
    keys = np.array([f"k{q}" for q in rng.integers(0, 80, 400)] + ["", None], dtype=object)
    ref = pd.Series(keys).map(tab).astype(float).fillna(0.5).to_numpy(np.float64)
    assert np.array_equal(D._tf_lookup(keys, tab, 0.5), ref)
    hs = np.unique(rng.integers(0, 2**64, 300, dtype=np.uint64))
    ks = rng.integers(1, 9, hs.size)
    h = np.concatenate([hs[rng.integers(0, hs.size, 500)], rng.integers(0, 2**64, 50, dtype=np.uint64)])
    k = np.minimum(np.searchsorted(hs, h), hs.size - 1)
    assert np.array_equal(D._frequencies(hs, ks, h), np.where(hs[k] == h, ks[k], 0).astype(np.float64))


def test_encodings_hold_the_lengths_of_their_strings():
    from trustlab.er import generate_records
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    df = generate_records(300, random_state=3).drop(columns="entity")
    fl = [Field("given_name", "name"), Field("address_1", "address"), Field("postcode", "postcode"),
          Field("date_of_birth", "date"), Field("soc_sec_id", "code")]
    enc = D._encode(df, fl, None, None, FSModel(fl), None)
    for f in fl:
        s = enc.cols[f"{f.column}:s"]
        assert np.array_equal(enc.cols[f"{f.column}:n"], _chunks._lengths(s))
