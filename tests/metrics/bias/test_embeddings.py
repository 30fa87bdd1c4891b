"""The embedding-input normaliser and loaders."""
import numpy as np
import pytest

from trustlab.metrics.embeddings import Embeddings, as_embeddings, load_embeddings


class FakeKV:  # duck-typed gensim KeyedVectors
    def __init__(self, words, V):
        self.key_to_index = {w: i for i, w in enumerate(words)}
        self.vectors = np.asarray(V)


def test_all_input_kinds_agree():
    words = ["he", "she", "it"]
    V = np.arange(6.0).reshape(3, 2)
    forms = [dict(zip(words, V)), (words, V), FakeKV(words, V), Embeddings(words, V)]
    for f in forms:
        e = as_embeddings(f)
        lk = e.lookup(["it", "he", "nope"], name="T")
        assert lk.words == ["it", "he"] and lk.missing == ["nope"]
        np.testing.assert_array_equal(lk.vectors, V[[2, 0]])


def test_bad_inputs():
    with pytest.raises(TypeError, match="mapping"):
        as_embeddings(42)
    with pytest.raises(ValueError, match="match"):
        as_embeddings((["a", "b"], np.ones((3, 2))))
    with pytest.raises(ValueError, match="one length"):
        as_embeddings({"a": [1.0, 2.0], "b": [1.0]})
    with pytest.raises(ValueError, match="empty"):
        as_embeddings({})
    with pytest.raises(ValueError, match="2D"):
        Embeddings(["a"], np.ones(3))
    e = as_embeddings({"a": [np.nan, 1.0], "b": [1.0, 1.0]})
    with pytest.raises(ValueError, match="NaN"):
        e.lookup(["a"])
    with pytest.raises(ValueError, match="empty"):
        e.lookup([])
    with pytest.raises(ValueError, match="no vector"):
        e.lookup(["b", "c"], on_missing="raise")


def test_load_formats(tmp_path):
    words = ["he", "she"]
    V = np.array([[1.0, 0.5], [0.25, -1.0]], dtype=np.float32)
    np.savez(tmp_path / "e.npz", vectors=V, words=np.array(words))
    (tmp_path / "h.txt").write_text("2 2\nhe 1 0.5\nshe 0.25 -1\n")
    (tmp_path / "nh.vec").write_text("he 1 0.5\nshe 0.25 -1\n")
    for name in ("e.npz", "h.txt", "nh.vec"):
        e = load_embeddings(tmp_path / name)
        assert e.words == words
        np.testing.assert_allclose(e.vectors, V)
    (tmp_path / "bad.txt").write_text("he 1 0.5\nshe 0.25\n")
    with pytest.raises(ValueError, match="expected 2"):
        load_embeddings(tmp_path / "bad.txt")
    np.savez(tmp_path / "w.npz", x=V)
    with pytest.raises(ValueError, match="'vectors' and 'words'"):
        load_embeddings(tmp_path / "w.npz")
    with pytest.raises(FileNotFoundError):
        load_embeddings(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="extension"):
        load_embeddings(tmp_path / "e.npz").__class__ and load_embeddings(
            (tmp_path / "x.csv").write_text("a") and tmp_path / "x.csv"
        )
