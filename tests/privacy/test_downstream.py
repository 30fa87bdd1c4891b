"""PrivEmb's downstream-utility protocol (P3.14): bag-of-words encoder + logistic regression."""
from __future__ import annotations

import json

import numpy as np
import pytest

from trustlab.cli import main
from trustlab.privacy import bow_encode, downstream_utility


def _toy(n=80, d=12, seed=0, noise=0.4, k=15):
    """Sentiment-like sentences: each draws 4 of 5 tokens from its class's ``k`` words.

    With few words per class a release keeps sentence classes apart even under huge
    noise (each word's released vector is a fixed random code the classifier can learn);
    with many rare words only the shared sentiment direction carries the label."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    pos = [f"good{i}" for i in range(k)]
    neg = [f"bad{i}" for i in range(k)]
    neu = [f"the{i}" for i in range(10)]
    vecs = np.vstack([2 * u + noise * rng.standard_normal((k, d)), -2 * u + noise * rng.standard_normal((k, d)),
                      noise * rng.standard_normal((10, d))])
    words = pos + neg + neu
    sents, labels = [], []
    for k in range(n):
        lab = k % 2
        toks = list(rng.choice(pos if lab else neg, 4)) + [str(rng.choice(neu))]
        rng.shuffle(toks)
        sents.append(" ".join(toks) + " .")
        labels.append("positive" if lab else "negative")
    return sents, labels, (words, vecs)


def test_bow_encode_matches_a_loop():
    sents, _, (words, vecs) = _toy(n=10)
    sents = sents + ["nothing here", ["good1", "GOOD1", "unknown"]]
    E = bow_encode(sents, (words, vecs))
    table = dict(zip(words, vecs))
    for s, e in zip(sents, E):
        toks = s.replace(".", " ").split() if isinstance(s, str) else s
        found = [table[t] if t in table else table[t.lower()] for t in toks if t in table or t.lower() in table]
        ref = np.mean(found, axis=0) if found else np.zeros(vecs.shape[1])
        np.testing.assert_allclose(e, ref, atol=1e-12)


def test_protocol_before_and_after_release():
    sents, labels, emb = _toy(k=300)
    res = downstream_utility(sents, labels, emb, epsilons=(1e5, 0.01), betas=(0.9,), mechanisms=("privemb", "m1"),
                             n_folds=3, inner_folds=2, Cs=(0.25, 4.0), random_state=0)
    rows = {(r["condition"], r["epsilon"]): r for r in res["rows"]}
    assert res["classes"] == ["negative", "positive"] and res["coverage"] == pytest.approx(5 / 6)
    assert rows[("original", None)]["test_accuracy"] >= 0.95
    # almost no noise: the release keeps the utility (JL projection + tiny noise)
    assert rows[("privemb", 1e5)]["test_accuracy"] >= 0.9
    assert rows[("m1", 1e5)]["test_accuracy"] >= 0.9
    # overwhelming noise: about chance, far below the original
    for mech in ("privemb", "m1"):
        assert rows[(mech, 0.01)]["test_accuracy"] < 0.8
    assert rows[("privemb", 1e5)]["m"] == rows[("privemb", 0.01)]["m"]
    assert all(len(r["fold_test_accuracy"][0]) == 3 for r in res["rows"])


def test_protocol_is_paired_and_reproducible():
    sents, labels, emb = _toy(n=40)
    kw = dict(epsilons=(5.0,), mechanisms=("privemb",), n_folds=4, inner_folds=2, random_state=3)
    a = downstream_utility(sents, labels, emb, **kw)
    b = downstream_utility(sents, labels, emb, **kw)
    assert a["rows"] == b["rows"]


def test_protocol_rejects_bad_input():
    sents, labels, emb = _toy(n=20)
    with pytest.raises(ValueError, match="20 sentences but 19 labels"):
        downstream_utility(sents, labels[:-1], emb)
    with pytest.raises(ValueError, match="one class"):
        downstream_utility(sents, ["a"] * 20, emb)
    with pytest.raises(ValueError, match="none of the"):
        downstream_utility(["zz yy"] * 4, [0, 1, 0, 1], emb)


def test_cli_privacy_utility(tmp_path, capsys):
    sents, labels, (words, vecs) = _toy(n=40)
    np.savez(tmp_path / "v.npz", vectors=vecs, words=np.array(words))
    (tmp_path / "data.tsv").write_text("".join(f"{lab}\t{s}\n" for s, lab in zip(sents, labels)))
    (tmp_path / "s.txt").write_text("\n".join(sents) + "\n")
    (tmp_path / "l.txt").write_text("\n".join(labels) + "\n")
    rc = main(["privacy-utility", "--sentences", str(tmp_path / "data.tsv"), "--embeddings", str(tmp_path / "v.npz"),
               "--epsilons", "1e5", "--mechanisms", "privemb", "--folds", "4", "--inner-folds", "2", "--seed", "0",
               "--report", str(tmp_path / "r.json"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and [r["condition"] for r in out["rows"]] == ["original", "privemb"]
    assert json.loads((tmp_path / "r.json").read_text())["rows"] == out["rows"]
    rc = main(["privacy-utility", "--sentences", str(tmp_path / "s.txt"), "--labels", str(tmp_path / "l.txt"),
               "--embeddings", str(tmp_path / "v.npz"), "--mechanisms", "m1", "--folds", "3", "--seed", "1"])
    text = capsys.readouterr().out
    assert rc == 0 and "original" in text and "m1 eps=10" in text
    rc = main(["privacy-utility", "--sentences", str(tmp_path / "s.txt"), "--embeddings", str(tmp_path / "v.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and "no TAB" in err


def test_tiny_classes_still_run():
    sents, labels, emb = _toy(n=4)   # 2 per class: 1 per class in each training part
    res = downstream_utility(sents, labels, emb, mechanisms=("m1",), n_folds=10, inner_folds=5, random_state=0)
    assert res["config"]["n_folds"] == 2 and all(0 <= r["test_accuracy"] <= 1 for r in res["rows"])
