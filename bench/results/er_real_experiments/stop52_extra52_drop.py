import sys, os
sys.path.insert(0, "bench"); sys.path.insert(0, ".")
import trustlab.er.fields as F
orig = F.judge_fields
DROP = set(os.environ.get("DROP", "").split(","))
def jf(df, fields, **kw):
    ev = orig(df, fields, **kw)
    for c in DROP:
        if c in ev: ev[c].verdict = "noise"
    return ev
F.judge_fields = jf
import er_perturb
from pathlib import Path
r = er_perturb.run_one(sys.argv[1], sys.argv[2], Path("/work/shared/data"), 0)
print(sys.argv[1], os.environ.get("DROP"), {k: r[k] for k in ("f1", "precision", "recall", "entities", "seconds")})
