"""Entity resolution on record shapes trustlab was never tuned on, vs recordlinkage.

Three generated families with known truth, each unlike the people / citation / Febrl
files the defaults were developed on, plus the bundled Fodors-Zagat restaurants run
*unsupervised* (the bundled benchmark trains on labels) and a people table with no
duplicates at all:

* ``products``  (:func:`trustlab.er.synthetic.generate_products`) — title / brand / price /
  category (word order, dropped words, model numbers with and without hyphens, brand
  spellings, prices off by a few percent);
* ``companies`` (``generate_companies``) — name with legal-form variants / street address with abbreviations /
  phone in several formats / city / postcode;
* ``books``     (``generate_books``) — ISBN-10 vs ISBN-13 (hyphenated or not) / title with and without
  subtitle / author as "Last, First", "First Last" or "F. Last" / publisher / year.

trustlab gets the raw table and nothing else (``resolve(df)``: inferred fields,
default blocking, Fellegi-Sunter EM, xER). recordlinkage gets what a user who read its
docs would write for the columns: a blocking index, Jaro-Winkler (0.85) / exact
comparisons, the ECM classifier, matches joined by connected components.

    .venv/bin/python bench/er_unseen.py [--n 2000] [--seed S] [--files products,companies,...] [--md PATH]

Further files for held-out checks (other seeds and corruption levels): ``people:SHAPE:TYPO:MISSING``
(:func:`trustlab.er.synthetic.generate_people`, e.g. ``people:full:0.4:0.2``; recordlinkage
only for the ``split`` shape) and ``citations:TYPO:MISSING`` (``generate_citations``).

Prints one JSON line per file and, with ``--md``, writes a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_er import ecm_entities  # noqa: E402

from trustlab.er import evaluate, resolve  # noqa: E402


# ----------------------------------------------------------------------------- files
def load(name, n, seed):
    if name in ("products", "companies", "books"):
        from trustlab.er import synthetic

        df = getattr(synthetic, f"generate_{name}")(n, random_state=seed)
        return df.drop(columns="cluster"), df["cluster"].to_numpy()
    if name == "restaurant":
        from trustlab.datasets import load_er_dataset

        ds = load_er_dataset("restaurant")
        return ds.records.drop(columns=[ds.truth_col]), ds.records[ds.truth_col].to_numpy()
    if name == "people_nodup":
        from trustlab.er.synthetic import generate_people

        df = generate_people(n, dup_rate=0.0, random_state=seed)
        return df.drop(columns="cluster"), df["cluster"].to_numpy()
    if name.startswith("people:"):  # people:SHAPE:TYPO:MISSING (trustlab.er.synthetic)
        from trustlab.er.synthetic import generate_people

        _, shape, typo, miss = name.split(":")
        df = generate_people(n, shape=shape, typo_rate=float(typo), missing_rate=float(miss), random_state=seed)
        return df.drop(columns="cluster"), df["cluster"].to_numpy()
    if name.startswith("citations:"):  # citations:TYPO:MISSING
        from trustlab.er.synthetic import generate_citations

        _, typo, miss = name.split(":")
        df = generate_citations(n, typo_rate=float(typo), missing_rate=float(miss), random_state=seed)
        return df.drop(columns="cluster"), df["cluster"].to_numpy()
    raise ValueError(name)


def _rl_setup(name):
    """recordlinkage: (blocking keys, string columns, exact columns) per family."""
    name = name.split(":")[0]
    return {
        "products": ([["brand"], ["category", "p3"]], ["title", "brand"], ["category"]),
        "companies": ([["zip"], ["city", "n3"]], ["company_name", "street_address", "phone"], ["city", "zip"]),
        "books": ([["isbn"], ["year", "t4"], ["a4"]], ["book_title", "author", "publisher"], ["year", "isbn"]),
        "restaurant": ([["city"], ["n3"]], ["name", "address", "cuisine"], ["city"]),
        "people_nodup": ([["first_name", "surname"], ["surname", "dob"], ["email"]],
                         ["first_name", "surname", "city", "email"], ["dob"]),
        "people": ([["first_name", "surname"], ["surname", "dob"], ["email"]],
                   ["first_name", "surname", "city", "email"], ["dob"]),
        "citations": ([["year", "t4"], ["a4"]], ["title", "authors", "venue"], ["year"]),
    }[name]


def run_recordlinkage(df, name):
    import recordlinkage as rl
    d = df.copy()
    for c in d.columns:
        if d[c].dtype == object:
            d[c] = d[c].astype("string").str.strip().str.lower()
    first = {"products": "title", "companies": "company_name", "books": "book_title", "restaurant": "name",
             "citations": "title"}.get(name.split(":")[0])
    if first:
        d["p3"] = d[first].str[:3]
        d["n3"] = d[first].str[:3]
        d["t4"] = d[first].str[:4]
    for a in ("author", "authors"):
        if a in d:
            d["a4"] = d[a].str.replace(r"[^a-z]", "", regex=True).str[:4]
    d = d.set_index(d.columns[0])
    keys, strings, exact = _rl_setup(name)
    idx = rl.Index()
    for k in keys:
        idx.block(k)
    cmp = rl.Compare()
    for c in strings:
        cmp.string(c, c, method="jarowinkler", threshold=0.85, label=c)
    for c in exact:
        cmp.exact(c, c, label=c)
    return ecm_entities(idx, cmp, d)


def bench_file(name, n, seed):
    df, truth = load(name, n, seed)
    row = {"file": name, "n": len(df), "true_entities": int(pd.Series(truth).nunique())}
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as W:
        warnings.simplefilter("always")
        r = resolve(df, truth=truth)
    s = r.summary()
    row["trustlab"] = {"f1": r.metrics["f1"], "precision": r.metrics["precision"], "recall": r.metrics["recall"],
                       "entities": r.n_entities, "seconds": time.perf_counter() - t,
                       "warnings": [str(w.message)[:160] for w in W],
                       "fields": [f"{f.column}:{f.kind}" for f in r.field_report.fields],
                       "proven": f"{s['n_components_proven']}/{s['n_components_multi']}"}
    t = time.perf_counter()
    try:
        lab = run_recordlinkage(df, name)
        m = evaluate(lab, truth)
        row["recordlinkage"] = {"f1": m["f1"], "precision": m["precision"], "recall": m["recall"],
                                "entities": int(len(set(lab))), "seconds": time.perf_counter() - t}
    except Exception as exc:  # a peer failing is reported, not fatal
        row["recordlinkage"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    row["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row["load"] = os.getloadavg()[0]
    return row


def write_md(rows, path, cmd):
    lines = ["# Entity resolution on record shapes not tuned on (products, companies, books, ...)", "",
             f"Command: `{cmd}`  ",
             f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Machine: {os.cpu_count()}-core "
             f"{platform.machine()}, Python {platform.python_version()}, no GPU; shared with other jobs "
             "(load average per row).", "",
             "trustlab: `resolve(df)` with every default, no labels, no hints. recordlinkage 0.16: blocking + "
             "Jaro-Winkler(0.85)/exact comparisons + ECM + connected components, written for each file's columns. "
             "Cells: pairwise F1 (precision / recall), entities found, wall seconds.", "",
             "| file | records | true entities | trustlab | recordlinkage | trustlab warnings | max RSS MB | load |",
             "|---|---|---|---|---|---|---|---|"]

    def cell(d):
        if "error" in d:
            return "error: " + d["error"][:60]
        return (f"{d['f1']:.4f} ({d['precision']:.3f} / {d['recall']:.3f}), {d['entities']} ent., "
                f"{d['seconds']:.1f} s")
    for r in rows:
        w = "; ".join(x.split(": ", 1)[-1][:90] for x in r["trustlab"]["warnings"]) or "none"
        lines.append(f"| {r['file']} | {r['n']:,} | {r['true_entities']:,} | {cell(r['trustlab'])} | "
                     f"{cell(r['recordlinkage'])} | {w} | {r['max_rss_mb']:.0f} | {r['load']:.1f} |")
    lines += ["", "Fields trustlab inferred:", ""]
    lines += [f"* {r['file']}: {', '.join(r['trustlab']['fields'])}; components proven optimal "
              f"{r['trustlab']['proven']}" for r in rows]
    Path(path).write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--files", default="products,companies,books,restaurant,people_nodup")
    ap.add_argument("--md", default=None)
    a = ap.parse_args(argv)
    rows = []
    for name in a.files.split(","):
        row = bench_file(name, a.n, a.seed)
        print(json.dumps(row, default=float), flush=True)
        rows.append(row)
    if a.md:
        write_md(rows, a.md, "python bench/er_unseen.py " + " ".join(argv if argv is not None else sys.argv[1:]))


if __name__ == "__main__":
    main()
