"""Stop 42 (prod42): the truth m of one field at a time (and its m(else) only) on a presentation, BP + clustering.
Standalone. PYTHONPATH=. python bench/results/er_real_experiments/stop42_truth_m.py VARIANT"""

import sys

import numpy as np

sys.path.insert(0, "bench/results/er_real_experiments")
from stop42_common import decide, presentation  # noqa: E402

variant = sys.argv[1]
x = presentation(variant)
res, same, model, fm = x.res, x.same, x.model, x.fm
G = model.levels(fm)
T = np.full(G.shape, np.nan)
W0 = model.level_weights(G, T)


def run(name):
    fw = res.field_weights + (model.level_weights(G, T) - W0)
    r = decide(x, model.log_odds_from_field_weights(fw))
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
