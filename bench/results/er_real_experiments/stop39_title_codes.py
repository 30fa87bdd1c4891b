import sys, numpy as np, pandas as pd
from pathlib import Path
sys.path.insert(0, "bench")
import er_real as E
from trustlab.er.kinds import code_tokens
inputs, keys, truth = E.load("walmart_amazon", Path("/work/shared/data"))
A = pd.read_csv(inputs[0], sep="|", dtype=str, keep_default_na=False); B = pd.read_csv(inputs[1], sep="|", dtype=str, keep_default_na=False)
def codes(df):
    ct = code_tokens(df["title"].reset_index(drop=True))
    return ct.groupby(level=0).agg(set).reindex(range(len(df))).apply(lambda x: x if isinstance(x, set) else set())
ca, cb = codes(A), codes(B)
ma = A["modelno"].str.lower().str.replace(r"[-/._+#*\s]+", "", regex=True); mb = B["modelno"].str.lower().str.replace(r"[-/._+#*\s]+", "", regex=True)
gt = pd.read_csv("/work/shared/data/er/walmart_amazon/gt.csv", sep="|", dtype=str)
ia = {v: i for i, v in enumerate(A["id"])}; ib = {v: i for i, v in enumerate(B["id"])}
share = both = mod_eq = mod_in_title = 0
for x, y in gt.iloc[:, :2].itertuples(index=False):
    a, b = ia[x], ib[y]
    share += bool(ca[a] & cb[b]); both += bool(ca[a]) and bool(cb[b])
    mod_eq += (ma[a] == mb[b] and ma[a] != "")
    mod_in_title += (mb[b] in ca[a]) or (ma[a] in cb[b])
n = len(gt)
print(f"true pairs {n}: share a title code {share/n:.2f}; both titles have codes {both/n:.2f}; modelno equal {mod_eq/n:.2f}; one's modelno among the other's title codes {mod_in_title/n:.2f}")
print("walmart titles with a code", round((ca.apply(len) > 0).mean(), 2), "amazon", round((cb.apply(len) > 0).mean(), 2))
