import sys, warnings, os
sys.path.insert(0, "/work/wt-cora51/bench")
import numpy as np, pandas as pd
import trustlab, trustlab.er.defaults as D, trustlab.er.model as MD
from er_real import pairwise
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
if os.environ.get("EXP_ALL"): D.ALL_PAIRS_MAX = 10**6
nm = sys.argv[1]
t = pd.read_csv(f"/tmp/cora50/{nm}_truth.csv")["t"].astype(str).to_numpy()
with warnings.catch_warnings():
    warnings.simplefilter("ignore"); res = trustlab.resolve(f"/tmp/cora50/{nm}.csv")
ent = np.asarray(res.entity); r = pairwise(ent, t)
ti = np.unique(t, return_inverse=True)[1]; P = np.asarray(res.pairs); same = ti[P[:,0]]==ti[P[:,1]]
sz = np.bincount(ti); ntrue = int((sz*(sz-1)//2).sum())
n = len(t); g = coo_matrix((np.ones(same.sum()), (P[same,0], P[same,1])), shape=(n,n))
k, lab = connected_components(g, directed=False)
# pairs of truth-entities connected within candidate true-pair graph
df = pd.DataFrame(dict(t=ti, c=lab)); conn = sum((v.value_counts()**2).sum()-len(v) for _, v in df.groupby("t")["c"])/2/ntrue
print(nm, "F1", round(r["f1"],4), "P", round(r["precision"],4), "R", round(r["recall"],4), "pc", round(same.sum()/ntrue,4), "conn(true-pair graph)", round(conn,4), "rules", res.blocking.rules, "cands", len(P), "max entity", sz.max(), "n", n)
w = np.asarray(res.weights); pos = w > 0
g2 = coo_matrix((np.ones(pos.sum()), (P[pos,0], P[pos,1])), shape=(n,n))
k2, lab2 = connected_components(g2, directed=False)
s2 = np.bincount(lab2); print("positive components: largest", sorted(s2)[-5:], "n>1000", (s2>1000).sum())
# true pairs not compared: are they inside one positive component?
tp_all = ntrue; 
df2 = pd.DataFrame(dict(t=ti, c=lab2)); inside = sum((v.value_counts()**2).sum()-len(v) for _, v in df2.groupby("t")["c"])/2
print("true pairs within one positive component", inside, "of", ntrue, "compared true", same.sum())
import pickle; pickle.dump(dict(truth=t, entity=ent), open(f"/tmp/cora51/split_{nm}.pkl","wb"))
