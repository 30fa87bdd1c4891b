"""jedai_cora: the sessions, and the fitted m / u per field and level against the truth's shares."""
import sys, warnings, numpy as np, pickle
from pathlib import Path
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import load
import trustlab
inputs, keys, truth = load("jedai_cora", Path("/work/shared/data"))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    res = trustlab.resolve(str(inputs[0]))
mdl = res.model
G = mdl.levels(res.features)
t = np.unique(np.asarray(truth).astype(str), return_inverse=True)[1]
P = res.pairs
same = t[P[:,0]]==t[P[:,1]]
np.save("/tmp/cora45/cora_G.npy", G)
print(mdl.sessions_)
np.set_printoptions(precision=3, suppress=True)
for c,f in enumerate(mdl.fields):
    g = G[:,c]
    tm = np.bincount(g[same&(g>=0)], minlength=4)/max(1,(same&(g>=0)).sum())
    tu = np.bincount(g[~same&(g>=0)], minlength=4)/max(1,(~same&(g>=0)).sum())
    print(f"{f.column:10s} {f.kind:8s} m {mdl.m_[c]} truth m {tm} | u {mdl.u_[c]} truth u {tu}")
