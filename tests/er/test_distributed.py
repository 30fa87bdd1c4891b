"""resolve with every stage on Dask (trustlab.er.distributed) against the local resolve."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import trustlab  # noqa: E402
from trustlab.er import distributed as D  # noqa: E402
from trustlab.er import generate_records  # noqa: E402


@pytest.fixture(scope="module")
def client():
    logging.getLogger("distributed.shuffle._scheduler_plugin").setLevel(logging.ERROR)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _partition(ids, entity) -> set:
    """The entities as a set of frozensets of record ids."""
    s = pd.Series(np.asarray(ids, dtype=object))
    return set(s.groupby(pd.Series(entity).astype(str).to_numpy()).apply(frozenset).tolist())


def _local_partition(res) -> set:
    f = res.to_frame()
    return _partition(f[res.id_col], f["entity_id"])


def _output_partition(res) -> set:
    out = pd.read_parquet(res.output)
    assert out[res.id_col].is_unique and len(out) == res.n_records
    return _partition(out[res.id_col], out["entity_id"])


def test_generated_records_same_entities_as_local(client, tmp_path):
    df = generate_records(2000, random_state=1)
    local = trustlab.resolve(df, id_col="rec_id", truth="entity")
    res = trustlab.resolve(dd.from_pandas(df, npartitions=3), id_col="rec_id", truth="entity", client=client)
    assert isinstance(res, D.DistributedResolution)
    # the same fields, rules, candidate pairs and model (fitted on level counts summed over partitions)
    assert [(f.column, f.kind) for f in res.fields] == [(f.column, f.kind) for f in local.field_report.fields]
    assert res.rules == local.blocking.rules
    assert res.blocking["n_candidate_pairs"] == local.blocking.n_candidate_pairs
    assert res.blocking["n_completed_pairs"] == local.blocking.n_completed_pairs
    np.testing.assert_allclose(res.model.m_, local.model.m_, rtol=1e-9)
    np.testing.assert_allclose(res.model.u_, local.model.u_, rtol=1e-9)
    assert res.model.lambda_ == pytest.approx(local.model.lambda_, rel=1e-9)
    assert _output_partition(res) == _local_partition(local)
    assert res.metrics["f1"] == pytest.approx(local.metrics["f1"])
    assert res.metrics["pair_completeness"] == pytest.approx(local.blocking.pair_completeness)
    assert res.n_entities == local.metrics["n_entities"]


def test_bundled_table_same_entities_as_local(client):
    from trustlab.datasets import load_er_dataset

    ds = load_er_dataset("restaurant")
    kw = {"id_col": ds.id_col, "fields": ds.fields, "blocking": ["token:name", "token:address", "qgram:name:4"],
          "truth": ds.truth_col}
    local = trustlab.resolve(ds.records, **kw)
    res = trustlab.resolve(dd.from_pandas(ds.records, npartitions=2), client=client, **kw)
    assert res.blocking["n_candidate_pairs"] == local.blocking.n_candidate_pairs
    assert _output_partition(res) == _local_partition(local)
    assert res.metrics["f1"] == pytest.approx(local.metrics["f1"])


def test_directory_input_and_stable_entity_ids(client, tmp_path):
    df = generate_records(600, random_state=3).drop(columns=["entity"])
    src = tmp_path / "in"
    src.mkdir()
    for k, part in enumerate(np.array_split(df.sample(frac=1.0, random_state=0), 3)):
        part.to_parquet(src / f"part-{k}.parquet", index=False)
    kw = {"fields": {"given_name": "name", "surname": "name", "date_of_birth": "date", "postcode": "postcode",
                     "soc_sec_id": "string"},
          "blocking": ["key:surname", "key:date_of_birth", "token:given_name"], "id_col": "rec_id"}
    a = trustlab.resolve(str(src), client=client, **kw)  # a directory of parquet files
    b = D.resolve_distributed(dd.from_pandas(df, npartitions=5), client=client, output=tmp_path / "b", **kw)
    local = trustlab.resolve(df, **kw)
    ea = pd.read_parquet(a.output).set_index("rec_id")["entity_id"]
    eb = pd.read_parquet(b.output).set_index("rec_id")["entity_id"]
    # entity ids do not depend on the partitioning or the input order: the first id (in id order) of the entity
    assert ea.sort_index().equals(eb.sort_index())
    ids = ea.index.to_numpy(dtype=object)
    first = pd.Series(ids, index=ids).groupby(ea.to_numpy()).min()
    assert (first.index == first.to_numpy()).all()
    assert _partition(ea.index, ea.to_numpy()) == _local_partition(local)


def test_refuses_what_it_cannot_distribute(client):
    df = generate_records(100, random_state=0)
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(ValueError, match="sorted-neighbourhood"):
        trustlab.resolve(ddf, id_col="rec_id", blocking=["sorted:surname:5"], client=client)
    with pytest.raises(ValueError, match="does not support labels"):
        trustlab.resolve(ddf, id_col="rec_id", labels="entity", client=client)
    with pytest.raises(ValueError, match="id column"):
        trustlab.resolve(ddf.drop(columns=["rec_id"]), client=client)


# ----------------------------------------------------------------------------- the pieces, no cluster


def test_fit_from_counts_is_the_local_fit():
    from trustlab.er.comparisons import FSModel, _distinct_rows_inverse
    from trustlab.er.defaults import random_pairs
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import compare

    df = generate_records(1500, random_state=2).replace("", np.nan)
    fl = [Field("given_name", "name"), Field("surname", "name"), Field("date_of_birth", "date"),
          Field("postcode", "postcode")]
    from trustlab.er.blocking import block

    P = block(df, ["key:surname", "key:date_of_birth"], max_block_size=200)
    only = FSModel(fl).needed_features()
    rp = random_pairs(len(df), np.random.default_rng(0))
    fm, fr = compare(df, P, fl, only=only), compare(df, rp, fl, only=only)
    ref = FSModel(fl).fit(df, P, fm, rp, fr)
    G = ref.levels(fm)
    # counts summed over two halves, as the partitions of the pair stream give them
    parts = [_distinct_rows_inverse(g) for g in (G[: len(G) // 2], G[len(G) // 2:])]
    Gall = np.concatenate([u for u, _ in parts])
    call = np.concatenate([np.bincount(inv, minlength=len(u)) for u, inv in parts]).astype(float)
    Gu, inv = _distinct_rows_inverse(Gall)
    got = FSModel(fl).fit_from_counts(Gu, np.bincount(inv, weights=call), ref.levels(fr), len(df),
                                      tf_tables=ref.tf_tables_, tf_default=ref.tf_default_)
    np.testing.assert_allclose(got.m_, ref.m_, rtol=1e-12)
    np.testing.assert_allclose(got.u_, ref.u_, rtol=1e-12)
    assert got.lambda_ == pytest.approx(ref.lambda_, rel=1e-12)
    np.testing.assert_allclose(got.field_weights(df, P, fm), ref.field_weights(df, P, fm))


def test_features_of_a_subset_with_corpus_equal_the_whole_table():
    """IDF-weighted comparisons of pairs computed on a frame of only their records (rows
    repeated) equal those on the whole table, given the table's document frequencies."""
    from trustlab.er.comparisons import FSModel
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import compare

    df = pd.DataFrame({"name": ["ann lee", "anne lee", "bob ray", "bob rae", "ann ray", "lee bob"] * 20,
                       "code": ["ab1234 x", "ab-1234", "zz999", "zz999", "q12345", "q12345 y"] * 20})
    fl = [Field("name", "tokens"), Field("code", "string"), Field("*", "record"), Field("#", "codes")]
    P = np.array([[0, 1], [2, 3], [4, 5], [0, 6], [1, 8]])
    whole = compare(df, P, fl, only=None)
    import dask

    with dask.config.set(scheduler="synchronous"):
        corpus, _, _ = D._statistics(D._Run(None, False), dd.from_pandas(df, npartitions=3), fl, len(df))
    ctx = D._Context(fl, None, corpus, FSModel(fl), ["name", "code"])
    sub = pd.concat([df.iloc[P[:, 0]], df.iloc[P[:, 1]], df.iloc[P[:, 0]]], ignore_index=True)
    local = np.stack([np.arange(5), np.arange(5) + 5], axis=1)
    got = D._compare(sub, local, ctx)
    assert got.names == whole.names
    np.testing.assert_allclose(got.X, whole.X, equal_nan=True)
    assert not np.allclose(compare(sub, local, fl).X, whole.X, equal_nan=True)  # without the corpus they differ


