"""Oracle of a comparison design: truth m/u per level per field, summed (independent), clustered."""
import pickle, sys, time, numpy as np
sys.path.insert(0, "/work/wt-cora48/bench")
from er_real import pairwise
from trustlab.er.cluster import cluster_pairs
from trustlab.er.scoring import to_weights
from trustlab.er.comparisons import compare
from trustlab.er.kinds import Field, KINDS, needed_features
from trustlab.er.scoring import _feature_index
d = pickle.load(open("/tmp/cora48/jedai_cora.pkl", "rb"))
P, t, df = d["P"], d["t"], d["records"]
assert (df["_row"].to_numpy() == np.arange(len(df))).all()
same = t[P[:, 0]] == t[P[:, 1]]

def levels_of(f, cuts=None):
    fm = compare(df, P, [f], only=needed_features([f]))
    ex_name, sim_name, t1, t2, _ = KINDS[f.kind].levels
    kx, ks = _feature_index(fm.names, f.column, ex_name), _feature_index(fm.names, f.column, sim_name)
    ex, sim = fm.X[:, kx], fm.X[:, ks]
    ok = ~np.isnan(ex) & ~np.isnan(sim)
    cuts = cuts if cuts is not None else [c for c in (t1, t2) if c is not None]
    g = np.full(len(P), len(cuts) + 1, np.int8)
    for k, c in reversed(list(enumerate(cuts))):
        g[sim >= c] = k + 1
    g[ex >= 1 - 1e-9] = 0
    return np.where(ok, g, -1), sim

def oracle(G, tag):
    lam = same.mean(); lo = np.full(len(P), np.log(lam / (1 - lam)))
    for c in range(G.shape[1]):
        g = G[:, c]
        for l in range(0, int(g.max()) + 1):
            s = g == l
            if not s.any(): continue
            m = (same[s].sum() + 0.5) / (same.sum() + 2); u = ((~same[s]).sum() + 0.5) / ((~same).sum() + 2)
            lo[s] += np.log(m / u)
    import os
    w = to_weights(1 / (1 + np.exp(-np.clip(lo, -50, 50))), os.environ.get("OW", "logit"))
    r = pairwise(np.asarray(cluster_pairs(len(t), P, w, method="xer").labels), t)
    # AP
    o = np.argsort(-lo, kind="stable"); cs = np.cumsum(same[o]); k = np.arange(1, len(o) + 1)
    ap = float((cs / k)[same[o]].sum() / same.sum())
    print(f"{tag}: F1 {r['f1']:.4f} ({r['precision']:.3f} / {r['recall']:.3f}) AP {ap:.4f}", flush=True)
    return r

if __name__ == "__main__":
    base = d["fields"]
    G0 = d["G"]
    oracle(G0, "current design (pipeline levels)")
