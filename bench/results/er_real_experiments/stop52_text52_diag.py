"""Diagnosis (truth used only to measure): where a file's `merged` presentation loses.
python stop52_text52_diag.py FILE [VARIANT]  -> fields, rules, pair completeness, recall of the
true candidate pairs at p>0.5, precision, final P/R/F1."""
import sys, os, time, json
from pathlib import Path
import numpy as np, pandas as pd
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "bench"))
import er_real, er_perturb
import trustlab

name = sys.argv[1]; variant = sys.argv[2] if len(sys.argv) > 2 else "merged"
data = Path("/work/shared/data")
inputs, keys, truth = er_real.load(name, data)
tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "text52_diag"; tmp.mkdir(exist_ok=True)
frames = [er_perturb._sniff_read(Path(p)) for p in inputs]
names = er_perturb.recased_names([c for df in frames for c in df.columns if c != er_perturb._id_col(df)])
paths = []
pos = 0
tmap = {}
if keys is not None:
    tmap = {(str(s), str(i)): t for (s, i), t in zip(keys, truth)}
for k, p in enumerate(inputs):
    df = frames[k]
    df2, kw = er_perturb.perturb(df, variant, 0 + k, names)
    if keys is None:
        df2["__truth"] = truth
    else:
        idc = er_perturb._id_col(df2)
        df2["__truth"] = [tmap[(Path(p).stem, str(i))] for i in df2[idc]]
    q = tmp / f"{name}_{variant}_{k}_{Path(p).stem}.csv"
    df2.to_csv(q, **kw); paths.append(q)
t0 = time.process_time()
kw = {}
if os.environ.get("BLOCKING"):  # e.g. BLOCKING='token:description:alnum@12;nearest:description:20'
    kw["blocking"] = os.environ["BLOCKING"].split(";")
if len(paths) == 1:
    r = trustlab.resolve(str(paths[0]), truth="__truth", **kw)
else:
    r = trustlab.resolve([str(p) for p in paths], link_type="link_only", truth="__truth", **kw)
cpu = time.process_time() - t0
rec = r.records
t = rec["__truth"].astype(str).to_numpy()
P = r.pairs
same = t[P[:, 0]] == t[P[:, 1]]
if r.link_type == "link_only" and r.source is not None:
    pass
# true pairs total (within-link restrictions ignored for dedupe)
vc = pd.Series(t).value_counts()
if r.link_type == "link_only":
    src = np.asarray(r.source)
    tot = sum(int(a) * int(b) for a, b in pd.crosstab(t, src).to_numpy())
else:
    tot = int((vc * (vc - 1) // 2).sum())
print(json.dumps({"file": name, "variant": variant, "fields": [f"{f.column}:{f.kind}" for f in r.field_report.fields] if hasattr(r.field_report, 'fields') else None,
  "rules": r.blocking.rules, "n_pairs": int(len(P)), "cand_pc": r.blocking.pair_completeness,
  "true_in_scored": int(same.sum()), "true_total": tot,
  "rec_p05": round(float((same & (r.prob > 0.5)).sum() / max(tot, 1)), 4),
  "prec_p05": round(float((same & (r.prob > 0.5)).sum() / max((r.prob > 0.5).sum(), 1)), 4),
  "metrics": {k: round(v, 4) for k, v in (r.metrics or {}).items()}, "cpu": round(cpu, 1)}))
