"""Decompose the recall loss by stage: blocking, scoring, clustering. Pickles the result for reuse."""

import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, "/work/wt-cora44/bench")
from er_real import load, pairwise

import trustlab

name = sys.argv[1] if len(sys.argv) > 1 else "jedai_cora"
inputs, keys, truth = load(name, Path("/work/shared/data"))
t0 = time.time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve(str(inputs[0]))
print("resolve s", time.time() - t0)
t = np.asarray(truth)
n = len(t)
_, tc = np.unique(t, return_inverse=True)
ent = np.asarray(res.entity)
print(pairwise(ent, t))
P = res.pairs
p = res.prob
ncand = res.blocking.n_candidate_pairs
print("pairs", len(P), "candidates", ncand, "completed", len(P) - ncand)
same = tc[P[:, 0]] == tc[P[:, 1]]
pred = ent[P[:, 0]] == ent[P[:, 1]]
sizes = np.bincount(tc)
T = int((sizes * (sizes - 1) // 2).sum())
print("true pairs", T, "entities", len(sizes), "largest", np.sort(sizes)[-10:])
cand = np.zeros(len(P), bool)
cand[:ncand] = True
comp = ~cand
# predicted pairs overall
_, ec = np.unique(ent, return_inverse=True)
es = np.bincount(ec)
predpairs = int((es * (es - 1) // 2).sum())
# true & predicted overall: count via contingency
import collections

ct = collections.Counter(zip(tc, ec))
TP = sum(v * (v - 1) // 2 for v in ct.values())
print("TP", TP, "pred pairs", predpairs, "recall", TP / T, "prec", TP / predpairs)
tp_cmp = same & pred
print(
    "true pairs compared (cand)",
    int((same & cand).sum()),
    "completed",
    int((same & comp).sum()),
    "never compared",
    T - int(same.sum()),
)
print("true compared with p>0.5:", int((same & (p > 0.5)).sum()), " p<=0.5:", int((same & (p <= 0.5)).sum()))
print("  of p>0.5 true: joined", int((same & (p > 0.5) & pred).sum()), "split", int((same & (p > 0.5) & ~pred).sum()))
print(
    "  of p<=0.5 true: joined (transitively)",
    int((same & (p <= 0.5) & pred).sum()),
    "split",
    int((same & (p <= 0.5) & ~pred).sum()),
)
print("TP among never-compared pairs", TP - int(tp_cmp.sum()))
print("false compared p>0.5", int((~same & (p > 0.5)).sum()), "false joined compared", int((~same & pred).sum()))
pickle.dump(
    dict(P=P, p=p, ent=ent, t=tc, ncand=ncand, fw=res.field_weights, fields=[f.column for f in res.model.fields]),
    open(f"/tmp/cora44/{name}_res.pkl", "wb"),
)
# largest entities: how split
for e in np.argsort(-sizes)[:8]:
    mem = np.flatnonzero(tc == e)
    print(
        "entity",
        e,
        "size",
        sizes[e],
        "pred clusters",
        sorted(collections.Counter(ent[mem]).values(), reverse=True)[:10],
    )
