"""Stop 43 (attr43): a file as given (base) against its recased column names (bench/er_perturb.py
variant ``recased``): are resolve's candidate pairs, probabilities and entities the same bit for bit?

Usage: PYTHONPATH=<checkout> python stop43_attr43_recased_identity.py TAG file1,file2,...
"""
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(os.environ["PYTHONPATH"])
sys.path.insert(0, str(ROOT / "bench"))
import er_perturb  # noqa: E402
import er_real  # noqa: E402

import trustlab  # noqa: E402

data = Path("/work/shared/data")
tag = sys.argv[1]
for name in sys.argv[2].split(","):
    out = {}
    for variant in ("base", "recased"):
        inputs, keys, truth = er_real.load(name, data)
        frames = [er_perturb._sniff_read(Path(p)) for p in inputs]
        names = er_perturb.recased_names([c for df in frames for c in df.columns if c != er_perturb._id_col(df)])
        paths = []
        for k, p in enumerate(inputs):
            df2, kw = er_perturb.perturb(frames[k], variant, k, names)
            q = Path(f"/tmp/{tag}_{name}_{variant}_{k}_{Path(p).stem}.csv")
            df2.to_csv(q, **kw)
            paths.append(q)
        if len(paths) == 1:
            out[variant] = trustlab.resolve(str(paths[0]))
        else:
            out[variant] = trustlab.resolve([str(p) for p in paths], link_type="link_only")
    a, b = out["base"], out["recased"]
    same_pairs = a.pairs.shape == b.pairs.shape and np.array_equal(a.pairs, b.pairs)
    print(tag, name, "pairs", len(a.pairs), len(b.pairs), "same pairs", same_pairs,
          "same prob", same_pairs and np.array_equal(a.prob, b.prob),
          "same entities", np.array_equal(np.asarray(a.entity), np.asarray(b.entity)), flush=True)
