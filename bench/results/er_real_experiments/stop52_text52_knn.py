"""Diagnosis (truth only to measure): how good would whole-record nearest-neighbour evidence be
on a `merged` file? Per K: precision of the K-NN pairs (IDF word cosine over the non-id
columns, blocking.nearest_pairs) and the pairwise F1 of the connected components of those
pairs alone (no model). Reads the file stop52_text52_diag.py wrote (the first column is taken
as the id). python stop52_text52_knn.py FILE"""
import sys, os
from pathlib import Path
import numpy as np, pandas as pd
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "bench"))
import er_real
from trustlab.er.blocking import nearest_pairs
from trustlab.er.rules import _norm
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

name = sys.argv[1]
tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "text52_diag"
df = pd.read_csv(tmp / f"{name}_merged_0_{name}.csv", dtype=str, keep_default_na=False)
t = df["__truth"].to_numpy()
cols = [c for c in df.columns if c not in ("__truth",) and c != df.columns[0]]
v = _norm(df[cols].fillna("").astype(str).agg(" ".join, axis=1))
n = len(df)
for K in (1, 3, 5, 10):
    P = nearest_pairs(v, K)
    same = t[P[:, 0]] == t[P[:, 1]]
    A = coo_matrix((np.ones(len(P)), (P[:, 0], P[:, 1])), shape=(n, n))
    _, lab = connected_components(A, directed=False)
    m = er_real.pairwise(lab.astype(str), t)
    print(name, K, len(P), "pair precision", round(float(same.mean()), 3), "components F1", round(m["f1"], 4),
          "P", round(m["precision"], 3), "R", round(m["recall"], 3))
