"""Dump the sorted raw partitions and the inference sample (threaded LocalCluster, so the patch reaches the tasks)."""
import sys, os, pickle, logging
import pandas as pd
import trustlab.er.distributed as D
print(D.__file__)
out = sys.argv[2]; os.makedirs(out, exist_ok=True)
orig = D._save_sorted
def patched(part, path, id_col):
    r = orig(part, path, id_col)
    pd.read_pickle(path).to_pickle(os.path.join(out, "raw_" + os.path.basename(path)))
    return r
D._save_sorted = patched
class Stop(Exception): pass
import trustlab.er.defaults as DF
def stop(*a, **k):
    s = a[1] if len(a) > 1 else k.get('sample')
    raise Stop()
orig_fr = DF.field_report
def fr(fields, sample, **k):
    sample.to_pickle(os.path.join(out, "sample.pkl"))
    return orig_fr(fields, sample, **k)
DF.field_report = fr
D._statistics = lambda *a, **k: (_ for _ in ()).throw(Stop())
from distributed import Client, LocalCluster
if __name__ == "__main__":
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c, Client(c) as cl:
        try:
            D.resolve_distributed(sys.argv[1], client=cl, id_col="rec_id", truth="entity", output=out + "/o")
        except Stop:
            pass
    print(sorted(os.listdir(out)))
