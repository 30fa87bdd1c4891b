"""Benchmarks for the explanation and reliability metrics vs the naive implementations a user
would write (or that the papers' released scripts use).

Run:  .venv/bin/python -m pytest bench/bench_explain.py --benchmark-enable -p no:cacheprovider

Each pair of benchmarks shares a ``group``; the peer is named ``*_naive`` / ``*_scipy`` /
``*_sklearn``. All inputs are the data bundled with trustlab (plus seeded synthetic data), so
nothing is read from ../shared.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from trustlab.metrics import explanation as ex
from trustlab.metrics import reliability as rel

ROUNDS = dict(rounds=5, iterations=1, warmup_rounds=1)


@pytest.fixture(scope="module")
def syneval():
    return ex.load_ding_koehn("number", "sota"), ex.load_ding_koehn("number", "distilled")


# ---------------------------------------------------------------- plausibility, 6,280 examples
def _naive_plausibility(d):
    """The released evaluation loop (max within span, then over spans), NumPy per example."""
    exp = set(d.expected.tolist())
    passed = []
    for i, (v, m) in enumerate(zip(d.verum, d.malum)):
        cv = max(np.max(v[s:e + 1]) for s, e in d.cue_spans[i])
        av = max(np.max(v[s:e + 1]) for s, e in d.attractor_spans[i])
        cm = max(np.max(m[s:e + 1]) for s, e in d.cue_spans[i])
        am = max(np.max(m[s:e + 1]) for s, e in d.attractor_spans[i])
        if (i in exp and cv > av) or (i not in exp and cm < am):
            passed.append(i)
    return passed


def test_plausibility_trustlab(benchmark, syneval):
    d = syneval[0]
    benchmark.group = "plausibility syneval (6,280)"
    r = benchmark.pedantic(
        ex.plausibility, args=(d.verum, d.malum, d.cue_spans, d.attractor_spans, d.expected), **ROUNDS
    )
    assert np.array_equal(r.passed, d.passed)


def test_plausibility_naive(benchmark, syneval):
    d = syneval[0]
    benchmark.group = "plausibility syneval (6,280)"
    r = benchmark.pedantic(_naive_plausibility, args=(d,), **ROUNDS)
    assert r == d.passed.tolist()


# ---------------------------------------------------------------- model consistency, 6,280 pairs
def _naive_model_consistency(a, b):
    """The released script: clamp with NumPy, scipy.stats.pearsonr per example, mean."""
    from scipy.stats import pearsonr

    taus = []
    for x, y in zip(a, b):
        if len(x) != len(y):
            continue
        x = x.copy()
        y = y.copy()
        x[np.abs(x) < 0.01 * np.max(np.abs(x))] = 0.0
        y[np.abs(y) < 0.01 * np.max(np.abs(y))] = 0.0
        taus.append(pearsonr(x, y)[0])
    return float(np.mean(taus))


def test_model_consistency_trustlab(benchmark, syneval):
    a, b = syneval
    benchmark.group = "model consistency syneval (6,280 pairs)"
    r = benchmark.pedantic(ex.model_consistency, args=(a.verum, b.verum), **ROUNDS)
    assert round(r.value, 3) == 0.598


def test_model_consistency_scipy(benchmark, syneval):
    a, b = syneval
    benchmark.group = "model consistency syneval (6,280 pairs)"
    v = benchmark.pedantic(_naive_model_consistency, args=(a.verum, b.verum), rounds=3, iterations=1)
    assert round(v, 3) == 0.598


# ---------------------------------------------------------------- mass accuracy, 100k sentences
@pytest.fixture(scope="module")
def ma_data():
    gt = ex.load_geco("all", "test").ground_truth
    rng = np.random.default_rng(0)
    reps = 160  # 644 * 160 = 103,040 sentences
    gts = list(gt) * reps
    attrs = [rng.normal(size=g.size) for g in gts]
    return attrs, gts


def _naive_mass_accuracy_pandas(attrs, gts):
    df = pd.DataFrame({"sid": np.repeat(np.arange(len(attrs)), [a.size for a in attrs]),
                       "a": np.abs(np.concatenate(attrs)), "h": np.concatenate(gts)})
    df["ah"] = df["a"] * df["h"]
    g = df.groupby("sid")[["a", "ah"]].sum()
    return float((g["ah"] / g["a"]).mean())


def test_mass_accuracy_trustlab(benchmark, ma_data):
    benchmark.group = "mass accuracy (103k sentences)"
    r = benchmark.pedantic(ex.mass_accuracy, args=ma_data, **ROUNDS)
    assert r.value == pytest.approx(_naive_mass_accuracy_pandas(*ma_data))


def test_mass_accuracy_pandas(benchmark, ma_data):
    benchmark.group = "mass accuracy (103k sentences)"
    benchmark.pedantic(_naive_mass_accuracy_pandas, args=ma_data, **ROUNDS)


def test_mass_accuracy_numpy_loop(benchmark, ma_data):
    benchmark.group = "mass accuracy (103k sentences)"

    def loop(attrs, gts):
        return float(np.mean([np.abs(a) @ h / np.abs(a).sum() for a, h in zip(attrs, gts)]))

    benchmark.pedantic(loop, args=ma_data, **ROUNDS)


# ---------------------------------------------------------------- GECO co-occurrence bias
def _naive_cooccurrence(sentences, targets):
    """gecobench's bias/main.py structure: corpus as a Python list, per-term passes."""
    male, female = [["he"], ["him", "his"]], [["she"], ["her"]]
    corpus = list({w.lower().replace(" ", "") for s in sentences for w in s})

    def count(groups, gender):
        total = 0
        for term in groups:
            for t, s in zip(targets, sentences):
                s = [x.lower().replace(" ", "") for x in s]
                s = [x for x in s if x not in {",", "."}]
                if t == gender and any(x in s for x in term):
                    total += sum(1 for w in s if w in corpus)
        return total

    m, f = count(male, 1), count(female, 0)
    return f / (m + f)


