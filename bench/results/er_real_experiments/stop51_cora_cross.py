import sys, warnings, pickle, os
sys.path.insert(0, "/work/wt-cora51/bench")
from pathlib import Path
import numpy as np, pandas as pd
import trustlab, trustlab.er.pipeline as PL
from er_real import load
cap = {}
_orf = PL._refit_from_clusters
def rf(data, sc, cr, *a, **k):
    out = _orf(data, sc, cr, *a, **k); cap.update(sc=sc, data=data, cr=out[0]); return out
PL._refit_from_clusters = rf
L = load("jedai_cora", Path("/work/shared/data")); truth = np.asarray(L[2]).astype(str)
with warnings.catch_warnings():
    warnings.simplefilter("ignore"); res = trustlab.resolve(str(L[0][0]))
sc = cap["sc"]; mdl = sc.model
order = cap["data"].order
print("order identity?", np.array_equal(np.asarray(order), np.arange(len(order))))
tr = truth[np.asarray(order)] if order is not None else truth
lab = np.asarray(res.entity)[np.asarray(order)]
fields = [f.column for f in mdl.fields]
lam = np.log(mdl.lambda_/(1-mdl.lambda_)); print("prior", lam, "m*", np.round(mdl.m_,3).tolist())
pickle.dump(dict(pairs=sc.pairs, fw=sc.fw, prob=sc.prob, lab=lab, tr=tr, fields=fields, lam=lam, G=mdl.levels(sc.fm)), open("/tmp/cora51/cross.pkl","wb"))
for k in sys.argv[1:]:
    P = sc.pairs; a, b = P[:,0], P[:,1]
    m = (tr[a]==k)&(tr[b]==k)&(lab[a]!=lab[b])
    print("truth", k, "cross pairs", m.sum(), "mean log-odds", round(float((lam+sc.fw[m].sum(1)).mean()),2))
    print("   per field mean:", {f: round(float(v),2) for f, v in zip(fields, sc.fw[m].mean(0))})
    w = (tr[a]==k)&(tr[b]==k)&(lab[a]==lab[b])
    print("   within mean:", {f: round(float(v),2) for f, v in zip(fields, sc.fw[w].mean(0))})
