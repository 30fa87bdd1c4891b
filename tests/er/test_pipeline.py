"""End-to-end entity resolution on bundled data, explanations and bad inputs."""
import numpy as np
import pandas as pd
import pytest

import trustlab
from tests.reference import InlineClient
from trustlab.datasets import ER_DATASETS, load_er_dataset, load_famer_edges
from trustlab.er import cluster_pairs, evaluate, generate_records, infer_fields, resolve


@pytest.fixture(scope="module")
def csv_subset():
    ds = load_er_dataset("csv_example")
    ents = ds.records[ds.truth_col].drop_duplicates().iloc[:250]
    df = ds.records[ds.records[ds.truth_col].isin(ents)].reset_index(drop=True)
    return ds, df


def test_restaurant_end_to_end_beats_threshold():
    ds = load_er_dataset("restaurant")
    r = resolve(ds.records, labels=ds.truth_col, truth=ds.truth_col,
                compare_methods=["connected_components", "hierarchical"], **ds.resolve_kwargs())
    assert r.metrics["f1"] > 0.85
    assert r.metrics["pair_completeness"] > 0.95
    assert set(r.baselines) == {"connected_components", "hierarchical"}
    # metrics are the library's report of the returned labels (checked vs sklearn elsewhere)
    assert r.metrics["f1"] == evaluate(r.entity, ds.records[ds.truth_col])["f1"]
    assert r.n_entities == len(np.unique(r.entity))


def test_csv_example_subset_supervised(csv_subset):
    ds, df = csv_subset
    r = resolve(df, labels=ds.truth_col, truth=ds.truth_col, **ds.resolve_kwargs())
    assert r.metrics["f1"] > 0.9
    assert set(r.clusters.status) <= {"closed_form", "optimal"}
    fr = r.to_frame()
    assert list(fr.columns) == ["Id", "entity_id"] and len(fr) == len(df)


def test_explanations(csv_subset):
    ds, df = csv_subset
    r = resolve(df, labels=ds.truth_col, **ds.resolve_kwargs())
    sizes = np.bincount(r.entity)
    ent = int(np.argmax(sizes))
    e = r.explain_entity(ent)
    assert len(e["records"]) == sizes[ent] and e["status"] in ("optimal", "closed_form")
    inside = (r.entity[r.pairs[:, 0]] == ent) & (r.entity[r.pairs[:, 1]] == ent)
    assert e["within_weight"] == pytest.approx(r.weights[inside].sum())
    rec = e["records"][0]
    x = r.explain_record(rec)
    assert x["alternatives"][0]["assigned"] and x["alternatives"][0]["entity_id"] == ent
    # the chosen entity has at least the weight of any alternative that could take the record
    own = x["alternatives"][0]["weight"]
    assert all(a["weight"] <= own + 1e-9 or a["n_pairs"] < np.sum(r.entity == a["entity_id"])
               for a in x["alternatives"][1:])
    assert set(x["alternatives"][0]["agreed"]) <= set(ds.fields)
    with pytest.raises(KeyError):
        r.explain_record("no-such-id")
    with pytest.raises(KeyError):
        r.explain_entity(10**9)


def test_unsupervised_synthetic_and_top_level_export():
    from trustlab.er.synthetic import SYNTHETIC_BLOCKING, SYNTHETIC_FIELDS

    df = generate_records(1500, random_state=7)
    assert df["rec_id"].is_unique and len(df) == 1500
    r = trustlab.resolve(df, id_col="rec_id", fields=SYNTHETIC_FIELDS, blocking=SYNTHETIC_BLOCKING,
                         truth="entity")
    assert r.metrics["f1"] > 0.9


def test_settlements_famer_graph_directly():
    ds = load_er_dataset("settlements")
    e = load_famer_edges("0.95")
    pos = {v: i for i, v in enumerate(ds.records["id"])}
    pairs = np.stack([e["id_l"].astype(str).map(pos), e["id_r"].astype(str).map(pos)], axis=1)
    res = cluster_pairs(len(ds.records), pairs, e["similarity"].to_numpy() - 0.5, method="connected_components")
    assert evaluate(res.labels, ds.truth)["f1"] > 0.5
    with pytest.raises(ValueError, match="threshold.*must be one of"):
        load_famer_edges("0.7")


