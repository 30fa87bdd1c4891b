"""resolve with every stage on Dask (trustlab.er.distributed) against the local resolve."""
from __future__ import annotations

import logging
import os
import warnings

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


@pytest.fixture(autouse=True)
def _local_rules_as_distributed(monkeypatch):
    """The distributed path keeps no near neighbours in purged token blocks (its default
    rules are chosen with ``near_neighbours=0``; a ``/K`` rule is refused), so the local runs
    these tests compare it with choose their rules the same way."""
    import trustlab.er.blocking as B

    monkeypatch.setattr(B, "NEAR_NEIGHBOURS", 0)


def test_distributed_default_rules_keep_no_near_neighbours():
    from trustlab.er.blocking import NEAR_NEIGHBOURS, adaptive_blocking_rules
    from trustlab.er.fields import infer_fields_report

    df = generate_records(3000, random_state=1)
    fields = infer_fields_report(df.drop(columns=["entity"])).fields
    plain = adaptive_blocking_rules(df, fields, near_neighbours=0)
    assert NEAR_NEIGHBOURS == 0 and adaptive_blocking_rules(df, fields) == plain
    with_near = adaptive_blocking_rules(df, fields, near_neighbours=3)
    # the local default differs only by the near neighbours of its token rules
    assert [r.split("/")[0].replace("@200", "") for r in with_near] == [r.replace("@200", "") for r in plain]
    assert D._rules(None, df, fields, 200, len(df)) == plain


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
    # every metric of the report, summed on the workers, as the local evaluation gives it
    from trustlab.metrics.clustering import clustering_report

    for key in clustering_report([0], [0]):
        assert res.metrics[key] == pytest.approx(local.metrics[key], rel=1e-9, abs=1e-12), key


def test_evaluation_does_not_gather_the_labels(client, monkeypatch):
    """The metrics against the truth are counted on the workers: the driver never holds
    every record's entity and true label (``evaluate`` on the driver is not called)."""
    import trustlab.er.resolution as R

    def gathered(*a, **k):
        raise AssertionError("the driver evaluated every record's labels")

    monkeypatch.setattr(R, "evaluate", gathered)
    df = generate_records(300, random_state=5)
    res = trustlab.resolve(dd.from_pandas(df, npartitions=2), id_col="rec_id", truth="entity", client=client)
    out = pd.read_parquet(res.output)
    want = trustlab.metrics.clustering.clustering_report(out["entity_id"].astype(str), out["entity"].astype(str))
    assert res.metrics == pytest.approx({**want, "pair_completeness": res.metrics["pair_completeness"]})


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
    with pytest.raises(ValueError, match="nearest-neighbour rules are not distributed"):
        trustlab.resolve(ddf, id_col="rec_id", blocking=["token:surname", "nearest:surname+suburb:3"], client=client)
    with pytest.raises(ValueError, match="does not support labels"):
        trustlab.resolve(ddf, id_col="rec_id", labels="entity", client=client)
    with pytest.raises(ValueError, match="id column"):
        trustlab.resolve(ddf.drop(columns=["rec_id"]), client=client)


# ----------------------------------------------------------------------------- the pieces, no cluster


def test_fit_from_counts_is_the_local_fit():
    from trustlab.er.comparisons import compare
    from trustlab.er.defaults import random_pairs
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel, _distinct_rows_inverse

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
    from trustlab.er.comparisons import compare
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

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
               "--output", str(out), "--json", "--work-dir", str(tmp_path / "wk")])
    assert rc == 0
    assert (tmp_path / "wk").is_dir() and not any((tmp_path / "wk").iterdir())  # used, then emptied
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


# ----------------------------------------------------------------------------- encoded records


def _every_kind_table(n=240, seed=0):
    """Records with a column of each encoded kind (missing and placeholder-free values mixed in)."""
    rng = np.random.default_rng(seed)
    people = generate_records(n, random_state=seed)
    pick = lambda vals: [vals[k] for k in rng.integers(0, len(vals), n)]  # noqa: E731
    df = pd.DataFrame({
        "given_name": people["given_name"], "surname": people["surname"], "address": people["address_1"],
        "note": pick(["red car", "Red  car!", "blue van", None, "car red", "a b c", "red car 500GB drive",
                      "red car 1TB drive", "blue van screen 60 x 80"]),
        "email": pick(["A@x.org", "a@x.org ", "b@y.com", None, "c@z.net"]),
        "postcode": people["postcode"], "code": pick(["AB-12", "ab12", "XY9", None, "zz-77"]),
        "phone": pick(["+1 (555) 123-4567", "5551234567", "555-123-4568", "12", None]),
        "state": people["state"], "model": pick(["TH-50PZ", "th50pz", "WRT54GL", None, "TH-42PZ", "ea650", "EA650-GREEN", "WRT54G"]),
        "price": pick([10.0, 10.5, 99.0, np.nan, 0.0]), "dob": people["date_of_birth"],
        "lat": pick([51.5, 51.51, 48.85, np.nan, 0.0]), "lon": pick([-0.12, -0.13, 2.35, 1.0, 0.0]),
        "soc": people["soc_sec_id"],
    })
    return df


