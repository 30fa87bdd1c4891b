"""jedai_cora: how consistent the truth is about one title (pairs of identical normalised titles that are /
are not one entity; entities per title; the pipeline's clusters united by identical title)."""
import pickle, numpy as np, pandas as pd, collections, re, sys
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import pairwise
d = pickle.load(open("/tmp/cora45/jedai_cora.pkl","rb"))
P,ent,t,R = d["P"],d["ent"],d["t"],d["records"]
ti = R["title"].fillna("").map(lambda s: re.sub(r"[^a-z0-9]","",s.lower()))
g = pd.factorize(ti)[0]; g[ti.to_numpy()==""] = -1
# pairs with identical normalised title
n=len(t); tp=fp=0
for k in np.unique(g[g>=0]):
    mem=np.flatnonzero(g==k)
    if len(mem)<2: continue
    tt=t[mem]; c=collections.Counter(tt)
    same=sum(v*(v-1)//2 for v in c.values()); tot=len(mem)*(len(mem)-1)//2
    tp+=same; fp+=tot-same
print("identical-title pairs: same entity", tp, "different", fp)
print("titles per entity:", collections.Counter(collections.Counter((a,b) for a,b in zip(t,g) if b>=0).keys().__len__() for _ in [0]))
ne = collections.Counter(); 
for e in np.unique(t): ne[len(set(g[(t==e)&(g>=0)]))]+=1
print("distinct exact titles per entity (hist):", sorted(ne.items())[:10])
nt = collections.Counter()
for k in np.unique(g[g>=0]): nt[len(set(t[g==k]))]+=1
print("entities per exact title (hist):", sorted(nt.items()))
print("pipeline:", pairwise(ent,t))
# union pipeline clusters with identical titles
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
rows=np.r_[np.arange(n), np.arange(n)[g>=0]]; cols=np.r_[ent.astype(int)+n, g[g>=0]+n+ent.max()+1]
A=sp.coo_matrix((np.ones(len(rows)),(rows,cols)),shape=(n+ent.max()+1+g.max()+1,)*2)
_,lab=connected_components(A,directed=False)
print("pipeline clusters united by identical title:", pairwise(lab[:n],t))
print("identical title alone:", pairwise(np.where(g>=0,g,np.arange(n)+10**6),t))
