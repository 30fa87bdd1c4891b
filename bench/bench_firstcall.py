"""First-call cost of each kernel family in a fresh process (warm Numba cache).

Run: .venv/bin/python bench/bench_firstcall.py [REPEAT]   (prints markdown rows: import, first call,
second call, whether Numba's parallel runtime was started, heavy modules imported, load)."""
import json
import os
import subprocess
import sys

CASES = {
    "maximal_cliques": ("from trustlab.cliques import maximal_cliques", "maximal_cliques([[0,1],[1,2],[2,0],[2,3]])"),
    "count_maximal_cliques": (
        "from trustlab.cliques import count_maximal_cliques",
        "count_maximal_cliques([[0,1],[1,2],[2,0],[2,3]])",
    ),
    "count_cliques": ("from trustlab.cliques import count_cliques", "count_cliques([[0,1],[1,2],[2,0],[2,3]])"),
    "privatize": (
        "import numpy as np; from trustlab.privacy import privatize; "
        "X=np.random.default_rng(0).standard_normal((100,300)).astype(np.float32)",
        "privatize(X, epsilon=1.0)",
    ),
    "weat": (
        "import numpy as np; from trustlab.metrics.bias import weat; rng=np.random.default_rng(0); "
        "w=['x1','x2','y1','y2','a1','a2','b1','b2']; emb=dict(zip(w, rng.normal(size=(8,5))))",
        "weat(emb, ['x1','x2'], ['y1','y2'], ['a1','a2'], ['b1','b2'])",
    ),
    "partition (CPP)": (
        "import networkx as nx; from trustlab import partition; G=nx.Graph(); "
        "G.add_weighted_edges_from([(7,12,0.456),(7,20,0.999),(12,20,0.085),(7,25,-0.076),(12,25,-0.156),(20,25,-0.253)])",
        "partition(G, method='cpp', random_state=0)",
    ),
}
CODE = """
import time, json, sys
t0 = time.perf_counter()
{setup}
t1 = time.perf_counter()
{call}
t2 = time.perf_counter()
{call}
t3 = time.perf_counter()
par = sys.modules.get('numba.np.ufunc.parallel')
par = par is not None and getattr(par, '_is_initialized', False)
heavy = [m for m in ("pandas", "sklearn", "scipy.linalg", "scipy.stats", "ortools") if m in sys.modules]
print(json.dumps({{"import": t1 - t0, "first": t2 - t1, "second": t3 - t2, "parallel_runtime": bool(par),
                  "heavy": heavy}}))
"""
for name, (setup, call) in CASES.items():
    best = None
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        p = subprocess.run([sys.executable, "-c", CODE.format(setup=setup, call=call)], capture_output=True, text=True)
        if p.returncode:
            print(name, "FAILED", p.stderr[-500:])
            break
        r = json.loads(p.stdout.strip().splitlines()[-1])
        if best is None or r["import"] + r["first"] < best["import"] + best["first"]:
            best = r
    if best:
        print(
            f"| {name} | {best['import']:.2f} s | {best['first']:.2f} s | {best['second'] * 1e3:.1f} ms "
            f"| {best['parallel_runtime']} | {', '.join(best['heavy']) or '-'} | {os.getloadavg()[0]:.1f} |",
            flush=True,
        )