def test_encoded_features_equal_compare_for_every_encoded_kind():
    """The features computed once-encoded records give equal :func:`compare` on the raw records
    (every feature of every encoded kind, missing values included), with the whole table's
    document frequencies; the trusted slow path is comparisons.compare."""

    from trustlab.er.comparisons import compare
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    df = _every_kind_table()
    fl = [Field("given_name", "name"), Field("surname", "name"), Field("address", "address"),
          Field("note", "string"), Field("email", "email"), Field("postcode", "postcode"), Field("code", "code"),
          Field("phone", "phone"), Field("state", "exact"), Field("model", "model"), Field("price", "numeric"),
          Field("dob", "date"), Field("lat,lon", "latlon"), Field("soc", "string"), Field("*", "record"),
          Field("#", "codes")]
    assert {f.kind for f in fl} == set(D.ENCODED_KINDS)
    rng = np.random.default_rng(1)
    P = np.unique(np.sort(rng.integers(0, len(df), size=(3000, 2)), axis=1), axis=0)
    P = P[P[:, 0] != P[:, 1]]
    whole = compare(df, P, fl, only=None)
    tf = FSModel(fl)
    # three record partitions encoded apart, their document frequencies summed (by token hash),
    # then gathered in pieces as a pair partition does
    parts = np.array_split(np.arange(len(df)), 3)
    encs = [D._encode(df.iloc[p].set_axis(p), fl, None, None, tf, None) for p in parts]
    doc_freq = D._sum_doc_counts([D._doc_counts(e) for e in encs], len(df))
    encs = [D._weigh(e, fl, doc_freq) for e in encs]
    want = np.unique(P)
    enc = D._Enc.concat([e.take(want) for e in encs])
    assert enc.raw is None and np.array_equal(enc.idx, want)
    ctx = D._Context(fl, None, {}, tf, list(df.columns))
    loc = np.searchsorted(enc.idx, P)
    got = D._feature_matrix(ctx, len(P), lambda f: D._encoded_features(enc, f, loc[:, 0], loc[:, 1], None))
    assert got.names == whole.names
    np.testing.assert_allclose(got.X, whole.X, rtol=1e-9, atol=1e-12, equal_nan=True)
    # the neighbour levels of model numbers and codes are among them
    assert (whole.X[:, whole.names.index("model:variant")] == 0.5).any()
    assert (whole.X[:, whole.names.index("#:codes")] == 0.25).any()
    # and the pairs that name two sizes (500GB / 1TB) without a shared code
    from trustlab.er.comparisons import quantity_conflict, quantity_lists

    q = quantity_conflict(quantity_lists([df["note"]]), P[:, 0], P[:, 1])
    assert q.any() and (whole.X[q, whole.names.index("#:codes")] != 1.0).any()
    # the record shares counted while encoding are record_share_sums of the raw records
    from trustlab.er.scoring import record_share_sums

    ref = [record_share_sums(df.iloc[p], fl) for p in parts]
    assert [e.shares[1] for e in encs] == [k for _, k in ref]
    for e, (sm, _) in zip(encs, ref):
        assert e.shares[0].keys() == sm.keys()
        np.testing.assert_allclose(list(e.shares[0].values()), list(sm.values()), rtol=1e-12)
    assert np.isnan(got.X).any() and (np.nan_to_num(got.X) > 0.5).any()  # missing values and agreements occur


def test_encoded_take_and_concat_keep_sparse_rows():
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    df = pd.DataFrame({"name": ["ann lee", "", "bob ray ray", "x1234y zz", None, "q99999"]})
    fl = [Field("name", "string"), Field("*", "record"), Field("#", "codes")]
    idx = np.array([3, 5, 8, 9, 12, 20])
    doc_freq = D._sum_doc_counts([D._doc_counts(D._encode(df.set_axis(idx), fl, None, None, FSModel(fl), None))], 6)
    e = D._encode(df.set_axis(idx), fl, None, doc_freq, FSModel(fl), None)
    one = [D._encode(df.iloc[[k]].set_axis(idx[[k]]), fl, None, doc_freq, FSModel(fl), None) for k in range(6)]
    for want in ([5, 9, 20], [3], [8, 12], [4, 7], []):
        got = e.take(np.array(want))
        ref = D._Enc.concat([one[k] for k in range(6) if idx[k] in want] or [e.take(np.zeros(0, np.int64))])
        assert np.array_equal(got.idx, ref.idx)
        for k in ("*", "#"):
            for a, b in zip(got.csr[k], ref.csr[k]):
                np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(got.cols["name:s"], ref.cols["name:s"])


def test_each_record_is_normalised_once(monkeypatch):
    """The string normalisation of a text field runs once per record (when it is encoded),
    not again in every partition of pairs that touches the record."""
    import dask

    seen = []
    orig = D._clean_text  # the encoding's pass of comparisons._text

    def counting(s):
        seen.append(len(s))
        return orig(s)

    monkeypatch.setattr(D, "_clean_text", counting)
    df = generate_records(1500, random_state=5)
    kw = {"id_col": "rec_id", "fields": {"given_name": "name", "surname": "name", "date_of_birth": "date"},
          "blocking": ["token:given_name", "token:surname", "qgram:surname:3"], "complete_components": 0}
    with dask.config.set(scheduler="synchronous"):
        res = D.resolve_distributed(dd.from_pandas(df, npartitions=3), pairs_per_partition=1000, **kw)
    assert res.blocking["pair_partitions"] >= 5
    # three fields normalised by _clean_text, each record at most once (each distinct value of a
    # record partition once), every distinct value at least once
    distinct = sum(df[c].nunique() for c in kw["fields"])
    assert distinct <= sum(seen) <= 3 * len(df)


def test_completed_pairs_encode_only_their_records(monkeypatch):
    """Completing a component reads the encodings of the records of the completed pairs (from
    the encoded record partitions), not every record of the components solved together, and
    encodes nothing again: every record is encoded once, in the encode stage."""
    import dask

    # the calls are kept on the module: a task function sent to a worker (even one in this
    # process) is a copy, with a copy of any list it closes over
    monkeypatch.setattr(D, "_encode_calls", [], raising=False)
    monkeypatch.setattr(D, "_solve_reads", [], raising=False)
    orig, orig_gather, orig_solve = D._encode, D._gather, D._solve_groups

    def counting(part, fields, only, doc_freq, tf_model, truth, *memo):
        D._encode_calls.append((len(part), doc_freq is not None))
        return orig(part, fields, only, doc_freq, tf_model, truth, *memo)

    def solving(*a, **k):
        monkeypatch.setattr(D, "_gather", lambda encs, divs, want: D._solve_reads.append(len(want)) or
                            orig_gather(encs, divs, want))
        try:
            return orig_solve(*a, **k)
        finally:
            monkeypatch.setattr(D, "_gather", orig_gather)

    monkeypatch.setattr(D, "_encode", counting)
    monkeypatch.setattr(D, "_solve_groups", solving)
    df = generate_records(1500, random_state=7)
    kw = {"id_col": "rec_id", "blocking": ["key:surname", "key:date_of_birth"],
          "fields": {"given_name": "name", "surname": "name", "date_of_birth": "date", "*": "record"}}
    with dask.config.set(scheduler="synchronous"):
        res = D.resolve_distributed(dd.from_pandas(df, npartitions=3), **kw)
    completed = res.blocking["n_completed_pairs"]
    assert completed > 0 and D._solve_reads
    assert sum(D._solve_reads) <= 2 * completed < res.components["n_records_in_positive_pairs"]
    assert not [k for k, late in D._encode_calls if late]  # nothing encoded in the solve step
    assert sum(k for k, _ in D._encode_calls) == len(df)  # the encode stage: every record once


