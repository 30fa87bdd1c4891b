"""Per unproven component of a file's saved W: trivial bound, packing bound, objective.

Usage: PYTHONPATH=.:bench python stop46_bigcomp_packing.py W_DIR JSONL FILE (W_DIR from
bench/er_components.py --save-w). Caveat: components are matched to the JSONL's unproven ones by
size only, so where several components share a size the first unproven record of that size is
printed for each of them; the log counts only sizes that occur once."""
import json, sys, time
from pathlib import Path
import numpy as np, scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
sys.path.insert(0, "bench")
import er_components as E

wdir, jl, name = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
row = [json.loads(l) for l in open(jl) if json.loads(l)["file"] == name][-1]
for f in sorted(wdir.glob("W*.npz")):
    W = sp.coo_matrix(sp.load_npz(f))
    pos = W.data > 0
    g = sp.coo_matrix((np.ones(int(pos.sum())), (W.row[pos], W.col[pos])), shape=W.shape)
    k, lab = connected_components(g, directed=False)
    sizes = np.bincount(lab, minlength=k)
    for c in np.argsort(-sizes):
        if sizes[c] < 2: break
        nodes = np.flatnonzero(lab == c)
        sub = sp.coo_matrix(W.tocsr()[nodes][:, nodes])
        info = [u for u in row["unproven"] if u["size"] == sizes[c]]
        if not info: continue
        u = info[0]
        t0 = time.perf_counter()
        P, lb = E.packing_bound(sub)
        t = time.perf_counter() - t0
        ub = P - lb
        npos = int((sub.data > 0).sum()); nneg = int((sub.data < 0).sum())
        print(json.dumps({"size": int(sizes[c]), "pos_edges": npos, "neg_edges": nneg, "status": u["status"],
              "objective": round(u["objective"], 2), "bound": round(u["bound"], 2), "P": round(P, 2),
              "packing_ub": round(ub, 2), "gap_reported": round(u["gap"], 4),
              "gap_packing": round((ub - u["objective"]) / abs(ub), 4),
              "gap_best": round((min(ub, u["bound"]) - u["objective"]) / abs(min(ub, u["bound"])), 4),
              "packing_s": round(t, 1), "seconds": round(u["seconds"], 1), "method": u["method"],
              "reduced_nodes": u["reduced_nodes"], "largest_part": u["largest_part"],
              "applied": u["reduction_applied"], "root_bound": u["root_bound"]}), flush=True)
