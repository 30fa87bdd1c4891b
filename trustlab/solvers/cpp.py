"""Exact clique partitioning by cutting planes + lazy-constraint MIP (branch-and-cut).

Formulation (Grötschel & Wakabayashi 1989; xER eqs. 1–5): one variable ``x_ij`` per
*allowed* pair, maximise ``sum w_ij x_ij`` subject to the triangle inequalities
``x_ij + x_ik - x_jk <= 1``. A forbidden pair ``jk`` (missing edge) is the constant
``x_jk = 0``, so its triangles become ``x_ij + x_ik <= 1``.

1. **LP phase** — HiGHS (``scipy.optimize.linprog``, interior point + crossover;
   measured faster here than GLOP's incremental dual simplex) on the LP relaxation;
   violated triangles are separated exactly by enumeration (O(n^3) NumPy per round),
   the up-to-40n most violated ones are added and cuts slack at the LP optimum are
   dropped, until no triangle is violated. The LP value is a valid upper bound; with integer weights it is rounded
   down. If the heuristic already meets the bound, or the LP optimum is integral,
   the problem is solved.
2. **MIP phase** — the binary programme with only the active triangles, solved by
   SCIP (``mip_solver="scip"``, default, deterministic single thread) or CP-SAT
   (``"cpsat"``), warm-started from the heuristic. The integer solution is checked
   against *all* triangles; violated ones are added and the MIP re-solved (lazy
   constraints). The MIP's dual bound on the relaxed constraint set is a valid upper
   bound for the full problem.

CP-SAT configuration (a deliberate choice): with ``workers`` < 8 it runs with
``num_workers=1`` and ``linearization_level=2`` (we saw 2-worker portfolios stall on
easy instances); with >= 8 workers the default portfolio is used.
"""
from __future__ import annotations

import math
import time

import numpy as np
from scipy.sparse.csgraph import connected_components

_EPS = 1e-6


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.0, deadline - time.perf_counter())


def separate_triangles(X: np.ndarray, A: np.ndarray, max_cuts: int, eps: float = _EPS,
                       per_apex: int | None = None):
    """Most violated triangle inequalities ``x_ij + x_ik - x_jk <= 1`` at ``X``.

    ``X`` is the dense symmetric solution (0 on forbidden pairs and the diagonal).
    Returns an int array of shape (k, 3): rows (i, j, k) with apex ``i`` (j < k),
    most violated first.
    """
    n = X.shape[0]
    out_i, out_j, out_k, out_v = [], [], [], []
    iu = np.triu(np.ones((n, n), bool), 1)
    for i in range(n):
        xi = X[i]
        nb = A[i]
        if xi.max() <= eps:  # x_ij + x_ik - x_jk > 1 needs x_ij, x_ik > 0
            continue
        cand = np.flatnonzero(nb & (xi > eps))
        if cand.size < 2:
            continue
        xs = xi[cand]
        V = xs[:, None] + xs[None, :] - X[np.ix_(cand, cand)] - 1.0
        m = (V > eps) & iu[: cand.size, : cand.size]
        if not m.any():
            continue
        a, b = np.nonzero(m)
        if per_apex is not None and a.size > per_apex:
            top = np.argpartition(-V[a, b], per_apex - 1)[:per_apex]
            a, b = a[top], b[top]
        out_i.append(np.full(a.size, i))
        out_j.append(cand[a])
        out_k.append(cand[b])
        out_v.append(V[a, b])
    if not out_i:
        return np.empty((0, 3), np.int64)
    I = np.concatenate(out_i); J = np.concatenate(out_j); K = np.concatenate(out_k)
    Vv = np.concatenate(out_v)
    if Vv.size > max_cuts:
        sel = np.argpartition(-Vv, max_cuts - 1)[:max_cuts]
        sel = sel[np.argsort(-Vv[sel], kind="stable")]
    else:
        sel = np.argsort(-Vv, kind="stable")
    return np.stack([I[sel], J[sel], K[sel]], axis=1).astype(np.int64)


def _labels_from_x(n: int, iu: np.ndarray, ju: np.ndarray, xv: np.ndarray) -> np.ndarray:
    import scipy.sparse as sp

    on = xv > 0.5
    g = sp.coo_matrix((np.ones(int(on.sum())), (iu[on], ju[on])), shape=(n, n))
    return connected_components(g, directed=False)[1].astype(np.int64)