def test_per_value_equals_the_function_on_every_row():
    """Normalising each distinct value once gives the element-wise function's result,
    missing cells (None and NaN apart) and non-string columns included."""
    fn = lambda v: v.astype(str).str.upper().to_numpy(dtype=object)  # noqa: E731
    for s in (pd.Series(["a", None, "b", np.nan, "a", "b", "a"]), pd.Series([1, 1.0, "1", None, True], dtype=object),
              pd.Series([np.nan, None]), pd.Series(["x"]), pd.Series([], dtype=object), pd.Series([2.5, 2.5, np.nan])):
        assert list(D._per_value(s, fn)) == list(fn(s))


def test_value_codes_equal_code_tokens():
    """The codes of each value found word by word (digit words only) equal
    :func:`code_tokens` of the value, the trusted slow path, on hostile text."""
    from trustlab.er.kinds import code_tokens

    rng = np.random.default_rng(3)
    pieces = ["TH-50PZ850U", "msmt2g/tq", "ab12/cd", "12345", "1234", "５５５５５", "٣٣٣٣٣", "5th", "21st", "4gb",
              "x1y2",
              "a-b", "WRT54GL,", "(ka-9093)", "road", "99/99999", "1.5.7", "no.12345", "!", "ab1", "", "a/b/c1234"]
    seps = [" ", ",", ";", "  ", "|", "'", "\t", "-", "/", ".", "**", "*"]
    vals = ["".join(rng.choice(pieces) + rng.choice(seps) for _ in range(rng.integers(0, 5))) for _ in range(400)]
    s = pd.Series(vals + [None, np.nan, "TH-50PZ850U"], dtype=object)
    r, h = D._value_tokens(s, D._value_codes)
    ref = code_tokens(s.fillna("").astype(str).reset_index(drop=True))
    want = {(int(k), int(x)) for k, x in zip(ref.index, D._hash(ref.to_numpy(dtype=object)))}
    assert {(int(k), int(x)) for k, x in zip(r, h)} == want and len(want) > 100


def test_hashed_block_keys_give_the_local_candidate_pairs():
    import dask

    from trustlab.er.blocking import block

    df = generate_records(1200, random_state=6)
    rules = ["key:surname", "token:given_name", "qgram:surname:3@20", "key:postcode+state"]
    ref = block(df, rules, max_block_size=30)
    with dask.config.set(scheduler="synchronous"):
        pdf = df.reset_index(drop=True)
        keys = D._key_rows(pdf, rules)
        caps = [30, 30, 20, 30]
        parts = [D._block_pairs(keys[keys["key"] % 4 == k], caps) for k in range(4)]  # as a shuffle splits them
    got = pd.concat(parts).drop_duplicates().sort_values(["i", "j"]).to_numpy()
    np.testing.assert_array_equal(got, ref)


def test_completed_pairs_compared_from_encodings_same_as_local():
    """Pairs a component misses are completed, encoded and scored where the component is
    solved (with the whole-record fields' document frequencies): the local run's entities."""
    import dask

    df = generate_records(1500, random_state=7)
    kw = {"id_col": "rec_id", "truth": "entity", "blocking": ["key:surname", "key:date_of_birth"],
          "fields": {"given_name": "name", "surname": "name", "date_of_birth": "date", "postcode": "postcode",
                     "*": "record", "#": "codes"}}
    local = trustlab.resolve(df, **kw)
    with dask.config.set(scheduler="synchronous"):
        res = D.resolve_distributed(dd.from_pandas(df, npartitions=3), **kw)
    assert res.blocking["n_completed_pairs"] == local.blocking.n_completed_pairs > 0
    assert _output_partition(res) == _local_partition(local)


def test_placeholders_to_missing_once_per_value_equals_records():
    """The per-distinct-value placeholder masking equals records.placeholders_to_missing."""
    from trustlab.er.records import placeholders_to_missing

    rng = np.random.default_rng(4)
    vals = ["N/A", " null ", "Null", "-", "--", "?", "ann", "None", None, np.nan, "", "(NULL)", "x-y", "nan", "<NA>"]
    df = pd.DataFrame({"id": ["N/A", "a", "b", "c", "d", "e"] * 20,
                       "name": [vals[k] for k in rng.integers(0, len(vals), 120)],
                       "num": rng.random(120), "mixed": pd.Series([1, "-", 2.5, None, "ok", "N/A"] * 20, dtype=object),
                       "clean": ["a", "b"] * 60})
    got, ref = D._placeholders_to_missing(df, "id"), placeholders_to_missing(df, "id")
    pd.testing.assert_frame_equal(got, ref)
    assert got["name"].isna().sum() > df["name"].isna().sum() and got["id"].eq("N/A").any()


def test_tf_tables_of_rows_equal_those_of_the_indexed_counts():
    """``_tf_tables_of_rows`` against ``_tf_tables`` of the (field, value) index: rows of the
    fields interleaved, ties of counts (order kept), counts of 1 left out, a field with no
    rows, no rows at all."""
    from trustlab.er.kinds import Field

    rng = np.random.default_rng(2)
    m = 3000
    got = pd.DataFrame({"f": rng.choice(np.array([0, 1, 3], np.int16), m),
                        "tok": pd.Series([f"v{k}" for k in rng.permutation(m)], dtype=object),
                        "n": rng.integers(1, 6, m).astype(np.int64)})
    fl = [Field(c, "name") for c in ("a", "b", "c", "d")]
    ref = D._tf_tables(D._counts_series(got, D._counts_meta()), fl, 5000)
    fast = D._tf_tables_of_rows(got, fl, 5000)
    assert fast == ref and ref[0]["c"] == {} and len(ref[0]["a"]) > 500
    assert all(list(fast[0][c].items()) == list(ref[0][c].items()) for c in ref[0])
    assert D._tf_tables_of_rows(None, fl, 10) == D._tf_tables(D._counts_series(None, D._counts_meta()), fl, 10)


