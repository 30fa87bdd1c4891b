import sys, numpy as np, pandas as pd
from pathlib import Path
sys.path.insert(0, "bench")
import er_real as E
from sklearn.feature_extraction.text import TfidfVectorizer
variant = sys.argv[1]
inputs, keys, truth = E.load("walmart_amazon", Path("/work/shared/data"))
A = pd.read_csv(f"/tmp/me39/wa/{variant}/walmart.csv", dtype=str, keep_default_na=False)
B = pd.read_csv(f"/tmp/me39/wa/{variant}/amazon.csv", dtype=str, keep_default_na=False)
ta = A.drop(columns=["id"]).agg(" ".join, axis=1); tb = B.drop(columns=["id"]).agg(" ".join, axis=1)
an = sys.argv[2] if len(sys.argv) > 2 else "char_wb"
v = TfidfVectorizer(analyzer=an, ngram_range=(3, 3) if an != "word" else (1, 1), lowercase=True, sublinear_tf=True).fit(pd.concat([ta, tb]))
XA, XB = v.transform(ta), v.transform(tb)
S = (XA @ XB.T).tocsr()
rows, cols = S.nonzero(); vals = np.asarray(S[rows, cols]).ravel()
order = np.argsort(-vals)
tmap = {(k[0], str(k[1])): t for k, t in zip(keys, truth)}
tA = np.array([tmap[("walmart", i)] for i in A["id"]]); tB = np.array([tmap[("amazon", i)] for i in B["id"]])
from collections import Counter
allt = Counter(list(tA) + list(tB)); ntrue = sum(c * (c - 1) // 2 for c in allt.values())
best = (0, 0)
for th in np.arange(0.2, 0.9, 0.05):
    ua, ub = set(), set(); tp = fp = 0
    for k in order:
        if vals[k] < th: break
        a, b = rows[k], cols[k]
        if a in ua or b in ub: continue
        ua.add(a); ub.add(b)
        if tA[a] == tB[b]: tp += 1
        else: fp += 1
    p = tp / max(tp + fp, 1); r = tp / ntrue; f = 2 * p * r / max(p + r, 1e-9)
    if f > best[0]: best = (round(f, 3), round(th, 2), round(p, 3), round(r, 3))
print(variant, an, "best F1 (threshold chosen with the truth)", best)
