"""Offline (truth only to score): the neighbour level as one more Fellegi-Sunter field, fitted by EM on the
candidate pairs with the default model's log-odds as a fixed offset (conditional independence assumed), from the
dumps of stop53_knn53_evidence.py. python stop53_knn53_offset_em.py DUMP.npz ...
Levels: mutual best among the candidates / best of one record / neither (cosine = whole-record IDF word cosine).
Prints: the fitted m, u and weights, the pairs called (p > 0.5) and pair / connected-component F1 before -> after,
and the gate's inputs (the model's expected matches, the pairs it calls)."""
import sys, json
from pathlib import Path
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
import er_real

for path in sys.argv[1:]:
    d = np.load(path, allow_pickle=True)
    i, j, p, same, t, tot = d["i"], d["j"], d["p"], d["same"], d["t"], int(d["tot"])
    L = np.where(d["mutual"], 0, np.where(d["oneway"], 1, 2))
    n = len(t)
    q = np.clip(p, 1e-12, 1 - 1e-12)
    off = np.log(q / (1 - q))
    w = np.zeros(3)
    for it in range(200):
        post = 1 / (1 + np.exp(-(off + w[L])))
        m = np.bincount(L, post, 3) / post.sum()
        u = np.bincount(L, 1 - post, 3) / (1 - post).sum()
        w2 = np.log(np.maximum(m, 1e-12) / np.maximum(u, 1e-12))
        if np.abs(w2 - w).max() < 1e-9:
            break
        w = w2
    post = 1 / (1 + np.exp(-(off + w[L])))
    def f1(sel):
        tp = int((sel & same).sum()); pp = int(sel.sum())
        pr = tp / max(pp, 1); rc = tp / max(tot, 1)
        return round(2 * pr * rc / max(pr + rc, 1e-12), 4)
    def comp(sel):
        A = sp.coo_matrix((np.ones(int(sel.sum())), (i[sel], j[sel])), shape=(n, n))
        _, lab = connected_components(A, directed=False)
        return round(er_real.pairwise(lab.astype(str), t)["f1"], 4)
    a, b = p > 0.5, post > 0.5
    print(json.dumps({"dump": Path(path).stem, "expected": round(float(p.sum()), 1), "called": int(a.sum()),
                      "ratio": round(float(p.sum()) / max(int(a.sum()), 1), 3),
                      "m": m.round(3).tolist(), "u": u.round(4).tolist(), "w": w.round(2).tolist(), "iters": it,
                      "called_after": int(b.sum()), "true_called": [int((a & same).sum()), int((b & same).sum())],
                      "pairF1": [f1(a), f1(b)], "compF1": [comp(a), comp(b)]}))
