"""Stop 42 (prod42): graded (within-level interpolated) field weights re-scored on the fitted model, then BP +
clustering as the pipeline does. Needs stop42_graded_weights.diff applied (FSModel._graded_sims, EXP_INTERP*).
PYTHONPATH=. python bench/results/er_real_experiments/stop42_graded.py VARIANTS "KINDS[;KINDS]" ANCHORS
(ANCHORS: comma list of fractions, data, datamed, top0)."""

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
    r = E.pairwise(np.asarray(res.entity), t)
    print(variant, "as run", round(r["f1"], 4))
    G = model.levels(fm)
    # TF values need df in internal order; reuse: fw minus level weights w/o S gives tf-adjusted exact parts
    T = np.full(G.shape, np.nan)
    for kinds in sys.argv[2].split(";"):
        os.environ["EXP_INTERP"] = kinds
        for fa in sys.argv[3].split(","):
            os.environ["EXP_INTERP_A"] = str(fa)
            S = model._graded_sims(fm)
            W0 = model.level_weights(G, T)
            W1 = model.level_weights(G, T, S=S)
            fw = res.field_weights + (W1 - W0)  # keeps the TF-adjusted exact weights
            lo = model.log_odds_from_field_weights(fw)
            live = np.flatnonzero(lo > -30)
            l2 = lo.copy()
            l2[live], _ = one_to_one_log_odds(P[live], lo[live], srcc)
            pr = 1 / (1 + np.exp(-np.clip(l2, -50, 50)))
            r = E.pairwise(np.asarray(cluster_pairs(len(t), P, to_weights(pr), method="xer", time_limit=60).labels), t)
            print(
                f"{variant:10s} {kinds:14s} a={fa} F1 {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})",
                flush=True,
            )
