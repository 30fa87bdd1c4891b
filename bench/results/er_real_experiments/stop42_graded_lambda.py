"""Stop 42 (prod42): graded weights with lambda re-fitted to them (needs stop42_graded_weights.diff).
PYTHONPATH=. python bench/results/er_real_experiments/stop42_graded_lambda.py VARIANTS KINDS"""

import os
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


def lamfix(Ws, l0):
    l = l0
    for _ in range(500):
        p = 1 / (1 + np.exp(-np.clip(l + Ws, -50, 50)))
        lam = p.mean()
        l2 = np.log(lam / (1 - lam))
        if abs(l2 - l) < 1e-9:
            break
        l = l2
    return l


for variant in sys.argv[1].split(","):
    paths = [Path("/tmp/p42") / variant / p.name for p in inputs]
    os.environ.pop("EXP_INTERP", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve([str(p) for p in paths], link_type="link_only")
    t = D._truth_per_row(res, paths, keys, truth)
    P = res.pairs
    srcc = pd.factorize(res.source)[0]
    model = res.model
    fm = res.features
    G = model.levels(fm)
    T = np.full(G.shape, np.nan)
    os.environ["EXP_INTERP"] = sys.argv[2]
    S = model._graded_sims(fm)
    W0 = model.level_weights(G, T)
    W1 = model.level_weights(G, T, S=S)
    fw = res.field_weights + (W1 - W0)
    lam = np.log(model.lambda_ / (1 - model.lambda_))
    a = lamfix(res.field_weights.sum(1), lam)
    b = lamfix(fw.sum(1), lam)
    for name, shift in (("graded", 0.0), ("graded+lam refit", b - a)):
        lo = model.log_odds_from_field_weights(fw) + shift
        live = np.flatnonzero(lo > -30)
        l2 = lo.copy()
        l2[live], _ = one_to_one_log_odds(P[live], lo[live], srcc)
        pr = 1 / (1 + np.exp(-np.clip(l2, -50, 50)))
        r = E.pairwise(np.asarray(cluster_pairs(len(t), P, to_weights(pr), method="xer", time_limit=60).labels), t)
        print(
            f"{variant:10s} {name:18s} shift {shift:+.3f} F1 {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})",  # noqa: E501
            flush=True,
        )
