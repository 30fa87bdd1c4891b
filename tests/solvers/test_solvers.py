"""Clique partitioning solvers checked against brute force over all set partitions."""
from __future__ import annotations

import itertools
import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import InlineClient, random_cpp_instance, set_partitions
from trustlab.cli import main
from trustlab.solvers import explain, partition
from trustlab.solvers.io import read_cplib, read_cplib_optimum

# ----------------------------------------------------------------- brute force


def brute_force(W, allowed):
    """Optimum over all set partitions whose blocks are cliques of `allowed`."""
    n = W.shape[0]
    best = 0.0
    for p in set_partitions(list(range(n))):
        val = 0.0
        ok = True
        for b in p:
            for i, j in itertools.combinations(b, 2):
                if not allowed[i, j]:
                    ok = False
                    break
                val += W[i, j]
            if not ok:
                break
        if ok:
            best = max(best, val)
    return best


def random_instance(rng, n, density=1.0, integer=False):
    return random_cpp_instance(rng, n, density, integer=integer, scale=5.0 if integer else 1.0)


def as_graph(W, A):
    G = nx.Graph()
    G.add_nodes_from(range(W.shape[0]))
    for i, j in zip(*np.nonzero(np.triu(A, 1))):
        G.add_edge(int(i), int(j), weight=float(W[i, j]))
    return G


def check_result(r, W, A, expected):
    lab = np.asarray(r.labels)
    # feasibility: every cluster a clique of the allowed graph
    for i, j in itertools.combinations(range(W.shape[0]), 2):
        if lab[i] == lab[j]:
            assert A[i, j], (i, j)
    val = sum(W[i, j] for i, j in itertools.combinations(range(W.shape[0]), 2) if lab[i] == lab[j])
    assert math.isclose(r.objective, val, abs_tol=1e-9)
    assert r.bound >= r.objective - 1e-9
    assert r.objective <= expected + 1e-9
    return val


METHODS = ["cpp", "qsp", "spp", "auto", "heuristic"]


