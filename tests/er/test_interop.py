"""Interop: Splink, recordlinkage, pyarrow and dedupe outputs clustered as they come."""
import numpy as np
import pandas as pd
import pytest

from trustlab.er import cluster_dedupe_pairs, cluster_splink_predictions, evaluate, generate_records
from trustlab.er.interop import read_scored_pairs
from trustlab.metrics.clustering import pairwise_precision_recall_f1


def _cc_reference(ids, pairs, prob, thr):
    """Connected components of pairs with prob > thr, by networkx (trusted slow path)."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(ids)
    g.add_edges_from((a, b) for (a, b), p in zip(pairs, prob) if p > thr)
    lab = {}
    for k, comp in enumerate(nx.connected_components(g)):
        for x in comp:
            lab[x] = k
    return [lab[x] for x in ids]


def _same_partition(a, b):
    return pairwise_precision_recall_f1(np.asarray(a), np.asarray(b)) == (1.0, 1.0, 1.0) and \
        len(set(a)) == len(set(b))


def test_formats_agree_and_keep_singletons():
    rng = np.random.default_rng(3)
    ids = [f"r{i}" for i in range(40)]
    pairs = [tuple(rng.choice(ids, 2, replace=False)) for _ in range(60)]
    prob = rng.uniform(0, 1, len(pairs)).round(3)
    frame = pd.DataFrame({"unique_id_l": [a for a, _ in pairs], "unique_id_r": [b for _, b in pairs],
                          "match_probability": prob})
    ref = _cc_reference(ids, pairs, prob, 0.6)
    pa = pytest.importorskip("pyarrow")
    mi = pd.MultiIndex.from_tuples(pairs)
    inputs = {
        "pandas": frame,
        "pyarrow": pa.Table.from_pandas(frame),
        "rl_series": pd.Series(prob, index=mi),
        "rl_frame": pd.DataFrame({"p": prob}, index=mi),
        "dedupe_list": [((a, b), p) for (a, b), p in zip(pairs, prob)],
        "dedupe_array": np.array([((a, b), p) for (a, b), p in zip(pairs, prob)],
                                 dtype=[("pairs", object, 2), ("score", "f8")]),
        "match_weight": frame.drop(columns="match_probability").assign(
            match_weight=np.log2(prob / (1 - prob))),
    }
    for name, obj in inputs.items():
        fn = cluster_dedupe_pairs if name.startswith("dedupe") else cluster_splink_predictions
        out, res = fn(obj, ids=ids, method="connected_components", threshold_probability=0.6)
        assert out["id"].tolist() == ids, name  # every record, in the given order
        assert _same_partition(out["entity_id"].tolist(), ref), name
    # Splink's column names on request
    out, _ = cluster_splink_predictions(frame, ids=ids, id_column="unique_id", cluster_column="cluster_id")
    assert list(out.columns) == ["unique_id", "cluster_id"] and len(out) == 40


def test_threshold_probability_matches_logodds_threshold():
    pred = pd.DataFrame({"unique_id_l": [1, 2, 1], "unique_id_r": [2, 3, 3], "match_probability": [0.95, 0.7, 0.4]})
    a, _ = cluster_splink_predictions(pred, ids=[1, 2, 3, 4], threshold_probability=0.8)
    b, _ = cluster_splink_predictions(pred, ids=[1, 2, 3, 4], threshold=float(np.log(0.8 / 0.2)))
    assert a["entity_id"].tolist() == b["entity_id"].tolist() == [0, 0, 1, 2]
    with pytest.raises(ValueError, match="not both"):
        cluster_splink_predictions(pred, threshold=0.0, threshold_probability=0.5)
    with pytest.raises(ValueError, match=r"threshold_probability.*\(0, 1\)"):
        cluster_splink_predictions(pred, threshold_probability=1.5)
    with pytest.raises(ValueError, match="Unknown clustering method"):
        cluster_splink_predictions(pred, method="louvain")


def test_bad_inputs_say_what_was_received():
    with pytest.raises(ValueError, match="left id"):
        cluster_splink_predictions(pd.DataFrame({"a": [1], "b": [2], "match_probability": [0.5]}))
    with pytest.raises(ValueError, match="two-level MultiIndex"):
        cluster_splink_predictions(pd.Series([0.5, 0.2]))
    with pytest.raises(ValueError, match="got int"):
        read_scored_pairs(3)
    # other column names work when named
    df = pd.DataFrame({"a": [1], "b": [2], "s": [0.9]})
    out, _ = cluster_splink_predictions(df, left_col="a", right_col="b", prob_col="s", ids=[1, 2, 3])
    assert out["entity_id"].tolist() == [0, 0, 1]


def test_dedupe_clusters_output():
    clusters = [(("a", "b", "c"), np.array([0.9, 0.95, 0.8])), (("d",), np.array([1.0]))]
    out, _ = cluster_dedupe_pairs(clusters, ids=list("abcdef"))
    assert out["entity_id"].tolist() == [0, 0, 0, 1, 2, 3]
    out2, _ = cluster_dedupe_pairs(clusters)  # ids default to the clustered records
    assert out2["id"].tolist() == list("abcd")
    # without ids, scored pairs alone cannot know the singletons: say so
    with pytest.warns(UserWarning, match="pass ids="):
        cluster_dedupe_pairs([(("a", "b"), 0.9)])


def test_completion_lifts_recall_capped_by_foreign_blocking():
    # an external tool scored only a chain a-b, b-c, c-d of each 4-record entity;
    # xer cannot join a with d unless the missing pairs are scored
    df = generate_records(400, dup_rate=0.6, random_state=5)
    df["rec_id"] = df["rec_id"].astype(str)
    L, R, P = [], [], []
    for _, g in df.groupby("entity"):
        r = g["rec_id"].tolist()
        for x, y in zip(r[:-1], r[1:]):
            L.append(x)
            R.append(y)
            P.append(0.97)
    rng = np.random.default_rng(0)
    for _ in range(300):  # some scored non-matches so the completion model sees both classes
        x, y = rng.choice(len(df), 2, replace=False)
        if df["entity"].iat[x] != df["entity"].iat[y]:
            L.append(df["rec_id"].iat[x])
            R.append(df["rec_id"].iat[y])
            P.append(0.02)
    pred = pd.DataFrame({"unique_id_l": L, "unique_id_r": R, "match_probability": P})
    plain, r0 = cluster_splink_predictions(pred, ids=df["rec_id"], threshold_probability=0.5)
    done, r1 = cluster_splink_predictions(pred, records=df, id_col="rec_id", threshold_probability=0.5,
                                          fields={"given_name": "name", "surname": "name", "date_of_birth": "date"})
    assert r0.info["n_completed_pairs"] == 0 and r1.info["n_completed_pairs"] > 0
    truth = df.set_index("rec_id")["entity"]
    f0 = evaluate(plain["entity_id"], truth.loc[plain["id"]].to_numpy())["f1"]
    f1 = evaluate(done["entity_id"], truth.loc[done["id"]].to_numpy())["f1"]
    assert len(done) == len(df) and f1 > f0 + 0.05, (f0, f1)
    # a custom scorer is called on exactly the missing pairs
    seen = []

    def scorer(left, right):
        seen.append(len(left))
        return np.full(len(left), 0.9)

    _, r2 = cluster_splink_predictions(pred, ids=df["rec_id"], scorer=scorer, threshold_probability=0.5)
    assert seen == [r2.info["n_completed_pairs"]] and seen[0] > 0


def test_splink_round_trip():
    pytest.importorskip("splink")
    pytest.importorskip("duckdb")
    import splink.comparison_library as cl
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    df = generate_records(300, random_state=0).rename(columns={"rec_id": "unique_id"})
    settings = SettingsCreator(
        link_type="dedupe_only",
        comparisons=[cl.NameComparison("given_name"), cl.NameComparison("surname"),
                     cl.ExactMatch("postcode"), cl.ExactMatch("date_of_birth")],
        blocking_rules_to_generate_predictions=[block_on("surname"), block_on("date_of_birth")],
        probability_two_random_records_match=0.003,
    )
    db = DuckDBAPI()
    linker = Linker(db.register(df.drop(columns="entity")), settings, log_level=40)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e5)
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("postcode"))
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("surname"))
    pred = linker.inference.predict()  # a SplinkDataFrame, passed as it comes
    out, res = cluster_splink_predictions(pred, records=df, threshold_probability=0.5,
                                          id_column="unique_id", cluster_column="cluster_id",
                                          method="connected_components", complete_components=0)
    assert sorted(out["unique_id"]) == sorted(df["unique_id"])  # singletons kept, ids preserved
    own = linker.clustering.cluster_pairwise_predictions_at_threshold(pred, 0.5).as_pandas_dataframe()
    m = out.merge(own[["unique_id", "cluster_id"]], on="unique_id", suffixes=("", "_splink"))
    assert len(m) == len(df) and _same_partition(m["cluster_id"].tolist(), m["cluster_id_splink"].tolist())
    # xer with completion on the same predictions, and a pyarrow copy gives the same answer
    x1, _ = cluster_splink_predictions(pred, records=df, threshold_probability=0.5)
    x2, _ = cluster_splink_predictions(pred.as_pandas_dataframe(), records=df, threshold_probability=0.5)
    assert x1.equals(x2) and len(x1) == len(df)
    truth = df.set_index("unique_id")["entity"]
    assert evaluate(x1["entity_id"], truth.loc[x1["id"]].to_numpy())["f1"] > 0.6
    # splink_scorer gives Splink's own probabilities (checked on pairs Splink scored itself)
    from trustlab.er.interop import splink_scorer

    pdf = pred.as_pandas_dataframe().sort_values("match_probability").iloc[::40].head(6)
    sc = splink_scorer(linker, df.drop(columns="entity"))
    got = sc(pdf["unique_id_l"].to_numpy(dtype=object), pdf["unique_id_r"].to_numpy(dtype=object))
    assert np.allclose(got, pdf["match_probability"].to_numpy(), atol=1e-6)


def test_recordlinkage_round_trip():
    rl = pytest.importorskip("recordlinkage")
    df = generate_records(300, random_state=1).set_index("rec_id")
    idx = rl.Index()
    idx.block("surname")
    idx.block("date_of_birth")
    cand = idx.index(df)
    cmp = rl.Compare()
    cmp.exact("given_name", "given_name", label="given_name")
    cmp.exact("surname", "surname", label="surname")
    cmp.exact("date_of_birth", "date_of_birth", label="dob")
    cmp.exact("postcode", "postcode", label="postcode")
    feats = cmp.compute(cand, df)
    ecm = rl.ECMClassifier(binarize=0.5)
    links = ecm.fit_predict(feats)
    prob = ecm.prob(feats)  # a Series on the candidate MultiIndex
    out, _ = cluster_splink_predictions(prob, ids=df.index, threshold_probability=0.5,
                                        method="connected_components")
    assert out["id"].tolist() == df.index.tolist()
    ids = df.index.tolist()
    ref = _cc_reference(ids, list(prob.index), prob.to_numpy(), 0.5)
    assert _same_partition(out["entity_id"].tolist(), ref)
    out2, _ = cluster_splink_predictions(links, ids=df.index)  # the MultiIndex of links itself
    assert len(out2) == len(df)
    xo, _ = cluster_splink_predictions(prob, records=df.reset_index(), id_col="rec_id", threshold_probability=0.5)
    assert evaluate(xo["entity_id"], df.loc[xo["id"], "entity"].to_numpy())["f1"] > 0.6
