"""Record shapes the defaults were not developed on (bench/er_unseen.py): blocking on a
compound key of coarse fields, look-alike neighbours, product titles with model numbers,
placeholder strings, blank and padded header cells."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from trustlab.er import resolve
from trustlab.er.blocking import block
from trustlab.er.comparisons import compare
from trustlab.er.fields import infer_fields_report
from trustlab.er.kinds import Field
from trustlab.er.records import validate_records
from trustlab.er.scoring import DegenerateModelWarning, FSModel
from trustlab.er.synthetic import generate_books, generate_people, generate_products


def test_compound_key_blocking_keeps_agreement_evidence():
    """20,000 books: the adaptive rules include ``key:publisher+year``, and u re-estimated on
    candidates that all agree on publisher and year made agreeing on them count *against*
    a match (pairwise F1 0.0009 here with connected components; 0.376 in bench/er_unseen.py
    with xER). Among the candidates a key rule proposes, its fields are no evidence; the
    key states enter the prior instead."""
    df = generate_books(20000, random_state=20261124)
    truth = df.pop("cluster").to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        r = resolve(df, truth=truth, method="connected_components")
    assert "key:publisher+year" in r.blocking.rules
    assert r.metrics["f1"] > 0.9, r.metrics
    # u comes from the candidates, m from EM sessions: agreeing on publisher and year is
    # weak evidence among candidates that share them, never evidence against a match
    t = r.model.parameter_table().set_index(["field", "level"])["log_bf"]
    assert t[("publisher", "exact")] > 0 and t[("year", "exact")] > 0
    # the fitted model survives saving
    m, P, rec = r.model, r.pairs, r.records
    fm = compare(rec, P, m.fields, only=m.needed_features())
    m2 = FSModel.from_dict(m.to_dict())
    np.testing.assert_allclose(m2.field_weights(rec, P, fm), m.field_weights(rec, P, fm))


def test_no_key_rules_is_the_plain_model():
    """Without key rules (every pair compared) there is one λ and no key prior."""
    df = generate_people(200, random_state=4)
    r = resolve(df.drop(columns=["cluster"]), truth=df["cluster"].to_numpy())
    assert r.model.forcing_ == [] and r.model.key_coef_ == []
    assert r.metrics["f1"] > 0.95


@pytest.fixture(scope="module")
def restaurant():
    from trustlab.datasets import load_er_dataset

    ds = load_er_dataset("restaurant")
    return ds.records.drop(columns=[ds.truth_col]), ds.records[ds.truth_col].to_numpy()


def test_restaurant_unsupervised_not_lookalikes(restaurant):
    """Unsupervised restaurants: EM's match class drifted to 'same street, same city'
    (F1 0.063). The random pairs show how often non-matches share a level pattern (street
    and city together); EM now keeps to the duplicates."""
    df, truth = restaurant
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(df, truth=truth)
    assert r.metrics["f1"] > 0.6, r.metrics


def test_shared_context_is_not_identity(restaurant):
    """Restaurants in one hotel share an address and a city, not a name. With one EM over
    all pairs the match class became "same address" (name disagreement nearly free: F1
    0.73); m estimated in sessions (pairs agreeing on the name train the address, pairs
    agreeing on the address train the name) keeps them apart."""
    df, truth = restaurant
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(df, truth=truth, method="connected_components")
    assert r.metrics["f1"] > 0.88, r.metrics
    t = r.model.parameter_table().set_index(["field", "level"])["log_bf"]
    assert t[("name", "else")] < -2


def test_no_duplicates_with_key_rules_few_false_merges():
    """A table without duplicates above the all-pairs size (key rules on first name,
    surname, e-mail, date of birth): a shared first name must not make pairs matches on
    its own (before: 1,131 of 2,000 records merged)."""
    df = generate_people(1800, dup_rate=0.0, random_state=11).drop(columns=["cluster"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        r = resolve(df, method="connected_components")
    assert any(x.startswith("key:") for x in r.blocking.rules)
    assert r.n_entities > 0.8 * len(df), r.n_entities


def test_model_numbers_make_a_tokens_field():
    """Product titles share most words within a category; the model number tells them
    apart. Such titles are compared by token overlap weighted by rarity (F1 was 0.005)."""
    df = generate_products(1600, random_state=5)
    truth = df.pop("cluster").to_numpy()
    rep = infer_fields_report(df)
    kinds = {f.column: f.kind for f in rep.fields}
    assert kinds["title"] == "tokens"
    assert "model numbers" in next(c.reason for c in rep.choices if c.column == "title")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(df, truth=truth)
    assert r.metrics["f1"] > 0.9, r.metrics
    # book titles, names and addresses stay what they were
    people = generate_people(100, random_state=0)
    assert "tokens" not in {f.kind for f in infer_fields_report(people).fields}


def test_idf_jaccard_weighs_rare_tokens():
    df = pd.DataFrame({"t": ["Sonara AB-1234 Wireless Black", "sonara ab1234 black wireless",
                             "Sonara CD-5678 Wireless Black"] + [f"Sonara X{i} Wireless Black" for i in range(30)]})
    fm = compare(df, np.array([[0, 1], [0, 2]]), [Field("t", "tokens")], only={"t": {"jaccard", "idf_jaccard"}})
    idf = fm.X[:, fm.names.index("t:idf_jaccard")]
    assert idf[0] == pytest.approx(1.0) and idf[1] < 0.2
    jac = fm.X[:, fm.names.index("t:jaccard")]
    assert jac[1] > idf[1]  # plain Jaccard counts the common words as much
    # not computed unless asked for (supervised feature sets are unchanged)
    assert "t:idf_jaccard" not in compare(df, np.array([[0, 1]]), [Field("t", "tokens")]).names


def test_placeholder_strings_are_missing():
    """'N/A', 'null', 'None', '-', '?' were compared as values: two records agreeing only on
    'N/A' agreed on a rare value."""
    df = pd.DataFrame({"id": [1, 2, 3, 4], "city": ["Oslo", " N/A", "null", "?"], "zip": ["-", "None", "1", "2"]})
    out, idc = validate_records(df, None)
    assert idc == "id"
    assert out["city"].isna().tolist() == [False, True, True, True]
    assert out["zip"].isna().tolist() == [True, True, False, False]
    assert df["city"].tolist()[1] == " N/A"  # the caller's frame is not modified
    people = generate_people(300, random_state=2)
    truth = people.pop("cluster").to_numpy()
    bad = people.copy()
    bad.loc[bad.index % 3 == 0, "email"] = "N/A"
    bad.loc[bad.index % 4 == 0, "dob"] = "-"
    r = resolve(bad, truth=truth)
    assert r.metrics["precision"] > 0.97, r.metrics


def test_blank_and_padded_headers():
    people = generate_people(200, random_state=3)
    truth = people.pop("cluster").to_numpy()
    df = people.rename(columns={"id": " id "})
    df.insert(0, "Unnamed: 0", np.arange(len(df))[::-1])
    df.insert(3, "Unnamed: 7", ["x" if i % 2 else "y" for i in range(len(df))])
    r = resolve(df, truth=truth)
    assert r.id_col == " id "
    roles = {c.column: c.role for c in r.field_report.choices}
    assert roles["Unnamed: 0"] == roles["Unnamed: 7"] == "unnamed"
    assert "Unnamed: 7" not in [f.column for f in r.field_report.fields]
    assert r.metrics["f1"] > 0.95


def test_alnum_token_blocking_for_model_numbers():
    """At 20,000 products token blocking on titles found 57 % of the true pairs: 'AB1234'
    and 'AB-1234' share no token. ``token:COL:alnum`` splits letters from digits (not
    ordinals); the adaptive rules use it for tokens fields; plain token rules are unchanged."""
    from trustlab.er.blocking import adaptive_blocking_rules, block

    df = pd.DataFrame({"t": ["AB1234 black", "ab-1234 red", "57th street", "57 th avenue"]})
    assert block(df, "token:t:alnum", max_block_size=2).tolist() == [[0, 1]]
    assert block(df, "token:t", max_block_size=2).tolist() == []
    with pytest.raises(ValueError, match="alnum"):
        block(df, "token:t:split")
    prod = generate_products(1600, random_state=5).drop(columns="cluster")
    rules = adaptive_blocking_rules(prod, infer_fields_report(prod).fields)
    # the plain rule is over budget at 1,600 products: only its most common tokens go
    assert any(r.startswith("token:title:alnum") for r in rules), rules
    assert "token:title" not in rules


def test_per_rule_block_limit():
    """``RULE@S`` purges that rule's blocks of more than S records (the global
    max_block_size still applies); a bad limit is refused with an example."""
    df = pd.DataFrame({"t": ["aa xx", "bb xx", "cc xx", "aa yy", "bb yy"]})
    assert block(df, "token:t").tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 4], [3, 4]]
    assert block(df, "token:t@2").tolist() == [[0, 3], [1, 4], [3, 4]]  # block "xx" (3 records) purged
    assert block(df, "token:t@3", max_block_size=2).tolist() == [[0, 3], [1, 4], [3, 4]]
    for bad in ("token:t@1", "token:t@x", "token:t@"):
        with pytest.raises(ValueError, match="integer >= 2"):
            block(df, bad)
    # a key rule with its own limit still selects on agreement (the FS key prior sees it)
    m = FSModel([Field("t", "string"), Field("u", "exact")]).set_forcing(["key:t+u@50", "key:u:3", "token:t@5"])
    assert m.forcing_ == [["t", "u"]]


def test_products_need_no_tightened_blocks():
    """2,000 products (seed 5): blocks of up to 200 records on common title tokens and on
    brand + category gave 423k candidates, and EM took "same brand and category" for its
    match class (F1 0.005, 20 s, warned). resolve sees the drift (``FSModel.drifted_``) and
    refits with halved blocks; a user's own blocking is left alone."""
    df = generate_products(2000, random_state=5)
    truth = df.pop("cluster").to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(df, truth=truth)
    # m from EM sessions and u from the candidates: "same brand and category" is no
    # longer the match class, so the default blocks need no tightening
    assert not r.model.drifted_ and r.metrics["f1"] > 0.9, r.metrics
    assert FSModel.from_dict(r.model.to_dict()).drifted_ is False


