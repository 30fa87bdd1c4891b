"""GECOBench: mass accuracy, its uniform baseline and the co-occurrence dataset bias."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.metrics import explanation as ex


def _repo_cooccurrence(df, fix_filter=False):
    """Naive pandas transcription of gecobench bias/main.py (corpus as a list, term groups)."""
    male, female = [["he"], ["him", "his"]], [["she"], ["her"]]
    groups = male + female
    flat = [w for g in groups for w in g]
    corpus = []
    for sentence in df["sentence"]:
        for word in sentence:
            w = word.lower().replace(" ", "")
            if (w not in flat) if fix_filter else (w not in groups):  # repo: list-of-lists test
                corpus.append(w)
    corpus = list(set(corpus))

    def count(terms, gender):
        total = 0
        for term in terms:
            for target, sentence in zip(df["target"], df["sentence"]):
                s = [x.lower().replace(" ", "") for x in sentence]
                s = [x for x in s if x not in {",", "."}]
                if target == gender and any(t in s for t in term):
                    total += sum(1 for w in s if w in corpus)
        return total

    m, f = count(male, 1), count(female, 0)
    return f / (m + f)


@pytest.mark.parametrize("variant, ref", [("all", 0.4999), ("subj", 0.4753)])
def test_cooccurrence_bias_reference(variant, ref):
    d = ex.load_geco(variant, "train")
    r = ex.geco_cooccurrence_bias(d.sentences, d.targets)
    assert round(r.value, 4) == ref
    assert r.n_sentences == 2576


def test_cooccurrence_matches_naive_transcription():
    d = ex.load_geco("subj", "train")
    df = pd.DataFrame({"sentence": d.sentences[:400], "target": d.targets[:400]})
    r = ex.geco_cooccurrence_bias(d.sentences[:400], d.targets[:400])
    assert r.value == pytest.approx(_repo_cooccurrence(df), abs=1e-15)
    r2 = ex.geco_cooccurrence_bias(d.sentences[:400], d.targets[:400], count_gender_terms=False)
    assert r2.value == pytest.approx(_repo_cooccurrence(df, fix_filter=True), abs=1e-15)


def test_bundled_splits():
    for v in ("all", "subj"):
        tr, te = ex.load_geco(v, "train"), ex.load_geco(v, "test")
        assert (len(tr), len(te)) == (2576, 644)
        assert int(tr.targets.sum()) == 1288
        assert all(len(s) == len(g) for s, g in zip(te.sentences, te.ground_truth))


def test_uniform_baseline_reference_and_simulation():
    # seed catalogue V.12: mean k/d = 0.169 (D_A), 0.090 (D_S) on the test split
    for v, ref in [("all", 0.169), ("subj", 0.090)]:
        gt = ex.load_geco(v, "test").ground_truth
        b = ex.mass_accuracy_uniform_baseline(gt)
        assert round(b.value, 3) == ref
        assert b.value == pytest.approx(np.mean([g.sum() / g.size for g in gt]))
    # Monte-Carlo: MA of s ~ U(0,1)^d averages to k/d
    gt = ex.load_geco("all", "test").ground_truth[:50]
    rng = np.random.default_rng(0)
    reps = 400
    attrs = [rng.random(g.size) for _ in range(reps) for g in gt]
    r = ex.mass_accuracy(attrs, list(gt) * reps)
    per = r.per_sentence.reshape(reps, len(gt))
    expect = ex.mass_accuracy_uniform_baseline(gt).per_sentence
    se = per.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(per.mean(axis=0) - expect) < 5 * se + 1e-12)


def _slow_ma(attrs, gts):
    vals = []
    for a, h in zip(attrs, gts):
        a = np.abs(np.asarray(a, float))
        if a.sum() == 0:
            continue
        vals.append(float((a / a.sum()) @ np.asarray(h, float)))
    return np.mean(vals)


@settings(max_examples=60)
@given(st.lists(st.integers(1, 10).flatmap(lambda n: st.tuples(
    st.lists(st.floats(-10, 10, allow_nan=False), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n))), min_size=1, max_size=8))
def test_mass_accuracy_matches_naive(data):
    attrs = [a for a, _ in data]
    gts = [g for _, g in data]
    if all(np.abs(a).sum() == 0 for a in attrs):
        with pytest.raises(ValueError, match="all-zero"):
            ex.mass_accuracy(attrs, gts)
        return
    r = ex.mass_accuracy(attrs, gts)
    assert r.value == pytest.approx(_slow_ma(attrs, gts), abs=1e-12)
    assert 0.0 <= r.value <= 1.0
    assert r.n + r.dropped.size == len(attrs)


def test_mass_accuracy_aggregation():
    # 2-D (tokens, dims) + word_ids: sum over dims, sum sub-words, abs, normalise
    S = np.array([[1.0, -3.0], [0.5, 0.5], [2.0, 0.0], [9.0, 9.0]])
    s = ex.aggregate_attributions(S, word_ids=[0, 1, 1, -1])
    np.testing.assert_allclose(s, [2 / 5, 3 / 5])
    r = ex.mass_accuracy([S], [[0, 1]], word_ids=[[0, 1, 1, -1]])
    assert r.value == pytest.approx(0.6)
    # the ground-truth mask itself scores 1; its complement 0
    gt = ex.load_geco("all", "test").ground_truth[:30]
    assert ex.mass_accuracy(gt, gt).value == pytest.approx(1.0)
    assert ex.mass_accuracy([1 - g + 0.0 for g in gt], gt).value == pytest.approx(0.0)


def test_mass_accuracy_bad_input():
    with pytest.raises(ValueError, match="empty"):
        ex.mass_accuracy([], [])
    with pytest.raises(ValueError, match="one entry per word"):
        ex.mass_accuracy([[0.1, 0.2, 0.3]], [[1, 0]])
    with pytest.raises(ValueError, match="NaN"):
        ex.mass_accuracy([[0.1, np.nan]], [[1, 0]])
    with pytest.raises(ValueError, match="0/1"):
        ex.mass_accuracy([[0.1, 0.2]], [[2, 0]])
    with pytest.raises(ValueError, match="sentences"):
        ex.mass_accuracy([[0.1, 0.2]], [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="tokens"):
        ex.mass_accuracy([[0.1, 0.2]], [[1, 0]], tokens=[["a", "b", "c"]])
    with pytest.raises(ValueError, match="word_ids"):
        ex.aggregate_attributions([1.0, 2.0], word_ids=[0])
    r = ex.mass_accuracy([[0.0, 0.0], [1.0, 1.0]], [[1, 0], [1, 0]])
    assert r.dropped.tolist() == [0] and r.n == 1


def test_cooccurrence_bad_input():
    with pytest.raises(ValueError, match="empty"):
        ex.geco_cooccurrence_bias([], [])
    with pytest.raises(ValueError, match="targets"):
        ex.geco_cooccurrence_bias([["he", "ran"]], [1, 0])
    with pytest.raises(ValueError, match="undefined"):
        ex.geco_cooccurrence_bias([["it", "ran"]], [1])


def test_geco_reader_errors(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"sentence": ["a", "b"], "ground_truth": [1], "target": 1}\n')
    with pytest.raises(ValueError, match="must match"):
        ex.read_geco_jsonl(p)
    p.write_text('{"words": []}\n')
    with pytest.raises(ValueError, match="GECO record"):
        ex.read_geco_jsonl(p)
