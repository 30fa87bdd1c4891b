"""The distributed comparisons' fast paths (issue 31's CPU time) against the code they
replace: the same features, bit for bit.

* ``_pair_similarities``: the string similarities of a field with the pairs of two equal
  values and the pairs with a missing value left unscored (1.0 and NaN), against every pair
  scored by rapidfuzz;
* ``_record_cosine``: the whole-record feature from one merge of each pair's rows
  (``kernels.er.record_pair_sums``), against the two SciPy-order dot products and
  ``missing_is_no_disagreement`` of the general path.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rapidfuzz import distance, fuzz, process
from scipy import sparse

from trustlab.er import comparisons as C
from trustlab.er import distributed as D
from trustlab.er import generate_records
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel

_FIELDS = [Field("given_name", "name"), Field("surname", "name"), Field("address_1", "address"),
           Field("suburb", "string"), Field("postcode", "postcode"), Field("soc_sec_id", "code"),
           Field("date_of_birth", "date"), Field("*", "record"), Field("#", "codes")]


def _encoded(n: int = 500, seed: int = 4):
    """Generated records (duplicates: equal values; missing cells), encoded and weighed as
    the distributed run does, and pairs: random ones, blocked ones (same surname or
    postcode: many equal values) and each record with itself."""
    df = generate_records(n, random_state=seed).drop(columns="entity").reset_index(drop=True)
    tf = FSModel(_FIELDS)
    enc = D._encode(df, _FIELDS, None, None, tf, None)
    enc = D._weigh(enc, _FIELDS, D._sum_doc_counts([D._doc_counts(enc)], len(df)))
    rng = np.random.default_rng(seed)
    pairs = [rng.integers(0, n, size=(3000, 2))]
    for col in ("surname", "postcode"):
        codes = pd.factorize(df[col])[0]
        for g in np.unique(codes[codes >= 0]):
            m = np.flatnonzero(codes == g)
            pairs.append(np.array([(a, b) for a in m for b in m if a < b], np.int64).reshape(-1, 2))
    pairs.append(np.stack([np.arange(n), np.arange(n)], axis=1))
    P = np.unique(np.concatenate(pairs), axis=0)
    return df, enc, P[:, 0].copy(), P[:, 1].copy()


_SCORERS = {"jaro_winkler": (distance.JaroWinkler.normalized_similarity, 1.0),
            "token_set": (fuzz.token_set_ratio, 100.0), "indel": (distance.Indel.normalized_similarity, 1.0),
            "token_sort": (fuzz.token_sort_ratio, 100.0),
            "levenshtein": (distance.Levenshtein.normalized_similarity, 1.0)}


def test_pair_similarities_equal_every_pair_scored(monkeypatch):
    """Every string feature of every pair equals rapidfuzz's score of the two normalised
    strings (NaN where either is missing), though no pair of equal values and no pair with a
    missing value reaches a scorer."""
    df, enc, i, j = _encoded()
    scored = []
    real = C._cpdist

    def spy(a, b, scorer, pieces=None, cutoff=None):
        scored.append((np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
        return real(a, b, scorer, pieces, cutoff)

    monkeypatch.setattr(C, "_cpdist", spy)
    n_equal = 0
    for f in _FIELDS:
        if f.kind in ("record", "codes"):
            continue
        fc, names, _ = D._encoded_features(enc, f, i, j, None)
        arr, miss = enc.cols[f"{f.column}:s"], enc.cols[f"{f.column}:m"]
        m = miss[i] | miss[j]
        n_equal += int(((arr[i] == arr[j]) & ~m).sum())
        for col, name in zip(fc, names):
            if name not in _SCORERS:  # exact, year_sim: not string scorers
                continue
            scorer, scale = _SCORERS[name]
            ref = process.cpdist(arr[i], arr[j], scorer=scorer, dtype=np.float32).astype(np.float64) / scale
            ref[m] = np.nan
            assert np.array_equal(col, ref, equal_nan=True), (f.column, name)
    assert n_equal > 1000  # the shortcut was taken, on many pairs
    assert scored and all(not (a == b).any() for a, b in scored)  # no equal pair was scored
    assert all(not (a == "").any() and not (b == "").any() for a, b in scored)  # nor a missing one


def _rows(rng, m: int, longest: int):
    """Rows of distinct token hashes, sorted (an encoding's whole-record rows)."""
    vocab = np.unique(rng.integers(0, 2**64, 3 * longest + 40, dtype=np.uint64))
    lens = rng.integers(0, longest + 1, m)
    tok = [np.sort(rng.choice(vocab, size=min(int(k), vocab.size), replace=False)) for k in lens]
    ptr = np.r_[0, np.cumsum([t.size for t in tok])].astype(np.int64)
    return ptr, np.concatenate(tok) if m else np.zeros(0, np.uint64)


def _general_record_cosine(ptr, tok, w, share, mask, bits, i, j):
    """The whole-record feature as the general path computes it (two dot products and the
    columns in common from SciPy matrices)."""
    ids, key, canonical = D._row_keys(ptr, tok)
    rows = (ptr, ids, key, canonical)
    out = np.clip(D._sparse_dot(rows, w, w, i, j), 0.0, 1.0)
    out[D._sparse_dot(rows, share, np.ones_like(share), i, j) < 1.0] = 0.0
    shape = (ptr.size - 1, int(ids.max()) + 1)
    A, S, H = (sparse.csr_matrix((v, ids, ptr), shape=shape) for v in (w, share, mask))
    out = C.missing_is_no_disagreement(out, A, S, H, bits, i, j)
    empty = np.diff(ptr) == 0
    out[empty[i] | empty[j]] = np.nan
    return out


def _record_case(rng, longest, monkeypatch):
    """Random rows (``longest`` 1: rows of 0-1 tokens, canonical pieces), token weights,
    shares, column masks (a third of the words in two or three columns), part bits and 800
    pairs; the comparison's chunk size set so that
    the pairs take several pieces. None when the rows hold no token."""
    m = int(rng.integers(2, 70))
    ptr, tok = _rows(rng, m, longest)
    if not tok.size:
        return None
    w = rng.random(tok.size) * 10.0 ** rng.uniform(-2, 1, tok.size)
    share = rng.random(tok.size) * 1.5
    mask = np.left_shift(1, rng.integers(0, 7, tok.size)).astype(np.int64)
    more_rng = np.random.default_rng(tok.size)  # the other columns (the draws of ``rng`` as before)
    more = more_rng.random(tok.size) < 0.33
    mask[more] |= np.left_shift(1, more_rng.integers(0, 7, int(more.sum())))
    more &= more_rng.random(tok.size) < 0.5
    mask[more] |= np.left_shift(1, more_rng.integers(0, 7, int(more.sum())))
    bits = rng.integers(0, 2**7, m).astype(np.int64)
    i, j = rng.integers(0, m, 800), rng.integers(0, m, 800)
    monkeypatch.setattr(C, "_JACCARD_CHUNK", int(rng.integers(20, 4000)))
    return ptr, tok, w, share, mask, bits, i, j


@pytest.mark.parametrize("longest", [12, 300])  # rows past NumPy's 8- and 128-value sum blocks
def test_record_cosine_equals_the_general_path(longest, monkeypatch):
    rng = np.random.default_rng(longest)
    for trial in range(10):
        case = _record_case(rng, longest if trial % 3 else 1, monkeypatch)
        if case is None:
            continue
        ptr, tok, w, share, mask, bits, i, j = case
        ids, key, canonical = D._row_keys(ptr, tok)
        got = D._record_cosine(ptr, ids, key, canonical, w, share, mask, bits, i, j)
        ref = _general_record_cosine(ptr, tok, w, share, mask, bits, i, j)
        assert np.array_equal(got, ref, equal_nan=True)
        assert (~np.isnan(got)).any()


def test_record_feature_of_encodings_equals_the_general_path(monkeypatch):
    """On encoded generated records: the fused path is taken and gives the general path's
    feature, bit for bit."""
    df, enc, i, j = _encoded(seed=6)
    f = _FIELDS[-2]
    calls = []
    real = D._record_cosine
    monkeypatch.setattr(D, "_record_cosine", lambda *a: calls.append(1) or real(*a))
    got = D._encoded_features(enc, f, i, j, None)[0][0]
    assert calls
    monkeypatch.setattr(D, "_record_cosine", lambda *a: None)  # the general path
    ref = D._encoded_features(enc, f, i, j, None)[0][0]
    assert np.array_equal(got, ref, equal_nan=True)
    assert (got > 0.9).sum() > 100 and (got < 0.5).sum() > 100


# ----------------------------------------------------------------------------- the encodings' string passes
_HOSTILE = ["Ann O'Neil", "  MÜLLER-Lüdenscheidt ", "SW1A 1AA", "sw1a1aa", "", " ", "\t", "N/A", " null ", "-",
            "?", "(null)", "x_y", "İstanbul", "ǅemal", "straße 12b", "12 ab-345/6", "a1b2c3d4", "١٢٣٤٥ x",
            "unit 7,  42 main st.", "po box 90210", "rec#0042-ZZ", "ϴ ΣΑΣ", "tab\there", "new\nline",
            "emoji 😀 99999", "…", "A.B.C.", "1995.", "1995,", "00123", "ab1", "abc12345def"]


def _hostile_series(with_missing: bool, other: bool = False) -> pd.Series:
    vals = list(_HOSTILE)
    if with_missing:
        vals += [None, np.nan, pd.NA]
    if other:
        vals += [12.5, 7]
    rng = np.random.default_rng(0)
    return pd.Series([vals[k] for k in rng.integers(0, len(vals), 400)] + vals, dtype=object)


@pytest.mark.parametrize("with_missing", [False, True])
@pytest.mark.parametrize("other", [False, True])  # numbers among the strings: the pandas chain
def test_string_passes_equal_the_pandas_chains(with_missing, other):
    from trustlab.er.comparisons import _text
    from trustlab.er.kinds import _RECORD_TOKEN, tf_keys
    from trustlab.er.records import placeholders_to_missing

    s = _hostile_series(with_missing, other)
    got, ref = D._clean_text(s), _text(s)
    assert got[0].tolist() == ref[0].tolist() and np.array_equal(got[1], ref[1])
    r, h = D._record_tokens(s)
    rr, hh = D._hashed(s.fillna("").astype(str).str.lower().str.findall(_RECORD_TOKEN).explode())
    assert np.array_equal(r, rr) and np.array_equal(h, hh) and r.size > 100
    ref_ph = placeholders_to_missing(s.to_frame("v"), None)["v"].to_numpy(dtype=object)
    assert np.array_equal(pd.isna(D._placeholder_values(s)), pd.isna(ref_ph))
    kept = ~pd.isna(ref_ph)
    assert D._placeholder_values(s)[kept].tolist() == ref_ph[kept].tolist()
    for kind in ("name", "exact", "postcode", "code", "string", "address"):
        f = Field("v", kind)
        assert D._tf_key_values(s, f).tolist() == tf_keys(pd.DataFrame({"v": s}), f).tolist(), kind


@pytest.mark.parametrize("other", [False, True])
def test_value_codes_pass_equals_the_pandas_chain(other, monkeypatch):
    s = _hostile_series(True, other).reset_index(drop=True)
    got = D._value_codes(s)
    monkeypatch.setattr(D, "_str_values", lambda v: None)  # the pandas chain
    ref = D._value_codes(s)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1]) and got[0].size > 10


