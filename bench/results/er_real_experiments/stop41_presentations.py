"""Stop 41: walmart_amazon presentations, closer to the issue's Abt/Buy-like products pair, built only by moving or
removing walmart_amazon's own columns (no invented corruption); each resolved by trustlab with every default, and
scored by the TF-IDF baseline (char 3-grams of the whole record, cosine, greedy one-to-one, threshold chosen *with*
the truth). The truth only scores.

Presentations (stop 39/40's first):

* ``full``: as shipped (title, modelno, price, shipweight, brand, dimensions);
* ``nomodel``: without ``modelno``; ``titleonly``: title; ``abtlike``: title and price;
* ``codein``: the model number moved into the title (``title - MODELNO`` as Abt writes its names, when the title
  does not already hold it), ``modelno`` removed, the other columns kept;
* ``codetitle``: ``codein``'s title only;
* ``codeabtdesc`` (stop 41, lead): ``codeabt`` plus a ``description`` column on both sides made of the record's
  brand, dimensions and shipping weight joined as text (a free-text column beside the name, as Abt/Buy have);
* ``codeabt``: Abt/Buy's shape: one table (walmart, the smaller, like Abt) ``name`` + ``price``; the other (amazon,
  like Buy) ``name`` + ``manufacturer`` (the brand) + ``price``; both names hold the model number as ``codein``.

Run from the repository root:
``PYTHONPATH=. python bench/results/er_real_experiments/stop41_presentations.py VARIANT[,VARIANT...] [OUTDIR]
[--baseline-only|--no-baseline]``; prints one JSON line per presentation and system.
"""
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, "bench")
import er_real as E  # noqa: E402


def code_in_title(df: pd.DataFrame) -> pd.Series:
    """The title with the model number appended as ``title - MODELNO`` unless the title already contains it."""
    out = []
    for t, m in zip(df["title"], df["modelno"]):
        m = m.strip()
        out.append(t if not m or m.lower() in t.lower() else f"{t} - {m}")
    return pd.Series(out, index=df.index)


def present(variant: str, df: pd.DataFrame, side: str) -> pd.DataFrame:
    """The walmart_amazon table ``df`` (``side`` = file stem) in presentation ``variant``."""
    if variant == "full":
        return df
    if variant == "nomodel":
        return df.drop(columns=["modelno"])
    if variant == "titleonly":
        return df[["id", "title"]]
    if variant == "abtlike":
        return df[["id", "title", "price"]]
    df = df.copy()
    df["title"] = code_in_title(df)
    if variant == "codein":
        return df.drop(columns=["modelno"])
    if variant == "codetitle":
        return df[["id", "title"]]
    if variant == "codeabt":
        df = df.rename(columns={"title": "name", "brand": "manufacturer"})
        return df[["id", "name", "price"]] if side == "walmart" else df[["id", "name", "manufacturer", "price"]]
    if variant == "codeabtdesc":
        # codeabt plus a free-text ``description`` on both sides (as Abt and Buy have): the record's other real
        # columns (brand, dimensions, shipping weight) joined as one text, empty where all three are
        blob = df[["brand", "dimensions", "shipweight"]].fillna("").astype(str).agg(" ".join, axis=1).str.strip()
        df = df.rename(columns={"title": "name", "brand": "manufacturer"})
        df["description"] = blob
        return (df[["id", "name", "description", "price"]] if side == "walmart"
                else df[["id", "name", "description", "manufacturer", "price"]])
    raise SystemExit(f"unknown variant {variant!r}")


def tfidf_baseline(paths, keys, truth) -> dict:
    """Best F1 of TF-IDF char 3-grams of the whole record + greedy one-to-one, thresholds 0.2..0.85 (truth-chosen)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    A, B = (pd.read_csv(p, dtype=str, keep_default_na=False) for p in paths)
    ta, tb = (d.drop(columns=["id"]).agg(" ".join, axis=1) for d in (A, B))
    v = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), lowercase=True, sublinear_tf=True).fit(
        pd.concat([ta, tb]))
    S = (v.transform(ta) @ v.transform(tb).T).tocoo()
    rows, cols, vals = S.row, S.col, S.data
    keep = vals >= 0.2
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    order = np.argsort(-vals, kind="stable")
    tmap = {(k[0], str(k[1])): t for k, t in zip(keys, truth)}
    stems = [Path(p).stem for p in paths]
    tA = np.array([tmap[(stems[0], i)] for i in A["id"]])
    tB = np.array([tmap[(stems[1], i)] for i in B["id"]])
    ntrue = sum(c * (c - 1) // 2 for c in Counter(list(tA) + list(tB)).values())
    # greedy one-to-one once, in decreasing cosine: the links kept above a threshold are the prefix of this run
    ua, ub = set(), set()
    acc_v, acc_t = [], []
    for k in order:
        a, b = rows[k], cols[k]
        if a in ua or b in ub:
            continue
        ua.add(a)
        ub.add(b)
        acc_v.append(vals[k])
        acc_t.append(tA[a] == tB[b])
    acc_v, acc_t = np.asarray(acc_v), np.asarray(acc_t, bool)
    best = {"f1": 0.0}
    for th in np.arange(0.2, 0.9, 0.05):
        sel = acc_v >= th
        tp = int(acc_t[sel].sum())
        fp = int(sel.sum()) - tp
        p, r = tp / max(tp + fp, 1), tp / ntrue
        f = 2 * p * r / max(p + r, 1e-9)
        if f > best["f1"]:
            best = {"f1": round(f, 4), "threshold": round(float(th), 2), "precision": round(p, 4),
                    "recall": round(r, 4)}
    return best


def main() -> None:
    variants = sys.argv[1].split(",")
    rest = [a for a in sys.argv[2:] if not a.startswith("--")]
    outdir = Path(rest[0] if rest else "/tmp/stop41_wa")
    inputs, keys, truth = E.load("walmart_amazon", Path("/work/shared/data"))
    for variant in variants:
        out = []
        for p in inputs:
            df = present(variant, pd.read_csv(p, sep="|", dtype=str, keep_default_na=False), p.stem)
            (outdir / variant).mkdir(parents=True, exist_ok=True)
            q = outdir / variant / p.name
            df.to_csv(q, index=False)
            out.append(q)
        if "--no-baseline" not in sys.argv:
            print(variant, "tfidf", json.dumps(tfidf_baseline(out, keys, truth)), flush=True)
        if "--baseline-only" not in sys.argv:
            t = time.time()
            pred, info = E.trustlab_run(out, keys)
            print(variant, "trustlab", json.dumps({**E.pairwise(pred, truth), "s": round(time.time() - t, 1),
                                                   "status": info["status"]}), flush=True)


if __name__ == "__main__":
    main()
