"""cProfile of the driver's inference (field_report + _rules) on the 1M run's 200k sample."""
import sys, time, cProfile, pstats, pickle, os
import dask
dask.config.set(scheduler="synchronous")
import pandas as pd
from trustlab.er import distributed as D
from trustlab.er.defaults import field_report
path = "/tmp/scale52/w/n1000000/parquet"
cache = "/tmp/scale53/sample.pkl"
if os.path.exists(cache):
    sample = pd.read_pickle(cache)
else:
    src = D._source(path, None)
    n = int(src.shape[0].compute())
    t = time.process_time()
    sample = D._as_object(src.sample(frac=min(1.0, 200_000 / n), random_state=0).compute().reset_index(drop=True))
    print("sample cpu", time.process_time() - t, len(sample))
    sample.to_pickle(cache)
n = 1_000_000
id_col = "rec_id"
def infer():
    s = D._placeholders_to_missing(sample, id_col)
    t0 = time.process_time()
    report = field_report(None, s, id_col=id_col, exclude=["entity"])
    t1 = time.process_time()
    flds = list(report.fields)
    rules = D._rules(None, s, flds, 200, n)   # max_block_size checked below
    t2 = time.process_time()
    print("field_report", round(t1 - t0, 2), "rules", round(t2 - t1, 2))
    return flds, rules
if len(sys.argv) > 1 and sys.argv[1] == "prof":
    pr = cProfile.Profile(); pr.enable(); r = infer(); pr.disable()
    pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
    pstats.Stats(pr).sort_stats("tottime").print_stats(30)
else:
    r = infer()
print(r[1]); print([ (f.kind, f.columns()) for f in r[0]])
