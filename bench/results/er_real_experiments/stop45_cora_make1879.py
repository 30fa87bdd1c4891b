"""A cora-like file of 1,879 records whose largest entities grow to ~200-300 records: jedai_cora plus
584 noisy copies of its records, drawn with probability proportional to the square of their entity's size
(noise as stop44_cora3x_make.py: cells blanked with p 0.15, 10 % of words of 4+ characters lose a character)."""
import sys
from pathlib import Path
import numpy as np, pandas as pd
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import load
rng = np.random.default_rng(7)
df = pd.read_csv("/work/shared/data/er/jedai_cora/cora.csv", sep="|", dtype=str)
df = df.drop(columns=[c for c in df.columns if c.startswith("Unnamed")])
df["Entity Id"] = load("jedai_cora", Path("/work/shared/data"))[2]
cols = [c for c in df.columns if c != "Entity Id"]
def noisy(s):
    if not isinstance(s, str): return s
    if rng.random() < 0.15: return np.nan
    w = s.split(" ")
    for i in range(len(w)):
        if len(w[i]) > 3 and rng.random() < 0.1:
            j = rng.integers(len(w[i])); w[i] = w[i][:j] + w[i][j + 1:]
    return " ".join(w)
size = df["Entity Id"].map(df["Entity Id"].value_counts()).to_numpy().astype(float)
pr = size ** 2; pr /= pr.sum()
pick = rng.choice(len(df), 1879 - len(df), replace=True, p=pr)
c = df.iloc[pick].copy()
for col in cols: c[col] = c[col].map(noisy)
out = pd.concat([df, c], ignore_index=True).sample(frac=1, random_state=0).reset_index(drop=True)
truth = out.pop("Entity Id")
out.insert(0, "rid", np.arange(len(out)))
out.to_csv("/tmp/cora45/cora1879.csv", index=False)
truth.to_frame("t").to_csv("/tmp/cora45/cora1879_truth.csv", index=False)
print(out.shape, truth.value_counts().head(5).tolist())
