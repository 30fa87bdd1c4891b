import sys; sys.path.insert(0, "/tmp/cora48")
from oracle import *
import pandas as pd, re
base = d["fields"]; G0 = d["G"].copy()
col = {f.column: c for c, f in enumerate(base)}
def with_cols(repl):
    G = G0.copy()
    for c, g in repl.items():
        G[:, col[c]] = g
    return G
res = {}
for c in ("title", "author", "venue", "note"):
    g, _ = levels_of(Field(c, "text")); res[c] = g
    oracle(with_cols({c: g}), f"{c} as text 0.8/0.6")
oracle(with_cols({c: res[c] for c in ("title", "author", "venue")}), "title+author+venue text")
oracle(with_cols({c: res[c] for c in ("title", "author", "venue", "note")}), "title+author+venue+note text")
# title with more cuts
for cuts in ([0.9, 0.8, 0.6, 0.4], [0.8, 0.6, 0.4]):
    g, _ = levels_of(Field("title", "text"), cuts); oracle(with_cols({"title": g}), f"title text cuts {cuts}")
    g, _ = levels_of(Field("title", "string"), cuts); oracle(with_cols({"title": g}), f"title string(token_set) cuts {cuts}")
# * more levels
for cuts in ([0.9, 0.75, 0.5], [0.9, 0.75, 0.6, 0.45, 0.3], [0.75, 0.5, 0.3]):
    g, _ = levels_of(Field("*", "record"), cuts); res["*"+str(cuts)] = g
    oracle(with_cols({"*": g}), f"* cuts {cuts}")
# numbers of pages / volume / year as sets of digit runs
def nums(s):
    return s.fillna("").astype(str).str.findall(r"\d+").map(lambda x: tuple(sorted(set(x))))
for c in ("pages", "volume", "year"):
    v = nums(df[c]).to_numpy()
    a, b = v[P[:, 0]], v[P[:, 1]]
    emp = np.array([len(x) == 0 for x in v])
    miss = emp[P[:, 0]] | emp[P[:, 1]]
    sa = pd.Series(a); sb = pd.Series(b)
    eq = (sa == sb).to_numpy()
    inter = np.array([len(set(x) & set(y)) > 0 for x, y in zip(a, b)])
    g = np.where(miss, -1, np.where(eq, 0, np.where(inter, 2, 3))).astype(np.int8)
    res["n" + c] = g
    print(c, "levels", np.bincount(g + 1), "current", np.bincount(G0[:, col[c]] + 1))
    oracle(with_cols({c: g}), f"{c} as digit sets (same / overlap / else)")
oracle(with_cols({"pages": res["npages"], "volume": res["nvolume"]}), "pages+volume digit sets")
oracle(with_cols({"title": res["title"], "pages": res["npages"], "volume": res["nvolume"]}), "title text + pages+volume digit sets")
