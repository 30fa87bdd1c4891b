"""Cut separation and certificates of the exact CPP solver, checked by brute force."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.reference import clique_partition_labels
from trustlab.solvers import cpp, partition


def feasible_x(n, A, iu, ju):
    """Incidence vectors of every clique partition of the graph ``A``."""
    return np.array([(lab[iu] == lab[ju]).astype(np.float64) for lab in clique_partition_labels(n, A)])


def instance(rng, n, density):
    W = np.round(rng.normal(0, 1, (n, n)) * 5)
    W = np.triu(W, 1)
    W = W + W.T
    A = np.triu(rng.random((n, n)) < density, 1)
    A = A | A.T
    iu, ju = np.nonzero(np.triu(A, 1))
    P = -np.ones((n, n), np.int64)
    P[iu, ju] = P[ju, iu] = np.arange(iu.size)
    return W, A, iu, ju, P


@pytest.mark.parametrize("seed", range(6))
def test_two_partition_cuts_are_valid_and_violated(seed):
    rng = np.random.default_rng(seed)
    n = 7
    W, A, iu, ju, P = instance(rng, n, density=0.7 + 0.05 * seed)
    F = feasible_x(n, A, iu, ju)
    n_cuts = 0
    for trial in range(20):
        # a fractional point: random values, biased high so that cuts are violated
        xv = rng.random(iu.size) ** rng.uniform(0.2, 2.0)
        X = np.zeros((n, n))
        X[iu, ju] = X[ju, iu] = xv
        found = cpp.separate_two_partition(X, A, 100)
        viols = [v for *_, v in found]
        assert viols == sorted(viols, reverse=True)
        for v, T, viol in found:
            assert len(T) >= 3 and v not in T and len(set(T.tolist())) == len(T)
            assert all(A[v, t] for t in T)
            # the inequality, evaluated independently of the separation code
            lhs = sum(X[v, t] for t in T) - sum(X[s, t] for s, t in itertools.combinations(T, 2))
            assert lhs > 1.0 and abs(lhs - 1.0 - viol) < 1e-9
            idx, coef = cpp.two_partition_row(v, T, P)
            assert abs(float(coef @ xv[idx]) - lhs) < 1e-9
            # valid: every clique partition satisfies it
            assert (F[:, idx] @ coef).max() <= 1.0 + 1e-9
            n_cuts += 1
    assert n_cuts > 0


def test_two_partition_separation_finds_the_classic_fractional_point():
    # x_vt = 1/2 for t = 1..4, x_tt' = 0: every triangle holds (1/2 + 1/2 - 0 = 1),
    # but the 2-partition cut with T = {1, 2, 3, 4} reads 2 > 1
    n = 5
    A = ~np.eye(n, dtype=bool)
    X = np.zeros((n, n))
    X[0, 1:] = X[1:, 0] = 0.5
    assert cpp.separate_triangles(X, A, 100).shape[0] == 0
    found = cpp.separate_two_partition(X, A, 10)
    assert found and found[0][0] == 0 and sorted(found[0][1].tolist()) == [1, 2, 3, 4]
    assert abs(found[0][2] - 1.0) < 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_certificate_and_reduced_cost_fixing_are_valid(seed):
    rng = np.random.default_rng(100 + seed)
    n = 7
    W, A, iu, ju, P = instance(rng, n, density=0.85)
    w = W[iu, ju]
    F = feasible_x(n, A, iu, ju)
    vals = F @ w
    opt = vals.max()
    tri = []
    for i in range(n):
        for j, k in itertools.combinations(range(n), 2):
            if i not in (j, k) and A[i, j] and A[i, k]:
                tri.append((P[i, j], P[i, k], P[j, k] if A[j, k] else -1))
    Aub = cpp._rows(tri, [], iu.size)
    for trial in range(5):
        y = rng.random(Aub.shape[0]) * rng.uniform(0, 3)
        lo, hi = np.zeros(iu.size), np.ones(iu.size)
        bound, c = cpp._certificate(w, Aub, y, lo, hi)
        assert bound >= opt - 1e-9  # weak duality for any y >= 0
    # with the LP optimum, fixing never cuts off a solution better than the incumbent
    x, val, c = cpp._solve_lp(w, Aub, iu.size, None, "highs-ipm")
    assert val >= opt - 1e-6
    for incumbent in sorted(set(vals.tolist()))[-4:]:
        lo, hi = np.zeros(iu.size), np.ones(iu.size)
        cpp._fix_by_reduced_cost(val, c, lo, hi, incumbent, True)
        better = F[vals > incumbent]
        assert np.all((better >= lo - 1e-12) & (better <= hi + 1e-12))
        # the certificate of the restricted problem bounds every solution inside it
        _, val2, _ = cpp._solve_lp(w, Aub, iu.size, None, "highs-ipm", lo, hi)
        inside = np.all((F >= lo) & (F <= hi), axis=1)
        if inside.any():
            assert val2 >= vals[inside].max() - 1e-6


@pytest.mark.parametrize("seed", range(8))
def test_cpp_with_new_cuts_equals_brute_force(seed):
    rng = np.random.default_rng(200 + seed)
    n = 8
    W, A, iu, ju, P = instance(rng, n, density=0.9)
    F = feasible_x(n, A, iu, ju)
    opt = (F @ W[iu, ju]).max()
    if A[np.triu_indices(n, 1)].all():  # a dense matrix means every pair is an edge
        r = partition(W, method="cpp", random_state=seed)
        assert r.status == "optimal" and abs(r.objective - opt) < 1e-9
    lab0 = np.arange(n)
    out = cpp.solve_cpp(W, A, warm_labels=lab0, warm_obj=0.0, integral=True)
    assert out["status"] == "optimal"
    assert abs(out["objective"] - opt) < 1e-9 and out["bound"] >= opt - 1e-9


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mip_solver", ["scip", "cpsat"])
def test_mip_phase_with_pool_and_fixings_equals_brute_force(seed, mip_solver):
    # tail_rounds=0 ends the LP phase after one round and colgen=False skips branch and
    # price, so the MIP phase (with the cut pool, the 2-partition cuts and the
    # reduced-cost fixings) does the work
    rng = np.random.default_rng(300 + seed)
    n = 8
    W, A, iu, ju, P = instance(rng, n, density=0.8)
    F = feasible_x(n, A, iu, ju)
    opt = (F @ W[iu, ju]).max()
    for kw in (dict(), dict(mip_cuts="active"), dict(two_partition=False, reduced_cost_fixing=False)):
        lab0 = np.arange(n)
        out = cpp.solve_cpp(W, A, warm_labels=lab0, warm_obj=0.0, integral=True, mip_solver=mip_solver,
                            options=cpp.CutOptions(tail_rounds=0, colgen=False, **kw))
        assert out["phase"] in ("mip", "lp")
        assert out["status"] == "optimal", kw
        assert abs(out["objective"] - opt) < 1e-9 and out["bound"] >= opt - 1e-9
        lab = out["labels"]
        same = lab[:, None] == lab[None, :]
        assert not np.any(same & ~A & ~np.eye(n, dtype=bool))
        assert abs(W[iu, ju] @ same[iu, ju] - opt) < 1e-9


# ---------------------------------------------------------------- statistics and families
FAMILY_CASES = [(fam, n, seed) for fam in ("cluster_editing", "random", "mcf", "equicut")
                for n, seed in ((8, 0), (9, 1), (10, 2))]


@pytest.mark.parametrize("fam,n,seed", FAMILY_CASES)
def test_reported_optimum_equals_brute_force_on_each_family(fam, n, seed):
    from tests.reference import brute_force_cpp
    from trustlab.solvers.synthetic import make_instance

    W = make_instance(fam, n, random_state=seed)
    A = ~np.eye(n, dtype=bool)
    opt, _ = brute_force_cpp(W, A)
    r = partition(W, method="cpp", random_state=0)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(opt, abs=1e-9)
    assert r.bound == pytest.approx(opt, abs=1e-9)
    for c in r.components:
        assert c["root_bound"] >= c["bound"] - 1e-9  # the root bound is proven: never below the optimum


@pytest.mark.parametrize("fam,seed", [("cluster_editing", 3), ("random", 4), ("equicut", 5), ("mcf", 6)])
@pytest.mark.parametrize("colgen", [True, False])
def test_statistics_are_proven_and_consistent(fam, seed, colgen):
    # a weak warm start (all singletons) and tail_rounds=0 so that the later phases run
    from tests.reference import brute_force_cpp
    from trustlab.solvers.synthetic import make_instance

    n = 9
    W = make_instance(fam, n, random_state=seed)
    A = ~np.eye(n, dtype=bool)
    opt, _ = brute_force_cpp(W, A)
    out = cpp.solve_cpp(W, A, warm_labels=np.arange(n), warm_obj=0.0, integral=True,
                        options=cpp.CutOptions(tail_rounds=0, small_tail=0, colgen=colgen))
    assert out["status"] == "optimal" and out["objective"] == pytest.approx(opt)
    assert out["root_bound"] >= opt - 1e-9
    fams = out["cuts_by_family"]
    assert set(fams) == {"triangle", "two_partition", "odd_wheel", "two_partition_general", "lazy_triangle"}
    assert all(v >= 0 for v in fams.values())
    if out["phase"] != "trivial":
        assert sum(fams.values()) == out["cuts"]
    if out["phase"] == "branch_and_price":
        assert out["nodes"] == out["bp_nodes"] >= 1
    assert out["phase"] in ("trivial", "lp", "branch_and_price", "mip")


def test_partition_cli_json_reports_exact_statistics(tmp_path, capsys):
    import json

    from trustlab.cli import main
    from trustlab.solvers.synthetic import make_instance

    W = make_instance("cluster_editing", 12, random_state=1)
    n = W.shape[0]
    f = tmp_path / "inst.txt"
    f.write_text(f"{n}\n" + "\n".join(" ".join(str(int(W[i, j])) for j in range(i + 1, n))
                                      for i in range(n - 1)) + "\n")
    assert main(["partition", str(f), "--method", "cpp", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["status"] == "optimal"
    assert d["root_bound"] >= d["bound"] - 1e-9
    assert set(d["cuts_by_family"]) <= {"triangle", "two_partition", "odd_wheel", "two_partition_general",
                                        "lazy_triangle"}
    assert d["nodes"] >= 0 and d["phase"] in ("trivial", "lp", "branch_and_price", "mip")
    for c in d["components"]:
        assert {"root_bound", "cuts_by_family", "nodes", "phase"} <= set(c)
