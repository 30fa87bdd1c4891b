"""Branch and price for the clique partitioning problem (set-partitioning formulation).

The CPP as a set-partitioning programme over *clusters* (cliques of the graph):
``max sum_C w(C) lam_C`` s.t. every node lies in at most one chosen cluster (singletons
have weight 0, so "at most" and "exactly" agree). Its LP relaxation dominates the
triangle LP and every family of CPP cuts we separate; on random dense instances
(CP-Lib ``corr40-*``) it usually meets the optimum at the root, where triangle and
2-partition cuts leave gaps of 2-3 %.

* **Column generation.** The restricted master LP (HiGHS through the binding SciPy
  ships, kept between iterations: new columns are appended and the LP is re-solved by
  primal simplex from the last optimal basis; ``scipy.optimize.linprog`` from scratch
  where that binding is missing) gives node duals ``pi >= 0``; the pricing problem ``max rc(S) = w(S) - pi(S)`` is an
  unconstrained binary quadratic programme, solved first by 1-flip local search, then by
  a short tabu search (:func:`trustlab.kernels.cpp_pricing.price_tabu`, which reaches
  the sets a 1-flip search cannot: a pair that pays its duals only together) and,
  when both find nothing, exactly by :func:`trustlab.kernels.cpp_pricing.price_topk`'s
  search (Numba branch and bound with dynamic branching and a bound from linear upper
  bounds of the pair terms, see :mod:`trustlab.kernels.cpp_pricing`; the ``k`` best
  columns, run in slices of ~0.2 s so that it stops at the deadline). With ``threads``
  > 1 a long exact search is split into subproblems (its open subtrees, then its own
  branching decisions) searched by that many threads (:class:`_SplitPricing`; same
  answer, measured 2.0x faster on 2 cores on an equicut n = 50 root pricing). The heuristic stages are only a
  shortcut: every bound comes from an exact pricing. Dual smoothing (Wentges) around
  the best dual so far cuts the degenerate tailing.
* **Bound (certificate).** For any ``pi >= 0`` the Lagrangian bound
  ``sum(pi) + m * max(0, max_S rc(S))`` is valid (every cluster has >= 1 of the ``m``
  nodes); it is computed whenever the pricing is solved exactly, so no LP tolerance
  enters the proof. With integer weights a node is closed once the bound, rounded
  down, does not beat the incumbent. With ``t = (incumbent + 1 - sum(pi)) / m > 0``
  that holds as soon as every set has ``rc(S) <= t |S|`` (each node is covered at most
  once, so ``sum_C lam_C |C| <= m``): the exact search runs at the duals shifted by
  ``t`` (``pi + t``, a valid Lagrangian point whose search is easier), and one that
  finds no set with positive reduced cost there closes the node.
* **Branching** (Ryan & Foster) on the pair of (super-)nodes whose "together" value
  ``sum_{C ∋ a, b} lam_C`` is closest to 1/2: one child **contracts** the pair into one
  super-node (they share a cluster), the other **forbids** it. Either child is again a
  CPP instance, so the same column generation applies. Best-first search (on the
  node's bound, or its master's value where the bound is inherited); columns are
  inherited by the children where they respect the branching.
* **Node reduction** (``reduce_nodes``, default on). Before its column generation, a
  node's problem (super-nodes, contracted weights, forbidden pairs) is reduced: pairs
  that every partition beating the incumbent keeps together (apart) are contracted
  (forbidden) by :func:`~trustlab.solvers.reduction.bound_fixings`, then the
  optimum-preserving rules of :func:`~trustlab.solvers.reduction.reduce_problem` run; a
  node whose fixings contradict each other is closed, and one of at most 3 super-nodes
  is solved by trying its partitions. The node's LP bound stays a bound on what the
  node can still give above the incumbent, so the search stays exact (data reduction
  at every search node, as in Böcker, Briesemeister & Klau's exact cluster editing).
* **Early branching.** The exact pricing proof is only needed where it can close a
  node. When the restricted master's value already reaches the target (incumbent + 1
  with integer weights), the node's LP, which is at least that value, cannot close it:
  once the heuristic pricing finds nothing (and a short exact search of
  ``early_price_nodes`` neither), the node is branched on at once, its bound inherited
  from its parent. The proofs are left to the nodes whose master falls below the
  target, where the slack ``t`` above makes them easier. An integral master solution
  is a partition and becomes the incumbent when better.

Exact up to the stated time limit. On a work clock (:mod:`trustlab.solvers._clock`,
the default of :func:`trustlab.partition`) the limits are counted work: pricing nodes,
master LPs, the cheap pricing stages and the node reductions are charged reference
seconds, and a pricing search gets no more nodes than the work left allows, so where
it stops does not depend on the machine's speed. An exact pricing first runs a short search
(``short_price_nodes``: far from the optimal duals it finds improving columns
quickly); if that finds none, the same search goes on as the full one, whose node cap
is ``max_price_nodes`` and, with a deadline, the nodes the time left allows at the
measured search rate. The
number of master LPs is capped too (``max_iterations``). When a cap is hit no bound
is claimed for the open nodes and the search gives up (the caller falls back to
branch and cut). A pricing search stopped by its cap that still found improving
columns adds them and column generation goes on; only a complete pricing yields a
bound.
"""
from __future__ import annotations

import heapq
import math
import threading
import time

import numpy as np

from trustlab.kernels._jit import warm_once
from trustlab.kernels.cpp_heuristic import objective
from trustlab.kernels.cpp_pricing import price_local, price_resume, price_start, price_tabu
from trustlab.solvers._clock import LOCAL_RATE, MASTER_RATE, PRICING_RATE, REDUCE_RATE
from trustlab.solvers._clock import current as current_clock


def _compile() -> None:
    W = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    pi = np.zeros(3)
    price_resume(price_start(W, pi, 2), 0.0, 100)
    price_local(W, pi, np.arange(3, dtype=np.int64), 1e-9)
    price_tabu(W, pi, np.zeros((1, 3), np.bool_), 1e-9, 2, 10, 1, 1)
    objective(W, np.zeros(3, np.int64))


def ensure_compiled() -> float:
    """Compile (or load from the cache) the pricing kernels of :func:`branch_and_price`
    on a 3-node instance with the argument types of a real run, once per process; the
    seconds it took (0.0 when already done), which the caller adds to its deadline."""
    return warm_once("cpp_pricing", _compile)