@pytest.mark.parametrize("other", [False, True])
def test_value_code_pair_equals_value_codes_and_letter_codes(other, monkeypatch):
    """One pass for the ``codes`` field's rows and its neighbour lists (``_value_code_pair``)
    gives exactly ``_value_codes`` and ``_value_letter_codes`` (arrays, order, dtypes), on
    hostile values, code words, digit-only words, repeats, one value and none."""
    rng = np.random.default_rng(5)
    words = _CODE_WORDS + ["12345", "1234567", "ab", "x1y2 x1y2", "5th", "a/b/c1234", "99/99999"]
    s = _hostile_series(True, other).reset_index(drop=True)
    s2 = pd.Series([" ".join(rng.choice(words, rng.integers(0, 4))) for _ in range(500)] + [None], dtype=object)
    cases = [s, s2, s2.iloc[:1].reset_index(drop=True), pd.Series(["no code here", "ab"], dtype=object),
             pd.Series(["12345 67890"], dtype=object), pd.Series([], dtype=object)]
    checked = 0
    for v in cases:
        (ra, ha), (rl, cl) = D._value_code_pair(v)
        ra0, ha0 = D._value_codes(v)
        rl0, cl0 = D._value_letter_codes(v)
        assert np.array_equal(ra, ra0) and np.array_equal(ha, ha0) and ra.dtype == ra0.dtype and ha.dtype == ha0.dtype
        assert np.array_equal(rl, rl0) and cl.tolist() == cl0.tolist() and cl.dtype == cl0.dtype
        checked += rl.size
    assert checked > 200
    monkeypatch.setattr(D, "_str_values", lambda v: None)  # the pandas chain of the words
    (ra, ha), (rl, cl) = D._value_code_pair(s2)
    assert np.array_equal(ra, D._value_codes(s2)[0]) and cl.tolist() == D._value_letter_codes(s2)[1].tolist()


