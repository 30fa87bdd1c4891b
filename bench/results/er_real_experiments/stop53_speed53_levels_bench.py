# FSModel.levels on a 400,000 x 164 row-major X: cache-sized row pieces vs whole columns (same levels)
import numpy as np, time
from types import SimpleNamespace
from trustlab.er import scoring
from trustlab.er.kinds import Field
rng = np.random.default_rng(0)
n, F = 400_000, 41
fields = [Field(f"c{k}", ["name", "string", "exact", "address"][k % 4]) for k in range(F)]
names = []
for f in fields:
    names += [f"{f.column}:jaro_winkler", f"{f.column}:token_set", f"{f.column}:indel", f"{f.column}:exact"]
names += [f"x{k}" for k in range(102 - len(names))] if len(names) < 102 else []
X = rng.random((n, len(names)))
X[rng.random(X.shape) < 0.1] = np.nan
X[rng.random(X.shape) < 0.1] = 1.0
fm = SimpleNamespace(X=X, names=names)
m = scoring.FSModel(fields)
c = time.process_time(); G1 = m.levels(fm); t1 = time.process_time() - c
scoring._LEVEL_ROWS = 1 << 30
c = time.process_time(); G2 = m.levels(fm); t2 = time.process_time() - c
print("pieces", round(t1, 2), "whole-col", round(t2, 2), np.array_equal(G1, G2), X.shape)
