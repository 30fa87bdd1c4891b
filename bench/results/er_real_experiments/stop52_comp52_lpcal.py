"""Stop 52 (comp52): calibrate the triangle LP's cost: per LP solve, rows k, pairs m, nnz,
HiGHS iterations and CPU seconds (process_time), on planted graphs shaped like the suite's
unproven components. Usage: python stop52_comp52_lpcal.py OUT.jsonl"""
import json, sys, time
import numpy as np
import scipy.optimize as so
import networkx as nx
from trustlab.solvers.synthetic import planted_er_graph
from trustlab.solvers import bounds

out = open(sys.argv[1], "w")
orig = so.linprog
cur = {}

def rec(c, A_ub=None, b_ub=None, bounds=None, method=None, options=None):
    t, tw = time.process_time(), time.perf_counter()
    res = orig(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method=method, options=options)
    d = dict(cur, k=int(A_ub.shape[0]), m=int(A_ub.shape[1]), nnz=int(A_ub.nnz), nit=int(getattr(res, "nit", -1)),
             status=int(res.status), cpu=time.process_time() - t, wall=time.perf_counter() - tw, method=method)
    out.write(json.dumps(d) + "\n"); out.flush()
    return res

so.linprog = rec
bounds.LP_MAX_WALL_SECONDS = 1e9
cases = [(300, 40.0, -0.9, 0.5, 1), (500, 60.0, -0.9, 0.5, 2), (800, 100.0, -0.95, 0.5, 3), (1500, 8.0, -0.2, 0.4, 4),
         (3000, 6.0, 0.0, 0.4, 5)]
for n, mc, thr, sg, seed in cases:
    G, _ = planted_er_graph(n, mc, thr, sigma=sg, random_state=seed)
    e = np.array([(u, v, d["weight"]) for u, v, d in G.edges(data=True)])
    r, c, w = e[:, 0].astype(np.int64), e[:, 1].astype(np.int64), e[:, 2]
    cur = {"n": n, "pairs": int(r.size)}
    t = time.process_time()
    b = bounds.triangle_lp_bound(n, r, c, w, max_seconds=1e9, max_rounds=6)
    print(n, r.size, b, time.process_time() - t, flush=True)