_CODE_WORDS = ["TH-50PZ850U", "th50pz850u", "msmt2g/tq", "ab12/cd34", "5th", "4gb", "x1y2", "z3w4", "12345",
               "a-1.b_2+c#3*d", "nst360u2bk", "NST285U2BK", "1q880623", "98765/ab12", "ΣΑΣ12", "İ2345", "12ab/",
               "/ab12", "hd6950 xfx1gb", "(rt-ac68u)", "a1;b22;c333;d4444", "١٢٣٤٥ab", "ab12cd " * 3]


@pytest.mark.parametrize("other", [False, True])
def test_record_code_lists_from_values_equal_those_of_the_record_text(other, monkeypatch):
    """Each record's code lists from its columns' distinct values (``_record_code_lists``,
    the encodings' path) equal ``code_lists(code_tokens(record_text))`` (the records'
    whole text): records with more than ``NEIGHBOUR_CODES_MAX`` codes, codes in several
    columns, words of digits only, parts before a ``/``, missing and non-string values."""
    from trustlab.er.comparisons import code_lists
    from trustlab.er.kinds import code_tokens, record_text

    rng = np.random.default_rng(3)
    vals = _HOSTILE + _CODE_WORDS + [None, np.nan] + ([12.5, 7, 123456] if other else [])
    n = 600

    def col():
        return pd.Series([" ".join(str(vals[k]) if isinstance(vals[k], str) else "" for k in
                                   rng.integers(0, len(vals), rng.integers(1, 6)))
                          if rng.random() < 0.6 else vals[rng.integers(0, len(vals))] for _ in range(n)],
                         dtype=object)

    df = pd.DataFrame({"title": col(), "maker": col(), "descr": col()})
    df.loc[5, "title"] = " ".join(_CODE_WORDS)  # more codes than a list holds
    flds = [Field("title", "name"), Field("maker", "string"), Field("descr", "address"), Field("*", "record"),
            Field("#", "codes")]
    ref = code_lists(code_tokens(record_text(df, flds).reset_index(drop=True)), n)
    got = D._record_code_lists(df, flds, n, {})
    assert got.tolist() == ref.tolist()
    assert sum(len(x) > 0 for x in ref) > 100 and max(len(x) for x in ref) == C.NEIGHBOUR_CODES_MAX
    monkeypatch.setattr(D, "_str_values", lambda v: None)  # the pandas chain of the words
    assert D._record_code_lists(df, flds, n).tolist() == ref.tolist()


