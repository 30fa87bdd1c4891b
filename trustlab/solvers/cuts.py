"""Heuristic separation of odd-wheel and general 2-partition inequalities for the CPP.

Both families are valid for every clique partition of a graph whose forbidden pairs
(missing edges) are the constants ``x = 0`` (Grötschel & Wakabayashi 1990; Chopra &
Rao 1993; Deza, Grötschel & Laurent 1992), and they cut off points of the triangle LP:

* **Odd wheel** with hub ``v`` and odd cycle ``c_1 .. c_k`` (``k >= 3``, every hub
  pair ``v c_i`` allowed): ``sum_i x_{v c_i} - sum_i x_{c_i c_{i+1}} <= (k - 1) / 2``.
  If ``J`` is the set of cycle nodes in ``v``'s cluster, the left side is at most
  ``|J| - e(J)`` (``e(J)``: cycle edges inside ``J``), the number of runs of ``J``
  along the cycle, which is ``<= (k - 1) / 2`` for ``J`` a proper subset of an odd
  cycle and ``0`` for the whole cycle.
* **2-partition** for disjoint nonempty ``S``, ``T``:
  ``x(S:T) - x(S) - x(T) <= min(|S|, |T|)`` (``x(S)``: pairs inside ``S``). The
  ``|S| = 1`` case is :func:`trustlab.solvers.cpp.separate_two_partition`; here
  ``|S| >= 2``.

Separation is heuristic (a returned cut is always violated at the given point and
valid; violated cuts may be missed). Odd wheels: with
``e_ab = 1/2 + x_ab - (x_va + x_vb) / 2`` (``>= 0`` on the triangle polytope) the
violation of the wheel is ``1/2 - sum over cycle edges of e``, so a shortest odd cycle
(Dijkstra on the bipartite double cover, one search per hub) among the hub's fractional
neighbours gives the most violated wheel of that hub up to the clipping of negative
``e`` to 0. 2-partition: greedy growth of ``S`` and ``T`` from every node pair.

Every cut is returned as ``(idx, coef)`` over the pair variables, scaled so that its
right-hand side is 1 (the convention of the cutting-plane solver).
"""
from __future__ import annotations

import numpy as np

_EPS = 1e-6


def _odd_cycle_from_walk(walk: list[int]) -> list[int]:
    """A simple odd cycle contained in the closed odd walk ``walk`` (first node not
    repeated at the end). With nonnegative edge weights it weighs no more than the walk."""
    while True:
        seen: dict[int, int] = {}
        split = None
        for pos, u in enumerate(walk):
            if u in seen:
                split = (seen[u], pos)
                break
            seen[u] = pos
        if split is None:
            return walk
        i, j = split
        inner = walk[i:j]  # closed walk u .. (back to u)
        outer = walk[:i] + walk[j:]
        walk = inner if len(inner) % 2 == 1 else outer


