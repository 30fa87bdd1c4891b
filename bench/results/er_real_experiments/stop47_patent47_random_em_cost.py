import time, numpy as np, pandas as pd
from trustlab.er import generate_records
from trustlab.er.defaults import random_pairs
from trustlab.er.comparisons import compare
from trustlab.er.scoring import FSModel, _em_rows
import trustlab.er as E
df = generate_records(200000, random_state=0); df.pop("entity")
from trustlab.er.fields import infer_fields
fl = infer_fields(df)
fl = fl.fields if hasattr(fl, "fields") else fl
m = FSModel(fl)
rp = random_pairs(len(df), np.random.default_rng(0))
fr = compare(df, rp, fl, only=m.needed_features())
Gr = m._em_levels(m.levels(fr))
u = m._random_u(Gr)
Gu, cnt, s = _em_rows(Gr)
print("random pairs", len(rp), "fields", Gr.shape[1], "distinct rows", len(Gu))
mm = np.tile(np.array([0.7, 0.2, 0.07, 0.03]), (Gr.shape[1], 1))
t = time.process_time(); un, lam = m._random_nonmatch_u(Gr, mm, u, len(df)); print("cpu s", time.process_time() - t, "lam_r", lam)