def test_tf_tables_from_the_encodings_equal_a_pass_over_the_records():
    """The TF tables summed from the encoded partitions' value counts equal those of a pass
    of their own over the records (the trusted path), and the frequencies set afterwards
    equal those of records encoded with the tables known."""
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    df = generate_records(900, random_state=8)
    fl = [Field("given_name", "name"), Field("surname", "name"), Field("postcode", "postcode"),
          Field("state", "exact"), Field("street_number", "exact")]
    _, ref_tables, ref_default = D._statistics(D._Run(None, False), dd.from_pandas(df, npartitions=3), fl, len(df))
    parts = np.array_split(np.arange(len(df)), 3)
    encs = [D._encode(df.iloc[p].set_axis(p), fl, None, None, FSModel(fl), None) for p in parts]
    tf_fields = [fl[c] for c in FSModel(fl)._tf_fields()]
    counts = D._add_counts(*[e.tf_counts for e in encs]).set_index(["f", "tok"])["n"]
    tables, default = D._tf_tables(counts, tf_fields, len(df))
    assert tables == ref_tables and default == ref_default and any(len(t) > 5 for t in tables.values())
    # the encode stage's tables from the summed rows (no index over them): the same entries, in the same order
    fast = D._tf_tables_of_rows(D._add_counts(*[e.tf_counts for e in encs]), tf_fields, len(df))
    assert fast == (tables, default)
    assert all(list(fast[0][c].items()) == list(tables[c].items()) for c in tables)
    model = FSModel(fl)
    model.tf_tables_, model.tf_default_ = tables, default
    for p, e in zip(parts, encs):
        got = D._weigh(e, fl, None, model)
        want = D._encode(df.iloc[p].set_axis(p), fl, None, None, model, None)
        assert not any(k.startswith("tfkey") for k in got.cols)
        assert {k for k in got.cols if k.startswith("tf")} == {k for k in want.cols if k.startswith("tf")} != set()
        for k in want.cols:
            np.testing.assert_array_equal(got.cols[k], want.cols[k])


# ----------------------------------------------------------------------------- memory bounded per worker


def test_encodings_on_disk_give_the_records_taken_from_memory(tmp_path):
    """An encoded partition written to the work directory (strings as memory-mapped Arrow,
    numbers as memory-mapped arrays, anything else pickled), then weighed there (only the
    arrays the weights change rewritten), gives for any selection of records exactly the
    arrays of the encoding weighed and taken in memory (the trusted path), and reads back whole
    unchanged."""
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    df = _every_kind_table()
    fl = [Field("given_name", "name"), Field("address", "address"), Field("email", "email"),
          Field("phone", "phone"), Field("state", "exact"), Field("price", "numeric"), Field("dob", "date"),
          Field("lat,lon", "latlon"), Field("*", "record"), Field("#", "codes"), Field("note", "tokens")]
    idx = np.arange(len(df)) * 3 + 7
    enc = D._encode(df.set_axis(idx), fl, None, None, FSModel(fl), "state")
    enc.cols["odd"] = np.array([None if k % 3 else f"v{k}" for k in range(len(df))], dtype=object)  # not all str
    tf_fields = [fl[c] for c in FSModel(fl)._tf_fields()]
    assert tf_fields and any(k.startswith("tfkey") for k in enc.cols)
    model = FSModel(fl)
    model.tf_tables_, model.tf_default_ = D._tf_tables(D._add_counts(enc.tf_counts).set_index(["f", "tok"])["n"],
                                                       tf_fields, len(df))
    doc_freq = D._sum_doc_counts([D._doc_counts(enc)], len(df))
    ref = D._weigh(enc, fl, doc_freq, model)
    h0 = D._EncFile.save(enc, str(tmp_path / "e"))
    h0.weigh(fl, doc_freq, model)
    h = h0.weigh(fl, doc_freq, model)  # weighing again (a task run twice) does not weigh twice
    files = {p.name for p in (tmp_path / "e").iterdir()}
    assert {".npy", ".pkl"} <= {os.path.splitext(f)[1] for f in files}
    assert any(f.endswith(".o.npy") for f in files) and any(f.endswith(".d.npy") for f in files)  # strings
    assert any(f.startswith("w") for f in files) and any(f.startswith("c") for f in files)  # rewritten, kept
    rng = np.random.default_rng(0)
    for want in (idx[::4], np.sort(rng.choice(idx, 17, replace=False)), np.array([idx[0], idx[-1] + 1]), idx[:0]):
        a, b = h.take(want), ref.take(want)
        assert np.array_equal(a.idx, b.idx) and a.cols.keys() == b.cols.keys() and a.csr.keys() == b.csr.keys()
        for k in b.cols:
            assert type(a.cols[k]) is np.ndarray and a.cols[k].dtype == b.cols[k].dtype
            np.testing.assert_array_equal(a.cols[k], b.cols[k])
        for k in b.csr:
            for x, y in zip(a.csr[k], b.csr[k], strict=True):
                np.testing.assert_array_equal(x, y)
        pd.testing.assert_frame_equal(a.raw, b.raw)
    whole = h.load()
    assert whole.cols.keys() == ref.cols.keys()
    for k in ref.cols:
        np.testing.assert_array_equal(whole.cols[k], ref.cols[k])
    for k, arrays in h0.load().csr.items():  # the unweighed encoding is still there, unchanged
        for x, y in zip(arrays, enc.csr[k], strict=True):
            np.testing.assert_array_equal(x, y)


