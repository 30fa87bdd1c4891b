"""Run resolve with every default on dedupe files and pickle pairs, prob, field weights, truth."""
import pickle, sys, time, warnings
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/wt-cora45/bench")
from er_real import load, load_pypi, pairwise, PYPI_DEDUPE
import trustlab
for name in sys.argv[1].split(","):
    inputs, keys, truth = load(name, Path("/work/shared/data"))
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve(str(inputs[0]))
    t = np.asarray(truth)
    _, tc = np.unique(t.astype(str), return_inverse=True)
    ent = np.asarray(res.entity)
    r = pairwise(ent, t)
    print(name, "s %.1f" % (time.time() - t0), r, len(res.pairs), flush=True)
    pickle.dump(dict(P=res.pairs, p=res.prob, w=res.weights, ent=ent, t=tc, fw=res.field_weights,
                     fields=[f.column for f in res.model.fields], records=res.records),
                open(f"/tmp/cora45/{name}.pkl", "wb"))
