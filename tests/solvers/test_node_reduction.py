"""Bound fixings (induced-cost rules against an incumbent) and the data reduction that
branch and price applies at every node: checked against brute force on small instances
and against CP-Lib optima shipped with the package."""
from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from tests.reference import brute_force_cpp, clique_partition_labels
from trustlab.solvers import colgen
from trustlab.solvers.io import read_cplib, read_cplib_optimum
from trustlab.solvers.reduction import bound_fixings, conflict_packing


def _instance(rng: np.random.Generator, it: int, max_n: int = 8):
    """Small instances of four shapes (unit, integer, planted, Gaussian), with forbidden pairs."""
    n = int(rng.integers(3, max_n + 1))
    kind = it % 4
    if kind == 0:
        W = rng.choice([-1.0, 1.0], (n, n))
    elif kind == 1:
        W = rng.integers(-5, 6, (n, n)).astype(float)
    elif kind == 2:
        g = rng.integers(0, 3, n)
        W = np.where(g[:, None] == g[None, :], 3.0, -2.0) + rng.integers(-2, 3, (n, n))
    else:
        W = rng.normal(size=(n, n)) * 3
    W = np.triu(W, 1)
    W = W + W.T
    A = np.triu(rng.random((n, n)) < 0.85, 1)
    A = A | A.T
    return W, A, kind != 3


def _all_values(W, A):
    labs = list(clique_partition_labels(W.shape[0], A))
    vals = np.array([np.where(lab[:, None] == lab[None, :], W, 0.0).sum() / 2 for lab in labs])
    return labs, vals


@pytest.mark.parametrize("seed", range(2))
def test_conflict_packing_bounds_the_loss_of_every_partition(seed):
    rng = np.random.default_rng(900 + seed)
    for it in range(24):
        W, A, _ = _instance(rng, it, max_n=7)
        Wa = np.where(A, W, 0.0)
        P = np.triu(np.maximum(Wa, 0.0), 1).sum()
        lb, L = conflict_packing(Wa, A)
        _, vals = _all_values(Wa, A)
        assert P - lb >= vals.max() - 1e-9
        assert np.allclose(L, L.T) and lb >= 0


@pytest.mark.parametrize("seed", range(2))
def test_bound_fixings_hold_for_every_partition_reaching_the_target(seed):
    rng = np.random.default_rng(700 + seed)
    fired = 0
    for it in range(24):
        W, A, integral = _instance(rng, it, max_n=7)
        Wa = np.where(A, W, 0.0)
        labs, vals = _all_values(Wa, A)
        tol = 0.0 if integral else 1e-9 * (1.0 + np.abs(Wa).sum())
        for target in (vals.max(), vals.max() - 1.0, float(np.median(vals))):
            merge, forbid = bound_fixings(Wa, A, 0.0, target, tol=tol)
            fired += int(merge.sum() + forbid.sum())
            for lab, v in zip(labs, vals):
                if v >= target:
                    same = lab[:, None] == lab[None, :]
                    assert not np.any(merge & ~same) and not np.any(forbid & same)
    assert fired > 0  # the check is not vacuous


def test_bound_fixings_offset_counts_in_the_value():
    g = np.repeat([0, 1], 3)
    W = np.where(g[:, None] == g[None, :], 3.0, -1.0)
    np.fill_diagonal(W, 0.0)
    A = ~np.eye(6, dtype=bool)
    merge, _ = bound_fixings(W, A, 0.0, 18.0)
    assert merge.sum() == 6
    # a constant of +7 already in hand: splitting a triangle ({0, 1}, {2}, {3, 4, 5}: 12 + 7)
    # now reaches 18 too
    merge2, _ = bound_fixings(W, A, 7.0, 18.0)
    assert merge2.sum() < merge.sum()


