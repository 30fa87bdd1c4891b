"""Stop 52 (comp52): item-3 table and the unproven components before -> after from two
bench/er_components.py --jsonl files (before: --no-lp-bound; after: defaults). Files missing
from BEFORE are taken from AFTER (none of their components is unproven, so the LP bound
does not act there). Usage: python stop52_comp52_table.py BEFORE.jsonl AFTER.jsonl"""
import json, sys

B = {r["file"]: r for r in map(json.loads, open(sys.argv[1]))}
A = {r["file"]: r for r in map(json.loads, open(sys.argv[2]))}
bands = ["2-10", "11-50", "51-200", "201-1000", ">1000"]


def table(rows):
    out = {b: [0, 0, 0, 0] for b in bands}  # n, proven, <=1 %, <=5 %
    for r in rows.values():
        gaps = {}
        for u in r["unproven"]:
            gaps.setdefault(u["size"], []).append(u["gap"])
        for b in bands:
            for st, k in r["bands"][b].items():
                out[b][0] += k
                if st in ("optimal", "closed_form"):
                    out[b][1:] = [x + k for x in out[b][1:]]
        for u in r["unproven"]:
            s = u["size"]
            b = "2-10" if s <= 10 else "11-50" if s <= 50 else "51-200" if s <= 200 else "201-1000" if s <= 1000 else ">1000"
            out[b][2] += u["gap"] <= 0.01
            out[b][3] += u["gap"] <= 0.05
    return out


rows = {f: B.get(f, A[f]) for f in A}
tb, ta = table(rows), table(A)
print("| band | n | proven before / after | proven or gap <= 1 % before / after | <= 5 % before / after |")
print("|---|---|---|---|---|")
for b in bands:
    print(f"| {b} | {ta[b][0]} | {tb[b][1]} / {ta[b][1]} | {tb[b][2]} / {ta[b][2]} | {tb[b][3]} / {ta[b][3]} |")
print()
print("| file | component | status before -> after | gap before | gap after | LP rounds, work (ref s) / budget, wall s |")
print("|---|---|---|---|---|---|")
items = []
for f in A:
    ub = {(u["size"]): u for u in rows[f]["unproven"]}
    ua = {(u["size"]): u for u in A[f]["unproven"]}
    for s in sorted(set(ub) | set(ua), reverse=True):
        b, a = ub.get(s), ua.get(s)
        items.append((-(b or a)["gap"], f, s, b, a))
for _, f, s, b, a in sorted(items):
    ga = "proven" if a is None else f"{100 * a['gap']:.2f} %"
    gb = "proven" if b is None else f"{100 * b['gap']:.2f} %"
    st = f"{b['status'] if b else 'optimal'} -> {a['status'] if a else 'optimal (lp)'}"
    lp = "" if a is None else (f"{a.get('lp_bound_rounds')}, {a.get('lp_bound_work') or 0:.1f} / {a.get('lp_bound_budget')}, "
                               f"{a.get('lp_bound_seconds') or 0:.0f}" + (" (safety stop)" if a.get("lp_bound_wall_stop") else ""))
    print(f"| {f} | {s} | {st} | {gb} | {ga} | {lp} |")
print()
print("| file | F1 before / after | wall s before / after | CPU s before / after | clustering CPU s before / after | peak MB before / after |")
print("|---|---|---|---|---|---|")
for f in A:
    b, a = rows[f], A[f]
    cb = sum(c.get("cpu_seconds", 0) for c in b["partition_calls"])
    ca = sum(c.get("cpu_seconds", 0) for c in a["partition_calls"])
    print(f"| {f} | {b['f1']} / {a['f1']} | {b['seconds']} / {a['seconds']} | {b.get('cpu_seconds')} / {a.get('cpu_seconds')} | "
          f"{cb:.1f} / {ca:.1f} | {b['peak_mb']} / {a['peak_mb']} |")
