"""method="heuristic" (no time limit, stops by its own rule) on a saved W: labels, for an identity check."""
import json, sys, time
import numpy as np, scipy.sparse as sp
from trustlab.solvers import partition
W = sp.coo_matrix(sp.load_npz(sys.argv[1]))
t0 = time.perf_counter()
res = partition(W, method="heuristic", random_state=0, time_limit=float("inf"))
json.dump({"labels": np.asarray(res.labels).tolist(), "objective": res.objective, "bound": res.bound,
           "status": [c["status"] for c in res.components], "wall": time.perf_counter() - t0}, open(sys.argv[2], "w"))
print(sys.argv[1], res.objective, res.bound, res.status, round(time.perf_counter() - t0, 1))
