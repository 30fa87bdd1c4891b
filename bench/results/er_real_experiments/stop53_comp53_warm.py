"""Stop 53 (comp53): the triangle LP's cutting planes with a WARM-STARTED dual simplex (scipy's bundled HiGHS class,
scipy.optimize._highspy._core._Highs: rows and columns added to the solved LP, basis kept), against
bounds.triangle_lp_bound (linprog from scratch each round). Same first rows (the packing's wedges), same separation
and row spread; rows are never dropped here. Bound by weak duality from the row duals, as in bounds.py.
Usage: python stop53_comp53_warm.py W.npz ROUNDS"""
import json, sys, time
import numpy as np, scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.optimize._highspy import _core as H
from trustlab.solvers import bounds as B
from trustlab.kernels import packing as K

W = sp.load_npz(sys.argv[1]).tocsr()
W = sp.triu(W, 1) + sp.triu(W, 1).T if (W != W.T).nnz else W
Wp = W.copy(); Wp.data = (Wp.data > 0).astype(float); Wp.eliminate_zeros()
k, lab = connected_components(Wp, directed=False)
big = int(np.argmax(np.bincount(lab))); idx = np.flatnonzero(lab == big)
T = sp.triu(W[idx][:, idx], 1).tocoo()
n, rows, cols, w = len(idx), T.row.astype(np.int64), T.col.astype(np.int64), T.data.astype(np.float64)
m = rows.size
B.warm_once("triangles", B._compile_triangles); B.ensure_compiled()
t0 = time.process_time()
indptr, indices, weights, eid = B._csr(n, rows, cols, w)
P0, lb, steps, _, o1, o2, o3, _ = K.wedge_packing_rows(indptr, indices, weights, eid, m,
                                                        min(B.PACKING_WORK_PER_NODE * n, B.PACKING_MAX_WORK))
best = float(P0 - lb)
h = H._Highs()
h.setOptionValue("output_flag", False)
h.setOptionValue("solver", "simplex")
h.setOptionValue("simplex_strategy", 1)  # dual
h.changeObjectiveSense(H.ObjSense.kMaximize)
col = np.full(m, -1, np.int64)
ncol = 0
R = np.zeros((0, 3), np.int64)
def add(newR):
    global ncol, R
    need = np.unique(newR[newR >= 0]); need = need[col[need] < 0]
    if need.size:
        col[need] = np.arange(ncol, ncol + need.size); ncol += need.size
        h.addCols(need.size, w[need], np.zeros(need.size), np.ones(need.size), 0, np.zeros(0, np.int32),
                  np.zeros(0, np.int32), np.zeros(0))
    k = newR.shape[0]
    starts, idxs, vals = [], [], []
    for r in newR:
        starts.append(len(idxs))
        idxs += [col[r[0]], col[r[1]]]; vals += [1.0, 1.0]
        if r[2] >= 0:
            idxs.append(col[r[2]]); vals.append(-1.0)
    h.addRows(k, np.full(k, -np.inf), np.ones(k), len(idxs), np.asarray(starts, np.int32),
              np.asarray(idxs, np.int32), np.asarray(vals))
    R = np.concatenate([R, newR])
add(np.stack([o1, o2, o3], axis=1))
max_new = max(1, int(B.LP_ROWS_PER_PAIR * np.count_nonzero(w > 0)))
log = []
for rnd in range(int(sys.argv[2])):
    h.run()
    sol = h.getSolution()
    y = np.maximum(-np.asarray(sol.row_dual), 0.0) if np.sum(sol.row_dual) < 0 else np.maximum(np.asarray(sol.row_dual), 0.0)
    used = np.flatnonzero(col >= 0)
    G = sp.csr_matrix((np.concatenate([np.ones(2 * len(R)), -np.ones(int((R[:, 2] >= 0).sum()))]),
                       (np.concatenate([np.arange(len(R)), np.arange(len(R)), np.flatnonzero(R[:, 2] >= 0)]),
                        col[np.concatenate([R[:, 0], R[:, 1], R[R[:, 2] >= 0, 2]])])), shape=(len(R), ncol))
    gty = np.zeros(m); gty[used] = (G.T @ y)[col[used]]
    bound = float(y.sum() + np.maximum(w - gty, 0.0).sum())
    best = min(best, bound)
    x = (w > 0).astype(np.float64); xv = np.asarray(sol.col_value); x[used] = np.clip(xv[col[used]], 0, 1)
    log.append({"round": rnd + 1, "rows": int(len(R)), "bound": bound, "best": best,
                "iters": int(h.getInfo().simplex_iteration_count), "cpu": round(time.process_time() - t0, 2)})
    print(json.dumps(log[-1]), flush=True)
    e1, e2, e3, viol, found, steps, complete = K.violated_triangles(indptr, indices, eid, x, 1e-6, B.LP_MAX_FOUND,
                                                                    B.LP_SEPARATION_WORK)
    if found == 0 and complete:
        break
    order = np.argsort(-viol, kind="stable")
    take = B._spread(e1, e2, order, m, B.LP_ROWS_PER_PAIR_ROUND, max_new)
    add(np.stack([e1[take], e2[take], e3[take]], axis=1))
print("RESULT", json.dumps({"file": sys.argv[1], "n": n, "best": best, "rounds": len(log),
                            "cpu": round(time.process_time() - t0, 2)}), flush=True)
