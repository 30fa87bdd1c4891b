"""Stop 53 (comp53): the triangle LP bound's CPU by HiGHS method (ipm with crossover, dual simplex) on a saved W's largest component, 12 rounds, work cap MAX_SECONDS reference s (default: none).
Usage: python stop53_comp53_lpmethod.py W.npz [MAX_SECONDS]"""
import json, sys, time
import numpy as np, scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
import scipy.optimize as so
from trustlab.solvers import bounds as B

W = sp.load_npz(sys.argv[1]).tocsr()
W = sp.triu(W, 1) + sp.triu(W, 1).T if (W != W.T).nnz else W
Wp = W.copy(); Wp.data = (Wp.data > 0).astype(float); Wp.eliminate_zeros()
k, lab = connected_components(Wp, directed=False)
big = int(np.argmax(np.bincount(lab))); idx = np.flatnonzero(lab == big)
T = sp.triu(W[idx][:, idx], 1).tocoo()
orig = so.linprog
for meth, extra in (("highs-ipm", {}), ("highs-ds", {})):
    def lp(*a, **kw):
        kw["method"] = meth
        kw["options"] = {**kw.get("options", {}), **extra}
        if extra:
            kw["options"].pop("maxiter", None)
        return orig(*a, **kw)
    so.linprog = lp
    t = time.process_time()
    b = B.triangle_lp_bound(len(idx), T.row.astype(np.int64), T.col.astype(np.int64), T.data, max_seconds=float(sys.argv[2]) if len(sys.argv) > 2 else 1e9)
    print(json.dumps({"method": meth, **extra, "bound": b["bound"], "rounds": b["rounds"], "work": b["work"],
                      "cpu": round(time.process_time() - t, 1)}), flush=True)
