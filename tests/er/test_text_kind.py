"""The ``text`` kind: a table's only text field compared by its character 3-gram TF-IDF (stop 47)."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from trustlab.er.comparisons import _clean_words, char3_cosine, char3_grams, compare
from trustlab.er.fields import infer_fields_report
from trustlab.er.kinds import KINDS, Field
from trustlab.er.scoring import FSModel

NAMES = ["The United States of America as represented by the Secretary of the Navy",
         "The United States of America as represented by the Secretary of the Army",
         "The Unites States of America as represented by the Secretary of the Navy",
         "International Business Machines Corp", "International Business Machines Corporation",
         "General Electric Company", "General Motors Company", "Stanford University", "", None,
         "600 Mountain Avenue, Murray Hill", "601 Mountain Avenue, Murray Hill", "Bell Labs"]


def _brute_cosine(texts, i, j):
    """TF-IDF cosine of the 3-grams, word by word and gram by gram in plain Python."""
    grams = [Counter(char3_grams(t)) for t in texts]
    n = len(texts)
    df = Counter(g for c in grams for g in c)
    idf = {g: math.log((1 + n) / (1 + d)) + 1 for g, d in df.items()}

    def vec(c):
        v = {g: (1 + math.log(k)) * idf[g] for g, k in c.items()}
        norm = math.sqrt(sum(x * x for x in v.values()))
        return {g: x / norm for g, x in v.items()} if norm else {}

    vs = [vec(c) for c in grams]
    return np.array([sum(x * vs[b].get(g, 0.0) for g, x in vs[a].items()) for a, b in zip(i, j)])


def test_char3_cosine_equals_brute_force():
    s = pd.Series(NAMES * 3)
    texts = _clean_words(s.fillna("")).tolist()
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, len(s), 200), rng.integers(0, len(s), 200)
    got = char3_cosine(s, i, j)
    np.testing.assert_allclose(got, np.clip(_brute_cosine(texts, i, j), 0, 1), atol=1e-12)
    assert got[i == j][np.array([bool(texts[a]) for a in i[i == j]])] == pytest.approx(1.0)


def test_char3_grams_keep_numbers_and_codes_whole():
    assert char3_grams("ibm co 600 g06f") == [" ib", "ibm", "bm ", " co", "co ", "#600", "#g06f"]
    s = pd.Series(["600 Mountain Avenue", "601 Mountain Avenue", "600 Mountain Avenue"])
    c = char3_cosine(s, np.array([0, 0]), np.array([1, 2]))
    assert c[1] == pytest.approx(1.0) and c[0] < 0.9  # another number is another word


def test_corpus_gives_the_whole_tables_idf():
    """With the whole table's document frequencies, pairs of a subset score as in the whole table."""
    from trustlab.er.comparisons import _char3_records  # noqa: F401 (the rows of the whole table)

    s = pd.Series(NAMES[:8] * 4)
    texts = _clean_words(s).tolist()
    grams = pd.Series([sorted(set(char3_grams(t))) for t in texts]).explode().dropna()
    corpus = (len(s), grams.value_counts())
    sub = s.iloc[[0, 1, 2, 5, 6]].reset_index(drop=True)
    i, j = np.array([0, 0, 3]), np.array([1, 2, 4])
    whole = char3_cosine(s, np.array([0, 0, 5]), np.array([1, 2, 6]))
    np.testing.assert_allclose(char3_cosine(sub, i, j, corpus), whole, atol=1e-12)
    assert not np.allclose(char3_cosine(sub, i, j), whole)


def test_only_text_field_is_inferred_as_text_kind():
    one = pd.DataFrame({"organization": NAMES[:8] * 30})
    rep = infer_fields_report(one)
    assert [(f.column, f.kind) for f in rep.fields] == [("organization", "text")]
    assert "3-gram" in next(c.reason for c in rep.choices if c.column == "organization")
    two = one.assign(city=["Palo Alto", "Armonk", "Boston", "Detroit"] * 60)
    kinds = {f.column: f.kind for f in infer_fields_report(two).fields}
    assert kinds.get("organization") == "string" and "*" in kinds  # the record comparison weighs the words


def test_text_levels_tell_the_one_rare_word_apart():
    """token-set ratio calls the Navy and the Army close (their words agree but one); the
    3-gram TF-IDF, where the words they share are common, puts them below close and keeps a
    typo of the same name close."""
    deps = ["Navy", "Army", "Energy", "Commerce", "Interior", "Agriculture", "Air Force", "Education"]
    gov = [f"The United States of America as represented by the Secretary of the {d}" for d in deps]
    df = pd.DataFrame({"o": gov + ["The Unites States of America as represented by the Secretary of the Navy"]
                       + NAMES[3:8]})
    P = np.array([[0, 1], [0, 8], [9, 10], [12, 13]])
    lv = {}
    for kind in ("string", "text"):
        fl = [Field("o", kind)]
        m = FSModel(fl)
        lv[kind] = m.levels(compare(df, P, fl, only=m.needed_features()))[:, 0].tolist()
    assert lv["string"][:2] == [1, 1]  # Navy / Army and Navy / its typo: both close
    assert lv["text"][:2] == [2, 1]  # Navy / Army far; Navy / its typo close
    assert KINDS["text"].levels[1] == "char3"


def test_text_features_missing_values():
    df = pd.DataFrame({"o": ["General Electric", None, "", "General Electric Co"]})
    fm = compare(df, np.array([[0, 1], [0, 2], [0, 3], [1, 2]]), [Field("o", "text")])
    c3 = fm.X[:, fm.names.index("o:char3")]
    assert np.isnan(c3[:2]).all() and np.isnan(c3[3]) and 0.5 < c3[2] < 1.0


def test_only_short_name_field_is_inferred_as_text_kind():
    """First and last name in one column, the table's only field: ``text`` (3-gram TF-IDF), not
    ``name`` (whose Jaro-Winkler levels let EM call every far pair a match); beside another
    field it stays a ``name``."""
    first = ["Felipe", "Stephen", "Ann", "Moshe", "Dana", "Avi", "Yael", "Ron", "Noa", "Eli", "Tamar", "Uri"]
    last = ["Garcia", "Cochran", "Lee", "Cohen", "Levi", "Katz", "Mizrahi", "Peretz", "Biton", "Dahan"]
    people = pd.DataFrame({"full": [f"{a} {b}" for a in first for b in last] * 2})
    rep = infer_fields_report(people)
    assert [(f.column, f.kind) for f in rep.fields] == [("full", "text")]
    two = people.assign(city_name=["Haifa", "Tel Aviv", "Eilat", "Acre"] * 60)
    kinds = {f.column: f.kind for f in infer_fields_report(two).fields}
    assert kinds.get("full") == "name"