def test_string_files_and_kept_parts_read_back_what_was_written(tmp_path, monkeypatch):
    """Strings written as an Arrow array's buffers (``_save_array``) read back equal, whole
    and taken (empty strings, non-ASCII, one value, all empty); an encoding opened again in
    the same process (its description, pickled arrays and headers kept: ``_file_parts``)
    gives what a fresh open gives, and one written again at the same path is read again."""
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    for vals in (["", "ä€𝄞 x", "b", "", "longer value " * 40], ["only"], ["", "", ""]):
        a = np.array(vals, dtype=object)
        assert D._save_array(a, str(tmp_path / "s")) == "str"
        whole = D._open_array(str(tmp_path / "s"), "str", mmap=False)
        assert whole.dtype == object and whole.tolist() == vals
        got = D._open_array(str(tmp_path / "s"), "str", mmap=True)[np.array([len(vals) - 1, 0])]
        assert got.tolist() == [vals[-1], vals[0]] and all(type(x) is str for x in got)
    df = _every_kind_table()
    fl = [Field("given_name", "name"), Field("address", "address"), Field("state", "exact"),
          Field("*", "record"), Field("#", "codes")]
    encs = [D._encode(df.iloc[k::2].reset_index(drop=True).set_axis(np.arange(len(df[k::2])) * 2 + k), fl, None,
                      None, FSModel(fl), None) for k in (0, 1)]
    want = np.arange(0, 2 * len(df), 3)
    for enc in encs:  # the same path written twice in this process: the second encoding read back
        h = D._EncFile.save(enc, str(tmp_path / "e"))
        for _ in range(2):  # the second open from the kept parts
            a, b = h.take(want), enc.take(want)
            assert np.array_equal(a.idx, b.idx) and a.cols.keys() == b.cols.keys()
            for k in b.cols:
                assert a.cols[k].dtype == b.cols[k].dtype and a.cols[k].tolist() == b.cols[k].tolist(), k
            for k in b.csr:
                assert all(np.array_equal(x, y) for x, y in zip(a.csr[k], b.csr[k], strict=True)), k
    assert any(k[0] == str(tmp_path / "e" / "meta.pkl") for k in D._PARTS)
    monkeypatch.setattr(D, "_PARTS_MAX", 2)
    for k in range(4):
        D._EncFile.save(encs[k % 2], str(tmp_path / f"f{k}")).take(want)
    assert len(D._PARTS) == 2  # bounded
    monkeypatch.setattr(D, "_PICKLES_MAX_BYTES", 1)  # the pickled arrays by bytes: only the last one kept
    for k in range(3):
        D._EncFile.save(encs[k % 2], str(tmp_path / f"g{k}")).take(want)
    assert len(D._PICKLES) == 1 and str(tmp_path / "g2") in next(iter(D._PICKLES))[0]


def test_kept_parts_cover_every_partition_of_a_large_run(tmp_path, monkeypatch):
    """A pair partition opens every encoded record partition it touches; at 10M records there
    are 80 of them (and as many weighed descriptions). With fewer kept than that, each open in a
    stage read every header and pickled array again (~10 ms an open; stop 53). The default
    bounds keep 100 small encodings, and a second round of opens reads no file again."""
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    monkeypatch.setattr(D, "_PARTS", {})
    monkeypatch.setattr(D, "_PICKLES", {})
    df = _every_kind_table()
    fl = [Field("given_name", "name"), Field("state", "exact"), Field("#", "codes")]
    enc = D._encode(df, fl, None, None, FSModel(fl), None)
    hs = [D._EncFile.save(enc, str(tmp_path / f"e{k}")) for k in range(100)]
    want = np.arange(0, len(df), 2)
    first = [h.take(want) for h in hs]
    assert len(D._PARTS) == 100 and len(D._PICKLES) >= 100
    read = []
    real = pd.read_pickle
    monkeypatch.setattr(D.pd, "read_pickle", lambda *a, **k: read.append(a[0]) or real(*a, **k))
    again = [h.take(want) for h in hs]
    assert read == []
    for a, b in zip(first, again):
        assert all(a.cols[k].tolist() == b.cols[k].tolist() for k in a.cols)


def test_workers_hold_no_collection_between_stages(client, tmp_path, monkeypatch):
    """Each stage's partitions (records, match view, encodings, pair stream, levels, scores,
    solved components) go to files in the work directory, removed when no later stage reads
    them: at the end of every stage the workers hold (Dask-managed) only the small shared
    objects, not the records or their encodings, and nothing is left on disk. The old code
    kept the records, the match view and the encodings persisted in the workers' memory. The
    id sort cuts the table into partitions of about RECORDS_PER_PARTITION records whatever the
    input's partitions (here one)."""
    written = {}
    orig = D._Work.remove

    def spy(self, stage=None):
        for st in [stage] if stage is not None else os.listdir(self.root):
            if os.path.isdir(os.path.join(self.root, st)):
                written[st.rstrip("0123456789/").split("/")[-1]] = len(os.listdir(os.path.join(self.root, st)))
        return orig(self, stage)

    monkeypatch.setattr(D._Work, "remove", spy)
    monkeypatch.setattr(D, "RECORDS_PER_PARTITION", 400)
    df = generate_records(1500, random_state=2)
    res = D.resolve_distributed(dd.from_pandas(df, npartitions=1), client=client, id_col="rec_id", truth="entity",
                                work_dir=tmp_path / "work")
    assert res.metrics["f1"] > 0.9  # the entities equal the local run's: test_generated_records_same_entities_as_local
    assert {"raw", "mview", "keys", "blocks", "enc", "scored", "solved"} <= written.keys()
    assert 3 <= written["raw"] <= 5 and written["enc"] == written["mview"] == written["raw"]
    assert list((tmp_path / "work").iterdir()) == []
    data_mb = res.blocking["encoded_mb"] + df.memory_usage(deep=True).sum() / 2**20
    for stage in ("encode", "blocking", "comparisons", "model", "scoring", "clustering"):
        held = sum(res.memory_mb[stage]["managed"])
        assert held < 0.2 * data_mb, (stage, held, data_mb)


