"""The Numba edge-file reader and clique writer of ``trustlab cliques`` against the
exact Python reader / a plain Python writer (the trusted slow paths)."""
from __future__ import annotations

import numpy as np
import pytest

from trustlab.cliques import maximal_cliques
from trustlab.commands.cliques import _write_output
from trustlab.graph import _read_edge_file_python, _read_int_edges_fast, csr_from_edges, read_edge_file
from trustlab.kernels.cliques_cpu import compact_labels, edges_to_csr


def _same_graph(a, b):
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    assert a.nodes.tolist() == b.nodes.tolist()
    assert a.n_self_loops == b.n_self_loops


def _random_edge_text(rng, n_lines):
    lines = []
    for _ in range(n_lines):
        u, v = rng.integers(-40, 400, size=2)
        if rng.random() < 0.05:
            v = u  # self-loop
        sep = rng.choice([" ", "\t", "  ", " \t "])
        tail = rng.choice(["", " 0.5", " w=3 x", "  # c", "#c", "\t7"])
        pre = rng.choice(["", " ", "+" if u >= 0 else ""])
        lines.append(f"{pre}{u}{sep}{v}{tail}")
        if rng.random() < 0.05:
            lines.append(rng.choice(["", "# only a comment", "   "]))
    end = rng.choice(["\n", "\r\n", "\r"])
    return end.join(lines) + rng.choice(["", end])


@pytest.mark.parametrize("seed", range(12))
def test_fast_reader_matches_python_reader(tmp_path, seed):
    rng = np.random.default_rng(seed)
    f = tmp_path / "g.txt"
    f.write_bytes(_random_edge_text(rng, int(rng.integers(1, 600))).encode())
    with _maybe_warns():
        fast = _read_int_edges_fast(f)
    with _maybe_warns():
        slow = _read_edge_file_python(f)
    assert fast is not None
    _same_graph(fast, slow)


class _maybe_warns:
    """Swallow the self-loop warning (both readers emit it; tested elsewhere)."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


@pytest.mark.parametrize("content", [
    "a b\nb c\n",              # string labels
    "1 2\n3\n",                # a one-column line (the Python reader words the error)
    "1 2\n1_0 3\n",            # Python int() syntax the fast parser does not take
    "1 2\n3 4.0\n",            # float label
    "1 2\n3 4\u00a05\n",       # non-ASCII (NBSP is whitespace for str.split)
    "1 2\n1234567890123456789 3\n",  # more than 18 digits
    "1 2\n3\x1c4\n",           # ASCII separator: whitespace for str.split
])
def test_fast_reader_defers_unusual_files(tmp_path, content):
    f = tmp_path / "g.txt"
    f.write_bytes(content.encode())
    assert _read_int_edges_fast(f) is None


def test_huge_label_range_uses_sort_path(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("0 100000000000\n5 -7\n-7 0\n100000000000 5\n")
    _same_graph(_read_int_edges_fast(f), _read_edge_file_python(f))


@pytest.mark.parametrize("seed", range(6))
def test_edges_to_csr_matches_csr_from_edges(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 400))
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    ip, ix, loops = edges_to_csr(src, dst, n)
    with _maybe_warns():
        ref = csr_from_edges(src, dst, n)
    assert np.array_equal(ip, ref.indptr) and np.array_equal(ix, ref.indices)
    assert loops == ref.n_self_loops
    labels, sp, dp = compact_labels(src, dst)
    assert np.array_equal(labels, np.unique(np.concatenate([src, dst])))
    assert np.array_equal(labels[sp], src) and np.array_equal(labels[dp], dst)


@pytest.mark.parametrize("labels", ["int", "str"])
def test_writer_matches_python_join(tmp_path, labels):
    rng = np.random.default_rng(3)
    f = tmp_path / "g.txt"
    names = [f"n{i}é" for i in range(80)] if labels == "str" else [str(i * 7 - 20) for i in range(80)]
    pairs = rng.integers(0, 80, size=(500, 2))
    f.write_text("\n".join(f"{names[u]} {names[v]}" for u, v in pairs if u != v) + "\n", encoding="utf-8")
    g = read_edge_file(f)
    res = maximal_cliques(g)
    out = tmp_path / "c.txt"
    _write_output(res, str(out))
    expect = "".join(" ".join(str(x) for x in c) + "\n" for c in res)
    assert out.read_text(encoding="utf-8") == expect
    empty = maximal_cliques(g, min_size=10**6)
    _write_output(empty, str(out))
    assert out.read_bytes() == b""


@pytest.mark.parametrize("seed", range(3))
def test_compact_labels_sparse_label_range_matches_numpy(seed):
    # labels spread over a range far wider than 4x the endpoints: the sort path
    rng = np.random.default_rng(seed)
    src = rng.integers(-10**12, 10**12, 300)
    dst = rng.integers(-10**12, 10**12, 300)
    labels, sp, dp = compact_labels(src, dst)
    assert np.array_equal(labels, np.unique(np.concatenate([src, dst])))
    assert sp.dtype == dp.dtype == np.int64
    assert np.array_equal(labels[sp], src) and np.array_equal(labels[dp], dst)
