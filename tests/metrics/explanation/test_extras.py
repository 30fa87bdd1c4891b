"""Pattern Variant, attribution-difference Wilcoxon, decoy statistics, TPR/TNR and APD."""
import numpy as np
import pytest
from scipy.stats import wilcoxon
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from trustlab.metrics import explanation as ex


def test_pattern_variant_matches_dense_np_cov():
    d = ex.load_geco("subj", "test")
    sents, y = d.sentences[:120], d.targets[:120]
    cv = CountVectorizer(analyzer=lambda s: [w.lower() for w in s])
    T = TfidfTransformer().fit_transform(cv.fit_transform(sents)).toarray()
    cov = np.array([np.cov(T[:, j], y)[0, 1] for j in range(T.shape[1])])  # the repo's np.cov per column
    ours = ex.pattern_variant_attributions(sents, y)
    for s, a in zip(sents, ours):
        np.testing.assert_allclose(a, [abs(cov[cv.vocabulary_[w.lower()]]) for w in s], atol=1e-15)


def test_pattern_variant_anchor_values():
    # seed catalogue V.12 (word-level approximation): 0.992 (D_A), 0.749 (D_S)
    for v, ref in [("all", 0.992), ("subj", 0.749)]:
        d = ex.load_geco(v, "test")
        a = ex.pattern_variant_attributions(d.sentences, d.targets)
        assert round(ex.mass_accuracy(a, d.ground_truth).value, 3) == ref
    # fitted on train, applied to test: unseen words get 0, lengths still match
    tr, te = ex.load_geco("all", "train"), ex.load_geco("all", "test")
    a = ex.pattern_variant_attributions(te.sentences, te.targets, fit_sentences=tr.sentences, fit_targets=tr.targets)
    assert [x.size for x in a] == [len(s) for s in te.sentences]


def test_attribution_difference_matches_scipy():
    d = ex.load_geco("all", "test")
    by_idx = {}
    for s, g, t, i in zip(d.sentences, d.ground_truth, d.targets, d.sentence_idx):
        by_idx.setdefault(int(i), {})[int(t)] = (s, g)
    pairs = [v for v in by_idx.values() if len(v) == 2 and len(v[0][0]) == len(v[1][0])][:100]
    rng = np.random.default_rng(0)
    fa = [rng.random(len(p[0][0])) for p in pairs]
    ma = [rng.random(len(p[1][0])) for p in pairs]
    gt = [p[0][1] for p in pairs]
    r = ex.attribution_difference_test(fa, ma, gt)
    diffs = np.concatenate([(f / f.sum() - m / m.sum())[g == 1] for f, m, g in zip(fa, ma, gt)])
    ref = wilcoxon(diffs)
    assert r.n_words == diffs.size and r.value == pytest.approx(np.abs(diffs).mean())
    assert r.statistic == pytest.approx(ref.statistic) and r.pvalue == pytest.approx(ref.pvalue)
    with pytest.raises(ValueError, match="same number"):
        ex.attribution_difference_test(fa, ma[:-1], gt)


def test_decoy_statistics_brute_force():
    rng = np.random.default_rng(0)
    vocab = ["movie", "film", "good", "bad", "text", "video"]
    docs = [list(rng.choice(vocab, size=rng.integers(1, 6))) for _ in range(300)]
    labels = rng.integers(0, 2, 300)
    for decoy in ["movie", "text"]:
        hit = [i for i, d in enumerate(docs) if decoy in d]
        counts = np.bincount(labels[hit], minlength=2)
        s = ex.decoy_statistics(docs, labels, decoy)
        assert s.applicability == len(hit)
        assert s.coverage == pytest.approx(len(hit) / 300)
        assert s.productivity == pytest.approx(counts.max() / len(hit))
    # Idahl et al.'s natural decoy: drop negative 'movie' documents -> productivity 1.0
    keep = [i for i, d in enumerate(docs) if not ("movie" in d and labels[i] == 0)]
    s = ex.decoy_statistics([docs[i] for i in keep], labels[keep], "movie")
    assert s.productivity == 1.0 and s.majority_class == 1
    assert ex.decoy_statistics([["a"]], [0], "zzz").applicability == 0
    with pytest.raises(ValueError, match="labels"):
        ex.decoy_statistics([["a"]], [0, 1], "a")