def solve_cpp(
    W: np.ndarray,
    A: np.ndarray,
    *,
    warm_labels: np.ndarray,
    warm_obj: float,
    deadline: float | None = None,
    integral: bool = False,
    mip_solver: str = "scip",
    workers: int | None = None,
    max_cuts_per_round: int | None = None,
    lp_method: str = "highs-ipm",
    per_apex: int | None = 8,
    tail_rounds: int = 8,
) -> dict:
    """Solve one (component) CPP exactly; see the module docstring.

    Returns a dict with ``labels``, ``objective``, ``bound``, ``status``
    (``optimal`` / ``time_limit``), ``lp_rounds``, ``cuts``, ``phase``.
    """
    n = W.shape[0]
    iu, ju = np.nonzero(np.triu(A, 1))
    nv = iu.size
    w = W[iu, ju]
    trivial_ub = float(w[w > 0].sum())

    def rnd(b: float) -> float:
        return math.floor(b + 1e-6) if integral else b

    def result(labels, obj, bound, status, **kw):
        bound = min(bound, trivial_ub)
        if obj >= bound - 1e-7 * max(1.0, abs(bound)):
            status = "optimal"
            bound = max(bound, obj)
        return dict(labels=labels, objective=float(obj), bound=float(bound), status=status, **kw)

    if nv == 0 or trivial_ub <= 0:
        return result(np.arange(n, dtype=np.int64), 0.0, 0.0, "optimal", lp_rounds=0, cuts=0, phase="trivial")
    if warm_obj >= rnd(trivial_ub) - 1e-9:
        return result(warm_labels, warm_obj, rnd(trivial_ub), "optimal", lp_rounds=0, cuts=0, phase="trivial")

    P = -np.ones((n, n), np.int64)
    P[iu, ju] = np.arange(nv)
    P[ju, iu] = np.arange(nv)
    max_cuts = max_cuts_per_round or max(200, 40 * n)

    cuts: list[tuple[int, int, int]] = []  # active (p_ij, p_ik, p_jk or -1)

    def to_cuts(tri):
        i, j, k = tri[:, 0], tri[:, 1], tri[:, 2]
        return list(zip(P[i, j].tolist(), P[i, k].tolist(), P[j, k].tolist()))

    bound = trivial_ub
    rounds = 0
    xv = None
    X = np.zeros((n, n))
    n_added = 0
    history: list[float] = []
    age = np.zeros(0, np.int64)
    while True:
        rem = _remaining(deadline)
        if rem is not None and rem <= 0:
            return result(warm_labels, warm_obj, rnd(bound), "time_limit", lp_rounds=rounds,
                          cuts=n_added, phase="lp")
        res = _solve_lp(w, cuts, nv, rem, lp_method)
        rounds += 1
        if res is None:
            return result(warm_labels, warm_obj, rnd(bound), "time_limit", lp_rounds=rounds,
                          cuts=n_added, phase="lp")
        xv, val = res
        bound = min(bound, val)
        history.append(bound)
        if warm_obj >= rnd(bound) - 1e-9:
            return result(warm_labels, warm_obj, rnd(bound), "optimal", lp_rounds=rounds,
                          cuts=n_added, phase="lp")
        X[iu, ju] = xv
        X[ju, iu] = xv
        tri = separate_triangles(X, A, max_cuts, per_apex=per_apex)
        if tri.shape[0] == 0:
            break
        if len(history) > tail_rounds and history[-tail_rounds - 1] - bound < 1e-4 * max(1.0, abs(bound)):
            break  # tailing off: branch (MIP phase) instead of cutting further
        if cuts:  # drop cuts slack for 3 LP rounds in a row (keeps the LP small, avoids cycling)
            C = np.asarray(cuts)
            lhs = xv[C[:, 0]] + xv[C[:, 1]] - np.where(C[:, 2] >= 0, xv[np.maximum(C[:, 2], 0)], 0.0)
            age = np.where(lhs > 1.0 - 1e-3, 0, age + 1)
            keep = age < 3
            cuts = [c for c, k in zip(cuts, keep) if k]
            age = age[keep]
        new = to_cuts(tri)
        n_added += len(new)
        cuts.extend(new)
        age = np.concatenate([age, np.zeros(len(new), np.int64)])

    frac = np.abs(xv - np.round(xv)) > _EPS
    if not frac.any():
        labels = _labels_from_x(n, iu, ju, np.round(xv))
        val = float(w @ np.round(xv))
        if val >= warm_obj:
            return result(labels, val, rnd(bound), "optimal", lp_rounds=rounds, cuts=n_added, phase="lp")

    # ---------------------------------------------------------------- MIP phase
    best_lab, best_val = warm_labels, warm_obj
    same = warm_labels[iu] == warm_labels[ju]
    status = "time_limit"
    while True:
        rem = _remaining(deadline)
        if rem is not None and rem <= 0:
            break
        if mip_solver == "cpsat":
            sol, mip_bound, st_ok, proven = _mip_cpsat(w, cuts, same, rem, workers)
        else:
            sol, mip_bound, st_ok, proven = _mip_scip(w, cuts, same, rem)
        if mip_bound is not None:
            bound = min(bound, mip_bound)
        if sol is None:
            break
        X[:] = 0.0
        X[iu, ju] = sol
        X[ju, iu] = sol
        tri = separate_triangles(X, A, 10 ** 9, eps=0.5)
        if tri.shape[0] == 0:
            val = float(w @ sol)
            if val > best_val:
                best_lab, best_val = _labels_from_x(n, iu, ju, sol), val
                same = best_lab[iu] == best_lab[ju]
            if proven:
                status = "optimal"
                break
            if not st_ok or rem is None:
                break
            continue  # not proven but feasible: loop ends by the time check
        new = to_cuts(tri)
        n_added += len(new)
        cuts.extend(new)
        if best_val >= rnd(bound) - 1e-9:
            break
    return result(best_lab, best_val, rnd(bound), status, lp_rounds=rounds, cuts=n_added, phase="mip")


