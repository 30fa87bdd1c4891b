"""Stop 42 (prod42): add mutual-best unlinked pairs whose records are each probably matched (sum of BP marginals
> 0.5) to the shipped links of a presentation in /tmp/p42/VARIANT. Standalone.
PYTHONPATH=. python bench/results/er_real_experiments/stop42_rescue.py VARIANTS"""

import sys

import numpy as np

sys.path.insert(0, "bench/results/er_real_experiments")
from stop42_common import E, presentation  # noqa: E402

for variant in sys.argv[1].split(","):
    x = presentation(variant)
    res, t, P, same = x.res, x.t, x.P, x.same
    n = len(t)
    lo = np.log(np.clip(res.prob, 1e-300, 1)) - np.log1p(-np.clip(res.prob, 0, 1 - 1e-16))
    pm = res.prob
    ent = np.asarray(res.entity)
    pred = ent[P[:, 0]] == ent[P[:, 1]]
    # record-level P(matched) = sum of marginals
    pr = np.bincount(P[:, 0], weights=pm, minlength=n) + np.bincount(P[:, 1], weights=pm, minlength=n)
    # best candidate per record
    best = np.full(n, -np.inf)
    np.maximum.at(best, P[:, 0], lo)
    np.maximum.at(best, P[:, 1], lo)
    mutual = (lo >= best[P[:, 0]]) & (lo >= best[P[:, 1]])
    linked = np.zeros(n, bool)
    linked[P[pred, 0]] = True
    linked[P[pred, 1]] = True
    for thr in (0.5,):
        add = (~pred) & mutual & (pr[P[:, 0]] > thr) & (pr[P[:, 1]] > thr) & ~linked[P[:, 0]] & ~linked[P[:, 1]]
        # resolve conflicts greedily by lo
        idx = np.flatnonzero(add)
        idx = idx[np.argsort(-lo[idx], kind="stable")]
        used = set()
        keep = []
        for k in idx:
            a, b = P[k]
            if a in used or b in used:
                continue
            used.add(a)
            used.add(b)
            keep.append(k)
        keep = np.array(keep, int)
        ntrue = same.sum()  # approx: candidate truth; use pairwise on entities instead
        ent2 = ent.copy()
        for k in keep:
            a, b = P[k]
            ent2[ent2 == ent2[b]] = ent2[a]
        r0 = E.pairwise(ent, t)
        r = E.pairwise(ent2, t)
        print(
            f"{variant:10s} rescue(thr {thr}) added {len(keep)} ({same[keep].sum() if len(keep) else 0} true), "
            f"lo range {lo[keep].min() if len(keep) else 0:.2f}..{lo[keep].max() if len(keep) else 0:.2f}: "
            f"F1 {r0['f1']:.4f} -> {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})",
            flush=True,
        )
