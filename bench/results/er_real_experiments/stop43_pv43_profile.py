# usage: PYTHONPATH=. python stop43_pv43_profile.py FILE.csv [TRUTH.npy]  (writes /tmp/pv43/entity_$TAG.npy)
"""Stage profile of trustlab.resolve on one CSV: wall, CPU and peak RSS per wrapped function."""
import sys, time, threading, os, functools, json, resource
import psutil, numpy as np
path = sys.argv[1]
truthf = sys.argv[2] if len(sys.argv) > 2 else None
proc = psutil.Process()
stack = ["import"]
peak = {}     # label -> max rss
samples = []
stop = False
def sampler():
    while not stop:
        r = proc.memory_info().rss
        lab = "/".join(stack)
        if r > peak.get(lab, 0):
            peak[lab] = r
        samples.append((time.perf_counter(), r, lab))
        time.sleep(0.02)
th = threading.Thread(target=sampler, daemon=True); th.start()
import trustlab
import trustlab.er.pipeline as P, trustlab.er.scoring as S, trustlab.er.cluster as C
rows = []
def wrap(mod, name, label=None):
    f = getattr(mod, name)
    lab = label or name
    @functools.wraps(f)
    def g(*a, **k):
        stack.append(lab)
        t, c = time.perf_counter(), time.process_time()
        r0 = proc.memory_info().rss
        try:
            return f(*a, **k)
        finally:
            r1 = proc.memory_info().rss
            rows.append(("/".join(stack), time.perf_counter() - t, time.process_time() - c, r0 / 2**20, r1 / 2**20))
            stack.pop()
    setattr(mod, name, g)
for n in ["_read_records", "field_report", "_block", "compare", "random_pairs", "_features", "_score",
          "_tighten_blocking", "_estimate_completeness", "_compete", "_complete", "_component_completion",
          "_evaluate", "_result", "cluster_one_to_one", "default_rules", "check_pair_budget", "block", "rule_hits"]:
    if hasattr(P, n): wrap(P, n)
for n in ["fit", "field_weights", "proba_from_field_weights", "_fit_by_sessions", "levels", "tf_values", "key_states"]:
    wrap(S.FSModel, n, "FS." + n)
wrap(P._ClusteringConfig, "cluster", "cluster")
for n in ["_cluster_xer", "_enumerate_mid", "_status_of"]:
    wrap(C, n)
t0 = time.perf_counter()
r = trustlab.resolve(path, truth=None)
tot = time.perf_counter() - t0
stop = True; th.join()
print(f"TOTAL wall {tot:.1f}s  ru_maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MB")
print(json.dumps({k: round(v, 2) for k, v in r.seconds.items()}))
print("calls (innermost first as they end): label wall cpu rss_in rss_out")
for lab, w, c, a, b in rows:
    if w > 0.5 or abs(b - a) > 100:
        print(f"  {lab:70s} {w:7.1f} {c:7.1f} {a:7.0f} {b:7.0f}")
print("peak RSS per label:")
for lab, v in sorted(peak.items(), key=lambda x: -x[1])[:25]:
    print(f"  {v/2**20:7.0f} MB  {lab}")
s = r.summary()
print("pairs", s.get("blocking", {}).get("n_candidate_pairs"), "status", s.get("component_status"))
print({k: v for k, v in s.get("blocking", {}).items() if k != "rules"})
if truthf:
    from trustlab.metrics.clustering import pairwise_precision_recall_f1
    print("PRF", pairwise_precision_recall_f1(np.asarray(r.entity), np.load(truthf)))
np.save("/tmp/pv43/entity_" + os.environ.get("TAG", "x") + ".npy", np.asarray(r.entity).astype(str))
# RSS timeline (coarse)
last = None
for t, rr, lab in samples[::25]:
    print(f"  t={t-t0:6.1f} rss={rr/2**20:6.0f} {lab}")
