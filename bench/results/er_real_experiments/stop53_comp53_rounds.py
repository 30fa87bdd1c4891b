"""Stop 53 (comp53): the triangle LP bound (dual simplex, bounds.LP_METHOD) by its round cap on a saved W's largest
component, under the default work cap (bounds.LP_MAX_SECONDS): bound, gap to OBJECTIVE, rounds, charged work, CPU.
Usage: python stop53_comp53_rounds.py W.npz OBJECTIVE ROUNDS[,ROUNDS...]"""
import json, sys, time
import numpy as np, scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from trustlab.solvers import bounds as B

W = sp.load_npz(sys.argv[1]).tocsr()
W = sp.triu(W, 1) + sp.triu(W, 1).T if (W != W.T).nnz else W
Wp = W.copy(); Wp.data = (Wp.data > 0).astype(float); Wp.eliminate_zeros()
k, lab = connected_components(Wp, directed=False)
big = int(np.argmax(np.bincount(lab))); idx = np.flatnonzero(lab == big)
T = sp.triu(W[idx][:, idx], 1).tocoo()
obj = float(sys.argv[2])
for rounds in [int(v) for v in sys.argv[3].split(",")]:
    t = time.process_time()
    b = B.triangle_lp_bound(len(idx), T.row.astype(np.int64), T.col.astype(np.int64), T.data, max_rounds=rounds)
    print(json.dumps({"method": B.LP_METHOD, "max_rounds": rounds, "bound": b["bound"], "gap_pct": 100 * (b["bound"] - obj) / b["bound"],
                      "rounds": b["rounds"], "complete": b["complete"], "work": b["work"],
                      "cpu": round(time.process_time() - t, 1)}), flush=True)
