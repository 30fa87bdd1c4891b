"""Offline re-clustering of a pickled resolve (stop45_cora_dump.py) with the pair log-odds changed:
base; linB: + B * Jaccard overlap of the two records' positive (p > 0.5) neighbourhoods; thrJ_B: + B where that
overlap >= J; totcapC: the sum of the negative field weights floored at C; negscaleS: negative field weights x S;
shiftS: + S. Then the default xer clustering. Usage: FILES VARIANTS [JSONL]."""
import pickle, numpy as np, scipy.sparse as sp, sys, time
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import pairwise
from trustlab.er.cluster import cluster_pairs
from trustlab.er.scoring import to_weights

def feats(d):
    P,p = d["P"],d["p"]; n=len(d["t"])
    pos = p>0.5
    A = sp.coo_matrix((np.ones(pos.sum()),(P[pos,0],P[pos,1])),shape=(n,n)).tocsr(); A=A+A.T
    deg = np.asarray(A.sum(1)).ravel()
    S = (A@A).tocsr()
    sh = np.asarray(S[P[:,0],P[:,1]]).ravel()
    un = deg[P[:,0]]+deg[P[:,1]]-sh - 2*pos
    jac = sh/np.maximum(un,1)
    return sh, jac, un

def run(d, v, cache):
    P,p,t = d["P"],d["p"],d["t"]
    lo = np.log(np.clip(p,1e-300,1))-np.log1p(-np.clip(p,0,1-1e-16))
    if "f" not in cache: cache["f"]=feats(d)
    sh,jac,un = cache["f"]
    lo2 = lo.copy()
    for part in v.split("+"):
        if part=="base": pass
        elif part.startswith("lin"):  # lin<beta>: + beta*jac
            lo2 = lo2 + float(part[3:])*jac
        elif part.startswith("totcap"):
            c = float(part[6:]); fw = d["fw"]
            neg = np.minimum(fw, 0).sum(1)
            lo2 = lo2 - neg + np.maximum(neg, c)
        elif part.startswith("negscale"):
            c = float(part[8:]); fw = d["fw"]
            neg = np.minimum(fw, 0).sum(1)
            lo2 = lo2 - neg + c*neg
        elif part.startswith("shift"):
            lo2 = lo2 + float(part[5:])
        elif part.startswith("thr"):  # thr<j>_<b>: + b where jac>=j
            j,b = map(float, part[3:].split("_"))
            lo2 = lo2 + b*(jac>=j)
    pr = 1/(1+np.exp(-np.clip(lo2,-50,50)))
    w = to_weights(pr, "logit")
    cr = cluster_pairs(len(t), P, w, method="xer")
    return pairwise(np.asarray(cr.labels), t)

if __name__ == "__main__":
  for name in sys.argv[1].split(","):
    d = pickle.load(open(f"/tmp/cora45/{name}.pkl","rb"))
    cache={}
    out=[]
    for v in sys.argv[2].split(","):
        t0=time.time(); r = run(d, v, cache)
        out.append(f"{v}:{r['f1']:.4f}({r['precision']:.3f}/{r['recall']:.3f})")
        if len(sys.argv) > 3:
            import json
            with open(sys.argv[3], "a") as fh:
                fh.write(json.dumps({"file": name, "variant": v, "f1": r["f1"], "precision": r["precision"],
                                     "recall": r["recall"], "offline": True}) + "\n")
    print(name, " ".join(out), flush=True)
