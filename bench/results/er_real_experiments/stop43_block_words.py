"""Stop 43 diagnostic: share of the true pairs that share a word, and a word held by at most the token
blocking cap of records (lower-cased alphanumeric words, not trustlab's own tokens; caps: 50 and 100, the
ones the default rules used on AIR-UMass and NBER; 200 on affiliations, the default before its rules were tightened); how many capped words belong mostly to one entity."""
import sys, re, itertools
ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench")); sys.path.insert(0, str(ROOT))
import pandas as pd, numpy as np
from pathlib import Path
from collections import Counter
import er_real
for name, cap in (("assignees_umass", 50), ("assignees_nber", 100), ("affiliations", 200)):
    inp, _, truth = er_real.load(name, Path("/work/shared/data"))
    df = pd.read_csv(inp[0], dtype=str, keep_default_na=False)
    col = [c for c in df.columns if c != "record_id"][0]
    toks = [set(re.findall(r"[a-z0-9]+", s.lower())) for s in df[col]]
    cnt = Counter(t for s in toks for t in s)
    small = [{t for t in s if cnt[t] <= cap} for s in toks]
    tot = any_shared = small_shared = 0
    for lab, idx in pd.Series(range(len(truth))).groupby(truth):
        for i, j in itertools.combinations(idx, 2):
            tot += 1; any_shared += bool(toks[i] & toks[j]); small_shared += bool(small[i] & small[j])
    # tokens dropped by the cap: how many belong mostly to one entity
    big = [t for t, c in cnt.items() if c > cap]
    one = sum(1 for t in big if pd.Series([truth[k] for k in range(len(toks)) if t in toks[k]]).value_counts(normalize=True).iloc[0] >= 0.8)
    print(f"{name}: true pairs {tot}; share a word {any_shared/tot:.2f}; share a word held by <= {cap} records {small_shared/tot:.2f}; words over the cap {len(big)}, of which {one} are >= 80% one entity's")
