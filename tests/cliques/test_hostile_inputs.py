"""Hostile graphs for maximal_cliques: a declared size that cannot fit is refused
before anything is allocated (bench/results/hostile_inputs.md)."""
import numpy as np
import pytest
import scipy.sparse as sp

import trustlab
import trustlab._validation as validation


@pytest.fixture()
def small_machine(monkeypatch):
    monkeypatch.setattr(validation, "physical_memory", lambda: 2**30)  # 1 GiB


def test_one_edge_to_a_huge_node_id_is_refused(small_machine):
    # node ids index the nodes: "0 2000000000" means 2e9 nodes (~90 GiB of arrays)
    with pytest.raises(ValueError, match=r"2,000,000,001 nodes.*relabel the nodes"):
        trustlab.maximal_cliques(np.array([[0, 2_000_000_000]]))
    with pytest.raises(ValueError, match="2,000,000,001 nodes"):
        trustlab.count_maximal_cliques(np.array([[0, 2_000_000_000]]))


def test_huge_sparse_adjacency_is_refused(small_machine):
    A = sp.coo_matrix(([1.0], ([0], [1])), shape=(10**9, 10**9))
    with pytest.raises(ValueError, match="1,000,000,000 nodes"):
        trustlab.maximal_cliques(A)


def test_sizes_that_fit_still_run(small_machine):
    assert len(trustlab.maximal_cliques(np.array([[0, 1000]]), min_size=2)) == 1


def test_count_maximal_cliques_is_capped():
    # the count can grow as 3^(n/3) (a Moon-Moser graph of 75 nodes has 8.5e11 maximal
    # cliques: hours of counting); max_count (default 10**10) bounds the work
    import networkx as nx

    from trustlab.cliques import DEFAULT_MAX_COUNT, CliqueCountLimitError, count_maximal_cliques

    G = nx.complement(nx.disjoint_union_all([nx.complete_graph(3)] * 10))  # 3^10 maximal cliques
    assert count_maximal_cliques(G) == 3**10
    assert count_maximal_cliques(G, max_count=3**10) == 3**10
    assert count_maximal_cliques(G, max_count=None) == 3**10
    for cap in (0, 1, 1000, 3**10 - 1):
        with pytest.raises(CliqueCountLimitError, match=f"more than max_count={cap:,}"):
            count_maximal_cliques(G, max_count=cap)
    with pytest.raises(CliqueCountLimitError):
        count_maximal_cliques(nx.empty_graph(5), max_count=4)  # singletons count too
    # degrees above 64 take the multi-word search: 90 nodes, 3^30 maximal cliques, stopped early
    wide = nx.complement(nx.disjoint_union_all([nx.complete_graph(3)] * 30))
    with pytest.raises(CliqueCountLimitError, match="more than max_count=100,000"):
        count_maximal_cliques(wide, max_count=100_000)
    assert DEFAULT_MAX_COUNT == 10**10


def test_cli_count_cap(tmp_path, capsys):
    from trustlab.cli import main

    p = tmp_path / "mm.txt"
    import networkx as nx

    G = nx.complement(nx.disjoint_union_all([nx.complete_graph(3)] * 6))
    p.write_text("".join(f"{u} {v}\n" for u, v in G.edges()))
    assert main(["cliques", str(p), "--count", "--max-count", "100"]) == 2
    assert "more than max_count=100" in capsys.readouterr().err
    assert main(["cliques", str(p), "--count", "--max-count", "0", "--json"]) == 0
    assert '"n_maximal_cliques": 729' in capsys.readouterr().out
