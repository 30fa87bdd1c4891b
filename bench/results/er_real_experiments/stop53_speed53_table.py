# usage (repo root): python3 stop53_speed53_table.py BRANCH.jsonl... : stop52_final vs branch rows (+ main rows from /tmp/speed53/runs) as a markdown table
import json, sys
def load(p):
    d = {}
    try:
        for l in open(p):
            r = json.loads(l)
            if "error" in r: continue
            d[r["file"]] = r
    except FileNotFoundError: pass
    return d
base = load("bench/results/er_real_experiments/stop52_final.jsonl")
br = {}
for p in sys.argv[1:]: br.update(load(p))
main = {}
for p in ["/tmp/speed53/runs/main_a.jsonl", "/tmp/speed53/runs/main_pv.jsonl", "/tmp/speed53/runs/main_b.jsonl", "/tmp/speed53/runs/main_pv2.jsonl"]:
    for k, v in load(p).items(): main.setdefault(k, []).append(v)
rows = []
for f, b in base.items():
    r = br.get(f)
    if r is None: print(f"{f}: MISSING"); continue
    m = main.get(f, [])
    rows.append((f, b["f1"], r["f1"], b["entity_hash"] == r["entity_hash"], b["status"] == r["status"], b["cpu_seconds"], [x["cpu_seconds"] for x in m], r["cpu_seconds"], b["peak_mb"], [x["peak_mb"] for x in m], r["peak_mb"], r.get("load")))
rows.sort(key=lambda x: -x[5])
print("| file | F1 stop52 → branch | entity_hash same | statuses same | CPU s stop52_final | CPU s main (back to back) | CPU s branch | peak MB stop52 / main → branch | load |")
print("|---|---|---|---|---|---|---|---|---|")
for f, fb, fr, hs, ss, cb, cm, cr, pb, pm, pr, ld in rows:
    print(f"| {f} | {fb} → {fr} | {'yes' if hs else '**NO**'} | {'yes' if ss else '**NO**'} | {cb} | {', '.join(map(str, cm)) or '–'} | {cr} | {pb} / {', '.join(map(str, pm)) or '–'} → {pr} | {ld} |")
print(len(rows), "files;", sum(r[3] for r in rows), "same hash;", sum(r[4] for r in rows), "same statuses")
