"""Three rules of the unsupervised model that keep one piece of evidence from counting twice
or counting for the wrong thing: model-number fields agree only on the same code, a value's
term frequency is scaled to the candidates' agreement rate, and the whole-record comparison
counts only what the fields have not said."""
import math

import numpy as np
import pandas as pd
import pytest

from trustlab.er import Field
from trustlab.er.comparisons import compare
from trustlab.er.fields import infer_fields_report
from trustlab.er.scoring import FSModel


def _codes(n, rng):
    letters = np.array(list("ABCDEFGHJKLMNPRSTUVWXZ"))
    return [f"{''.join(rng.choice(letters, 2))}-{rng.integers(10, 999)}{''.join(rng.choice(letters, 1))}"
            for _ in range(n)]


def test_model_number_column_is_inferred_as_model_kind():
    rng = np.random.default_rng(0)
    codes = _codes(100, rng) * 2  # each product twice (unique codes would be a record id)
    df = pd.DataFrame({"modelno": codes, "title": [f"thing {i % 100} deluxe" for i in range(200)]})
    kinds = {f.column: f.kind for f in infer_fields_report(df).fields}
    assert kinds["modelno"] == "model"
    assert kinds["title"] != "model"
    # years and plain numbers are not model numbers
    years = pd.DataFrame({"year": [str(1950 + i % 60) for i in range(200)]})
    assert {f.column: f.kind for f in infer_fields_report(years).fields}.get("year") != "model"


def test_model_kind_agrees_only_on_the_same_code():
    df = pd.DataFrame({"m": ["TH-50PZ850U", "TH50PZ850U", "WRT54GL", "WRV54G", "", "wrt54gl"]})
    pairs = np.array([[0, 1], [2, 3], [0, 4], [2, 5]])
    fm = compare(df, pairs, [Field("m", "model")])
    ex = fm.X[:, fm.names.index("m:exact")]
    assert ex[0] == 1.0  # the same code, with and without a hyphen
    assert ex[1] == 0.0  # neighbouring model numbers are different products
    assert np.isnan(ex[2])  # missing is no evidence
    assert ex[3] == 1.0  # case does not matter
    lv = FSModel([Field("m", "model")]).levels(fm)[:, 0]
    assert lv.tolist() == [0, 3, -1, 0]  # exact / else / missing / exact: no "close" level


def _fitted(share=None, scale=None):
    fields = [Field("brand", "exact"), Field("title", "string"), Field("*", "record")]
    m = FSModel(fields)
    m.m_ = np.tile([0.8, 0.1, 0.05, 0.05], (3, 1))
    m.u_ = np.tile([0.01, 0.04, 0.15, 0.80], (3, 1))
    m.lambda_ = 0.01
    m.tf_tables_ = {"brand": {"acme": 0.001, "big": 0.3}}
    m.tf_default_ = {"brand": 0.001}
    m.tf_scale_ = dict(scale or {})
    m.record_share_ = dict(share or {})
    return m


def test_tf_weight_is_scaled_by_the_candidates_agreement_rate():
    df = pd.DataFrame({"brand": ["acme", "acme"], "title": ["a b", "a b"]})
    pairs = np.array([[0, 1]])
    fm = compare(df, pairs, _fitted().fields)
    w0 = _fitted().field_weights(df, pairs, fm)[0, 0]
    w1 = _fitted(scale={"brand": 50.0}).field_weights(df, pairs, fm)[0, 0]
    assert w0 == pytest.approx(math.log(0.8) - math.log(0.001))
    assert w1 == pytest.approx(w0 - math.log(50.0))


