"""Sparse records (issue 27): a column that only one record of a pair fills is no evidence.

The whole-record comparison (``Field("*", "record")``) compared two records' full TF-IDF
vectors, so a duplicate whose columns were left empty looked *apart* from its original (a
shorter vector, a lower cosine): missing values counted as disagreement.
"""
from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from trustlab.er.comparisons import _tfidf_cosine, compare
from trustlab.er.kinds import KINDS, Field, record_parts, record_text

FAR = KINDS["record"].levels[3]
CLOSE = KINDS["record"].levels[2]


def _word(prefix: str, k: int) -> str:
    """A word of letters only, its prefix naming the column (no word occurs in two columns)."""
    return prefix + "".join(chr(97 + int(d)) for d in str(int(k)))


def _table(n: int, seed: int, empty: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)

    def cell(make):
        return make() if rng.random() > empty else ""

    return pd.DataFrame({
        "name": [cell(lambda: f"{_word('n', rng.integers(40))} {_word('m', rng.integers(60))}") for _ in range(n)],
        "city": [cell(lambda: f"{_word('c', rng.integers(8))} {_word('d', rng.integers(8))}") for _ in range(n)],
        "street": [cell(lambda: " ".join([_word("s", rng.integers(50)), _word("t", rng.integers(5)),
                                          _word("u", rng.integers(90))])) for _ in range(n)],
    })


FIELDS = [Field("name", "name"), Field("city", "name"), Field("street", "address")]


def _words(s: str) -> list[str]:
    return re.findall(r"[^\W\d_]+|\d+", s.lower())


def _brute(df: pd.DataFrame, i: int, j: int) -> float:
    """The documented rule, written out pair by pair (no sparse matrices)."""
    cols = list(df.columns)
    n = len(df)
    docs = [Counter(w for c in cols for w in _words(df.at[r, c])) for r in range(n)]
    dfreq = Counter(w for d in docs for w in d)
    idf = {w: math.log(n / k) + 1e-6 for w, k in dfreq.items()}
    gate = math.log(n)

    def vec(r, use):
        cnt = Counter(w for c in use for w in _words(df.at[r, c]))
        return {w: (1 + math.log(k)) * idf[w] for w, k in cnt.items()}

    def cosine(a, b):
        na, nb = math.sqrt(sum(v * v for v in a.values())), math.sqrt(sum(v * v for v in b.values()))
        return sum(a[w] * b[w] for w in a if w in b) / (na * nb)

    if not docs[i] or not docs[j]:
        return float("nan")
    full_i, full_j = vec(i, cols), vec(j, cols)
    whole = min(1.0, cosine(full_i, full_j))
    if sum(idf[w] for w in full_i if w in full_j) < gate:
        whole = 0.0
    common = [c for c in cols if _words(df.at[i, c]) and _words(df.at[j, c])]
    c_val = float("nan")
    if common:  # (NaN compares False: no column in common, nothing raised or voided)
        ci, cj = vec(i, common), vec(j, common)
        # each common column counts with its rarest shared word (a word in its first column)
        first = {}
        for c in common:
            for w in _words(df.at[i, c]):
                first.setdefault(w, c)
        best = {}
        for w in ci:
            if w in cj:
                best[first[w]] = max(best.get(first[w], 0.0), idf[w])
        if ci and cj:
            c_val = min(1.0, cosine(ci, cj))
            if abs(c_val - FAR) < 1e-9:
                return None  # a tie at the threshold: rounding decides, not the rule
        out = whole
        if sum(best.values()) >= gate:  # rare enough to raise the similarity
            norm_i = math.sqrt(sum(v * v for v in ci.values())) / math.sqrt(sum(v * v for v in full_i.values()))
            norm_j = math.sqrt(sum(v * v for v in cj.values())) / math.sqrt(sum(v * v for v in full_j.values()))
            out = max(whole, c_val * math.sqrt(norm_i * norm_j))
        if whole < FAR <= c_val and out < FAR:  # apart only because of the empty columns
            return float("nan")
        return out
    if not common and whole == 0.0:
        return float("nan")
    return whole


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_columns_in_common_match_the_rule_written_out(seed):
    df = _table(70, seed, empty=0.35)  # no word in two columns: the rule is exact
    n = len(df)
    P = np.array([(a, b) for a in range(n) for b in range(a + 1, n)])
    got = _tfidf_cosine(record_text(df, FIELDS), P[:, 0], P[:, 1], parts=record_parts(df, FIELDS))
    want = np.array([_brute(df, a, b) for a, b in P], dtype=object)
    ties = np.array([w is None for w in want])
    got, want = got[~ties], want[~ties].astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-9, atol=1e-12)
    # and the rule moves some pairs (otherwise the test would test nothing)
    old = _tfidf_cosine(record_text(df, FIELDS), P[:, 0], P[:, 1])[~ties]
    assert np.sum(~np.isclose(np.nan_to_num(old, nan=-1), np.nan_to_num(got, nan=-1))) > 10