@pytest.mark.parametrize("other", [False, True])
def test_record_quantity_lists_from_values_equal_those_of_the_record_parts(other):
    """Each record's quantities from its columns' distinct values (``_record_quantity_lists``,
    the encodings' path, sharing the distinct values with the rest of the encoding) equal
    ``quantity_lists(record_parts(...))``: several columns, repeats within and across
    columns, more than ``QUANTITY_MAX``, missing values, numbers among the strings."""
    from trustlab.er.comparisons import quantity_lists
    from trustlab.er.kinds import record_parts

    rng = np.random.default_rng(4)
    titles = ["Seagate 500GB portable hard drive", "seagate 500gb Portable hard drive", "2550 W Addison street",
              "Da-Lite screen 60 x 80 video format", "Eveready batteries AA 24-Pack", "pioneer big 350W sub woofer",
              "camera 14MP 16GB 3-inch 2x zoom 1200mAh 5V 9W 45mm 2lbs 60 x 80 kit", "plain words only here",
              "", None, np.nan] + ([12.5, 7] if other else [])
    n = 800
    df = pd.DataFrame({c: pd.Series([titles[k] for k in rng.integers(0, len(titles), n)], dtype=object)
                       for c in ("title", "maker", "descr")})
    flds = [Field("title", "name"), Field("maker", "string"), Field("descr", "address"), Field("*", "record"),
            Field("#", "codes")]
    ref = quantity_lists(record_parts(df, flds))
    memo: dict = {}
    got = D._record_quantity_lists(df, flds, n, memo)
    assert got.tolist() == ref.tolist()
    assert sum(len(x) > 0 for x in ref) > 300 and max(len(x) for x in ref) == C.QUANTITY_MAX
    assert (memo["title"][0] is None) == other  # the distinct values, shared (a column of other values: none)
    assert D._record_quantity_lists(df, flds, n).tolist() == ref.tolist()


