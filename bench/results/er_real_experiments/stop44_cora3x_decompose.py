import collections
import pickle
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, "/work/wt-cora44/bench")
from er_real import pairwise

import trustlab

t0 = time.time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve("/tmp/cora44/cora3x.csv")
t = pd.read_csv("/tmp/cora44/cora3x_truth.csv")["t"].to_numpy()
_, tc = np.unique(t, return_inverse=True)
ent = np.asarray(res.entity)
print("s", round(time.time() - t0), res.blocking.rules, res.blocking.n_candidate_pairs, pairwise(ent, tc))
P, p = res.pairs, res.prob
ncand = res.blocking.n_candidate_pairs
same = tc[P[:, 0]] == tc[P[:, 1]]
pred = ent[P[:, 0]] == ent[P[:, 1]]
sizes = np.bincount(tc)
T = int((sizes * (sizes - 1) // 2).sum())
cand = np.arange(len(P)) < ncand
print(
    "true pairs",
    T,
    "compared: cand",
    int((same & cand).sum()),
    "completed",
    int((same & ~cand).sum()),
    "never",
    T - int(same.sum()),
)
ct = collections.Counter(zip(tc, ent))
TP = sum(v * (v - 1) // 2 for v in ct.values())
print("TP", TP, "TP among compared", int((same & pred).sum()), "-> via never-compared", TP - int((same & pred).sum()))
print(
    "p>0.5 joined/split",
    int((same & (p > 0.5) & pred).sum()),
    int((same & (p > 0.5) & ~pred).sum()),
    " p<=0.5 joined/split",
    int((same & (p <= 0.5) & pred).sum()),
    int((same & (p <= 0.5) & ~pred).sum()),
)
print("status", getattr(res, "clustering", None) and None)
pickle.dump(
    dict(
        P=P,
        p=p,
        ent=ent,
        t=tc,
        ncand=ncand,
        fw=np.asarray(res.field_weights),
        fields=[f.column for f in res.model.fields],
    ),
    open("/tmp/cora44/cora3x_res.pkl", "wb"),
)