def test_idf_jaccard_memory_is_bounded_on_long_texts(monkeypatch):
    """Records of 1,500 words: the pairs were chunked by count (200,000 pairs), so one chunk
    gathered every pair's token rows at once (3.3 GB RSS for 400 records); chunks are now
    bounded by the token entries they gather, with the same values."""
    import tracemalloc

    import trustlab.er.comparisons as S

    rng = np.random.default_rng(0)
    words = np.array([f"w{k}" for k in range(4000)])
    s = pd.Series([" ".join(rng.choice(words, 1500)) for _ in range(220)])
    i, j = np.triu_indices(len(s), 1)
    tracemalloc.start()
    got = S._idf_jaccard(s, i, j)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 600 * 2**20, f"peak {peak / 2**20:.0f} MiB"  # was ~1.3 GiB
    small = S._idf_jaccard(s[:40], *np.triu_indices(40, 1))
    monkeypatch.setattr(S, "_JACCARD_CHUNK", 50_000)  # many small chunks: identical values
    np.testing.assert_array_equal(S._idf_jaccard(s, i, j), got)
    monkeypatch.setattr(S, "_JACCARD_CHUNK", 1)  # every pair over the budget: one pair per chunk
    np.testing.assert_array_equal(S._idf_jaccard(s[:40], *np.triu_indices(40, 1)), small)
    assert S._idf_jaccard(s, i[:0], j[:0]).shape == (0,)


def test_a_single_text_column_of_titles_finds_the_duplicates():
    """A list of product titles alone: EM estimates ~150 duplicate pairs, but one 4-level
    comparison cannot lift any pair over probability 0.5 among 500,000 candidates, so every
    record stayed a singleton (pairwise F1 0) without a word."""
    df = generate_products(1000, random_state=3)
    truth = df.pop("cluster").to_numpy()
    # the title with its model numbers, the whole-record cosine and the codes comparison now
    # carry enough evidence (F1 was 0, every record a singleton)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        r = resolve(df[["title"]].copy(), truth=truth)
    assert r.metrics["f1"] > 0.9, r.metrics
