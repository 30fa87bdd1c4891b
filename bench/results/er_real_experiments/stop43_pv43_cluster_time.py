# usage: PYTHONPATH=. python stop43_pv43_cluster_time.py  (pv_inventors CSV and truth written by bench/er_real.load to /tmp)
import sys, time, numpy as np
import trustlab
from trustlab.er.cluster import cluster_pairs
from trustlab.metrics.clustering import pairwise_precision_recall_f1
truth = np.load("/tmp/pv43/truth.npy")
t0 = time.perf_counter()
r = trustlab.resolve("/tmp/trustlab_er_real/pv_inventors.csv")
print("resolve", round(time.perf_counter() - t0, 1), r.seconds, pairwise_precision_recall_f1(np.asarray(r.entity), truth), flush=True)
np.savez("/tmp/pv43/scores.npz", pairs=r.pairs, w=r.weights)
n = len(truth)
for T in (5, 15, 30, 60):
    t = time.perf_counter()
    cr = cluster_pairs(n, r.pairs, r.weights, method="xer", time_limit=T)
    st = {}
    for s in cr.status: st[s] = st.get(s, 0) + 1
    print(T, round(time.perf_counter() - t, 1), pairwise_precision_recall_f1(cr.labels, truth), st, flush=True)
