"""Stop 40: walmart_amazon in the stop-39 presentations (as shipped "full", without modelno "nomodel", title only
"titleonly", title and price "abtlike"), resolved with every default; the truth only scores. Run from the repository
root: ``EXP_RANK=... PYTHONPATH=. python bench/results/er_real_experiments/stop40_presentations.py VARIANT [OUTDIR]``
(the EXP_RANK switches exist only with ``stop40_rank_evidence.diff`` applied). ``EXP_RANK_DUMP=FILE.npz`` (with the
patch) also writes the candidate pairs, their whole-record cosine and model log-odds for ``stop40_rank_analysis.py``,
and this script then writes the truth beside it (``FILE.truth.json``)."""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, "bench")
import er_real as E  # noqa: E402
import pandas as pd  # noqa: E402

variant = sys.argv[1]
outdir = Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/stop40_wa")
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
    elif variant != "full":
        raise SystemExit(f"unknown variant {variant!r}")
    (outdir / variant).mkdir(parents=True, exist_ok=True)
    q = outdir / variant / p.name
    df.to_csv(q, index=False)
    out.append(q)
t = time.time()
pred, info = E.trustlab_run(out, keys)
print(variant, json.dumps({**E.pairwise(pred, truth), "s": round(time.time() - t, 1), "status": info["status"]}))
if os.environ.get("EXP_RANK_DUMP"):
    Path(os.environ["EXP_RANK_DUMP"] + ".truth.json").write_text(
        json.dumps({f"{k[0]}|{k[1]}": str(v) for k, v in zip(keys, truth)}))
