"""Stop 42 (people42): the distributed path against the local one on real files: each file with an id column
added, resolved locally and on a Dask frame of 3 partitions (synchronous scheduler); F1 of both and whether they
give the same partition of the records.

    PYTHONPATH=. python bench/results/er_real_experiments/stop42_distributed_check.py rldata500 restaurant
"""
import sys
import warnings
from pathlib import Path

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

import trustlab

sys.path.insert(0, "bench")
from er_real import load, pairwise  # noqa: E402

for name in sys.argv[1:]:
    inputs, keys, truth = load(name, Path("/work/shared/data"))
    df = pd.read_csv(inputs[0], dtype=str, keep_default_na=False, sep=None, engine="python")
    df.insert(0, "rid", [f"r{k}" for k in range(len(df))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loc = trustlab.resolve(df, id_col="rid")
        with dask.config.set(scheduler="synchronous"):
            res = trustlab.resolve(dd.from_pandas(df, npartitions=3), id_col="rid")
    out = pd.read_parquet(res.output)
    idc = res.id_col
    fl = loc.to_frame()
    m = dict(zip(out[idc].astype(str), out["entity_id"].astype(str)))
    dist_ent = pd.factorize(pd.Series([m[str(x)] for x in fl[idc]]))[0]
    t = np.asarray(truth)
    print(
        name,
        "local",
        pairwise(np.asarray(loc.entity), t)["f1"],
        "distributed",
        pairwise(dist_ent, t)["f1"],
        "same partition",
        pairwise(dist_ent, np.asarray(loc.entity))["f1"] == 1.0,
    )
