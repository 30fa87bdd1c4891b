"""Diagnostic only (monkeypatches, no library change; stop 44): what each EM session of
``FSModel._fit_by_sessions`` sees on a real file, beside the truth.

Per session (the candidate pairs that agree exactly on one field): its pairs, how many
fields vote in its EM (free and not passive: the whole-record comparison is passive), each
free field's level counts among the true matches and the non-matches, the m the session
fitted, and where the one-voter ridge starts: with one voting field and u fixed, every
(lambda, m) with lambda * m + (1 - lambda) * u = the session's level shares fits the
counts exactly, so EM stops wherever it meets that ridge from its start (lambda 0.3);
``lambda_min = 1 - min_k p_k / u_k`` is its low end (m = 0 at the level of least p / u).

    PYTHONPATH=. python bench/results/er_real_experiments/stop44_ens_sessions.py inventors_ens
"""
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np  # noqa: E402

import er_real  # noqa: E402
import trustlab  # noqa: E402
from trustlab.er import scoring  # noqa: E402
from trustlab.metrics.clustering import pairwise_precision_recall_f1  # noqa: E402

cap, fitted = {}, []
fbs0, sem0 = scoring.FSModel._fit_by_sessions, scoring.FSModel._session_em


def fbs(self, G, u, n, n_all, df, pairs, *a, **kw):
    cap.update(G=G, pairs=pairs, df=df, u=u.copy())
    return fbs0(self, G, u, n, n_all, df, pairs, *a, **kw)


def sem(self, Gu, cnt, u, free, m0, lam0, **kw):
    out = sem0(self, Gu, cnt, u, free, m0, lam0, **kw)
    if kw.get("u_pseudo") == scoring.SESSION_U_PSEUDO and kw.get("fit_u"):
        fitted.append((free.copy(), kw.get("passive"), out[0].copy(), out[1]))
    return out


scoring.FSModel._fit_by_sessions, scoring.FSModel._session_em = fbs, sem
for name in sys.argv[1:]:
    cap.clear(), fitted.clear()
    inp, _, truth = er_real.load(name, Path("/work/shared/data"))
    r = trustlab.resolve(str(inp[0]))
    p, rc, f = pairwise_precision_recall_f1(np.asarray(r.entity), truth)
    print(f"{name}: F1 {f:.4f} (P {p:.3f} / R {rc:.3f}); sessions {r.model.sessions_}")
    G, P, df, u = cap["G"], cap["pairs"], cap["df"], cap["u"]
    tt = np.asarray(truth)[df["_row"].to_numpy()] if "_row" in df.columns else np.asarray(truth)
    same = tt[P[:, 0]] == tt[P[:, 1]]
    names = [fl.column for fl in r.model.fields]
    last = fitted[len(fitted) - len(r.model.sessions_):]  # the last fit (resolve may fit again after tightening)
    for s, (free, passive, m_s, lam_s) in zip(r.model.sessions_, last):
        c = names.index(s["field"])
        sel = G[:, c] == 0
        vote = np.flatnonzero(free & ~(passive if passive is not None else np.zeros_like(free)))
        print(f"  session {s['field']}: {int(sel.sum())} pairs, {int(same[sel].sum())} true; lambda {lam_s:.4f} "
              f"(true {same[sel].mean():.4f}); voting fields {[names[k] for k in vote]}")
        for k in np.flatnonzero(free):
            lv_t = np.bincount(G[sel & same, k][G[sel & same, k] >= 0], minlength=4)
            lv_n = np.bincount(G[sel & ~same, k][G[sel & ~same, k] >= 0], minlength=4)
            line = (f"    {names[k]}: levels (exact, close, far, else) true {lv_t.tolist()} non {lv_n.tolist()}; "
                    f"fitted m {np.round(m_s[k], 3).tolist()}, true m {np.round(lv_t / max(lv_t.sum(), 1), 3).tolist()}")
            if len(vote) == 1 and k == vote[0]:
                pk = (lv_t + lv_n) / max((lv_t + lv_n).sum(), 1)
                line += f"; one voter: lambda_min {1 - np.min(pk / u[k]):.4f}"
            print(line)
