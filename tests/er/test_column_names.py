"""The whole-record comparison does not depend on the names of the columns (issue 27, stop 43).

A word a record holds in several columns of its text (a brand in the brand and the title
columns) used to count in the first of them in the order of the column names, so renaming the
columns changed the ``shared:<column>`` parts, the cosine over the columns in common and so the
entities. It is now split equally among its columns (:func:`trustlab.er.comparisons.column_split`).
Checked: renamed columns give the same features, levels and entities bit for bit; the distributed
encodings (fused kernel and general path) give the local comparison's features; and the split
against a brute force on a tiny example.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.er._encoded import encoded_case
from trustlab.er import distributed as D
from trustlab.er.comparisons import compare, popcount
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel

FIELDS = {"title": "string", "brand": "name", "category": "name", "*": "record"}
# a permutation of the names that reorders them: by name the columns were brand, category,
# title; renamed they are title, category, brand
RENAME = {"title": "a_title", "category": "m_category", "brand": "z_brand"}


def _products(n: int = 240, seed: int = 11) -> pd.DataFrame:
    """Products whose brand and category words also sit in the title (and a few brands that are
    also categories); a quarter duplicated with the brand left out, a word dropped or another
    colour."""
    rng = np.random.default_rng(seed)
    brands = ["sony", "canon", "nikon", "apple", "dell", "asus", "lenovo", "acer", "hp", "lg", "camera"]
    cats = ["camera", "laptop", "phone", "monitor", "tablet", "sony"]
    colours = ["black", "silver", "white", "red", "blue"]
    rows = []
    for k in range(n):
        b, c = brands[rng.integers(len(brands))], cats[rng.integers(len(cats))]
        model = f"{'abcdefghkmx'[rng.integers(11)]}{rng.integers(10, 999)}"
        title = " ".join([b, model, c, colours[rng.integers(len(colours))]])
        rows.append({"pid": f"p{k}", "title": title, "brand": b, "category": c})
    for k in rng.choice(n, n // 4, replace=False):
        r = dict(rows[k], pid=f"d{k}")
        t = r["title"].split()
        how = rng.integers(3)
        if how == 0:
            r["brand"] = ""
        elif how == 1:
            r["title"] = " ".join(t[:1] + t[2:] + [t[1]]) if rng.random() < 0.5 else " ".join(t[:-1])
        else:
            r["title"] = " ".join(t[:-1] + [colours[rng.integers(len(colours))]])
        rows.append(r)
    return pd.DataFrame(rows)


def _fields(rename: dict | None = None) -> list[Field]:
    rename = rename or {}
    return [Field(rename.get(c, c), k) for c, k in FIELDS.items()]


def _renamed_names(names: list[str]) -> list[str]:
    """The feature names of the original columns as the renamed frame names them."""
    out = []
    for nm in names:
        for old, new in RENAME.items():
            nm = nm.replace(f"{old}:", f"{new}:") if nm.startswith(f"{old}:") else nm
            nm = nm[:-len(old)] + new if nm.startswith("*:shared:") and nm.endswith(f":{old}") else nm
        out.append(nm)
    return out


def test_words_sit_in_two_columns():
    """The case exercises the split: most records hold their brand (and category) word in the
    title too."""
    df = _products()
    in_title = [b in t.split() and c in t.split() for t, b, c in zip(df["title"], df["brand"], df["category"])]
    assert np.mean(in_title) > 0.6


def test_renamed_columns_give_the_same_features_and_levels():
    """``compare`` and the model's levels on renamed columns (another order by name): the same
    features (the ``shared:<column>`` parts under their new names), bit for bit."""
    df = _products()
    n = len(df)
    P = np.array([(a, b) for a in range(n) for b in range(a + 1, n) if (a * 7 + b) % 5 == 0], np.int64)
    fl, fr = _fields(), _fields(RENAME)
    model = FSModel(fl)
    only = model.needed_features()
    only_r = {RENAME.get(c, c): v for c, v in only.items()}
    base = compare(df, P, fl, only=only)
    ren = compare(df.rename(columns=RENAME), P, fr, only=only_r)
    want = _renamed_names(list(base.names))
    assert sorted(want) == sorted(ren.names)
    assert any(nm.startswith("*:shared:") for nm in ren.names)
    X = ren.X[:, [ren.names.index(nm) for nm in want]]
    assert np.array_equal(X, base.X, equal_nan=True)
    # levels: the same spec applied to the same values
    G0 = model.levels(base)
    model_r = FSModel(fr)
    G1 = model_r.levels(ren)
    order = [[f.column for f in fr].index(RENAME.get(f.column, f.column)) for f in fl]
    assert np.array_equal(G0, G1[:, order])
    rec = base.names.index("*:cosine")
    assert np.unique(G0[:, [f.column for f in fl].index("*")]).size >= 3 and np.isfinite(base.X[:, rec]).sum() > 100


def test_renamed_columns_give_the_same_entities():
    """``resolve`` with every default but the fields: the same pairs, probabilities and entities
    whatever the columns are called."""
    import trustlab

    df = _products()
    a = trustlab.resolve(df, id_col="pid", fields=FIELDS)
    b = trustlab.resolve(df.rename(columns=RENAME), id_col="pid",
                         fields={RENAME.get(c, c): k for c, k in FIELDS.items()})
    assert np.array_equal(a.pairs, b.pairs)
    assert np.array_equal(a.prob, b.prob)
    assert np.array_equal(np.asarray(a.ids), np.asarray(b.ids))
    assert np.array_equal(np.asarray(a.entity), np.asarray(b.entity))
    assert len(np.unique(a.entity)) < len(df)  # duplicates were found


@pytest.mark.parametrize("fused", [True, False])
def test_encodings_split_words_as_the_local_comparison(fused, monkeypatch):
    """The distributed encodings hold per word the mask of its columns (several bits for a word
    in several columns) and give ``compare``'s whole-record features (fused kernel and general
    path, which are equal bit for bit)."""
    df = _products(160, seed=4)
    fl = _fields()
    P, only, whole, enc = encoded_case(df, fl)
    mask = enc.csr["*"][4]
    assert (popcount(mask) >= 2).sum() > 50
    got_fused = D._encoded_features(enc, fl[-1], P[:, 0], P[:, 1], only["*"], None, fl)
    monkeypatch.setattr(D, "_record_cosine", lambda *a: None)
    got_general = D._encoded_features(enc, fl[-1], P[:, 0], P[:, 1], only["*"], None, fl)
    assert got_fused[1] == got_general[1]
    assert np.array_equal(np.column_stack(got_fused[0]), np.column_stack(got_general[0]), equal_nan=True)
    got = got_fused if fused else got_general
    k = [nm for nm in whole.names if nm.startswith("*:")]
    assert ["*:" + x for x in got[1]] == k
    np.testing.assert_allclose(np.column_stack(got[0]), whole.X[:, [whole.names.index(x) for x in k]],
                               rtol=1e-9, atol=1e-12, equal_nan=True)


def test_cosine_in_common_splits_a_word_among_its_columns():
    """The cosine over the columns two records both fill, their coverage and the rare-words
    test, against a brute force over dense rows where a word's squared weight is split
    equally among its columns (tiny example)."""
    from scipy import sparse

    from trustlab.er.comparisons import _cosine_in_common

    rng = np.random.default_rng(5)
    n, vocab, k = 12, 9, 4
    W = np.where(rng.random((n, vocab)) < 0.5, rng.random((n, vocab)) + 0.2, 0.0)
    W /= np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-300)
    M = np.zeros((n, vocab), np.int64)
    for _ in range(2):
        M |= np.left_shift(1, rng.integers(0, k, (n, vocab)))
    M[W == 0] = 0
    Sh = np.where(W > 0, rng.random((n, vocab)) * 0.9, 0.0)
    bits = np.array([np.bitwise_or.reduce(M[r]) for r in range(n)], np.int64)
    bits[3] &= ~np.int64(1)  # a record that does not fill column 0 (its words there stay)
    i, j = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    A, S, H = sparse.csr_matrix(W), sparse.csr_matrix(Sh), sparse.csr_matrix(M)
    got_c, got_r, got_rare = _cosine_in_common(A, S, H, bits, i, j)
    for p, (a, b) in enumerate(zip(i, j)):
        common = int(bits[a] & bits[b])
        cols = [c for c in range(k) if common >> c & 1]

        def frac(r, w):
            m = [c for c in range(k) if M[r, w] >> c & 1]
            return sum(c in cols for c in m) / len(m) if m else 0.0

        ni = math.sqrt(sum(W[a, w] ** 2 * frac(a, w) for w in range(vocab)))
        nj = math.sqrt(sum(W[b, w] ** 2 * frac(b, w) for w in range(vocab)))
        dot = sum(W[a, w] * W[b, w] * math.sqrt(frac(a, w) * frac(b, w)) for w in range(vocab))
        best = np.zeros(k)
        for w in range(vocab):
            if W[a, w] and W[b, w] and frac(a, w) > 0 and frac(b, w) > 0:
                m = [c for c in range(k) if M[a, w] >> c & 1]
                for c in m:
                    if c in cols:
                        best[c] = max(best[c], Sh[a, w] / len(m))
        if ni == 0 or nj == 0:
            assert np.isnan(got_c[p])
        else:
            assert got_c[p] == pytest.approx(min(dot / (ni * nj), 1.0), rel=1e-12, abs=1e-15)
        assert got_r[p] == pytest.approx(math.sqrt(ni * nj), rel=1e-12, abs=1e-15)
        if abs(best.sum() - 1.0) > 1e-9:
            assert bool(got_rare[p]) == (best.sum() >= 1.0)
    assert np.isfinite(got_c).sum() > 50 and 0 < got_rare.sum() < len(i)


def test_the_canonical_row_order_does_not_follow_the_names():
    """Records without an id are processed in an order of their content that neither the
    columns' names nor their order nor the rows' order change."""
    from trustlab.er.defaults import canonical_order

    df = _products(60).drop(columns=["pid"])
    df.insert(0, "_row", np.arange(len(df)))
    want = df["_row"].to_numpy()[canonical_order(df, "_row")]
    rng = np.random.default_rng(2)
    other = df.rename(columns=RENAME)[["_row", "z_brand", "a_title", "m_category"]].iloc[rng.permutation(len(df))]
    other = other.reset_index(drop=True)
    got = other["_row"].to_numpy()[canonical_order(other, "_row")]
    assert np.array_equal(got, want)


def test_renamed_columns_without_ids_give_the_same_entities():
    """``resolve`` on records without an id column (the row number is the id): the same
    entities per record whatever the columns are called."""
    import trustlab

    df = _products().drop(columns=["pid"])
    a = trustlab.resolve(df, fields=FIELDS)
    b = trustlab.resolve(df.rename(columns=RENAME), fields={RENAME.get(c, c): k for c, k in FIELDS.items()})
    assert np.array_equal(np.asarray(a.ids), np.asarray(b.ids))
    assert np.array_equal(np.asarray(a.entity), np.asarray(b.entity))
    assert np.array_equal(a.prob, b.prob)
