"""The ``numbers`` comparison (numbers written inside free text)."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import trustlab
from trustlab.er.comparisons import (NUMBER_TOLERANCE, compare, number_agreement, number_counts, number_keys,
                                     number_weights)
from trustlab.er.fields import infer_fields_report
from trustlab.er.kinds import MAX_NUMBERS, NUMBERS, Field, text_numbers


def _brute(a: str, b: str, weight=None) -> float:
    """The share of agreeing numbers by a plain-Python reading of the rule (``weight``: a
    number's weight from its text and decimal flag; None: 1 each)."""
    import re

    pat = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
    xa = [(float(w), "." in w) for w in pat.findall(a)][:MAX_NUMBERS]
    xb = [(float(w), "." in w) for w in pat.findall(b)][:MAX_NUMBERS]
    if not xa or not xb:
        return float("nan")
    wt = weight or (lambda p: 1.0)

    def agree(p, q):
        tol = NUMBER_TOLERANCE * max(abs(p[0]), abs(q[0])) if (p[1] or q[1]) else 0.0
        return abs(p[0] - q[0]) <= tol

    ha = sum(wt(p) for p in xa if any(agree(p, q) for q in xb))
    hb = sum(wt(q) for q in xb if any(agree(p, q) for p in xa))
    den = sum(wt(p) for p in xa) + sum(wt(q) for q in xb)
    return (ha + hb) / den if den > 0 else float("nan")


def test_number_agreement_matches_brute_force():
    rng = np.random.default_rng(0)
    pool = ["1949", "7", "22", "1950", "30.3167", "30.32", "-4.76667", "-4.78333", "40.6333", "40.6403",
            "g06f", "4gb", "meier", "x", "22.95", "22.9439", "0", "-0", "100", "100.4", "12"]
    texts = [" ".join(rng.choice(pool, int(rng.integers(0, 16)))) for _ in range(120)] + [""]
    v, d = text_numbers(pd.Series(texts))
    P = np.array(list(itertools.combinations(range(len(texts)), 2)))[rng.permutation(7260)[:600]]
    P = np.vstack([P, np.stack([np.arange(30), np.arange(30)], axis=1)])  # a text with itself
    got = number_agreement(v[P[:, 0]], d[P[:, 0]], v[P[:, 1]], d[P[:, 1]])
    want = np.array([_brute(texts[a], texts[b]) for a, b in P])
    np.testing.assert_allclose(got, want, equal_nan=True)
    assert np.isnan(want).any() and (want == 1).any() and ((want > 0) & (want < 1)).any()


def test_weighted_number_agreement_matches_brute_force():
    """The rarity weights (log(n / records holding the number), decimals counted by unit
    interval) against a plain-Python count of the records and the weighted share."""
    import math
    import re

    rng = np.random.default_rng(3)
    pool = ["1949", "7", "7", "7", "22", "1950", "30.3167", "30.32", "-4.76667", "40.6333", "40.6403", "g06f", "-0",
            "meier", "22.95", "0", "100", "100.4", "12", "12", "3"]
    texts = [" ".join(rng.choice(pool, int(rng.integers(0, 9)))) for _ in range(150)] + ["", "7"]
    pat = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")

    def key(p):
        return math.floor(p[0]) + 0.5 if p[1] else p[0]

    held = [{key((float(w), "." in w)) for w in pat.findall(t)[:MAX_NUMBERS]} for t in texts]

    def weight(p):
        return max(math.log(len(texts) / max(sum(key(p) in h for h in held), 1)), 0.0)

    v, d = text_numbers(pd.Series(texts))
    counts = number_counts(v, d)
    assert {float(k): int(c) for k, c in counts.items()} == \
        {k: sum(k in h for h in held) for k in set().union(*held)}
    w = number_weights(v, d, (len(texts), counts))
    P = np.array(list(itertools.combinations(range(len(texts)), 2)))[rng.permutation(11476)[:700]]
    P = np.vstack([P, np.stack([np.arange(30), np.arange(30)], axis=1), [[150, 151], [151, 0]]])
    got = number_agreement(v[P[:, 0]], d[P[:, 0]], v[P[:, 1]], d[P[:, 1]], w[P[:, 0]], w[P[:, 1]])
    want = np.array([_brute(texts[a], texts[b], weight) for a, b in P])
    np.testing.assert_allclose(got, want, equal_nan=True, atol=1e-12)
    assert np.isnan(want).any() and (want == 1).any() and ((want > 0) & (want < 1)).any()


def test_common_numbers_weigh_less_than_rare_ones():
    """Two pairs that share one of three numbers each: a month most records hold against a
    year few hold. Unweighted both are 1/3; by rarity the common one is below the far level
    (0.25) and the rare one above it."""
    rest = [f"x {1900 + k} {k % 2 + 1} {k % 28 + 1}" for k in range(60)]  # months 1 and 2: common
    df = pd.DataFrame({"name": ["a", "b", "c", "d"] + ["z"] * 60,
                       "description": ["meier 1949 1 22", "bauer 1968 1 27", "meier 1949 5 6", "fuchs 1890 9 13"]
                       + rest})
    fl = [Field("name", "name"), Field("description", "string"), Field(NUMBERS, "numbers")]
    fm = compare(df, np.array([[0, 1], [0, 2], [0, 0], [0, 3]]), fl)
    x = fm.X[:, fm.names.index("~:numbers")]
    assert x[0] < 0.25 < x[1] < 0.5 and x[2] == 1.0 and x[3] == 0.0


def test_number_keys_and_counts_by_partition_add_up():
    """The distributed run's counts (one per partition, summed by key) equal the whole table's."""
    from trustlab.er.distributed import _token_counts

    texts = pd.Series(["7 7 1949", "7 22", "none", "40.6333 22", "40.9 x", "-4.76 22"])
    v, d = text_numbers(texts)
    assert number_keys(v, d)[3, :2].tolist() == [40.5, 22.0]
    whole = number_counts(v, d)
    df = pd.DataFrame({"description": texts})
    fl = [Field("description", "string"), Field(NUMBERS, "numbers")]
    parts = [_token_counts(df.iloc[a:b], "numbers", fl) for a, b in [(0, 2), (2, 5), (5, 6)]]
    summed = pd.concat(parts).groupby("tok")["n"].sum()
    assert summed.sort_index().to_dict() == whole.sort_index().to_dict() == \
        {"-4.5": 1, "1949.0": 1, "22.0": 3, "40.5": 2, "7.0": 2}


def test_numbers_field_compare_levels():
    df = pd.DataFrame({"name": ["carsten", "carsten", "gerd", "petra"],
                       "description": ["meier 1949 7 22", "meier 1949 7 27", "bauer 1968 7 27", "fuchs"]})
    fl = [Field("name", "name"), Field("description", "string"), Field(NUMBERS, "numbers")]
    fm = compare(df, np.array([[0, 1], [0, 2], [0, 3], [1, 1]]), fl)
    x = fm.X[:, fm.names.index("~:numbers")]
    # weights log(4 / records holding it): 1949 and 27 two records, 7 three, 22 and 1968 one
    w1949, w7, w22, w27, w1968 = np.log(2), np.log(4 / 3), np.log(4), np.log(2), np.log(4)
    assert x[0] == pytest.approx(2 * (w1949 + w7) / (2 * w1949 + 2 * w7 + w22 + w27))
    assert x[1] == pytest.approx(2 * w7 / (w1949 + w7 + w22 + w1968 + w7 + w27)) and np.isnan(x[2]) and x[3] == 1.0


def _merged_people(n=300, seed=1):
    """People as a first name and one free text "surname year month day"; duplicates with errors."""
    rng = np.random.default_rng(seed)
    first = ["anna", "bernd", "carla", "dieter", "eva", "frank", "gerd", "hans", "ilse", "jan"]
    last = ["meier", "bauer", "fuchs", "weber", "koch", "wolf", "haas", "keller", "krause", "lang", "roth", "vogel"]
    rows = []
    for e in range(n):
        r = [rng.choice(first), rng.choice(last), int(rng.integers(1920, 2005)), int(rng.integers(1, 13)),
             int(rng.integers(1, 29))]
        rows.append((e, r))
        if rng.random() < 0.3:
            r2 = list(r)
            for k in range(5):  # each value changed with probability 0.25 (a typo, a date off by one)
                if rng.random() < 0.25:
                    r2[k] = r2[k] + "x" if k < 2 else r2[k] + 1
            rows.append((e, r2))
    return pd.DataFrame({"entity": [e for e, _ in rows], "name": [r[0] for _, r in rows],
                         "description": [f"{r[1]} {r[2]} {r[3]} {r[4]}" for _, r in rows]})


def test_inference_adds_numbers_only_without_number_fields():
    df = _merged_people()
    kinds = [f.kind for f in infer_fields_report(df, exclude=["entity"]).fields]
    assert kinds[-1] == "numbers"
    # the same people with the date in fields of its own: no numbers comparison
    sp = df["description"].str.split(" ", expand=True)
    df2 = pd.DataFrame({"name": df["name"], "surname": sp[0], "by": sp[1], "bm": sp[2], "bd": sp[3]})
    assert "numbers" not in [f.kind for f in infer_fields_report(df2).fields]
    # one number per record (a house number): none either
    df3 = pd.DataFrame({"name": df["name"], "address": df["description"].str.split(" ").str[:2].str.join(" ")})
    assert "numbers" not in [f.kind for f in infer_fields_report(df3).fields]


def test_merged_people_resolve_better_with_the_numbers():
    from trustlab.metrics.clustering import pairwise_precision_recall_f1

    df = _merged_people()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = trustlab.resolve(df, truth="entity")
        fl = [f for f in r.field_report.fields if f.kind != "numbers"]
        r0 = trustlab.resolve(df, truth="entity", fields=fl)
    assert [f.kind for f in r.field_report.fields][-1] == "numbers"
    f1 = pairwise_precision_recall_f1(np.asarray(r.entity), df["entity"].to_numpy())[2]
    f0 = pairwise_precision_recall_f1(np.asarray(r0.entity), df["entity"].to_numpy())[2]
    assert f1 > f0 + 0.01 and f1 > 0.85  # (0.859 against 0.842 weighted by rarity; 0.879 with every number
    # counted alike (stop 49); 0.667 when the numbers were free in the session of the text that holds them)


def test_numbers_of_a_partition_weighed_by_the_whole_table():
    """The distributed run compares the pairs of a partition of records with the whole
    table's counts (summed over the partitions): the same features as the local comparison
    of the whole table; with the partition's own counts they differ."""
    from trustlab.er.distributed import _Context, _raw_features, _token_counts

    df = _merged_people(n=120, seed=4)[["name", "description"]]
    fl = [Field("name", "name"), Field("description", "string"), Field(NUMBERS, "numbers")]
    counts = pd.concat([_token_counts(df.iloc[a:a + 40], "numbers", fl) for a in range(0, len(df), 40)])
    ctx = _Context(fl, None, {"numbers": (len(df), counts.groupby("tok")["n"].sum())}, None, list(df.columns))
    part = df.iloc[10:70].reset_index(drop=True)
    rng = np.random.default_rng(0)
    P = rng.integers(0, len(part), (400, 2))
    got = _raw_features(part, fl[2], P[:, 0], P[:, 1], ctx)[0][0]
    fm = compare(df, P + 10, fl)
    want = fm.X[:, fm.names.index("~:numbers")]
    np.testing.assert_allclose(got, want, equal_nan=True, rtol=1e-12)
    own = compare(part, P, fl).X[:, fm.names.index("~:numbers")]
    assert not np.allclose(own, want, equal_nan=True)