def test_encodings_of_generated_records_equal_the_pandas_chains(monkeypatch):
    """Every array of the encodings (and the match view) is the one the pandas chains give."""
    from trustlab.er.records import placeholders_to_missing

    df = generate_records(400, random_state=8).reset_index(drop=True)
    df.loc[::37, "surname"] = "N/A"
    df.loc[::41, "suburb"] = None
    mcols = [c for c in df.columns if c not in ("rec_id", "entity")]
    tf = FSModel(_FIELDS)

    def run():
        view = D._view(df, "rec_id", mcols, "entity")
        return view, D._encode(view, _FIELDS, tf.needed_features(), None, tf, "entity")

    view, enc = run()
    monkeypatch.setattr(D, "_str_values", lambda v: None)
    monkeypatch.setattr(D, "_placeholder_values", lambda u: placeholders_to_missing(u.to_frame("v"), None)["v"]
                        .to_numpy(dtype=object))
    view0, enc0 = run()
    assert view.equals(view0)
    assert enc.cols.keys() == enc0.cols.keys() and enc.csr.keys() == enc0.csr.keys()
    for k in enc.cols:
        a, b = enc.cols[k], enc0.cols[k]
        assert a.dtype == b.dtype and (a.tolist() == b.tolist() if a.dtype == object else np.array_equal(a, b)), k
    for k in enc.csr:
        assert all(np.array_equal(a, b) for a, b in zip(enc.csr[k], enc0.csr[k])), k
    assert enc.shares == enc0.shares


@pytest.mark.parametrize("other", [False, True])
@pytest.mark.parametrize("dtype", [object, "string"])
def test_key_normalisation_pass_equals_the_pandas_chain(other, dtype):
    from trustlab.er import rules

    s = _hostile_series(True, other and dtype is object).astype(dtype)
    s.index = s.index + 7
    s.name = "col"
    ref = s.fillna("").astype(str).str.lower().str.replace(r"[^0-9a-z ]+", " ", regex=True).str.strip()
    got = rules._norm(s)
    assert got.tolist() == ref.tolist() and got.index.equals(ref.index) and got.name == ref.name
    assert got.dtype == ref.dtype


def test_string_scores_cut_at_the_level_floors_give_the_same_levels():
    """With the levels' floors rapidfuzz returns 0 for scores under them: the features change
    (some scores are 0 now), the comparison levels do not."""
    df, enc, i, j = _encoded(seed=9)
    tf = FSModel(_FIELDS)
    ctx = D._Context(_FIELDS, tf.needed_features(), {}, tf, list(df.columns))

    def matrix(cut: bool):
        return D._feature_matrix(ctx, len(i), lambda f: D._encoded_features(
            enc, f, i, j, ctx.only.get(f.column), D._level_floors(tf, f) if cut else None))

    full, cut = matrix(False), matrix(True)
    assert full.names == cut.names
    assert np.array_equal(tf.levels(full), tf.levels(cut))
    changed = (full.X != cut.X) & ~np.isnan(full.X)
    assert changed.sum() > 1000 and (cut.X[changed] == 0).all()
    G = tf.levels(full)
    assert {0, 1, 2, 3} <= set(np.unique(G).tolist())  # every level occurs


@pytest.mark.parametrize("longest", [12, 300])
def test_record_shared_parts_fused_equal_the_general_path(longest, monkeypatch):
    """The whole-record comparison's shared parts per column (``slots``) from the fused merge
    (``kernels.er.record_pair_sums``) equal ``comparisons.shared_parts`` on the general path's
    sorted rows, bit for bit, and the feature itself is unchanged by asking for them."""
    rng = np.random.default_rng(longest + 1)
    checked = 0
    for trial in range(8):
        case = _record_case(rng, longest if trial % 3 else 1, monkeypatch)
        if case is None:
            continue
        ptr, tok, w, share, mask, bits, i, j = case
        ids, key, canonical = D._row_keys(ptr, tok)
        out, got = D._record_cosine(ptr, ids, key, canonical, w, share, mask, bits, i, j, 5)
        assert np.array_equal(out, D._record_cosine(ptr, ids, key, canonical, w, share, mask, bits, i, j),
                              equal_nan=True)
        shape = (ptr.size - 1, int(ids.max()) + 1)
        A, H = (sparse.csr_matrix((v, ids, ptr), shape=shape) for v in (w, mask))
        A.sort_indices()
        H.sort_indices()
        ref = C.shared_parts(A, H, i, j, 5)
        assert np.array_equal(got, ref)
        checked += int((got > 0).sum())
    assert checked > 100


