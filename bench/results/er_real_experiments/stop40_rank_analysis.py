"""Stop 40: how often a candidate pair is a true match, by its whole-record cosine margin over the best other
candidate of either record (``gap``; > 0: mutual best) and by the model's log-odds (``base``). Input: a dump written
by ``stop40_presentations.py`` with ``EXP_RANK_DUMP`` (patch ``stop40_rank_evidence.diff``).
``python bench/results/er_real_experiments/stop40_rank_analysis.py FILE.npz``"""
import json
import sys

import numpy as np

d = np.load(sys.argv[1], allow_pickle=True)
t = json.loads(open(sys.argv[1] + ".truth.json").read())
P, cos, base, ids, src = d["pairs"], d["cos"], d["base"], d["ids"], d["src"]
ent = np.array([t[f"{s}|{i}"] for s, i in zip(src, ids)])
y = ent[P[:, 0]] == ent[P[:, 1]]
n = len(ids)


def side(a, s):
    o = np.lexsort((-s, a))
    a_o, s_o = a[o], s[o]
    first = np.r_[True, a_o[1:] != a_o[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(len(o)), 0))
    rank = np.arange(len(o)) - start
    best, sec = np.full(n, -1.0), np.full(n, -1.0)
    best[a_o[rank == 0]], sec[a_o[rank == 1]] = s_o[rank == 0], s_o[rank == 1]
    r = np.empty(len(o), int)
    r[o] = rank
    return r, best, sec


ri, bi, si = side(P[:, 0], cos)
rj, bj, sj = side(P[:, 1], cos)
mutual = (ri == 0) & (rj == 0)
print("pairs", len(P), "true candidates", int(y.sum()), "mutual best", int(mutual.sum()),
      "true mutual best", int((y & mutual).sum()))
gap = cos - np.maximum(np.where(ri == 0, si[P[:, 0]], bi[P[:, 0]]), np.where(rj == 0, sj[P[:, 1]], bj[P[:, 1]]))
for lo, hi in [(-9, -0.2), (-0.2, -0.05), (-0.05, 0), (0, 0.02), (0.02, 0.05), (0.05, 0.1), (0.1, 0.2), (0.2, 9)]:
    sel = (gap >= lo) & (gap < hi)
    print(f"gap [{lo},{hi}) pairs {sel.sum():7d} true {y[sel].sum():5d} share {y[sel].mean() if sel.any() else 0:.3f} "
          f"log-odds>0 {(sel & (base > 0)).sum():6d} of them true {(sel & (base > 0) & y).sum():5d}")
for lo, hi in [(-99, -6), (-6, -3), (-3, 0), (0, 3), (3, 99)]:
    sel = (base >= lo) & (base < hi)
    print(f"log-odds [{lo},{hi}) pairs {sel.sum():7d} true {y[sel].sum():5d} mutual best {(sel & mutual).sum():6d} "
          f"of them true {(sel & mutual & y).sum():5d}")
