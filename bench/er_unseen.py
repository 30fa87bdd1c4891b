"""Entity resolution on record shapes trustlab was never tuned on, vs recordlinkage.

Three generated families with known truth, each unlike the people / citation / Febrl
files the defaults were developed on, plus the bundled Fodors-Zagat restaurants run
*unsupervised* (the bundled benchmark trains on labels) and a people table with no
duplicates at all:

* ``products``  — title / brand / price / category (word order, dropped words, model
  numbers with and without hyphens, brand spellings, prices off by a few percent);
* ``companies`` — name with legal-form variants / street address with abbreviations /
  phone in several formats / city / postcode;
* ``books``     — ISBN-10 vs ISBN-13 (hyphenated or not) / title with and without
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

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trustlab.er import evaluate, resolve  # noqa: E402

_SYL = ["ka", "lo", "mi", "ren", "tor", "va", "zen", "qui", "bra", "del", "fin", "gro", "hal", "jun", "mar", "nex",
        "pol", "sol", "tri", "vex", "wil", "xan", "yor", "zu", "ber", "cor", "dan", "eli", "fro", "gan"]


def _words(rng, k, syl=(2, 3)):
    out = set()
    while len(out) < k:
        out.add("".join(rng.choice(_SYL, rng.integers(syl[0], syl[1] + 1))))
    return np.array(sorted(out), dtype=object)


def _typo(s, rng):
    if not s or len(s) < 3:
        return s
    p = int(rng.integers(1, len(s) - 1))
    op = rng.integers(3)
    if op == 0:
        return s[:p] + s[p + 1:]
    if op == 1:
        return s[:p] + s[p + 1] + s[p] + s[p + 2:]
    return s[:p] + "aeiou"[int(rng.integers(5))] + s[p + 1:]


def _clusters(rng, n, dup_rate=0.4, max_size=5):
    n_ent = int(round(n * (1 - dup_rate)))
    ent = list(range(n_ent))
    cnt = np.ones(n_ent, int)
    while len(ent) < n:
        e = int(rng.integers(n_ent))
        if cnt[e] < max_size:
            ent.append(e)
            cnt[e] += 1
    return n_ent, np.array(ent)


# ----------------------------------------------------------------------------- families
def products(n, rng):
    brands = {"Sonara": ["sonara", "SONARA", "Sonara Inc."], "Kelvix": ["kelvix", "Kelvix Corp", "KELVIX"],
              "Hewton-Pack": ["Hewton-Pack", "HP", "Hewton Pack"], "Mitsu Denki": ["Mitsu Denki", "Mitsu", "MD"],
              "Auralis": ["Auralis", "auralis"], "Zentro": ["Zentro", "ZENTRO", "Zentro Ltd"],
              "Bravik": ["Bravik", "bravik"], "Orlen": ["Orlen", "ORLEN", "Orlen Electronics"]}
    cats = {"headphones": ["Wireless", "Noise Cancelling", "Over-Ear", "Bluetooth", "Headphones"],
            "laptop": ["Laptop", "15.6 inch", "16GB RAM", "512GB SSD", "Notebook"],
            "camera": ["Mirrorless", "Camera", "24MP", "4K Video", "Body Only"],
            "monitor": ["Monitor", "27 inch", "IPS", "144Hz", "QHD"],
            "phone": ["Smartphone", "128GB", "Unlocked", "5G", "Dual SIM"]}
    colors = ["Black", "Silver", "White", "Blue", "Red", "Graphite"]
    n_ent, ent = _clusters(rng, n)
    bk = list(brands)
    ck = list(cats)
    E = []
    for _ in range(n_ent):
        b, c = bk[rng.integers(len(bk))], ck[rng.integers(len(ck))]
        model = f"{''.join(rng.choice(list('ABCDEFGHJKLMNPRSTWXZ'), 2))}-{rng.integers(100, 9999)}"
        words = list(rng.choice(cats[c], rng.integers(2, 5), replace=False))
        E.append({"brand": b, "cat": c, "model": model, "words": words, "color": colors[rng.integers(len(colors))],
                  "price": float(np.round(np.exp(rng.normal(5.5, 0.8)), 2))})
    rows = []
    seen = np.zeros(n_ent, bool)
    for e in ent:
        x = E[e]
        words, model, brand = list(x["words"]), x["model"], x["brand"]
        price = x["price"]
        dup = seen[e]
        seen[e] = True
        if dup:
            if rng.random() < 0.5:
                rng.shuffle(words)
            if rng.random() < 0.3 and len(words) > 2:
                words.pop(int(rng.integers(len(words))))
            if rng.random() < 0.4:
                model = model.replace("-", "")
            if rng.random() < 0.5:
                brand = brands[brand][rng.integers(len(brands[brand]))]
            price = round(price * float(rng.uniform(0.93, 1.07)), 2) if rng.random() < 0.6 else price
        title = " ".join([brand.split()[0], model, *words, x["color"]])
        if dup and rng.random() < 0.3:
            title = _typo(title, rng)
        if dup and rng.random() < 0.3:
            title = title.lower()
        rows.append({"title": title, "brand": brand if rng.random() > 0.1 else None,
                     "price": f"{price:.2f}" if rng.random() > 0.1 else None, "category": x["cat"], "truth": e})
    return rows


def companies(n, rng):
    forms = [["Inc", "Inc.", "Incorporated", ""], ["LLC", "L.L.C.", ""], ["Ltd", "Limited", "Ltd."],
             ["Corp", "Corporation"]]
    kinds = ["Consulting", "Logistics", "Bakery", "Dental", "Software", "Plumbing", "Capital", "Design", "Foods",
             "Motors"]
    streets = _words(rng, 300)
    suffix = [("Street", "St"), ("Avenue", "Ave"), ("Road", "Rd"), ("Boulevard", "Blvd"), ("Drive", "Dr")]
    cities = _words(rng, 40, (2, 2))
    stems = _words(rng, 1500)
    n_ent, ent = _clusters(rng, n)
    E = []
    for _ in range(n_ent):
        f = forms[rng.integers(len(forms))]
        E.append({"stem": stems[rng.integers(len(stems))].title(), "kind": kinds[rng.integers(len(kinds))], "forms": f,
                  "num": int(rng.integers(1, 9999)), "street": streets[rng.integers(len(streets))].title(),
                  "suf": suffix[rng.integers(len(suffix))], "city": cities[rng.integers(len(cities))].title(),
                  "zip": f"{rng.integers(10000, 99999)}", "phone": rng.integers(0, 10, 10)})
    rows = []
    seen = np.zeros(n_ent, bool)
    for e in ent:
        x = E[e]
        dup = seen[e]
        seen[e] = True
        form = x["forms"][rng.integers(len(x["forms"]))] if dup else x["forms"][0]
        name = " ".join(w for w in (x["stem"], x["kind"], form) if w)
        suf = x["suf"][int(rng.integers(2))] if dup else x["suf"][0]
        addr = f"{x['num']} {x['street']} {suf}"
        if dup and rng.random() < 0.2:
            addr += f", Suite {rng.integers(1, 500)}"
        d = "".join(map(str, x["phone"]))
        style = int(rng.integers(4)) if dup else 0
        phone = [f"({d[:3]}) {d[3:6]}-{d[6:]}", f"{d[:3]}.{d[3:6]}.{d[6:]}", f"+1 {d[:3]} {d[3:6]} {d[6:]}", d][style]
        if dup and rng.random() < 0.25:
            name = _typo(name, rng)
        if dup and rng.random() < 0.3:
            name = name.upper()
        rows.append({"company_name": name, "street_address": addr if rng.random() > 0.08 else None,
                     "phone": phone if rng.random() > 0.15 else None, "city": x["city"],
                     "zip": x["zip"] if rng.random() > 0.1 else None, "truth": e})
    return rows


def _isbn13(core9):
    s = "978" + core9
    c = (10 - sum(int(ch) * (1 if i % 2 == 0 else 3) for i, ch in enumerate(s)) % 10) % 10
    return s + str(c)


def _isbn10(core9):
    c = sum((10 - i) * int(ch) for i, ch in enumerate(core9)) % 11
    c = (11 - c) % 11
    return core9 + ("X" if c == 10 else str(c))


def books(n, rng):
    firsts = _words(rng, 200, (1, 2))
    lasts = _words(rng, 800)
    tw = _words(rng, 400)
    pubs = [("Penwick Press", "Penwick"), ("Harlow & Sons", "Harlow"), ("Oxbridge University Press", "OUP"),
            ("Stellar Books", "Stellar"), ("North Gate Publishing", "North Gate"), ("Random Tower", "RT")]
    n_ent, ent = _clusters(rng, n, dup_rate=0.35, max_size=4)
    E = []
    for _ in range(n_ent):
        t = " ".join(rng.choice(tw, rng.integers(2, 5))).title()
        sub = " ".join(rng.choice(tw, rng.integers(2, 4))).title() if rng.random() < 0.5 else ""
        E.append({"title": t, "sub": sub, "first": firsts[rng.integers(len(firsts))].title(),
                  "last": lasts[rng.integers(len(lasts))].title(), "pub": pubs[rng.integers(len(pubs))],
                  "year": int(rng.integers(1950, 2024)), "core": "".join(map(str, rng.integers(0, 10, 9)))})
    rows = []
    seen = np.zeros(n_ent, bool)
    for e in ent:
        x = E[e]
        dup = seen[e]
        seen[e] = True
        title = x["title"] + (f": {x['sub']}" if x["sub"] and (not dup or rng.random() < 0.5) else "")
        st = int(rng.integers(3)) if dup else 0
        author = [f"{x['first']} {x['last']}", f"{x['last']}, {x['first']}", f"{x['first'][0]}. {x['last']}"][st]
        k = int(rng.integers(4)) if dup else 0
        i13, i10 = _isbn13(x["core"]), _isbn10(x["core"])
        isbn = [i13, i10, f"{i13[:3]}-{i13[3]}-{i13[4:8]}-{i13[8:12]}-{i13[12]}", None][k]
        if dup and rng.random() < 0.2:
            title = _typo(title, rng)
        year = x["year"] + (int(rng.choice([-1, 1])) if dup and rng.random() < 0.1 else 0)
        pub = x["pub"][int(dup and rng.random() < 0.5)]
        rows.append({"isbn": isbn, "book_title": title, "author": author, "publisher": pub, "year": str(year),
                     "truth": e})
    return rows


# ----------------------------------------------------------------------------- files
def load(name, n, seed):
    rng = np.random.default_rng(seed)
    if name in ("products", "companies", "books"):
        df = pd.DataFrame(globals()[name](n, rng))
        df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
        df.insert(0, "id", [f"r{i:06d}" for i in range(len(df))])
        return df.drop(columns="truth"), df["truth"].to_numpy()
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
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

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
    pairs = idx.index(d)
    X = cmp.compute(pairs, d).fillna(0).astype(int)
    match = rl.ECMClassifier(binarize=None).fit_predict(X)
    pos = {u: i for i, u in enumerate(d.index)}
    left = np.array([pos[a] for a, _ in match], dtype=np.int64)
    right = np.array([pos[b] for _, b in match], dtype=np.int64)
    g = coo_matrix((np.ones(len(left)), (left, right)), shape=(len(d), len(d)))
    return connected_components(g, directed=False)[1]


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
