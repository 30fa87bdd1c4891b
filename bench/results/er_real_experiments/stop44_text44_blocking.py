"""Stop 44 diagnostic: pair completeness (pc) and connectivity (conn: share of the true pairs inside the components of the true candidate pairs) of the default rules and of variants: global kNN on char 3-gram TF-IDF, the rules plus each record's k nearest inside every purged token block (sklearn TF-IDF, words or char 3-grams). Usage: PYTHONPATH=. python stop44_text44_blocking.py assignees_umass,affiliations"""
import sys, time, warnings
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3] / "bench")); sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3]))
import numpy as np, pandas as pd
from pathlib import Path
import er_real
from trustlab.er.fields import infer_fields
from trustlab.er.defaults import default_rules
from trustlab.er.blocking import block, pair_completeness, _key_membership
from scipy.sparse.csgraph import connected_components
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

def conn_recall(n, pairs, t):
    _, tc = np.unique(t, return_inverse=True)
    same = tc[pairs[:,0]] == tc[pairs[:,1]]
    P = pairs[same]
    g = sp.coo_matrix((np.ones(len(P)), (P[:,0], P[:,1])), shape=(n, n))
    _, lab = connected_components(g, directed=False)
    # pairs within same lab (all true by construction)
    c = np.bincount(lab).astype(float)
    got = (c*(c-1)/2).sum()
    s = np.bincount(tc).astype(float); tot = (s*(s-1)/2).sum()
    return got/tot

def knn_pairs(X, k):
    S = (X @ X.T).tocsr()
    S.setdiag(0); S.eliminate_zeros()
    out = []
    for i in range(X.shape[0]):
        a, b = S.indptr[i], S.indptr[i+1]
        if b - a == 0: continue
        d = S.data[a:b]; idx = S.indices[a:b]
        top = idx[np.argsort(-d)[:k]]
        out.append(np.stack([np.full(len(top), i), top], 1))
    p = np.concatenate(out); p = np.sort(p, 1); return np.unique(p, axis=0)

def inblock_knn(df, col, rule, cap, k, X, maxb=10**9):
    kind, (rec, key) = _key_membership(df, rule)
    order = np.argsort(key, kind="stable"); rec, key = rec[order], key[order]
    b = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True])
    out = []
    for s, e in zip(b[:-1], b[1:]):
        m = np.unique(rec[s:e])
        if len(m) <= cap or len(m) > maxb: continue
        Xb = X[m]; S = (Xb @ Xb.T).toarray(); np.fill_diagonal(S, -1)
        kk = min(k, len(m)-1)
        top = np.argpartition(-S, kk-1, axis=1)[:, :kk]
        i = np.repeat(m, kk); j = m[top.ravel()]
        out.append(np.stack([i, j], 1))
    if not out: return np.empty((0,2), np.int64)
    p = np.sort(np.concatenate(out), 1); return np.unique(p, axis=0)

def report(tag, n, pairs, t):
    print(f"  {tag:40s} pairs {len(pairs):8d} pc {pair_completeness(pairs, t):.3f} conn {conn_recall(n, pairs, t):.3f}", flush=True)

for name in sys.argv[1].split(","):
    inp, keys, t = er_real.load(name, Path("/work/shared/data"))
    df = pd.read_csv(inp[0], dtype=str, keep_default_na=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fields = infer_fields(df)
    n = len(df)
    rules = default_rules(df, fields)
    print(name, n, [f"{f.column}:{f.kind}" for f in fields], rules)
    P0 = block(df, rules); report("default", n, P0, t)
    col = fields[0].column
    text = df[col].str.lower()
    Xc = TfidfVectorizer(analyzer="char_wb", ngram_range=(3,3), sublinear_tf=True).fit_transform(text)
    Xw = TfidfVectorizer(token_pattern=r"[a-z0-9]+", sublinear_tf=True).fit_transform(text)
    for k in (5, 10, 20):
        report(f"global knn char3 k={k}", n, knn_pairs(Xc, k), t)
    tokrule = [r for r in rules if r.startswith("token")]
    if tokrule:
        from trustlab.er.rules import parse_rule
        r = parse_rule(tokrule[0]); cap = r.cap or 200
        for k in (3, 5, 10):
            for X, xn in ((Xc, "char3"), (Xw, "word")):
                E = inblock_knn(df, col, tokrule[0], cap, k, X)
                U = np.unique(np.concatenate([P0, E]), axis=0)
                report(f"default+inblock {xn} k={k} (+{len(E)})", n, U, t)