#: most share of branch and price's time the node reduction may take (past it, nodes go unreduced)
NODE_REDUCE_SHARE = 0.1


def _floor_target(incumbent: float, integral: bool) -> float:
    """The bound value a node must reach to be closed."""
    if integral:
        return incumbent + 1.0 - 1e-6
    return incumbent + 1e-9 * max(1.0, abs(incumbent))


class _Master:
    """Column pool over the original nodes (bool masks) with their weights; storage grows
    by doubling, ``masks`` / ``vals`` are views of the filled part."""

    def __init__(self, W: np.ndarray):
        self.W = W
        self.n = W.shape[0]
        self._masks = np.zeros((64, self.n), bool)
        self._vals = np.zeros(64)
        self.size = 0
        self.keys: set = set()

    @property
    def masks(self) -> np.ndarray:
        return self._masks[: self.size]

    @property
    def vals(self) -> np.ndarray:
        return self._vals[: self.size]

    def add(self, mask: np.ndarray) -> bool:
        key = np.packbits(mask).tobytes()
        if key in self.keys:
            return False
        self.keys.add(key)
        if self.size == self._vals.size:
            self._masks = np.concatenate([self._masks, np.zeros_like(self._masks)])
            self._vals = np.concatenate([self._vals, np.zeros_like(self._vals)])
        idx = np.flatnonzero(mask)
        self._masks[self.size] = mask
        self._vals[self.size] = self.W[np.ix_(idx, idx)].sum() / 2.0
        self.size += 1
        return True


