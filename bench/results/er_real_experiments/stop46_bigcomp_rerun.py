"""partition() on a saved W with the size-scaled default budget (what the clustering step
gets when the call's 240 s plan is not exhausted), per-component statistics."""
import json, sys, time
from pathlib import Path
import numpy as np, scipy.sparse as sp
sys.path.insert(0, "bench")
import er_components as E
from trustlab.solvers import partition
from trustlab.er.defaults import default_time_limit
from scipy.sparse.csgraph import connected_components

W = sp.coo_matrix(sp.load_npz(sys.argv[1]))
kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {"method": "auto", "M": 10, "random_state": 0}
pos = W.data > 0
g = sp.coo_matrix((np.ones(int(pos.sum())), (W.row[pos], W.col[pos])), shape=W.shape)
k, lab = connected_components(g, directed=False)
sizes = np.bincount(lab, minlength=k)
tl = default_time_limit(int(sizes.max()))
t0, c0 = time.perf_counter(), time.process_time()
res = partition(W, time_limit=tl, **kw)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
comps = E.solver_components(W, res)
un = sorted([c for c in comps if c["status"] not in E.PROVEN], key=lambda c: -c["size"])
bands = E.band_counts([c["size"] for c in comps], [c["status"] for c in comps])
print(json.dumps({"time_limit": tl, "wall": round(wall, 1), "cpu": round(cpu, 1), "n": len(comps), "bands": bands}))
for c in un:
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in c.items()
                      if k in ("size", "status", "objective", "bound", "gap", "seconds", "time_budget", "method",
                               "reduced_nodes", "largest_part")}))
json.dump({"time_limit": tl, "wall": wall, "cpu": cpu, "bands": bands, "unproven": un},
          open(sys.argv[3] if len(sys.argv) > 3 else "/tmp/bigcomp46/rerun_out.json", "w"), default=float)
