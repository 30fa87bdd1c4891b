"""Tests of the GPU maximal-clique kernel (trustlab.kernels.cliques_cuda and its host
side, trustlab.kernels.cliques_cuda_host).

* The device kernel itself runs under Numba's CUDA simulator in ONE subprocess (the
  simulator must be enabled before numba.cuda is imported, and it is slow: every block
  barrier costs milliseconds), on a handful of small graphs, against networkx.
* Its host mirror (same sub-problems, same bitset Bron–Kerbosch) runs in-process on
  hundreds of hypothesis graphs.
* With a real GPU, test_real_gpu_* compare larger graphs (skipped otherwise).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import background
from tests.reference import edges_to_csr
from trustlab._backend import GPUUnavailableError, cuda_simulator_enabled
from trustlab.kernels import cliques_cuda as cc
from trustlab.kernels import cliques_cuda_host as host

HERE = Path(__file__).resolve().parent


# ----------------------------------------------------------------------------- helpers
to_csr = edges_to_csr


def nx_cliques(n, edges, min_size=1):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, v in edges if u != v)
    return sorted(sorted(c) for c in nx.find_cliques(G) if len(c) >= min_size) if n else []


def csr_cliques(cp, ci):
    return [ci[cp[k]:cp[k + 1]].tolist() for k in range(len(cp) - 1)]


def gnp_edges(n, p, seed):
    return [list(e) for e in nx.gnp_random_graph(n, p, seed=seed).edges()]


@st.composite
def graphs(draw, max_n=24):
    kind = draw(st.sampled_from(["gnp", "gnp", "gnp", "empty", "complete", "star", "union"]))
    n = draw(st.integers(0, max_n))
    if kind == "empty":
        return n, []
    if kind == "complete":
        return n, [[u, v] for u in range(n) for v in range(u + 1, n)]
    if kind == "star":
        return n, [[0, v] for v in range(1, n)]
    p = draw(st.floats(0.0, 1.0))
    seed = draw(st.integers(0, 2**31 - 1))
    if kind == "union":  # disjoint union of two random graphs
        h = n // 2
        e1 = gnp_edges(h, p, seed)
        e2 = [[u + h, v + h] for u, v in gnp_edges(n - h, 1.0 - p, seed + 1)]
        return n, e1 + e2
    return n, gnp_edges(n, p, seed)


# ------------------------------------------------------------- host mirror (in-process)
@settings(max_examples=250)
@given(g=graphs(max_n=20), min_size=st.integers(0, 5), split_min=st.sampled_from([None, 1, 5]))
def test_host_mirror_equals_networkx(g, min_size, split_min):
    n, edges = g
    ip, ix = to_csr(n, edges)
    cp, ci = host.enumerate_maximal_cliques_bitset_host(ip, ix, n, min_size, split_min=split_min)
    assert cp.dtype == np.int64 and ci.dtype == np.int32
    got = csr_cliques(cp, ci)
    assert all(c == sorted(c) for c in got)  # members sorted
    assert sorted(got) == nx_cliques(n, edges, min_size)


def test_host_mirror_int32_indptr_and_universe_over_one_word():
    # K_40 minus a 4-edge matching: universes > 32 bits (several words per row), 16 cliques
    n = 40
    edges = [[u, v] for u in range(n) for v in range(u + 1, n) if not (u < 8 and u % 2 == 0 and v == u + 1)]
    ip, ix = to_csr(n, edges)
    cp, ci = host.enumerate_maximal_cliques_bitset_host(ip.astype(np.int32), ix, n)
    got = sorted(csr_cliques(cp, ci))
    assert got == nx_cliques(n, edges)
    assert len(got) == 2 ** 4


@settings(max_examples=60)
@given(g=graphs(max_n=30))
def test_degeneracy_order_matches_networkx_core_number(g):
    n, edges = g
    ip, ix = to_csr(n, edges)
    rank, core = host.degeneracy_order(ip, ix, n)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(edges)
    assert core.tolist() == [nx.core_number(G)[v] for v in range(n)]
    assert sorted(rank.tolist()) == list(range(n))
    # degeneracy order: every vertex has at most `degeneracy` later neighbours
    later = [sum(rank[u] > rank[v] for u in ix[ip[v]:ip[v + 1]]) for v in range(n)]
    assert max(later, default=0) <= max(core.tolist(), default=0)


@settings(max_examples=60)
@given(g=graphs(max_n=30))
def test_subproblem_universes(g):
    n, edges = g
    ip, ix = to_csr(n, edges)
    rank, sub_v, sub_ptr, sub_idx, p0 = host.build_subproblems(ip, ix, n)
    nbrs = [set(ix[ip[v]:ip[v + 1]].tolist()) for v in range(n)]
    assert np.all(np.diff(sub_ptr)[:-1] >= np.diff(sub_ptr)[1:]) if len(sub_v) > 1 else True
    for s, v in enumerate(sub_v.tolist()):
        U = sub_idx[sub_ptr[s]:sub_ptr[s + 1]].tolist()
        later = {u for u in nbrs[v] if rank[u] > rank[v]}
        earlier = {w for w in nbrs[v] - later if nbrs[w] & later}
        assert U == sorted(later | earlier)
        assert p0[v] == len(later) > 0


def test_device_module_reexports_the_host_entry_points():
    for name in ("enumerate_maximal_cliques_bitset_host", "degeneracy_order", "build_subproblems"):
        assert getattr(cc, name) is getattr(host, name) and name in cc.__all__


def test_bad_input_errors():
    with pytest.raises(ValueError, match="Inconsistent CSR"):
        host.enumerate_maximal_cliques_bitset_host(np.array([0, 1]), np.array([0, 1], np.int32), 1)
    with pytest.raises(ValueError, match="Inconsistent CSR"):
        host.degeneracy_order(np.array([0, 0]), np.zeros(0, np.int32), 5)
    ip, ix = to_csr(3, [[0, 1]])
    with pytest.raises(ValueError, match="thread_max"):
        cc.enumerate_maximal_cliques_cuda(ip, ix, 3, thread_max=16)
    with pytest.raises(ValueError, match="max_universe"):
        cc.enumerate_maximal_cliques_cuda(ip, ix, 3, max_universe=0)
    with pytest.raises(ValueError, match="split_min"):
        cc.enumerate_maximal_cliques_cuda(ip, ix, 3, split_min=0)
    with pytest.raises(ValueError, match="split2_min"):
        cc.enumerate_maximal_cliques_cuda(ip, ix, 3, split2_min=0)
    with pytest.raises(ValueError, match="warp_ops"):
        cc.enumerate_maximal_cliques_cuda(ip, ix, 3, warp_ops="fast")


def _real_gpu() -> bool:
    if cuda_simulator_enabled():
        return False
    from trustlab._backend import gpu_available

    return gpu_available("numba-cuda")


@pytest.mark.skipif(_real_gpu() or cuda_simulator_enabled(), reason="a CUDA device is present")
def test_no_gpu_raises_clear_error():
    ip, ix = to_csr(3, [[0, 1]])
    with pytest.raises(GPUUnavailableError, match="backend='cpu'"):
        cc.enumerate_maximal_cliques_cuda(ip, ix, 3)


# ------------------------------------------------------- device kernel in the simulator
def _sim_cases():
    """Small cases: the simulator costs milliseconds per block barrier."""
    cases = []
    # disjoint union: random graphs of several densities + K5 + star + 2 isolated nodes
    # (G(7, 0.5, seed=113) reaches a search node with P empty and X non-empty, so it
    # catches a kernel that skips the maximality test; G(7, 0.7, seed=113) catches a root
    # branch split that forgets to move the earlier candidates into X)
    parts = [(7, gnp_edges(7, 0.5, 113)), (9, gnp_edges(9, 0.5, 11)), (7, gnp_edges(7, 0.7, 113)),
             (5, [[u, v] for u in range(5) for v in range(u + 1, 5)]),
             (6, [[0, v] for v in range(1, 6)]), (2, [])]
    off, edges = 0, []
    for m, e in parts:
        edges += [[u + off, v + off] for u, v in e]
        off += m
    K = [[u, v] for u in range(36) for v in range(u + 1, 36) if (u, v) != (0, 1)]
    # one thread per small universe; the warp kernel (forced with thread_max=0), whole and
    # split into root branches (split_min=1); min_size; the host fallback (max_universe);
    # K_36 minus an edge: universes of 34-35 bits = 2 words; universes of vertices above a
    # degree threshold built by one block each (big_degree)
    for tm, sm, ms, mu in ((64, 64, 1, 1024), (0, 64, 1, 1024), (0, 1, 1, 1024), (0, 1, 3, 1024),
                           (32, 64, 3, 4)):
        cases.append({"n": off, "edges": edges, "min_size": ms, "max_universe": mu, "split_min": sm,
                      "thread_max": tm})
    cases.append({"n": 36, "edges": K, "min_size": 1, "max_universe": 1024})
    cases.append({"n": 36, "edges": K, "min_size": 1, "max_universe": 1024, "thread_max": 0, "split_min": 1})
    cases.append({"n": off, "edges": edges, "min_size": 1, "max_universe": 1024, "thread_max": 0,
                  "split_min": 4, "big_degree": 2})
    cases.append({"n": off, "edges": edges, "min_size": 3, "max_universe": 1024, "big_degree": 3})
    # the lean warp build with the simulator's shared-memory reductions, split at the root
    cases.append({"n": off, "edges": edges, "min_size": 1, "max_universe": 1024, "thread_max": 0,
                  "split_min": 1, "lean": True})
    # degenerate inputs: empty graph, edgeless graph, one edge
    cases.append({"n": 0, "edges": [], "min_size": 1, "max_universe": 1024})
    cases.append({"n": 4, "edges": [], "min_size": 1, "max_universe": 1024})
    cases.append({"n": 2, "edges": [[0, 1]], "min_size": 1, "max_universe": 1024})
    # the public API dispatching to this kernel (labels = the edge array's integers)
    cases.append({"api": True, "n": 10, "edges": gnp_edges(10, 0.5, 3), "min_size": 2})
    # count_maximal_cliques on the GPU (the count pass only) and the output cap
    cases.append({"api_count": True, "n": 10, "edges": gnp_edges(10, 0.5, 3), "min_size": 1})
    cases.append({"api_cap": 3, "n": 10, "edges": gnp_edges(10, 0.5, 3), "min_size": 1})
    return cases


def _sim_run(cases) -> background.Run:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env.pop("TRUSTLAB_BACKEND", None)
    return background.Run([sys.executable, "-m", "tests.kernels.cliques_cuda._sim_script"], json.dumps(cases), env,
                          str(HERE.parents[2]), timeout=400)


def _run_sim(key: str, cases):
    """The simulator's results for ``cases``: started in the background when collection
    ended (tests/background.py), or run now."""
    proc = background.result(key, _sim_run(cases))
    last = (proc.stderr.strip().splitlines() or [""])[-1]
    if proc.returncode == 1 and last.startswith("SKIP "):  # no numba.cuda simulator here
        pytest.skip(last[5:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _two_graphs():
    return gnp_edges(9, 0.5, 11) + [[u + 9, v + 9] for u, v in gnp_edges(7, 0.7, 113)]


def _split2_cases():
    edges = _two_graphs()
    K = [[u, v] for u in range(36) for v in range(u + 1, 36) if (u, v) != (0, 1)]
    base = {"n": 16, "edges": edges, "max_universe": 1024, "thread_max": 0, "split_min": 1}
    cases = [dict(base, min_size=ms, split2_min=sm, max_blocks=64) for ms in (1, 3) for sm in (1, None)]
    cases.append(dict(base, min_size=1, split2_min=1))  # 2 resident warps: many root items each
    cases.append({"n": 36, "edges": K, "min_size": 1, "max_universe": 1024, "thread_max": 0, "split_min": 1,
                  "split2_min": 1, "max_blocks": 64})
    return cases


def _shfl_cases():
    case = {"n": 16, "edges": _two_graphs(), "min_size": 1, "max_universe": 1024, "thread_max": 0, "split_min": 1,
            "split2_min": 1, "warp_ops": "shfl", "max_blocks": 64}
    # the lean build (pivot only where the search branches, members placed from one split
    # point per item), with min_size 3 so that it also prunes before the pivot
    return [case, dict(case, lean=True, min_size=3)]


def _host_output_cases():
    """Each way of preparing the host output (``host_output``), the threaded ones cut into
    chunks of 64 bytes (many per array): through the kernel, with isolated vertices and the
    host fallback (the host's parts written after the device's copy), and through the
    public API (``trustlab.cliques._GPU_HOST_OUTPUT``). Thread kernels only: no barriers,
    so the simulator is quick."""
    edges = _two_graphs() + [[16, 17], [17, 18], [16, 18], [18, 19], [19, 21]]  # 16 + 6 vertices, 20 isolated
    cases = []
    for how in ("touch", "threads", "threads_copy", "pinned"):
        base = {"n": 22, "edges": edges, "max_universe": 1024, "host_output": how, "chunk_bytes": 64}
        cases.append(dict(base, min_size=1))
        cases.append(dict(base, min_size=2, max_universe=4))  # sub-problems over 4 vertices on the host
        cases.append(dict(base, min_size=1, api=True))
    return cases


_SIM = {"test_cuda_kernel_in_simulator_equals_networkx": _sim_cases,
        "test_host_outputs_in_simulator_equal_networkx": _host_output_cases,
        "test_second_level_split_in_simulator_equals_networkx": _split2_cases,
        "test_warp_kernel_device_build_in_simulator_equals_networkx": _shfl_cases}


def background_runs(selected) -> dict:
    """The simulator runs of the selected tests, for tests/conftest.py to start early."""
    return {name: _sim_run(make()) for name, make in _SIM.items() if name in selected}


@pytest.mark.slow
def test_cuda_kernel_in_simulator_equals_networkx():
    cases = _sim_cases()
    results = _run_sim("test_cuda_kernel_in_simulator_equals_networkx", cases)
    assert len(results) == len(cases)
    assert results[-2]["count"] == len(nx_cliques(10, cases[-2]["edges"]))
    assert "max_cliques=3" in results[-1]["error"] and "count pass" in results[-1]["error"]
    cases, results = cases[:-2], results[:-2]
    for case, res in zip(cases, results):
        got = res["cliques"]  # the kernel and the public API list members ascending
        assert all(c == sorted(c) for c in got)
        assert sorted(got) == nx_cliques(case["n"], case["edges"], case["min_size"]), case
    # the device path really ran (and the host fallback where it was forced)
    info = [r["info"] for r in results]
    assert info[-1]["backend"] == "gpu"
    assert info[0]["n_warp_subproblems"] == 0 and info[0]["n_thread_subproblems"] == info[0]["n_subproblems"] > 0
    assert info[1]["n_warp_subproblems"] == info[1]["n_subproblems"] and info[1]["n_split"] == 0
    assert info[2]["n_split"] == info[2]["n_subproblems"] and info[2]["n_items"] > 0
    assert info[4]["n_host_fallback"] > 0 and info[4]["n_thread_subproblems"] > 0
    assert info[5]["words"] == 2 and info[5]["n_thread_subproblems"] == info[5]["n_subproblems"]
    assert info[6]["words"] == 2 and info[6]["n_split"] > 0
    assert info[2]["n_split2"] == 0  # default split2_min: these small branches stay whole


@pytest.mark.slow
def test_second_level_split_in_simulator_equals_networkx():
    """Every root branch split again at level 1 (``split2_min=1``), min_size 1 and 3, on two
    small graphs side by side and on K_36 minus an edge (2-word universes); the second level
    runs only while there are fewer than 4 root items per resident warp (``max_blocks``).
    Its own subprocess: the simulator pays a barrier per search step."""
    cases = _split2_cases()
    results = _run_sim("test_second_level_split_in_simulator_equals_networkx", cases)
    for case, res in zip(cases, results):
        assert all(c == sorted(c) for c in res["cliques"])
        assert sorted(res["cliques"]) == nx_cliques(case["n"], case["edges"], case["min_size"]), case
    info = [r["info"] for r in results]
    for i, j in ((0, 1), (2, 3)):  # the same cases split at the root only
        assert info[i]["n_split2"] > 0 and info[i]["n_items"] > info[j]["n_items"]
    assert info[4]["n_split2"] == 0 and info[4]["n_items"] == info[1]["n_items"] >= 8


@pytest.mark.slow
def test_warp_kernel_device_build_in_simulator_equals_networkx():
    """The warp kernel as a device runs it (``warp_ops="shfl"``: shuffles and ballots,
    which the simulator lacks and the test's shim emulates on the block barrier), split
    at two levels, on two small graphs side by side; the default and the lean build."""
    case, lean3 = _shfl_cases()
    edges = case["edges"]
    results = _run_sim("test_warp_kernel_device_build_in_simulator_equals_networkx", [case, lean3])
    for c, res in zip((case, lean3), results):
        assert all(q == sorted(q) for q in res["cliques"])
        assert sorted(res["cliques"]) == nx_cliques(16, edges, c["min_size"])
    assert results[0]["info"]["n_split2"] > 0


@pytest.mark.slow
def test_host_outputs_in_simulator_equal_networkx():
    """``host_output="threads"`` / ``"threads_copy"`` / ``"pinned"`` (opt-in ways to get the
    output ready on the host) give the default's cliques, in the same order, and
    networkx's set; the threaded ones really ran in chunks."""
    cases = _host_output_cases()
    results = _run_sim("test_host_outputs_in_simulator_equal_networkx", cases)
    assert len(results) == len(cases) == 12
    for case, res in zip(cases, results):
        got = res["cliques"]
        assert all(c == sorted(c) for c in got)
        assert sorted(got) == nx_cliques(case["n"], case["edges"], case["min_size"]), case
    for i in range(3, 12):  # the same list, in the same order, as the default build's
        assert results[i]["cliques"] == results[i % 3]["cliques"], cases[i]
    assert results[1]["info"]["n_host_fallback"] > 0
    assert [results[i]["info"]["host_output"] for i in (0, 3, 6)] == ["pageable"] * 3
    assert results[9]["info"]["host_output"].startswith("pinned")
    assert results[2]["info"]["backend"] == results[11]["info"]["backend"] == "gpu"


def test_public_api_hands_back_the_kernels_arrays(monkeypatch):
    """``maximal_cliques(backend="gpu")`` adds no host-side pass over the output: the
    result holds the very arrays the kernel returned (4.4 M cliques on G(300, 0.5) would
    cost a copy), and the kernel gets ``trustlab.cliques._GPU_HOST_OUTPUT``."""
    import trustlab.cliques as TC

    seen = {}
    ip = np.array([0, 2, 3], np.int64)
    ix = np.array([0, 1, 2], np.int32)

    def kernel(indptr, indices, n, min_size=1, **kw):
        seen.update(kw)
        return ip, ix

    monkeypatch.setattr(cc, "enumerate_maximal_cliques_cuda", kernel)
    monkeypatch.setattr(TC, "resolve_backend", lambda *a, **k: "gpu")
    monkeypatch.setattr(TC, "_GPU_HOST_OUTPUT", "pinned")
    res = TC.maximal_cliques([[0, 1]], backend="gpu")
    assert res.indptr is ip and res.indices is ix and res.backend == "gpu"
    assert seen["host_output"] == "pinned"


def test_host_output_is_validated():
    ip, ix = to_csr(3, [[0, 1]])
    with pytest.raises(ValueError, match="host_output must be one of 'touch', 'threads'.*got 'mapped'"):
        cc.enumerate_maximal_cliques_cuda(ip, ix, 3, host_output="mapped")


def test_threaded_host_output_helpers_cover_every_element():
    """The chunks the threads touch and copy tile each array exactly (no gap, no overlap)."""
    for size, itemsize, chunk in ((0, 4, 64), (1, 8, 64), (17, 4, 64), (100, 8, 64), (10**6, 4, 8 << 20)):
        old = cc._CHUNK_BYTES
        cc._CHUNK_BYTES = chunk
        try:
            b = cc._chunk_bounds(size, itemsize)
        finally:
            cc._CHUNK_BYTES = old
        assert [lo for lo, _ in b] == [0, *(hi for _, hi in b[:-1])][:len(b)] and (b[-1][1] if b else 0) == size
        assert all(0 < hi - lo <= max(1, chunk // itemsize) for lo, hi in b)
    seen = []
    cc._parallel(seen.append, list(range(40)))
    assert sorted(seen) == list(range(40))
    a = np.ones(5000, np.int32)
    cc._touch(a)
    assert (a[::1024] == 0).all() and a.sum() == 5000 - 5


# ----------------------------------------------------------------- real GPU (skipped)
@pytest.mark.gpu
@pytest.mark.skipif(not _real_gpu(), reason="needs a real CUDA device")
@pytest.mark.parametrize("n,p,seed", [(300, 0.05, 0), (200, 0.3, 1), (120, 0.6, 2)])
def test_real_gpu_equals_networkx(n, p, seed):
    edges = gnp_edges(n, p, seed)
    ip, ix = to_csr(n, edges)
    cp, ci = cc.enumerate_maximal_cliques_cuda(ip, ix, n)
    assert sorted(csr_cliques(cp, ci)) == nx_cliques(n, edges)
    cp2, ci2 = cc.enumerate_maximal_cliques_cuda(ip, ix, n, max_universe=16, min_size=3)
    assert sorted(csr_cliques(cp2, ci2)) == nx_cliques(n, edges, 3)


@pytest.mark.gpu
@pytest.mark.skipif(not _real_gpu(), reason="needs a real CUDA device")
def test_real_gpu_host_outputs_agree():
    n, edges = 150, gnp_edges(150, 0.5, 4)
    ip, ix = to_csr(n, edges)
    want = cc.enumerate_maximal_cliques_cuda(ip, ix, n)
    assert sorted(csr_cliques(*want)) == nx_cliques(n, edges)
    for how in ("threads", "threads_copy", "pinned"):
        cp, ci = cc.enumerate_maximal_cliques_cuda(ip, ix, n, host_output=how)
        assert np.array_equal(cp, want[0]) and np.array_equal(ci, want[1]), how


@pytest.mark.skipif(_real_gpu(), reason="a CUDA device is present")
def test_simulator_switched_on_too_late_gives_clear_error():
    """numba.cuda imported before NUMBA_ENABLE_CUDASIM=1: a GPUUnavailableError, no crash."""
    code = (
        "import os\nfrom numba import cuda\nos.environ['NUMBA_ENABLE_CUDASIM'] = '1'\n"
        "import numpy as np\nfrom trustlab._backend import GPUUnavailableError\n"
        "from trustlab.kernels.cliques_cuda import enumerate_maximal_cliques_cuda as f\n"
        "try:\n    f(np.array([0, 1, 2]), np.array([1, 0], np.int32), 2)\n"
        "except GPUUnavailableError as e:\n    print('OK', e)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "TRUSTLAB_BACKEND")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.stdout.startswith("OK") and "before numba.cuda is first imported" in proc.stdout, (
        proc.stdout + proc.stderr[-2000:])
