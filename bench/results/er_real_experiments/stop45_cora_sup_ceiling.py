"""Out-of-sample ceiling of per-pair models on jedai_cora's levels: logistic regression on one-hot levels
(independent fields) vs with pairwise interactions of author/pages/title/venue/year levels, trained on the
pairs of half of the entities (and the non-matches among their records) and scored on the other half's records."""
import pickle, sys, numpy as np, scipy.sparse as sp
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import pairwise
from sklearn.linear_model import LogisticRegression
from trustlab.er.cluster import cluster_pairs
from trustlab.er.scoring import to_weights
d = pickle.load(open("/tmp/cora45/jedai_cora.pkl","rb")); G = np.load("/tmp/cora45/cora_G.npy")
P,p,t,fields = d["P"],d["p"],d["t"],d["fields"]
same = t[P[:,0]]==t[P[:,1]]
rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 0); ents = np.unique(t); half = rng.permutation(ents)[:len(ents)//2]
inA = np.isin(t, half)
trainm = inA[P[:,0]] & inA[P[:,1]]; testm = ~inA[P[:,0]] & ~inA[P[:,1]]
def onehot(cols):
    X = [(G[:, c:c+1] == np.arange(-1, 4)[None, :]) for c in cols]
    return np.hstack(X).astype(np.float32)
ind = onehot(range(len(fields)))
sub = [fields.index(f) for f in ("author","pages","title","venue","year")]
inter = []
for a in range(len(sub)):
    for b in range(a+1, len(sub)):
        A = onehot([sub[a]]); B = onehot([sub[b]])
        inter.append((A[:, :, None] * B[:, None, :]).reshape(len(G), -1))
Xi = np.hstack([ind] + inter)
test_rec = np.flatnonzero(~inA); remap = -np.ones(len(t), int); remap[test_rec] = np.arange(len(test_rec))
Pt = remap[P[testm]]; tt = t[test_rec]
lo_f = np.log(np.clip(p,1e-300,1))-np.log1p(-np.clip(p,0,1-1e-16))
def clus(lo, tag):
    w = to_weights(1/(1+np.exp(-np.clip(lo,-50,50))), "logit")
    r = pairwise(np.asarray(cluster_pairs(len(test_rec), Pt, w, method="xer").labels), tt)
    print(f"{tag}: {r['f1']:.4f} ({r['precision']:.3f} / {r['recall']:.3f})", flush=True)
clus(lo_f[testm], "fitted (unsupervised pipeline) on the test half")
for X, tag in [(ind, "logistic, independent levels"), (Xi, "logistic, + pairwise interactions of 5 fields")]:
    for C in (0.1,):
        m = LogisticRegression(C=C, max_iter=2000).fit(X[trainm], same[trainm])
        clus(m.decision_function(X[testm]), f"{tag}, C={C}")
