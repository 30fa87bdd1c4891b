"""Ceiling of any per-pair model of jedai_cora's comparison levels: each pair's log-odds set to the truth's
match rate among the pairs with its whole level pattern (all 12 fields, interactions included), then the
default clustering. Also the same restricted to subsets of fields (the rest through the fitted weights)."""
import pickle, sys, numpy as np
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import pairwise
from trustlab.er.cluster import cluster_pairs
from trustlab.er.scoring import to_weights, _distinct_rows_inverse
d = pickle.load(open("/tmp/cora45/jedai_cora.pkl","rb"))
G = np.load("/tmp/cora45/cora_G.npy")
P,p,t,fields = d["P"],d["p"],d["t"],d["fields"]
same = (t[P[:,0]]==t[P[:,1]]).astype(float)
def pat(cols, a=0.5):
    Gu, inv = _distinct_rows_inverse(np.ascontiguousarray(G[:, cols]))
    inv = inv.ravel()
    k = np.bincount(inv, weights=same, minlength=len(Gu)); n = np.bincount(inv, minlength=len(Gu))
    rate = (k + a * 0.02) / (n + a)
    return np.log(rate[inv]) - np.log1p(-rate[inv]), len(Gu)
def score(lo, tag):
    w = to_weights(1/(1+np.exp(-np.clip(lo,-50,50))), "logit")
    r = pairwise(np.asarray(cluster_pairs(len(t), P, w, method="xer").labels), t)
    print(f"{tag}: {r['f1']:.4f} ({r['precision']:.3f} / {r['recall']:.3f})", flush=True)
score(np.log(np.clip(p,1e-300,1))-np.log1p(-np.clip(p,0,1-1e-16)), "fitted")
allc = list(range(len(fields)))
lo, k = pat(allc); score(lo, f"pattern oracle, all fields ({k} patterns)")
# independent (naive Bayes) oracle on the same levels: truth m/u per field level, summed
lam = same.mean(); lo_nb = np.full(len(P), np.log(lam/(1-lam)))
for c in allc:
    g = G[:, c]
    for l in range(-1, 4):
        s = g == l
        if not s.any() or l < 0: continue
        m = (same[s].sum()+0.5)/(same.sum()+2); u = ((1-same[s]).sum()+0.5)/((1-same).sum()+2)
        lo_nb[s] += np.log(m/u)
score(lo_nb, "independent oracle (truth m, u per level, no TF)")
sub = [fields.index(f) for f in ("author","pages","title","venue","year")]
lo, k = pat(sub); score(lo, f"pattern oracle, author/pages/title/venue/year ({k} patterns)")
print("patterns (author,pages,title,venue,year levels; -1 missing) where truth rate > 0.5 and fitted p < 0.5, by true pairs:")
Gs = np.ascontiguousarray(G[:, sub]); Gu, inv = _distinct_rows_inverse(Gs); inv = inv.ravel()
k = np.bincount(inv, weights=same, minlength=len(Gu)); n = np.bincount(inv, minlength=len(Gu))
lo_f = np.log(np.clip(p,1e-300,1))-np.log1p(-np.clip(p,0,1-1e-16))
below = np.bincount(inv, weights=(lo_f < 0).astype(float), minlength=len(Gu))
meanlo = np.bincount(inv, weights=lo_f, minlength=len(Gu)) / np.maximum(n, 1)
o = np.argsort(-(k * (k / np.maximum(n,1) > 0.5) * (below / np.maximum(n,1) > 0.5)))[:15]
for i in o:
    print(dict(zip(["author","pages","title","venue","year"], Gu[i].tolist())), "pairs", int(n[i]), "true", int(k[i]), "fitted mean lo %.1f" % meanlo[i], "below0", int(below[i]))
print("level names: 0 exact, 1 close, 2 far, 3 else")