def _duplicates_with_an_empty_column(seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    df = _table(60, seed, empty=0.0)
    dup = df.iloc[:20].copy()
    dup["street"] = ""  # the duplicate leaves its street empty
    both = pd.concat([df, dup], ignore_index=True)
    pairs = np.array([[k, 60 + k] for k in range(20)])
    return both, pairs


def test_a_column_only_one_record_fills_is_no_disagreement():
    df, pairs = _duplicates_with_an_empty_column()
    i, j = pairs[:, 0], pairs[:, 1]
    old = _tfidf_cosine(record_text(df, FIELDS), i, j)
    new = _tfidf_cosine(record_text(df, FIELDS), i, j, parts=record_parts(df, FIELDS))
    # the whole cosine is the share of the original's vector the other columns hold (most
    # pairs below "close"); over the columns both fill they are equal, so the similarity is the
    # geometric mean of the shares, sqrt(share * 1)
    assert np.mean(old < CLOSE) > 0.5
    np.testing.assert_allclose(new, np.sqrt(old), rtol=1e-9)
    assert np.mean(new >= CLOSE) > np.mean(old >= CLOSE)


def test_compare_uses_the_columns_in_common():
    df, pairs = _duplicates_with_an_empty_column(1)
    fl = FIELDS + [Field("*", "record")]
    fm = compare(df, pairs, fl)
    cos = fm.X[:, fm.names.index("*:cosine")]
    old = _tfidf_cosine(record_text(df, fl), pairs[:, 0], pairs[:, 1])
    np.testing.assert_allclose(cos, np.sqrt(old), rtol=1e-9)
    assert np.all(cos > old)


def test_agreeing_on_common_columns_only_is_not_an_exact_record():
    # a record reduced to a city and a category agrees on both with a full record: the columns in
    # common are common words (one column's rarest word each), so they raise nothing
    rng = np.random.default_rng(3)
    n = 80
    df = pd.DataFrame({"name": [f"n{k} m{k}" for k in range(n)],
                       "city": [["san francisco", "new york", "los angeles"][k % 3] for k in range(n)],
                       "cuisine": [["italian", "thai", "french", "greek"][rng.integers(4)] for _ in range(n)]})
    df.loc[40:, "name"] = ""
    fl = [Field("name", "name"), Field("city", "name"), Field("cuisine", "exact")]
    P = np.array([(a, b) for a in range(40) for b in range(40, n)])
    i, j = P[:, 0], P[:, 1]
    new = _tfidf_cosine(record_text(df, fl), i, j, parts=record_parts(df, fl))
    old = _tfidf_cosine(record_text(df, fl), i, j)
    same = (df["city"].to_numpy()[i] == df["city"].to_numpy()[j]) & \
        (df["cuisine"].to_numpy()[i] == df["cuisine"].to_numpy()[j])
    assert same.any()
    assert np.all(np.isnan(new[same]) | (new[same] <= np.maximum(old[same], FAR) + 1e-12))
    assert not np.any(new[same] >= CLOSE)  # never "close" or exact


def test_no_column_in_common_and_no_shared_word_is_missing():
    df = pd.DataFrame({"name": ["ann lee", "", "bob ray", "cy orr", "di fox", "ed poe"],
                       "street": ["", "elm road", "oak lane", "ash way", "fir st", "yew row"]})
    fl = [Field("name", "name"), Field("street", "address")]
    old = _tfidf_cosine(record_text(df, fl), np.array([0]), np.array([1]))
    new = _tfidf_cosine(record_text(df, fl), np.array([0]), np.array([1]), parts=record_parts(df, fl))
    assert old[0] == 0.0  # before: "else", evidence against a match
    assert np.isnan(new[0])


def _repeating(n: int = 80, seed: int = 11) -> tuple[pd.DataFrame, list]:
    """Words repeated in two columns of a record ("of", "the"), columns often empty."""
    rng = np.random.default_rng(seed)
    common = ["of", "the", "in", "and"]

    def text(prefix, k):
        return " ".join([_word(prefix, rng.integers(k)), common[rng.integers(4)], _word(prefix, rng.integers(k))])

    df = pd.DataFrame({"title": [text("t", 30) if rng.random() > 0.3 else "" for _ in range(n)],
                       "venue": [text("v", 10) if rng.random() > 0.3 else "" for _ in range(n)],
                       "author": [text("a", 40) if rng.random() > 0.3 else "" for _ in range(n)]})
    return df, [Field("title", "string"), Field("venue", "string"), Field("author", "name")]


@pytest.mark.parametrize("repeats", [False, True])
def test_distributed_encoding_gives_the_same_similarity(repeats):
    from trustlab.er import distributed as D
    from trustlab.er.scoring import FSModel

    if repeats:
        df, fl = _repeating()
        fl = fl + [Field("*", "record")]
    else:
        df = _table(90, 5, empty=0.3)
        fl = FIELDS + [Field("*", "record")]
    model = FSModel(fl)
    enc = D._encode(df, fl, None, None, model, None)
    enc = D._weigh(enc, fl, D._sum_doc_counts([D._doc_counts(enc)], len(df)))
    n = len(df)
    P = np.array([(a, b) for a in range(n) for b in range(a + 1, n)])
    got = D._encoded_features(enc, fl[-1], P[:, 0], P[:, 1], None)[0][0]
    want = _tfidf_cosine(record_text(df, fl), P[:, 0], P[:, 1], parts=record_parts(df, fl))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-9, atol=1e-12)


