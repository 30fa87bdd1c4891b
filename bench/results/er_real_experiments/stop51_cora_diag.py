import sys, warnings, json, time, os
sys.path.insert(0, "/work/wt-cora51/bench")
from pathlib import Path
import numpy as np, pandas as pd
import trustlab, trustlab.er.pipeline as PL
from trustlab.er.scoring import FSModel
from er_real import load, pairwise
nm = sys.argv[1]
if nm.startswith("cora"):
    df = pd.read_csv(f"/tmp/cora50/{nm}.csv"); truth = pd.read_csv(f"/tmp/cora50/{nm}_truth.csv")["t"].astype(str).to_numpy()
else:
    L = load(nm, Path("/work/shared/data")); df, truth = L[0], np.asarray(L[2]).astype(str)
cap = {}
_orf = PL._refit_from_clusters
def rf(data, sc, cr, *a, **k):
    cap["sc"] = sc; cap["data"] = data
    return _orf(data, sc, cr, *a, **k)
PL._refit_from_clusters = rf
_om = FSModel.m_from_clusters
rounds = []
def mfc(self, G, p, W, hidden, forced=None):
    m = _om(self, G, p, W, hidden, forced)
    rounds.append(dict(G=G.copy(), p=p.copy(), W=W.copy(), hidden=hidden.copy(), pairs=cap["sc"].pairs.copy(), m_old=self.m_.copy(), m=None if m is None else m.copy(), u=self.u_.copy(), fields=[f.column+":"+f.kind for f in self.fields]))
    return m
FSModel.m_from_clusters = mfc
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t0=time.process_time(); res = trustlab.resolve(df)
r = pairwise(np.asarray(res.entity), truth)
print(nm, "F1", round(r["f1"],4), "P", round(r["precision"],4), "R", round(r["recall"],4), "ent", len(np.unique(res.entity)), "cpu", round(time.process_time()-t0,1))
for i, R in enumerate(rounds):
    pr = R["pairs"]; tm = truth[pr[:,0]] == truth[pr[:,1]]
    h = R["hidden"]; W = R["W"]; tot = W.sum(1)
    print(f"round {i}: hidden {h.sum()} true {int((h&tm).sum())}; nonhidden p<.5 true {int((~h&tm&(R['p']<.5)).sum())}")
    for c, f in enumerate(R["fields"]):
        g = R["G"][:,c]; ok = g>=0
        sel = ok & h & (tot - W[:,c] > 0)
        print(f"  {f:28s} m_old {np.round(R['m_old'][c],4)} -> {None if R['m'] is None else np.round(R['m'][c],4)} u {np.round(R['u'][c],4)}")
        print(f"     hidden&ok {int((ok&h).sum())} (true {int((ok&h&tm).sum())}) counted {int(sel.sum())} (true {int((sel&tm).sum())}) levels of hidden true: {np.bincount(g[ok&h&tm],minlength=4)[:6]}, counted: {np.bincount(g[sel],minlength=4)[:6]}")
    # truth m per level over all pairs
    print("  truth m:", [np.round(np.bincount(R['G'][tm & (R['G'][:,c]>=0), c], minlength=R['m_old'].shape[1]) / max(1,(tm & (R['G'][:,c]>=0)).sum()),3).tolist() for c in range(len(R['fields']))])
import pickle; pickle.dump(dict(rounds=rounds, truth=truth, entity=np.asarray(res.entity)), open(f"/tmp/cora51/diag_{nm}.pkl","wb"))
