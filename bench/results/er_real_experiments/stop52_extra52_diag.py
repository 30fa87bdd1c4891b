import sys, json, os
sys.path.insert(0, "bench"); sys.path.insert(0, ".")
import numpy as np
import trustlab.er.fields as F
orig = F.judge_fields
def jf(df, fields, **kw):
    ev = orig(df, fields, **kw)
    print("JUDGE n=", len(df), "sources", None if kw.get("sources") is None else np.bincount(np.asarray(kw["sources"])))
    for c, e in ev.items():
        print(f"  {c:28s} {e.verdict:9s} gain={e.gain:.3f} best={e.best} upper={e.upper:.3f} thr={e.threshold:.3f} ev={e.evidence} rand_exact={e.random_exact:.3f} shape={e.shape} rev={e.reverse}")
        for k, v in sorted(e.detail.items()):
            print("      ", k, v)
    return ev
F.judge_fields = jf
import er_perturb
from pathlib import Path
r = er_perturb.run_one(sys.argv[1], sys.argv[2], Path("/work/shared/data"), 0)
print({k: r[k] for k in ("f1", "precision", "recall", "entities", "seconds")})
print(r["fields"]); print(r["blocking"])
