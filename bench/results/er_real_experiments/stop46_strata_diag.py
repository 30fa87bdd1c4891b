"""twocol table: per stratum, level counts of the free fields by truth, fitted m_s/u_s weights."""
import sys, math, os, warnings
from pathlib import Path
import numpy as np, pandas as pd
sys.path.insert(0, os.environ["PYTHONPATH"] + "/bench")
import er_real, trustlab
from trustlab.er.scoring import FSModel
warnings.simplefilter("ignore")
CAP = []
MODEL = []
orig = FSModel._fit_strata
def wrapped(self, G, sample, df, pairs, u, lam):
    orig(self, G, sample, df, pairs, u, lam)
    m, u_pool = self.m_, self.u_
    MODEL[:] = [self]
    CAP.append(dict(G=G.copy(), pairs=pairs.copy(), h=self._agreed_keys(df, pairs), m=m.copy(), u=u_pool.copy(), lam=lam,
                    strata=dict(self.strata_), forcing=list(self.forcing_), fields=[f.column + ":" + f.kind for f in self.fields],
                    idx=df.index.to_numpy().copy(), row=(df["_row"].to_numpy().copy() if "_row" in df.columns else None)))
FSModel._fit_strata = wrapped
name, cols = sys.argv[1], sys.argv[2].split(",")
inputs, keys, truth = er_real.load(name, Path("/work/shared/data"))
df = pd.read_csv(inputs[0], dtype=str, keep_default_na=False, sep=None, engine="python")
out = Path("/tmp/strata46") / f"diag_{name}.csv"
df[cols].to_csv(out, index=False)
r = trustlab.resolve(str(out))
print("F1", er_real.pairwise(np.asarray(r.entity), truth))
c = CAP[-1]
t = np.asarray(truth)
if c["row"] is not None: t = t[c["row"].astype(int)]
P, G, h = c["pairs"], c["G"], c["h"]
same = t[P[:, 0]] == t[P[:, 1]]
print("fields", c["fields"], "rules", c["forcing"], "lam", c["lam"])
np.set_printoptions(precision=3, suppress=True)
print("m\n", c["m"], "\nu_pool\n", c["u"])
for code in np.unique(h):
    sel = h == code
    st = c["strata"].get(int(code))
    print(f"--- stratum {code} pairs {sel.sum()} true {same[sel].sum()}", "" if st is None else f"lam_s*n {sel.sum()/(1+math.exp(-st[0])):.1f}")
    for f in range(G.shape[1]):
        lv_t = np.bincount(G[sel & same, f] + 1, minlength=5)
        lv_f = np.bincount(G[sel & ~same, f] + 1, minlength=5)
        line = f"  {c['fields'][f]:28s} true(miss,ex,cl,far,else) {lv_t} false {lv_f}"
        if st is not None:
            line += f" bf {MODEL[0]._stratum_bayes_factors(int(code), st[1])[f]}"
        print(line)