@pytest.mark.parametrize("other", [False, True])
def test_plain_block_keys_equal_membership_values(other, monkeypatch):
    """The one-pass keys and tokens of one-column rules (``_plain_members``) are
    ``membership_values``' (the same records, the same key strings in the same order), and
    the block key rows of a partition are the same with and without them."""
    from trustlab.er.blocking import membership_values

    s = _hostile_series(True, other).reset_index(drop=True)
    frame = pd.DataFrame({"v": s, "w": s.sample(frac=1.0, random_state=1).to_numpy()})
    rules = ["key:v", "token:v", "token:v@7", "key:v:3", "token:v:alnum", "key:v+w", "qgram:v"]
    done = 0
    for rule in rules:
        got = D._plain_members(frame, rule)
        if got is None:
            assert other or rule not in ("key:v", "token:v", "token:v@7"), rule
            continue
        ref = membership_values(frame, rule)[1]
        assert np.array_equal(got[0], ref[0]) and got[1].tolist() == list(ref[1]), rule
        assert got[0].size > 50, rule
        done += 1
    assert done == (0 if other else 3)
    part = frame.set_index(pd.RangeIndex(100, 100 + len(frame)))
    rows = D._key_rows(part, rules[:-1])
    monkeypatch.setattr(D, "_plain_members", lambda *a: None)
    assert rows.equals(D._key_rows(part, rules[:-1])) and len(rows) > 500


@pytest.mark.parametrize("other", [False, True])
@pytest.mark.parametrize("dtype", [object, "string"])
def test_key_and_token_members_per_distinct_value_equal_the_pandas_chains(other, dtype):
    """The blocking keys and tokens, computed once per distinct value (``rules._norm``,
    ``blocking._word_members``), equal the per-record pandas chains they replace (written
    here), for repeated hostile values, missing cells and an index that is not 0..n-1; and
    ``rules.string_values`` equals the per-value loop it replaces."""
    from trustlab.er import rules
    from trustlab.er.blocking import _word_members, membership_values

    s = _hostile_series(True, other and dtype is object).astype(dtype)
    s.index = s.index * 3 + 11
    s.name = "v"
    chain = s.fillna("").astype(str).str.lower().str.replace(r"[^0-9a-z ]+", " ", regex=True).str.strip()
    for spaces, ref in ((True, chain), (False, chain.str.replace(" ", "", regex=False))):
        got = rules._norm(s, spaces=spaces)
        assert got.tolist() == ref.tolist() and got.index.equals(ref.index) and got.name == ref.name
    assert s.nunique() < 0.5 * len(s)  # the distinct values' path is taken (repeats)
    ex = chain.str.split().explode()
    ex = ex[ex.notna() & (ex.astype(str).str.len() > 1)]
    rec, key = _word_members(chain)
    assert np.array_equal(rec, ex.index.to_numpy(np.int64)) and key.tolist() == ex.tolist() and rec.size > 100
    assert key.dtype == object and rec.dtype == np.int64
    frame = s.reset_index(drop=True).to_frame()
    kind, (rec, key) = membership_values(frame, "token:v")
    assert rec.tolist() == (ex.index.to_numpy() - 11).__floordiv__(3).tolist() and key.tolist() == ex.tolist()
    kind, (rec, key) = membership_values(frame, "key:v")
    nospace = chain.str.replace(" ", "", regex=False).to_numpy(dtype=object)
    assert rec.tolist() == np.flatnonzero(nospace != "").tolist() and key.tolist() == nospace[nospace != ""].tolist()

    def loop(vals):  # the per-value string_values of stop 48
        out = []
        for x, m in zip(vals.to_numpy(dtype=object).tolist(), pd.isna(vals.to_numpy(dtype=object)).tolist()):
            if m:
                out.append("")
            elif isinstance(x, str):
                out.append(x)
            else:
                return None
        return out

    assert rules.string_values(s) == loop(s) and (rules.string_values(s) is None) == (other and dtype is object)
    assert rules.string_values(s.iloc[:0]) == [] and rules.string_values(pd.Series([np.str_("a"), None])) == ["a", ""]