@pytest.mark.parametrize("method", METHODS)
def test_methods_equal_brute_force_dense(method):
    rng = np.random.default_rng(11)
    for trial in range(6):
        n = int(rng.integers(2, 8))
        W, _ = random_instance(rng, n)
        A = ~np.eye(n, dtype=bool)
        opt = brute_force(W, A)
        r = partition(W, method=method, M=n, random_state=trial)
        check_result(r, W, A, opt)
        assert math.isclose(r.objective, opt, abs_tol=1e-7), (method, trial, r.objective, opt)
        if method != "heuristic":
            assert r.status == "optimal" and math.isclose(r.bound, opt, abs_tol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_methods_equal_brute_force_sparse_graph(method):
    rng = np.random.default_rng(5)
    for trial in range(6):
        n = int(rng.integers(3, 9))
        W, A = random_instance(rng, n, density=0.7)
        opt = brute_force(W, A)
        r = partition(as_graph(W, A), method=method, M=n, random_state=trial)
        check_result(r, W, A, opt)
        assert math.isclose(r.objective, opt, abs_tol=1e-7), (method, trial, r.objective, opt)


@settings(max_examples=25)
@given(st.integers(2, 9), st.integers(0, 2**32 - 1), st.floats(0.3, 1.0))
def test_cpp_brute_force_property(n, seed, density):
    rng = np.random.default_rng(seed)
    W, A = random_instance(rng, n, density=density, integer=bool(seed % 2))
    opt = brute_force(W, A)
    r = partition(as_graph(W, A), method="cpp", random_state=0)
    check_result(r, W, A, opt)
    assert r.status == "optimal"
    assert math.isclose(r.objective, opt, abs_tol=1e-7)
    assert math.isclose(r.bound, opt, abs_tol=1e-6)


def test_qsp_large_M_equals_cpp_and_small_M_is_a_restriction():
    rng = np.random.default_rng(3)
    for trial in range(4):
        n = 9
        W, A = random_instance(rng, n, density=0.8)
        G = as_graph(W, A)
        c = partition(G, method="cpp", random_state=0)
        q = partition(G, method="qsp", M=n, random_state=0)
        assert math.isclose(q.objective, c.objective, abs_tol=1e-7)
        q1 = partition(G, method="qsp", M=1, random_state=0, decompose=False)
        assert q1.objective <= c.objective + 1e-9


def test_decomposition_never_changes_the_optimum():
    rng = np.random.default_rng(8)
    for trial in range(8):
        n = int(rng.integers(4, 10))
        W, A = random_instance(rng, n, density=0.8)
        W -= 0.8  # more negative edges -> several positive components
        W[np.diag_indices(n)] = 0
        G = as_graph(W, A)
        a = partition(G, method="cpp", decompose=True, random_state=0)
        b = partition(G, method="cpp", decompose=False, random_state=0)
        assert math.isclose(a.objective, b.objective, abs_tol=1e-7)
        assert math.isclose(a.objective, brute_force(W, A), abs_tol=1e-7)


def test_input_forms_agree_and_labels_follow_node_order():
    rng = np.random.default_rng(1)
    W, A = random_instance(rng, 8, density=0.6)
    names = [f"n{i}" for i in range(8)]
    G = nx.relabel_nodes(as_graph(W, A), dict(enumerate(names)))
    edges = [(names[i], names[j], W[i, j]) for i, j in zip(*np.nonzero(np.triu(A, 1)))]
    import scipy.sparse as sp

    S = sp.coo_matrix((W[np.triu(A, 1)], np.nonzero(np.triu(A, 1))), shape=(8, 8))
    rs = [partition(x, method="cpp") for x in (G, edges, S, S.tocsr() + S.T.tocsr())]
    assert len({round(r.objective, 9) for r in rs}) == 1
    r = rs[0]
    assert r.nodes == names
    for k, cl in enumerate(r.clusters):
        assert all(r.labels[names.index(v)] == k for v in cl)


def test_table8_and_explanations():
    G = nx.Graph()
    G.add_weighted_edges_from([(7, 12, 0.456), (7, 20, 0.999), (12, 20, 0.085),
                               (7, 25, -0.076), (12, 25, -0.156), (20, 25, -0.253)])
    for method in ("cpp", "qsp", "spp", "auto"):
        r = partition(G, method=method, M=3)
        assert sorted(map(sorted, r.clusters)) == [[7, 12, 20], [25]]
        assert math.isclose(r.objective, 1.540, abs_tol=1e-9)
        assert r.status == "optimal" and r.gap == 0
    e = explain(r, 25)
    assert e.contribution == 0
    assert e.best_alternative["cluster"] == [7, 12, 20]
    assert math.isclose(e.best_alternative["delta"], -0.485, abs_tol=1e-9)
    e7 = explain(r, 7)
    assert math.isclose(e7.contribution, 0.456 + 0.999, abs_tol=1e-12)
    assert any(a["move"] == "leave to be alone" for a in e7.alternatives)
    ec = explain(r, cluster=[20, 12, 7])
    assert math.isclose(ec.contribution, 1.540, abs_tol=1e-12)
    add25 = [a for a in ec.alternatives if a.get("target") == 25]
    assert add25 and math.isclose(add25[0]["delta"], -0.485, abs_tol=1e-9)
    # the 4-clique is worth 1.055
    assert math.isclose(1.540 + add25[0]["delta"], 1.055, abs_tol=1e-9)
    assert "certificate" in str(ec) and "node 25" in str(e)
    with pytest.raises(ValueError, match="not a cluster"):
        explain(r, cluster=[7, 12])
    with pytest.raises(ValueError, match="not in the partition"):
        explain(r, 99)
    with pytest.raises(ValueError, match="exactly one"):
        explain(r)
    # at T = -0.2 the edge (20, 25) is blocked: explanation must not offer joining
    G.remove_edge(20, 25)
    e = explain(partition(G), 25)
    assert all(a["move"] != "join" for a in e.alternatives)


def test_optimality_on_sparse_graph_with_negative_M_errors():
    W = np.array([[0, 1.0], [1.0, 0]])
    with pytest.raises(ValueError, match="'M' parameter of partition"):
        partition(W, method="qsp", M=-1)
    with pytest.raises(ValueError, match="Unknown method 'foo'"):
        partition(W, method="foo")
    with pytest.raises(ValueError, match="time_limit"):
        partition(W, time_limit=-1)


@pytest.mark.parametrize("bad, msg", [
    (np.array([[0, np.nan], [np.nan, 0]]), "NaN or infinite"),
    (np.array([[0, np.inf], [np.inf, 0]]), "NaN or infinite"),
    (np.array([[0, 1.0], [2.0, 0]]), "symmetric"),
    (np.zeros((2, 4)), "square"),
    ([(0, 1, float("nan"))], "NaN or infinite"),
    ([(0, 1, 1.0), (1, 0, 2.0)], "not symmetric"),
    ([(0, 1)], r"\(i, j, weight\)"),
])
def test_bad_input_errors(bad, msg):
    with pytest.raises(ValueError, match=msg):
        partition(bad)


def test_graph_without_weight_and_bad_types():
    G = nx.Graph([(0, 1)])
    with pytest.raises(ValueError, match="no 'weight' attribute"):
        partition(G)
    with pytest.raises(ValueError, match="directed"):
        partition(nx.DiGraph([(0, 1, {"weight": 1})]))
    with pytest.raises(TypeError, match="expects a networkx graph"):
        partition(3.0)


def test_time_limit_returns_feasible_solution():
    rng = np.random.default_rng(0)
    W, _ = random_instance(rng, 30, integer=True)
    r = partition(W, method="cpp", time_limit=0.05, random_state=0)
    assert r.status in ("optimal", "time_limit")
    assert r.bound >= r.objective - 1e-9
    assert len(r.labels) == 30


def test_bundled_cplib_instances_reach_known_optimum():
    from importlib import resources

    base = resources.files("trustlab") / "data" / "cplib"
    for name in ("wildcats", "cars"):
        with resources.as_file(base / f"{name}.txt") as p:
            W = read_cplib(p)
        with resources.as_file(base / f"{name}_opt.txt") as p:
            opt, clusters = read_cplib_optimum(p)
        # the published optimal clusters have the published value
        lab = np.empty(W.shape[0], int)
        for k, c in enumerate(clusters):
            lab[c] = k
        same = lab[:, None] == lab[None, :]
        assert np.triu(W * same, 1).sum() == opt
        r = partition(W, random_state=0)
        assert r.status == "optimal" and r.objective == opt and r.bound == opt


def test_cplib_reader_wrong_count(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("4\n1 2 3\n4 5\n")
    with pytest.raises(ValueError, match=r"n\(n-1\)/2 = 6 upper-triangle entries \(or 10 with the diagonal, "
                                         r"or 16 for the full matrix\), found 5"):
        read_cplib(p)
    p.write_text("abc\n")
    with pytest.raises(ValueError, match="number of nodes"):
        read_cplib(p)


def test_cli_json_and_errors(tmp_path, capsys):
    p = tmp_path / "i.txt"
    p.write_text("4\n5 -1 -1\n-1 -1\n3\n")
    out = tmp_path / "labels.tsv"
    assert main(["partition", str(p), "--json", "--method", "cpp", "-o", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["objective"] == 8 and d["bound"] == 8 and d["status"] == "optimal" and d["n_clusters"] == 2
    assert "seconds" in d
    assert len(out.read_text().splitlines()) == 4
    e = tmp_path / "e.txt"
    e.write_text("# comment\na b 1.5\nb c -2\n")
    assert main(["partition", str(e), "--format", "edgelist", "--json", "--method", "heuristic"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["objective"] == 1.5 and sorted(map(sorted, d["clusters"])) == [["a", "b"], ["c"]]
    bad = tmp_path / "bad.txt"
    bad.write_text("4\n1 2\n")
    assert main(["partition", str(bad)]) == 2
    assert "upper-triangle entries" in capsys.readouterr().err
    assert main(["partition", str(tmp_path / "missing.txt")]) == 2
    assert main(["partition", str(p), "-M", "-2", "--method", "qsp"]) == 2
    assert "argument -M/--partitions-per-clique: must be an int in the range [1, inf)" in capsys.readouterr().err


def test_spp_guard():
    W = np.ones((12, 12))
    with pytest.raises(ValueError, match="max_cliques"):
        partition(W, method="spp", max_cliques=100, reduce=False)
    # the guard counts the cliques of what spp is given: the exact reduction merges this
    # all-positive instance into one node first, which leaves spp nothing to refuse
    r = partition(W, method="spp", max_cliques=100)
    assert r.status == "optimal" and r.n_clusters == 1 and r.objective == 66


def test_dask_client():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(4)
    blocks = [random_instance(rng, 6)[0] + 2 for _ in range(3)]
    import scipy.linalg

    W = scipy.linalg.block_diag(*blocks) - 0.5
    np.fill_diagonal(W, 0)
    local = partition(W, method="cpp")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cl, distributed.Client(cl) as client:
        r = partition(W, method="cpp", client=client)
    assert math.isclose(r.objective, local.objective, abs_tol=1e-9)
    assert r.status == "optimal"


def _three_blocks():
    import scipy.linalg

    rng = np.random.default_rng(11)
    W = scipy.linalg.block_diag(*[random_instance(rng, 5)[0] + 2 for _ in range(3)]) - 0.5
    np.fill_diagonal(W, 0)
    return W


def test_client_ships_every_multi_node_component_and_matches_local():
    W = _three_blocks()
    local = partition(W, method="cpp", random_state=1)
    fake = InlineClient()
    r = partition(W, method="cpp", random_state=1, client=fake)
    assert fake.submitted == len(r.components) >= 2
    assert np.array_equal(r.labels, local.labels) and r.objective == local.objective
    assert r.status == local.status == "optimal"


def test_scheduler_is_a_deprecated_alias_of_client():
    W = _three_blocks()
    fake = InlineClient()
    with pytest.warns(DeprecationWarning, match=r"scheduler= is deprecated.*use client="):
        r = partition(W, method="cpp", random_state=1, scheduler=fake)
    assert fake.submitted == len(r.components) >= 2
    assert r.objective == partition(W, method="cpp", random_state=1).objective


def test_client_and_scheduler_together_is_an_error():
    with pytest.raises(ValueError, match=r"got both client= and scheduler=.*pass only client="):
        partition(np.zeros((3, 3)), client=InlineClient(), scheduler=InlineClient())


def test_client_must_be_a_dask_client():
    with pytest.raises(TypeError, match=r"'client' parameter of partition must be a dask.distributed.Client.*Got 'tcp"):
        partition(np.zeros((3, 3)), client="tcp://localhost:8786")


def test_heuristic_kernel_is_a_local_optimum_and_feasible():
    from trustlab.kernels.cpp_heuristic import local_search, objective, pivot_labels
    from trustlab.solvers.heuristic import encode_forbidden

    rng = np.random.default_rng(2)
    for trial in range(5):
        n = 25
        W, A = random_instance(rng, n, density=0.7)
        Wh, forbid = encode_forbidden(W, A)
        lab0 = pivot_labels(Wh, rng.permutation(n).astype(np.int64), forbid)
        lab = local_search(Wh, lab0, rng.permutation(n).astype(np.int64), 1000)
        for i, j in itertools.combinations(range(n), 2):  # feasible
            if lab[i] == lab[j]:
                assert A[i, j]
        val = objective(Wh, lab)
        assert math.isclose(val, sum(W[i, j] for i, j in itertools.combinations(range(n), 2)
                                     if lab[i] == lab[j]), abs_tol=1e-9)
        # no single-vertex move (to another cluster or alone) improves
        for i in range(n):
            for c in list(set(lab.tolist())) + [lab.max() + 1]:
                alt = lab.copy()
                alt[i] = c
                assert objective(Wh, alt) <= val + 1e-9


def test_planted_er_graph_matches_paper_edge_density():
    from trustlab.solvers.synthetic import planted_er_graph

    dens = []
    for T in (-0.7, -0.5, -0.3, -0.2):
        G, gold = planted_er_graph(49, 2.5, T, random_state=0)
        dens.append(G.number_of_edges() / (49 * 48 / 2))
        w = np.array([d["weight"] for *_, d in G.edges(data=True)])
        assert w.min() >= T
    assert dens == sorted(dens, reverse=True)
    # paper, Table 6: 863/1176 = 0.73 at T=-0.7 and 598/1176 = 0.51 at T=-0.5
    assert abs(dens[0] - 0.73) < 0.06 and abs(dens[1] - 0.51) < 0.06
    with pytest.raises(ValueError, match="mean_cluster_size"):
        planted_er_graph(10, 0.5)


@pytest.mark.parametrize("which", ["scip", "cpsat"])
def test_mip_phase_backends_with_all_triangles_equal_brute_force(which):
    from trustlab.solvers import cpp

    rng = np.random.default_rng(6)
    for trial in range(3):
        n = 7
        W, A = random_instance(rng, n, density=0.8)
        iu, ju = np.nonzero(np.triu(A, 1))
        P = -np.ones((n, n), np.int64)
        P[iu, ju] = P[ju, iu] = np.arange(iu.size)
        cuts = []
        for i in range(n):
            for j, k in itertools.combinations(range(n), 2):
                if i not in (j, k) and A[i, j] and A[i, k]:
                    cuts.append((P[i, j], P[i, k], P[j, k]))
        same = np.zeros(iu.size, bool)
        fn = cpp._mip_scip if which == "scip" else (lambda *a: cpp._mip_cpsat(*a, None))
        sol, bound, ok, proven, _nodes = fn(W[iu, ju], cpp._rows(cuts, [], iu.size), same, 10.0)
        assert proven
        assert math.isclose(float(W[iu, ju] @ sol), brute_force(W, A), abs_tol=1e-6)


@pytest.mark.parametrize("mod", ["trustlab.solvers", "trustlab.solvers.api", "trustlab.solvers.explain",
                                 "trustlab.solvers.io", "trustlab.solvers.synthetic"])
def test_docstring_examples_run(mod):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(mod))
    assert res.failed == 0 and res.attempted > 0


def _write_layout(path, W, layout):
    """W in one of read_cplib's layouts, wrapped 7 entries a line (as published files wrap)."""
    n = W.shape[0]
    if layout == "full":
        vals = W.ravel()
    else:
        vals = W[np.triu_indices(n, 0 if layout == "diagonal" else 1)]
    lines = [" ".join(f"{v:g}" for v in vals[i:i + 7]) for i in range(0, vals.size, 7)]
    path.write_text(f"{n}\n" + "\n".join(lines) + "\n")


@pytest.mark.parametrize("layout", ["strict", "diagonal", "full"])
@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_cplib_reader_layouts(tmp_path, layout, n):
    U = np.triu(np.random.default_rng(n).integers(-9, 10, (n, n)).astype(float), 1)
    W = U + U.T
    p = tmp_path / "x.txt"
    _write_layout(p, W, layout)
    np.testing.assert_array_equal(read_cplib(p), W)


def test_cplib_reader_layout_errors(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("3\n5 1 2\n0 3\n0\n")  # diagonal layout, nonzero diagonal
    with pytest.raises(ValueError, match=r"diagonal.*w\[1,1\] is 5"):
        read_cplib(p)
    p.write_text("2\n0 1\n2 0\n")  # full layout, asymmetric
    with pytest.raises(ValueError, match=r"not symmetric: w\[1,2\] = 1 but w\[2,1\] = 2"):
        read_cplib(p)
    p.write_text("4\n" + " ".join(["1"] * 11) + "\n")
    with pytest.raises(ValueError, match=r"or 10 with the diagonal, or 16 for the full matrix\), found 11"):
        read_cplib(p)
