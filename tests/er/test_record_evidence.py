"""The whole-record comparison counts words, not numbers, and only words that say something:
numbers and coordinates stay out of the record's text (their own fields compare them), and two
records whose shared words are jointly common (a city, a category) get no record similarity,
however alike two near-empty records look by cosine."""
import numpy as np
import pandas as pd

from trustlab.er import Field, resolve
from trustlab.er.comparisons import _tfidf_cosine, shared_information
from trustlab.er.kinds import code_tokens, record_text


def test_record_text_leaves_numbers_and_coordinates_to_their_fields():
    df = pd.DataFrame({"label": ["Petra (Jordan)", "Petra"], "lat": ["30.3167", ""], "lon": ["35.4833", ""],
                       "price": ["1999.5", "12"]})
    fields = [Field("label", "name"), Field("lat,lon", "latlon"), Field("price", "numeric"), Field("*", "record")]
    text = record_text(df, fields).tolist()
    assert text == ["Petra (Jordan)", "Petra"]
    # a coordinate is not a model number
    assert code_tokens(record_text(df, [Field("label", "name"), Field("lat", "numeric")])).empty


def test_shared_common_words_alone_give_no_record_similarity():
    # 40 records: "italian" in 10 of them, "new york" in 20; the rest carry unique names
    rows = [f"place{i} italian new york" for i in range(10)] + [f"spot{i} new york" for i in range(10)] \
        + [f"venue{i} chinese" for i in range(20)]
    rows[0], rows[1] = "italian", "new york italian"  # two near-empty records
    rows[2], rows[3] = "zanzibar italian", "zanzibar new york italian"  # sharing one rare word
    text = pd.Series(rows)
    i, j = np.array([0, 2]), np.array([1, 3])
    out = _tfidf_cosine(text, i, j)
    assert out[0] == 0.0  # "italian" is held by 10 of 40 records: log(4) < log(40)
    assert out[1] > 0.5  # "zanzibar" is held by 2: log(20) + log(4) >= log(40)
    assert shared_information(40) == np.log(40)


def test_near_empty_records_are_not_merged_on_a_category():
    rng = np.random.default_rng(0)
    names = [f"{a} {b}" for a, b in zip(rng.choice(["golden", "blue", "red", "old", "little", "grand"], 60),
                                        [f"kitchen{k}" for k in range(60)])]
    cuisine = rng.choice(["italian", "asian", "american", "french"], 60)
    city = rng.choice(["new york", "los angeles", "atlanta"], 60)
    rows = []
    for k in range(60):  # each restaurant twice, the address written two ways
        rows.append({"name": names[k], "address": f"{100 + k} main st", "city": city[k], "cuisine": cuisine[k]})
        rows.append({"name": names[k], "address": f"{100 + k} main street", "city": city[k], "cuisine": cuisine[k]})
    for k in range(12):  # rows with only a category left (name and address lost)
        rows.append({"name": "", "address": "", "city": city[k % 3] if k % 2 else "", "cuisine": cuisine[k % 4]})
    df = pd.DataFrame(rows)
    r = resolve(df, random_state=0)
    ent = np.asarray(r.entity)
    empty = ent[120:]
    # no two category-only rows form an entity, and none joins a real restaurant
    assert len(set(empty.tolist())) == len(empty)
    assert not set(empty.tolist()) & set(ent[:120].tolist())


def test_a_column_of_a_few_file_names_or_site_urls_is_the_source_whatever_its_header():
    from trustlab.er.fields import infer_fields_report

    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({
        "http://example.org/ontology#a1": [f"Place{k} {w}" for k, w in zip(range(n), rng.choice(["inn", "cafe"], n))],
        "http://example.org/ontology#a2": rng.choice(["http://dbpedia.org/", "http://data.nytimes.com/",
                                                      "https://sws.geonames.org"], n),
        "col3": rng.choice(["CPS_portal_scrape.csv", "dfss providers 2011.csv", "purple_binder.xlsx"], n),
        "cuisine": rng.choice(["italian", "french", "thai"], n),  # a category, not a source
        "website": [f"http://place{k}.example.com/" for k in range(n)],  # one site per record: not a source
    })
    roles = {c.column: c.role for c in infer_fields_report(df).choices}
    assert roles["http://example.org/ontology#a2"] == "source"
    assert roles["col3"] == "source"
    assert roles["cuisine"] == "field"
    assert roles["website"] != "source"
