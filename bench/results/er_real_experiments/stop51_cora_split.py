import pickle, numpy as np, pandas as pd, sys
d = pickle.load(open(sys.argv[1],"rb")); t = d["truth"]; e = d["entity"]
df = pd.DataFrame(dict(t=t, e=e))
g = df.groupby("t")["e"].agg(lambda s: sorted(s.value_counts().tolist(), reverse=True))
g = g[g.map(len) > 1]
sz = df.groupby("t").size()
lost = 0
for k, v in sorted(g.items(), key=lambda kv: -sz[kv[0]]):
    miss = (sum(v)**2 - sum(x*x for x in v))//2
    lost += miss
    print(k, sz[k], v[:8], "missing pairs", miss)
print("total missing", lost)
# impure clusters
h = df.groupby("e")["t"].agg(lambda s: sorted(s.value_counts().tolist(), reverse=True))
print("impure clusters:", [(k, v[:5]) for k, v in h.items() if len(v) > 1][:20])
