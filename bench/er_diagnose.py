"""What the unsupervised model learned on one real file, beside what the truth says.

For one data set of ``bench/er_real.py`` (same loading, every default, no labels given to
the model), prints

* pairwise F1 (precision / recall), the compared fields and kinds, the blocking rules;
* the EM sessions (field, candidate pairs, match share, ignored or not), λ and the TF scales;
* per field and level (exact / close / far / else, and missing): the fitted m and u, and
  the *truth's* level shares among the candidate pairs that are true matches and among
  those that are not (what m and u would be if EM had found the true match class);
* per field, the mean field weight (natural-log Bayes factor) over the true positives,
  false negatives and false positives of the clustering (which field holds a missed true
  pair back, which one pushes a false merge).

The truth is read only to print these columns; the model never sees it. Meant for
investigating a file where trustlab is below its peers (``bench/results/er_real.md``).

    PYTHONPATH=. .venv/bin/python bench/er_diagnose.py patent [--data ../shared/data]
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

LEVELS = ("exact", "close", "far", "else")


def _truth_per_row(res, inputs, keys, truth) -> np.ndarray:
    """The true label of every row of the result (dedupe: input order; link: via the keys)."""
    if len(inputs) == 1:
        return np.asarray(truth)
    fr = res.to_frame()
    src = res.settings.get("source_col", "source_dataset")
    id_col = [c for c in fr.columns if c not in (src, "entity_id")][0]
    lab = {(str(k[0]), str(k[1])): t for k, t in zip(keys, truth)}
    return np.array([lab[(str(s), str(i))] for s, i in zip(fr[src], fr[id_col])])


def diagnose(name: str, data: Path) -> str:
    from er_real import load, pairwise

    import trustlab

    inputs, keys, truth = load(name, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if len(inputs) == 1:
            res = trustlab.resolve(str(inputs[0]))
        else:
            res = trustlab.resolve([str(p) for p in inputs], link_type="link_only")
    t = _truth_per_row(res, inputs, keys, truth)
    model = res.model
    out = []
    f1 = pairwise(np.asarray(res.entity), t)
    out.append(f"{name}: F1 {f1['f1']:.4f} (P {f1['precision']:.4f} / R {f1['recall']:.4f}), "
               f"{len(t)} records, {len(set(t.tolist()))} true entities")
    out.append("fields: " + ", ".join(f"{f.column}:{f.kind}" for f in model.fields))
    out.append(f"blocking: {res.blocking.rules} ({res.blocking.n_candidate_pairs} candidate pairs; "
               f"tightened from {res.blocking.tightened_from})")
    out.append(f"lambda {model.lambda_:.4g}; sessions {model.sessions_}; tf_scale {model.tf_scale_}")
    if model.problems_:
        out.append(f"model problems: {model.problems_}")
    P = res.pairs
    same = t[P[:, 0]] == t[P[:, 1]]
    ent = np.asarray(res.entity)
    pred = ent[P[:, 0]] == ent[P[:, 1]]
    groups = {"tp": same & pred, "fn": same & ~pred, "fp": ~same & pred}
    out.append(f"candidate pairs: {len(P)}, true matches among them {int(same.sum())}; "
               + ", ".join(f"{k} {int(v.sum())}" for k, v in groups.items()))
    G = model.levels(res.features)
    W = res.field_weights
    rows = []
    for c, f in enumerate(model.fields):
        g = G[:, c]
        row = {"field": f.column[-40:], "kind": f.kind}
        for who, mask in (("true", same), ("non", ~same)):
            pres = mask & (g >= 0)
            row[f"{who} missing"] = float(1 - pres.sum() / max(mask.sum(), 1))
            for k, lv in enumerate(LEVELS):
                row[f"{who} {lv}"] = float(((g == k) & mask).sum() / max(pres.sum(), 1))
        for k, lv in enumerate(LEVELS):
            row[f"m {lv}"] = float(model.m_[c, k])
            row[f"u {lv}"] = float(model.u_[c, k])
        if W is not None:
            for k, mask in groups.items():
                row[f"W {k}"] = float(W[mask, c].mean()) if mask.any() else float("nan")
        rows.append(row)
    df = pd.DataFrame(rows).set_index("field")
    with pd.option_context("display.width", 250, "display.max_columns", 50):
        out.append("fitted m / u per level:")
        out.append(df[["kind"] + [f"m {lv}" for lv in LEVELS] + [f"u {lv}" for lv in LEVELS]].round(3).to_string())
        out.append("truth: level shares among the candidate pairs that match / do not (present values), "
                   "and the share missing:")
        cols = [f"true {lv}" for lv in LEVELS] + ["true missing"] + [f"non {lv}" for lv in LEVELS] + ["non missing"]
        out.append(df[cols].round(3).to_string())
        if W is not None:
            out.append("mean field weight over true positives / false negatives / false positives:")
            out.append(df[["W tp", "W fn", "W fp"]].round(2).to_string())
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", help="a data set of bench/er_real.py (e.g. patent, jedai_cora, walmart_amazon)")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    a = ap.parse_args(argv)
    print(diagnose(a.name, Path(a.data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
