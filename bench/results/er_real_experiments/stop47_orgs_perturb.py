"""Stop 47 (orgs47): the one-column files perturbed by hand (``bench/er_perturb.py`` cannot
read a one-column CSV: ``csv.Sniffer`` finds no delimiter). Each file is resolved with every
default as a DataFrame: as it is, the column renamed (``c0``), the values upper-cased, the
rows shuffled (seed 0); pairwise F1 against the truth. (A one-column CSV has no delimiter to
change: a semicolon variant is not a perturbation of it.)

    PYTHONPATH=. python bench/results/er_real_experiments/stop47_orgs_perturb.py assignees_umass affiliations ...
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[3]
# the library comes from PYTHONPATH (the tree under test); er_real from this tree
sys.path.insert(0, str(ROOT / "bench"))


def main(names):
    import trustlab
    from er_real import load, pairwise

    for nm in names:
        inputs, keys, truth = load(nm, Path("/work/shared/data"))
        df = pd.read_csv(inputs[0])
        raw = df.copy()
        if len(df.columns) == 1:  # no id column: the row number, as resolve() takes it
            df.insert(0, "_row", np.arange(len(df)))
        idc = df.columns[0]
        col = [c for c in df.columns if c != idc][0]
        t = np.asarray(truth)
        variants = {"plain": (df, t), "renamed": (df.rename(columns={col: "c0"}), t),
                    "upper": (df.assign(**{col: df[col].str.upper()}), t)}
        perm = np.random.default_rng(0).permutation(len(df))
        variants["shuffled"] = (df.iloc[perm].reset_index(drop=True), t[perm])
        for v, (frame, tt) in variants.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = trustlab.resolve(frame, id_col=idc)
            out = {"file": nm, "variant": v, **{k: round(x, 4) for k, x in pairwise(np.asarray(r.entity), tt).items()
                                                if k in ("f1", "precision", "recall")},
                   "fields": [(f.column, f.kind) for f in r.field_report.fields]}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
