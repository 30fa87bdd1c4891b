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
  columns, run in slices of ~0.2 s so that it stops at the deadline). The heuristic stages are only a
  shortcut: every bound comes from an exact pricing. Dual smoothing (Wentges) around
  the best dual so far cuts the degenerate tailing.
* **Bound (certificate).** For any ``pi >= 0`` the Lagrangian bound
  ``sum(pi) + m * max(0, max_S rc(S))`` is valid (every cluster has >= 1 of the ``m``
  nodes); it is computed whenever the pricing is solved exactly, so no LP tolerance
  enters the proof. With integer weights a node is closed once the bound, rounded
  down, does not beat the incumbent; columns with ``rc <= (incumbent + 1 - sum(pi)) / m``
  cannot change that and are not generated.
* **Branching** (Ryan & Foster) on the pair of (super-)nodes whose "together" value
  ``sum_{C ∋ a, b} lam_C`` is closest to 1/2: one child **contracts** the pair into one
  super-node (they share a cluster), the other **forbids** it. Either child is again a
  CPP instance, so the same column generation applies. Best-bound search; columns are
  inherited by the children where they respect the branching.

Exact up to the stated time limit. An exact pricing first runs a short search
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
import time

import numpy as np

from trustlab.kernels.cpp_heuristic import objective
from trustlab.kernels.cpp_pricing import price_local, price_resume, price_start, price_tabu


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


