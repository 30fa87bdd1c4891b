import time, pandas as pd
from trustlab.er import distributed as D
from trustlab.er.defaults import field_report
sample = pd.read_pickle("/tmp/scale53/sample.pkl")
for rep in range(2):
    t0 = time.process_time()
    s = D._placeholders_to_missing(sample, "rec_id")
    t1 = time.process_time()
    report = field_report(None, s, id_col="rec_id", exclude=["entity"])
    t2 = time.process_time()
    rules = D._rules(None, s, list(report.fields), 200, 1_000_000)
    t3 = time.process_time()
    print("placeholders", round(t1-t0,2), "field_report", round(t2-t1,2), "rules", round(t3-t2,2), flush=True)
