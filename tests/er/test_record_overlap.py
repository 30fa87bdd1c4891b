"""The whole-record comparison counted beyond the fields, per pair (issue 27, stop 42).

Two different people with the same first and last names agree on both name fields, and their
whole records agree through the same two names. The record's weight is taken off by the part of
the pair's own cosine that the agreeing fields' shared words make (``shared:<column>``
features, :func:`trustlab.er.comparisons.shared_parts`), not only by each field's share of the
table's words. Checked against a TF-IDF computed here from scratch, and the distributed
encodings against the local comparison.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from tests.er._encoded import encoded_case
from trustlab.er import distributed as D
from trustlab.er.comparisons import compare
from trustlab.er.defaults import random_pairs
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel

FIELDS = [Field("fname", "name"), Field("lname", "name"), Field("by", "exact"), Field("bm", "exact"),
          Field("bd", "exact"), Field("*", "record")]


def _people(n: int = 400, seed: int = 3) -> pd.DataFrame:
    """People as RLdata holds them: first and last names from small pools (homonyms occur),
    birth year, month and day; 10 % duplicates with one date part changed."""
    rng = np.random.default_rng(seed)
    syl = ["ka", "ren", "mo", "li", "sa", "te", "bu", "ro", "vi", "na"]
    first = [syl[a] + syl[b] for a in range(10) for b in range(6)]  # 60 first names, 90 last names
    last = [syl[a] + syl[b] + "er" for a in range(10) for b in range(9)]
    df = pd.DataFrame({"fname": [first[k] for k in rng.integers(0, len(first), n)],
                       "lname": [last[k] for k in rng.integers(0, len(last), n)],
                       "by": rng.integers(1930, 2000, n).astype(str), "bm": rng.integers(1, 13, n).astype(str),
                       "bd": rng.integers(1, 29, n).astype(str)})
    dup = df.sample(n // 10, random_state=seed).copy()
    col = rng.choice(["by", "bm", "bd"], len(dup))
    for k, c in enumerate(col):
        dup.iloc[k, dup.columns.get_loc(c)] = str(int(dup.iloc[k][c]) + 1)
    return pd.concat([df, dup], ignore_index=True)


def _tfidf_parts(df: pd.DataFrame, cols: list[str], P: np.ndarray) -> np.ndarray:
    """Per pair and column: the sum of the products of the unit TF-IDF weights (sublinear tf,
    idf log(n / df) + 1e-6) of the words both records hold in that column, from scratch; a
    word a record holds in several columns split equally among them (``1 / sqrt(|Ma| |Mb|)``
    of the product in each column both hold it in)."""
    words = [[re.findall(r"[^\W\d_]+|\d+", str(df.iloc[r][c]).lower()) for c in cols] for r in range(len(df))]
    n = len(df)
    dfreq: dict = {}
    for rec in words:
        for w in {w for ws in rec for w in ws}:
            dfreq[w] = dfreq.get(w, 0) + 1
    vecs, homes = [], []
    for rec in words:
        tf: dict = {}
        home: dict = {}
        for c, ws in enumerate(rec):
            for w in ws:
                tf[w] = tf.get(w, 0) + 1
                home.setdefault(w, set()).add(c)
        v = {w: (1 + math.log(k)) * (math.log(n / dfreq[w]) + 1e-6) for w, k in tf.items()}
        norm = math.sqrt(sum(x * x for x in v.values()))
        vecs.append({w: x / norm for w, x in v.items()})
        homes.append(home)
    out = np.zeros((len(P), len(cols)))
    for k, (a, b) in enumerate(P):
        for w in vecs[a].keys() & vecs[b].keys():
            for c in homes[a][w] & homes[b][w]:
                out[k, c] += vecs[a][w] * vecs[b][w] / math.sqrt(len(homes[a][w]) * len(homes[b][w]))
    return out


def test_shared_parts_equal_brute_force():
    """Per pair and column, the products of the words two rows share, each split equally among
    the columns a row holds it in (a word in different columns counts in none), against a loop
    over the words and columns."""
    from scipy import sparse

    from trustlab.er.comparisons import popcount, shared_parts

    rng = np.random.default_rng(0)
    n, vocab, k = 30, 25, 4
    dense = np.where(rng.random((n, vocab)) < 0.3, rng.random((n, vocab)) + 0.1, 0.0)
    # one to three columns per word, column k: not a slot
    mask = np.zeros((n, vocab), np.int64)
    for _ in range(3):
        mask |= np.where(rng.random((n, vocab)) < 0.6, np.left_shift(1, rng.integers(0, k + 1, (n, vocab))), 0)
    mask[(dense > 0) & (mask == 0)] = 1
    mask[dense == 0] = 0
    A, H = sparse.csr_matrix(dense), sparse.csr_matrix(mask)
    i, j = rng.integers(0, n, 300), rng.integers(0, n, 300)
    got = shared_parts(A, H, i, j, k)
    want = np.zeros((len(i), k))
    for p, (a, b) in enumerate(zip(i, j)):
        for w in range(vocab):
            if not (dense[a, w] and dense[b, w]):
                continue
            ca = {c for c in range(k + 1) if mask[a, w] >> c & 1}
            cb = {c for c in range(k + 1) if mask[b, w] >> c & 1}
            for c in ca & cb:
                if c < k:
                    want[p, c] += dense[a, w] * dense[b, w] / math.sqrt(len(ca) * len(cb))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert (got > 0).sum() > 50
    multi = popcount(mask[i].ravel()).reshape(mask[i].shape) > 1
    assert (multi & (dense[i] > 0) & (dense[j] > 0)).sum() > 20  # the split is exercised


def test_the_record_is_counted_beyond_the_agreeing_fields_by_its_own_parts():
    """The record's weight of every pair is its level's weight less the larger of the table's
    overlap and the pair's own: the agreeing fields' weights times the part of the pair's cosine
    their shared words make (TF-IDF from scratch). Homonyms (same first and last names, every
    birth-date part different) lose more of the record than the table's shares took off."""
    df = _people()
    n = len(df)
    P = np.array([(a, b) for a in range(n) for b in range(a + 1, n)], np.int64)
    model = FSModel(FIELDS)
    only = model.needed_features()
    rp = random_pairs(n, np.random.default_rng(0))
    fm = compare(df, P, FIELDS, only=only)
    model.fit(df, P, fm, rp, compare(df, rp, FIELDS, only=only))
    W = model.field_weights(df, P, fm)
    share = dict(model.record_share_)
    model.record_share_ = {}  # no overlap: the record's level weight as it is
    raw = model.field_weights(df, P, fm)
    model.record_share_ = share
    cols = ["bd", "bm", "by", "fname", "lname"]  # the record's columns by name
    R = _tfidf_parts(df, cols, P)
    idx = [[f.column for f in FIELDS].index(c) for c in cols]
    tab = raw[:, :5] @ np.array([share.get(f.column, 0.0) for f in FIELDS[:5]])
    own = (R * np.maximum(raw[:, idx], 0)).sum(1)
    r = raw[:, 5]
    S = np.where(r > 0, np.maximum(tab, own), tab)
    want = np.where(np.sign(r) == np.sign(S), np.sign(r) * np.maximum(np.abs(r) - np.abs(S), 0), r)
    np.testing.assert_allclose(W[:, 5], want, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(W[:, :5], raw[:, :5])
    homonyms = ((df["fname"].to_numpy()[P[:, 0]] == df["fname"].to_numpy()[P[:, 1]])
                & (df["lname"].to_numpy()[P[:, 0]] == df["lname"].to_numpy()[P[:, 1]])
                & np.all([df[c].to_numpy()[P[:, 0]] != df[c].to_numpy()[P[:, 1]] for c in ("by", "bm", "bd")], axis=0))
    homonyms &= r > 0  # the whole records agree (the level "far")
    assert homonyms.sum() >= 3
    assert np.all(W[homonyms, 5] < np.where(np.sign(r) == np.sign(tab), r - tab, r)[homonyms] - 0.5)


@pytest.mark.parametrize("fused", [True, False])
def test_encoded_shared_parts_equal_the_local_comparison(fused, monkeypatch):
    """The distributed encodings give the ``shared:<column>`` features that ``compare`` gives on
    the raw records (fused kernel path and the general one)."""
    df = _people(200, seed=5)
    fl = FIELDS
    P, only, whole, enc = encoded_case(df, fl)
    if not fused:
        monkeypatch.setattr(D, "_record_cosine", lambda *a: None)
    got = D._encoded_features(enc, fl[-1], P[:, 0], P[:, 1], only["*"], None, fl)
    k = [n for n in whole.names if n.startswith("*:")]
    assert ["*:" + x for x in got[1]] == k and len(k) == 6
    X = np.column_stack(got[0])
    np.testing.assert_allclose(X, whole.X[:, [whole.names.index(x) for x in k]], rtol=1e-9, atol=1e-12,
                               equal_nan=True)
    assert (X[:, 1:] > 0).sum() > 100


def test_a_saved_model_scores_the_pairs_as_the_run_did(tmp_path):
    """A model saved from a run scores the run's pairs (``ERModel.score``, which incremental
    resolution uses) with the run's probabilities: it compares the record with its shared parts."""
    import trustlab
    from trustlab.er.model import load_model, save_model

    df = _people(300, seed=7)
    df["rid"] = [f"p{k}" for k in range(len(df))]
    fields = ",".join(f"{f.column}:{f.kind}" for f in FIELDS)
    r = trustlab.resolve(df, id_col="rid", fields=fields)
    prob, _ = load_model(save_model(r, tmp_path / "m.json")).score(df, r.pairs)
    np.testing.assert_allclose(prob, r.prob, rtol=1e-9, atol=1e-12)


def test_the_pair_budget_counts_the_records_shared_parts():
    """The default pair budget is planned for the features a pair really carries: with a
    whole-record comparison, its shared parts (one feature per record column) count too,
    so a table with a record field gets fewer pairs than the same fields without one."""
    import pandas as pd

    from trustlab.er import resolve
    from trustlab.er.defaults import default_pair_budget
    from trustlab.er.kinds import Field, pair_width

    cols = [f"c{q}" for q in range(12)]
    plain = [Field(c, "name") for c in cols]
    assert pair_width(plain) == 12
    assert pair_width(plain + [Field("*", "record")]) == 13 + 6
    assert default_pair_budget(pair_width(plain + [Field("*", "record")])) < default_pair_budget(13)
    df = pd.DataFrame({c: [f"{c} ann", f"{c} anne", f"{c} bob", f"{c} bobby"] for c in cols})
    res = resolve(df, fields={**{c: "name" for c in cols}, "*": "record"})
    assert res.blocking.pair_budget == default_pair_budget(19) < default_pair_budget(13)
