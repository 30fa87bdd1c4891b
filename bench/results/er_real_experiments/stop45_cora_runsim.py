"""resolve with every default on /tmp/cora45/NAME.csv (a simulated file), tag allN: ALL_PAIRS_MAX = N;
EXP_JSONL writes a row; a third argument pickles the result for stop45_cora_offline.py."""
import sys, time, warnings, pickle
import numpy as np, pandas as pd
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import pairwise
import trustlab, trustlab.er.defaults as D
name = sys.argv[1]; tag = sys.argv[2] if len(sys.argv) > 2 else "def"
if tag.startswith("all"):
    D.ALL_PAIRS_MAX = int(tag[3:])
t = pd.read_csv(f"/tmp/cora45/{name}_truth.csv")["t"].astype(str).to_numpy()
t0 = time.time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve(f"/tmp/cora45/{name}.csv")
print(name, tag, "s %.1f" % (time.time() - t0), pairwise(np.asarray(res.entity), t), "pairs", len(res.pairs),
      "cand", res.blocking.n_candidate_pairs, res.blocking.rules, flush=True)
import os, json
if os.environ.get("EXP_JSONL"):
    r = pairwise(np.asarray(res.entity), t)
    with open(os.environ["EXP_JSONL"], "a") as fh:
        fh.write(json.dumps({"file": name, "variant": tag, "f1": r["f1"], "precision": r["precision"], "recall": r["recall"],
                             "pairs": int(len(res.pairs)), "candidates": int(res.blocking.n_candidate_pairs),
                             "rules": list(res.blocking.rules)}) + "\n")
if len(sys.argv) > 3:
    _, tc = np.unique(t, return_inverse=True)
    pickle.dump(dict(P=res.pairs, p=res.prob, w=res.weights, ent=np.asarray(res.entity), t=tc, fw=res.field_weights,
                     fields=[f.column for f in res.model.fields], records=res.records), open(f"/tmp/cora45/{name}_{tag}.pkl", "wb"))
