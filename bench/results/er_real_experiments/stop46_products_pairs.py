"""Stop 46: dump walmart_amazon (or a stop41_presentations presentation) false / missed / true pairs with titles, model numbers and field weights. Usage: PYTHONPATH=. python bench/results/er_real_experiments/stop46_products_pairs.py VARIANT OUT.csv"""
import sys, json, re, warnings
from pathlib import Path
import numpy as np, pandas as pd
sys.path.insert(0, "bench"); sys.path.insert(0, "bench/results/er_real_experiments")
import er_real as E
from stop41_presentations import present
import trustlab

variant = sys.argv[1]
out = Path(sys.argv[2])
inputs, keys, truth = E.load("walmart_amazon", Path("/work/shared/data"))
paths = []
raw = {}
for p in inputs:
    df0 = pd.read_csv(p, sep="|", dtype=str, keep_default_na=False)
    raw[p.stem] = df0.set_index("id")
    df = present(variant, df0, p.stem)
    d = Path(f"/tmp/products46/pres/{variant}"); d.mkdir(parents=True, exist_ok=True)
    q = d / p.name; df.to_csv(q, index=False); paths.append(q)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve([str(p) for p in paths], link_type="link_only")
tmap = {(k[0], str(k[1])): t for k, t in zip(keys, truth)}
src = np.asarray(res.source).astype(str); ids = np.asarray(res.ids).astype(str)
t = np.array([tmap[(s, i)] for s, i in zip(src, ids)])
ent = np.asarray(res.entity)
pred = E.pairwise(ent, t)
print(variant, json.dumps(pred))
# predicted cross pairs
W = res.field_weights; P = res.pairs
fields = [f.column for f in res.model.fields]
pw = {}
for k, (a, b) in enumerate(P):
    pw[(min(a, b), max(a, b))] = k
rows = []
from collections import defaultdict
grp = defaultdict(list)
for r, e in enumerate(ent): grp[e].append(r)
predp = set()
for e, rs in grp.items():
    for x in rs:
        for y in rs:
            if x < y and src[x] != src[y]: predp.add((x, y))
tg = defaultdict(list)
for r, e in enumerate(t): tg[e].append(r)
truep = set()
for e, rs in tg.items():
    for x in rs:
        for y in rs:
            if x < y and src[x] != src[y]: truep.add((x, y))
hasp = set(x for pr in truep for x in pr)
def rec(r):
    return raw[src[r]].loc[ids[r]]
for typ, S in (("fp", predp - truep), ("fn", truep - predp), ("tp", predp & truep)):
    for (x, y) in S:
        if src[x] != "walmart": x, y = y, x
        k = pw.get((min(x, y), max(x, y)))
        a, b = rec(x), rec(y)
        row = {"type": typ, "w_id": ids[x], "a_id": ids[y], "w_title": a["title"], "a_title": b["title"],
               "w_model": a["modelno"], "a_model": b["modelno"], "w_price": a["price"], "a_price": b["price"],
               "w_brand": a["brand"], "a_brand": b["brand"],
               "cand": k is not None, "w_has_true": x in hasp, "a_has_true": y in hasp}
        if k is not None:
            row["prob"] = float(res.prob[k])
            for c, f in enumerate(fields): row["W_" + f] = round(float(W[k, c]), 2)
            row["Wsum"] = round(float(W[k].sum()), 2)
        rows.append(row)
pd.DataFrame(rows).to_csv(out, index=False)