@pytest.mark.parametrize("per_record", [1, 0.2])
def test_completion_beyond_the_pair_budget_same_as_local(client, monkeypatch, per_record):
    """The candidate pairs fill the (shrunk) pair budget: the small positive components are
    still completed, by the same rule in both paths (``completion_pair_budget``: at least
    ``COMPLETION_PAIRS_PER_RECORD`` pairs per record outside the budget), so the entities are
    the local run's. With 0.2 per record (400 pairs for 2,000 records; 551 in all) the 105
    components of 3 records and 14 of the 31 of 4 fit (ties by first record, in the canonical
    order both paths share): both complete the same ones. The old code completed
    nothing locally (the budget's remainder) and every small component on Dask: 48 entities
    differed."""
    import trustlab.er.defaults as Dd
    import trustlab.er.scoring as S

    monkeypatch.setattr(Dd, "MAX_CANDIDATE_BYTES", 1000 * 600)  # about 1,000 pairs; the rules make 3,667
    monkeypatch.setattr(S, "COMPLETION_PAIRS_PER_RECORD", per_record)
    df = generate_records(2000, random_state=1)
    kw = {"id_col": "rec_id", "truth": "entity", "blocking": ["key:soc_sec_id", "key:surname"]}
    local = trustlab.resolve(df, **kw)
    assert local.blocking.n_candidate_pairs > local.blocking.pair_budget
    res = trustlab.resolve(dd.from_pandas(df, npartitions=3), client=client, **kw)
    completed = res.blocking["n_completed_pairs"]
    assert completed == local.blocking.n_completed_pairs
    assert (completed == 20) if per_record == 1 else (0 < completed < 20)
    assert _output_partition(res) == _local_partition(local)


