"""Per blocking stratum: pairs, true matches, pooled expected matches, stratum expected (lam_s n).
Run with PYTHONPATH=/tmp/strata45/exp (the stop-44 experimental patch, strata everywhere)."""
import sys, math, json
from pathlib import Path
import numpy as np
sys.path.insert(0, "/tmp/strata45/exp/bench")
import er_real
from trustlab.er import scoring
from trustlab.er.scoring import FSModel

CAP = []
orig = FSModel._fit_strata
def wrapped(self, G, sample, df, pairs, m, u, lam, u_pool=None):
    orig(self, G, sample, df, pairs, m, u, lam, u_pool)
    h = self._agreed_keys(df, pairs)
    bf = np.log(m) - np.log(u_pool)
    Wp = np.zeros(G.shape)
    for c in range(G.shape[1]):
        ok = G[:, c] >= 0
        Wp[ok, c] = bf[c][G[ok, c]]
    post = 1 / (1 + np.exp(-np.clip(math.log(lam / (1 - lam)) + self._record_beyond_fields(Wp).sum(1), -50, 50)))
    CAP.append(dict(pairs=pairs.copy(), h=h, post=post, strata=dict(self.strata_), forcing=list(self.forcing_), n=len(df), cols=list(df.columns), idx=df.index.to_numpy().copy(), sid=(list(zip(df["source_dataset"].astype(str), df["id"].astype(str))) if "source_dataset" in df.columns and "id" in df.columns else None), row=(df["_row"].to_numpy().copy() if "_row" in df.columns else None)))
FSModel._fit_strata = wrapped

name = sys.argv[1]
data = Path("/work/shared/data")
inputs, keys, truth = er_real.load(name, data)
res = er_real.resolve_files(inputs, keys) if hasattr(er_real, "resolve_files") else None
c = CAP[-1]
print(name, "fits", len(CAP), "records", c["n"], "truth", len(truth), "rules", c["forcing"])
t = np.asarray(truth)
print("cols", c["cols"][:12], "idx", c["idx"][:5], "row", None if c["row"] is None else c["row"][:5])
if c.get("sid") is not None:
    pos = {(str(k[0]), str(k[1])): i for i, k in enumerate(keys)}
    print("keys", keys[:2], c["sid"][:2])
    t = t[np.array([pos[k] for k in c["sid"]])]
elif c["row"] is not None:
    t = t[np.asarray(c["row"]).astype(int)]
elif not (c["idx"] == np.arange(len(c["idx"]))).all():
    t = t[c["idx"]]
P, h, post = c["pairs"], c["h"], c["post"]
same = t[P[:, 0]] == t[P[:, 1]]
rows = []
for code in np.unique(h):
    sel = h == code
    keysd = [ "+".join(c["forcing"][r]) for r in range(len(c["forcing"])) if code >> r & 1]
    st = c["strata"].get(int(code))
    lam_s = None if st is None else 1 / (1 + math.exp(-st[0]))
    rows.append((int(sel.sum()), keysd, int(same[sel].sum()), round(float(post[sel].sum()), 1),
                 None if lam_s is None else round(lam_s * sel.sum(), 1)))
rows.sort(key=lambda r: -r[0])
for r in rows[:40]:
    print(r)
print("total true", int(same.sum()), "pooled", round(float(post.sum()), 1))
