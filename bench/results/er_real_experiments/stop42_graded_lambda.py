"""Stop 42 (prod42): graded weights with lambda re-fitted to them (needs stop42_graded_weights.diff).
PYTHONPATH=. python bench/results/er_real_experiments/stop42_graded_lambda.py VARIANTS KINDS"""

import os
import sys

import numpy as np

sys.path.insert(0, "bench/results/er_real_experiments")
from stop42_common import decide, presentation  # noqa: E402


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
    os.environ.pop("EXP_INTERP", None)
    x = presentation(variant)
    res, model, fm = x.res, x.model, x.fm
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
        r = decide(x, model.log_odds_from_field_weights(fw) + shift)
        print(
            f"{variant:10s} {name:18s} shift {shift:+.3f} F1 {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})",  # noqa: E501
            flush=True,
        )