def test_datasets_registry():
    with pytest.raises(ValueError, match="name.*must be one of.*febrl1"):
        load_er_dataset("nope")
    assert "febrl1" in ER_DATASETS
    ds = load_er_dataset("patent")
    assert ds.records[ds.truth_col].notna().all() and ds.records[ds.truth_col].nunique() == 102


def test_infer_fields():
    rng = np.random.default_rng(0)  # varied columns: constant ones carry no evidence and are skipped
    df = pd.DataFrame({"id": range(30), "Name": [["ann", "bob", "cy"][i % 3] for i in range(30)],
                       "Phone": [f"555-{rng.integers(1000, 9999)}" for _ in range(30)],
                       "zip": [str(1000 + i % 7) for i in range(30)],
                       "notes": [f"free text note number {i % 10} about this record" for i in range(30)]})
    kinds = {f.column: f.kind for f in infer_fields(df, exclude=["id"])}
    assert kinds == {"Name": "name", "Phone": "phone", "zip": "postcode", "notes": "string", "*": "record",
                     "#": "codes"}


# ------------------------------------------------------------------ bad inputs
@pytest.fixture()
def small():
    return pd.DataFrame({"id": [1, 2, 3], "name": ["ann lee", "anne lee", "bob ray"], "ent": [0, 0, 1]})


def test_missing_id_column(small):
    with pytest.raises(ValueError, match="id column 'rid' not found"):
        resolve(small, id_col="rid", fields={"name": "name"})


def test_duplicate_ids(small):
    small.loc[2, "id"] = 1
    with pytest.raises(ValueError, match="duplicate id"):
        resolve(small, id_col="id", fields={"name": "name"})


def test_absent_field_columns_and_bad_kind(small):
    with pytest.raises(ValueError, match=r"\['surname'\]"):
        resolve(small, id_col="id", fields={"surname": "name"})
    with pytest.raises(ValueError, match="unknown kind"):
        resolve(small, id_col="id", fields={"name": "soundex"})


def test_labels_with_unknown_ids(small):
    with pytest.raises(ValueError, match="not in the records"):
        resolve(small, id_col="id", fields={"name": "name"}, labels={1: 0, 99: 0})
    pl = pd.DataFrame({"l": [1, 7], "r": [2, 3], "m": [1, 0]})
    with pytest.raises(ValueError, match="ids not in the records"):
        resolve(small, id_col="id", fields={"name": "name"}, labels=pl)


def test_empty_and_unreadable_files(tmp_path, small):
    p = tmp_path / "empty.csv"
    p.write_text("")
    with pytest.raises(ValueError, match="empty"):
        resolve(str(p))
    h = tmp_path / "header.csv"
    h.write_text("id,name\n")
    with pytest.raises(ValueError, match="no records"):
        resolve(str(h))
    b = tmp_path / "latin.csv"
    b.write_bytes("id,name\n1,\u201cJos\xe9\u201d\n".encode("cp1252"))  # not safely latin-1
    with pytest.raises(ValueError, match="encoding"):
        resolve(str(b))
    with pytest.raises(FileNotFoundError):
        resolve(str(tmp_path / "nope.csv"))
    with pytest.raises(TypeError, match="DataFrame"):
        resolve(12)


def test_bad_parameters(small):
    with pytest.raises(ValueError, match="method"):
        resolve(small, id_col="id", method="kmeans")
    with pytest.raises(ValueError, match="train_fraction"):
        resolve(small, id_col="id", labels="ent", train_fraction=0)


def test_dask_client_gives_same_entities(csv_subset):
    distributed = pytest.importorskip("distributed")
    ds, df = csv_subset
    local = resolve(df, labels=ds.truth_col, **ds.resolve_kwargs())
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as c:
        remote = resolve(df, labels=ds.truth_col, client=c, **ds.resolve_kwargs())
    assert evaluate(remote.entity, local.entity)["ari"] == 1.0
    assert local.clusters.info["n_solver_nodes"] > 0  # some components did go to the partition layer


def test_parquet_and_gz_input(tmp_path):
    pytest.importorskip("pyarrow")
    df = pd.DataFrame({"id": ["1", "2", "3", "4"], "name": ["ann lee", "anne lee", "bob ray", "bob rae"],
                       "ent": ["a", "a", "b", "b"]})
    pq = tmp_path / "r.parquet"
    df.to_parquet(pq)
    gz = tmp_path / "r.csv.gz"
    df.to_csv(gz, index=False)
    for p in (pq, gz):
        r = resolve(str(p), id_col="id", fields={"name": "name"}, labels="ent", truth="ent", train_fraction=1.0)
        assert r.metrics["f1"] == 1.0
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match="parquet"):
        resolve(str(bad))



