"""Neighbouring model numbers (another model of one series) as evidence against a match."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from rapidfuzz.distance import Levenshtein

from trustlab.er.comparisons import NEIGHBOUR_CODE_SIM, code_variant, compare
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel, _distinct_rows_inverse


def _variant_slow(a: str, b: str, letters: bool = True) -> float:
    """The trusted definition, one pair at a time (``letters``: letter variants count)."""
    if a == b:
        return 1.0
    if Levenshtein.normalized_similarity(a, b) < NEIGHBOUR_CODE_SIM:
        return 0.0
    if a in b or b in a:
        return 0.75
    if re.findall(r"\d+", a) != re.findall(r"\d+", b):
        return 0.5
    # a letter variant: equal up to the last digit, then two runs of letters, neither an
    # abbreviation (subsequence) of the other
    ia = max(k for k, c in enumerate(a) if c.isdigit()) if any(c.isdigit() for c in a) else -1
    ib = max(k for k, c in enumerate(b) if c.isdigit()) if any(c.isdigit() for c in b) else -1
    ta, tb = a[ia + 1:], b[ib + 1:]
    if not letters or ia < 0 or ib < 0 or a[:ia + 1] != b[:ib + 1] or not ta or not tb or not ta.isalpha() or not tb.isalpha():
        return 0.0

    def subseq(x, y):
        pos = 0
        for c in x:
            pos = y.find(c, pos) + 1
            if pos == 0:
                return False
        return True

    return 0.5 if ta != tb and not subseq(min(ta, tb, key=len), max(tb, ta, key=len)) else 0.0


def test_code_variant_levels():
    a = np.array(["wrt54gl", "th50pz850u", "nst360u2bk", "ea650", "3n1ngr", "dgs1008p", "abc", "exzs10bk",
                  "gp2a1en", "cvem79pnk"], object)
    b = np.array(["wrv54g", "th50pz850u", "nst285u2bk", "ea650green", "3n1ngb", "dgs1008g", "xyz123",
                  "exzs10black", "gp2d1en", "cvem79red"], object)
    # same digits (54) with other letters inside the code is not a neighbour; another size (360/285)
    # is, and so is another letter ending (a colour: ngr / ngb, pnk / red), unless one ending
    # abbreviates the other (bk / black)
    assert code_variant(a, b, letters=True).tolist() == [0.0, 1.0, 0.5, 0.75, 0.5, 0.5, 0.0, 0.0, 0.0, 0.5]
    # codes found anywhere in a record (letters=False): a letter ending is no neighbour
    assert code_variant(a, b).tolist() == [0.0, 1.0, 0.5, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_code_variant_equals_slow_path():
    rng = np.random.default_rng(3)
    alphabet = list("ab12")
    a = np.array(["".join(rng.choice(alphabet, rng.integers(1, 7))) for _ in range(3000)], object)
    b = np.array([x if k % 7 == 0 else "".join(rng.choice(alphabet, rng.integers(1, 7))) for k, x in enumerate(a)],
                 object)
    for letters in (False, True):
        got = code_variant(a, b, letters=letters)
        want = np.array([_variant_slow(x, y, letters) for x, y in zip(a, b)])
        np.testing.assert_array_equal(got, want)
        assert {0.0, 0.5, 0.75, 1.0} <= set(got.tolist())


def test_model_field_levels_and_weights():
    df = pd.DataFrame({"m": ["TH-50PZ850U", "th50pz850u", "TH-42PZ850U", "TH-50PZ850U/B", "ZX-9", None]})
    P = np.array([[0, 1], [0, 2], [0, 3], [0, 4], [0, 5]])
    fm = compare(df, P, [Field("m", "model")])
    model = FSModel([Field("m", "model")])
    # exact (hyphen and case dropped), far (neighbour: 50 / 42), close (a suffix), else, missing
    assert model.levels(fm)[:, 0].tolist() == [0, 2, 1, 3, -1]
    model.m_ = np.array([[0.6, 0.05, 0.2, 0.15]])
    model.u_ = np.array([[1e-4, 1e-3, 0.05, 0.9489]])
    bf = model.level_bayes_factors()
    assert bf[0, 2] == pytest.approx(-np.log(0.6 / 1e-4))  # set, not the fitted log(0.2 / 0.05) > 0
    assert bf[0, 1] == pytest.approx(np.log(0.05 / 1e-3))


def test_em_sees_neighbours_as_else():
    """EM fits the same m, u and λ whether a ``model`` field's neighbours are *far* or *else*
    (so they cannot pull EM's match class), and only the weights tell them apart."""
    rng = np.random.default_rng(0)
    fl = [Field("t", "tokens"), Field("m", "model")]
    rows = np.stack([rng.integers(0, 4, 4000), rng.choice([0, 2, 3], 4000, p=[0.2, 0.3, 0.5])], axis=1)
    rows = rows.astype(np.int8)
    rows[:800, :] = 0
    rnd = np.stack([rng.choice([1, 2, 3], 2000, p=[0.01, 0.04, 0.95]), rng.choice([2, 3], 2000, p=[0.02, 0.98])],
                   axis=1).astype(np.int8)
    folded = rows.copy()
    folded[folded[:, 1] == 2, 1] = 3
    fits = []
    rnd_folded = rnd.copy()
    rnd_folded[rnd_folded[:, 1] == 2, 1] = 3
    for G, Gr in ((rows, rnd), (folded, rnd_folded)):
        Gu, inv = _distinct_rows_inverse(G)
        cnt = np.bincount(inv.ravel(), minlength=len(Gu)).astype(np.float64)
        fits.append(FSModel(fl).fit_from_counts(Gu, cnt, Gr, 5000, tf_tables={}, tf_default={}))
    a, b = fits
    np.testing.assert_allclose(a.m_, b.m_, rtol=1e-9)
    np.testing.assert_allclose(a.u_, b.u_, rtol=1e-9)
    assert a.lambda_ == pytest.approx(b.lambda_, rel=1e-9)
    bf = a.level_bayes_factors()
    # never above else: min(else, minus exact)
    assert bf[1, 2] == pytest.approx(min(bf[1, 3], -abs(bf[1, 0]))) and bf[1, 2] <= bf[1, 3] < 0 < bf[1, 0]


def _neighbours_slow(lists, i, j):
    return np.array([any(_variant_slow(x, y, False) == 0.5 for x in lists[a] for y in lists[b])
                     for a, b in zip(i, j)])


def test_neighbour_codes_equals_slow_path():
    from trustlab.er.comparisons import neighbour_codes

    rng = np.random.default_rng(5)
    pool = ["wrt54gl", "wrv54g", "nst360u2bk", "nst285u2bk", "hd6950", "hd6970", "ea650", "ea650green", "zz9x"]
    lists = np.empty(60, dtype=object)
    lists[:] = [tuple(sorted(set(rng.choice(pool, rng.integers(0, 4)).tolist()))) for _ in range(60)]
    i, j = rng.integers(0, 60, 2000), rng.integers(0, 60, 2000)
    got = neighbour_codes(lists, i, j)
    np.testing.assert_array_equal(got, _neighbours_slow(lists, i, j))
    assert got.any() and not got.all()


def test_codes_comparison_neighbour_level():
    """Records that share no code but hold neighbouring ones (letters and digits) are the
    codes comparison's *far* level; neighbouring runs of digits (phone numbers, ids) are not."""
    df = pd.DataFrame({"t": ["Linksys WRT54GL router", "Linksys WRT54GL", "Vantec NST-360U2-BK",
                             "Vantec NST-285U2-BK", "call 5551234567", "call 5551234568", "no code here"]})
    P = np.array([[0, 1], [2, 3], [0, 2], [4, 5], [0, 6]])
    fl = [Field("t", "string"), Field("#", "codes")]
    fm = compare(df, P, fl)
    G = FSModel(fl).levels(fm)[:, 1]
    assert G.tolist() == [0, 2, 3, 3, -1]


def test_letter_variants_equal_slow_path():
    """Codes of one head and random letter endings (colours, regions): code_variant's letter
    variants against the one-pair-at-a-time definition."""
    rng = np.random.default_rng(11)
    heads = ["hd695", "3n1", "ce250", "cvem79", "ab2c1"]

    def code():
        tail = "".join(rng.choice(list("bklpnr"), rng.integers(0, 5)))
        return str(rng.choice(heads)) + tail

    a = np.array([code() for _ in range(3000)], object)
    b = np.array([code() for _ in range(3000)], object)
    got = code_variant(a, b, letters=True)
    want = np.array([_variant_slow(x, y) for x, y in zip(a, b)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(code_variant(a, b), [_variant_slow(x, y, False) for x, y in zip(a, b)])
    same_digits = np.array([re.findall(r"\d+", x) == re.findall(r"\d+", y) for x, y in zip(a, b)])
    assert (got[same_digits] == 0.5).sum() > 100 and (got[same_digits] == 0.0).sum() > 30


def test_letter_variants_only_in_the_model_column():
    """Another letter ending of one model number is the model field's far level (a colour),
    but not the codes comparison's: a postcode with another last letter is a typing error."""
    df = pd.DataFrame({"m": ["3N1NGR", "3N1NGB", "DE03US", "DE03UA"],
                       "t": ["laptop pad red", "laptop pad black", "john smith DE03US", "john smith DE03UA"]})
    P = np.array([[0, 1], [2, 3]])
    fl = [Field("m", "model"), Field("t", "string"), Field("#", "codes")]
    G = FSModel(fl).levels(compare(df, P, fl))
    assert G[:, 0].tolist() == [2, 2]  # model column: far (letter variants)
    df2 = df.assign(m=None)
    fl2 = [Field("t", "string"), Field("#", "codes")]
    assert FSModel(fl2).levels(compare(df2, P, fl2))[:, 1].tolist() == [-1, 3]  # codes: else, not far
