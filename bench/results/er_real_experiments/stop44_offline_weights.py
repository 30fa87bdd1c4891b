import pickle
import sys

import numpy as np

sys.path.insert(0, "/work/wt-cora44/bench")
sys.path.insert(0, "/work/wt-cora44")
from er_real import pairwise

from trustlab.er.cluster import cluster_pairs

files = sys.argv[1].split(",")
variants = sys.argv[2].split(",")


def run(d, v):
    P, p, t, fw, fields = d["P"], d["p"], d["t"], d["fw"], d["fields"]
    lo = np.log(np.clip(p, 1e-300, 1)) - np.log1p(-np.clip(p, 0, 1 - 1e-16))
    base = lo - fw.sum(1)
    der = np.array([f in ("*", "#") for f in fields])
    f2 = fw.copy()
    negclip = -12.0
    for part in v.split("+"):
        if part == "asis":
            pass
        elif part.startswith("cap"):
            f2 = np.maximum(f2, float(part[3:]))
        elif part == "derpos":
            f2[:, der] = np.maximum(f2[:, der], 0)
        elif part.startswith("neg"):
            negclip = float(part[3:])
        elif part.startswith("totcap"):  # total negative evidence capped
            c = float(part[6:])
            neg = np.minimum(f2, 0).sum(1)
            pos = np.maximum(f2, 0).sum(1)
            f2 = np.c_[pos, np.maximum(neg, c)]
    l2 = base + f2.sum(1)
    w = np.clip(l2, negclip, 12)
    lab = cluster_pairs(len(t), P, w, method="xer").labels
    r = pairwise(np.asarray(lab), t)
    return r


for name in files:
    d = pickle.load(open(f"/tmp/cora44/{name}_res.pkl", "rb"))
    out = []
    for v in variants:
        r = run(d, v)
        out.append(f"{v}:{r['f1']:.4f}({r['precision']:.3f}/{r['recall']:.3f})")
    print(name, " ".join(out), flush=True)