def branch_and_price(
    W: np.ndarray,
    A: np.ndarray,
    *,
    warm_labels: np.ndarray,
    warm_obj: float,
    deadline: float | None = None,
    integral: bool = False,
    k_price: int = 40,
    alpha: float = 0.5,
    max_price_nodes: int = 10_000_000_000,
    short_price_nodes: int = 2_000_000,
    max_iterations: int | None = None,
    random_state: int = 0,
    warm_master: bool = True,
    tabu_pricing: bool = True,
) -> dict:
    """Branch and price on one component; see the module docstring.

    ``max_iterations`` caps the master LP solves over the whole search (default
    ``100 * n``): degenerate instances whose column generation tails off give up
    instead of running on without a time limit. ``short_price_nodes`` /
    ``max_price_nodes`` cap the first and the full exact pricing search (the full one
    is also bounded by the deadline); ``tabu_pricing`` turns the tabu pricing stage on.

    Returns a dict with ``labels``, ``objective``, ``bound``, ``status`` (``optimal``,
    ``time_limit`` or ``gave_up``), ``bp_nodes``, ``cg_iterations``, ``columns``.
    """
    n = W.shape[0]
    W = np.where(A, W, 0.0).astype(np.float64)
    np.fill_diagonal(W, 0.0)
    big = 1.0 + float(np.abs(W).sum())
    rng = np.random.default_rng(random_state)
    pool = _Master(W)
    best_lab = np.asarray(warm_labels, np.int64).copy()
    best_val = float(warm_obj)
    for c in np.unique(best_lab):
        pool.add(best_lab == c)
    for i in range(n):
        e = np.zeros(n, bool)
        e[i] = True
        pool.add(e)
    forb0 = ~A.copy()
    np.fill_diagonal(forb0, False)
    stats = {"bp_nodes": 0, "cg_iterations": 0}
    max_it = 100 * n if max_iterations is None else int(max_iterations)

    def timed_out() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    rate = [5e6]  # exact-pricing search nodes per second, re-measured on every slice

    def price(Wc: np.ndarray, pi: np.ndarray, k: int, cap: int, state=None):
        """The exact pricing (:func:`price_start` / :func:`price_resume`) for at most
        ``cap`` search nodes, run in slices of about 0.2 s (at the measured node rate)
        with the clock read in between, so it stops at the deadline; ``state`` (from an
        earlier call on the same ``Wc, pi, k``) continues that search. Returns
        :func:`price_topk`'s ``(vals, masks, n_found, nodes, complete)`` and the state."""
        if state is None:
            state = price_start(Wc, pi, k)
        done, complete = 0, False
        while done < cap:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            step = min(cap - done, max(100_000, int(rate[0] * 0.2)))
            t0 = time.perf_counter()
            nodes, complete = price_resume(state, 0.0, step)
            dt = time.perf_counter() - t0
            done += nodes
            if dt > 0.01 and not complete:
                rate[0] = max(1e5, nodes / dt)
            if complete:
                break
        return state[5], state[6], int(state[7][0]), done, complete, state

    def solve_node(groups: list[np.ndarray], forb: np.ndarray):
        """Column generation at one node (super-nodes ``groups``, forbidden super-node
        pairs ``forb``). Returns ``(bound, lam, rows, column ids, z)`` when converged,
        ``("pruned", bound)`` when the bound cannot beat the incumbent, or the status
        string ``"time_limit"`` / ``"gave_up"``."""
        m = len(groups)
        G = np.zeros((m, n), bool)
        for a, g in enumerate(groups):
            G[a, g] = True
        Gf = G.astype(np.float64)
        Wc = Gf @ W @ Gf.T
        inner = np.diag(Wc).copy() / 2.0
        Wc = np.where(forb, -big, Wc)
        np.fill_diagonal(Wc, 0.0)
        center = None
        center_lb = np.inf
        node_lb = np.inf
        master = None
        if warm_master and _highs_core() is not None:
            try:
                master = _WarmMaster(m)
            except (AttributeError, TypeError):  # pragma: no cover - a SciPy whose private binding differs
                master = None
        while True:
            if timed_out():
                return "time_limit"
            if stats["cg_iterations"] >= max_it:
                return "gave_up"
            # columns valid here: unions of groups, no forbidden pair
            cnt = pool.masks.astype(np.int32) @ Gf.T.astype(np.int32)  # (cols, m) members per group
            sizes = np.array([g.size for g in groups])
            whole = cnt == sizes[None, :]
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
            if master is not None:
                try:
                    out = master.solve(vals, rows, ok_idx)
                except (AttributeError, TypeError):  # pragma: no cover - see above: solve from scratch
                    master = None
            if master is None:
                out = _lp(vals, rows, m)
            stats["cg_iterations"] += 1
            if out is None:
                return "gave_up"
            z, lam, pi_out = out
            target = _floor_target(best_val, integral)
            delta = max(1e-9, (target - pi_out.sum()) / m)
            pc = pi_out - inner  # pricing node penalty: rc(S) = sum Wc(S) + sum (inner - pi)
            added = 0
            # 1) cheap: local search at the RMP dual
            starts = np.concatenate([np.arange(m), rng.integers(0, m, m)]).astype(np.int64)
            lv, lm = price_local(Wc, pc, starts, delta)
            for q in np.flatnonzero(lv > delta):
                if _add_group_col(pool, lm[q], groups):
                    added += 1
            if added:
                continue
            # 1b) tabu search from the best local optima (and the empty set): finds the
            # columns a 1-flip search cannot reach (a pair is often needed before a set
            # pays its duals), at the smoothed dual first when there is a centre
            if tabu_pricing:
                top = np.argsort(-lv)[:4]
                sm = np.vstack([lm[top], np.zeros((1, m), bool)])
                for a_ in ((alpha, 0.0) if center is not None else (0.0,)):
                    pi_sep = pi_out if a_ == 0.0 else a_ * center + (1 - a_) * pi_out
                    tv, tm, tnf = price_tabu(Wc, pi_sep - inner, sm, delta if a_ == 0.0 else 0.0, k_price,
                                             30 * m, max(3, m // 10), int(rng.integers(2**31)))
                    added += _add_priced(pool, groups, Wc, pc, delta, tm[:tnf])
                    if added:
                        break
                if added:
                    continue
            # 2) exact, at the smoothed dual (then at the RMP dual on a misprice)
            complete = True
            for a_ in ((alpha, 0.0) if center is not None else (0.0,)):
                pi_sep = pi_out if a_ == 0.0 else a_ * center + (1 - a_) * pi_out
                # a short search first: far from the optimal duals the exact pricing is
                # hard, but the columns it finds still move the master on (no bound is
                # taken from an incomplete search)
                pv, pm, nf, done0, complete, st = price(Wc, pi_sep - inner, k_price,
                                                        max(1, min(short_price_nodes, max_price_nodes)))
                if not complete and nf == 0:  # the full search goes on from where the short one stopped
                    pv, pm, nf, _nodes, complete, st = price(Wc, pi_sep - inner, k_price,
                                                             max(1, max_price_nodes - done0), st)
                if not complete and nf == 0:
                    return "time_limit" if timed_out() else "gave_up"
                if complete:
                    rc_star = float(pv[0]) if nf else 0.0
                    lb = float(pi_sep.sum()) + m * max(0.0, rc_star)
                    if lb < center_lb:
                        center_lb, center = lb, pi_sep.copy()
                    node_lb = min(node_lb, lb)
                    if node_lb < target:
                        return ("pruned", node_lb)
                added += _add_priced(pool, groups, Wc, pc, delta, pm[:nf])
                if added:
                    break
            if not added:
                if not complete:
                    return "gave_up"  # an incomplete pricing found nothing that helps
                # converged: no column with rc > delta at the RMP dual
                return (node_lb, lam, rows, ok_idx, z)

    # ------------------------------------------------------------------ search
    heap: list = []
    counter = 0
    root = ([np.array([i]) for i in range(n)], forb0)
    heapq.heappush(heap, (-np.inf, counter, root))
    status = "optimal"
    while heap:
        negb, _, (groups, forb) = heapq.heappop(heap)
        parent_b = -negb
        if parent_b < _floor_target(best_val, integral):
            continue
        stats["bp_nodes"] += 1
        out = solve_node(groups, forb)
        if isinstance(out, str):
            status = out
            heapq.heappush(heap, (negb, counter, (groups, forb)))
            break
        if out[0] == "pruned":
            continue
        node_lb, lam, rows, ok_idx, z = out
        node_lb = min(node_lb, parent_b)
        # integral LP solution -> incumbent
        m = len(groups)
        together = (rows.T * lam) @ rows  # (m, m) pair "together" values
        np.fill_diagonal(together, 0.0)
        frac = np.abs(together - np.round(together))
        if frac.max() <= 1e-6:
            chosen = ok_idx[lam > 0.5]
            lab = np.full(n, -1, np.int64)
            for t, c in enumerate(chosen):
                lab[pool.masks[c]] = t
            lab[lab < 0] = np.arange(len(chosen), len(chosen) + int((lab < 0).sum()))
            val = float(objective(W, lab))
            if val > best_val:
                best_val, best_lab = val, lab
            if val >= z - 1e-6 * max(1.0, abs(z)):
                continue  # the node's LP optimum is this partition
            status = "gave_up"  # pragma: no cover - a non-basic LP answer; no pair to branch on
            heapq.heappush(heap, (negb, counter, (groups, forb)))
            break
        if node_lb < _floor_target(best_val, integral):
            continue
        # Ryan-Foster branching on the most fractional allowed pair
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
        counter += 1
        heapq.heappush(heap, (-node_lb, counter, (g_new, f_new)))
        # child 2: forbid a-b
        f2 = forb.copy()
        f2[a, b] = f2[b, a] = True
        counter += 1
        heapq.heappush(heap, (-node_lb, counter, (groups, f2)))
    if heap:
        open_b = max(-h[0] for h in heap)
        bound = max(best_val, open_b)
    else:
        bound = best_val
        status = "optimal"
    if integral and np.isfinite(bound):
        bound = math.floor(bound + 1e-6)
    if best_val >= bound - 1e-9 * max(1.0, abs(bound)):
        status = "optimal"
    return dict(labels=best_lab, objective=best_val, bound=float(bound), status=status,
                columns=int(pool.vals.size), **stats)


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