@pytest.fixture(scope="module")
def geco_train():
    d = ex.load_geco("all", "train")
    return d.sentences[:300], d.targets[:300]


def test_cooccurrence_trustlab(benchmark, geco_train):
    benchmark.group = "GECO co-occurrence bias (300 sentences)"
    r = benchmark.pedantic(ex.geco_cooccurrence_bias, args=geco_train, **ROUNDS)
    assert r.value == pytest.approx(_naive_cooccurrence(*geco_train))


def test_cooccurrence_naive(benchmark, geco_train):
    benchmark.group = "GECO co-occurrence bias (300 sentences)"
    benchmark.pedantic(_naive_cooccurrence, args=geco_train, rounds=2, iterations=1)


# ---------------------------------------------------------------- AUC and Spearman
@pytest.fixture(scope="module")
def scores():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1_000_000)
    s = np.round(rng.normal(size=y.size) + y, 3)  # rounded -> many ties
    return y, s


def test_auc_trustlab(benchmark, scores):
    benchmark.group = "ROC AUC (1M samples, ties)"
    benchmark.pedantic(rel.roc_auc, args=scores, **ROUNDS)


def test_auc_sklearn(benchmark, scores):
    from sklearn.metrics import roc_auc_score

    benchmark.group = "ROC AUC (1M samples, ties)"
    v = benchmark.pedantic(roc_auc_score, args=scores, **ROUNDS)
    assert v == pytest.approx(rel.roc_auc(*scores), abs=1e-12)


def test_spearman_trustlab(benchmark, scores):
    benchmark.group = "Spearman (1M, ties)"
    y, s = scores
    benchmark.pedantic(rel.spearman, args=(s, s + y), **ROUNDS)


def test_spearman_scipy(benchmark, scores):
    from scipy.stats import spearmanr

    benchmark.group = "Spearman (1M, ties)"
    y, s = scores
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = benchmark.pedantic(spearmanr, args=(s, s + y), **ROUNDS)
    assert r.statistic == pytest.approx(rel.spearman(s, s + y).value, abs=1e-12)
