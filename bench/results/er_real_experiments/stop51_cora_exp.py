import sys, warnings, json, time, os
sys.path.insert(0, "/work/wt-cora51/bench")
from pathlib import Path
import numpy as np, pandas as pd
import trustlab, trustlab.er.pipeline as PL
import trustlab.er.fields as F
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel
from er_real import load, pairwise
PL.REFIT_ROUNDS = int(os.environ.get("EXP_ROUNDS", PL.REFIT_ROUNDS))
TEXT = [c for c in os.environ.get("EXP_TEXT", "").split(",") if c]
if TEXT:
    _orig = F.infer_fields_report
    def patched(df, **kw):
        rep = _orig(df, **kw)
        rep.fields = [Field(f.column, "text") if f.column in TEXT else f for f in rep.fields]
        return rep
    F.infer_fields_report = patched
MULT = float(os.environ.get("EXP_MULT", "1"))
GUARD = float(os.environ.get("EXP_GUARD", "0"))
BASE = os.environ.get("EXP_BASE", "all")
if MULT != 1 or GUARD != 0 or BASE != "all":
    def mfc(self, G, p, W, hidden, forced=None):
        m_old = np.asarray(self.m_, float); L = m_old.shape[1]; m = m_old.copy(); total = W.sum(1); changed = False
        for c in range(G.shape[1]):
            g = G[:, c]; ok = g >= 0
            if forced is not None: ok &= ~forced[:, c]
            sel = ok & hidden & (total - W[:, c] > GUARD)
            if not sel.any(): continue
            add = MULT * np.bincount(g[sel], weights=1.0 - p[sel], minlength=L)[:L]
            cnt = np.maximum(p[ok].sum() * m_old[c] + add, 1e-3)
            m[c] = cnt / cnt.sum(); changed = True
        if not changed: return None
        m = np.clip(m, 1e-6, None); return m / m.sum(1, keepdims=True)
    FSModel.m_from_clusters = mfc
for nm in sys.argv[1].split(","):
    if nm.startswith("cora"):
        path = f"/tmp/cora50/{nm}.csv"; truth = pd.read_csv(f"/tmp/cora50/{nm}_truth.csv")["t"].astype(str).to_numpy()
    else:
        L = load(nm, Path("/work/shared/data")); path, truth = L[0][0] if len(L[0]) == 1 else L[0], np.asarray(L[2]).astype(str)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve(str(path) if not isinstance(path, list) else path, **({"complete_components": int(os.environ["EXP_CC"])} if os.environ.get("EXP_CC") else {}))
    ent = np.asarray(res.entity)
    if False:
        pass
    r = pairwise(ent, truth)
    print(json.dumps(dict(file=nm, tag=os.environ.get("EXP_TAG", ""), F1=round(r["f1"], 4), P=round(r["precision"], 4), R=round(r["recall"], 4), ent=int(len(np.unique(ent))), refits=res.settings.get("cluster_refits") if isinstance(res.settings, dict) else None, cpu=round(time.process_time() - t0, 1))), flush=True)
