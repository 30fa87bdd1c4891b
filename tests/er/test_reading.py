"""Reading tables as a user expects (issue 27, item 5; issue 28, item 10's encoding offset):
delimiter sniffing among , TAB ; | % #, quoting, encodings, wrong or unclear delimiters,
any column name in blocking rules and field specs, and column pairing in link mode."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from trustlab.cli import main
from trustlab.er.records import read_records

_ROWS = [["id", "name", "city"], ["1", "Ann Lee", "Paris"], ["2", "Anne Lee", "Paris"], ["3", "Bob Ray", "Rome"],
         ["4", "Bob Rae", "Rome"]]


def _text(sep: str, rows=_ROWS) -> str:
    return "".join(sep.join(r) + "\n" for r in rows)


def _one_line(capsys, argv) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ----------------------------------------------------------------------------- delimiters
@pytest.mark.parametrize("sep", [",", ";", "|", "\t", "%", "#"])
def test_each_delimiter_is_detected_and_a_wrong_sep_is_an_error(tmp_path, sep):
    p = tmp_path / "t.csv"
    p.write_text(_text(sep))
    df = read_records(p)
    assert list(df.columns) == _ROWS[0] and df.values.tolist() == _ROWS[1:]
    wrong = ";" if sep == "," else ","
    with pytest.raises(ValueError, match="--sep") as exc:
        read_records(p, sep=wrong)  # one column, while `sep` reads a table: an error, not a warning
    assert f"--sep {sep!r}" in str(exc.value) or (sep == "\t" and "--sep '\\t'" in str(exc.value))


def test_quoted_fields_hold_delimiters_quotes_and_newlines(tmp_path):
    p = tmp_path / "q.txt"
    p.write_text('id#name#note\n1#"Lee # Ann, Dr."#"line one\nline two; 5%"\n2#"Bob ""the"" Ray"#plain\n'
                 '3#Eve#"a|b"\n')
    df = read_records(p)
    assert list(df.columns) == ["id", "name", "note"]
    assert df["name"].tolist() == ["Lee # Ann, Dr.", 'Bob "the" Ray', "Eve"]
    assert df["note"].tolist() == ["line one\nline two; 5%", "plain", "a|b"]


def test_ambiguous_delimiter_stops_and_names_sep(tmp_path, capsys):
    p = tmp_path / "amb.csv"
    p.write_text("a,b;c\n1,2;3\n4,5;6\n7,8;9\n")  # ',' and ';' both read 2 consistent columns
    with pytest.raises(ValueError, match="cannot tell the delimiter.*--sep"):
        read_records(p)
    assert "--sep" in _one_line(capsys, ["resolve", str(p)])
    assert read_records(p, sep=";").columns.tolist() == ["a,b", "c"]


def test_wrong_sep_on_the_cli_is_an_error(tmp_path, capsys):
    p = tmp_path / "hash.csv"
    p.write_text(_text("#"))
    line = _one_line(capsys, ["resolve", str(p), "--sep", ","])
    assert "--sep ','" in line and "--sep '#'" in line and "one column" in line


def test_percent_file_with_commas_in_values_reads(tmp_path, capsys):
    """A '%'-separated file whose values hold commas used to fail with a raw CSV error."""
    rows = [["id", "name", "address"]] + [[str(i), f"name {i % 7}", f"{i} Main St, Springfield, IL"]
                                          for i in range(12)]
    p = tmp_path / "pct.csv"
    p.write_text(_text("%", rows))
    assert main(["resolve", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_records"] == 12
    assert {c["column"] for c in out["field_choices"]} - {"*", "#", "~"} == {"id", "name", "address"}


def test_unsplittable_header_error_mentions_sep(tmp_path):
    p = tmp_path / "c.csv"
    p.write_bytes(b"# exported by X\nid,name\n1,Ann\n2,Anne\n")
    with pytest.raises(ValueError, match=r"line 2 has 2 fields but the header has 1.*--sep"):
        read_records(p)


# ----------------------------------------------------------------------------- encodings
@pytest.mark.parametrize("bom,encoding,sep", [
    (b"\xef\xbb\xbf", "utf-8", "%"),
    (b"", "utf-16", "#"),  # Python's utf-16 codec writes the BOM
    (b"", "utf-32", "|"),
])
def test_byte_order_marks(tmp_path, bom, encoding, sep):
    rows = [r[:] for r in _ROWS]
    rows[1][1] = "Zoë Ærø"
    p = tmp_path / "bom.csv"
    p.write_bytes(bom + _text(sep, rows).encode(encoding))
    df = read_records(p)
    assert list(df.columns) == _ROWS[0] and df["name"].iloc[0] == "Zoë Ærø"


def test_latin1_fallback_only_where_safe(tmp_path, capsys):
    p = tmp_path / "l1.csv"
    p.write_bytes("id;name\n1;José\n2;Renée\n3;Zoë\n".encode("latin-1"))
    with pytest.warns(UserWarning, match="latin-1.*--encoding"):
        df = read_records(p)
    assert df["name"].tolist() == ["José", "Renée", "Zoë"]
    # cp1252 curly quotes (0x93/0x94) are C1 controls in latin-1: no guess, an error
    q = tmp_path / "cp.csv"
    q.write_bytes("id,name\n1,“José”\n2,Zoë\n".encode("cp1252"))
    with pytest.raises(ValueError, match="--encoding"):
        read_records(q)
    assert read_records(q, encoding="cp1252")["name"].tolist() == ["“José”", "Zoë"]
    # Cyrillic 8-bit text (runs of high bytes) is not taken for latin-1 either
    r = tmp_path / "ru.csv"
    r.write_bytes("id,name\n1,Привет\n2,Мир\n".encode("cp1251"))
    with pytest.raises(ValueError, match="--encoding"):
        read_records(r)
    line = _one_line(capsys, ["resolve", str(q)])
    assert "--encoding" in line


@pytest.mark.parametrize("nrows,at", [(30, 258), (120_000, 1_000_003)])
def test_encoding_error_reports_the_real_byte_offset(tmp_path, nrows, at):
    body = b"id,name\n" + b"".join(b"%d,abcdefghij\n" % i for i in range(nrows))
    data = body[:at] + b"\x93\x94" + body[at:]  # cp1252 quotes: no latin-1 fallback
    p = tmp_path / "bad.csv"
    p.write_bytes(data)
    line = data[:at].count(b"\n") + 1
    for enc in (None, "utf-8"):
        with pytest.raises(ValueError, match=rf"at byte {at} \(line {line}\).*--encoding"):
            read_records(p, encoding=enc)


@pytest.mark.parametrize("cmd", [["cliques"], ["partition", "--format", "edgelist"]])
def test_other_commands_report_the_real_byte_offset(tmp_path, capsys, cmd):
    """The generic one-line error of a command without --encoding counted from the start
    of the decoder's buffer (byte 1696 for a bad byte at 100000)."""
    body = b"".join(b"%d %d 1\n" % (i, i + 1) for i in range(30000))
    p = tmp_path / "edges.txt"
    p.write_bytes(body[:100000] + b"\xe9" + body[100000:])
    line = _one_line(capsys, [*cmd, str(p)])
    nl = body[:100000].count(b"\n") + 1
    assert f"at byte 100000, line {nl}" in line and "not valid utf-8" in line


