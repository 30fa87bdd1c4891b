"""Same entity resolution outputs before and after a refactoring of ``trustlab/er`` (issue 27,
item 7: the modules laid out by stages). Records, per call, the entity labels, the scored pairs,
their probabilities and weights, the per-component statuses and the pairwise F1, as digests.

Run it once per code version and compare::

    PYTHONPATH=<tree before> python bench/check_er_identical.py record before.json [--real]
    PYTHONPATH=.             python bench/check_er_identical.py record after.json [--real]
    python bench/check_er_identical.py compare before.json after.json

Calls: ``resolve`` on ``generate_records(400)`` (every default; link_only on two halves;
one_to_one; supervised with labels; a blocking rule with completion off), a saved model applied
to the records in reverse order and incrementally to new records; with ``--real`` also the real
files of ``bench/er_real.py`` named by ``--files`` (every default, as that benchmark runs them).
A component that ends at its time limit may legitimately differ between runs on a busy machine:
the statuses are recorded beside the labels so that such a difference can be told apart.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

REAL = "csv_example,jedai_cora,walmart_amazon,restaurant,febrl1"


def _digest(a) -> str:
    a = np.ascontiguousarray(np.asarray(a))
    if a.dtype == object:
        return hashlib.sha1("\x1f".join(map(str, a.ravel().tolist())).encode()).hexdigest()[:16]
    return hashlib.sha1(a.tobytes() + str(a.dtype).encode() + str(a.shape).encode()).hexdigest()[:16]


def _canonical(labels) -> np.ndarray:
    """Entity labels renumbered by first appearance (the partition, not its names)."""
    seen: dict = {}
    return np.array([seen.setdefault(v, len(seen)) for v in np.asarray(labels).tolist()], np.int64)


def _summary(r, truth=None) -> dict:
    out = {"entity": _digest(_canonical(r.entity)), "n_entities": int(len(set(np.asarray(r.entity).tolist())))}
    for k in ("pairs", "prob", "weights"):
        v = getattr(r, k, None)
        if v is not None:
            out[k] = _digest(v)
    st = r.summary().get("component_status")
    out["status"] = st
    if truth is not None:
        from trustlab.metrics.clustering import pairwise_precision_recall_f1

        out["f1"] = round(float(pairwise_precision_recall_f1(_canonical(r.entity), truth)[2]), 6)
    return out


def record(path: str, real: bool, files: str) -> None:
    import pandas as pd

    from trustlab.er import generate_records, resolve, save_model

    warnings.simplefilter("ignore")
    out: dict = {}
    df = generate_records(400, random_state=0)
    truth = df["entity"].astype(str).to_numpy()
    recs = df.drop(columns=["entity"])
    out["default"] = _summary(resolve(recs, id_col="rec_id"), truth)
    half = len(recs) // 2
    out["link_only"] = _summary(resolve([recs.iloc[:half], recs.iloc[half:]], link_type="link_only"))
    out["one_to_one"] = _summary(resolve([recs.iloc[:half], recs.iloc[half:]], link_type="link_only",
                                         one_to_one=True))
    out["supervised"] = _summary(resolve(df, id_col="rec_id", labels="entity", truth="entity"), truth)
    out["rule_nocomplete"] = _summary(resolve(recs, id_col="rec_id", blocking=["token:surname"],
                                              complete_components=0), truth)
    r = resolve(recs.iloc[:300], id_col="rec_id")
    tmp = tempfile.mkdtemp()
    mp = os.path.join(tmp, "m.json")
    save_model(r, mp)
    out["saved_reverse"] = _summary(resolve(recs.iloc[:300].iloc[::-1], id_col="rec_id", model=mp))
    old = r.to_frame().merge(recs.iloc[:300], on="rec_id")
    inc = resolve(recs.iloc[300:], id_col="rec_id", model=mp, existing=old)
    out["incremental"] = {"entity": _digest(np.asarray(inc.to_frame()["entity_id"].astype(str)))}
    if real:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from er_real import load, resolve_files

        data = Path(os.environ.get("TRUSTLAB_DATA", "/work/shared/data"))
        for name in files.split(","):
            inputs, keys, t = load(name, data)
            res, pred = resolve_files(inputs, keys)
            s = _summary(res)
            from trustlab.metrics.clustering import pairwise_precision_recall_f1

            s["f1"] = round(float(pairwise_precision_recall_f1(_canonical(pred), t)[2]), 6)
            out[name] = s
            print(name, s, flush=True)
    Path(path).write_text(json.dumps(out, indent=1, sort_keys=True, default=str))
    print(f"{len(out)} calls recorded in {path}; pandas {pd.__version__}")


def compare(a: str, b: str) -> int:
    A, B = json.loads(Path(a).read_text()), json.loads(Path(b).read_text())
    bad = 0
    for k in sorted(set(A) | set(B)):
        if A.get(k) != B.get(k):
            bad += 1
            print(f"DIFFERENT {k}:\n  {A.get(k)}\n  {B.get(k)}")
    print(f"{len(set(A) | set(B)) - bad} identical, {bad} different")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("path")
    r.add_argument("--real", action="store_true", help="also the real files of bench/er_real.py")
    r.add_argument("--files", default=REAL)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    a = ap.parse_args(argv)
    if a.cmd == "record":
        record(a.path, a.real, a.files)
        return 0
    return compare(a.a, a.b)


if __name__ == "__main__":
    sys.exit(main())
