"""Hostile vector files and arrays: clear errors, never a traceback or silent data loss
(bench/results/hostile_inputs.md)."""
import numpy as np
import pytest

from trustlab.cli import main
from trustlab.privacy import privatize
from trustlab.privacy.io import open_vectors

pytestmark = pytest.mark.filterwarnings("ignore:random_state=.*tests only:UserWarning")


def _npy_with_header(path, shape, payload=64):
    """A .npy file whose header declares ``shape`` but that holds ``payload`` bytes."""
    h = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}".encode()
    h += b" " * (118 - len(h)) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + b"\0" * payload)
    return path


def test_npy_header_declaring_exabytes_is_refused_as_truncated(tmp_path):
    p = _npy_with_header(tmp_path / "huge.npy", (10**9, 10**9))
    with pytest.raises(ValueError, match=r"truncated: its header declares shape \(1000000000, 1000000000\)"):
        open_vectors(p)


def test_npy_with_zero_columns(tmp_path, capsys):
    np.save(tmp_path / "c0.npy", np.ones((5, 0)))
    rc = main(["privatize", str(tmp_path / "c0.npy"), "--epsilon", "1", "-o", str(tmp_path / "o.npy")])
    err = capsys.readouterr().err
    assert rc == 2 and "0 dimensions" in err and "make_mechanism" not in err
    assert not (tmp_path / "o.npy").exists()


@pytest.mark.parametrize("rows", [np.ones((1, 8)), np.zeros((4, 8))], ids=["one-row", "all-zero"])
def test_cli_summary_without_sensitivity(tmp_path, capsys, rows):
    # the empirical sensitivity needs two distinct vectors; the summary line must not crash
    np.save(tmp_path / "x.npy", rows)
    rc = main(["privatize", str(tmp_path / "x.npy"), "--epsilon", "1", "--target-dim", "4",
               "-o", str(tmp_path / "o.npy")])
    out = capsys.readouterr().out
    assert rc == 0 and "public projection seed" in out
    assert np.load(tmp_path / "o.npy").shape == (rows.shape[0], 4)


def test_complex_input_is_refused_not_truncated():
    X = np.ones((4, 10), complex) * (1 + 2j)
    with pytest.raises(ValueError, match="complex dtype"):
        privatize(X, epsilon=1, random_state=0)


def test_privacy_eval_given_a_npy(tmp_path, capsys):
    np.save(tmp_path / "e.npy", np.ones((5, 4)))
    rc = main(["privacy-eval", "--embeddings", str(tmp_path / "e.npy"), "--output-dir", str(tmp_path / "pe")])
    err = capsys.readouterr().err
    assert rc == 2 and "expected an .npz with arrays 'vectors' and 'words'" in err


def test_unknown_extension_message(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.ones((3, 8)))
    rc = main(["privatize", str(tmp_path / "x.npy"), "--epsilon", "1", "-o", str(tmp_path / "o.xyz")])
    err = capsys.readouterr().err
    assert rc == 2 and "'.xyz'" in err and "output_format=" in err


def test_streamed_release_is_not_refused_for_the_rows_it_never_holds(tmp_path, monkeypatch):
    # a word2vec header announcing 10**12 vectors: privatize_file streams, so the
    # output rows are never all in memory; the lie is caught when the file runs out
    import trustlab._validation as validation
    import trustlab.privacy.mechanisms as mech

    monkeypatch.setattr(validation, "physical_memory", lambda: 2**30)  # the one memory check reads it
    p = tmp_path / "v.txt"
    p.write_text("1000000000000 3\nfoo 1 2 3\nbar 1 2 4\n")
    rc = main(["privatize", str(p), "--epsilon", "1", "--target-dim", "2", "-o", str(tmp_path / "o.npy")])
    assert rc == 2
    with pytest.raises(ValueError, match="header announces 1000000000000 vectors but the file holds 2"):
        from trustlab.privacy.io import privatize_file

        privatize_file(p, tmp_path / "o.npy", epsilon=1, m=2)
    assert not list(tmp_path.glob("*o.npy*"))  # no output, no temporary file left
    # the in-memory release still refuses an output that cannot fit
    with pytest.raises(ValueError, match="GiB"):
        mech.make_mechanism(3, epsilon=1, m=2, n_hint=10**12)


def test_binary_garbage_word2vec_header_is_described_not_dumped(tmp_path):
    p = tmp_path / "v.bin"
    p.write_bytes(bytes(range(128, 256)) * 3)
    with pytest.raises(ValueError, match="word2vec header 'n_vectors dimension', got binary data") as exc:
        open_vectors(p)
    assert "\\x" not in str(exc.value)


@pytest.mark.parametrize("exp2", [-1000, -100, 100, 530])
def test_sensitivity_and_distortion_are_scale_free(exp2):
    # the ratios do not depend on the scale of X, but their Gram matrices and squared
    # norms overflowed (1e160: "overflow encountered in matmul") or underflowed (every
    # pair closer than the absolute min_dist: nan); they are now formed on X scaled by a
    # power of two
    import warnings

    from trustlab.privacy.calibration import empirical_sensitivity, jl_distortion, projection_matrix

    rng = np.random.default_rng(0)
    X, Y = rng.normal(0, 1, (120, 40)), rng.normal(0, 1, (25, 40))
    phi = projection_matrix(12, 40, seed=1)
    s = 2.0**exp2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert empirical_sensitivity(phi, X * s) == empirical_sensitivity(phi, X)
        got, want = jl_distortion(phi, X[:20] * s, Y * s), jl_distortion(phi, X[:20], Y)
    assert got == want


@pytest.mark.parametrize("precision,exp2", [("float64", -1000), ("float64", 1000), ("float32", -70),
                                            ("float32", 70)])
def test_nearest_neighbor_swap_at_any_scale(precision, exp2):
    # the nearest vocabulary row does not depend on the scale, but the squared norms
    # overflowed (inf: garbage indices) or underflowed; such inputs are rescaled exactly
    import warnings

    from trustlab.privacy.mechanisms import nearest_neighbor_swap

    rng = np.random.default_rng(0)
    Q, V = rng.normal(0, 1, (200, 16)), rng.normal(0, 1, (1500, 16))
    want = nearest_neighbor_swap(Q, V, precision=precision)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = nearest_neighbor_swap(Q * 2.0**exp2, V * 2.0**exp2, precision=precision)
    np.testing.assert_array_equal(got, want)
