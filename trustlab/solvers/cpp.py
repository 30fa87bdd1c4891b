"""Exact clique partitioning by cutting planes + lazy-constraint MIP (branch-and-cut).

Formulation (Grötschel & Wakabayashi 1989; xER eqs. 1–5): one variable ``x_ij`` per
*allowed* pair, maximise ``sum w_ij x_ij`` subject to the triangle inequalities
``x_ij + x_ik - x_jk <= 1``. A forbidden pair ``jk`` (missing edge) is the constant
``x_jk = 0``, so its triangles become ``x_ij + x_ik <= 1``.

1. **LP phase** — HiGHS (``scipy.optimize.linprog``, interior point + crossover;
   measured faster here than GLOP's incremental dual simplex and than HiGHS's
   warm-started dual simplex, which stalls on these degenerate LPs) on the LP
   relaxation; violated triangles are separated exactly by enumeration (O(n^3) NumPy
   per round), the most violated ones (up to 12 per apex, 40n in all) are added,
   together with violated **2-partition inequalities** ``x(v:T) - x(T) <= 1``
   (Grötschel & Wakabayashi 1990, ``|S| = 1``, greedy heuristic separation, see
   :func:`separate_two_partition`) in every round. Once that LP settles (no violated cut
   or the bound tails off), **odd-wheel** inequalities and **2-partition inequalities
   with** ``|S| >= 2`` (heuristic separation, :mod:`trustlab.solvers.cuts`) are added
   too, and the phase goes on until it settles again (not on components that go to
   branch and price next, whose bound dominates these cuts anyway). Triangles whose two "+" pairs both
   have weight <= 0 are not separated: they are redundant for the optimum (Miyauchi &
   Sukegawa 2015), and leaving them out only relaxes the LP, so every bound stays
   valid (an integral LP point is still checked against *all* triangles). Cuts slack
   for two rounds are dropped. The loop ends when no cut is violated or the bound tails
   off. The bound is a weak-duality certificate computed from the LP duals (valid
   whatever the solver's tolerances); with integer weights it is rounded down. After
   each LP, **reduced-cost fixing** fixes every variable whose flip would push the
   certificate below the incumbent (+1 for integer weights); the optimum is then at
   most ``max(bound of the restricted problem, incumbent)``, which is what is
   reported. If the heuristic already meets the bound, or the LP optimum is a
   partition, the problem is solved.
2. **Branch and price** (components of at most ``colgen_max_n`` = 64 nodes, see
   :mod:`trustlab.solvers.colgen`) — the set-partitioning LP over clusters, whose
   bound dominates every family of cuts above; on random dense instances it usually
   meets the optimum at the root. It proves all CP-Lib ``corr40-*`` instances, where
   the cutting planes stop 2-3 % above the optimum. Before it starts, the caller's
   paused heuristic is finished (``finish_warm``: a stronger incumbent closes more
   nodes). Until its first exact pricing proof (the root converged, or a node closed
   by its bound) it gets ``bp_share`` (80 %) of the time left when it starts; after
   that, branching may use all the time left (measured on held-out n = 50 instances:
   the cutting planes and the MIP never improved on a converged root's bound). If its
   exact pricing becomes too expensive (a capped search that finds no column) or that
   share runs out without a proof, it stops without a bound; the
   cutting-plane phase then goes on where it stopped, with
   odd-wheel and ``|S| >= 2`` 2-partition cuts from its first round
   (``cuts_after_pricing``), and the MIP phase takes the time that is left.
3. **MIP phase** — the binary programme with *every* cut separated in the LP phase
   (``mip_cuts="all"``, default; ``"active"`` keeps only those active at the end) and
   the fixings, solved by SCIP (``mip_solver="scip"``, default, deterministic single
   thread) or CP-SAT (``"cpsat"``), warm-started from the heuristic. The integer
   solution is checked against *all* triangles; violated ones are added and the MIP
   re-solved (lazy constraints). The MIP's dual bound on the relaxed constraint set is
   a valid upper bound for the (restricted) problem.

Deadlines are times of the thread's solver clock (:mod:`trustlab.solvers._clock`): wall
time with an explicit ``time_limit``; counted work by default, where each LP solve, each
separation round and each MIP node is charged reference seconds, and the MIP gets a node
limit (SCIP) or a deterministic time (CP-SAT) from the work left instead of a wall limit
(whose only wall limit is then the safety stop). SCIP single-threaded and CP-SAT with one
worker are deterministic under those limits.

CP-SAT configuration (a deliberate choice): with ``workers`` < 8 it runs with
``num_workers=1`` and ``linearization_level=2`` (we saw 2-worker portfolios stall on
easy instances); with >= 8 workers the default portfolio is used.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.sparse.csgraph import connected_components

from trustlab.solvers._clock import (
    APEX_SECONDS,
    LP_POWER,
    LP_ROWS_POWER,
    LP_ROWS_SECONDS,
    LP_SECONDS,
    MIP_NODE_SECONDS,
    SEPARATION_RATE,
)
from trustlab.solvers._clock import current as current_clock

_EPS = 1e-6


def _remaining(deadline: float | None) -> float | None:
    """What is left until ``deadline`` on this thread's solver clock (wall seconds, or
    reference seconds of counted work: :mod:`trustlab.solvers._clock`)."""
    return current_clock().left(deadline)


def separate_triangles(X: np.ndarray, A: np.ndarray, max_cuts: int, eps: float = _EPS,
                       per_apex: int | None = None, nonpos: np.ndarray | None = None):
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
        if nonpos is not None:  # skip triangles whose two "+" pairs both weigh <= 0
            npc = nonpos[i, cand]
            m &= ~(npc[:, None] & npc[None, :])
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
    I = np.concatenate(out_i)
    J = np.concatenate(out_j)
    K = np.concatenate(out_k)
    Vv = np.concatenate(out_v)
    if Vv.size > max_cuts:
        sel = np.argpartition(-Vv, max_cuts - 1)[:max_cuts]
        sel = sel[np.argsort(-Vv[sel], kind="stable")]
    else:
        sel = np.argsort(-Vv, kind="stable")
    return np.stack([I[sel], J[sel], K[sel]], axis=1).astype(np.int64)


def separate_two_partition(X: np.ndarray, A: np.ndarray, max_cuts: int, eps: float = _EPS,
                            seeds: int = 3):
    """Violated 2-partition inequalities with ``|S| = 1`` (Grötschel & Wakabayashi 1990).

    For a node ``v`` and a set ``T`` of its allowed neighbours (``|T| >= 3``),
    ``sum_{t in T} x_vt - sum_{t < t' in T} x_tt' <= 1`` holds for every clique partition:
    if ``k`` members of ``T`` share ``v``'s cluster the left side is at most
    ``k - k(k-1)/2 <= 1`` (a forbidden pair ``tt'`` only drops a ``-x_tt' = 0`` term).
    ``T`` is grown greedily (largest marginal gain first) from the empty set and from the
    ``seeds`` neighbours with the largest ``x_vt``. Heuristic separation: a returned cut
    is always violated at ``X``, but violated cuts may be missed.

    Returns a list of ``(v, T, violation)``, most violated first (at most ``max_cuts``).
    """
    n = X.shape[0]
    found: dict[tuple, float] = {}
    for v in range(n):
        xv = X[v]
        cand = np.flatnonzero(A[v] & (xv > eps))
        if cand.size < 3:
            continue
        xs = xv[cand]
        Xc = X[np.ix_(cand, cand)]
        starts = [-1] + np.argsort(-xs, kind="stable")[:seeds].tolist()
        for s0 in starts:
            gain = xs.copy()
            inT = np.zeros(cand.size, bool)
            lhs = 0.0
            if s0 >= 0:
                inT[s0] = True
                lhs += gain[s0]
                gain = gain - Xc[s0]
            while True:
                g = np.where(inT, -np.inf, gain)
                t = int(np.argmax(g))
                if g[t] <= eps:
                    break
                inT[t] = True
                lhs += g[t]
                gain = gain - Xc[t]
            k = int(inT.sum())
            if k >= 3 and lhs > 1.0 + eps:
                key = (v, tuple(cand[inT].tolist()))
                found[key] = lhs - 1.0
    items = sorted(found.items(), key=lambda kv: -kv[1])[:max_cuts]
    return [(v, np.asarray(T, np.int64), viol) for (v, T), viol in items]


def two_partition_row(v: int, T: np.ndarray, P: np.ndarray):
    """(variable indices, coefficients) of the 2-partition cut for ``v`` and ``T``;
    forbidden pairs (``P < 0``) inside ``T`` are constants 0 and are left out."""
    idx = [int(P[v, t]) for t in T]
    coef = [1.0] * len(idx)
    for a in range(len(T)):
        for b in range(a + 1, len(T)):
            p = int(P[T[a], T[b]])
            if p >= 0:
                idx.append(p)
                coef.append(-1.0)
    return np.asarray(idx, np.int64), np.asarray(coef, np.float64)


def _labels_from_x(n: int, iu: np.ndarray, ju: np.ndarray, xv: np.ndarray) -> np.ndarray:
    import scipy.sparse as sp

    on = xv > 0.5
    g = sp.coo_matrix((np.ones(int(on.sum())), (iu[on], ju[on])), shape=(n, n))
    return connected_components(g, directed=False)[1].astype(np.int64)


@dataclass(frozen=True)
class CutOptions:
    """Tuning of :func:`solve_cpp` (defaults are the measured best on the tuning families).

    ``two_partition`` turns the 2-partition cuts on (separated in a round when fewer
    than ``max_cuts // tp_frac`` triangles were violated; with the default 1, always),
    ``odd_wheels`` / ``two_partition_general`` the odd-wheel and ``|S| >= 2``
    2-partition cuts (separated once the LP with triangle and ``|S| = 1`` cuts has
    settled, or from the first round with ``strong_after_settle=False``, in rounds with
    fewer than ``max_cuts // strong_frac`` violated triangles; by default not on
    components that branch and price takes next),
    ``per_apex`` caps the triangles per apex and round, ``drop_age`` drops cuts slack
    for that many rounds, ``nonpos_skip`` skips the redundant triangles, ``reduced_cost_fixing`` the
    fixing, ``mip_cuts`` picks the cuts handed to the MIP (``"all"`` or ``"active"``),
    ``tail_rounds`` LP rounds without progress end the LP phase. ``colgen`` runs branch
    and price (:mod:`trustlab.solvers.colgen`) between the LP and the MIP phase on
    components of at most ``colgen_max_n`` nodes. On those components the LP phase also
    ends once ``small_tail`` rounds close less than ``small_tail_gap`` of the gap to the
    incumbent, or after ``small_lp_share`` of the time left at the start.
    ``cuts_after_pricing``: when branch and price gives up (exact pricing too hard), go
    on with the cutting planes (odd-wheel and ``|S| >= 2`` cuts included) before the MIP.
    ``bp_share``: branch and price may use this share of the time left when it starts
    until its first exact pricing proof (the root converged or a node closed); without
    one by then, the cutting planes and the MIP get the rest (after one, branching runs
    to the deadline).
    ``early_branch``: branch and price branches on a node whose master already beats
    the incumbent without waiting for its pricing proof (more instances proven within
    a time limit; but where the search is cut short, the root's set-partitioning bound
    was never proven and the reported bound is the cutting planes' weaker one — set it
    False to prove every node's bound, the root's first).
    ``reduce_nodes``: branch and price reduces every node's problem first (bound fixings
    against the incumbent and the optimum-preserving pair rules, see
    :meth:`trustlab.solvers.colgen._BranchAndPrice.reduce_node`).
    ``max_cuts_per_round`` None means ``max(200, 40 n)``; ``lp_method`` is the HiGHS
    method of the LP relaxations.
    """

    max_cuts_per_round: int | None = None
    lp_method: str = "highs-ipm"
    per_apex: int | None = 12
    tail_rounds: int = 8
    drop_age: int = 2
    nonpos_skip: bool = True
    two_partition: bool = True
    tp_frac: int = 1
    odd_wheels: bool = True
    two_partition_general: bool = True
    strong_frac: int = 4
    strong_after_settle: bool = True
    reduced_cost_fixing: bool = True
    mip_cuts: str = "all"
    colgen: bool = True
    colgen_max_n: int = 64
    small_tail: int = 3
    small_tail_gap: float = 0.02
    small_lp_share: float = 0.1
    cuts_after_pricing: bool = True
    bp_share: float = 0.8
    early_branch: bool = True
    reduce_nodes: bool = True


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
    options: CutOptions | None = None,
    threads: int = 1,
    finish_warm: Callable[[], tuple[np.ndarray, float, float | None]] | None = None,
) -> dict:
    """Solve one (component) CPP exactly; see the module docstring.

    ``options`` holds the tuning of the cutting-plane, branch-and-price and MIP phases
    (:class:`CutOptions`; defaults when None); ``threads``: threads of branch and
    price's exact pricing. ``finish_warm``: called once, when branch and price is about
    to start (the cutting planes did not prove the component), to finish a heuristic
    run the caller paused: returns its labels, value (the warm start if better) and the
    deadline the exact solver may now use (the time kept for finishing it is free).

    Returns a dict with ``labels``, ``objective``, ``bound``, ``status``
    (``optimal`` / ``time_limit``), ``lp_rounds``, ``cuts``, ``phase`` (where it ended:
    ``trivial``, ``lp``, ``branch_and_price`` or ``mip``), ``root_bound`` (the proven
    bound before any branching: the cutting-plane LP's, or the converged root of branch
    and price when that is lower), ``cuts_by_family``
    (cuts separated: ``triangle``, ``two_partition`` (``|S| = 1``), ``odd_wheel``,
    ``two_partition_general`` (``|S| >= 2``) in the LP phase, ``lazy_triangle`` in the
    MIP phase) and ``nodes`` (branch-and-price nodes plus MIP search nodes —
    SCIP nodes or CP-SAT branches).
    """
    s = _ExactSolve(W, A, warm_labels, warm_obj, deadline, integral, CutOptions() if options is None else options,
                    threads, finish_warm)
    return (s.trivial() or s.cutting_planes() or s.integral_lp() or s.branch_and_price()
            or s.cuts_after_pricing() or s.mip(mip_solver, workers))


class _ExactSolve:
    """The state :func:`solve_cpp` carries through its stages: trivial cases, the
    cutting-plane LP, an integral LP optimum, branch and price (small components), the
    MIP with lazy triangles. Each stage returns the final result, or None to go on."""

    def __init__(self, W, A, warm_labels, warm_obj, deadline, integral, o: CutOptions, threads: int = 1,
                 finish_warm=None):
        self.W, self.A, self.o, self.threads = W, A, o, threads
        self.finish_warm = finish_warm  # called once, when branch and price starts (see solve_cpp)
        self.warm_labels, self.warm_obj = warm_labels, warm_obj
        self.deadline, self.integral = deadline, integral
        self.n = n = W.shape[0]
        self.iu, self.ju = iu, ju = np.nonzero(np.triu(A, 1))
        self.nv = nv = iu.size
        self.w = W[iu, ju]
        self.trivial_ub = float(self.w[self.w > 0].sum())
        self.stat = {"root_bound": None, "cuts_by_family": {"triangle": 0, "two_partition": 0, "odd_wheel": 0,
                                                             "two_partition_general": 0, "lazy_triangle": 0},
                     "nodes": 0}
        # triangles whose two "+" pairs both weigh <= 0 are redundant for the optimum
        # (Miyauchi & Sukegawa 2015); leaving them out only relaxes the LP, so bounds stay valid
        self.nonpos = (W <= 0) if o.nonpos_skip else None
        self.P = P = -np.ones((n, n), np.int64)
        P[iu, ju] = np.arange(nv)
        P[ju, iu] = np.arange(nv)
        self.max_cuts = o.max_cuts_per_round or max(200, 40 * n)
        self.cuts: list[tuple[int, int, int]] = []  # active triangles (p_ij, p_ik, p_jk or -1)
        self.gcuts: list[tuple[np.ndarray, np.ndarray]] = []  # active 2-partition cuts (idx, coef)
        self.pool_tri: set = set()  # every cut ever separated (for mip_cuts="all")
        self.pool_g: list = []
        self.bound = self.trivial_ub
        self.rounds = 0
        self.n_added = 0
        self.X = np.zeros((n, n))
        self.lo = np.zeros(nv)  # variable bounds: reduced-cost fixing tightens them (see _fix_by_reduced_cost)
        self.hi = np.ones(nv)
        self.xv = self.tri = None  # the last LP solution and the triangles it violated
        self.bp_gave_up = False  # branch and price stopped without a bound (pricing too hard)

    def rnd(self, b: float) -> float:
        return math.floor(b + 1e-6) if self.integral else b

    def to_cuts(self, tri):
        P = self.P
        i, j, k = tri[:, 0], tri[:, 1], tri[:, 2]
        return list(zip(P[i, j].tolist(), P[i, k].tolist(), P[j, k].tolist()))

    def result(self, labels, obj, bound, status, **kw):
        stat, trivial_ub = self.stat, self.trivial_ub
        bound = min(bound, trivial_ub)
        if obj >= bound - 1e-7 * max(1.0, abs(bound)):
            status = "optimal"
            bound = max(bound, obj)
        rb = stat["root_bound"]
        out = dict(labels=labels, objective=float(obj), bound=float(bound), status=status,
                   root_bound=float(bound if rb is None else max(min(rb, trivial_ub), bound)),
                   cuts_by_family=dict(stat["cuts_by_family"]), nodes=int(stat["nodes"]))
        out.update(kw)
        return out

    def trivial(self):
        """No positive pair, or the warm start already reaches the trivial bound."""
        result, rnd, trivial_ub, warm_obj = self.result, self.rnd, self.trivial_ub, self.warm_obj
        if self.nv == 0 or trivial_ub <= 0:
            return result(np.arange(self.n, dtype=np.int64), 0.0, 0.0, "optimal", lp_rounds=0, cuts=0,
                          phase="trivial")
        if warm_obj >= rnd(trivial_ub) - 1e-9:
            return result(self.warm_labels, warm_obj, rnd(trivial_ub), "optimal", lp_rounds=0, cuts=0,
                          phase="trivial")
        return None

    def cutting_planes(self):
        """The LP relaxation, re-solved with separated triangle, 2-partition and (once it
        settles) odd-wheel / |S| >= 2 cuts, with reduced-cost fixing, until no cut is
        violated, the bound tails off, or the time is up."""
        o, A, w, nv, iu, ju, X, P = self.o, self.A, self.w, self.nv, self.iu, self.ju, self.X, self.P
        n, deadline, integral, lo, hi, stat = self.n, self.deadline, self.integral, self.lo, self.hi, self.stat
        warm_labels, warm_obj, nonpos, max_cuts = self.warm_labels, self.warm_obj, self.nonpos, self.max_cuts
        pool_tri, pool_g = self.pool_tri, self.pool_g
        result, rnd, to_cuts = self.result, self.rnd, self.to_cuts
        cuts, gcuts, bound, rounds, n_added = self.cuts, self.gcuts, self.bound, self.rounds, self.n_added
        # components that branch and price can take end their LP phase earlier: after
        # ``small_tail`` rounds closing less than ``small_tail_gap`` of the gap, or after
        # ``small_lp_share`` of the remaining time
        small = o.colgen and n <= o.colgen_max_n and not self.bp_gave_up
        clk = current_clock()
        rem0 = _remaining(deadline)
        lp_deadline = None if rem0 is None else clk.now() + o.small_lp_share * rem0
        xv = None
        history: list[float] = []
        age = np.zeros(len(cuts), np.int64)
        gage = np.zeros(len(gcuts), np.int64)
        n_fixed = 0
        # odd-wheel / general 2-partition separation: once the basic LP settles (default) or
        # from the start
        strong_on = (not o.strong_after_settle or self.bp_gave_up) and (o.odd_wheels or o.two_partition_general)
        while True:
            rem = _remaining(deadline)
            if rem is not None and rem <= 0:
                return result(warm_labels, warm_obj, rnd(bound), "time_limit", lp_rounds=rounds,
                              cuts=n_added, phase="lp")
            Aub = _rows(cuts, gcuts, nv)
            res = _solve_lp(w, Aub, nv, clk.wall_left(deadline), o.lp_method, lo, hi)
            rounds += 1
            if res is None:
                return result(warm_labels, warm_obj, rnd(bound), "time_limit", lp_rounds=rounds,
                              cuts=n_added, phase="lp")
            xv, val, red = res
            if xv is None:  # the fixings left nothing better than the incumbent
                return result(warm_labels, warm_obj, warm_obj, "optimal", lp_rounds=rounds,
                              cuts=n_added, phase="lp")
            bound = min(bound, val)
            stat["root_bound"] = rnd(bound)
            history.append(bound)
            if o.reduced_cost_fixing:
                n_fixed += _fix_by_reduced_cost(val, red, lo, hi, warm_obj, integral)
            if warm_obj >= rnd(bound) - 1e-9:
                return result(warm_labels, warm_obj, rnd(bound), "optimal", lp_rounds=rounds,
                              cuts=n_added, phase="lp")
            X[iu, ju] = xv
            X[ju, iu] = xv
            tri = separate_triangles(X, A, max_cuts, per_apex=o.per_apex, nonpos=nonpos)
            clk.charge(float(n) ** 3 / SEPARATION_RATE + APEX_SECONDS * n)  # this round's separation (approximate)
            tp = []
            if o.two_partition and tri.shape[0] < max_cuts // o.tp_frac:
                # stronger cuts once the triangle LP is nearly settled
                tp = separate_two_partition(X, A, max(50, max_cuts // 4), eps=1e-4)
            strong = []  # (family, (idx, coef)) odd wheels and 2-partitions with |S| >= 2
            if strong_on and tri.shape[0] < max_cuts // o.strong_frac:
                strong = _strong_cuts(X, A, P, max(25, max_cuts // 8), o.odd_wheels, o.two_partition_general)
                clk.charge(float(n) ** 3 / SEPARATION_RATE + APEX_SECONDS * n)  # (approximate)
            stop = None
            if tri.shape[0] == 0 and not tp and not strong:
                stop = "no_cut"
            elif len(history) > o.tail_rounds and history[-o.tail_rounds - 1] - bound < 1e-4 * max(1.0, abs(bound)):
                stop = "tail"  # tailing off: branch (MIP phase) instead of cutting further
            elif small and len(history) > o.small_tail and \
                    history[-o.small_tail - 1] - bound < o.small_tail_gap * (bound - warm_obj):
                stop = "tail"  # small component: branch and price / MIP get the rest of the time
            if small and lp_deadline is not None and clk.now() > lp_deadline and rounds > o.small_tail:
                break
            if stop is not None:
                if strong_on or small or not (o.odd_wheels or o.two_partition_general):
                    # (on components for branch and price, which does not use the cuts, the
                    # stronger LP costs more time than it saves: measured on random and
                    # equicut instances of n = 40, seeds 1-2)
                    break
                # the triangle + 2-partition LP has settled: go on with the stronger families
                strong_on = True
                history = history[-1:]
                if tri.shape[0] < max_cuts // o.strong_frac:
                    strong = _strong_cuts(X, A, P, max(25, max_cuts // 8), o.odd_wheels, o.two_partition_general)
                    clk.charge(float(n) ** 3 / SEPARATION_RATE + APEX_SECONDS * n)
                if tri.shape[0] == 0 and not tp and not strong:
                    break
            if cuts:  # drop cuts slack for 3 LP rounds in a row (keeps the LP small, avoids cycling)
                C = np.asarray(cuts)
                lhs = xv[C[:, 0]] + xv[C[:, 1]] - np.where(C[:, 2] >= 0, xv[np.maximum(C[:, 2], 0)], 0.0)
                age = np.where(lhs > 1.0 - 1e-3, 0, age + 1)
                keep = age < o.drop_age
                cuts = [c for c, k in zip(cuts, keep) if k]
                age = age[keep]
            if gcuts:
                glhs = np.array([float(coef @ xv[idx]) for idx, coef in gcuts])
                gage = np.where(glhs > 1.0 - 1e-3, 0, gage + 1)
                keep = gage < o.drop_age
                gcuts = [c for c, k in zip(gcuts, keep) if k]
                gage = gage[keep]
            new = to_cuts(tri)
            n_added += len(new)
            stat["cuts_by_family"]["triangle"] += len(new)
            stat["cuts_by_family"]["two_partition"] += len(tp)
            cuts.extend(new)
            pool_tri.update(new)
            age = np.concatenate([age, np.zeros(len(new), np.int64)])
            for v_, T_, _ in tp:
                gcuts.append(two_partition_row(v_, T_, P))
                pool_g.append(gcuts[-1])
            n_added += len(tp)
            for fam_, row_ in strong:
                gcuts.append(row_)
                pool_g.append(row_)
                stat["cuts_by_family"][fam_] += 1
            n_added += len(strong)
            gage = np.concatenate([gage, np.zeros(len(tp) + len(strong), np.int64)])

        self.cuts, self.gcuts, self.bound, self.rounds, self.n_added = cuts, gcuts, bound, rounds, n_added
        self.xv, self.tri = xv, tri
        return None

    def integral_lp(self):
        """The last LP optimum, if integral and a partition, is optimal."""
        xv, tri, X, iu, ju, n, w = self.xv, self.tri, self.X, self.iu, self.ju, self.n, self.w
        A, warm_obj, bound, rounds, n_added = self.A, self.warm_obj, self.bound, self.rounds, self.n_added
        result, rnd = self.result, self.rnd
        frac = np.abs(xv - np.round(xv)) > _EPS
        if not frac.any() and tri.shape[0] == 0:
            # integral and no violated triangle among those separated; the skipped (redundant)
            # ones are checked here, so only a true partition is accepted
            X[iu, ju] = np.round(xv)
            X[ju, iu] = X[iu, ju]
            labels = _labels_from_x(n, iu, ju, np.round(xv))
            val = float(w @ np.round(xv))
            if val >= warm_obj and separate_triangles(X, A, 1, eps=0.5).shape[0] == 0:
                return result(labels, val, rnd(bound), "optimal", lp_rounds=rounds, cuts=n_added, phase="lp")
        return None

    def branch_and_price(self):
        """Branch and price on components of at most ``colgen_max_n`` nodes."""
        o, W, A, n, deadline, integral, stat = self.o, self.W, self.A, self.n, self.deadline, self.integral, self.stat
        warm_labels, warm_obj, bound, rounds, n_added = (self.warm_labels, self.warm_obj, self.bound, self.rounds,
                                                         self.n_added)
        result, rnd = self.result, self.rnd
        if o.colgen and n <= o.colgen_max_n:
            from trustlab.solvers.colgen import branch_and_price, ensure_compiled

            clk = current_clock()
            spent = clk.excluded(ensure_compiled())  # compiled the first time it is needed: not counted
            if deadline is not None and spent:
                self.deadline = deadline = deadline + spent

            if self.finish_warm is not None:
                # a strong incumbent closes many more nodes: finish the caller's heuristic
                lab_h, val_h, self.deadline = self.finish_warm()
                self.finish_warm = None
                deadline = self.deadline
                if val_h > warm_obj:
                    warm_labels, warm_obj = np.asarray(lab_h, np.int64), float(val_h)
                    self.warm_labels, self.warm_obj = warm_labels, warm_obj
                    if warm_obj >= rnd(bound) - 1e-9:
                        return result(warm_labels, warm_obj, rnd(bound), "optimal", lp_rounds=rounds, cuts=n_added,
                                      phase="lp")

            rem = _remaining(deadline)
            root_deadline = None if rem is None else clk.now() + o.bp_share * rem
            bp = branch_and_price(W, A, warm_labels=warm_labels, warm_obj=warm_obj, deadline=deadline,
                                  root_deadline=root_deadline, integral=integral, threads=self.threads,
                                  early_branch=o.early_branch, reduce_nodes=o.reduce_nodes)
            if bp["objective"] > warm_obj:
                warm_labels, warm_obj = np.asarray(bp["labels"], np.int64), float(bp["objective"])
            bound = min(bound, bp["bound"])
            stat["nodes"] += int(bp["bp_nodes"])
            if bp.get("root_bound") is not None:  # the set-partitioning root before any branching
                rb = stat["root_bound"]
                stat["root_bound"] = bp["root_bound"] if rb is None else min(rb, bp["root_bound"])
            extra = dict(lp_rounds=rounds, cuts=n_added, bp_nodes=bp["bp_nodes"],
                         cg_iterations=bp["cg_iterations"], columns=bp["columns"],
                         early_branched=int(bp.get("early_branched", 0)),
                         node_merged=int(bp.get("node_merged", 0)), node_forbidden=int(bp.get("node_forbidden", 0)),
                         node_reduced_closed=int(bp.get("node_reduced_closed", 0)))
            if bp["status"] == "optimal":
                return result(warm_labels, warm_obj, warm_obj, "optimal", phase="branch_and_price", **extra)
            if bp["status"] == "time_limit" and (rem is None or not _remaining(deadline) > 0):
                return result(warm_labels, warm_obj, rnd(bound), "time_limit", phase="branch_and_price", **extra)
            # "gave_up" (pricing too hard) or out of its share of the time: the cutting
            # planes go on with the stronger families, then the MIP gets the remaining time
            self.bp_gave_up = True
            self.warm_labels, self.warm_obj, self.bound = warm_labels, warm_obj, bound
        return None

    def cuts_after_pricing(self):
        """After branch and price gave up: the cutting planes go on from where they
        stopped, with odd-wheel and ``|S| >= 2`` 2-partition cuts from the first round
        (option ``cuts_after_pricing``)."""
        if not (self.bp_gave_up and self.o.cuts_after_pricing):
            return None
        return self.cutting_planes() or self.integral_lp()

    def mip(self, mip_solver: str, workers: int | None):
        """The MIP over the LP's cuts (SCIP or CP-SAT), adding violated triangles lazily."""
        o, A, w, nv, iu, ju, X, n = self.o, self.A, self.w, self.nv, self.iu, self.ju, self.X, self.n
        deadline = self.deadline
        lo, hi, stat, pool_tri, pool_g = self.lo, self.hi, self.stat, self.pool_tri, self.pool_g
        warm_labels, warm_obj, bound, rounds, n_added = (self.warm_labels, self.warm_obj, self.bound, self.rounds,
                                                         self.n_added)
        cuts, gcuts = self.cuts, self.gcuts
        result, rnd, to_cuts = self.result, self.rnd, self.to_cuts
        if o.mip_cuts == "all":
            act = set(cuts)
            cuts = cuts + [c for c in pool_tri if c not in act]
            gcuts = pool_g
        best_lab, best_val = warm_labels, warm_obj
        same = warm_labels[iu] == warm_labels[ju]
        status = "time_limit"
        while True:
            rem = _remaining(deadline)
            if rem is not None and rem <= 0:
                break
            Aub = _rows(cuts, gcuts, nv)
            clk = current_clock()
            # on a work clock: a node limit (SCIP) / deterministic time (CP-SAT) from the
            # work left, the wall limit only the clock's safety stop
            work = None if not clk.work or rem is None else rem
            if mip_solver == "cpsat":
                sol, mip_bound, st_ok, proven, nodes = _mip_cpsat(w, Aub, same, clk.wall_left(deadline), workers,
                                                                  lo, hi, work=work)
            else:
                sol, mip_bound, st_ok, proven, nodes = _mip_scip(w, Aub, same, clk.wall_left(deadline), lo, hi,
                                                                 work=work)
            clk.charge(nv * MIP_NODE_SECONDS * max(1, nodes) + _lp_seconds(Aub, nv))
            stat["nodes"] += nodes
            if mip_bound is not None:
                # -inf: infeasible under the reduced-cost fixings, so nothing beats the incumbent
                bound = min(bound, mip_bound if mip_bound > -np.inf else best_val)
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
            stat["cuts_by_family"]["lazy_triangle"] += len(new)
            cuts.extend(new)
            if best_val >= rnd(bound) - 1e-9:
                break
        return result(best_lab, best_val, rnd(bound), status, lp_rounds=rounds, cuts=n_added, phase="mip")


def _strong_cuts(X, A, P, cap, odd_wheels, two_partition_general):
    """Violated odd-wheel and general 2-partition cuts at ``X`` as ``(family, (idx, coef))``
    (rows scaled to right-hand side 1; see :mod:`trustlab.solvers.cuts`)."""
    from trustlab.solvers import cuts as _cuts

    out = []
    if odd_wheels:
        out += [("odd_wheel", _cuts.odd_wheel_row(v, c, P))
                for v, c, _ in _cuts.separate_odd_wheels(X, A, cap, eps=1e-4)]
    if two_partition_general:
        out += [("two_partition_general", _cuts.two_partition_general_row(S, T, P))
                for S, T, _ in _cuts.separate_two_partition_general(X, A, cap, eps=1e-4)]
    return out


def _rows(cuts, gcuts, nv):
    """CSR matrix of the active cuts (every right-hand side is 1): triangles, then
    the other cuts (2-partition, odd-wheel: rows scaled to right-hand side 1); None if
    there are none."""
    import scipy.sparse as sp

    if not cuts and not gcuts:
        return None
    rr, cc, vv = [], [], []
    m = 0
    if cuts:
        C = np.asarray(cuts, np.int64)
        m = C.shape[0]
        has3 = C[:, 2] >= 0
        rr += [np.arange(m), np.arange(m), np.flatnonzero(has3)]
        cc += [C[:, 0], C[:, 1], C[has3, 2]]
        vv += [np.ones(2 * m), -np.ones(int(has3.sum()))]
    for idx, coef in gcuts:
        rr.append(np.full(idx.size, m))
        cc.append(idx)
        vv.append(coef)
        m += 1
    return sp.csr_matrix((np.concatenate(vv), (np.concatenate(rr), np.concatenate(cc))), shape=(m, nv))


def _certificate(w, Aub, y, lo, hi):
    """Weak-duality bound ``sum(y) + sum_p max(c_p lo_p, c_p hi_p)`` with ``c = w - A^T y``,
    valid for any ``y >= 0`` (every rhs is 1) over ``lo <= x <= hi``; returns (bound, c)."""
    y = np.maximum(np.asarray(y, np.float64), 0.0)
    c = w - Aub.T @ y if Aub is not None else w.astype(np.float64)
    return float(y.sum() + np.maximum(c * lo, c * hi).sum()), c


def _fix_by_reduced_cost(val, c, lo, hi, incumbent, integral) -> int:
    """Reduced-cost fixing from the certificate ``val`` and its reduced costs ``c``.

    Forcing a free ``x_p`` to the other bound lowers the certificate by ``|c_p|``, so if
    ``val - |c_p|`` cannot beat the incumbent (by 1 with integer weights), every
    solution better than the incumbent has ``x_p`` at its LP bound: fix it there. The
    optimum is then at most ``max(bound of the restricted problem, incumbent)``.
    """
    thresh = incumbent + 1.0 - 1e-6 if integral else incumbent - 1e-9 * max(1.0, abs(incumbent))
    free = (lo < hi)
    to0 = free & (c < 0) & (val + c < thresh)
    to1 = free & (c > 0) & (val - c < thresh)
    hi[to0] = 0.0
    lo[to1] = 1.0
    return int(to0.sum() + to1.sum())


def _lp_seconds(Aub, nv: int) -> float:
    """Reference seconds one LP solve is charged on a work clock: ``LP_SECONDS * (nnz +
    nv) ** LP_POWER`` (fitted to HiGHS's interior point on the cutting-plane LPs of 40-300
    nodes; within about a factor of 2), or ``LP_ROWS_SECONDS * rows ** LP_ROWS_POWER`` when
    larger (LPs with more than ~10,000 cut rows, whose factorisations the size law
    undercharged 3-6x; approximate)."""
    if Aub is None:
        return LP_SECONDS * float(nv) ** LP_POWER
    return max(LP_SECONDS * float(int(Aub.nnz) + nv) ** LP_POWER,
               LP_ROWS_SECONDS * float(Aub.shape[0]) ** LP_ROWS_POWER)


def _solve_lp(w, Aub, nv, rem, method, lo=None, hi=None):
    """max w.x over ``lo <= x <= hi`` and ``Aub x <= 1``; (x, certificate, reduced costs)
    or None if not solved to optimality."""
    from scipy.optimize import linprog

    lo = np.zeros(nv) if lo is None else lo
    hi = np.ones(nv) if hi is None else hi
    opts = {} if rem is None else {"time_limit": max(rem, 1e-3)}
    bounds = np.stack([lo, hi], axis=1)
    if Aub is not None:
        res = linprog(-w, A_ub=Aub, b_ub=np.ones(Aub.shape[0]), bounds=bounds, method=method,
                      options=opts)
    else:
        res = linprog(-w, bounds=bounds, method=method, options=opts)
    current_clock().charge(_lp_seconds(Aub, nv))  # counted work on a work clock (approximate)
    if res.status == 2 and np.any(lo > 0):
        # infeasible: only possible through fixings at 1 (x = 0 is feasible otherwise)
        return None, -np.inf, None
    if res.status != 0 or res.x is None:
        return None
    # a certificate independent of solver tolerances (weak duality): for any y >= 0,
    # sum(y) + sum(max(c lo, c hi)) bounds max w.x over the LP and so the CPP
    y = None if Aub is None else -np.asarray(res.ineqlin.marginals)
    val, c = _certificate(w, Aub, y if y is not None else np.zeros(0), lo, hi)
    return np.clip(res.x, 0.0, 1.0), val, c


def _mip_scip(w, Aub, same, rem, lo=None, hi=None, work=None):
    from ortools.linear_solver import pywraplp

    s = pywraplp.Solver.CreateSolver("SCIP")
    nv = w.size
    x = [s.BoolVar("") for _ in range(nv)]
    if lo is not None:
        for p in np.flatnonzero((lo > 0) | (hi < 1)).tolist():
            x[p].SetBounds(float(lo[p]), float(hi[p]))
    o = s.Objective()
    for p in range(nv):
        if w[p] != 0.0:
            o.SetCoefficient(x[p], float(w[p]))
    o.SetMaximization()
    if Aub is not None:
        ind, ptr, dat = Aub.indices, Aub.indptr, Aub.data
        for r in range(Aub.shape[0]):
            ct = s.Constraint(-s.infinity(), 1.0)
            for q in range(ptr[r], ptr[r + 1]):
                ct.SetCoefficient(x[int(ind[q])], float(dat[q]))
    s.SetHint(x, [1.0 if t else 0.0 for t in same])
    if rem is not None:
        s.SetTimeLimit(int(rem * 1000) + 1)
    if work is not None:  # a work budget (reference seconds): SCIP's node limit (deterministic)
        s.SetSolverSpecificParametersAsString(f"limits/nodes = {_mip_nodes(work, nv)}\n")
    st = s.Solve()
    if st in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        sol = np.fromiter((v.solution_value() for v in x), np.float64, nv).round()
        return sol, s.Objective().BestBound(), True, st == pywraplp.Solver.OPTIMAL, int(s.nodes())
    if st == pywraplp.Solver.INFEASIBLE and lo is not None:
        return None, -np.inf, False, False, int(s.nodes())  # nothing beats the incumbent under the fixings
    return None, None, False, False, int(s.nodes())


def _mip_nodes(work: float, nv: int) -> int:
    """The MIP nodes a work budget of ``work`` reference seconds allows on ``nv`` variables."""
    return int(max(1, min(2**31 - 1, work / (MIP_NODE_SECONDS * max(1, nv)))))


def _mip_cpsat(w, Aub, same, rem, workers, lo=None, hi=None, work=None):
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    nv = w.size
    x = [m.new_bool_var("") for _ in range(nv)]
    if lo is not None:
        for p in np.flatnonzero(lo > 0).tolist():
            m.add(x[p] == 1)
        for p in np.flatnonzero(hi < 1).tolist():
            m.add(x[p] == 0)
    if Aub is not None:
        ind, ptr, dat = Aub.indices, Aub.indptr, Aub.data
        for r in range(Aub.shape[0]):
            sl = slice(ptr[r], ptr[r + 1])
            # rows are scaled to right-hand side 1; odd-wheel and general 2-partition
            # rows carry coefficients +-1/r: multiply back by r for integer coefficients
            sc = 1.0 / float(np.abs(dat[sl]).min())
            m.add(cp_model.LinearExpr.weighted_sum([x[int(q)] for q in ind[sl]],
                                                   [int(round(c * sc)) for c in dat[sl]]) <= int(round(sc)))
    m.maximize(sum(float(w[p]) * x[p] for p in range(nv) if w[p] != 0.0))
    for p in range(nv):
        m.add_hint(x[p], bool(same[p]))
    s = cp_model.CpSolver()
    configure_cpsat(s, workers)
    if rem is not None:
        s.parameters.max_time_in_seconds = float(rem)
    if work is not None:  # a work budget: CP-SAT's deterministic time (about seconds)
        s.parameters.max_deterministic_time = max(1e-3, float(work))
    st = s.solve(m)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sol = np.array([s.value(v) for v in x], np.float64)
        return sol, s.best_objective_bound, True, st == cp_model.OPTIMAL, int(s.num_branches)
    if st == cp_model.INFEASIBLE and lo is not None:
        return None, -np.inf, False, False, int(s.num_branches)  # nothing beats the incumbent
    return None, None, False, False, int(s.num_branches)


def configure_cpsat(solver, workers: int | None) -> None:
    """The documented CP-SAT configuration: 1 worker + linearization_level=2 below 8
    workers, the default portfolio (with ``workers`` threads) from 8 up."""
    w = 1 if workers is None else int(workers)
    if w >= 8:
        solver.parameters.num_workers = w
    else:
        solver.parameters.num_workers = 1
        solver.parameters.linearization_level = 2
