"""1M resolve_distributed on a 2-worker LocalCluster: CPU s per stage, task stream by stage x task kind."""
import json, logging, os, sys, time, resource
sys.setrecursionlimit(10000)
from pathlib import Path
work = Path(sys.argv[1]); out = sys.argv[2]; tag = sys.argv[3]; tasks = len(sys.argv) > 4 and sys.argv[4] == 'tasks'
from distributed import Client, LocalCluster, get_task_stream
from dask.utils import key_split
from trustlab.er.distributed import resolve_distributed
logging.getLogger("distributed").setLevel(logging.ERROR)
marks = []
class H(logging.Handler):
    def emit(self, rec):
        m = rec.getMessage()
        if m.endswith(": start"):
            marks.append((time.time(), m.split()[1].rstrip(':')))
log = logging.getLogger("trustlab.er.distributed"); log.addHandler(H()); log.setLevel(logging.INFO)
def usage():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_maxrss / 1024, r.ru_utime + r.ru_stime
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="3.5GiB", dashboard_address=None)
    client = Client(cluster)
    load0 = os.getloadavg()[0]
    pm = int(os.environ.get("PARTS_MAX", "0"))
    import trustlab.er.distributed as D
    def setpm(pm=pm):
        import trustlab.er.distributed as D; D._PARTS_MAX = pm
    if pm: client.run(setpm); setpm()
    def instr():
        import time, os
        import trustlab.er.distributed as D
        if getattr(D, "_instr", None): return
        orig = D._file_parts
        D._instr = {"calls": 0, "miss": 0, "miss_cpu": 0.0, "cpu": 0.0, "paths": set()}
        def fp(path, meta_name):
            st = D._instr
            full = os.path.join(path, meta_name)
            miss = not any(k[0] == full for k in D._PARTS)
            t = time.process_time()
            r = orig(path, meta_name)
            dt = time.process_time() - t
            st["calls"] += 1; st["cpu"] += dt; st["paths"].add(full)
            if miss: st["miss"] += 1; st["miss_cpu"] += dt
            return r
        D._file_parts = fp
    def collect():
        import trustlab.er.distributed as D
        st = dict(D._instr); st["paths"] = len(st["paths"]); return st
    if os.environ.get("INSTR"): client.run(instr)
    c0 = client.run(usage); d0 = usage()[1]; t0 = time.perf_counter()
    if tasks:
        with get_task_stream(client) as ts:
            res = resolve_distributed(str(work / "parquet"), client=client, id_col="rec_id", truth="entity", output=out)
    else:
        res = resolve_distributed(str(work / "parquet"), client=client, id_col="rec_id", truth="entity", output=out)
    sec = time.perf_counter() - t0
    u = client.run(usage)
    cpu = sum(u[k][1] - c0[k][1] for k in u) + usage()[1] - d0
    row = {"tag": tag, "load": [round(load0, 1), round(os.getloadavg()[0], 1)], "seconds": round(sec, 1),
           "cpu": round(cpu, 1), "resolve_cpu": round(cpu - res.cpu_seconds.get("evaluation", 0), 1),
           "stage_cpu": {k: round(v, 1) for k, v in res.cpu_seconds.items()},
           "peak_workers": sorted(round(v[0]) for v in u.values()), "driver_peak": round(usage()[0]),
           "n_entities": res.n_entities, "f1": round(res.metrics["f1"], 4)}
    if os.environ.get("INSTR"): row["instr"] = client.run(collect)
    print("ROW", json.dumps(row), flush=True)
    if tasks:
        agg = {}
        for t in ts.data:
            for s in t.get("startstops", ()):
                if s["action"] != "compute": continue
                st = "?"
                for tm, name in marks:
                    if tm <= s["start"]: st = name
                k = (st, key_split(t["key"]))
                agg[k] = agg.get(k, 0.0) + s["stop"] - s["start"]
        rows = sorted(agg.items(), key=lambda kv: -kv[1])
        (Path(out).parent / f"tasks_{tag}.txt").write_text("\n".join(f"{a:12s} {b:40s} {v:8.2f}" for (a, b), v in rows))
    client.close(); cluster.close()
