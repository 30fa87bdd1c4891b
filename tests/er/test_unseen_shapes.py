"""Record shapes the defaults were not developed on (bench/er_unseen.py): blocking on a
compound key of coarse fields, look-alike neighbours, product titles with model numbers,
placeholder strings, blank and padded header cells."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import trustlab.er.comparisons as C
from trustlab.er import resolve
from trustlab.er.comparisons import DegenerateModelWarning, FSModel
from trustlab.er.fields import infer_fields_report
from trustlab.er.records import Field, validate_records
from trustlab.er.scoring import compare
from trustlab.er.synthetic import generate_people

_SYL = ["ka", "lo", "mi", "ren", "tor", "va", "zen", "qui", "bra", "del", "fin", "gro", "hal", "jun", "mar", "nex",
        "pol", "sol", "tri", "vex", "wil", "xan", "yor", "zu", "ber", "cor", "dan", "eli", "fro", "gan"]


def _words(rng, k, syl=(2, 3)):
    out = set()
    while len(out) < k:
        out.add("".join(rng.choice(_SYL, rng.integers(syl[0], syl[1] + 1))))
    return np.array(sorted(out), dtype=object)


def _isbn13(core9):
    s = "978" + core9
    return s + str((10 - sum(int(ch) * (1 if i % 2 == 0 else 3) for i, ch in enumerate(s)) % 10) % 10)


def _isbn10(core9):
    c = (11 - sum((10 - i) * int(ch) for i, ch in enumerate(core9)) % 11) % 11
    return core9 + ("X" if c == 10 else str(c))


def _books(n, seed):
    """bench/er_unseen.py's books: ISBN-10 / ISBN-13 / hyphenated / missing, title with and
    without subtitle, author as 'First Last' / 'Last, First' / 'F. Last', publisher or its
    short name, year (10 % off by one)."""
    rng = np.random.default_rng(seed)
    firsts, lasts, tw = _words(rng, 200, (1, 2)), _words(rng, 800), _words(rng, 400)
    pubs = [("Penwick Press", "Penwick"), ("Harlow & Sons", "Harlow"), ("Oxbridge University Press", "OUP"),
            ("Stellar Books", "Stellar"), ("North Gate Publishing", "North Gate"), ("Random Tower", "RT")]
    n_ent = int(round(n * 0.65))
    ent = list(range(n_ent))
    cnt = np.ones(n_ent, int)
    while len(ent) < n:
        e = int(rng.integers(n_ent))
        if cnt[e] < 4:
            ent.append(e)
            cnt[e] += 1
    E = []
    for _ in range(n_ent):
        t = " ".join(rng.choice(tw, rng.integers(2, 5))).title()
        sub = " ".join(rng.choice(tw, rng.integers(2, 4))).title() if rng.random() < 0.5 else ""
        E.append({"title": t, "sub": sub, "first": firsts[rng.integers(len(firsts))].title(),
                  "last": lasts[rng.integers(len(lasts))].title(), "pub": pubs[rng.integers(len(pubs))],
                  "year": int(rng.integers(1950, 2024)), "core": "".join(map(str, rng.integers(0, 10, 9)))})
    rows, seen = [], np.zeros(n_ent, bool)
    for e in ent:
        x, dup = E[e], seen[e]
        seen[e] = True
        title = x["title"] + (f": {x['sub']}" if x["sub"] and (not dup or rng.random() < 0.5) else "")
        st = int(rng.integers(3)) if dup else 0
        author = [f"{x['first']} {x['last']}", f"{x['last']}, {x['first']}", f"{x['first'][0]}. {x['last']}"][st]
        k = int(rng.integers(4)) if dup else 0
        i13, i10 = _isbn13(x["core"]), _isbn10(x["core"])
        isbn = [i13, i10, f"{i13[:3]}-{i13[3]}-{i13[4:8]}-{i13[8:12]}-{i13[12]}", None][k]
        year = x["year"] + (int(rng.choice([-1, 1])) if dup and rng.random() < 0.1 else 0)
        rows.append({"isbn": isbn, "book_title": title, "author": author,
                     "publisher": x["pub"][int(dup and rng.random() < 0.5)], "year": str(year), "truth": e})
    df = pd.DataFrame(rows).iloc[rng.permutation(n)].reset_index(drop=True)
    df.insert(0, "id", [f"b{i:05d}" for i in range(n)])
    return df


def test_compound_key_blocking_keeps_agreement_evidence():
    """20,000 books: the adaptive rules include ``key:publisher+year``, and u re-estimated on
    candidates that all agree on publisher and year made agreeing on them count *against*
    a match (pairwise F1 0.0009 here with connected components; 0.376 in bench/er_unseen.py
    with xER). Among the candidates a key rule proposes, its fields are no evidence; the
    key states enter the prior instead."""
    df = _books(20000, 20261124)
    truth = df.pop("truth").to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        r = resolve(df, truth=truth, method="connected_components")
    assert "key:publisher+year" in r.blocking.rules
    assert r.metrics["f1"] > 0.95, r.metrics
    m = r.model
    assert ["publisher", "year"] in m.forcing_
    R = len(m.forcing_)
    assert len(m.key_coef_) == 1 + 2 * R
    k = m.forcing_.index(["publisher", "year"])
    assert m.key_coef_[1 + k] > 0  # agreeing on publisher+year raises the odds of a match
    # the pairs the publisher+year rule alone proposes are non-matches unless other fields agree
    fw = r.field_weights.sum(1) + np.log(m.lambda_ / (1 - m.lambda_))
    P = r.pairs
    rec = r.records
    h = m.key_states(rec, P)
    only_py = h == (1 << k)
    same = truth[P[:, 0]] == truth[P[:, 1]]
    assert only_py.any() and (fw[only_py & ~same] < 0).mean() > 0.99
    # the fitted key prior survives saving
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


def test_lookalike_match_class_warns(restaurant, monkeypatch):
    """Without the dependence correction EM drifts to look-alikes again, and says so."""
    monkeypatch.setattr(C, "DEPENDENCE_PSEUDO", 1e15)
    df, _ = restaurant
    with pytest.warns(DegenerateModelWarning, match="do not agree on any identifying field"):
        resolve(df, method="connected_components")


def test_no_duplicates_with_key_rules_few_false_merges():
    """A table without duplicates above the all-pairs size (key rules on first name,
    surname, e-mail, date of birth): a shared first name must not make pairs matches on
    its own (before: 1,131 of 2,000 records merged)."""
    df = generate_people(1800, dup_rate=0.0, random_state=11).drop(columns=["cluster"])
    with pytest.warns(DegenerateModelWarning):
        r = resolve(df, method="connected_components")
    assert any(x.startswith("key:") for x in r.blocking.rules)
    assert r.n_entities > 0.5 * len(df), r.n_entities


def _products(n, seed):
    """Products: brand, model number (with or without its hyphen), 2-4 words of the
    category (shuffled in duplicates), colour; brand, category and a price (a few per cent
    off in duplicates) as columns."""
    rng = np.random.default_rng(seed)
    brands = ["Sonara", "Kelvix", "Auralis", "Zentro", "Bravik", "Orlen"]
    words = {"laptop": ["Laptop", "15.6 inch", "16GB RAM", "512GB SSD", "Notebook"],
             "phone": ["Smartphone", "128GB", "Unlocked", "5G", "Dual SIM"],
             "camera": ["Mirrorless", "Camera", "24MP", "4K Video", "Body Only"],
             "monitor": ["Monitor", "27 inch", "IPS", "144Hz", "QHD"]}
    colors = ["Black", "Silver", "White", "Blue"]
    n_ent = int(n * 0.6)
    ent = np.r_[np.arange(n_ent), rng.integers(0, n_ent, n - n_ent)]
    E = []
    for _ in range(n_ent):
        c = list(words)[rng.integers(len(words))]
        E.append({"b": brands[rng.integers(len(brands))], "c": c, "col": colors[rng.integers(4)],
                  "m": f"{''.join(rng.choice(list('ABCDEFGHJKLMN'), 2))}-{rng.integers(100, 9999)}",
                  "w": list(rng.choice(words[c], rng.integers(2, 5), replace=False)),
                  "p": float(np.round(np.exp(rng.normal(5.5, 0.8)), 2))})
    rows, seen = [], np.zeros(n_ent, bool)
    for e in ent:
        x, dup = E[e], seen[e]
        seen[e] = True
        w, model, price = list(x["w"]), x["m"], x["p"]
        if dup:
            rng.shuffle(w)
            model = model.replace("-", "") if rng.random() < 0.5 else model
            price = round(price * float(rng.uniform(0.95, 1.05)), 2)
        rows.append({"title": " ".join([x["b"], model, *w, x["col"]]), "brand": x["b"], "price": f"{price:.2f}",
                     "category": x["c"], "truth": e})
    return pd.DataFrame(rows)


def test_model_numbers_make_a_tokens_field():
    """Product titles share most words within a category; the model number tells them
    apart. Such titles are compared by token overlap weighted by rarity (F1 was 0.005)."""
    df = _products(1600, 5)
    truth = df.pop("truth").to_numpy()
    rep = infer_fields_report(df)
    kinds = {f.column: f.kind for f in rep.fields}
    assert kinds["title"] == "tokens"
    assert "model numbers" in next(c.reason for c in rep.choices if c.column == "title")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        r = resolve(df, truth=truth)
    assert r.metrics["f1"] > 0.8, r.metrics
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
    prod = _products(1600, 5).drop(columns="truth")
    rules = adaptive_blocking_rules(prod, infer_fields_report(prod).fields)
    assert "token:title:alnum" in rules and "token:title" not in rules
