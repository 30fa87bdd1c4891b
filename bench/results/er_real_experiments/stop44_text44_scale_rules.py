import sys, time, resource
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3]))
import numpy as np
from trustlab.er import generate_records
from trustlab.er.fields import infer_fields_report
from trustlab.er.defaults import default_rules, check_pair_budget
from trustlab.er.kinds import pair_width
from trustlab.er.blocking import block
from trustlab.er.rules import parse_rule, Rule
n = int(sys.argv[1])
t = time.time(); df = generate_records(n, random_state=0); df.pop("entity"); print("gen", round(time.time() - t, 1), flush=True)
fields = infer_fields_report(df).fields
t = time.process_time(); rules = default_rules(df, fields); print("rules", rules, round(time.process_time() - t, 1), flush=True)
w = pair_width(fields)
print("counted", check_pair_budget(df, rules, 200, w))
for r in rules:
    R = parse_rule(r)
    if R.near:
        t = time.process_time(); p1 = block(df, [str(Rule(R.kind, R.columns, R.option, R.cap))]); t1 = time.process_time() - t
        t = time.process_time(); p2 = block(df, [r]); t2 = time.process_time() - t
        print(r, "plain", len(p1), round(t1, 1), "s; near", len(p2), round(t2, 1), "s")
print("maxrss MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
