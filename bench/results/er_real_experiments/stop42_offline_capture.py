"""Stop 42 (people42): capture, from one default ``resolve`` per file, what the overlap
variants need: the per-field weights without the record overlap, and per pair the parts of the
whole-record cosine that each column's shared words make (recomputed here as
``comparisons._tfidf_cosine`` builds its rows). Writes /tmp/p42/NAME.pkl.

    PYTHONPATH=. python bench/results/er_real_experiments/stop42_offline_capture.py rldata500 restaurant
(run on the tree before the change: b1b66f8)
"""

import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, "bench")
from er_diagnose import _truth_per_row
from er_real import load, pairwise

import trustlab
from trustlab._chunks import factorize
from trustlab.er import comparisons as CM
from trustlab.er import scoring as SC
from trustlab.er.kinds import record_parts

CALLS = []
_orig = SC.FSModel.field_weights


def fw(self, df, pairs, fm):
    out = _orig(self, df, pairs, fm)
    import copy

    fm2 = copy.copy(fm)
    fm2.X = np.array(fm.X)
    CALLS.append((df, np.array(pairs), fm2, out.copy(), self))
    return out


SC.FSModel.field_weights = fw


def parts_dot(df, fields, i, j):
    """Per pair: dot parts per column (same home both records), cross-column part, col names,
    plus each record's squared norm per column (N[i], N[j])."""
    from scipy import sparse

    df = df.reset_index(drop=True)
    parts = record_parts(df, fields)
    n = len(df)
    rec, ex, col, bits = CM._exploded(parts, CM._tokens_of)
    names = sorted([str(p.name) for p in parts])
    ids, uniq = factorize(ex)
    ids = ids.astype(np.int64)
    A = sparse.csr_matrix((np.ones(len(ids)), (rec, ids)), shape=(n, int(ids.max()) + 1))
    A.sum_duplicates()
    dfreq, n_docs = CM._global_counts(uniq, None, np.bincount(A.indices, minlength=A.shape[1]), n)
    idf = np.log(n_docs / np.maximum(dfreq, 1)) + 1e-6
    A.data = (1.0 + np.log(A.data)) * idf[A.indices]
    norm = np.sqrt(np.asarray(A.multiply(A).sum(1)).ravel())
    A = (sparse.diags(np.where(norm > 0, 1.0 / np.maximum(norm, 1e-300), 0.0)) @ A).tocsr()
    A.sort_indices()
    H = CM._home_matrix(A, rec, ids, col)
    H.sort_indices()
    k = len(names)
    home = H.data.astype(np.int64) - 1
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    N = np.zeros((n, k))
    np.add.at(N, (rows, home), A.data**2)
    ptr, idx = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    D = np.zeros((len(i), k))
    X = np.zeros(len(i))
    for a in range(0, len(i), 200000):
        b = min(a + 200000, len(i))
        qi, qj, r = CM._row_matches(
            ptr, idx, np.ascontiguousarray(i[a:b], np.int64), np.ascontiguousarray(j[a:b], np.int64)
        )
        prod = A.data[qi] * A.data[qj]
        hi, hj = home[qi], home[qj]
        s = hi == hj
        np.add.at(D, (a + r[s], hi[s]), prod[s])
        np.add.at(X, a + r[~s], prod[~s])
    return D, X, names, N[i], N[j]


def run(name):
    inputs, keys, truth = load(name, Path("/work/shared/data"))
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = (
            trustlab.resolve(str(inputs[0]))
            if len(inputs) == 1
            else trustlab.resolve([str(p) for p in inputs], link_type="link_only")
        )
    t = _truth_per_row(res, inputs, keys, truth)
    # the suffix of calls making up res.field_weights
    tot = len(res.pairs)
    sel = []
    for c in reversed(CALLS):
        sel.insert(0, c)
        tot -= len(c[1])
        if tot <= 0:
            break
    assert tot == 0, (tot, [len(c[1]) for c in CALLS])
    Wfin = np.vstack([c[3] for c in sel])
    assert np.array_equal(Wfin, res.field_weights)
    model = sel[0][4]
    df = sel[0][0]
    fields = model.fields
    share = dict(model.record_share_)
    model.record_share_ = {}
    Wraw = np.vstack([_orig(model, c[0], c[1], c[2]) for c in sel])
    model.record_share_ = share
    Pint = np.vstack([c[1] for c in sel])
    D, X, names, Ni, Nj = parts_dot(df, fields, Pint[:, 0], Pint[:, 1])
    out = dict(
        name=name,
        P=res.pairs,
        t=t,
        Wfin=Wfin,
        Wraw=Wraw,
        D=D,
        X=X,
        names=names,
        Ni=Ni,
        Nj=Nj,
        cols=[f.column for f in fields],
        kinds=[f.kind for f in fields],
        share=share,
        lam=model.lambda_,
        n=len(t),
        source=res.source,
        entity=np.asarray(res.entity),
        G=model.levels(np.vstack([c[2].X for c in sel])) if False else None,
        f1=pairwise(np.asarray(res.entity), t),
        secs=time.time() - t0,
    )
    pickle.dump(out, open(f"/tmp/p42/{name}.pkl", "wb"))
    print(name, out["f1"], "pairs", len(res.pairs), "cols", out["cols"], "names", names, f"{out['secs']:.0f}s")


if __name__ == "__main__":
    for nm in sys.argv[1:]:
        CALLS.clear()
        run(nm)
