"""Stop 42 (prod42): on a walmart_amazon presentation written by stop41_presentations.py into /tmp/p42/VARIANT,
the pair ranking against the MAP decision: greedy one-to-one F1 (threshold chosen with the truth) on the final
log-odds and on each feature; the within-level interpolated weights (mid / edge anchors) and a tie-break; the
calibration of the BP log-odds; fine-bin oracles (truth m/u of the title per similarity bin); the expected-F1
plug-in threshold. Standalone (no patch). Run from the repository root:
PYTHONPATH=. python bench/results/er_real_experiments/stop42_rank_vs_map.py VARIANT"""

import sys
from collections import Counter

import numpy as np

sys.path.insert(0, "bench/results/er_real_experiments")
from stop42_common import E, presentation  # noqa: E402

from trustlab.er.cluster import cluster_pairs  # noqa: E402
from trustlab.er.scoring import _feature_index, one_to_one_log_odds, to_weights  # noqa: E402

variant = sys.argv[1]
x = presentation(variant)
res, t, P, same, srcc, model, fm = x.res, x.t, x.P, x.same, x.srcc, x.model, x.fm
ntrue = sum(c * (c - 1) // 2 for c in Counter(t.tolist()).values())


def greedy(score, name, thr0=True):
    o = np.argsort(-score, kind="stable")
    used = set()
    acc = []
    for k in o:
        a, b = P[k]
        if a in used or b in used:
            continue
        used.add(a)
        used.add(b)
        acc.append(k)
    acc = np.array(acc)
    sv = score[acc]
    st = same[acc]
    best = (0,)
    for th in np.unique(np.quantile(sv, np.linspace(0, 1, 300))):
        sel = sv >= th
        tp = st[sel].sum()
        p = tp / max(sel.sum(), 1)
        r = tp / ntrue
        f = 2 * p * r / max(p + r, 1e-9)
        if f > best[0]:
            best = (round(f, 4), round(float(th), 3), round(p, 3), round(r, 3), int(sel.sum()))
    sel = sv > 0
    tp = st[sel].sum()
    p = tp / max(sel.sum(), 1)
    r = tp / ntrue
    f0 = 2 * p * r / max(p + r, 1e-9)
    print(f"{name:40s} greedy@0 F1 {f0:.4f} (P {p:.3f} R {r:.3f}) | truth-best", best)


def clus(lo, name):
    live = np.flatnonzero(lo > -30)
    l2 = lo.copy()
    l2[live], _ = one_to_one_log_odds(P[live], lo[live], srcc)
    pr = 1 / (1 + np.exp(-np.clip(l2, -50, 50)))
    r = E.pairwise(np.asarray(cluster_pairs(len(t), P, to_weights(pr), method="xer", time_limit=60).labels), t)
    print(f"{name:40s} BP+cluster F1 {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})")
    greedy(l2, name + " [BP]")


fw = res.field_weights.copy()
lam = np.log(model.lambda_ / (1 - model.lambda_))
G = model.levels(fm)
print("m", np.round(model.m_, 3))
print("u", np.round(model.u_, 4))
print("lambda", lam)
clus(lam + fw.sum(1), "as is")
bf = np.log(model.m_) - np.log(model.u_)
for c, f in enumerate(model.fields):
    ex_name, sim_name, t1, t2, _ = model.spec(f)
    if t2 is None:
        continue
    ks = _feature_index(fm.names, f.column, sim_name)
    sim = fm.X[:, ks]
    for mode in ("mid", "edge"):
        if mode == "mid":
            xs = [t2 / 2, (t1 + t2) / 2, (t1 + 1) / 2]
        else:
            xs = [0.0, t2, t1]  # weight of level reached at its lower edge...
            xs = [t2, t1, 1.0]
        wi = np.interp(np.nan_to_num(sim), xs, [bf[c][3], bf[c][2], bf[c][1]])
        fw2 = fw.copy()
        ok = G[:, c] > 0
        fw2[ok, c] = wi[ok]
        clus(lam + fw2.sum(1), f"interp {f.column} {mode}")
    fw2 = fw.copy()
    fw2[:, c] += 1e-3 * np.nan_to_num(sim)
    clus(lam + fw2.sum(1), f"tiebreak {f.column}")


def calib(lo, name):
    live = np.flatnonzero(lo > -30)
    l2 = lo.copy()
    l2[live], _ = one_to_one_log_odds(P[live], lo[live], srcc)
    print(name)
    for a, b in [(-50, -6), (-6, -4), (-4, -3), (-3, -2), (-2, -1), (-1, 0), (0, 1), (1, 2), (2, 4), (4, 8), (8, 100)]:
        s = (l2 >= a) & (l2 < b)
        if s.sum():
            print(
                f"  BP lo [{a},{b}): n {s.sum():6d} true {same[s].mean():.3f}  "
                f"model mean p {np.mean(1 / (1 + np.exp(-l2[s]))):.3f}   "
                f"base mean p {np.mean(1 / (1 + np.exp(-lo[s]))):.3f}"
            )


calib(lam + fw.sum(1), "as is")
c = 0
f = model.fields[0]
ex_name, sim_name, t1, t2, _ = model.spec(f)
sim = fm.X[:, _feature_index(fm.names, f.column, sim_name)]
wi = np.interp(np.nan_to_num(sim), [t2 / 2, (t1 + t2) / 2, (t1 + 1) / 2], [bf[c][3], bf[c][2], bf[c][1]])
fw2 = fw.copy()
ok = G[:, c] > 0
fw2[ok, c] = wi[ok]
calib(lam + fw2.sum(1), "interp mid")
print("=== fine-bin oracle on title sim (+ codes fitted) ===")
for nb in (4, 8, 16):
    edges = np.quantile(sim[same], np.linspace(0, 1, nb + 1))[1:-1]
    b = np.digitize(np.nan_to_num(sim), edges)
    ex = G[:, 0] == 0
    b[ex] = nb
    mt = np.bincount(b[same], minlength=nb + 1) + 0.5
    ut = np.bincount(b[~same], minlength=nb + 1) + 0.5
    w = np.log(mt / mt.sum()) - np.log(ut / ut.sum())
    fw2 = fw.copy()
    fw2[:, 0] = w[b]
    clus(lam + fw2.sum(1), f"oracle title {nb} bins, fitted codes, fitted lam")
    lt = np.log(same.mean() / (1 - same.mean()))
    fw3 = fw2.copy()
    fw3[:, 1] = 0
    clus(lt + fw3.sum(1), f"oracle title {nb} bins alone, true cand lam")
print("=== expected-F1 threshold ===")


def ef1(lo, name):
    live = np.flatnonzero(lo > -30)
    l2 = lo.copy()
    l2[live], _ = one_to_one_log_odds(P[live], lo[live], srcc)
    pr = 1 / (1 + np.exp(-np.clip(l2, -50, 50)))
    o = np.argsort(-pr)
    cs = np.cumsum(pr[o])
    tot = pr.sum()
    e = 2 * cs / (np.arange(1, len(o) + 1) + tot)
    k = int(np.argmax(e))
    ts = pr[o][k]
    print(
        f"{name}: sum p {tot:.1f}, expected F1 max {e[k]:.3f} at p {ts:.3f} (logit {np.log(ts / (1 - ts)):.2f}), "
        f"n sel {k + 1}; at 0.5: {e[(pr[o] >= 0.5).sum() - 1]:.3f}"
    )
    sh = np.log(ts / (1 - ts))
    r = E.pairwise(
        np.asarray(
            cluster_pairs(len(t), P, to_weights(1 / (1 + np.exp(-(l2 - sh)))), method="xer", time_limit=60).labels
        ),
        t,
    )
    print(f"   shifted cluster F1 {r['f1']:.4f} (P {r['precision']:.3f} R {r['recall']:.3f})")


ef1(lam + fw.sum(1), "as is")
ef1(lam + fw2.sum(1), "interp mid")