@pytest.mark.parametrize("seed", range(10))
def test_branch_and_price_with_node_reduction_equals_brute_force(seed):
    rng = np.random.default_rng(300 + seed)
    W, A, integral = _instance(rng, seed)
    n = W.shape[0]
    opt, opt_lab = brute_force_cpp(W, A)
    for warm_lab, warm_val in ((np.arange(n), 0.0), (opt_lab, opt)):
        r = colgen.branch_and_price(W, A, warm_labels=warm_lab, warm_obj=warm_val, integral=integral)
        assert r["status"] == "optimal"
        assert abs(r["objective"] - opt) < 1e-7 and r["bound"] >= opt - 1e-7
        lab = r["labels"]
        same = lab[:, None] == lab[None, :]
        assert not np.any(same & ~A & ~np.eye(n, dtype=bool))
        assert abs(np.where(same, W, 0.0).sum() / 2 - r["objective"]) < 1e-7


def _planted(n_groups, size, seed, noise=1.0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), size)
    flip = rng.random((g.size, g.size)) < noise
    W = np.where(g[:, None] == g[None, :], 4.0, -2.0) + np.where(flip, rng.integers(-1, 2, (g.size, g.size)), 0)
    W = np.triu(W, 1)
    return W + W.T, g


def test_node_reduction_closes_a_root_whose_incumbent_is_optimal():
    W, g = _planted(4, 5, 0)
    A = ~np.eye(W.shape[0], dtype=bool)
    val = float(np.where(g[:, None] == g[None, :], W, 0.0).sum() / 2)
    r = colgen.branch_and_price(W, A, warm_labels=g, warm_obj=val, integral=True)
    assert r["status"] == "optimal" and r["objective"] == val
    # the fixings against the optimal incumbent contradict each other: nothing beats it
    assert r["node_reduced_closed"] == 1 and r["bp_nodes"] == 0
    off = colgen.branch_and_price(W, A, warm_labels=g, warm_obj=val, integral=True, reduce_nodes=False)
    assert off["status"] == "optimal" and off["objective"] == val and off["bp_nodes"] >= 1
    assert off["node_reduced_closed"] == 0 and off["node_merged"] == 0


def test_node_reduction_merges_from_a_poor_incumbent_and_stays_exact():
    W, g = _planted(4, 5, 1, noise=0.1)
    A = ~np.eye(W.shape[0], dtype=bool)
    val = float(np.where(g[:, None] == g[None, :], W, 0.0).sum() / 2)
    r = colgen.branch_and_price(W, A, warm_labels=np.arange(g.size), warm_obj=0.0, integral=True)
    assert r["status"] == "optimal" and r["objective"] >= val
    assert r["node_merged"] > 0


@pytest.mark.parametrize("name", ["cars", "wildcats", "corr40-1"])
def test_node_reduction_reaches_the_cplib_optimum(name):
    base = resources.files("trustlab") / "data" / "cplib"
    W = read_cplib(base / f"{name}.txt")
    opt, _ = read_cplib_optimum(base / f"{name}_opt.txt")
    n = W.shape[0]
    A = ~np.eye(n, dtype=bool)
    r = colgen.branch_and_price(W, A, warm_labels=np.arange(n), warm_obj=0.0, integral=True)
    assert r["status"] == "optimal" and r["objective"] == opt and r["bound"] == opt


@pytest.mark.parametrize("flag", [True, False])
def test_solve_cpp_hands_the_node_reduction_option_to_branch_and_price(flag, monkeypatch):
    from trustlab.solvers import cpp

    seen = []
    real = colgen.branch_and_price

    def spy(*args, **kw):
        seen.append(kw.get("reduce_nodes"))
        return real(*args, **kw)

    monkeypatch.setattr(colgen, "branch_and_price", spy)
    rng = np.random.default_rng(5)
    W, A, _ = _instance(rng, 1, max_n=8)
    W = np.round(W)
    opt, _ = brute_force_cpp(W, A)
    # tail_rounds=0 stops the LP phase after one round, so branch and price runs
    out = cpp.solve_cpp(W, A, warm_labels=np.arange(W.shape[0]), warm_obj=0.0, integral=True,
                        options=cpp.CutOptions(tail_rounds=0, reduce_nodes=flag))
    assert out["status"] == "optimal" and abs(out["objective"] - opt) < 1e-9
    assert out["phase"] == "branch_and_price" and seen == [flag]
