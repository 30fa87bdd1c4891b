"""The write-up's before -> after table of the in-pipeline experiment (TRUSTLAB_EXP_RANK53=1) on `merged`, with the
baseline's own duplicate share (1 - entities / records of the stop 52 row). python stop53_knn53_cmp.py"""
import json
from pathlib import Path
H = Path(__file__).parent
base = {}
for l in open(H / "stop52_final_perturb.jsonl"):
    r = json.loads(l)
    if r.get("system", "trustlab") == "trustlab":
        base[(r["file"], r["variant"])] = r
rows = []
for f in ("stop53_knn53_rank_perturb.jsonl", "stop53_knn53_rank_perturb2.jsonl"):
    for l in open(H / f):
        r = json.loads(l); b = base[(r["file"], r["variant"])]
        rows.append((r["f1"] - b["f1"], r["file"], b, r))
print("| file (`merged`) | F1 stop 52 → rank field | change | P / R before → after | entities | baseline's duplicate share 1 − entities/records |")
print("|---|---|---|---|---|---|")
for d, f, b, r in sorted(rows, key=lambda x: x[0]):
    print(f"| {f} | {b['f1']:.4f} → {r['f1']:.4f} | {d:+.4f} | {b['precision']:.3f} / {b['recall']:.3f} → {r['precision']:.3f} / {r['recall']:.3f} "
          f"| {b['entities']:,} → {r['entities']:,} | {1 - b['entities'] / b['records']:.3f} |")
