"""Two-column (names-only style) versions of suite files: the guard's reach on tables it was not tuned on.
Usage: python twocol.py NAME col1,col2  (prints pairwise P/R/F1 and whether strata were fitted)."""
import sys, warnings
from pathlib import Path
import numpy as np, pandas as pd
import os; sys.path.insert(0, os.environ["PYTHONPATH"] + "/bench")
import er_real
import trustlab
warnings.simplefilter("ignore")
name, cols = sys.argv[1], sys.argv[2].split(",")
inputs, keys, truth = er_real.load(name, Path("/work/shared/data"))
assert len(inputs) == 1
df = pd.read_csv(inputs[0], dtype=str, keep_default_na=False, sep=None, engine="python")
print(list(df.columns)[:12])
out = Path(os.environ.get("TMPDIR", "/tmp")) / f"twocol_{name}_{'_'.join(c.replace(' ', '') for c in cols)}.csv"
df[cols].to_csv(out, index=False)
r = trustlab.resolve(str(out))
m = er_real.pairwise(np.asarray(r.entity), truth)
print(name, cols, {k: round(v, 4) for k, v in m.items()}, "strata", len(getattr(r.model, "strata_", {}) or {}),
      "rules", r.blocking.rules, trustlab.__file__.split("/")[2])
