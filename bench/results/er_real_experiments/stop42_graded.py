"""Stop 42 (prod42): graded (within-level interpolated) field weights re-scored on the fitted model, then BP +
clustering as the pipeline does. Needs stop42_graded_weights.diff applied (FSModel._graded_sims, EXP_INTERP*).
PYTHONPATH=. python bench/results/er_real_experiments/stop42_graded.py VARIANTS "KINDS[;KINDS]" ANCHORS
(ANCHORS: comma list of fractions, data, datamed, top0)."""

import os
import sys

import numpy as np

sys.path.insert(0, "bench/results/er_real_experiments")
from stop42_common import E, decide, presentation  # noqa: E402

for variant in sys.argv[1].split(","):
    os.environ.pop("EXP_INTERP", None)
    x = presentation(variant)
    res, model, fm = x.res, x.model, x.fm
    r = E.pairwise(np.asarray(res.entity), x.t)
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
            r = decide(x, model.log_odds_from_field_weights(fw))
            print(
                f"{variant:10s} {kinds:14s} a={fa} F1 {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})",
                flush=True,
            )