def test_fit_scales_tf_of_a_field_the_candidates_were_blocked_on():
    # candidates share the brand far more often than random pairs do: the fitted scale
    # says so (u at the exact level refitted on the candidates over the random-pair u)
    rng = np.random.default_rng(1)
    n = 600
    brand = rng.choice([f"b{k}" for k in range(60)], n)
    ent = np.arange(n) // 2
    title = np.array([f"item {e} {rng.choice(['red', 'blue'])}" for e in ent])
    df = pd.DataFrame({"brand": brand, "title": title})
    df.loc[1::2, "brand"] = df.loc[0::2, "brand"].to_numpy()
    fields = [Field("brand", "exact"), Field("title", "string")]
    same_brand = [(i, j) for i in range(n) for j in range(i + 1, min(n, i + 40)) if brand[i] == brand[j]]
    P = np.array(sorted(set(same_brand) | {(2 * e, 2 * e + 1) for e in range(n // 2)}), np.int64)
    R = np.stack([rng.integers(0, n, 4000), rng.integers(0, n, 4000)], 1)
    R = R[R[:, 0] != R[:, 1]]
    m = FSModel(fields).fit(df, P, compare(df, P, fields), R, compare(df, R, fields))
    assert m.tf_scale_.get("brand", 1.0) > 2.0


def test_record_counts_only_beyond_the_fields():
    df = pd.DataFrame({"brand": ["zz", "yy"], "title": ["canon powershot sd1100", "canon powershot sd1200"]})
    pairs = np.array([[0, 1]])
    base = _fitted()
    fm = compare(df, pairs, base.fields)
    W0 = base.field_weights(df, pairs, fm)
    # no shares (a model saved before): the record keeps its whole weight
    share = {"brand": 0.2, "title": 0.8}
    W1 = _fitted(share=share).field_weights(df, pairs, fm)
    overlap = 0.2 * W0[0, 0] + 0.8 * W0[0, 1]
    r = W0[0, 2]
    expected = r if np.sign(r) != np.sign(overlap) else np.sign(r) * max(abs(r) - abs(overlap), 0.0)
    assert W1[0, 2] == pytest.approx(expected)
    np.testing.assert_allclose(W1[0, :2], W0[0, :2])
    # a brute-force check of the rule over random weights
    rng = np.random.default_rng(2)
    W = rng.normal(0, 4, (500, 3))
    out = _fitted(share=share)._record_beyond_fields(W.copy())
    for w, o in zip(W, out):
        s = 0.2 * w[0] + 0.8 * w[1]
        want = w[2] if (w[2] > 0) != (s > 0) else math.copysign(max(abs(w[2]) - abs(s), 0.0), w[2])
        assert o[2] == pytest.approx(want)
        # together never more than the stronger of the two views when they agree
        if (w[2] > 0) == (s > 0):
            assert abs(o[2] + s) == pytest.approx(max(abs(w[2]), abs(s)))


def test_fit_records_word_shares_and_they_round_trip():
    df = pd.DataFrame({"title": ["a long product title here", "another long title words"] * 30,
                       "brand": ["x", "y"] * 30})
    fields = [Field("title", "string"), Field("brand", "exact"), Field("*", "record")]
    m = FSModel(fields)
    m._fit_record_share(df)
    assert m.record_share_["title"] == pytest.approx(5 / 6, abs=0.02)
    assert m.record_share_["brand"] == pytest.approx(1 / 6, abs=0.02)
    m.m_ = np.tile([0.8, 0.1, 0.05, 0.05], (3, 1))
    m.u_ = np.tile([0.01, 0.04, 0.15, 0.80], (3, 1))
    m.lambda_ = 0.01
    back = FSModel.from_dict(m.to_dict())
    assert back.record_share_ == m.record_share_


def test_session_with_more_matches_than_the_tables_hold_is_ignored():
    # two duplicate-free tables can hold at most one match per record of the smaller one:
    # an EM session expecting more "matches" than that has found look-alikes (same brand),
    # and its m-probabilities are not used
    rng = np.random.default_rng(3)
    n = 400
    brand = rng.choice([f"brand{k}" for k in range(100)], n)
    ent = np.arange(n) // 2
    df = pd.DataFrame({"brand": brand, "title": [f"item {e} {rng.choice(['a', 'b', 'c'])}" for e in ent],
                       "code": [f"x{e}" if rng.random() < 0.7 else "" for e in ent]})
    df.loc[1::2, "brand"] = df.loc[0::2, "brand"].to_numpy()
    fields = [Field("brand", "exact"), Field("title", "string"), Field("code", "exact")]
    P = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if brand[i] == brand[j] or ent[i] == ent[j]])
    R = np.stack([rng.integers(0, n, 5000), rng.integers(0, n, 5000)], 1)
    R = R[R[:, 0] != R[:, 1]]
    fm, fr = compare(df, P, fields), compare(df, R, fields)
    free = FSModel(fields).fit(df, P, fm, R, fr)
    assert free.sessions_ and not any("ignored" in s for s in free.sessions_)
    capped = FSModel(fields).fit(df, P, fm, R, fr, max_matches=2.0)
    assert any("ignored" in s for s in capped.sessions_)
    assert all(s.get("ignored") for s in capped.sessions_ if s["lambda"] * s["pairs"] > 2.0)