def test_one_agreeing_column_in_common_voids_the_disagreement():
    # the same title; the other record leaves authors, venue and pages empty: the whole records
    # are apart only because of the empty columns, so the pair is missing (no evidence against)
    df = _table(60, 7, empty=0.0)
    df.insert(0, "title", [f"{_word('p', k)} {_word('q', k % 7)}" for k in range(60)])
    dup = df.iloc[:10].copy()
    dup[["name", "city", "street"]] = ""
    both = pd.concat([df, dup], ignore_index=True)
    fl = [Field("title", "string")] + FIELDS
    i, j = np.arange(10), np.arange(60, 70)
    old = _tfidf_cosine(record_text(both, fl), i, j)
    new = _tfidf_cosine(record_text(both, fl), i, j, parts=record_parts(both, fl))
    assert np.all(old < FAR)  # before: "else", evidence against a match
    assert np.all(np.isnan(new))


def test_the_order_of_the_columns_does_not_matter():
    # words repeated in two columns of a record ("of", "the") count in one of them: the same one
    # whatever the order of the columns in the file
    df, fl = _repeating()
    n = len(df)
    P = np.array([(a, b) for a in range(n) for b in range(a + 1, n)])
    ref = _tfidf_cosine(record_text(df, fl), P[:, 0], P[:, 1], parts=record_parts(df, fl))
    fl2 = fl[::-1]
    got = _tfidf_cosine(record_text(df, fl2), P[:, 0], P[:, 1], parts=record_parts(df[df.columns[::-1]], fl2))
    assert np.array_equal(ref, got, equal_nan=True)