def test_completion_cutoff_is_the_brute_force_choice():
    """completion_cutoff: the smallest components first (ties by first record) while their
    pairs fit, against adding them one by one; _component_completion completes exactly those,
    with the budget and with the cutoff and the records' positions in a larger table (as a
    distributed partition does)."""
    from trustlab.er.scoring import _component_completion, completion_cutoff

    rng = np.random.default_rng(0)
    for _ in range(200):
        sizes = rng.integers(1, 12, size=rng.integers(0, 15))
        limit, budget = int(rng.integers(0, 14)), int(rng.integers(0, 120))
        starts = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        firsts = starts[:-1]
        chosen, spent = set(), 0  # brute force: in (size, first) order, while the pairs fit
        for q in sorted(range(len(sizes)), key=lambda q: (sizes[q], firsts[q])):
            z = int(sizes[q])
            if 3 <= z <= limit:
                if spent + z * (z - 1) // 2 > budget:
                    break
                spent += z * (z - 1) // 2
                chosen.add(q)
        cut = completion_cutoff(sizes, firsts, limit, budget)
        got = {q for q in range(len(sizes)) if 3 <= sizes[q] <= limit and (sizes[q], firsts[q]) <= cut}
        assert got == chosen, (sizes, limit, budget, cut)
        # paths of each size: the completion adds the missing pairs of the chosen components
        pairs = np.array([(a, a + 1) for s0, z in zip(firsts, sizes) for a in range(s0, s0 + z - 1)],
                         np.int64).reshape(-1, 2)
        done = sum(int(sizes[q]) * (int(sizes[q]) - 1) // 2 - (int(sizes[q]) - 1) for q in chosen)
        n = int(starts[-1])
        extra = _component_completion(n, pairs, np.ones(len(pairs)), limit, whole_pairs=budget)
        assert len(extra) == done
        # the same records at positions 3 * k + 1 of a larger table: the same cutoff, taken from it
        pos = 3 * np.arange(n, dtype=np.int64) + 1
        cut3 = completion_cutoff(sizes, pos[np.minimum(firsts, max(n - 1, 0))] if n else firsts, limit, budget)
        extra3 = _component_completion(n, pairs, np.ones(len(pairs)), limit, cutoff=cut3, positions=pos)
        assert np.array_equal(extra3, extra)


_FAULTS = """
import resource, sys
import numpy as np
from trustlab.er.distributed import _malloc_keep

def faults():
    r = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for k in range(100):  # 3.6 MB temporaries, made and freed as a comparison task does
        a = np.empty(450_000)
        a[:] = k
        b = a * 2
        c = a + b
        del a, b, c
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r

faults()
before = faults()
on = _malloc_keep(True)
kept = faults()
off = _malloc_keep(False)
after = faults()
print(on, off, before, kept, after)
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc malloc settings")
def test_malloc_keep_stops_the_page_faults_of_dask_workers_trim_setting():
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which fixes glibc's mmap
    threshold at 128 KiB: every freed numpy temporary is unmapped and the next one faults its
    pages in again (~880 faults per 3.6 MB array). ``_malloc_keep(True)`` lets the process reuse
    them (almost no faults), ``_malloc_keep(False)`` puts the setting back; without the
    variable it does nothing (the process's own malloc settings are left alone)."""
    import platform
    import subprocess
    import sys

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc malloc settings")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    base = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    base["PYTHONPATH"] = root + os.pathsep + base.get("PYTHONPATH", "")

    def run(env):
        out = subprocess.run([sys.executable, "-c", _FAULTS], env=env, capture_output=True, text=True, check=True)
        on, off, *n = out.stdout.split()
        return on == "True", off == "True", [int(x) for x in n]

    on, off, (before, kept, after) = run({**base, "MALLOC_TRIM_THRESHOLD_": "65536"})
    assert on and off
    assert before > 100 * 1000 and kept < 100 * 50 and after > 100 * 1000, (before, kept, after)
    on, off, _ = run(base)
    assert not on and not off


@pytest.mark.parametrize("keep", [False, True])
def test_workers_profiler_paused_during_the_run_and_resumed(client, monkeypatch, keep):
    """The workers' statistical profiler is paused while a run lasts (``worker_profile=False``,
    the default) and running again after it; with ``worker_profile=True`` it runs throughout.
    The entities do not depend on it."""
    def running():
        return sorted(client.run(lambda dask_worker: dask_worker.periodic_callbacks["profile"].is_running()).values())

    assert running() == [True, True]
    seen = []
    orig = D._resolve

    def spy(*a, **k):
        seen.append(running())
        return orig(*a, **k)

    monkeypatch.setattr(D, "_resolve", spy)
    df = generate_records(300, random_state=1)
    res = D.resolve_distributed(df, client=client, id_col="rec_id", truth="entity", worker_profile=keep)
    assert seen == [[keep, keep]] and running() == [True, True]
    assert res.metrics["f1"] > 0.9


def test_gc_freeze_freezes_once_and_thaws():
    """``_gc_freeze(True)`` freezes the objects of the process once (not where the collector is
    off, nor over a freeze of the caller's own), ``_gc_freeze(False)`` thaws them."""
    import gc

    assert gc.get_freeze_count() == 0
    try:
        assert D._gc_freeze(True) and gc.get_freeze_count() > 0
        assert not D._gc_freeze(True)  # frozen already (a second run in the process, or the caller)
    finally:
        assert D._gc_freeze(False)
    assert gc.get_freeze_count() == 0
    gc.disable()
    try:
        assert not D._gc_freeze(True) and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_workers_and_driver_frozen_during_the_run_and_thawed(client, monkeypatch):
    """While a run lasts the objects the workers and the driver held when it started are out
    of the collector's sight (``gc.freeze``), and back after it; the entities do not depend on
    it (the same as a run in one process with the collector as it was)."""
    import gc

    def counts():
        return sorted(client.run(lambda: __import__("gc").get_freeze_count() > 0).values()) + \
            [gc.get_freeze_count() > 0]

    assert counts() == [False, False, False]
    seen = []
    orig = D._resolve

    def spy(*a, **k):
        seen.append(counts())
        return orig(*a, **k)

    monkeypatch.setattr(D, "_resolve", spy)
    df = generate_records(300, random_state=1)
    res = D.resolve_distributed(df, client=client, id_col="rec_id", truth="entity")
    assert seen == [[True, True, True]] and counts() == [False, False, False]
    monkeypatch.setattr(D, "_resolve", orig)
    import dask

    with dask.config.set(scheduler="synchronous"):
        gc.freeze()  # (a caller's own freeze: left as it is)
        try:
            ref = D.resolve_distributed(df, id_col="rec_id", truth="entity")
            assert gc.get_freeze_count() > 0
        finally:
            gc.unfreeze()
    a = pd.read_parquet(res.output).set_index("rec_id")["entity_id"].astype(str)
    b = pd.read_parquet(ref.output).set_index("rec_id")["entity_id"].astype(str)
    assert a.sort_index().equals(b.sort_index())


def test_rows_by_row_and_hash_are_lexsorts_order():
    """``_by_row_and_hash`` is ``np.lexsort((h, rec))``: ties kept in their order, repeated
    (row, hash) pairs, hashes at both ends of uint64, rows given in any order, none or one."""
    rng = np.random.default_rng(5)
    top = np.uint64(2**64 - 1)
    for n, nh in [(0, 1), (1, 1), (50, 3), (2000, 40), (5000, 5000)]:
        rec = rng.integers(0, max(n // 7, 1), n).astype(np.int64)
        pool = np.r_[np.array([0, 1, top, top - np.uint64(1)], np.uint64), rng.integers(0, 2**64, nh, dtype=np.uint64)]
        h = pool[rng.integers(0, pool.size, n)]
        got = D._by_row_and_hash(rec, h)
        assert np.array_equal(got, np.lexsort((h, rec))), n
    # a product of rows and distinct hashes beyond int64: lexsort itself
    rec = np.array([2**61, 3, 2**61, 0], np.int64)
    h = np.array([5, 9, 1, 5], np.uint64)
    assert np.array_equal(D._by_row_and_hash(rec, h), np.lexsort((h, rec)))


def test_text_kind_features_of_a_subset_with_corpus_equal_the_whole_table():
    """The ``text`` kind's 3-gram TF-IDF (a table's only text field) computed on the records of
    some pairs, given the whole table's 3-gram document frequencies, equals the local one."""
    from trustlab.er.comparisons import compare
    from trustlab.er.kinds import Field
    from trustlab.er.scoring import FSModel

    df = pd.DataFrame({"org": ["General Electric Company", "General Electric Co", "General Motors Company",
                               "IBM Corp", "I.B.M. Corporation", "Stanford University"] * 20})
    fl = [Field("org", "text")]
    P = np.array([[0, 1], [0, 2], [3, 4], [0, 6], [1, 8]])
    whole = compare(df, P, fl, only=None)
    import dask

    with dask.config.set(scheduler="synchronous"):
        corpus, _, _ = D._statistics(D._Run(None, False), dd.from_pandas(df, npartitions=3), fl, len(df))
    assert ("char3", "org") in corpus
    ctx = D._Context(fl, None, corpus, FSModel(fl), ["org"])
    sub = pd.concat([df.iloc[P[:, 0]], df.iloc[P[:, 1]]], ignore_index=True)
    local = np.stack([np.arange(5), np.arange(5) + 5], axis=1)
    got = D._compare(sub, local, ctx)
    assert got.names == whole.names and "org:char3" in got.names
    np.testing.assert_allclose(got.X, whole.X, equal_nan=True)


def test_one_text_column_same_entities_as_local(client):
    """A table of one organisation-name column (the ``text`` kind, its 3-gram document
    frequencies summed over the partitions): the same fields, model and entities as local."""
    rng = np.random.default_rng(4)
    base = [f"The {a} {b} Research and Development Laboratories of {c}" for a in
            ("General", "United", "Acme", "Boston", "Pacific", "Northern", "Western", "Allied")
            for b in ("Electric", "Motors", "Scientific", "Dynamics", "Chemical", "Optical", "Polymer")
            for c in ("Ohio", "Texas", "Maine")]
    vals = []
    for k, v in enumerate(base):
        for _ in range(int(rng.integers(1, 4))):
            w = list(v)
            if rng.random() < 0.4:
                p = int(rng.integers(1, len(w) - 1))
                w[p], w[p + 1] = w[p + 1], w[p]
            vals.append(("".join(w), k))
    df = pd.DataFrame(vals, columns=["organization", "entity"]).reset_index(names="rid")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one field, a few hundred records: EM merges little
        local = trustlab.resolve(df, id_col="rid", truth="entity")
    assert [(f.column, f.kind) for f in local.field_report.fields] == [("organization", "text")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve(dd.from_pandas(df, npartitions=3), id_col="rid", truth="entity", client=client)
    assert [(f.column, f.kind) for f in res.fields] == [("organization", "text")]
    np.testing.assert_allclose(res.model.m_, local.model.m_, rtol=1e-9)
    np.testing.assert_allclose(res.model.u_, local.model.u_, rtol=1e-9)  # levels cut on the same 3-gram IDF
    assert _output_partition(res) == _local_partition(local)


def test_frames_written_without_the_pickle_memo_read_back_equal(tmp_path):
    """``_save_frame`` (the pickler's fast mode) and ``_load_frame`` round-trip every dtype,
    the index and missing values of a partition exactly, strings held several times
    included; an object that refers to itself is written with the memo instead."""
    s = "shared string"
    df = pd.DataFrame({"a": pd.Series([s, s, None, np.nan, "x", 3, 2.5], dtype=object),
                       "b": np.arange(7, dtype=np.int64), "c": np.linspace(0, 1, 7),
                       "d": pd.Categorical(list("abcabca")), "e": pd.array(["p", None, "q", "p", "r", "s", "t"],
                                                                            dtype="string"),
                       "f": pd.date_range("2020-01-01", periods=7, tz="UTC"), "g": [(), ("k1",), (), ("a", "b"),
                                                                                   (), (), ()]})
    df.index = pd.Index(np.arange(7, dtype=np.int64) + 100, name="_idx")
    path = str(tmp_path / "sub" / "f.pkl")
    assert D._save_frame(df, path) == 7
    got = D._load_frame(path)
    assert got.equals(df) and got.index.equals(df.index) and got.index.name == "_idx"
    assert (got.dtypes == df.dtypes).all() and got["a"].tolist()[:2] == [s, s] and got["a"].isna().sum() == 2
    loop: list = [1]
    loop.append(loop)
    D._dump_fast(loop, str(tmp_path / "loop.pkl"))
    back = pd.read_pickle(str(tmp_path / "loop.pkl"))
    assert back[0] == 1 and back[1] is back


def test_numbers_in_text_same_entities_as_local(client):
    """A first name and one free text "surname year month day" (the ``numbers`` comparison of
    the numbers inside the text, whose records travel as the text's raw columns): the same
    fields, model and entities as local."""
    rng = np.random.default_rng(5)
    rows = []
    for e in range(150):
        r = [str(rng.choice(["anna", "bernd", "carla", "dieter", "eva", "frank"])),
             str(rng.choice(["meier", "bauer", "fuchs", "weber", "koch", "wolf", "haas"])),
             int(rng.integers(1920, 2005)), int(rng.integers(1, 13)), int(rng.integers(1, 29))]
        rows.append((e, r))
        if rng.random() < 0.3:
            r2 = [v + "x" if k < 2 and rng.random() < 0.25 else v + 1 if k >= 2 and rng.random() < 0.25 else v
                  for k, v in enumerate(r)]
            rows.append((e, r2))
    df = pd.DataFrame({"rid": np.arange(len(rows)), "entity": [e for e, _ in rows],
                       "name": [r[0] for _, r in rows],
                       "description": [f"{r[1]} {r[2]} {r[3]} {r[4]}" for _, r in rows]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = trustlab.resolve(df, id_col="rid", truth="entity")
        res = trustlab.resolve(dd.from_pandas(df, npartitions=3), id_col="rid", truth="entity", client=client)
    assert ("~", "numbers") in [(f.column, f.kind) for f in local.field_report.fields]
    assert [(f.column, f.kind) for f in res.fields] == [(f.column, f.kind) for f in local.field_report.fields]
    np.testing.assert_allclose(res.model.m_, local.model.m_, rtol=1e-9)
    np.testing.assert_allclose(res.model.u_, local.model.u_, rtol=1e-9)
    assert _output_partition(res) == _local_partition(local)


def test_records_made_python_strings_once(monkeypatch, tmp_path):
    """A parquet input is counted from its metadata and sampled and sorted as read: its text
    becomes Python strings (``_as_object``) for the sample's rows and once for every record
    (when the sorted partition is written; the sort key, one column, before the shuffle), not
    in a count, a sample and a sort pass over every record each (3 x records x columns before
    stop 52). The entities are those of the same input made Python strings as it is read
    (the path before stop 52)."""
    import dask

    df = generate_records(1200, random_state=4)
    src = tmp_path / "in"
    src.mkdir()
    for k, part in enumerate(np.array_split(df.sample(frac=1.0, random_state=1), 4)):
        part.to_parquet(src / f"part-{k}.parquet", index=False)
    cells = []
    orig = D._as_object

    def counting(part):
        cells.append(part.shape[0] * part.shape[1])
        return orig(part)

    monkeypatch.setattr(D, "_as_object", counting)
    kw = {"id_col": "rec_id", "fields": {"given_name": "name", "surname": "name", "date_of_birth": "date"},
          "blocking": ["key:surname", "token:given_name"], "sample_size": 300, "truth": "entity"}
    with dask.config.set(scheduler="synchronous"):
        res = D.resolve_distributed(str(src), output=tmp_path / "a", **kw)
    n, c = len(df), df.shape[1]
    assert res.n_records == n
    # the sample (about 300 records, all columns), the sort keys (one column), the sorted records once
    assert n * c <= sum(cells) <= n * c + n + 2 * 300 * c
    monkeypatch.setattr(D, "_as_object", orig)
    source = D._source
    monkeypatch.setattr(D, "_source", lambda r, k: (s := source(r, k)).map_partitions(orig, meta=orig(s._meta)))
    with dask.config.set(scheduler="synchronous"):
        ref = D.resolve_distributed(str(src), output=tmp_path / "b", **kw)
    a = pd.read_parquet(res.output).set_index("rec_id")["entity_id"].sort_index()
    b = pd.read_parquet(ref.output).set_index("rec_id")["entity_id"].sort_index()
    assert a.equals(b)
