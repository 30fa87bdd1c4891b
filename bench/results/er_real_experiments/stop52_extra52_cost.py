import sys, os, json, time
sys.path.insert(0, "bench"); sys.path.insert(0, ".")
import trustlab.er.fields as F
class Stop(Exception): pass
orig_c = F._conjunctions
T = {}
def cj(*a, **k):
    t = time.process_time(); orig_c(*a, **k); T["conj"] = time.process_time() - t
F._conjunctions = cj
orig = F.judge_fields
def jf(df, fields, **kw):
    t = time.process_time(); ev = orig(df, fields, **kw); T["judge"] = time.process_time() - t
    raise Stop(len(df))
F.judge_fields = jf
import er_real, er_perturb
from pathlib import Path
data = Path("/work/shared/data")
variant = sys.argv[1]
for name in sys.argv[2].split(","):
    T.clear()
    try:
        if variant == "plain":
            inputs, keys, truth = er_real.load(name, data); er_real.trustlab_run(inputs, keys)
        else:
            er_perturb.run_one(name, variant, data, 0)
    except Stop as e:
        print(variant, name, e.args[0], {k: round(v, 2) for k, v in T.items()}, flush=True)
