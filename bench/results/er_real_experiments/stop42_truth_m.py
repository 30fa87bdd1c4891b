"""Stop 42 (prod42): the truth m of one field at a time (and its m(else) only) on a presentation, BP + clustering.
Standalone. PYTHONPATH=. python bench/results/er_real_experiments/stop42_truth_m.py VARIANT"""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, "bench")
import er_diagnose as D
import er_real as E

import trustlab
from trustlab.er.cluster import cluster_pairs
from trustlab.er.scoring import one_to_one_log_odds, to_weights

inputs, keys, truth = E.load("walmart_amazon", Path("/work/shared/data"))
variant = sys.argv[1]
paths = [Path("/tmp/p42") / variant / p.name for p in inputs]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve([str(p) for p in paths], link_type="link_only")
t = D._truth_per_row(res, paths, keys, truth)
P = res.pairs
srcc = pd.factorize(res.source)[0]
same = t[P[:, 0]] == t[P[:, 1]]
model = res.model
fm = res.features
G = model.levels(fm)
T = np.full(G.shape, np.nan)
W0 = model.level_weights(G, T)


def run(name):
    fw = res.field_weights + (model.level_weights(G, T) - W0)
    lo = model.log_odds_from_field_weights(fw)
    live = np.flatnonzero(lo > -30)
    l2 = lo.copy()
    l2[live], _ = one_to_one_log_odds(P[live], lo[live], srcc)
    pr = 1 / (1 + np.exp(-np.clip(l2, -50, 50)))
    r = E.pairwise(np.asarray(cluster_pairs(len(t), P, to_weights(pr), method="xer", time_limit=60).labels), t)
    print(f"{variant:10s} {name:40s} F1 {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})", flush=True)


m0 = model.m_.copy()
run("fitted")


def truth_m(c):
    g = G[same, c]
    g = g[g >= 0]
    return (np.bincount(g, minlength=4) + 0.5) / (len(g) + 2)


for c, f in enumerate(model.fields):
    model.m_ = m0.copy()
    model.m_[c] = truth_m(c)
    run(f"truth m {f.column}: {np.round(model.m_[c], 3)}")
    model.m_ = m0.copy()
    mm = m0[c].copy()
    mm[3] = max(mm[3], truth_m(c)[3])
    mm /= mm.sum()
    model.m_[c] = mm
    run(f"truth m(else) only {f.column}")
model.m_ = m0.copy()
for c in range(len(model.fields)):
    model.m_[c] = truth_m(c)
run("truth m all")
