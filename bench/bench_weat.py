"""WEAT permutation p-values: trustlab vs the straightforward implementations users write.

Run:
    .venv/bin/python -m pytest bench/bench_weat.py --benchmark-enable -p no:cacheprovider

Data: the word2vec GoogleNews WEAT vectors shipped in ``trustlab/data/weat`` (the same
vectors as ``../shared/data/embeddings/word2vec_googlenews_13k.npz``, which is used when
present). Targets: exact 8+8 WEAT p-value <= 10 ms; 25+25 with 100k
permutations <= 1 s on the 2-core CPU.

Peers, measured in the same run:
* ``itertools`` exact: every C(16, 8) split enumerated in Python, statistic recomputed from
  the precomputed per-word associations (the obvious exact implementation);
* ``wefe-style`` Monte Carlo: wefe 1.0.1's loop (draw a permutation, skip it if seen,
  recompute the cosine WEAT statistic from the vectors), 1,000 permutations, re-implemented
  here in NumPy because wefe pins numpy<=1.26 / scipy<1.13 and cannot be installed into the
  project venv; unlike wefe it draws *without* replacement (wefe's ``rng.choice`` default
  samples words with replacement, which is not a permutation test);
* real ``wefe`` when importable (skipped otherwise).
"""
from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest

from trustlab.metrics import bias as B
from trustlab.metrics.embeddings import Embeddings, MissingWordsWarning

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "embeddings" / "word2vec_googlenews_13k.npz"


@pytest.fixture(scope="module")
def emb():
    if SHARED.exists():
        with np.load(SHARED) as z:
            return Embeddings([str(w) for w in z["words"]], z["vectors"])
    return B.load_weat_embeddings()


def _sets(test):
    return B._test_sets(test)[1]


def _vecs(emb, words):
    return np.array([emb[w] for w in words if w in emb], dtype=np.float64)


@pytest.fixture(scope="module", autouse=True)
def _warm(emb):
    # JIT/cache load outside the timings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        B.weat_test(emb, 6)
        B.weat_test(emb, 1, permutations=100_000, random_state=0)


# ---------------------------------------------------------------- exact 8+8
def test_trustlab_exact_8x8_full_weat(benchmark, emb):
    r = benchmark(B.weat_test, emb, 6)
    assert r.method == "exact" and r.n_permutations == 12870


def test_trustlab_exact_8x8_pvalue_only(benchmark, emb):
    r = B.weat_test(emb, 6)
    s = np.r_[r.associations_x, r.associations_y]
    p = benchmark(B.weat_permutation_test, s, 8, permutations="exact", alternative="greater")
    assert p.p_value == pytest.approx(B.weat_test(emb, 6, alternative="greater").p_value)


def _itertools_exact(s, nx):
    obs = sum(s[:nx]) - sum(s[nx:])
    tot = sum(s)
    c = n = 0
    for comb in itertools.combinations(range(len(s)), nx):
        sx = sum(s[i] for i in comb)
        n += 1
        c += (2 * sx - tot) >= obs - 1e-12
    return c / n


def test_peer_itertools_exact_8x8(benchmark, emb):
    r = B.weat_test(emb, 6, alternative="greater")
    s = list(np.r_[r.associations_x, r.associations_y])
    p = benchmark(_itertools_exact, s, 8)
    assert p == pytest.approx(r.p_value)


# ---------------------------------------------------------------- 25+25, 100k
def test_trustlab_mc_25x25_100k(benchmark, emb):
    r = benchmark(B.weat_test, emb, 1, permutations=100_000, random_state=0)
    assert r.method == "monte-carlo" and r.n_permutations == 100_000


def _wefe_style(X, Y, A, Bv, iterations, seed=0):
    """wefe 1.0.1 WEAT._calc_p_value, NumPy, but drawing true permutations."""
    def unit(M):
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    X, Y, A, Bv = map(unit, (X, Y, A, Bv))

    def weat_stat(Xi, Yi):
        sx = (Xi @ A.T).mean(1) - (Xi @ Bv.T).mean(1)
        sy = (Yi @ A.T).mean(1) - (Yi @ Bv.T).mean(1)
        return sx.sum() - sy.sum()

    pool = np.vstack([X, Y])
    nx = X.shape[0]
    obs = weat_stat(X, Y)
    rng = np.random.default_rng(seed)
    seen = set()
    count = 0
    while len(seen) < iterations:
        perm = tuple(rng.permutation(pool.shape[0]).tolist())
        if perm in seen:
            continue
        seen.add(perm)
        idx = np.array(perm)
        count += weat_stat(pool[idx[:nx]], pool[idx[nx:]]) > obs
    return (count + 1) / (iterations + 1)


def test_peer_wefe_style_25x25_1k(benchmark, emb):
    s = _sets(1)
    X, Y, A, Bv = (_vecs(emb, s[k]) for k in "XYAB")
    p = benchmark.pedantic(_wefe_style, args=(X, Y, A, Bv, 1000), rounds=3, iterations=1)
    assert 0 < p <= 1


def test_peer_real_wefe_25x25_1k(benchmark, emb):
    wefe = pytest.importorskip("wefe")
    from gensim.models import KeyedVectors
    from wefe.metrics import WEAT
    from wefe.query import Query
    from wefe.word_embedding_model import WordEmbeddingModel

    kv = KeyedVectors(emb.dim)
    kv.add_vectors(emb.words, emb.vectors)
    model = WordEmbeddingModel(kv, "w2v")
    s = _sets(1)
    q = Query([s["X"], s["Y"]], [s["A"], s["B"]], ["flowers", "insects"], ["pleasant", "unpleasant"])
    benchmark.pedantic(
        lambda: WEAT().run_query(q, model, calculate_p_value=True, p_value_iterations=1000),
        rounds=1, iterations=1,
    )
    assert wefe.__version__


# ---------------------------------------------------------------- Table 3 summary
def test_trustlab_summary_10_tests(benchmark, emb):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        s = benchmark.pedantic(B.weat_summary, args=(emb,), kwargs=dict(random_state=0), rounds=3, iterations=1)
    assert s.n_tests == 10