def test_component_merge_matches_scipy():
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(0)
    n = 400
    E = np.sort(rng.integers(0, n, size=(300, 2)), axis=1)
    E = E[E[:, 0] != E[:, 1]]
    w = rng.normal(size=len(E))
    split = np.array_split(np.arange(len(E)), 4)
    parts = [D._local_roots(pd.DataFrame({"i": E[s, 0], "j": E[s, 1], "w": w[s]})) for s in split]
    nodes, comp = D._merge_roots(parts)
    pos = E[w > 0]
    k, lab = connected_components(sp.coo_matrix((np.ones(len(pos)), (pos[:, 0], pos[:, 1])), shape=(n, n)),
                                  directed=False)
    assert set(nodes.tolist()) == set(np.unique(pos).tolist())
    for a, b in zip(nodes, comp):
        assert lab[a] == lab[b] and b == np.flatnonzero(lab == lab[a]).min()


def test_cli_directory_input_on_a_client(client, tmp_path, capsys):
    import json

    from trustlab.cli import main

    df = generate_records(400, random_state=4)
    src = tmp_path / "in"
    src.mkdir()
    for k, part in enumerate(np.array_split(df, 2)):
        part.to_csv(src / f"part-{k}.csv", index=False)
    out = tmp_path / "out"
    rc = main(["resolve", str(src), "--client", client.scheduler.address, "--id-col", "rec_id", "--truth", "entity",
               "--output", str(out), "--json"])
    assert rc == 0
    got = json.loads(capsys.readouterr().out)
    local = trustlab.resolve(df.astype(str).replace("nan", np.nan), id_col="rec_id", truth="entity")
    assert got["n_records"] == 400 and got["metrics"]["f1"] == pytest.approx(local.metrics["f1"])
    res = pd.read_parquet(out)
    assert _partition(res["rec_id"], res["entity_id"]) == _local_partition(local)
    assert main(["resolve", str(src), "--client", client.scheduler.address, "--labels", "entity"]) == 2
    assert "--labels cannot be combined with a Dask run" in capsys.readouterr().err


@pytest.mark.parametrize("n", [1, 2, 4])
def test_tiny_table_prior_model_same_as_local(n):
    """Fewer than 10 records: the fixed prior model (no TF tables) on both paths."""
    import dask

    df = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["ann lee", "ann lee", "bob ray", "bob rae"]}).iloc[:n]
    kw = {"fields": {"name": "name"}, "blocking": ["token:name"]}
    local = trustlab.resolve(df, **kw)
    with dask.config.set(scheduler="synchronous"):
        res = trustlab.resolve(dd.from_pandas(df, npartitions=2), **kw)
    assert _output_partition(res) == _local_partition(local)
