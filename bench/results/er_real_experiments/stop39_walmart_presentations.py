"""walmart_amazon presented like Abt-Buy: model numbers only inside the titles (diagnostic, not tuning)."""
import sys, time, json
from pathlib import Path
sys.path.insert(0, "bench")
import numpy as np, pandas as pd
import er_real as E
variant = sys.argv[1]
inputs, keys, truth = E.load("walmart_amazon", Path("/work/shared/data"))
out = []
for p in inputs:
    df = pd.read_csv(p, sep="|", dtype=str, keep_default_na=False)
    if variant == "nomodel":
        df = df.drop(columns=["modelno"])
    elif variant == "titleonly":
        df = df[["id", "title"]]
    elif variant == "abtlike":
        df = df[["id", "title", "price"]]
    (Path("/tmp/me39/wa") / variant).mkdir(exist_ok=True); q = Path("/tmp/me39/wa") / variant / p.name
    df.to_csv(q, index=False)
    out.append(q)
t = time.time()
pred, info = E.trustlab_run(out, keys)
print(variant, json.dumps({**E.pairwise(pred, truth), "s": round(time.time() - t, 1), "status": info["status"]}))
