import sys, json, time, warnings
sys.path.insert(0, "/work/wt-cora50/bench")
import numpy as np, pandas as pd
import trustlab, trustlab.er.pipeline as PL
from er_real import pairwise
for nm in sys.argv[1].split(","):
    for rounds in (0, 2):
        PL.REFIT_ROUNDS = rounds
        t = pd.read_csv(f"/tmp/cora50/{nm}_truth.csv")["t"].astype(str).to_numpy()
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = trustlab.resolve(f"/tmp/cora50/{nm}.csv")
        r = pairwise(np.asarray(res.entity), t)
        print(json.dumps(dict(file=nm, refit_rounds=rounds, F1=round(r["f1"], 4), P=round(r["precision"], 4), R=round(r["recall"], 4),
              entities=int(len(np.unique(res.entity))), cpu_s=round(time.process_time() - t0, 1))), flush=True)