def separate_odd_wheels(X: np.ndarray, A: np.ndarray, max_cuts: int, eps: float = _EPS,
                        min_k: int = 5, max_k: int | None = None):
    """Violated odd-wheel inequalities at ``X`` (heuristic; see the module docstring).

    ``X``: dense symmetric point (0 on the diagonal and forbidden pairs), ``A``: allowed
    pairs. Cycles shorter than ``min_k`` are skipped (``k = 3`` wheels are
    2-partition cuts, separated elsewhere). Returns a list of
    ``(hub, cycle (k,) int array, violation)``, most violated first.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra

    n = X.shape[0]
    found: dict[tuple, tuple] = {}
    for v in range(n):
        cand = np.flatnonzero(A[v] & (X[v] > eps))
        m = cand.size
        if m < min_k:
            continue
        xv = X[v, cand]
        Xc = X[np.ix_(cand, cand)]
        E = 0.5 + Xc - 0.5 * (xv[:, None] + xv[None, :])
        np.fill_diagonal(E, np.inf)
        a, b = np.nonzero((E < 0.5 - eps) & np.triu(np.ones((m, m), bool), 1))
        if a.size < min_k:
            continue
        e = np.maximum(E[a, b], 1e-12)  # csgraph drops explicit zeros
        # double cover: node (u, side) -> u + side * m; every edge switches side
        rows = np.concatenate([a, a + m, b, b + m])
        cols = np.concatenate([b + m, b, a + m, a])
        G = sp.csr_matrix((np.concatenate([e, e, e, e]), (rows, cols)), shape=(2 * m, 2 * m))
        starts = np.unique(np.concatenate([a, b]))
        dist, pred = dijkstra(G, directed=True, indices=starts, return_predecessors=True,
                              limit=0.5 - eps)
        for r, u in enumerate(starts):
            d = dist[r, u + m]
            if not np.isfinite(d) or d >= 0.5 - eps:
                continue
            path = []
            q = u + m
            while q != u and q >= 0:
                path.append(int(q % m))
                q = pred[r, q]
            if q != u:
                continue
            path.append(int(u))
            walk = path[::-1][:-1]  # u ... (last before returning to u)
            cyc = _odd_cycle_from_walk(walk)
            k = len(cyc)
            if k < max(3, min_k) or (max_k is not None and k > max_k):
                continue
            nodes = cand[np.asarray(cyc)]
            lhs = X[v, nodes].sum() - X[nodes, np.roll(nodes, -1)].sum()
            viol = lhs - (k - 1) / 2
            if viol > eps:
                # canonical key: rotation/reflection-free
                s = int(np.argmin(nodes))
                rot = np.roll(nodes, -s)
                if rot[1] > rot[-1]:
                    rot = np.concatenate([rot[:1], rot[1:][::-1]])
                found[(v, tuple(rot.tolist()))] = (viol, rot)
    items = sorted(found.items(), key=lambda kv: -kv[1][0])[:max_cuts]
    return [(v, rot, viol) for (v, _), (viol, rot) in items]


def odd_wheel_row(v: int, cycle: np.ndarray, P: np.ndarray):
    """(variable indices, coefficients) of the odd-wheel cut, scaled to right-hand side 1;
    forbidden cycle pairs (``P < 0``) are constants 0 and left out."""
    k = len(cycle)
    r = (k - 1) / 2
    idx = [int(P[v, c]) for c in cycle]
    coef = [1.0 / r] * k
    for i in range(k):
        p = int(P[cycle[i], cycle[(i + 1) % k]])
        if p >= 0:
            idx.append(p)
            coef.append(-1.0 / r)
    return np.asarray(idx, np.int64), np.asarray(coef, np.float64)


def separate_two_partition_general(X: np.ndarray, A: np.ndarray, max_cuts: int, eps: float = _EPS,
                                   max_starts: int = 120):
    """Violated 2-partition inequalities ``x(S:T) - x(S) - x(T) <= min(|S|, |T|)`` with
    ``|S|, |T| >= 2`` (heuristic; see the module docstring).

    Greedy: from a start pair ``S = {s}``, ``T = {t}`` (the ``max_starts`` pairs with the
    largest ``x_st``), add the node to ``S`` or ``T`` that raises the violation most
    until no move helps (forbidden pairs are constants 0 and simply drop out).
    Returns a list of ``(S, T, violation)``, most violated first.
    """
    n = X.shape[0]
    iu, ju = np.nonzero(np.triu(A & (X > eps), 1))
    if iu.size == 0:
        return []
    order = np.argsort(-X[iu, ju], kind="stable")[:max_starts]
    found: dict[tuple, float] = {}
    for q in order:
        inS = np.zeros(n, bool)
        inT = np.zeros(n, bool)
        inS[iu[q]] = True
        inT[ju[q]] = True
        lhs = X[iu[q], ju[q]]
        # gain of adding u to S: x(u:T) - x(u:S); to T: x(u:S) - x(u:T)
        toS = X[:, inS].sum(1)
        toT = X[:, inT].sum(1)
        while True:
            ns, nt = int(inS.sum()), int(inT.sum())
            free = ~(inS | inT)
            gS = np.where(free, toT - toS, -np.inf) - (1.0 if ns < nt else 0.0)
            gT = np.where(free, toS - toT, -np.inf) - (1.0 if nt < ns else 0.0)
            bs, bt = int(np.argmax(gS)), int(np.argmax(gT))
            # moves that keep min(|S|,|T|) fixed cost nothing extra; the growth of the
            # smaller side raises the right-hand side by 1
            if gS[bs] <= eps and gT[bt] <= eps:
                break
            if gS[bs] >= gT[bt]:
                u = bs
                inS[u] = True
                lhs += toT[u] - toS[u]
                toS += X[:, u]
            else:
                u = bt
                inT[u] = True
                lhs += toS[u] - toT[u]
                toT += X[:, u]
        ns, nt = int(inS.sum()), int(inT.sum())
        viol = lhs - min(ns, nt)
        if min(ns, nt) >= 2 and viol > eps:
            S = tuple(np.flatnonzero(inS).tolist())
            T = tuple(np.flatnonzero(inT).tolist())
            key = (S, T) if S < T else (T, S)
            found[key] = viol
    items = sorted(found.items(), key=lambda kv: -kv[1])[:max_cuts]
    return [(np.asarray(S, np.int64), np.asarray(T, np.int64), viol) for (S, T), viol in items]


def two_partition_general_row(S: np.ndarray, T: np.ndarray, P: np.ndarray):
    """(variable indices, coefficients) of the general 2-partition cut, scaled to
    right-hand side 1; forbidden pairs are constants 0 and left out."""
    S = np.asarray(S, np.int64)
    T = np.asarray(T, np.int64)
    r = float(min(S.size, T.size))
    cross = P[np.ix_(S, T)].ravel()
    inner = [P[np.ix_(g, g)][np.triu_indices(g.size, 1)] for g in (S, T)]
    neg = np.concatenate(inner)
    cross, neg = cross[cross >= 0], neg[neg >= 0]
    idx = np.concatenate([cross, neg]).astype(np.int64)
    coef = np.concatenate([np.full(cross.size, 1.0 / r), np.full(neg.size, -1.0 / r)])
    return idx, coef
