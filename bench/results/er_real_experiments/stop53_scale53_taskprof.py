"""cProfile inside the encode and level tasks: resolve_distributed on the 200k set, in-process cluster (1 worker thread)."""
import cProfile, pstats, sys, io, time, logging
from distributed import Client, LocalCluster
from trustlab.er import distributed as D
logging.getLogger("distributed").setLevel(logging.ERROR)
profs = {}
def wrap(name):
    fn = getattr(D, name)
    def w(*a, **k):
        pr = profs.setdefault(name, cProfile.Profile())
        pr.enable()
        try:
            return fn(*a, **k)
        finally:
            pr.disable()
    w.__name__ = fn.__name__
    setattr(D, name, w)
for n in ("_encode_file", "_level_file"):
    wrap(n)
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    client = Client(cluster)
    t = time.process_time()
    res = D.resolve_distributed("/tmp/scale52/w/n200000/parquet", client=client, id_col="rec_id", truth="entity",
                                output="/tmp/scale53/runs/prof_out")
    print("cpu", time.process_time() - t, res.n_entities)
    for n, pr in profs.items():
        st = pstats.Stats(pr).strip_dirs().sort_stats("tottime")
        print("=====", n); st.print_stats(35)
    client.close(); cluster.close()
