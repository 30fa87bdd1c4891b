import sys; sys.path.insert(0, "/tmp/cora48")
from oracle import *
from trustlab.er.scoring import _feature_index
base = d["fields"]; G0 = d["G"].copy()
col = {f.column: c for c, f in enumerate(base)}
fm = compare(df, P, base, only={"*": {"cosine"}})
k = _feature_index(fm.names, "*", "cosine"); cosv = fm.X[:, k]
print("nan share", np.isnan(cosv).mean())
def lv(cuts):
    g = np.full(len(P), len(cuts) + 1, np.int8)
    for i, c in reversed(list(enumerate(cuts))):
        g[cosv >= c] = i + 1
    g[cosv >= 1 - 1e-9] = 0
    return np.where(np.isnan(cosv), -1, g)
def with_cols(repl):
    G = G0.copy()
    for c, g in repl.items(): G[:, col[c]] = g
    return G
g = lv([0.75, 0.5]); print("agree w/ pipeline", (g == G0[:, col["*"]]).mean())
oracle(with_cols({"*": g}), "* 0.75/0.5 recomputed")
for cuts in ([0.9, 0.75, 0.5], [0.9, 0.75, 0.6, 0.45, 0.3], [0.75, 0.5, 0.3], [0.85, 0.7, 0.55, 0.4, 0.25]):
    oracle(with_cols({"*": lv(cuts)}), f"* cuts {cuts}")
tt, _ = levels_of(Field("title", "text"))
oracle(with_cols({"*": lv([0.9, 0.75, 0.6, 0.45, 0.3]), "title": tt}), "* 5 cuts + title text")
