import sys; sys.path.insert(0, '/tmp/cora48')
from patches import *
from stop47_orgs_decompose import decompose
import pandas as pd
def sim(nm):
    import trustlab
    from er_real import pairwise
    t = pd.read_csv(f"/tmp/cora48/{nm}_truth.csv")["t"].astype(str).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve(f"/tmp/cora48/{nm}.csv")
    r = pairwise(np.asarray(res.entity), t)
    ti = np.unique(t, return_inverse=True)[1]; P = np.asarray(res.pairs)
    same = ti[P[:, 0]] == ti[P[:, 1]]
    sizes = np.bincount(ti); ntrue = int((sizes * (sizes - 1) // 2).sum())
    return dict(file=nm, F1=round(r["f1"], 4), P=round(r["precision"], 4), R=round(r["recall"], 4), AP=None, thrF1=None,
                ccF1=None, pc=round(float(same.sum() / ntrue), 4), conn=None, pred_entities=int(len(np.unique(res.entity))),
                candidates=int(len(P)), rules=str(res.blocking.rules))
for nm in sys.argv[1].split(","):
    t0 = time.time()
    r = sim(nm) if nm.startswith("cora1879") or nm.startswith("cora3x") else decompose(nm, Path("/work/shared/data"))
    r["variant"] = os.environ.get("EXP_TAG", "")
    r["s"] = round(time.time() - t0, 1)
    keep = {k: r[k] for k in ("file", "variant", "F1", "P", "R", "AP", "thrF1", "ccF1", "pc", "conn", "pred_entities", "s")}
    print(json.dumps(keep), flush=True)
    if os.environ.get("EXP_JSONL"):
        open(os.environ["EXP_JSONL"], "a").write(json.dumps(r) + "\n")
