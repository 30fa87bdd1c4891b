"""Streaming I/O, atomic output and the ``privatize`` / ``privacy-eval`` commands."""
import json
import os

import numpy as np
import pytest

from trustlab.cli import main
from trustlab.privacy import privatize
from trustlab.privacy.io import open_vectors, privatize_file, read_vectors, write_vectors

# integer seeds warn (tests only): expected here
pytestmark = pytest.mark.filterwarnings("ignore:random_state=.*tests only:UserWarning")


@pytest.fixture()
def X():
    return np.random.default_rng(0).standard_normal((257, 60)).astype(np.float32)


@pytest.mark.parametrize("ext", [".npy", ".txt", ".bin", ".parquet"])
def test_roundtrip_formats(tmp_path, X, ext):
    if ext == ".parquet":
        pytest.importorskip("pyarrow")
    words = [f"w{i}" for i in range(X.shape[0])]
    p = tmp_path / f"v{ext}"
    write_vectors(p, X, words)
    w, Y = read_vectors(p)
    np.testing.assert_allclose(Y, X, rtol=1e-6)
    if ext != ".npy":
        assert w == words
    src = open_vectors(p)
    assert (src.n, src.d) == X.shape
    assert sum(c.shape[0] for _, c in src.chunks(50)) == X.shape[0]


@pytest.mark.parametrize("ext", [".npy", ".txt", ".bin", ".parquet"])
def test_streamed_release_equals_in_memory(tmp_path, X, ext):
    if ext == ".parquet":
        pytest.importorskip("pyarrow")
    src = tmp_path / f"in{ext}"
    write_vectors(src, X, [f"w{i}" for i in range(len(X))])
    out = tmp_path / "out.npy"
    info = privatize_file(src, out, epsilon=3.0, beta=0.9, m=20, random_state=9, chunk_size=37, dtype=np.float64)
    W, rec = privatize(read_vectors(src)[1], epsilon=3.0, beta=0.9, m=20, random_state=9)
    np.testing.assert_allclose(np.load(out), W, atol=1e-5)
    assert info["n"] == len(X) and info["m"] == 20 and info["phi_seed"] == rec.phi_seed
    assert oct(os.stat(out).st_mode & 0o777) != oct(0o600)


def test_m1_vocab_swap_file(tmp_path, X):
    vocab = tmp_path / "vocab.txt"
    write_vectors(vocab, X[:40], [f"v{i}" for i in range(40)])
    src = tmp_path / "in.npy"
    np.save(src, X[:40])
    out = tmp_path / "out.txt"
    privatize_file(src, out, epsilon=1e4, mechanism="m1", vocab=vocab, random_state=0)
    words, Y = read_vectors(out)
    assert words == [f"v{i}" for i in range(40)]  # huge epsilon: every vector maps back to itself


def test_ragged_and_nan_text_files_fail_cleanly(tmp_path):
    ragged = tmp_path / "r.txt"
    ragged.write_text("3 4\na 1 2 3 4\nb 1 2 3\nc 1 2 3 4\n")
    with pytest.raises(ValueError, match="line 3 has 3 values, expected 4"):
        privatize_file(ragged, tmp_path / "o.npy", epsilon=1, m=2)
    nan = tmp_path / "n.txt"
    nan.write_text("2 4\na 1 2 3 4\nb 1 nan 3 4\n")
    with pytest.raises(ValueError, match="vector 2 contains NaN"):
        privatize_file(nan, tmp_path / "o.npy", epsilon=1, m=2)
    short = tmp_path / "s.txt"
    short.write_text("5 4\na 1 2 3 4\n")
    with pytest.raises(ValueError, match="announces 5 vectors"):
        privatize_file(short, tmp_path / "o.npy", epsilon=1, m=2)
    bad_header = tmp_path / "h.txt"
    bad_header.write_text("a 1 2 3 4\n")
    with pytest.raises(ValueError, match="header"):
        open_vectors(bad_header)
    with pytest.raises(ValueError, match="extension"):
        open_vectors(ragged.rename(tmp_path / "r.xyz"))
    with pytest.raises(FileNotFoundError):
        open_vectors(tmp_path / "missing.npy")


def test_nothing_written_half_way(tmp_path, X):
    Xb = X.astype(np.float64).copy()
    Xb[-1, 5] = np.inf  # in the last chunk: earlier chunks were already processed
    src = tmp_path / "in.npy"
    np.save(src, Xb)
    out = tmp_path / "out.npy"
    out.write_bytes(b"previous release")
    with pytest.raises(ValueError, match="NaN or infinity"):
        privatize_file(src, out, epsilon=1, m=10, chunk_size=16)
    assert out.read_bytes() == b"previous release"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy", "out.npy"]  # no temp file left


