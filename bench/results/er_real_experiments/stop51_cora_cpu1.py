import sys, time, warnings, json, resource, os
sys.path.insert(0, "/work/wt-cora51/bench")
from pathlib import Path
import numpy as np, pandas as pd
import trustlab
from er_real import load, pairwise
nm, cc = sys.argv[1], int(sys.argv[2])
if nm.startswith("cora"):
    inp = f"/tmp/cora50/{nm}.csv"; truth = pd.read_csv(f"/tmp/cora50/{nm}_truth.csv")["t"].astype(str).to_numpy()
else:
    L = load(nm, Path("/work/shared/data")); inp = [str(p) for p in L[0]]; inp = inp[0] if len(inp) == 1 else inp; truth = np.asarray(L[2]).astype(str)
t0 = time.process_time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve(inp, complete_components=cc)
cpu = time.process_time() - t0
r = pairwise(np.asarray(res.entity), truth)
print(json.dumps(dict(file=nm, cc=cc, F1=round(r["f1"], 4), P=round(r["precision"], 4), R=round(r["recall"], 4), entities=int(len(np.unique(res.entity))),
      completed=int(res.blocking.n_completed_pairs or 0), pairs=int(len(res.pairs)), cpu_s=round(cpu, 1), maxrss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024))), flush=True)
