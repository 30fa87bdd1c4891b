"""partition() on a saved W (bench/er_components.py --save-w) with a fixed time limit: labels
and per-component statistics, to compare two code versions on the same input.
usage: ctl.py W.npz time_limit out.json"""
import json, sys, time
import numpy as np, scipy.sparse as sp
sys.path.insert(0, "bench")
import er_components as E
from trustlab.solvers import partition

W = sp.coo_matrix(sp.load_npz(sys.argv[1]))
tl = float(sys.argv[2])
t0, c0 = time.perf_counter(), time.process_time()
res = partition(W, method="auto", M=10, random_state=0, time_limit=tl)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
comps = E.solver_components(W, res)
for c, st in zip(comps, res.components):
    c["proved_by"] = st.get("proved_by") or (st.get("phase") if st.get("phase") == "packing" else None)
    c["packing_bound"] = st.get("packing_bound")
json.dump({"time_limit": tl, "wall": wall, "cpu": cpu, "objective": res.objective, "bound": res.bound,
           "labels": np.asarray(res.labels).tolist(), "components": comps}, open(sys.argv[3], "w"), default=float)
un = [c for c in comps if c["status"] not in E.PROVEN]
print(json.dumps({"file": sys.argv[1], "wall": round(wall, 1), "cpu": round(cpu, 1), "n": len(comps),
                  "unproven": len(un), "objective": res.objective, "bound": res.bound}))