def test_dimension_mismatch_with_vocab(tmp_path, X):
    src = tmp_path / "in.npy"
    np.save(src, X)
    vocab = tmp_path / "v.npy"
    np.save(vocab, X[:, :10])
    with pytest.raises(ValueError, match="vocab has dimension 10 but the input has dimension 60"):
        privatize_file(src, tmp_path / "o.npy", epsilon=1, mechanism="m1", vocab=vocab)
    assert not (tmp_path / "o.npy").exists()


def test_cli_privatize_json(tmp_path, X, capsys):
    src = tmp_path / "in.npy"
    np.save(src, X)
    rc = main(["privatize", str(src), "--epsilon", "2", "--beta", "0.9", "--target-dim", "12", "--output",
               str(tmp_path / "o.npy"), "--record", str(tmp_path / "rec.json"), "--json", "--seed", "1"])
    assert rc == 0
    info = json.loads(capsys.readouterr().out)
    for k in ("n", "d", "m", "epsilon", "delta", "beta", "seconds", "vectors_per_second", "phi_seed"):
        assert k in info
    assert (info["n"], info["d"], info["m"]) == (257, 60, 12)
    assert np.load(tmp_path / "o.npy").shape == (257, 12)
    rec = json.loads((tmp_path / "rec.json").read_text())
    assert rec["phi_seed"] == info["phi_seed"] and "seconds" not in rec


@pytest.mark.parametrize("argv,msg", [
    (["--epsilon", "0"], "epsilon"),
    (["--epsilon", "1", "--delta", "2"], "delta"),
    (["--epsilon", "1", "--beta", "1.5"], "beta"),
    (["--epsilon", "1", "--beta", "0.3"], "exceeds the input dimension"),
])
def test_cli_errors_are_one_line(tmp_path, X, capsys, argv, msg):
    src = tmp_path / "in.npy"
    np.save(src, X)
    rc = main(["privatize", str(src), "--output", str(tmp_path / "o.npy"), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o.npy").exists()


def test_cli_privacy_eval(tmp_path, capsys):
    rc = main(["privacy-eval", "--epsilons", "5", "--betas", "0.9", "--runs", "1", "--no-svm", "--seed", "0",
               "--output-dir", str(tmp_path), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["m2_beats_m1"]["distance@eps=5"] == {"0.9": True}
    for name in ("distance.png", "inner_product.png", "privacy_eval.json"):
        assert (tmp_path / name).read_bytes()[:4] in (b"\x89PNG", b"{\n  ")
    rc = main(["privacy-eval", "--epsilons", "x", "--output-dir", str(tmp_path)])
    assert rc == 2


def test_truncated_binary_files(tmp_path, X):
    p = tmp_path / "v.bin"
    write_vectors(p, X, [f"w{i}" for i in range(len(X))])
    data = p.read_bytes()
    p.write_bytes(data[:-100])
    with pytest.raises(ValueError, match="truncated at vector 257"):
        read_vectors(p)
    q = tmp_path / "v.npy"
    np.save(q, X)
    q.write_bytes(q.read_bytes()[:-8])
    with pytest.raises(ValueError, match="truncated"):
        read_vectors(q)


@pytest.mark.skipif(__import__("trustlab._backend", fromlist=["x"]).gpu_available(), reason="a GPU is present")
def test_cli_gpu_unavailable_is_one_line(tmp_path, X, capsys):
    src = tmp_path / "in.npy"
    np.save(src, X)
    rc = main(["privatize", str(src), "--epsilon", "1", "--target-dim", "5", "--backend", "gpu",
               "-o", str(tmp_path / "o.npy")])
    err = capsys.readouterr().err
    assert rc == 2 and "GPU backend is unavailable" in err and "Traceback" not in err


def test_cli_projection_option(tmp_path):
    """`privatize --projection very_sparse` releases through the sparse projection and records it."""
    import json

    import numpy as np

    from trustlab.cli import main

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 30))
    src = tmp_path / "x.npy"
    np.save(src, x)
    for kind in ("gaussian", "very_sparse"):
        out, rec = tmp_path / f"{kind}.npy", tmp_path / f"{kind}.json"
        assert main(["privatize", str(src), "--epsilon", "5", "--target-dim", "10", "--seed", "1", "--phi-seed", "3",
                     "--projection", kind, "--output", str(out), "--record", str(rec)]) == 0
        assert np.load(out).shape == (40, 10)
        assert json.loads(rec.read_text())["projection"] == kind
