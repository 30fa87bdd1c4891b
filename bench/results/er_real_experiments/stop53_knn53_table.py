"""The write-up's table from stop53_knn53_evidence.jsonl and stop53_knn53_offset_em.jsonl (python ... )."""
import json
from pathlib import Path
H = Path(__file__).parent
ev = {}
for l in open(H / "stop53_knn53_evidence.jsonl"):
    r = json.loads(l); ev[(r["file"], r["variant"])] = r
em = {}
for l in open(H / "stop53_knn53_offset_em.jsonl"):
    r = json.loads(l); f, v = r["dump"][5:].rsplit("_", 1); em[(f, v)] = r
print("| file (variant) | F1 | expected / called (ratio) | true pairs missed at p>0.5, of which mutual best / best of one / neither | mutual, not called: pairs / true | best of one, not called: pairs / true | pair F1: model → + all mutual → oracle + true mutual/one | offset-EM weights mutual / one / neither | offset-EM pair F1 → | offset-EM component F1 → |")
print("|---|---|---|---|---|---|---|---|---|---|")
rows = sorted(ev.values(), key=lambda r: r["metrics"]["f1"])
for r in rows:
    t = r["tab"]; k = (r["file"], r["variant"])
    missed = r["true_cand"] - (t["mutual/called"][1] + t["oneway/called"][1] + t["none/called"][1])
    e = em.get(k)
    pf = r["pairF1"]
    print(f"| {k[0]} ({k[1]}) | {r['metrics']['f1']:.4f} | {r['expected_matches']:,.0f} / {r['called']:,} ({r['expected_matches']/max(r['called'],1):.2f}) "
          f"| {missed:,}: {t['mutual/not'][1]:,} / {t['oneway/not'][1]:,} / {t['none/not'][1]:,} "
          f"| {t['mutual/not'][0]:,} / {t['mutual/not'][1]:,} | {t['oneway/not'][0]:,} / {t['oneway/not'][1]:,} "
          f"| {pf['model']:.4f} → {pf['model|mutual']:.4f} → {pf.get('ceiling:+true mutual|oneway', float('nan')):.4f} "
          + (f"| {e['w'][0]:+.1f} / {e['w'][1]:+.1f} / {e['w'][2]:+.1f} | {e['pairF1'][0]:.4f} → {e['pairF1'][1]:.4f} | {e['compF1'][0]:.4f} → {e['compF1'][1]:.4f} |" if e else "| – | – | – |"))
