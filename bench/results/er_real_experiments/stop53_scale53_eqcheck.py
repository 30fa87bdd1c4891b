"""New per-distinct tf_keys / _clean / _similarities against the old per-row code, on the 1M run's 200k sample
and a few odd Series (StringDtype, NaN, non-strings)."""
import numpy as np, pandas as pd
from scipy import sparse
from trustlab.er import kinds, fields as F
from trustlab.er.kinds import KINDS, Field
sample = pd.read_pickle("/tmp/scale53/sample.pkl")
def old_clean(s):
    v = s.dropna()
    if v.dtype == object or isinstance(v.dtype, pd.StringDtype):
        v = v.astype(str).str.strip()
        v = v[(v != "") & (v.str.lower() != "nan")]
    return v
def old_tf_keys(df, f):
    s = df[f.column].fillna("").astype(str)
    v = (KINDS[f.kind].normalise or kinds._lower)(s)
    return v.fillna("").to_numpy(dtype=object)
def old_sim(df, f, pairs):
    key = F._keys(df, f)
    a, b = pairs[:, 0], pairs[:, 1]
    miss = (key[a] == "") | (key[b] == "")
    X = np.full((len(pairs), 2), np.nan)
    X[~miss, 0] = (key[a] == key[b])[~miss]
    text = df[f.columns()[0]].fillna("").astype(str) if len(f.columns()) == 1 else pd.Series(key)
    tok = text.str.lower().str.findall(r"\w+").explode().dropna()
    if len(tok):
        ids = pd.factorize(tok)[0]
        M = sparse.csr_matrix((np.ones(len(ids)), (tok.index.to_numpy(np.int64), ids)), shape=(len(df), int(ids.max()) + 1))
        M.data[:] = 1.0
        size = np.asarray(M.sum(axis=1)).ravel()
        inter = np.asarray(M[a].multiply(M[b]).sum(axis=1)).ravel()
        union = size[a] + size[b] - inter
        ok = ~miss & (union > 0)
        X[ok, 1] = inter[ok] / union[ok]
    return X
odd = pd.DataFrame({"a": pd.Series(["x ", None, "X", " nan", "", "O'Neil,  Ann", "x ", np.nan, 3, 3.0], dtype=object),
                    "b": pd.Series(["SW1A 1AA", None, "sw1a1aa", "", "a", "a", "b", "NaN", "ÉÈ x", "x"], dtype="string")})
frames = [sample.drop(columns=["rec_id"]).iloc[:200000], odd]
bad = 0
for df in frames:
    for c in df.columns:
        a, b = old_clean(df[c]), F._clean(df[c])
        try:
            pd.testing.assert_series_equal(a, b, check_exact=True)
        except AssertionError as e:
            bad += 1; print("clean differs", c, e)
        for k in KINDS:
            if KINDS[k].arity != 1: continue
            f = Field(c, k)
            x, y = old_tf_keys(df, f), kinds.tf_keys(df, f)
            if not (x.dtype == y.dtype and len(x) == len(y) and all(type(p) is type(q) and p == q for p, q in zip(x, y))):
                bad += 1; print("tf_keys differ", c, k)
    rng = np.random.default_rng(0)
    d = df.reset_index(drop=True)
    pairs = rng.integers(0, len(d), (min(200000, 5 * len(d)), 2))
    for c in d.columns:
        for k in ("name", "address", "exact", "string"):
            f = Field(c, k)
            x, y = old_sim(d, f, pairs), F._similarities(d, f, pairs)
            if not np.array_equal(x, y, equal_nan=True):
                bad += 1; print("sim differs", c, k)
print("differences:", bad)