def _solve_lp(w, cuts, nv, rem, method):
    """max w.x over [0,1]^nv and the cuts; (x, value) or None if not solved to optimality."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    opts = {} if rem is None else {"time_limit": max(rem, 1e-3)}
    if cuts:
        C = np.asarray(cuts, np.int64)
        m = C.shape[0]
        has3 = C[:, 2] >= 0
        r = np.concatenate([np.arange(m), np.arange(m), np.flatnonzero(has3)])
        c = np.concatenate([C[:, 0], C[:, 1], C[has3, 2]])
        v = np.concatenate([np.ones(2 * m), -np.ones(int(has3.sum()))])
        Aub = sp.csr_matrix((v, (r, c)), shape=(m, nv))
        res = linprog(-w, A_ub=Aub, b_ub=np.ones(m), bounds=(0.0, 1.0), method=method, options=opts)
    else:
        res = linprog(-w, bounds=(0.0, 1.0), method=method, options=opts)
    if res.status != 0 or res.x is None:
        return None
    val = float(np.maximum(w, 0.0).sum())
    if cuts:
        # a certificate independent of solver tolerances (weak duality): for any y >= 0,
        # sum(y) + sum(max(0, w - A^T y)) bounds max w.x over the LP and so the CPP
        y = np.maximum(-np.asarray(res.ineqlin.marginals), 0.0)
        val = float(y.sum() + np.maximum(w - Aub.T @ y, 0.0).sum())
    return np.clip(res.x, 0.0, 1.0), val


def _mip_scip(w, cuts, same, rem):
    from ortools.linear_solver import pywraplp

    s = pywraplp.Solver.CreateSolver("SCIP")
    nv = w.size
    x = [s.BoolVar("") for _ in range(nv)]
    o = s.Objective()
    for p in range(nv):
        if w[p] != 0.0:
            o.SetCoefficient(x[p], float(w[p]))
    o.SetMaximization()
    for a, b, d in cuts:
        ct = s.Constraint(-s.infinity(), 1.0)
        ct.SetCoefficient(x[a], 1.0)
        ct.SetCoefficient(x[b], 1.0)
        if d >= 0:
            ct.SetCoefficient(x[d], -1.0)
    s.SetHint(x, [1.0 if t else 0.0 for t in same])
    if rem is not None:
        s.SetTimeLimit(int(rem * 1000) + 1)
    st = s.Solve()
    if st in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        sol = np.fromiter((v.solution_value() for v in x), np.float64, nv).round()
        return sol, s.Objective().BestBound(), True, st == pywraplp.Solver.OPTIMAL
    return None, None, False, False


def _mip_cpsat(w, cuts, same, rem, workers):
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    nv = w.size
    x = [m.new_bool_var("") for _ in range(nv)]
    for a, b, d in cuts:
        if d >= 0:
            m.add(x[a] + x[b] - x[d] <= 1)
        else:
            m.add(x[a] + x[b] <= 1)
    m.maximize(sum(float(w[p]) * x[p] for p in range(nv) if w[p] != 0.0))
    for p in range(nv):
        m.add_hint(x[p], bool(same[p]))
    s = cp_model.CpSolver()
    configure_cpsat(s, workers)
    if rem is not None:
        s.parameters.max_time_in_seconds = float(rem)
    st = s.solve(m)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sol = np.array([s.value(v) for v in x], np.float64)
        return sol, s.best_objective_bound, True, st == cp_model.OPTIMAL
    return None, None, False, False


def configure_cpsat(solver, workers: int | None) -> None:
    """The documented CP-SAT configuration: 1 worker + linearization_level=2 below 8
    workers, the default portfolio (with ``workers`` threads) from 8 up."""
    w = 1 if workers is None else int(workers)
    if w >= 8:
        solver.parameters.num_workers = w
    else:
        solver.parameters.num_workers = 1
        solver.parameters.linearization_level = 2
