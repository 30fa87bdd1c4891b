"""Clustering metrics against scikit-learn and brute force."""
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from trustlab.metrics import clustering as C

labelings = st.integers(2, 40).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 6), min_size=n, max_size=n),
                        st.lists(st.integers(0, 6), min_size=n, max_size=n))
)


def brute_pairs(pred, truth):
    tp = fp = fn = 0
    for i, j in combinations(range(len(pred)), 2):
        sp, st_ = pred[i] == pred[j], truth[i] == truth[j]
        tp += sp and st_
        fp += sp and not st_
        fn += st_ and not sp
    return tp, fp, fn


@settings(max_examples=60)
@given(labelings)
def test_against_sklearn_and_brute_force(pt):
    pred, truth = map(np.array, pt)
    h, c, v = C.homogeneity_completeness_v_measure(pred, truth)
    sh, sc, sv = skm.homogeneity_completeness_v_measure(truth, pred)
    assert h == pytest.approx(sh, abs=1e-9) and c == pytest.approx(sc, abs=1e-9) and v == pytest.approx(sv, abs=1e-9)
    assert C.adjusted_rand_index(pred, truth) == pytest.approx(skm.adjusted_rand_score(truth, pred), abs=1e-9)
    assert C.fowlkes_mallows(pred, truth) == pytest.approx(skm.fowlkes_mallows_score(truth, pred), abs=1e-9)
    tp, fp, fn = brute_pairs(pred, truth)
    p, r, f = C.pairwise_precision_recall_f1(pred, truth)
    ep = tp / (tp + fp) if tp + fp else 1.0
    er = tp / (tp + fn) if tp + fn else 1.0
    assert p == pytest.approx(ep) and r == pytest.approx(er)
    assert f == pytest.approx(2 * ep * er / (ep + er) if ep + er else 0.0)
    # B-cubed by definition
    n = len(pred)
    bp = np.mean([np.sum((pred == pred[i]) & (truth == truth[i])) / np.sum(pred == pred[i]) for i in range(n)])
    br = np.mean([np.sum((pred == pred[i]) & (truth == truth[i])) / np.sum(truth == truth[i]) for i in range(n)])
    gp, gr, _ = C.bcubed_precision_recall_f1(pred, truth)
    assert gp == pytest.approx(bp) and gr == pytest.approx(br)
    assert C.cluster_count_error(pred, truth) == pytest.approx(
        (len(set(pred)) - len(set(truth))) / len(set(truth)))
    size_err = np.mean([abs(np.sum(pred == pred[i]) - np.sum(truth == truth[i])) for i in range(n)])
    assert C.cluster_size_error(pred, truth) == pytest.approx(size_err)


def test_report_keys_and_string_labels():
    r = C.clustering_report(["a", "a", "b", "c"], [1, 1, 2, 2])
    for k in ("precision", "recall", "f1", "bcubed_f1", "homogeneity", "completeness", "v_measure",
              "ari", "fmi", "n_entities", "cluster_count_error", "cluster_size_error"):
        assert k in r
    assert r["n_entities"] == 3 and r["n_true_entities"] == 2
    assert r["precision"] == 1.0 and r["recall"] == 0.5


@pytest.mark.parametrize("pred,truth,match", [
    ([0, 1], [0, 1, 2], "same length"),
    ([], [], "empty"),
    ([[0, 1]], [[0, 1]], "1-D"),
    ([0.0, np.nan], [0, 1], "NaN"),
])
def test_bad_inputs(pred, truth, match):
    with pytest.raises(ValueError, match=match):
        C.clustering_report(pred, truth)
