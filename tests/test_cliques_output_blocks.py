"""The stored cliques grow block by block and are joined and written in pieces (issue 28:
SIGTERM exits within 2 s).

The enumeration kernel used to grow its output by doubling: a copy of up to 0.5 GB in a
worker that does not look at the halt flag, which the main thread joins after a signal
(`cliques mm.txt -o OUT` once exited 2.45 s after SIGTERM under load). The output now lives
in blocks of a bounded size, nothing stored is copied again, and joining and formatting the
result work on one bounded piece at a time. Checked here: the same cliques (networkx; one
block against many), blocks of the bounded size, the halt flag honoured, and no formatting
call on more than a piece.
"""
from __future__ import annotations

import threading

import networkx as nx
import numpy as np
import pytest

from trustlab import cliques
from trustlab.commands import cliques as cli_cliques
from trustlab.kernels import cliques_cpu


def _moon_moser(k: int) -> nx.Graph:
    return nx.complete_multipartite_graph(*([3] * k))


def _graphs():
    g = nx.gnp_random_graph(120, 0.08, seed=3)
    g.add_nodes_from(range(120, 140))  # isolated vertices: cliques of size 1
    return [g, nx.barabasi_albert_graph(400, 6, seed=2), _moon_moser(6), nx.complete_graph(12)]


def _kernel(g: nx.Graph, block: int, halt=None):
    cg = cliques.as_csr_graph(g)
    rank, fptr, fidx = cliques._prepare_forward(cg)
    verts = np.argsort(rank).astype(np.int32)
    halt = np.zeros(1, np.uint8) if halt is None else halt
    return cliques_cpu.enumerate_chunk(cg.indptr, cg.indices, fptr, fidx, rank, verts, 1, True,
                                       2**62, 2**62, halt, block)


@pytest.mark.parametrize("block", [3, 16, 100])
def test_kernel_output_comes_in_bounded_blocks(block):
    for g in _graphs():
        sb, su, mb, mu, cnt, mx = _kernel(g, block)
        truth = sorted(sorted(c) for c in nx.find_cliques(g))
        assert cnt == len(truth) and mx == max(len(c) for c in truth)
        # no block holds more than max(block, the largest clique) words: the output never
        # grew by copying what it had stored
        assert all(b.shape[0] <= max(block, mx) for b in sb + mb)
        assert sum(su) == cnt and sum(mu) == sum(len(c) for c in truth)
        sizes = np.concatenate([b[:u] for b, u in zip(sb, su)])
        members = np.concatenate([b[:u] for b, u in zip(mb, mu)])
        ends = np.cumsum(sizes)
        got = [members[e - s:e].tolist() for s, e in zip(sizes, ends)]
        assert sorted(got) == truth
        if sum(mu) > 3 * max(block, mx):
            assert len(mb) > 1


def test_many_blocks_give_the_same_result_as_one(monkeypatch):
    monkeypatch.setenv("TRUSTLAB_CLIQUES_PYTHON", "0")
    monkeypatch.setattr(cliques, "_n_threads", lambda: 2)
    for g in _graphs():
        monkeypatch.setattr(cliques, "_OUT_BLOCK", 1 << 20)
        one = cliques.maximal_cliques(g, backend="cpu")
        monkeypatch.setattr(cliques, "_OUT_BLOCK", 5)  # below the largest clique: blocks of one clique
        many = cliques.maximal_cliques(g, backend="cpu")
        assert np.array_equal(one.indptr, many.indptr) and np.array_equal(one.indices, many.indices)
        assert one.max_size == many.max_size == max(len(c) for c in nx.find_cliques(g))
        assert one.to_sets() == {frozenset(c) for c in nx.find_cliques(g)}


def test_a_set_halt_flag_ends_a_materialising_kernel_with_nothing_stored():
    halt = np.zeros(1, np.uint8)
    result = {}

    def run():
        result["out"] = _kernel(_moon_moser(16), 64, halt)  # 3^16 cliques: minutes if not halted

    t = threading.Thread(target=run)
    t.start()
    t.join(0.5)
    halt[0] = 1
    t.join(60)
    assert not t.is_alive()
    sb, su, mb, mu, cnt, _ = result["out"]
    assert cnt == -2 and not sb and not mb and not su and not mu


def test_joining_copies_block_by_block(monkeypatch):
    monkeypatch.setenv("TRUSTLAB_CLIQUES_PYTHON", "0")
    monkeypatch.setattr(cliques, "_OUT_BLOCK", 8)
    g = _moon_moser(5)
    _, parts = cliques._run_chunks(cliques.as_csr_graph(g), 1, True)
    assert max(b.shape[0] for p in parts for b in p[1]) <= 8
    indptr, indices = cliques._join_parts(parts)
    assert all(p is None for p in parts)  # each chunk freed once copied
    got = {frozenset(indices[indptr[k]:indptr[k + 1]].tolist()) for k in range(indptr.shape[0] - 1)}
    assert got == {frozenset(c) for c in nx.find_cliques(g)}


def test_text_output_is_formatted_in_pieces_with_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("TRUSTLAB_CLIQUES_PYTHON", "0")
    g = nx.relabel_nodes(_moon_moser(6), {i: f"v{i:03d}" for i in range(18)})
    res = cliques.maximal_cliques(g, backend="cpu")
    # the trusted slow path: the same lines joined in Python
    want = b"".join(b" ".join(str(res.nodes[i]).encode() for i in res.indices[res.indptr[k]:res.indptr[k + 1]])
                    + b"\n" for k in range(len(res)))
    seen = []
    real_bytes, real_fmt = cliques_cpu.clique_line_bytes, cliques_cpu.format_clique_lines

    def line_bytes(ip, ix, lab_len):
        seen.append(ip.shape[0] - 1)
        return real_bytes(ip, ix, lab_len)

    def fmt(ip, ix, lab_buf, lab_off, c0, c1, out):
        seen.append(ip.shape[0] - 1)
        return real_fmt(ip, ix, lab_buf, lab_off, c0, c1, out)

    monkeypatch.setattr(cliques_cpu, "clique_line_bytes", line_bytes)
    monkeypatch.setattr(cliques_cpu, "format_clique_lines", fmt)
    monkeypatch.setattr(cli_cliques, "_PY_WRITE_MAX_MEMBERS", -1)  # the kernels, not the Python path
    monkeypatch.setattr(cli_cliques, "_WRITE_CLIQUES", 100)
    monkeypatch.setattr(cli_cliques, "_WRITE_MEMBERS", 450)
    out = tmp_path / "c.txt"
    cli_cliques._write_output(res, str(out))
    assert out.read_bytes() == want
    assert len(res) == 729 and seen and max(seen) <= 100  # no call saw the whole output
    monkeypatch.setattr(cli_cliques, "_WRITE_CLIQUES", 1000)  # now the member bound cuts: 450 // 6 cliques
    seen.clear()
    cli_cliques._write_output(res, str(out))
    assert out.read_bytes() == want and max(seen) <= 75
