"""Diagnosis (truth used only to measure): what whole-record neighbour relations would add to the
Fellegi-Sunter model's calls. python stop53_knn53_evidence.py FILE [VARIANT]   (VARIANT: base | merged)
Resolves with every default, then over the candidate pairs: the whole-record IDF word cosine
(blocking.nearest_pairs' vectors: all non-id columns joined), each record's rank of a candidate among its
own candidates (best = top-1; mutual = best of both), the table-wide K-NN relation (nearest_pairs), and
cross-tabs them with the model's call (p > 0.5): pairs / true. Prints the pair-level F1 of flipping rules."""
import sys, os, time, json
from pathlib import Path
import numpy as np, pandas as pd
import scipy.sparse as sp
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "bench"))
import er_real, er_perturb
import trustlab
from trustlab.er.rules import _norm
from trustlab.er import blocking as B

name = sys.argv[1]; variant = sys.argv[2] if len(sys.argv) > 2 else "merged"
data = Path("/work/shared/data")
inputs, keys, truth = er_real.load(name, data)
tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "knn53_diag"; tmp.mkdir(exist_ok=True)
frames = [er_perturb._sniff_read(Path(p)) for p in inputs]
names = er_perturb.recased_names([c for df in frames for c in df.columns if c != er_perturb._id_col(df)])
paths = []
tmap = {}
if keys is not None:
    tmap = {(str(s), str(i)): t for (s, i), t in zip(keys, truth)}
for k, p in enumerate(inputs):
    df = frames[k]
    df2, kw = er_perturb.perturb(df, variant, 0 + k, names)
    if keys is None:
        df2["__truth"] = truth
    else:
        idc = er_perturb._id_col(df2)
        df2["__truth"] = [tmap[(Path(p).stem, str(i))] for i in df2[idc]]
    q = tmp / f"{name}_{variant}_{k}_{Path(p).stem}.csv"
    df2.to_csv(q, **kw); paths.append(q)
t0 = time.process_time()
if len(paths) == 1:
    r = trustlab.resolve(str(paths[0]), truth="__truth")
else:
    r = trustlab.resolve([str(p) for p in paths], link_type="link_only", truth="__truth")
cpu = time.process_time() - t0
rec = r.records
t = rec["__truth"].astype(str).to_numpy()
P = np.asarray(r.pairs); p = np.asarray(r.prob)
same = t[P[:, 0]] == t[P[:, 1]]
n = len(rec)
if r.link_type == "link_only":
    src = np.asarray(r.source)
    tot = sum(int(a) * int(b) for a, b in pd.crosstab(t, src).to_numpy())
else:
    vc = pd.Series(t).value_counts(); tot = int((vc * (vc - 1) // 2).sum())
idc = [c for c in rec.columns if c.lower() in ("id", "rec_id", "record_id", "__id")]
cols = [c for c in rec.columns if c != "__truth" and not c.startswith("_") and c not in idc and c != r.source_col if hasattr(r, "source_col")] if False else None
cols = [f.column for f in r.fields] if hasattr(r, "fields") else None
if not cols:
    cols = [c for c in rec.columns if c != "__truth" and c != rec.columns[0]]
cols = [c for c in dict.fromkeys(cols) if c in rec.columns]
v = _norm(rec[cols].fillna("").astype(str).agg(" ".join, axis=1)).reset_index(drop=True).str.replace(B._ALNUM_SPLIT, " ", regex=True)
rw, word = B._word_members(v)
key = pd.factorize(word)[0].astype(np.int64)
key, rw = B._distinct_members(rw, key)
cnt = np.bincount(key)
idf = np.log((n + 1.0) / (cnt + 1.0)) + 1.0
X = sp.csr_matrix((idf[key], (rw, key)), shape=(n, len(cnt)))
nr = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
X = sp.csr_matrix(sp.diags(1.0 / np.maximum(nr, 1e-300)) @ X)
i, j = P[:, 0], P[:, 1]
cos = np.asarray(X[i].multiply(X[j]).sum(axis=1)).ravel()
# rank among each record's candidates: best cosine per record
best = np.full(n, -1.0)
np.maximum.at(best, i, cos); np.maximum.at(best, j, cos)
top_i = cos >= best[i] - 1e-12; top_j = cos >= best[j] - 1e-12
mutual = top_i & top_j; oneway = (top_i | top_j) & ~mutual
# table-wide 1-NN and 3-NN (nearest_pairs)
def knn_set(K):
    Q = B.nearest_pairs(v, K)
    return set(map(tuple, np.sort(Q, axis=1).tolist()))
sP = np.sort(P, axis=1)
res = {"file": name, "variant": variant, "fields": [f"{f.column}:{f.kind}" for f in r.fields] if hasattr(r, "fields") else None,
       "n": n, "pairs": int(len(P)), "true_cand": int(same.sum()), "true_total": tot, "cpu": round(cpu, 1),
       "metrics": {k: round(x, 4) for k, x in (r.metrics or {}).items()},
       "expected_matches": round(float(p.sum()), 1), "called": int((p > 0.5).sum())}
call = p > 0.5
tab = {}
for lab, msk in [("mutual", mutual), ("oneway", oneway), ("none", ~(mutual | oneway))]:
    for c, cm in [("called", call), ("not", ~call)]:
        m = msk & cm
        tab[f"{lab}/{c}"] = [int(m.sum()), int((m & same).sum())]
for K in (1, 3):
    S = knn_set(K)
    inK = np.fromiter(((a, b) in S for a, b in sP.tolist()), bool, len(sP))
    for c, cm in [("called", call), ("not", ~call)]:
        m = inK & cm
        tab[f"knn{K}/{c}"] = [int(m.sum()), int((m & same).sum())]
    tab[f"knn{K}/outside_candidates"] = len(S) - int(inK.sum())
res["tab"] = tab
def f1(sel):
    tp = int((sel & same).sum()); pp = int(sel.sum())
    pr = tp / max(pp, 1); rc = tp / max(tot, 1)
    return round(2 * pr * rc / max(pr + rc, 1e-12), 4)
res["pairF1"] = {"model": f1(call), "model|mutual": f1(call | mutual), "model&~none": f1(call & (mutual | oneway)),
                 "model|mutual&p>0.05": f1(call | (mutual & (p > 0.05)))}
res["pairF1"]["ceiling:+true mutual"] = f1(call | (mutual & same))
res["pairF1"]["ceiling:+true mutual|oneway"] = f1(call | ((mutual | oneway) & same))
from scipy.sparse.csgraph import connected_components
def comp_f1(sel):
    A = sp.coo_matrix((np.ones(int(sel.sum())), (i[sel], j[sel])), shape=(n, n))
    _, lab = connected_components(A, directed=False)
    return round(er_real.pairwise(lab.astype(str), t)["f1"], 4)
res["compF1"] = {"model": comp_f1(call), "model|mutual": comp_f1(call | mutual), "model|mutual|oneway": comp_f1(call | mutual | oneway),
                 "ceiling:+true mutual|oneway": comp_f1(call | ((mutual | oneway) & same))}
np.savez_compressed(tmp / f"dump_{name}_{variant}.npz", i=i, j=j, p=p, cos=cos, mutual=mutual, oneway=oneway,
                    same=same, t=t, tot=tot)
print(json.dumps(res))