# ----------------------------------------------------------------------------- any column name in rules
_WEIRD = ["http://dbpedia.org/ontology#name", "a:b+c@5", "we`ird;x", 'say "hi"', " padded ", "Site name", "x,y",
          "plain"]


def test_rule_strings_round_trip_for_any_column_name():
    from trustlab.er.rules import Rule, canonical_rules, parse_rule

    for c in _WEIRD:
        for r in (Rule("token", (c,)), Rule("token", (c,), "alnum", 50), Rule("key", (c, "plain"), "3"),
                  Rule("qgram", (c,), "4"), Rule("sorted", (c,), "10", 7)):
            assert parse_rule(str(r)) == r, (c, str(r))
            assert canonical_rules([str(r)]) == [str(r)]
    # unquoted names holding ':' are still found against the records' columns
    assert parse_rule("token:http://dbpedia.org/ontology#name:alnum@20",
                      columns=_WEIRD) == Rule("token", (_WEIRD[0],), "alnum", 20)
    assert parse_rule("token:Site name").columns == ("Site name",)  # bare names keep working


def _url_records(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    first = np.array(["ann", "bob", "eve", "joe", "kim", "lee", "max", "ola", "pia", "ray"])
    last = np.array([f"smith{k}" for k in range(300)])
    i = rng.integers(0, 10, n)
    j = rng.integers(0, 300, n)
    return pd.DataFrame({
        "id": np.arange(n),
        "http://dbpedia.org/ontology#name": [f"{a} {b}" for a, b in zip(first[i], last[j])],
        "http://dbpedia.org/property/city:code": [f"c{k}" for k in rng.integers(0, 400, n)],
        "phone, home": [f"555-{k:04d}" for k in rng.integers(0, 3000, n)],
    })


def test_automatic_blocking_on_url_column_names():
    """An automatically chosen rule on a column named like a URL used to fail with
    "names column 'http' that is not in the records"."""
    from trustlab.er.blocking import block
    from trustlab.er.defaults import default_rules
    from trustlab.er.kinds import Field

    df = _url_records(1600)
    fields = [Field("http://dbpedia.org/ontology#name", "name"),
              Field("http://dbpedia.org/property/city:code", "exact"), Field("phone, home", "phone")]
    rules = default_rules(df, fields)
    assert rules != ["all"]
    pairs = block(df, rules)
    # the same pairs as the rules chosen on plainly named copies of the columns
    ren = {f.column: f"c{k}" for k, f in enumerate(fields)}
    plain = df.rename(columns=ren)
    plain_rules = default_rules(plain, [Field(ren[f.column], f.kind) for f in fields])
    assert len(plain_rules) == len(rules)
    assert np.array_equal(pairs, block(plain, plain_rules))


def _url_duplicates(k: int = 40) -> pd.DataFrame:
    """``k`` entities of two records each, distinct names: quick to resolve."""
    rows = []
    for e in range(k):
        for d in range(2):
            rows.append({"id": 2 * e + d, "http://dbpedia.org/ontology#name": f"name{e} surname{e}" + ("x" * d),
                         "http://dbpedia.org/property/city:code": f"c{e % 7}", "phone, home": f"555-{e:04d}"})
    return pd.DataFrame(rows)


def test_url_column_names_in_fields_blocking_and_saved_models(tmp_path):
    import trustlab
    from trustlab.er.model import load_model, save_model

    df = _url_duplicates()
    spec = "http://dbpedia.org/ontology#name:name,`phone, home`:phone,http://dbpedia.org/property/city:code"
    blocking = ["token:http://dbpedia.org/ontology#name", "key:`phone, home`"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = trustlab.resolve(df, id_col="id", fields=spec, blocking=blocking, method="connected_components")
    assert [(f.column, f.kind) for f in r.field_report.fields] == [
        ("http://dbpedia.org/ontology#name", "name"), ("phone, home", "phone"),
        ("http://dbpedia.org/property/city:code", "string")]
    assert r.blocking.rules == ["token:`http://dbpedia.org/ontology#name`", "key:`phone, home`"]
    path = tmp_path / "m.json"
    save_model(r, path)
    m = load_model(str(path))
    assert m.blocking == r.blocking.rules
    assert [f.column for f in m.fields] == [f.column for f in r.field_report.fields]
    r2 = trustlab.resolve(df, id_col="id", model=str(path), method="connected_components")
    assert np.array_equal(r2.entity, r.entity)
    # a model trained on all pairs chooses its rules when applied to a large table: they work too
    from trustlab.er.blocking import block

    m.blocking = ["all"]
    big = _url_records(1600)
    rules = m.rules_for(big)
    assert rules != ["all"] and len(block(big, rules)) > 0


def test_cli_fields_and_blocking_with_url_column_names(tmp_path, capsys):
    df = _url_duplicates()
    p = tmp_path / "u.csv"
    df.to_csv(p, index=False)
    assert main(["resolve", str(p), "--json", "--method", "connected_components",
                 "--fields", "`http://dbpedia.org/ontology#name`:name;phone, home:phone",
                 "--blocking", "token:`http://dbpedia.org/ontology#name`; key:`phone, home`"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["column"] for f in out["fields"]] == ["http://dbpedia.org/ontology#name", "phone, home"]
    assert out["blocking"]["rules"] == ["token:`http://dbpedia.org/ontology#name`", "key:`phone, home`"]


# ----------------------------------------------------------------------------- column pairing in link mode
def _two_tables(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 60
    names = [f"{a} {b}" for a, b in zip(rng.choice(["ann", "bob", "eve", "joe", "kim", "max"], n),
                                        rng.choice([f"smith{k}" for k in range(80)], n))]
    cities = rng.choice(["oslo", "rome", "paris", "lima", "kyiv", "baku"], n)
    years = rng.integers(1950, 2020, n)
    a = pd.DataFrame({"id": np.arange(n), "http://dbpedia.org/ontology#name": names, "City": cities,
                      "born": [f"{y}-01-01" for y in years], "note_a": [f"zz{k}" for k in range(n)]})
    b = pd.DataFrame({"id": np.arange(n), "http://example.org/property/name": names[::-1], "town": cities[::-1],
                      "year of birth": [f"{y}-01-01" for y in years[::-1]], "extra_b": rng.integers(0, 9, n)})
    return a, b


def test_link_mode_pairs_columns_by_name_and_content():
    import trustlab

    a, b = _two_tables()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = trustlab.resolve({"a": a, "b": b}, link_type="link_only")
    got = {(p["left"], p["right"]): p["how"] for p in r.column_pairing.pairs["b"]}
    assert got[("http://dbpedia.org/ontology#name", "http://example.org/property/name")] == "same normalised name"
    assert got[("City", "town")] == "content"
    assert got[("born", "year of birth")] == "content"
    assert r.column_pairing.unpaired == {"a": ["note_a"], "b": ["extra_b"]}
    compared = {f.column for f in r.field_report.fields}
    assert "note_a" not in compared and "extra_b" not in compared
    assert {"http://dbpedia.org/ontology#name", "City", "born"} <= compared
    assert r.summary()["column_pairing"]["pairs"]["b"]
    # records of b come back with their own values under the paired (first table's) names
    fr = r.to_frame(records=True)
    rows_b = fr[fr["source_dataset"] == "b"].set_index("id")
    assert rows_b.loc[0, "City"] == b.loc[0, "town"]


def test_explicit_column_map_overrides_and_is_validated():
    import trustlab

    a, b = _two_tables(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = trustlab.resolve([a, b], link_type="link_and_dedupe", column_map={"note_a": "extra_b"})
    got = {(p["left"], p["right"]): p["how"] for p in r.column_pairing.pairs["table_1"]}
    assert got[("note_a", "extra_b")] == "given"
    with pytest.raises(ValueError, match="column_map.*nope"):
        trustlab.resolve([a, b], link_type="link_only", column_map={"nope": "town"})


def test_cli_prints_the_pairing_and_takes_column_map(tmp_path, capsys):
    a, b = _two_tables(2)
    pa, pb = tmp_path / "left.csv", tmp_path / "right.csv"
    a.to_csv(pa, index=False)
    b.to_csv(pb, sep="|", index=False)
    assert main(["resolve", str(pa), str(pb), "--link-only", "--json", "--column-map", "note_a=extra_b"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert "columns paired" in cap.err and "left.City  <->  right.town" in cap.err
    pairs = {(p["left"], p["right"]): p["how"] for p in out["column_pairing"]["pairs"]["right"]}
    assert pairs[("note_a", "extra_b")] == "given" and pairs[("City", "town")] == "content"


def test_pairing_helpers():
    from trustlab.er.linking import normalize_column_name, parse_column_map

    assert normalize_column_name("http://dbpedia.org/ontology#name") == "name"
    assert normalize_column_name("https://x.org/property/name") == "name"
    assert normalize_column_name("First_Name") == normalize_column_name("firstName") == "firstname"
    assert parse_column_map("a=b, `x=y`=\"c,d\"") == {"a": "b", "x=y": "c,d"}
    with pytest.raises(ValueError, match="--column-map"):
        parse_column_map("a")
