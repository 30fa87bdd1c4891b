import sys; sys.path.insert(0, "/tmp/cora48")
from oracle import *
base = d["fields"]; G0 = d["G"].copy()
col = {f.column: c for c, f in enumerate(base)}
oracle(G0, "current design")
G = G0.copy()
for c in ("title", "author", "venue"):
    G[:, col[c]] = levels_of(Field(c, "text"))[0]
oracle(G, "title+author+venue text")