# ------------------------------------------------------------------ unusual frames
def _people(n=120):
    from trustlab.er.synthetic import generate_people

    return generate_people(n, random_state=4)


@pytest.mark.parametrize("make", [
    lambda d: d.set_axis(list(range(d.shape[1])), axis=1),  # integer column names
    lambda d: d.astype({"city": "category", "first_name": "category"}),
    lambda d: d.assign(when=pd.date_range("2000-01-01", periods=len(d), tz="Europe/Paris")),
])
def test_unusual_frames_resolve_every_record(make):
    """Non-text column names, categorical and tz-aware columns used to fail deep inside."""
    df = make(_people())
    r = resolve(df)
    assert len(r.to_frame(records=True)) == len(df) and r.n_entities < len(df)


@pytest.mark.parametrize("make,msg", [
    (lambda d: d.set_axis(pd.MultiIndex.from_tuples([("p", c) for c in d.columns]), axis=1), "MultiIndex"),
    (lambda d: d.set_axis(["id", "name", "name", "a", "b", "c", "d"], axis=1),
     r"duplicate column name\(s\) \['name'\]"),
    (lambda d: d.assign(raw=[b"\xff\xfe", b"ok"] * (len(d) // 2)), "bytes that are not UTF-8"),
    (lambda d: d.assign(id=[i // 2 for i in range(len(d))]), r"e\.g\. \[0, 1, 2, 3, 4\]"),
])
def test_unusual_frames_clear_errors(make, msg):
    with pytest.raises(ValueError, match=msg):
        resolve(make(_people()))


def test_series_and_dict_inputs():
    d = _people()
    r = resolve(d["first_name"] + " " + d["surname"])
    assert len(r.to_frame()) == len(d)
    with pytest.raises(TypeError, match="make it a DataFrame first"):
        resolve({c: d[c].tolist() for c in d.columns})


def test_unique_dates_are_dates_not_ids():
    df = pd.DataFrame({"name": [f"n{i % 40}" for i in range(100)], "when": pd.date_range("2000-01-01", periods=100)})
    from trustlab.er.fields import infer_fields_report

    kinds = {f.column: f.kind for f in infer_fields_report(df).fields}
    assert kinds.get("when") == "date"


@pytest.fixture(scope="module")
def big_entities():
    # two entities of 8 records each: components above the enumeration limit (6) go
    # to the partition layer, and so to the client
    names = ["ann lee", "anne lee", "ann lea", "an lee", "ann leee", "anna lee", "ann le", "annn lee",
             "bob ray", "bob rae", "rob ray", "bob raye", "bobb ray", "bob rey", "bo ray", "bob rayy"]
    return pd.DataFrame({"id": range(16), "name": names, "ent": [0] * 8 + [1] * 8})


def _resolve_small(df, **kw):
    return resolve(df, id_col="id", fields={"name": "name"}, labels="ent", truth="ent", train_fraction=1.0, **kw)


def test_client_ships_components_and_matches_local(big_entities):
    local = _resolve_small(big_entities)
    fake = InlineClient()
    remote = _resolve_small(big_entities, client=fake)
    assert fake.submitted >= 1
    assert np.array_equal(remote.entity, local.entity) and remote.clusters.objective == local.clusters.objective


def test_solver_options_scheduler_is_deprecated(big_entities):
    fake = InlineClient()
    with pytest.warns(DeprecationWarning, match=r"solver_options\['scheduler'\]= is deprecated.*"
                                                r"solver_options\['client'\]") as rec:
        _resolve_small(big_entities, solver_options={"scheduler": fake})
    assert fake.submitted >= 1
    assert all(w.filename == __file__ for w in rec if w.category is DeprecationWarning)


def test_client_given_twice_is_an_error(big_entities):
    with pytest.raises(ValueError, match="both as client= and in solver_options"):
        _resolve_small(big_entities, client=InlineClient(), solver_options={"client": InlineClient()})
    with pytest.raises(ValueError, match="got both solver_options\\['client'\\]= and solver_options\\['scheduler'\\]="):
        _resolve_small(big_entities, solver_options={"client": InlineClient(), "scheduler": InlineClient()})
    with pytest.raises(TypeError, match="'client' parameter of resolve must be a dask.distributed.Client"):
        _resolve_small(big_entities, client="tcp://localhost:8786")
