"""Stop 52 (comp52): the LP budget cap (bounds.LP_MAX_SECONDS) 5 / 10 / 20 / 40 reference s on a saved
W (bench/er_components.py --save-w): the largest component's gap, LP rounds, charged work, wall.
Usage: python stop52_comp52_cap.py W.npz WORK_LIMIT"""
import sys, time
import scipy.sparse as sp
import trustlab.solvers.bounds as B
from trustlab.solvers import partition

W = sp.load_npz(sys.argv[1]).tocsr()
for cap in (5.0, 10.0, 20.0, 40.0):
    B.LP_MAX_SECONDS = cap
    t = time.perf_counter()
    r = partition(W, method="auto", random_state=0, work_limit=float(sys.argv[2]))
    c = max(r.components, key=lambda d: d["size"])
    gap = (c["bound"] - c["objective"]) / abs(c["bound"])
    print(f"cap {cap:5.1f}: size {c['size']} status {c['status']} gap {100 * gap:.3f} % rounds {c.get('lp_bound_rounds')} "
          f"work {c.get('lp_bound_work', 0):.2f} budget {c.get('lp_bound_budget')} lp wall {c.get('lp_bound_seconds', 0):.1f} s "
          f"call wall {time.perf_counter() - t:.1f} s", flush=True)
