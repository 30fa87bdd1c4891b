import numpy as np
import pandas as pd

rng = np.random.default_rng(1)
df = pd.read_csv("/work/shared/data/er/jedai_cora/cora.csv", sep="|", dtype=str)
df = df.drop(columns=[c for c in df.columns if c.startswith("Unnamed")])
import sys

sys.path.insert(0, "/work/wt-cora44/bench")
from pathlib import Path

from er_real import load

df["Entity Id"] = load("jedai_cora", Path("/work/shared/data"))[2]
cols = [c for c in df.columns if c != "Entity Id"]


def noisy(s):
    if not isinstance(s, str) or rng.random() < 0.0:
        return s
    if rng.random() < 0.15:
        return np.nan
    w = s.split(" ")
    for i in range(len(w)):
        if len(w[i]) > 3 and rng.random() < 0.1:
            j = rng.integers(len(w[i]))
            w[i] = w[i][:j] + w[i][j + 1 :]
    return " ".join(w)


parts = [df]
for k in (1, 2):
    c = df.copy()
    for col in cols:
        c[col] = c[col].map(noisy)
    parts.append(c)
out = pd.concat(parts, ignore_index=True).sample(frac=1, random_state=0).reset_index(drop=True)
truth = out.pop("Entity Id")
out.insert(0, "rid", np.arange(len(out)))
out.to_csv("/tmp/cora44/cora3x.csv", index=False)
truth.to_frame("t").to_csv("/tmp/cora44/cora3x_truth.csv", index=False)
print(out.shape, truth.value_counts().head(3).tolist())
