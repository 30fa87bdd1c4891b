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

With ``--oracle`` it also clusters the candidate pairs again with the fitted per-level Bayes
factors replaced by the *truth's* level shares (m among the candidate pairs that match, u among
those that do not), all fields at once and one field at a time, and prints the pairwise F1 of each:
where a file's loss lies (patent: the u of ``Name`` alone; jedai_cora: spread over every field,
0.896 even with every m and u set to the truth's). These weights are the plain
``log(m/u)`` per level: no term-frequency adjustment and no whole-record overlap correction, so
the "fitted" row differs a little from the pipeline's own result.

The truth is read only to print these columns; the model never sees it. Meant for
investigating a file where trustlab is below its peers (``bench/results/er_real.md``).

    PYTHONPATH=. .venv/bin/python bench/er_diagnose.py patent [--data ../shared/data] [--oracle]
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


def _level_weights(G: np.ndarray, m: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Plain per-field log(m/u) of each pair's level (0 where missing)."""
    bf = np.log(m) - np.log(u)
    W = np.zeros(G.shape)
    for c in range(G.shape[1]):
        ok = G[:, c] >= 0
        W[ok, c] = bf[c][G[ok, c]]
    return W


def oracle_lines(res, t: np.ndarray, G: np.ndarray, same: np.ndarray, time_limit: float = 60.0) -> list[str]:
    """Pairwise F1 of the clustering with the truth's m and/or u in place of the fitted ones."""
    from er_real import pairwise

    from trustlab.er.cluster import cluster_pairs
    from trustlab.er.scoring import to_weights

    model, P, n = res.model, res.pairs, len(t)
    logit = np.log(model.lambda_) - np.log1p(-model.lambda_)

    def truth_share(mask):
        out = np.zeros_like(model.m_)
        for c in range(G.shape[1]):
            g = G[mask, c]
            g = g[g >= 0]
            out[c] = (np.bincount(g, minlength=len(LEVELS)) + 0.5) / (len(g) + 0.5 * len(LEVELS))
        return out

    mt, ut = truth_share(same), truth_share(~same)

    def f1(m, u):
        lw = logit + _level_weights(G, m, u).sum(1)
        w = to_weights(1.0 / (1.0 + np.exp(-np.clip(lw, -50, 50))))
        r = pairwise(np.asarray(cluster_pairs(n, P, w, method="xer", time_limit=time_limit).labels), t)
        return f"F1 {r['f1']:.4f} (P {r['precision']:.3f} / R {r['recall']:.3f})"

    out = ["oracle: clustering F1 with plain log(m/u) level weights (no TF), the fitted lambda:",
           f"  fitted m, fitted u       {f1(model.m_, model.u_)}",
           f"  truth m, fitted u        {f1(mt, model.u_)}",
           f"  fitted m, truth u        {f1(model.m_, ut)}",
           f"  truth m, truth u         {f1(mt, ut)}"]
    for c, f in enumerate(model.fields):
        u1, m1 = model.u_.copy(), model.m_.copy()
        u1[c], m1[c] = ut[c], mt[c]
        out.append(f"  {f.column[-24:]:24s} truth u only: {f1(model.m_, u1)};  truth m and u: {f1(m1, u1)}")
    return out


def diagnose(name: str, data: Path, oracle: bool = False) -> str:
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
    if oracle:
        out.extend(oracle_lines(res, t, G, same))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", help="a data set of bench/er_real.py (e.g. patent, jedai_cora, walmart_amazon)")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--oracle", action="store_true",
                    help="also cluster with the truth's m / u per level (all fields, then one at a time)")
    a = ap.parse_args(argv)
    print(diagnose(a.name, Path(a.data), oracle=a.oracle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
