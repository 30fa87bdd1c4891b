"""AEC P4.3 (a)-(c) features from spaCy-like parses built in the test (no spaCy, no downloads)."""
from __future__ import annotations

from types import SimpleNamespace as T

import numpy as np
import pytest

from trustlab.metrics import error_classifier
from trustlab.metrics.aec_features import (
    aec_feature_matrix,
    dependency_triples,
    entity_type_counts,
    nrc_emotion_counts,
    read_nrc_lexicon,
)


class Doc:
    def __init__(self, spec, ents=()):
        self.toks = [T(text=w, tag_=tag, dep_=dep) for w, tag, dep, _ in spec]
        for t, (_, _, _, h) in zip(self.toks, spec):
            t.head = self.toks[h]
        self.text = " ".join(w for w, *_ in spec)
        self.ents = [T(label_=e) for e in ents]

    def __iter__(self):
        return iter(self.toks)

    def __len__(self):
        return len(self.toks)


def _docs():
    d1 = Doc([("Thanks", "NNS", "ROOT", 0), ("Delta", "NNP", "npadvmod", 0), ("two", "CD", "nummod", 3),
              ("bags", "NNS", "dobj", 0)], ents=["ORG", "CARDINAL"])
    d2 = Doc([("awful", "JJ", "amod", 1), ("delay", "NN", "ROOT", 1), ("again", "RB", "advmod", 1)], ents=[])
    return [d1, d2]


def test_dependency_triples_count_and_normalise():
    f = dependency_triples(_docs())
    frame = f.to_frame()
    assert f.names == ["advmod-NN-RB", "amod-NN-JJ", "dobj-NNS-NNS", "npadvmod-NNS-NNP", "nummod-NNS-CD"]
    assert frame.loc[0, "nummod-NNS-CD"] == pytest.approx(1 / 4) and frame.loc[1, "amod-NN-JJ"] == pytest.approx(1 / 3)
    assert frame.values.sum(axis=1) == pytest.approx([3 / 4, 2 / 3])         # ROOT skipped
    g = dependency_triples([[("amod", "NN", "JJ"), ("amod", "NN", "JJ")]], vocabulary=["amod-NN-JJ", "x"])
    assert g.X.tolist() == [[2 / 3, 0.0]]
    with pytest.raises(ValueError, match="spaCy-like"):
        dependency_triples([["plain", "words"]])


def test_nrc_counts_from_a_lexicon_file(tmp_path):
    p = tmp_path / "nrc.txt"
    p.write_text("awful\tanger\t1\nawful\tdisgust\t1\nawful\tnegative\t1\nawful\tjoy\t0\n"
                 "thanks\tjoy\t1\nthanks\tpositive\t1\n")
    lex = read_nrc_lexicon(p)
    assert lex["awful"] == {"anger", "disgust", "negative"}
    a = nrc_emotion_counts(_docs(), p)
    b = nrc_emotion_counts([["Thanks", "Delta", "two", "bags"], "awful delay again"], lex)
    np.testing.assert_allclose(a.X, b.X)
    row = dict(zip(a.names, a.X[1]))
    assert len(a.names) == 10 and row["anger"] == pytest.approx(1 / 3) and row["joy"] == 0
    (tmp_path / "bad.txt").write_text("oops\n")
    with pytest.raises(ValueError, match="expected"):
        read_nrc_lexicon(tmp_path / "bad.txt")


def test_entity_types_and_the_combined_matrix_feed_the_error_classifier():
    f = entity_type_counts(_docs())
    assert f.names == ["CARDINAL", "ORG"] and f.X.tolist() == [[0.25, 0.25], [0.0, 0.0]]
    with pytest.raises(ValueError, match="lengths"):
        entity_type_counts([["ORG"]])
    m = aec_feature_matrix(_docs(), nrc_lexicon={"awful": {"anger"}})
    assert m.names[0].startswith("dep:") and "nrc:anger" in m.names and "ent:ORG" in m.names
    assert "cue:thanks" in m.names and m.X[0, m.names.index("cue:thanks")] == pytest.approx(1 / 4)
    same = aec_feature_matrix(_docs()[::-1], nrc_lexicon={"awful": {"anger"}}, vocabulary=m.names)
    np.testing.assert_allclose(same.X, m.X[::-1])
    # end to end: features of 40 docs into the AEC error classifier
    rng = np.random.default_rng(0)
    docs = [_docs()[int(k)] for k in rng.integers(0, 2, 40)]
    is_error = np.array([d.text.startswith("awful") for d in docs])
    X = aec_feature_matrix(docs).X
    res = error_classifier(X, is_error, n_estimators=10, cv=2, random_state=0)
    assert res.test_accuracy == 1.0
