"""Stop 43 (data43) diagnostic, not a peer: TF-IDF cosine of a dedupe file's record text
(words, or character 3-5-grams), connected components at a threshold, the threshold chosen
*by the truth* (grid 0.30-0.95): what one similarity with a perfectly chosen cut reaches.
Also prints normalised token-set equality. Uses the truth to pick the cut: an upper reference
for single-similarity clustering, never a result to compare as a system.

    PYTHONPATH=. python bench/results/er_real_experiments/stop43_tfidf_reference.py affiliations assignees_umass
"""
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.feature_extraction.text import TfidfVectorizer

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import er_real  # noqa: E402

from trustlab.metrics.clustering import pairwise_precision_recall_f1  # noqa: E402


def pairs_above(X, t, chunk=2000):
    """Index pairs (i < j) whose cosine is at least ``t`` (rows of X are L2-normalised)."""
    rows, cols = [], []
    for s in range(0, X.shape[0], chunk):
        S = (X[s:s + chunk] @ X.T).tocoo()
        m = (S.data >= t) & (S.row + s < S.col)
        rows.append(S.row[m] + s)
        cols.append(S.col[m])
    return np.concatenate(rows), np.concatenate(cols)


def main(names, data=Path("/work/shared/data")):
    for name in names:
        inp, _, truth = er_real.load(name, data)
        df = pd.read_csv(inp[0], dtype=str, keep_default_na=False)
        df = df[[c for c in df.columns if c not in ("record_id", "_row")]]
        text = df.agg(" ".join, axis=1).str.lower()
        n = len(text)
        norm = text.map(lambda s: " ".join(sorted(set(re.findall(r"[a-z0-9]+", s)))))
        p, r, f = pairwise_precision_recall_f1(pd.factorize(norm)[0], truth)
        print(f"{name}: n={n}; normalised token-set equality: F1 {f:.3f} (P {p:.3f} / R {r:.3f})")
        for an, kw in (("word", dict(analyzer="word", token_pattern=r"[a-z0-9]+")),
                       ("char3-5", dict(analyzer="char_wb", ngram_range=(3, 5)))):
            X = TfidfVectorizer(sublinear_tf=True, **kw).fit_transform(text)
            i, j = pairs_above(X, 0.3)
            S = np.asarray(X[i].multiply(X[j]).sum(1)).ravel()
            best = None
            for t in np.arange(0.3, 1.0, 0.05):
                m = S >= t
                lab = connected_components(coo_matrix((np.ones(m.sum()), (i[m], j[m])), shape=(n, n)),
                                           directed=False)[1]
                p, r, f = pairwise_precision_recall_f1(lab, truth)
                if best is None or f > best[0]:
                    best = (f, p, r, t)
            print(f"  tfidf {an} cosine, connected components, best threshold {best[3]:.2f} (by truth): "
                  f"F1 {best[0]:.3f} (P {best[1]:.3f} / R {best[2]:.3f})")


if __name__ == "__main__":
    main(sys.argv[1:])
