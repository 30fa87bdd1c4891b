import sys; sys.path.insert(0, "/tmp/cora48")
from oracle import *
G = d["G"]; ent = d["ent"]; m0 = np.asarray(d["m"]); u0 = np.asarray(d["u"]); lam0 = d["lam"]
def score(m, u, lam, tag):
    lo = np.full(len(P), np.log(lam / (1 - lam)))
    for c in range(G.shape[1]):
        g = G[:, c]; ok = g >= 0
        bf = np.log(m[c] / u[c])
        if d["fields"][c].kind == "codes":
            bf[2] = min(bf[3], -abs(bf[0]))
        lo[ok] += bf[g[ok]]
    for kind in ("logit", "centered"):
        w = to_weights(1 / (1 + np.exp(-np.clip(lo, -50, 50))), kind)
        lab = np.asarray(cluster_pairs(len(t), P, w, method="xer").labels)
        r = pairwise(lab, t)
        print(f"{tag} [{kind}]: F1 {r['f1']:.4f} ({r['precision']:.3f} / {r['recall']:.3f})", flush=True)
    return lab
def m_from(lab, a=0.5):
    inside = lab[P[:, 0]] == lab[P[:, 1]]
    m = np.zeros_like(m0)
    for c in range(G.shape[1]):
        g = G[inside, c]; g = g[g >= 0]
        m[c] = (np.bincount(g, minlength=4) + a * m0[c] * 4) / (len(g) + a * 4)
    return m, inside.mean()
lab = score(m0, u0, lam0, "offline, fitted m/u, no TF")
p = d["p"]; lo_p = np.log(np.clip(p,1e-300,1)) - np.log1p(-np.clip(p,0,1-1e-16))
for kind in ("logit", "centered"):
    r = pairwise(np.asarray(cluster_pairs(len(t), P, to_weights(p, kind), method="xer").labels), t)
    print(f"pipeline p [{kind}]: F1 {r['f1']:.4f} ({r['precision']:.3f} / {r['recall']:.3f})", flush=True)
lab_p = ent
for it in range(1):
    m1, lam1 = m_from(lab_p)
    lab_p = score(m1, u0, lam1, f"m from the clusters (round {it+1}), lam {lam1:.4f}")
m1, lam1 = m_from(ent)
score(m1, u0, lam0, "m from pipeline clusters, lam fitted")