def _lp(vals: np.ndarray, rows: np.ndarray, m: int):
    """Restricted master LP: max vals.lam, rows lam <= 1, lam >= 0 -> (z, lam, pi)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    Acsc = sp.csc_matrix(rows.T.astype(np.float64))
    res = linprog(-vals, A_ub=Acsc, b_ub=np.ones(m), bounds=(0, None), method="highs-ds")
    if res.status != 0:
        return None
    return -res.fun, res.x, np.maximum(-res.ineqlin.marginals, 0.0)


def _highs_core():
    """HiGHS's Python binding (the copy SciPy ships, else the ``highspy`` package), or
    None: then every master LP is solved from scratch by ``scipy.optimize.linprog``."""
    try:
        from scipy.optimize._highspy import _core
    except ImportError:  # pragma: no cover - depends on the SciPy build
        try:
            from highspy import _core
        except ImportError:
            return None
    return _core if hasattr(_core, "_Highs") else None


class _WarmMaster:
    """The restricted master LP of one node kept in HiGHS (highspy) between column
    generation iterations: new columns are appended and the LP re-solved by primal
    simplex from the previous optimal basis (the column set of a node only grows)."""

    def __init__(self, m: int):
        highspy = self.hs = _highs_core()
        h = self.h = highspy._Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", 4)  # primal: the old basis stays primal feasible
        lp = highspy.HighsLp()
        lp.num_row_ = m
        lp.row_lower_ = np.full(m, -highspy.kHighsInf)
        lp.row_upper_ = np.ones(m)
        h.passModel(lp)
        self.m = m
        self.ids = np.zeros(0, np.int64)

    def solve(self, vals: np.ndarray, rows: np.ndarray, ids: np.ndarray):
        """Same contract as :func:`_lp`; ``ids`` name the columns (pool indices)."""
        k = self.ids.size
        if ids.size < k or not np.array_equal(ids[:k], self.ids):
            return _lp(vals, rows, self.m)  # not an extension of the model: solve from scratch
        new = slice(k, ids.size)
        if ids.size > k:
            R = rows[new]
            nz = np.nonzero(R)
            starts = np.searchsorted(nz[0], np.arange(R.shape[0])).astype(np.int32)
            self.h.addCols(R.shape[0], -vals[new].astype(np.float64), np.zeros(R.shape[0]),
                           np.full(R.shape[0], self.hs.kHighsInf), nz[0].size, starts,
                           nz[1].astype(np.int32), np.ones(nz[0].size))
            self.ids = ids.copy()
        self.h.run()
        if self.h.getModelStatus() != self.hs.HighsModelStatus.kOptimal:
            return _lp(vals, rows, self.m)
        sol = self.h.getSolution()
        lam = np.asarray(sol.col_value, np.float64)
        pi = np.maximum(-np.asarray(sol.row_dual, np.float64), 0.0)
        return float(vals @ lam), lam, pi


class _SplitPricing:
    """One exact pricing ``max rc(S) = W(S) - pi(S)`` (sets with ``rc > lb``, the ``k``
    best), searched in slices (:meth:`run`; a later call continues) by one thread or,
    once a call with ``threads`` > 1 has given the plain search ``try_nodes``, split
    into subproblems searched by that many threads (the Numba search releases the GIL).

    The split keeps the work already done: the open parts of the plain depth-first
    search (the pending "out" child at every level of its current path, and the node it
    stopped at) become subproblems, which are then split further by the search's own
    branching rule (the node with the largest cheap bound term, "in" and "out"),
    breadth first, up to about ``per_thread * threads`` subproblems. A subproblem with forced-in
    set ``F`` is again a pricing problem over its free nodes, with
    ``pi'_q = pi_q - W(F, q)`` and the constant ``rc(F)``, searched with the threshold
    ``lb - rc(F)``; ``F`` itself is a candidate set. Each subproblem keeps its own top
    ``k``, and their union holds the overall top ``k``, so the merged answer is exact
    once every subproblem is complete. A node budget is shared equally by the open
    subproblems, so a budget-limited search finds the same sets however the threads
    were scheduled.
    """

    per_thread = 16
    """Subproblems per thread after a split."""
    try_nodes = 20_000
    """Nodes the plain search gets before a search with ``threads`` > 1 is split (most
    pricings finish well within them)."""

    def __init__(self, W: np.ndarray, pi: np.ndarray, k: int, lb: float):
        self.W, self.pi = W, np.asarray(pi, np.float64)
        self.k, self.lb, self.n = k, lb, W.shape[0]
        self.extra: list[tuple[float, np.ndarray]] = []  # candidate sets found outside the subproblems
        self.split = False
        self.tried = 0  # nodes the plain search has spent
        self._use([(np.arange(self.n), np.zeros(0, np.int64), 0.0, self.pi)])

    def _use(self, subs):
        W, k = self.W, self.k
        self.subs = subs
        self.states = [price_start(np.ascontiguousarray(W[np.ix_(fr, fr)]), pp, k) for fr, _, _, pp in subs]
        self.done = [False] * len(subs)

    def _open_parts(self):
        """The plain search's open subtrees as subproblems ``(free, F, rc(F), pi')``."""
        und, g, val, stage, d0, bvar = (self.states[0][0], self.states[0][3], self.states[0][9],
                                        self.states[0][10], int(self.states[0][11][0]), self.states[0][12])
        n, lb = self.n, self.lb
        subs = []
        F = []  # nodes taken "in" on the path above depth d
        for d in range(d0 + 1):
            if d == d0:  # the node the search stopped at (not yet looked at)
                free = und[: n - d].copy()
                if d > 0 and stage[d - 1] == 1 and val[d] > lb + 1e-9:
                    mask = np.zeros(n, bool)
                    mask[F] = True
                    self.extra.append((float(val[d]), mask))  # it would have recorded its set
                subs.append((free, np.asarray(F, np.int64), float(val[d]), -g[d, free]))
                break
            if stage[d] == 1:  # the "in" child is being searched: the "out" child is open
                free = und[: n - d - 1].copy()
                subs.append((free, np.asarray(F, np.int64), float(val[d]), -g[d, free]))
                F.append(int(bvar[d]))
        return subs

    def _split(self, threads: int):
        """Replace the plain search by its open parts, split further into about
        ``per_thread * threads`` subproblems (what it found is kept)."""
        W, lb, n = self.W, self.lb, self.n
        self.extra += self._found()
        subs = [] if self.done[0] else self._open_parts()
        Wp = np.maximum(W, 0.0)

        def terms(fr, pp):  # the search's cheap bound terms (positive pairs split half-half)
            return -pp + 0.5 * Wp[np.ix_(fr, fr)].sum(axis=1)

        def cheap(sub):  # the cheap bound of a subproblem
            fr, _, c, pp = sub
            return c + np.maximum(0.0, terms(fr, pp)).sum()

        subs = [sub for sub in subs if cheap(sub) > lb + 1e-9]
        want = self.per_thread * threads
        while 0 < len(subs) < want and any(sub[0].size > 8 for sub in subs):
            nxt = []
            for free, F, const, p in subs:
                if free.size <= 8:
                    nxt.append((free, F, const, p))
                    continue
                a = int(np.argmax(terms(free, p)))  # the search's own branching node
                j = int(free[a])
                rest = np.delete(free, a)
                F_in, c_in = np.append(F, j), const - float(p[a])
                if c_in > lb + 1e-9:
                    mask = np.zeros(n, bool)
                    mask[F_in] = True
                    self.extra.append((c_in, mask))
                for sub in ((rest, F_in, c_in, np.delete(p, a) - W[j, rest]), (rest, F, const, np.delete(p, a))):
                    if cheap(sub) > lb + 1e-9:  # else nothing in it passes the threshold
                        nxt.append(sub)
            subs = nxt
        subs.sort(key=lambda sub: -cheap(sub))  # most promising first
        self._use(subs)
        self.split = True

    def run(self, cap: int, deadline: float | None, rate: list, threads: int = 1):
        """Search for about ``cap`` more nodes (all threads together), in slices of about
        0.2 s with the clock read in between, stopping at ``deadline``; with ``threads``
        > 1, split once the plain search has spent ``try_nodes``. Returns
        ``(vals, masks, n_found, nodes, complete)`` as :func:`price_topk` (the merged top
        ``k``; masks over all ``n`` nodes). ``rate[0]``: search nodes per second and
        thread (sizes the slices; re-measured on every slice). Without a deadline the
        answer depends only on the calls' budgets, not on the threads' timing."""
        spent = 0
        if not self.split:
            first = cap if threads == 1 else min(cap, max(0, self.try_nodes - self.tried))
            spent = self._search(first, deadline, rate, 1)
            self.tried += spent
            if all(self.done) or spent >= cap or (deadline is not None and time.perf_counter() >= deadline):
                return (*self._merged(), spent, all(self.done))
            self._split(threads)
        spent += self._search(cap - spent, deadline, rate, threads)
        return (*self._merged(), spent, all(self.done))

    def _search(self, cap: int, deadline: float | None, rate: list, threads: int) -> int:
        """Run the open subproblems for about ``cap`` nodes in all: each gets an equal
        share (so what a budget-limited call finds does not depend on how the threads
        were scheduled), in slices, the threads taking subproblems in order."""
        lock = threading.Lock()
        open_ = [q for q in range(len(self.subs)) if not self.done[q]]
        share = -(-cap // max(1, len(open_)))
        spent = [0]
        nxt = [0]

        def work():
            while True:
                with lock:
                    if nxt[0] >= len(open_):
                        return
                    q = open_[nxt[0]]
                    nxt[0] += 1
                c, used = self.subs[q][2], 0
                while used < share:
                    if deadline is not None and time.perf_counter() >= deadline:
                        return  # a later call goes on with this subproblem
                    step = min(share - used, max(100_000, int(rate[0] * 0.2)))
                    t0 = time.perf_counter()
                    nodes, complete = price_resume(self.states[q], self.lb - c, step)
                    dt = time.perf_counter() - t0
                    used += nodes
                    with lock:
                        spent[0] += nodes
                        if dt > 0.01 and not complete:
                            rate[0] = max(1e5, nodes / dt)
                    if complete:
                        self.done[q] = True
                        break

        if threads == 1 or len(open_) <= 1:
            work()
        else:
            ts = [threading.Thread(target=work, daemon=True) for _ in range(min(threads, len(open_)))]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        return spent[0]

    def _found(self):
        out = []
        for (fr, F, c, _), st in zip(self.subs, self.states):
            for q in range(int(st[7][0])):
                mask = np.zeros(self.n, bool)
                mask[F] = True
                mask[fr[st[6][q]]] = True
                out.append((c + float(st[5][q]), mask))
        return out

    def _merged(self):
        cand = sorted(self.extra + self._found(), key=lambda vm: -vm[0])  # stable: ties keep their order
        vals = np.full(self.k, -np.inf)
        masks = np.zeros((self.k, self.n), bool)
        seen: set = set()
        q = 0
        for v, mk in cand:
            key = mk.tobytes()
            if key in seen:
                continue  # found by the plain search before the split and again after it
            seen.add(key)
            vals[q] = v
            masks[q] = mk
            q += 1
            if q == self.k:
                break
        return vals, masks, q


def branch_and_price(
    W: np.ndarray,
    A: np.ndarray,
    *,
    warm_labels: np.ndarray,
    warm_obj: float,
    deadline: float | None = None,
    root_deadline: float | None = None,
    integral: bool = False,
    k_price: int = 40,
    alpha: float = 0.5,
    max_price_nodes: int = 10_000_000_000,
    short_price_nodes: int = 2_000_000,
    max_iterations: int | None = None,
    random_state: int = 0,
    warm_master: bool = True,
    tabu_pricing: bool = True,
    threads: int = 1,
    early_branch: bool = True,
    early_price_nodes: int = 200_000,
    reduce_nodes: bool = True,
) -> dict:
    """Branch and price on one component; see the module docstring and :class:`_BranchAndPrice`.

    ``max_iterations`` caps the master LP solves over the whole search (default
    ``100 * n``): degenerate instances whose column generation tails off give up
    instead of running on without a time limit. ``short_price_nodes`` /
    ``max_price_nodes`` cap the first and the full exact pricing search (the full one
    is also bounded by the deadline); ``tabu_pricing`` turns the tabu pricing stage on.
    ``threads``: threads of the exact pricing (:class:`_SplitPricing`).
    ``early_branch``: a node whose restricted master already reaches the target (so
    its LP cannot close it) and whose heuristic pricing found nothing is branched on
    without the exact pricing proof (an exact search of at most ``early_price_nodes``
    nodes still looks for columns first); its bound stays its parent's.
    ``root_deadline`` (None: ``deadline``): the first exact pricing proof (the root's
    convergence, or a node closed by its bound) must come by then, else the search
    stops there with ``time_limit``; after it, branching runs on to ``deadline``.
    ``reduce_nodes``: reduce every node's problem before its column generation
    (:meth:`_BranchAndPrice.reduce_node`: the bound fixings of
    :func:`~trustlab.solvers.reduction.bound_fixings` against the incumbent, then the
    optimum-preserving pair rules of :func:`~trustlab.solvers.reduction.reduce_problem`).

    Returns a dict with ``labels``, ``objective``, ``bound``, ``status`` (``optimal``,
    ``time_limit`` or ``gave_up``), ``root_bound`` (the converged root's bound, None if
    the root did not converge), ``bp_nodes``, ``cg_iterations``, ``early_branched``
    (nodes branched on without a pricing proof), ``columns``, and from the node
    reduction ``node_merged`` / ``node_forbidden`` (super-node merges and forbidden pairs
    it added, summed over nodes) and ``node_reduced_closed`` (nodes it closed: their
    fixings contradict each other, so nothing there beats the incumbent, or at most 3
    super-nodes were left and their partitions were tried).
    """
    return _BranchAndPrice(
        W, A, warm_labels=warm_labels, warm_obj=warm_obj, deadline=deadline, root_deadline=root_deadline,
        integral=integral, k_price=k_price, alpha=alpha, max_price_nodes=max_price_nodes,
        short_price_nodes=short_price_nodes, max_iterations=max_iterations, random_state=random_state,
        warm_master=warm_master, tabu_pricing=tabu_pricing, threads=threads, early_branch=early_branch,
        early_price_nodes=early_price_nodes, reduce_nodes=reduce_nodes,
    ).run()


class _Node:
    """One branch-and-price node: super-nodes ``groups`` (the contracted pairs so far),
    forbidden super-node pairs ``forb``, the contracted weights ``Wc`` (forbidden pairs at
    ``-big``), each super-node's inner weight, and the state its column generation keeps
    between iterations (the dual-smoothing centre, the best bound so far, the warm master)."""

    def __init__(self, groups: list[np.ndarray], forb: np.ndarray, W: np.ndarray, big: float, warm_master: bool):
        n = W.shape[0]
        self.groups, self.forb = groups, forb
        self.m = m = len(groups)
        G = np.zeros((m, n), bool)
        for a, g in enumerate(groups):
            G[a, g] = True
        self.Gf = G.astype(np.float64)
        Wc = self.Gf @ W @ self.Gf.T
        self.inner = np.diag(Wc).copy() / 2.0
        Wc = np.where(forb, -big, Wc)
        np.fill_diagonal(Wc, 0.0)
        self.Wc = Wc
        self.sizes = np.array([g.size for g in groups])
        self.center = None  # the best dual so far (Wentges smoothing) and its bound
        self.center_lb = np.inf
        self.node_lb = np.inf  # the best bound proven at this node
        self.master = None
        if warm_master and _highs_core() is not None:
            try:
                self.master = _WarmMaster(m)
            except (AttributeError, TypeError):  # pragma: no cover - a SciPy whose private binding differs
                self.master = None


class _BranchAndPrice:
    """Branch and price on one component, in named stages (see the module docstring).

    :meth:`run` is the best-first search over nodes (:meth:`search`, :meth:`branch`,
    :meth:`result`); :meth:`solve_node` is one node's column generation, whose iteration
    goes through :meth:`restricted_master` (the master LP over the valid pool columns),
    :meth:`integral_master` (an integral master solution is an incumbent), then the pricing
    stages, cheapest first: :meth:`price_local`, :meth:`price_tabu`,
    :meth:`early_branching` and :meth:`price_exact` (the only one that yields bounds).
    """

    def __init__(self, W, A, *, warm_labels, warm_obj, deadline, root_deadline, integral, k_price, alpha,
                 max_price_nodes, short_price_nodes, max_iterations, random_state, warm_master, tabu_pricing,
                 threads, early_branch, early_price_nodes, reduce_nodes=True):
        self.n = n = W.shape[0]
        self.reduce_nodes = reduce_nodes
        # this thread's solver clock: wall time, or counted work (trustlab.solvers._clock)
        self.clk = current_clock()
        self.t_start = self.clk.now() if self.clk.work else time.perf_counter()
        self.reduce_seconds = 0.0  # spent in reduce_node (in the clock's units)
        # integer weights: every contracted weight is an exact float sum (no tolerance needed)
        vals = W[np.asarray(A, bool)]
        self.exact_int = bool(np.all(vals == np.round(vals)) and np.abs(vals).sum() < 2.0**52)
        W = np.where(A, W, 0.0).astype(np.float64)
        np.fill_diagonal(W, 0.0)
        self.W = W
        self.big = 1.0 + float(np.abs(W).sum())
        self.rng = np.random.default_rng(random_state)
        self.pool = pool = _Master(W)
        self.best_lab = np.asarray(warm_labels, np.int64).copy()
        self.best_val = float(warm_obj)
        for c in np.unique(self.best_lab):
            pool.add(self.best_lab == c)
        for i in range(n):
            e = np.zeros(n, bool)
            e[i] = True
            pool.add(e)
        forb0 = ~A.copy()
        np.fill_diagonal(forb0, False)
        self.forb0 = forb0
        self.stats = {"bp_nodes": 0, "cg_iterations": 0, "early_branched": 0, "node_merged": 0, "node_forbidden": 0,
                      "node_reduced_closed": 0}
        self.max_it = 100 * n if max_iterations is None else int(max_iterations)
        self.deadline = deadline
        # the first pricing proof must come by root_deadline; after it the search runs to deadline
        self.limit = deadline if root_deadline is None else root_deadline
        self.rate = [5e6]  # exact-pricing search nodes per second, re-measured on every slice
        self.integral, self.k_price, self.alpha, self.threads = integral, k_price, alpha, threads
        self.max_price_nodes, self.short_price_nodes = max_price_nodes, short_price_nodes
        self.warm_master, self.tabu_pricing = warm_master, tabu_pricing
        self.early_branch, self.early_price_nodes = early_branch, early_price_nodes

    def timed_out(self) -> bool:
        return self.limit is not None and self.clk.now() > self.limit

    def price_run(self, pr: "_SplitPricing", cap: int):
        """:meth:`_SplitPricing.run` for at most ``cap`` nodes under ``self.limit``. On a
        work clock the nodes are also capped by the work left (at :data:`PRICING_RATE`
        nodes per reference second), the threads read only the clock's safety stop, and
        the nodes searched are charged: the outcome depends on the counts alone."""
        clk = self.clk
        if not clk.work:
            return pr.run(cap, self.limit, self.rate, self.threads)
        left = clk.left(self.limit)
        if left is not None:
            cap = max(1, min(cap, int(math.ceil(left * PRICING_RATE))))
        out = pr.run(cap, clk.kernel_stop(None), [PRICING_RATE], self.threads)
        clk.charge(max(1, out[3]) / PRICING_RATE)
        return out

    # ------------------------------------------------------------ one node
    def solve_node(self, groups: list[np.ndarray], forb: np.ndarray):
        """Column generation at one node (super-nodes ``groups``, forbidden super-node
        pairs ``forb``). Returns ``(bound, lam, rows, column ids, z)`` when converged,
        ``("pruned", bound)`` when the bound cannot beat the incumbent, or the status
        string ``"time_limit"`` / ``"gave_up"``."""
        node = _Node(groups, forb, self.W, self.big, self.warm_master)
        while True:
            if self.timed_out():
                return "time_limit"
            if self.stats["cg_iterations"] >= self.max_it:
                return "gave_up"
            lp = self.restricted_master(node)
            if lp is None:
                return "gave_up"
            z, lam, pi_out, rows, ok_idx = lp
            self.integral_master(z, lam, ok_idx)
            target = _floor_target(self.best_val, self.integral)
            delta = max(1e-9, (target - pi_out.sum()) / node.m)
            pc = pi_out - node.inner  # pricing node penalty: rc(S) = sum Wc(S) + sum (inner - pi)
            if self.price_local(node, pc, delta):
                continue
            if self.tabu_pricing and self.price_tabu(node, pi_out, pc, delta):
                continue
            if self.early_branch and z >= target and _fractional(_together(lam, rows)):
                out = self.early_branching(node, lp, pc, delta)
                if out is None:
                    continue
                return out
            out = self.price_exact(node, lp, pc, delta, target)
            if out is not None:
                return out

    def restricted_master(self, node: _Node):
        """Solve the master LP over the pool columns valid at ``node`` (unions of its
        super-nodes, no forbidden pair): ``(z, lam, pi, rows, column ids)``, or ``None``
        when the LP fails."""
        pool, forb, Gf = self.pool, node.forb, node.Gf
        cnt = pool.masks.astype(np.int32) @ Gf.T.astype(np.int32)  # (cols, m) members per group
        whole = cnt == node.sizes[None, :]
        ok = np.all((cnt == 0) | whole, axis=1)
        rows = whole[ok]
        if forb.any():
            bad = np.einsum("ca,ab,cb->c", rows.astype(np.float64), forb.astype(np.float64),
                            rows.astype(np.float64)) > 0
            keep = ~bad
            ok_idx = np.flatnonzero(ok)[keep]
            rows = rows[keep]
        else:
            ok_idx = np.flatnonzero(ok)
        vals = pool.vals[ok_idx]
        out = None
        if node.master is not None:
            try:
                out = node.master.solve(vals, rows, ok_idx)
            except (AttributeError, TypeError):  # pragma: no cover - see _Node: solve from scratch
                node.master = None
        if node.master is None:
            out = _lp(vals, rows, node.m)
        self.clk.charge((rows.size + node.m * node.m) / MASTER_RATE)  # counted work (approximate)
        self.stats["cg_iterations"] += 1
        if out is None:
            return None
        z, lam, pi_out = out
        return z, lam, pi_out, rows, ok_idx

    def integral_master(self, z: float, lam: np.ndarray, ok_idx: np.ndarray) -> None:
        """An integral master solution is a partition: a new incumbent when better."""
        if z > self.best_val + 1e-9 and np.all(np.abs(lam - np.round(lam)) <= 1e-6):
            self.take_incumbent(_partition_labels(self.pool, ok_idx[lam > 0.5], self.n))

    def take_incumbent(self, lab: np.ndarray) -> float:
        """Keep ``lab`` when it beats the incumbent; returns its objective."""
        val = float(objective(self.W, lab))
        if val > self.best_val:
            self.best_val, self.best_lab = val, lab
        return val

    def price_local(self, node: _Node, pc: np.ndarray, delta: float) -> bool:
        """Stage 1, cheap: 1-flip local search at the master's dual; whether columns were added."""
        m = node.m
        self.clk.charge(40.0 * m * m / LOCAL_RATE)  # 2m starts of a 1-flip search (approximate)
        starts = np.concatenate([np.arange(m), self.rng.integers(0, m, m)]).astype(np.int64)
        lv, lm = price_local(node.Wc, pc, starts, delta)
        node.local = (lv, lm)
        added = 0
        for q in np.flatnonzero(lv > delta):
            if _add_group_col(self.pool, lm[q], node.groups):
                added += 1
        return added > 0

    def price_tabu(self, node: _Node, pi_out: np.ndarray, pc: np.ndarray, delta: float) -> bool:
        """Stage 1b: tabu search from the best local optima (and the empty set); finds the
        columns a 1-flip search cannot reach (a pair is often needed before a set pays its
        duals), at the smoothed dual first when there is a centre. Whether columns were added."""
        lv, lm = node.local
        m, alpha = node.m, self.alpha
        self.clk.charge(150.0 * m * m / LOCAL_RATE)  # tabu walks of 30m moves (approximate)
        top = np.argsort(-lv)[:4]
        sm = np.vstack([lm[top], np.zeros((1, m), bool)])
        for a_ in ((alpha, 0.0) if node.center is not None else (0.0,)):
            pi_sep = pi_out if a_ == 0.0 else a_ * node.center + (1 - a_) * pi_out
            tv, tm, tnf = price_tabu(node.Wc, pi_sep - node.inner, sm, delta if a_ == 0.0 else 0.0, self.k_price,
                                     30 * m, max(3, m // 10), int(self.rng.integers(2**31)))
            if _add_priced(self.pool, node.groups, node.Wc, pc, delta, tm[:tnf]):
                return True
        return False

    def early_branching(self, node: _Node, lp: tuple, pc: np.ndarray, delta: float):
        """Stage 1c: the restricted master already reaches the target, so the node's LP
        (>= the master's value) cannot close it and it is branched on whatever the exact
        pricing says; a short exact search still looks for columns (a better master,
        better branching), its proof is not waited for. ``None`` when columns were added
        (column generation goes on), else the node's outcome."""
        z, lam, pi_out, rows, ok_idx = lp
        pr = _SplitPricing(node.Wc, pc, self.k_price, 0.0)
        pv, pm, nf, _nodes, complete = self.price_run(pr, max(1, self.early_price_nodes))
        if nf and _add_priced(self.pool, node.groups, node.Wc, pc, delta, pm[:nf]):
            return None
        if not complete:
            self.stats["early_branched"] += 1
            return (node.node_lb, lam, rows, ok_idx, z)  # node_lb: inf unless an earlier proof
        # complete: the Lagrangian bound at the master's dual (converged at z when
        # no set has rc > 0)
        lb = float(pi_out.sum()) + node.m * max(0.0, float(pv[0]) if nf else 0.0)
        return (min(node.node_lb, lb), lam, rows, ok_idx, z)

    def price_exact(self, node: _Node, lp: tuple, pc: np.ndarray, delta: float, target: float):
        """Stage 2: exact pricing, at the smoothed dual (then at the master's dual on a
        misprice); the only stage that proves bounds. ``None`` when columns were added
        (column generation goes on), else the node's outcome."""
        z, lam, pi_out, rows, ok_idx = lp
        m, alpha = node.m, self.alpha
        complete = True
        for a_ in ((alpha, 0.0) if node.center is not None else (0.0,)):
            pi_sep = pi_out if a_ == 0.0 else a_ * node.center + (1 - a_) * pi_out
            # a short search first: far from the optimal duals the exact pricing is
            # hard, but the columns it finds still move the master on (no bound is
            # taken from an incomplete search)
            # the node stays open only if some set has rc(S) > lbp * |S|, where
            # sum(pi) + m * lbp is the target (every node is covered at most once,
            # so sum_C lam_C |C| <= m): price at the duals shifted by lbp, where that
            # is rc > 0 (an easier search than rc > lbp); one that finds none prunes
            lbp = max(0.0, (target - float(pi_sep.sum())) / m)
            pr = _SplitPricing(node.Wc, pi_sep + lbp - node.inner, self.k_price, 0.0)
            pv, pm, nf, done0, complete = self.price_run(pr, max(1, min(self.short_price_nodes,
                                                                         self.max_price_nodes)))
            if not complete and nf == 0:  # the full search goes on from where the short one stopped
                pv, pm, nf, _nodes, complete = self.price_run(pr, max(1, self.max_price_nodes - done0))
            if not complete and nf == 0:
                return "time_limit" if self.timed_out() else "gave_up"
            if complete:
                if nf == 0 and lbp > 0.0:
                    return ("pruned", min(node.node_lb, target))  # rc(S) <= lbp |S|: bound <= target
                rc_star = float(pv[0]) if nf else 0.0  # at the shifted duals
                lb = float(pi_sep.sum()) + m * lbp + m * max(0.0, rc_star)
                if lb < node.center_lb:
                    node.center_lb, node.center = lb, pi_sep.copy()
                node.node_lb = min(node.node_lb, lb)
                if node.node_lb < target:
                    return ("pruned", node.node_lb)
            if _add_priced(self.pool, node.groups, node.Wc, pc, delta, pm[:nf]):
                return None
        if not complete:
            return "gave_up"  # an incomplete pricing found nothing that helps
        # converged: no column with rc > delta at the RMP dual
        return (node.node_lb, lam, rows, ok_idx, z)

    # ------------------------------------------------------------ the search
    def run(self) -> dict:
        """Best-first search, then the result dict (see :func:`branch_and_price`)."""
        heap, status, root_bound = self.search()
        return self.result(heap, status, root_bound)

    def search(self) -> tuple[list, str, float | None]:
        """Best-first branch and price. Heap entries: ``(-estimate, counter, bound, node)``,
        best-first on the estimate (the node's LP bound, or its master's value where the
        bound is its parent's: early branching), pruned by the bound. Returns the open
        nodes, the status and the converged root's bound (before branching)."""
        heap: list = []
        self.counter = 0
        root = ([np.array([i]) for i in range(self.n)], self.forb0)
        heapq.heappush(heap, (-np.inf, self.counter, np.inf, root))
        status = "optimal"
        root_bound = None  # the converged root's bound (before branching)
        root_done = False
        while heap:
            entry = heapq.heappop(heap)
            _, _, parent_b, (groups, forb) = entry
            if parent_b < _floor_target(self.best_val, self.integral):
                continue
            if self.reduce_nodes:
                reduced = self.reduce_node(groups, forb)
                if reduced is None:  # nothing at this node beats the incumbent
                    self.stats["node_reduced_closed"] += 1
                    if not root_done:
                        root_bound = self.best_val
                        root_done = True
                        self.limit = self.deadline
                    continue
                groups, forb = reduced
                entry = (entry[0], entry[1], entry[2], (groups, forb))
            self.stats["bp_nodes"] += 1
            out = self.solve_node(groups, forb)
            if isinstance(out, str):
                status = out
                heapq.heappush(heap, entry)
                break
            if out[0] == "pruned" or np.isfinite(out[0]):
                # an exact pricing proof went through (the root converged, or a node was
                # closed): the pricing is tractable here, branching may use the whole time
                self.limit = self.deadline
            if out[0] == "pruned":
                if not root_done:
                    root_bound = self.best_val
                root_done = True
                continue
            node_lb, lam, rows, ok_idx, z = out
            node_lb = min(node_lb, parent_b)
            if not root_done and np.isfinite(node_lb):
                root_bound = node_lb
            root_done = True
            together = _together(lam, rows)
            if not _fractional(together):  # integral LP solution -> incumbent
                val = self.take_incumbent(_partition_labels(self.pool, ok_idx[lam > 0.5], self.n))
                if val >= z - 1e-6 * max(1.0, abs(z)):
                    continue  # the node's LP optimum is this partition
                status = "gave_up"  # pragma: no cover - a non-basic LP answer; no pair to branch on
                heapq.heappush(heap, entry)
                break
            if node_lb < _floor_target(self.best_val, self.integral):
                continue
            self.branch(heap, groups, forb, together, node_lb, z)
        return heap, status, root_bound

    def reduce_node(self, groups: list[np.ndarray], forb: np.ndarray):
        """Data reduction of one node's problem (its super-nodes, their contracted weights
        and forbidden pairs), applied to a fixed point of at most a few rounds:

        1. the bound fixings (:func:`~trustlab.solvers.reduction.bound_fixings`): pairs
           that every partition of the node reaching the target (the incumbent + 1 for
           integer weights) keeps together are contracted, pairs it keeps apart are
           forbidden. The node is only searched for such partitions, so this is exact
           here; if the fixings contradict each other (a forbidden pair inside a
           contracted group) no such partition exists and the node is closed (None);
        2. the optimum-preserving pair rules of
           :func:`~trustlab.solvers.reduction.reduce_problem` (heavy edge, similar
           neighbourhood, heavy non-edge): some optimal partition of the node survives.

        Returns the new ``(groups, forb)``, or None when the node is closed. It takes at
        most about :data:`NODE_REDUCE_SHARE` of the search's time: past that, nodes of
        more than 3 super-nodes are left as they are (skipping a reduction is always exact)."""
        clk = self.clk
        now = clk.now() if clk.work else time.perf_counter()
        if len(groups) > 3 and self.reduce_seconds > NODE_REDUCE_SHARE * (now - self.t_start) + 0.25:
            return groups, forb
        clk.charge(4.0 * len(groups) * self.n * self.n / REDUCE_RATE)  # the contractions (approximate)
        groups, forb = self._reduce_node(groups, forb)
        self.reduce_seconds += (clk.now() if clk.work else time.perf_counter()) - now
        if groups is not None:
            for g in groups:  # every super-node is a column of the node's master (cliques by construction)
                if g.size > 1:
                    mask = np.zeros(self.n, bool)
                    mask[g] = True
                    self.pool.add(mask)
            return groups, forb
        return None

    def _contracted(self, groups: list[np.ndarray], forb: np.ndarray):
        """(G, G W Gᵀ, allowed pairs) of a node whose super-nodes are ``groups``."""
        G = np.zeros((len(groups), self.n))
        for a, g in enumerate(groups):
            G[a, g] = 1.0
        A = ~forb
        np.fill_diagonal(A, False)
        return G, G @ self.W @ G.T, A

    def _reduce_node(self, groups: list[np.ndarray], forb: np.ndarray):
        """:meth:`reduce_node` without the new super-nodes' columns: ``(None, None)`` when closed."""
        from trustlab.solvers.reduction import bound_fixings, reduce_problem

        W = self.W
        for _ in range(4):
            m = len(groups)
            if m <= 3:
                return self.enumerate_node(groups, forb), None
            _, Wc, A = self._contracted(groups, forb)
            offset = float(np.trace(Wc)) / 2.0
            Wc = np.where(A, Wc, 0.0)
            tol = 0.0 if self.exact_int else 1e-9 * (1.0 + float(np.abs(W).sum()))
            merge, forbid = bound_fixings(Wc, A, offset, _floor_target(self.best_val, self.integral), tol=tol)
            # contract the merges (union-find over super-nodes), forbid the rest
            root = np.arange(m)

            def find(x):
                while root[x] != x:
                    root[x] = root[root[x]]
                    x = root[x]
                return x

            for a, b in zip(*np.nonzero(merge)):
                ra, rb = find(int(a)), find(int(b))
                if ra != rb:
                    root[max(ra, rb)] = min(ra, rb)
            lab = np.array([find(a) for a in range(m)])
            F = forb | forbid | forbid.T
            if np.any(F & (lab[:, None] == lab[None, :]) & ~np.eye(m, dtype=bool)):
                return None, None  # a pair must be both together and apart: nothing beats the incumbent
            n_fix = int(m - np.unique(lab).size) + int(np.triu(F & ~forb, 1).sum())
            _, lab = np.unique(lab, return_inverse=True)
            k = int(lab.max()) + 1
            new_groups = [np.sort(np.concatenate([groups[a] for a in np.flatnonzero(lab == c)])) for c in range(k)]
            H = np.zeros((k, m), bool)
            H[lab, np.arange(m)] = True
            new_forb = (H.astype(np.int64) @ F.astype(np.int64) @ H.T.astype(np.int64)) > 0
            np.fill_diagonal(new_forb, False)
            self.stats["node_merged"] += m - k
            self.stats["node_forbidden"] += int(np.triu(new_forb, 1).sum()) - int(
                np.triu((H.astype(np.int64) @ forb.astype(np.int64) @ H.T.astype(np.int64)) > 0, 1).sum())
            groups, forb = new_groups, new_forb
            # the optimum-preserving rules on the node's problem
            m = len(groups)
            if m <= 3:
                return self.enumerate_node(groups, forb), None
            G, Wc, A = self._contracted(groups, forb)
            mass = None if self.exact_int else np.where(A, G @ np.abs(W) @ G.T, 0.0)
            red = reduce_problem(np.where(A, Wc, 0.0), A, mass=mass)
            if not red.changed and n_fix == 0:
                return groups, forb
            if red.changed:
                self.stats["node_merged"] += m - len(red.groups)
                self.stats["node_forbidden"] += int(red.stats.get("forbidden", 0))
                groups = [np.sort(np.concatenate([groups[a] for a in g.tolist()])) for g in red.groups]
                forb = ~red.A
                np.fill_diagonal(forb, False)
        return groups, forb

    def enumerate_node(self, groups: list[np.ndarray], forb: np.ndarray):
        """A node of at most 3 super-nodes, solved by trying its (at most 5) partitions:
        the best becomes the incumbent when better, and the node is closed (None)."""
        m = len(groups)
        cands = {1: [(0,)], 2: [(0, 0), (0, 1)],
                 3: [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (0, 1, 2)]}[m]
        for c in cands:
            c = np.asarray(c)
            if np.any(forb & (c[:, None] == c[None, :])):
                continue
            lab = np.empty(self.n, np.int64)
            for a, g in enumerate(groups):
                lab[g] = c[a]
            self.take_incumbent(lab)
        return None

    def branch(self, heap: list, groups: list[np.ndarray], forb: np.ndarray, together: np.ndarray,
               node_lb: float, z: float) -> None:
        """Ryan-Foster branching on the most fractional allowed pair: one child contracts
        it (the pair shares a cluster), the other forbids it."""
        m = len(groups)
        score = np.where(forb | np.eye(m, dtype=bool), np.inf, np.abs(together - 0.5))
        a, b = np.unravel_index(int(np.argmin(score)), score.shape)
        a, b = int(min(a, b)), int(max(a, b))
        # child 1: contract a and b
        keep = [g for t, g in enumerate(groups) if t not in (a, b)]
        idx = [t for t in range(m) if t not in (a, b)]
        g_new = keep + [np.concatenate([groups[a], groups[b]])]
        f_new = np.zeros((m - 1, m - 1), bool)
        f_new[: m - 2, : m - 2] = forb[np.ix_(idx, idx)]
        f_new[m - 2, : m - 2] = forb[a, idx] | forb[b, idx]
        f_new[: m - 2, m - 2] = f_new[m - 2, : m - 2]
        est = min(node_lb, z)
        self.counter += 1
        heapq.heappush(heap, (-est, self.counter, node_lb, (g_new, f_new)))
        # child 2: forbid a-b
        f2 = forb.copy()
        f2[a, b] = f2[b, a] = True
        self.counter += 1
        heapq.heappush(heap, (-est, self.counter, node_lb, (groups, f2)))

    def result(self, heap: list, status: str, root_bound: float | None) -> dict:
        """The bound (the best open node's, or the incumbent when none is open), the final
        status and the statistics."""
        best_val, integral = self.best_val, self.integral
        if heap:
            open_b = max(h[2] for h in heap)
            bound = max(best_val, open_b)
        else:
            bound = best_val
            status = "optimal"
        if integral and np.isfinite(bound):
            bound = math.floor(bound + 1e-6)
        if best_val >= bound - 1e-9 * max(1.0, abs(bound)):
            status = "optimal"
        if root_bound is not None:
            root_bound = max(best_val, root_bound)
            if integral:
                root_bound = math.floor(root_bound + 1e-6)
        return dict(labels=self.best_lab, objective=best_val, bound=float(bound), status=status,
                    columns=int(self.pool.vals.size), root_bound=None if root_bound is None else float(root_bound),
                    **self.stats)


def _partition_labels(pool: _Master, chosen: np.ndarray, n: int) -> np.ndarray:
    """Labels of the partition made of the pool columns ``chosen`` (disjoint) and
    singletons for the nodes they leave out."""
    lab = np.full(n, -1, np.int64)
    for t, c in enumerate(chosen):
        lab[pool.masks[c]] = t
    lab[lab < 0] = np.arange(len(chosen), len(chosen) + int((lab < 0).sum()))
    return lab


def _together(lam: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The (m, m) pair "together" values ``sum_{C ∋ a, b} lam_C`` of a master solution
    (zero diagonal)."""
    together = (rows.T * lam) @ rows
    np.fill_diagonal(together, 0.0)
    return together


def _fractional(together: np.ndarray) -> bool:
    """Whether some pair's "together" value is fractional (else the solution is a partition)."""
    return bool(np.abs(together - np.round(together)).max() > 1e-6)


def _add_priced(pool: _Master, groups: list[np.ndarray], Wc: np.ndarray, pc: np.ndarray, delta: float,
                masks: np.ndarray) -> int:
    """Add the priced sets (rows of ``masks``, over the node's super-nodes) whose reduced
    cost at the master's own duals (``pc``: pricing penalty per super-node) exceeds
    ``delta``; returns how many were new columns."""
    added = 0
    for S in masks:
        rc_out = float(Wc[np.ix_(S, S)].sum() / 2.0 - pc[S].sum())
        if rc_out > delta and _add_group_col(pool, S, groups):
            added += 1
    return added


def _add_group_col(pool: _Master, S: np.ndarray, groups: list[np.ndarray]) -> bool:
    mask = np.zeros(pool.n, bool)
    for a in np.flatnonzero(S):
        mask[groups[a]] = True
    return pool.add(mask)
