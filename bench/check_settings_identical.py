"""Same outputs before and after the settings objects (issue 29, item 2): resolve and the
four release entry points, called by keyword, on fixed seeds.

Run it once per code version and compare::

    PYTHONPATH=<tree before> python bench/check_settings_identical.py record before.json
    PYTHONPATH=.             python bench/check_settings_identical.py record after.json
    python bench/check_settings_identical.py compare before.json after.json

59 outputs: 7 release specs x 2 seeds (float64 and float32 vectors, and the records without
their time stamp and version), privatize_file, privatize_dask, and 5 resolve calls (entities,
probabilities, settings, the model file without its version and new resolve_settings block,
and the model applied to the records in reverse order). Identical at 7a15b07 vs the
settings branch.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings

import numpy as np

SPECS = [dict(epsilon=5), dict(epsilon=2, beta=0.8, delta=1e-3), dict(epsilon=3, m=20),
         dict(epsilon=3, mechanism="m1"), dict(epsilon=4, projection="achlioptas"),
         dict(epsilon=4, phi_seed=123, m=10), dict(epsilon=1, m=100, allow_m_above_d=True)]
FIELDS = "given_name:name,surname:name,date_of_birth:date,soc_sec_id:string"
CALLS = [dict(id_col="rec_id", fields=FIELDS),
         dict(id_col="rec_id", fields=FIELDS, method="connected_components", weights="logit"),
         dict(id_col="rec_id", fields=FIELDS, labels="entity", truth="entity", model="ridge", C=2.0,
              train_fraction=0.7, threshold=0.05, compare_methods=["hierarchical"]),
         dict(id_col="rec_id", fields=FIELDS, max_block_size=20, blocking=["token:surname"], complete_components=0),
         dict(id_col="rec_id", fields=FIELDS, time_limit=5, M=5, solver_options={"method": "cpp"})]


def record(path: str) -> None:
    import dask.array as da

    import trustlab
    from trustlab.er import generate_records, save_model
    from trustlab.privacy import privatize, privatize_dask
    from trustlab.privacy.io import privatize_file

    warnings.simplefilter("ignore")
    out: dict = {}
    X = np.random.default_rng(0).standard_normal((300, 64))
    for i, sp in enumerate(SPECS):
        for seed in (0, 7):
            W, rec = privatize(X, random_state=seed, **sp)
            out[f"priv{i}_{seed}"] = W.tolist()
            d = rec.to_dict()
            d.pop("created", None)
            d.pop("version", None)
            out[f"rec{i}_{seed}"] = d
            W32, _ = privatize(X.astype(np.float32), random_state=seed, **sp)
            out[f"priv32_{i}_{seed}"] = W32.astype(float).tolist()
    tmp = tempfile.mkdtemp()
    src, dst = os.path.join(tmp, "x.npy"), os.path.join(tmp, "w.npy")
    np.save(src, X)
    privatize_file(src, dst, epsilon=3, m=16, random_state=5, chunk_size=50)
    out["file"] = np.load(dst).astype(float).tolist()
    Wd, _ = privatize_dask(da.from_array(X, chunks=(70, 64)), epsilon=3, beta=0.8, random_state=9)
    out["dask"] = Wd.compute().tolist()
    df = generate_records(300, random_state=0)
    for i, kw in enumerate(CALLS):
        r = trustlab.resolve(df, **kw)
        out[f"res{i}"] = {"entity": r.entity.tolist(), "prob": np.round(r.prob, 12).tolist(), "settings": r.settings,
                          "baselines": {k: v.get("n_entities") for k, v in r.baselines.items()}}
        p = save_model(r, os.path.join(tmp, f"m{i}.json"))
        with open(p) as fh:
            d = json.load(fh)
        d.pop("resolve_settings", None)
        d.pop("version")
        out[f"model{i}"] = d
        out[f"apply{i}"] = trustlab.resolve(df.iloc[::-1], model=str(p)).entity.tolist()
    with open(path, "w") as fh:
        json.dump(out, fh, default=str)
    print(f"{len(out)} outputs -> {path}")


def compare(before: str, after: str) -> int:
    with open(before) as fa, open(after) as fb:
        a, b = json.load(fa), json.load(fb)
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    print(f"{len(a)} outputs; differing: {diff or 'none'}")
    return 1 if diff else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
