"""Which pairs the neighbour-overlap bonus (thr0.2_3) joins or splits, against the default clustering."""
import pickle, numpy as np, sys
sys.path.insert(0, "/work/wt-cora45/bench/results/er_real_experiments"); sys.argv=[sys.argv[0]]+sys.argv[1:]
from stop45_cora_offline import feats
from trustlab.er.cluster import cluster_pairs
from trustlab.er.scoring import to_weights
for name in sys.argv[1].split(","):
    d = pickle.load(open(f"/tmp/cora45/{name}.pkl","rb"))
    P,p,t,fw,fields = d["P"],d["p"],d["t"],d["fw"],d["fields"]
    sh,jac,un = feats(d)
    lo = np.log(np.clip(p,1e-300,1))-np.log1p(-np.clip(p,0,1-1e-16))
    same = t[P[:,0]]==t[P[:,1]]
    for v in ["thr0.2_3"]:
        lo2 = lo + 3*(jac>=0.2)
        w = to_weights(1/(1+np.exp(-np.clip(lo2,-50,50))),"logit")
        a = cluster_pairs(len(t),P,to_weights(p,"logit"),method="xer").labels
        b = cluster_pairs(len(t),P,w,method="xer").labels
        pa = a[P[:,0]]==a[P[:,1]]; pb = b[P[:,0]]==b[P[:,1]]
        gain = pb&~pa; loss = pa&~pb
        print(name, "gained joins", gain.sum(), "true", same[gain].sum(), "lost joins", loss.sum(), "true", same[loss].sum())
        for nm,m in [("gained true", gain&same), ("gained false", gain&~same)]:
            if m.sum(): print("  ", nm, "mean lo %.1f"%lo[m].mean(), "jac>=.2 share %.2f"%(jac[m]>=0.2).mean(), dict(zip(fields, np.round(fw[m].mean(0),1))))
