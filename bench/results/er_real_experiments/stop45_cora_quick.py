"""resolve with every default on bench files (EXP_DMF: DERIVED_M_FLOOR; with stop45_cora_magg.diff applied,
EXP_MAGG picks the session aggregation); EXP_JSONL / EXP_TAG write a row per file."""
import sys, warnings, numpy as np
from pathlib import Path
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import load, pairwise
import trustlab, os
import trustlab.er.scoring as S
if os.environ.get('EXP_DMF'): S.DERIVED_M_FLOOR = float(os.environ['EXP_DMF'])
for name in sys.argv[1].split(","):
    inputs, keys, truth = load(name, Path("/work/shared/data"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve(str(inputs[0])) if len(inputs) == 1 else None
    r = pairwise(np.asarray(res.entity), truth)
    print(name, "%.4f (%.3f / %.3f)" % (r["f1"], r["precision"], r["recall"]), flush=True)
    if os.environ.get("EXP_JSONL"):
        import json
        with open(os.environ["EXP_JSONL"], "a") as fh:
            fh.write(json.dumps({"file": name, "variant": os.environ.get("EXP_TAG", ""), "f1": r["f1"],
                                 "precision": r["precision"], "recall": r["recall"], "n_records": len(res.entity)}) + "\n")
