"""Names-only (two-column) cuts of suite files, resolved as a user would (stop 45's stop45_twocol.py,
extended to two linked tables). Usage: python stop46_twocol.py NAME col1,col2 [TAG]
Prints one JSON line: pairwise P/R/F1, strata fitted, blocking rules, CPU seconds."""
import json, os, sys, time, warnings
from pathlib import Path
import numpy as np, pandas as pd
sys.path.insert(0, os.environ["PYTHONPATH"] + "/bench")
import er_real
import trustlab
warnings.simplefilter("ignore")
name, cols = sys.argv[1], sys.argv[2].split(",")
tag = sys.argv[3] if len(sys.argv) > 3 else ""
inputs, keys, truth = er_real.load(name, Path("/work/shared/data"))
tmp = Path(os.environ.get("TMPDIR", "/tmp"))
outs = []
for k, p in enumerate(inputs):
    df = pd.read_csv(p, dtype=str, keep_default_na=False, sep=None, engine="python")
    out = tmp / f"twocol46_{name}_{k}_{'_'.join(c.replace(' ', '') for c in cols)}.csv"
    df[cols].to_csv(out, index=False)
    outs.append((out, len(df)))
t0 = time.process_time()
if len(outs) == 1:
    r = trustlab.resolve(str(outs[0][0]))
    pred = np.asarray(r.entity)
else:  # two linked tables: records in input order (checked against the frame's source column)
    r = trustlab.resolve([str(o) for o, _ in outs], link_type="link_only")
    pred = np.asarray(r.entity)
    assert len(pred) == sum(n for _, n in outs)
cpu = time.process_time() - t0
m = er_real.pairwise(pred, truth)
model = getattr(r, "model", None)
strata = getattr(model, "strata_", {}) or {}
print(json.dumps({"table": name, "cols": cols, "tag": tag, **{k: round(v, 4) for k, v in m.items()},
                  "strata": {str(k): round(v[0], 3) for k, v in strata.items()},
                  "rules": list(r.blocking.rules), "cpu_s": round(cpu, 1),
                  "code": trustlab.__file__.split("/")[2]}))
