import pickle, sys, warnings, time
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/wt-cora48/bench")
from er_real import load, pairwise
import trustlab, os
import trustlab.er.fields as F
from trustlab.er.kinds import Field
_orig = F.infer_fields_report
TEXT = [c for c in os.environ.get("EXP_TEXT", "").split(",") if c]
def patched(df, **kw):
    rep = _orig(df, **kw)
    rep.fields = [Field(f.column, "text") if f.column in TEXT else f for f in rep.fields]
    return rep
F.infer_fields_report = patched
name = sys.argv[1] if len(sys.argv) > 1 else "jedai_cora"
inputs, keys, truth = load(name, Path("/work/shared/data"))
t0 = time.time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve(str(inputs[0]))
t = np.unique(np.asarray(truth).astype(str), return_inverse=True)[1]
print(name, time.time() - t0, pairwise(np.asarray(res.entity), t), len(res.pairs))
mdl = res.model
G = mdl.levels(res.features)
print([ (f.column, f.kind) for f in mdl.fields])
print("records cols", list(res.records.columns)[:20], len(res.records))
pickle.dump(dict(P=np.asarray(res.pairs), p=np.asarray(res.prob), ent=np.asarray(res.entity), t=t, G=G,
                 fields=list(mdl.fields), records=res.records, m=mdl.m_, u=mdl.u_, lam=mdl.lambda_),
            open(f"/tmp/cora48/{name}{os.environ.get('EXP_TAG','')}.pkl", "wb"))
