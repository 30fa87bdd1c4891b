"""resolve_distributed on a 2-worker LocalCluster up to the end of the blocking stage's shuffle
(stopped where the pair stream's bounds are placed): CPU s of the workers and of the driver, and per stage."""
import sys, os, json, time, resource, logging
import trustlab.er.distributed as D
class Stop(Exception): pass
def stop(*a, **k): raise Stop()
D._pair_divisions = stop
def usage():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_maxrss / 1024, r.ru_utime + r.ru_stime
if __name__ == "__main__":
    from distributed import Client, LocalCluster
    logging.getLogger("distributed").setLevel(logging.ERROR)
    cpu = {}
    orig_stage = D._Run.stage
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="3.5GiB", dashboard_address=None) as c, Client(c) as cl:
        cl.run(lambda: __import__("trustlab.er.distributed"))
        c0 = cl.run(usage); d0 = usage()[1]; t0 = time.perf_counter(); l0 = os.getloadavg()[0]
        run_ref = {}
        orig_init = D._Run.__init__
        def init(self, *a, **k):
            orig_init(self, *a, **k); run_ref["run"] = self
        D._Run.__init__ = init
        try:
            D.resolve_distributed(sys.argv[1], client=cl, id_col="rec_id", truth="entity", output="/tmp/scale52/kb_out")
        except Stop:
            pass
        u = cl.run(usage)
        print("ROW", json.dumps({"tag": sys.argv[2], "load": [round(l0, 1), round(os.getloadavg()[0], 1)],
              "seconds": round(time.perf_counter() - t0, 1),
              "workers_cpu": round(sum(u[k][1] - c0[k][1] for k in u), 2), "driver_cpu": round(usage()[1] - d0, 2),
              "stage_cpu": {k: round(v, 1) for k, v in run_ref["run"].cpu_seconds.items()},
              "peak_workers": sorted(round(v[0]) for v in u.values())}), flush=True)
