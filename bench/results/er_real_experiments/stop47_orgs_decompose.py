"""Stop 47 (orgs47): where each file's pairwise F1 is lost, stage by stage, against the truth.

For each data set of ``bench/er_real.py`` (every default, no labels; the truth only scores):

* ``pc``   share of the true pairs that are scored candidate pairs (blocking + completion);
* ``conn`` share of the true pairs inside the connected components of the *true* candidate pairs
  (what a perfect scorer with transitive closure could reach: blocking's recall bound);
* ``AP``   average precision of the match probability over the candidate pairs (ranking quality);
* ``thrF1`` best pairwise F1 over thresholds on the candidate pairs' probability (pairs above the
  threshold, not closed; recall against *all* true pairs);
* ``ccF1`` best F1 of connected components of the pairs above a threshold (closed);
* ``F1``   the pipeline's clustering.

Also: the largest true entities' size, the share of true pairs inside entities of > 50 records,
and the top false-pair / missed-pair examples (``--examples``).

    PYTHONPATH=. python bench/results/er_real_experiments/stop47_orgs_decompose.py assignees_nber affiliations ...
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def comb2(x):
    x = np.asarray(x, dtype=np.int64)
    return x * (x - 1) // 2


def cc_labels(n, P):
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    A = coo_matrix((np.ones(len(P)), (P[:, 0], P[:, 1])), shape=(n, n))
    return connected_components(A, directed=False)[1]


def pair_counts(pred, truth):
    """tp, predicted pairs, true pairs of two labelings."""
    _, ti = np.unique(truth, return_inverse=True)
    _, pi = np.unique(pred, return_inverse=True)
    joint = ti.astype(np.int64) * (pi.max() + 1) + pi
    tp = comb2(np.bincount(joint)).sum()
    return int(tp), int(comb2(np.bincount(pi)).sum()), int(comb2(np.bincount(ti)).sum())


def f1_of(tp, npred, ntrue):
    p = tp / npred if npred else 0.0
    r = tp / ntrue if ntrue else 0.0
    return (2 * p * r / (p + r) if p + r else 0.0), p, r


def decompose(name, data, examples=0, cc_grid=40):
    from er_real import load, resolve_files
    inputs, keys, truth = load(name, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = resolve_files(inputs, keys)
    if isinstance(res, tuple):
        res = res[0]
    from er_diagnose import _truth_per_row
    t = _truth_per_row(res, inputs, keys, truth)
    _, t = np.unique(t, return_inverse=True)
    n = len(t)
    P, prob = np.asarray(res.pairs), np.asarray(res.prob)
    same = t[P[:, 0]] == t[P[:, 1]]
    sizes = np.bincount(t)
    ntrue = int(comb2(sizes).sum())
    tp, npred, _ = pair_counts(np.asarray(res.entity), t)
    F1, Pp, Rr = f1_of(tp, npred, ntrue)
    pc = same.sum() / ntrue
    conn_lab = cc_labels(n, P[same])
    conn_tp, _, _ = pair_counts(conn_lab, t)
    conn = conn_tp / ntrue
    order = np.argsort(-prob, kind="stable")
    cs = np.cumsum(same[order])
    k = np.arange(1, len(order) + 1)
    prec, rec = cs / k, cs / ntrue
    f = np.where(prec + rec > 0, 2 * prec * rec / np.maximum(prec + rec, 1e-12), 0)
    ib = int(np.argmax(f))
    thrF1, thr = float(f[ib]), float(prob[order][ib])
    ap_cand = float((prec[same[order]]).sum() / max(same.sum(), 1))  # AP over the candidates' true pairs
    f05 = f1_of(int(same[prob > 0.5].sum()), int((prob > 0.5).sum()), ntrue)[0]
    best_cc = (0.0, None)
    for q in np.unique(np.quantile(prob, np.linspace(0, 0.999, cc_grid))):
        lab = cc_labels(n, P[prob >= q])
        fc = f1_of(*pair_counts(lab, t))[0]
        if fc > best_cc[0]:
            best_cc = (fc, float(q))
    big = sizes > 50
    out = dict(file=name, records=n, entities=int(len(sizes)), largest=int(sizes.max()),
               true_pairs=ntrue, share_pairs_in_gt50=float(comb2(sizes[big]).sum() / max(ntrue, 1)),
               candidates=int(len(P)), rules=str(res.blocking.rules),
               tightened_from=str(res.blocking.tightened_from),
               pc=round(float(pc), 4), conn=round(float(conn), 4), AP=round(ap_cand, 4),
               thrF1=round(thrF1, 4), thr=round(thr, 4), F1_p05=round(f05, 4),
               ccF1=round(best_cc[0], 4), cc_thr=best_cc[1],
               F1=round(F1, 4), P=round(Pp, 4), R=round(Rr, 4), pred_entities=int(len(np.unique(res.entity))))
    if examples:
        rec = res.records if res.records is not None else None
        import pandas as pd
        df = pd.read_csv(inputs[0]) if len(inputs) == 1 else None
        col = [c for c in df.columns if c not in ("_row", "record_id")][0] if df is not None else None
        ent = np.asarray(res.entity)
        pred = ent[P[:, 0]] == ent[P[:, 1]]
        def show(mask, title):
            idx = np.flatnonzero(mask)
            idx = idx[np.argsort(-prob[idx])][:examples] if "false" in title else idx[np.argsort(prob[idx])][:examples]
            print(f"--- {title} ({int(mask.sum())})")
            for i in idx:
                a, b = P[i]
                print(f"  {prob[i]:.3f} | {df[col].iloc[a]!s:50.50} | {df[col].iloc[b]!s:50.50}")
        if df is not None:
            show(~same & pred, "false merged candidate pairs, highest p")
            show(same & ~pred & (prob > 0.5), "true pairs p>0.5 split by clustering, lowest p")
            show(same & (prob < 0.5), "true pairs scored < 0.5, random")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+")
    ap.add_argument("--data", default="/work/shared/data")
    ap.add_argument("--examples", type=int, default=0)
    ap.add_argument("--jsonl")
    a = ap.parse_args(argv)
    for nm in a.names:
        r = decompose(nm, Path(a.data), a.examples)
        print(json.dumps(r))
        if a.jsonl:
            with open(a.jsonl, "a") as fh:
                fh.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
