import sys; sys.path.insert(0, "/tmp/cora48")
from oracle import *
p = d["p"]
lo = np.log(np.clip(p, 1e-300, 1)) - np.log1p(-np.clip(p, 0, 1 - 1e-16))
def cl(lo2, tag):
    w = to_weights(1 / (1 + np.exp(-np.clip(lo2, -50, 50))), "logit")
    r = pairwise(np.asarray(cluster_pairs(len(t), P, w, method="xer").labels), t)
    print(f"{tag}: F1 {r['f1']:.4f} ({r['precision']:.3f} / {r['recall']:.3f})", flush=True)
cl(lo, "fitted")
for s in (-1, 1, 2, 3, 4):
    cl(lo + s, f"shift {s:+}")
for a in (0.8, 1.2):
    cl(lo * a, f"scale {a}")
