import pickle, numpy as np
d = pickle.load(open("/tmp/cora51/cross.pkl","rb"))
P, G, tr, lab, fields = d["pairs"], d["G"], d["tr"], d["lab"], d["fields"]
tm = tr[P[:,0]]==tr[P[:,1]]; cm = lab[P[:,0]]==lab[P[:,1]]
print("pairs", len(P), "true", tm.sum(), "clustered", cm.sum())
for c, f in enumerate(fields):
    g = G[:,c]; ok = g>=0
    def dist(mask): 
        x = np.bincount(g[ok&mask], minlength=4)[:4]; return np.round(x/max(1,x.sum()),4)
    print(f"{f:10s} u_truth {dist(~tm)} u_clusters {dist(~cm)} u_all {dist(np.ones_like(tm))} | m_truth {dist(tm)} m_clusters {dist(cm)}")
ti = fields.index("title"); ai = fields.index("author"); yi = fields.index("year"); vi = fields.index("venue"); pi_ = fields.index("pages")
te = G[:,ti]==0
for nm, msk in [("title exact", te), ("title exact & author exact/close", te & (G[:,ai]<=1) & (G[:,ai]>=0)),
                ("title exact & author ok & year else", te & (G[:,ai]<=1)&(G[:,ai]>=0)&(G[:,yi]==3)),
                ("title exact & author ok & year else & pages else", te & (G[:,ai]<=1)&(G[:,ai]>=0)&(G[:,yi]==3)&(G[:,pi_]==3))]:
    print(nm, msk.sum(), "truth match", round(tm[msk].mean(),3), "clustered", round(cm[msk].mean(),3))
# non-match same-title pairs: which truth entities
m = te & ~tm
import collections
cnt = collections.Counter(zip(tr[P[m,0]], tr[P[m,1]]))
print(cnt.most_common(10))
