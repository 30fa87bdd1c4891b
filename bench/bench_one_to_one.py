"""One-to-one linkage on two real duplicate-free table pairs: ``resolve(..., link_type="link_only")``
with and without ``one_to_one=True`` (every default otherwise, no labels given to the model).

Usage::

    PYTHONPATH=$PWD python bench/bench_one_to_one.py fodors_zagats [walmart_amazon]

Data: ``../shared/data/er/<name>/`` (see that folder's README). Prints one JSON line per
(data set, setting): pairwise precision, recall, F1, entities, seconds, solver, statuses.
Nothing here is tuned to these files.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from trustlab.er import evaluate, resolve

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "er"
if not DATA.exists():
    DATA = Path("/work/shared/data/er")


def load(name: str) -> tuple[dict, np.ndarray]:
    """The two tables (dict name -> frame) and the true entity of every stacked record."""
    if name == "fodors_zagats":
        a = pd.read_csv(DATA / name / "fodors.csv")
        b = pd.read_csv(DATA / name / "zagats.csv")
        gt = pd.read_csv(DATA / name / "matches.csv")
        la, lb = "tableA_id", "tableB_id"
        tables = {"fodors": a, "zagats": b}
    elif name == "walmart_amazon":
        a = pd.read_csv(DATA / name / "walmart.csv", sep="|")
        b = pd.read_csv(DATA / name / "amazon.csv", sep="|")
        gt = pd.read_csv(DATA / name / "gt.csv", sep="|")
        la, lb = "D1", "D2"
        tables = {"walmart": a, "amazon": b}
    else:
        raise SystemExit(f"unknown data set {name!r}")
    ta = {f"a{i}": f"a{i}" for i in a["id"]}
    tb = {f"b{i}": f"b{i}" for i in b["id"]}
    for x, y in zip(gt[la], gt[lb]):  # a matched pair shares the left record's entity
        tb[f"b{y}"] = f"a{x}"
    truth = np.r_[[ta[f"a{i}"] for i in a["id"]], [tb[f"b{i}"] for i in b["id"]]]
    return tables, truth


def greedy_best_links(pairs: np.ndarray, w: np.ndarray, source: np.ndarray) -> np.ndarray:
    """The greedy one-to-one baseline on the same scores: heaviest positive link first,
    kept when neither end is linked yet (ties in pair order)."""
    lab = np.arange(len(source))
    used = np.zeros(len(source), bool)
    for k in np.argsort(-w, kind="stable"):
        a, b = pairs[k]
        if w[k] <= 0:
            break
        if not used[a] and not used[b] and source[a] != source[b]:
            used[a] = used[b] = True
            lab[b] = lab[a]
    return lab


def run(name: str) -> None:
    tables, truth = load(name)
    for one in (False, True):
        t = time.perf_counter()
        r = resolve(tables, link_type="link_only", id_col="id", one_to_one=one)
        sec = time.perf_counter() - t
        m = evaluate(r.entity, truth)
        s = r.summary()
        print(json.dumps({
            "data": name, "one_to_one": one, "precision": round(m["precision"], 4), "recall": round(m["recall"], 4),
            "f1": round(m["f1"], 4), "n_entities": r.n_entities, "seconds": round(sec, 1),
            "clustering_seconds": round(r.seconds.get("clustering", float("nan")), 2),
            "objective": round(float(r.clusters.objective), 6), "bound": round(float(r.clusters.bound), 6),
            "component_status": s["component_status"], "solver": s.get("one_to_one", {}).get("solver", "xer"),
            "n_candidate_pairs": int(len(r.pairs)),
        }), flush=True)
        if one:  # the greedy one-to-one rule on the same scores
            g = greedy_best_links(r.pairs, r.weights, r.source)
            mg = evaluate(g, truth)
            print(json.dumps({
                "data": name, "greedy_best_links": True, "precision": round(mg["precision"], 4),
                "recall": round(mg["recall"], 4), "f1": round(mg["f1"], 4),
                "objective": round(float(r.weights[g[r.pairs[:, 0]] == g[r.pairs[:, 1]]].sum()), 6),
            }), flush=True)


if __name__ == "__main__":
    for nm in sys.argv[1:] or ["fodors_zagats"]:
        run(nm)
