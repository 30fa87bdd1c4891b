"""The real ER files of ``bench/er_real.py``, presented the way an unseen file might be.

A file the project has never seen differs from the ones it was developed on in ways that
should not matter: other column names, other column and row order, other delimiters and
encodings, more empty cells, other letter case. This benchmark applies one such change at
a time to every real data set and runs ``resolve`` with every default (no labels, no
hints), so a drop in F1 points at a default that depends on how a file is written rather
than on what it says.

Variants (each applied to every input table of a file; the id column and the truth are kept):

* ``base``      the file as ``bench/er_real.py`` passes it;
* ``opaque``    every other column renamed ``http://example.org/ontology#aXXXXXX`` (URL-like names that
  say nothing about the content, the same in both tables of a link file: kinds must be inferred
  from the values);
* ``shuffled``  columns and rows in another order (seeded); the result should be the same entities;
* ``semicolon`` written with ``;`` as the delimiter, every field quoted, latin-1 encoded;
* ``upper``     every value upper-cased;
* ``sparse``    30 % of the non-id cells emptied (seeded), as in sparse real rows;
* ``tabbed``    tab-separated with a UTF-8 byte-order mark;
* ``merged``    the non-id fields of each record as free text, the way product and catalogue exports
  hold a ``name`` and a ``description`` rather than one column per attribute. Cells that are empty
  or a missing-value marker (``NA`` and ``trustlab.er.records.MISSING_PLACEHOLDERS``, compared
  case-insensitively after stripping) are left out; the others keep their text (runs of white
  space become one space). With the non-id
  columns ``c1 … ck`` in file order: k <= 1, the table is unchanged; 2 <= k <= 3, one column
  ``text`` = the values of ``c1 … ck`` joined by one space (e.g. first and last name as one
  full name); k >= 4, two columns, ``name`` = the value of ``c1`` and ``description`` = the values
  of ``c2 … ck`` joined by one space. The id column stays first; rows stay in order;
* ``extra``     the table plus five noise columns of the kind a real export carries (per table,
  seeded, the same names in every table of a file): ``row_no`` (first column) the running row
  number 1..n of the table (so the tables of a link file share the numbers 1..min n);
  ``status`` the constant ``ACTIVE``; ``notes`` empty but in 10 % of the rows, which hold one of
  eight short phrases (``call back``, ``verified``, …); ``comment`` the free text of another
  record of the same table (``merged``'s joined values of all non-id columns of row ``perm[i]``,
  ``perm`` a seeded random permutation: a long text about, nearly always, another entity);
  ``exported_at`` a timestamp ``2026-03-1D HH:MM:SS`` drawn uniformly over three days. The
  original columns and the rows are unchanged;
* ``recased``   (not run by default) every other column's name in upper case if it is among the
  later half of the names by sort order (over every table of the file), in lower case otherwise,
  so that the names sort in another order (the later half first); kind hints and column pairing
  read names in lower case, so they see the same names: nothing may follow the alphabetical
  order of the names.

Usage::

    PYTHONPATH=. .venv/bin/python bench/er_perturb.py [--files a,b] [--variants v1,v2]
        [--jsonl bench/results/er_perturb.jsonl] [--md bench/results/er_perturb.md]

Each (file, variant) runs in its own subprocess (peak memory per run). Prints one JSON line each.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from trustlab.er.records import MISSING_PLACEHOLDERS  # noqa: E402

VARIANTS = ("base", "opaque", "shuffled", "semicolon", "upper", "sparse", "tabbed", "merged", "extra", "recased")
DEFAULT_VARIANTS = VARIANTS[:-1]
# ``merged``: cells left out of the free text (besides empty ones), compared lower-cased and stripped
_MISSING = frozenset({"na"}) | MISSING_PLACEHOLDERS
# ``extra``: the phrases of the mostly-empty ``notes`` column
_NOTES = ("call back", "verified", "duplicate?", "check address", "moved", "see email", "vip", "old record")
ID_COLS = ("id", "Entity Id", "rec_id", "Id", "person_id", "unique_id", "record_id", "mention_id")


def _id_col(df: pd.DataFrame) -> str | None:
    for c in ID_COLS:
        if c in df.columns:
            return c
    return None


def _sniff_read(path: Path) -> pd.DataFrame:
    import csv

    with open(path, encoding="utf-8-sig", newline="") as fh:
        head = fh.read(65536)
    try:
        sep = csv.Sniffer().sniff(head, delimiters=",|;\t").delimiter
    except csv.Error:  # one column (no delimiter to find): as bench/er_real.py wrote it
        sep = ","
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig")


def recased_names(names) -> dict:
    """``recased``'s new name of each column name of ``names`` (the union over a file's tables):
    upper case for the later half of ``sorted(map(str, names))``, lower case for the others."""
    order = sorted({str(c) for c in names})
    half = len(order) // 2
    return {c: c.upper() if k >= half else c.lower() for k, c in enumerate(order)}


def record_text(df: pd.DataFrame, cols) -> pd.Series:
    """Each row's values of ``cols`` (in that order) joined by one space, leaving out empty
    cells and missing-value markers (``_MISSING``)."""
    parts = []
    for c in cols:
        v = df[c].fillna("").astype(str)
        keep = ~v.str.strip().str.lower().isin(_MISSING) & (v.str.strip() != "")
        parts.append(v.where(keep, ""))
    if not parts:
        return pd.Series([""] * len(df), index=df.index)
    out = parts[0]
    for q in parts[1:]:
        out = out.str.cat(q, sep=" ")
    return out.str.split().str.join(" ")  # no double or edge spaces where cells were left out


def perturb(df: pd.DataFrame, variant: str, seed: int, names: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """The table as the variant presents it, and the keyword arguments for ``to_csv``
    (``names``: ``recased``'s new names, :func:`recased_names`)."""
    rng = np.random.default_rng(seed)
    idc = _id_col(df)
    others = [c for c in df.columns if c != idc]
    out = df.copy()
    kw: dict = {"index": False}
    if variant == "opaque":
        # the same column gets the same name in every table (a hash of its name), so link files stay paired by name
        out = out.rename(columns={c: "http://example.org/ontology#a" + hashlib.md5(str(c).encode()).hexdigest()[:6]
                                  for c in others})
    elif variant == "shuffled":
        cols = list(out.columns)
        rng.shuffle(cols)
        out = out[cols].iloc[rng.permutation(len(out))]
    elif variant == "semicolon":
        import csv

        kw.update(sep=";", quoting=csv.QUOTE_ALL, encoding="latin-1", errors="replace")
    elif variant == "upper":
        for c in others:
            out[c] = out[c].astype(str).str.upper()
    elif variant == "sparse":
        for c in others:
            drop = rng.random(len(out)) < 0.3
            out.loc[drop, c] = ""
    elif variant == "tabbed":
        kw.update(sep="\t", encoding="utf-8-sig")
    elif variant == "merged":
        if 2 <= len(others) <= 3:
            body = {"text": record_text(df, others)}
        elif len(others) >= 4:
            body = {"name": record_text(df, others[:1]), "description": record_text(df, others[1:])}
        else:
            body = None
        if body is not None:
            out = pd.DataFrame(({idc: df[idc]} if idc is not None else {}) | body, index=df.index)
    elif variant == "extra":
        n = len(out)
        text = record_text(df, others).to_numpy()
        notes = np.where(rng.random(n) < 0.10, np.asarray(_NOTES, dtype=object)[rng.integers(0, len(_NOTES), n)], "")
        comment = text[rng.permutation(n)]
        t0 = pd.Timestamp("2026-03-10 00:00:00")
        when = t0 + pd.to_timedelta(rng.integers(0, 3 * 86400, n), unit="s")
        out.insert(0, "row_no", [str(k + 1) for k in range(n)])
        out["status"] = "ACTIVE"
        out["notes"] = notes
        out["comment"] = comment
        out["exported_at"] = when.strftime("%Y-%m-%d %H:%M:%S")
    elif variant == "recased":
        out = out.rename(columns={c: names[str(c)] for c in others})
    elif variant != "base":
        raise ValueError(f"unknown variant {variant!r}; valid: {list(VARIANTS)}")
    return out, kw


def run_one(name: str, variant: str, data: Path, seed: int, system: str = "trustlab") -> dict:
    import er_real

    inputs, keys, truth = er_real.load(name, data)
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "trustlab_er_perturb"
    tmp.mkdir(exist_ok=True)
    paths = []
    frames = [_sniff_read(Path(p)) for p in inputs]
    names = recased_names([c for df in frames for c in df.columns if c != _id_col(df)])
    for k, p in enumerate(inputs):
        df = frames[k]
        df2, kw = perturb(df, variant, seed + k, names)
        q = tmp / f"{name}_{variant}_{k}_{Path(p).stem}.csv"
        df2.to_csv(q, **kw)
        paths.append(q)
    if keys is not None:  # link files: er_real's keys are (source name, id); the sources are the file stems
        stems = [Path(p).stem for p in inputs]
        rename = {s: Path(q).stem for s, q in zip(stems, paths)}
        keys = [(rename.get(s, s), i) for s, i in keys]
    t0 = time.perf_counter()
    if system == "trustlab":
        pred, info = er_real.trustlab_run(paths, keys)
    else:  # the untuned peers of bench/er_real_peers.py, on the same files
        import er_real_peers

        pred, info = getattr(er_real_peers, f"{system}_run")(paths, keys)
    sec = time.perf_counter() - t0
    if keys is None and variant == "shuffled":
        # rows were permuted: the result is in the permuted order; map back through the id column
        df = _sniff_read(Path(inputs[0]))
        perm_df, _ = perturb(df, variant, seed)
        order = np.asarray(perm_df.index)
        back = np.empty(len(order), dtype=object)
        back[order] = np.asarray(pred, dtype=object)
        pred = back
    m = er_real.pairwise(np.asarray(pred).astype(str), truth)
    import resource

    return {"file": name, "variant": variant, "system": system, "records": int(len(truth)),
            **{k: round(v, 4) for k, v in m.items()},
            "entities": info.get("entities"), "seconds": round(sec, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "load": round(os.getloadavg()[0], 1), "fields": info.get("fields"),
            "blocking": info.get("blocking"), "warnings": info.get("warnings")}


def write_md(rows: list[dict], path: Path, command: str, peers: list[dict] | None = None) -> None:
    import er_real

    files = [f for f in er_real.ALL if any(r["file"] == f for r in rows)]
    variants = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    cell = {(r["file"], r["variant"]): r for r in rows}

    def worst(f):
        return min((cell[(f, v)]["f1"] for v in variants if (f, v) in cell), default=1.0)

    files.sort(key=worst)
    lines = ["# Real ER files presented differently (every default, no labels)", "",
             f"Command: `{command}`  ",
             f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Machine: {os.cpu_count()}-core "
             f"{platform.machine()}, Python {platform.python_version()}; shared (load per row in the JSONL).", "",
             "Pairwise F1 per variant (see the script's docstring); in brackets the change from `base`. "
             "Worst file first.", "",
             "| file | " + " | ".join(variants) + " |", "|---" * (len(variants) + 1) + "|"]
    for f in files:
        base = cell.get((f, "base"), {}).get("f1")
        cells = []
        for v in variants:
            r = cell.get((f, v))
            if r is None:
                cells.append("–")
            elif v == "base" or base is None:
                cells.append(f"{r['f1']:.3f}")
            else:
                cells.append(f"{r['f1']:.3f} ({r['f1'] - base:+.3f})")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    if peers:
        pc = {(r["file"], r["variant"], r.get("system")): r for r in peers}
        systems = sorted({r.get("system") for r in peers})
        lines += ["", "The peers of `bench/er_real.py` (one untuned recipe each, `--system`) on the same variants "
                  "(pairwise F1; the row marks where trustlab is below the best of them):", "",
                  "| file | variant | trustlab | " + " | ".join(systems) + " | trustlab >= best peer |",
                  "|---" * (4 + len(systems)) + "|"]
        for f in files:
            for v in variants:
                got = [pc.get((f, v, s_)) for s_ in systems]
                if (f, v) not in cell or not any(got):
                    continue
                best = max((g["f1"] for g in got if g is not None), default=float("nan"))
                t = cell[(f, v)]["f1"]
                lines.append(f"| {f} | {v} | {t:.3f} | " + " | ".join("–" if g is None else f"{g['f1']:.3f}"
                                                                       for g in got)
                             + f" | {'yes' if t >= best else '**no**'} |")
    path.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    import er_real

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default=",".join(er_real.SHARED_FILES))
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--system", default="trustlab", choices=("trustlab", "splink", "recordlinkage"))
    ap.add_argument("--jsonl")
    ap.add_argument("--md")
    ap.add_argument("--peers-jsonl", help="rows of earlier --system splink/recordlinkage runs, shown beside")
    ap.add_argument("--from-jsonl", help="write --md from the rows of an earlier run instead of running")
    ap.add_argument("--one", nargs=2, metavar=("FILE", "VARIANT"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(run_one(a.one[0], a.one[1], Path(a.data), a.seed, a.system), default=str))
        return 0
    peers = [json.loads(ln) for ln in open(a.peers_jsonl)] if a.peers_jsonl else None
    if a.from_jsonl:
        last = {}
        for ln in open(a.from_jsonl):
            r = json.loads(ln)
            last[(r["file"], r["variant"])] = r
        write_md(list(last.values()), Path(a.md), "python bench/er_perturb.py --jsonl " + a.from_jsonl, peers)
        return 0
    rows = []
    for f in a.files.split(","):
        for v in a.variants.split(","):
            p = subprocess.run([sys.executable, __file__, "--one", f, v, "--data", a.data, "--seed", str(a.seed),
                                "--system", a.system],
                               capture_output=True, text=True)
            line = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
            if p.returncode or not line:
                row = {"file": f, "variant": v, "f1": float("nan"), "error": (p.stderr or p.stdout)[-400:]}
            else:
                row = json.loads(line[-1])
            rows.append(row)
            print(json.dumps({k: row.get(k) for k in ("file", "variant", "f1", "precision", "recall", "seconds",
                                                      "error")}), flush=True)
            if a.jsonl:
                with open(a.jsonl, "a") as fh:
                    fh.write(json.dumps(row, default=str) + "\n")
    if a.md:
        write_md(rows, Path(a.md), "python bench/er_perturb.py " + " ".join(argv or sys.argv[1:]), peers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
