"""Stop 53 (comp53): which side of a large component's gap is loose -- the primal (heuristic objective) or
the bound? On a saved W (bench/er_components.py --save-w), the largest component (positive-edge connectivity):
(1) partition() with every default (lp_bound off) on the component alone: objective, packing bound, CPU;
(2) the same search with longer patience (x4, x16) and other seeds: how far the primal can still move;
(3) the triangle LP by cutting planes with no work cap and up to 40 rounds: how far the bound can move.
Usage: python stop53_comp53_sides.py W.npz WORK_LIMIT [LP_ROUNDS, e.g. 12,40; 0: no LP] [PATIENCE_FACTORS, e.g. 4,16]"""
import json, sys, time
import numpy as np, scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from trustlab.solvers import partition
from trustlab.solvers import bounds as B
from trustlab.solvers.heuristic import default_patience

W = sp.load_npz(sys.argv[1]).tocsr()
W = sp.triu(W, 1) + sp.triu(W, 1).T if (W != W.T).nnz else W
Wp = W.copy(); Wp.data = (Wp.data > 0).astype(float); Wp.eliminate_zeros()
k, lab = connected_components(Wp, directed=False)
big = int(np.argmax(np.bincount(lab))); idx = np.flatnonzero(lab == big)
S = W[idx][:, idx].tocsr()
n = len(idx)
out = {"file": sys.argv[1], "n": n, "pairs": int(sp.triu(S, 1).nnz)}
def run(**kw):
    t = time.process_time()
    r = partition(S, method="auto", random_state=kw.pop("seed", 0), work_limit=float(sys.argv[2]), **kw)
    c = max(r.components, key=lambda d: d["size"])
    return {"objective": c["objective"], "bound": c["bound"], "status": c["status"], "method": c.get("method"),
            "work": c.get("work_spent"), "lp_bound": c.get("lp_bound"), "cpu": round(time.process_time() - t, 1)}
out["default"] = run()
print(json.dumps(out), flush=True)
p0 = default_patience(n)
for f in [int(v) for v in (sys.argv[4] if len(sys.argv) > 4 else "4,16").split(",") if int(v) > 0]:
    out[f"patience_x{f}"] = run(heuristic_patience=p0 * f)
    print(json.dumps(out[f"patience_x{f}"]), flush=True)
for s in (1, 2):
    out[f"seed{s}"] = run(seed=s)
    print(json.dumps(out[f"seed{s}"]), flush=True)
LP_ROUNDS = [int(v) for v in (sys.argv[3] if len(sys.argv) > 3 else "12,40").split(",") if int(v) > 0]
if LP_ROUNDS:
    T = sp.triu(S, 1).tocoo()
    for rounds in LP_ROUNDS:
        t = time.process_time()
        b = B.triangle_lp_bound(n, T.row.astype(np.int64), T.col.astype(np.int64), T.data, max_rounds=rounds,
                                max_seconds=1e9)
        out[f"lp{rounds}"] = {"bound": b["bound"], "rounds": b["rounds"], "complete": b["complete"],
                              "work": b["work"], "cpu": round(time.process_time() - t, 1)}
        print(json.dumps(out[f"lp{rounds}"]), flush=True)
best = max(v["objective"] for kk, v in out.items() if isinstance(v, dict) and "objective" in v)
ub = min([out["default"]["bound"]] + [v["bound"] for kk, v in out.items() if kk.startswith("lp")])
out["best_objective"], out["best_bound"] = best, ub
out["gap_default"] = (out["default"]["bound"] - out["default"]["objective"]) / ub
out["gap_primal_part"] = (best - out["default"]["objective"]) / ub
out["gap_best"] = (ub - best) / ub
print("RESULT", json.dumps(out), flush=True)
