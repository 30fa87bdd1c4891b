"""Exact data reduction for clique partitioning (weighted cluster editing).

The problem: maximise the total weight ``sum w_uv`` of the within-cluster pairs of a
partition whose clusters are cliques of the allowed pairs (a forbidden pair, ``A[u, v]``
False, is a weight of minus infinity). Maximising it is weighted cluster editing up to
a constant, whose kernelisation rules (Böcker, Briesemeister, Bui, Truß 2009; Böcker,
Briesemeister, Klau 2011; Böcker & Baumbach 2013) carry over; each rule below is
proved here for this form, with forbidden pairs. ``P(u)`` is the sum of the positive
allowed weights at ``u``, ``N(u)`` that of the absolute negative ones, ``Al(u)`` the
allowed partners of ``u``. In every proof ``u`` lies in cluster ``C_u`` and ``v`` in
``C_v != C_u`` of an optimal partition, and a move of ``u`` or ``v`` is shown to lose
nothing, so *some* optimal partition keeps them together (or apart):

* **Heavy edge, both ends**: merge ``u, v`` if ``3 w_uv >= P(u) + P(v)`` (Böcker's
  ``s(uv) >= sum_{N(u)-v} s(uw) + sum_{N(v)-u} s(vw)``). Taking ``u`` and ``v`` out of
  their clusters into the new cluster ``{u, v}`` gains ``w_uv`` and loses at most
  ``(P(u) - w_uv) + (P(v) - w_uv)``; it is always feasible.
* **Heavy edge, single end**: merge ``u, v`` if ``2 w_uv >= P(u) + N(u)`` and
  ``Al(v) - {u}`` is a subset of ``Al(u)``. Moving ``u`` into ``C_v`` (feasible by the
  subset condition) changes the objective by ``w_uv + sum_{C_v-v} w_uz -
  sum_{C_u-u} w_uz >= w_uv - sum_{z != u, v} |w_uz|``.
* **Similar neighbourhoods** (twins, generalised): merge ``u, v`` if ``w_uv > 0``,
  ``Al(u) - {v} = Al(v) - {u}`` and ``2 w_uv >= sum_{z != u, v} |w_uz - w_vz|``. The
  moves "``u`` into ``C_v``" and "``v`` into ``C_u``" (both feasible) change the
  objective by ``d1 + d2 = 2 w_uv + sum_{C_v-v} (w_uz - w_vz) + sum_{C_u-u} (w_vz -
  w_uz) >= 0``, so one of them loses nothing. Twins (identical signed rows) with a
  positive mutual weight are the case ``sum = 0``.
* **Almost clique** (Böcker, Briesemeister, Klau 2011), tested on given candidate
  sets ``C`` (e.g. the clusters of a quick heuristic, then each with its weakest
  member peeled off in turn): merge ``C`` if it has no forbidden pair and
  ``mincut(C) >= sum_{u,v in C, w_uv < 0} |w_uv| + sum_{u in C, z not in C, w_uz > 0} w_uz``,
  ``mincut`` the minimum cut of ``C``'s positive weights. If an optimal partition
  splits ``C`` into two or more pieces, taking ``C`` out of its clusters into one new
  cluster gains the cut pairs inside ``C`` (at least ``mincut`` minus the negative
  pairs) and loses at most the positive pairs from ``C`` to the rest.
* **Heavy non-edge** (a forbid, applied once the merges reach their fixed point): a pair
  with ``w_uv <= 0`` and ``-w_uv >= P(u)`` is forbidden. Moving ``u`` out of a cluster
  that holds ``v`` to a singleton changes the objective by ``-w_uv - sum_{C-u-v} w_uz
  >= -w_uv - P(u) >= 0``.
* **Components**: after merging, a super-vertex's weight to ``z`` is the sum of its
  members' weights, so the positive-edge graph may fall apart; its components are
  solved separately (the decomposition theorem of :func:`~trustlab.solvers.partition`),
  and a super-vertex without a positive edge is a cluster of its own.

**Against an incumbent** (inside a branch and bound, :func:`bound_fixings`): Böcker et
al.'s induced-cost rules with the budget taken from a bound. A partition's value is the
sum of the positive weights less its *loss* (positive pairs cut, negative pairs kept);
separating ``u, v`` loses at least ``icf(uv)`` on the pairs at ``u`` or ``v``, joining
them at least ``icp(uv)``, and a packing of conflict triples that avoid both
(:func:`conflict_packing`) bounds the loss elsewhere. A pair whose separation (joining)
leaves every partition below the incumbent's target is merged (forbidden). These keep
*every* partition that beats the incumbent (not just one optimum), so they are applied
all at once; :mod:`trustlab.solvers.colgen` runs them, then the rules above, at every
branch-and-price node. On dense unit-weight instances (CP-Lib ``ClusEdit``) none of them
fires: the packing explains about half of the loss, and the slack left is 50-160 where
``icf``/``icp`` are about 20 (``bench/results/reduction.md``).

A merged pair ``u, v`` becomes one vertex ``S`` with ``w(S, z) = w(u, z) + w(v, z)``
(forbidden if either pair is) and the constant ``w_uv`` goes to :attr:`Reduction.offset`.
Partitions of the reduced problem are exactly the partitions of the original that keep
every merged group together, with the objective lowered by the offset; a forbid only
removes partitions. So the reduced optimum plus the offset is the original optimum,
and every bound of the reduced problem plus the offset bounds the original one: a
proven-optimal reduced solution, expanded by :meth:`Reduction.expand`, is a proven
optimal original one.

Rules are applied in rounds on the current (already reduced) problem: all pairs that
pass a rule are collected, and a vertex-disjoint subset of them (heaviest first) is
merged. Each rule's condition survives the merge of a disjoint pair (``P``, ``N`` and
the row differences can only shrink, the allowed-set conditions are kept), so the whole
batch is exact; rounds repeat until nothing merges. The forbids of the last pass are
mutually independent (forbidding a non-positive pair changes no ``P``).

*Floating point.* Weights are floats and merged weights are rounded sums. With integer
weights whose absolute sum is below ``2**52`` every sum is exact and the conditions are
tested exactly (ties merge). Otherwise a condition must hold with a margin of ``1e-9``
times the total absolute original weight involved (tracked per merged pair), far above
the rounding error of any sum, so a rule never fires on a case that rounding decides.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["Reduction", "reduce_problem", "reduce_component", "min_cut", "conflict_packing", "bound_fixings"]

#: relative margin of every rule's inequality on non-integer weights
REL_TOL = 1e-9
#: integer weights whose absolute sum stays below this are summed exactly in float64
_EXACT_INT = 2.0**52


@dataclass
class Reduction:
    """An exactly reduced clique partitioning problem and the way back.

    Attributes
    ----------
    groups : list of numpy.ndarray
        Original node indices of every reduced vertex (a partition of ``0..n-1``).
    W : numpy.ndarray
        Reduced weights, ``(k, k)``, 0 on the diagonal and on forbidden pairs.
    A : numpy.ndarray
        Allowed pairs of the reduced problem, ``(k, k)`` boolean, False on the diagonal.
    offset : float
        Total original weight of the pairs inside the groups: original objective =
        reduced objective + offset.
    parts : list of numpy.ndarray
        Positive-edge components of the reduced problem (reduced vertex indices),
        largest first; each is solved on its own.
    stats : dict
        ``nodes_before``, ``nodes_after``, ``largest_part`` (nodes of the largest part),
        merges per rule (``heavy_edge_both``, ``heavy_edge_single``,
        ``similar_neighbourhood``, ``almost_clique``: nodes merged into another),
        ``forbidden`` (pairs forbidden by the heavy non-edge rule), ``rounds``, ``seconds``.
    """

    groups: list
    W: np.ndarray
    A: np.ndarray
    offset: float
    parts: list
    stats: dict = field(default_factory=dict)
    #: total absolute original weight behind every entry of :attr:`W` (None for exact
    #: integer arithmetic): the rounding scale a further reduction of ``W`` must respect
    mass: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_original(self) -> int:
        return int(sum(g.size for g in self.groups))

    @property
    def changed(self) -> bool:
        """Whether any vertex was merged or pair forbidden."""
        return len(self.groups) < self.n_original or self.stats.get("forbidden", 0) > 0

    def then(self, inner: "Reduction") -> "Reduction":
        """This reduction followed by ``inner`` (a reduction of :attr:`W`, :attr:`A`)."""
        groups = [np.sort(np.concatenate([self.groups[j] for j in g.tolist()])) for g in inner.groups]
        stats = dict(inner.stats)
        for k, v in self.stats.items():
            if k in ("nodes_before",):
                stats[k] = v
            elif isinstance(v, (int, float)) and k not in ("nodes_after", "largest_part"):
                stats[k] = stats.get(k, 0) + v
        return Reduction(groups=groups, W=inner.W, A=inner.A, offset=self.offset + inner.offset, parts=inner.parts,
                         stats=stats, mass=inner.mass)

    def expand(self, labels: np.ndarray) -> np.ndarray:
        """Original node labels from the labels of the reduced vertices."""
        labels = np.asarray(labels, np.int64)
        out = np.empty(self.n_original, np.int64)
        for g, lab in zip(self.groups, labels.tolist()):
            out[g] = lab
        return out


def _positive_parts(W: np.ndarray, A: np.ndarray) -> list:
    k = W.shape[0]
    r, c = np.nonzero(np.triu((W > 0) & A, 1))
    g = sp.coo_matrix((np.ones(r.size), (r, c)), shape=(k, k))
    _, lab = connected_components(g, directed=False)
    order = np.argsort(lab, kind="stable")
    parts = np.split(order, np.flatnonzero(np.diff(lab[order])) + 1)
    return sorted(parts, key=lambda p: (-p.size, int(p[0])))


class _Work:
    """The problem being reduced: dense arrays over the original indices, dead rows
    zeroed out (a merge keeps the lower index)."""

    def __init__(self, W: np.ndarray, A: np.ndarray, exact: bool, mass: np.ndarray | None = None):
        n = W.shape[0]
        self.A = np.array(A, dtype=bool, copy=True)
        np.fill_diagonal(self.A, False)
        self.W = np.where(self.A, np.asarray(W, np.float64), 0.0)
        self.exact = exact
        # total absolute original weight behind every entry (the rounding scale)
        self.M = None if exact else np.where(self.A, np.abs(self.W) if mass is None else mass, 0.0)
        self.alive = np.ones(n, bool)
        self.members: list[list[int]] = [[i] for i in range(n)]
        self.offset = 0.0

    def sums(self):
        Wp = np.maximum(self.W, 0.0)
        P = Wp.sum(1)
        N = Wp.sum(1) - self.W.sum(1)  # sum of |negative| weights (forbidden entries are 0)
        mass = None if self.exact else self.M.sum(1)
        return P, N, mass

    def merge(self, u: int, v: int) -> None:
        W, A = self.W, self.A
        self.offset += float(W[u, v])
        both = A[u] & A[v]
        row = np.where(both, W[u] + W[v], 0.0)
        W[u, :] = row
        W[:, u] = row
        A[u, :] = both
        A[:, u] = both
        W[v, :] = 0.0
        W[:, v] = 0.0
        A[v, :] = False
        A[:, v] = False
        A[u, u] = False
        W[u, u] = 0.0
        if self.M is not None:
            m = np.where(both, self.M[u] + self.M[v], 0.0)
            self.M[u, :] = m
            self.M[:, u] = m
            self.M[v, :] = 0.0
            self.M[:, v] = 0.0
            self.M[u, u] = 0.0
        self.alive[v] = False
        self.members[u].extend(self.members[v])
        self.members[v] = []


def _candidates(w: _Work, rules: frozenset) -> dict[str, np.ndarray]:
    """Pairs ``(u, v)`` (rows of an int array) passing each merge rule now."""
    W, A = w.W, w.A
    P, N, mass = w.sums()
    pos = np.triu(A & (W > 0), 1)
    r, c = np.nonzero(pos)
    out: dict[str, np.ndarray] = {}
    if r.size == 0:
        return out
    wuv = W[r, c]
    tol_rc = np.zeros(r.size) if w.exact else REL_TOL * (mass[r] + mass[c])
    if "heavy_edge_both" in rules:
        ok = 3.0 * wuv >= P[r] + P[c] + tol_rc
        out["heavy_edge_both"] = np.stack([r[ok], c[ok]], 1)
    if "heavy_edge_single" in rules:
        absu = P + N
        sel = []
        for a, b in ((r, c), (c, r)):  # u = a moves to v = b's cluster
            ok = 2.0 * wuv >= absu[a] + tol_rc
            for u, v in zip(a[ok].tolist(), b[ok].tolist()):
                extra = A[v] & ~A[u]
                extra[u] = False
                if not extra.any():
                    sel.append((min(u, v), max(u, v)))
        out["heavy_edge_single"] = np.array(sorted(set(sel)), np.int64).reshape(-1, 2)
    if "similar_neighbourhood" in rules:
        # cheap necessary conditions first: sum |w_uz - w_vz| >= |P'(u) - P'(v)| and
        # >= |N(u) - N(v)| (P' without the pair itself, which both rows hold alike)
        ok = (2.0 * wuv >= np.abs(P[r] - P[c]) + tol_rc) & (2.0 * wuv >= np.abs(N[r] - N[c]) + tol_rc)
        rr, cc, ww = r[ok], c[ok], wuv[ok]
        keep = []
        step = max(1, 2_000_000 // max(1, W.shape[0]))
        for s in range(0, rr.size, step):
            a, b = rr[s:s + step], cc[s:s + step]
            Aa, Ab = A[a].copy(), A[b].copy()
            ar = np.arange(a.size)
            Aa[ar, b] = False
            Ab[ar, a] = False
            same = ~np.any(Aa != Ab, axis=1)
            D = np.abs(W[a] - W[b])
            D[ar, a] = 0.0
            D[ar, b] = 0.0
            d = D.sum(1)
            if w.exact:
                t = 0.0
            else:
                Mm = w.M[a] + w.M[b]
                Mm[ar, a] = 0.0
                Mm[ar, b] = 0.0
                t = REL_TOL * (Mm.sum(1) + w.M[a, b])
            good = same & (2.0 * ww[s:s + step] >= d + t)
            keep.append(np.flatnonzero(good) + s)
        k = np.concatenate(keep) if keep else np.empty(0, np.int64)
        out["similar_neighbourhood"] = np.stack([rr[k], cc[k]], 1)
    return out


def min_cut(C: np.ndarray) -> float:
    """Stoer–Wagner minimum cut of a dense non-negative symmetric matrix (``inf`` for
    fewer than 2 nodes).

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[0, 3, 1, 0], [3, 0, 0, 1], [1, 0, 0, 4], [0, 1, 4, 0]], float)
    >>> min_cut(C)
    2.0
    """
    C = np.array(C, np.float64, copy=True)
    n = C.shape[0]
    best = np.inf
    alive = list(range(n))
    while len(alive) > 1:
        idx = np.asarray(alive)
        sub = C[np.ix_(idx, idx)]
        k = idx.size
        added = np.zeros(k, bool)
        wsum = np.zeros(k)
        prev = last = 0
        for _ in range(k):
            cand = np.where(added, -np.inf, wsum)
            nxt = int(np.argmax(cand))
            added[nxt] = True
            prev, last = last, nxt
            wsum += sub[nxt]
        cut = float(wsum[last] - sub[last, last])
        best = min(best, cut)
        s_, t_ = int(idx[prev]), int(idx[last])
        C[s_, :] += C[t_, :]
        C[:, s_] += C[:, t_]
        C[s_, s_] = 0.0
        alive.remove(t_)
    return best


def _almost_clique(w: _Work, C: np.ndarray) -> bool:
    """Whether candidate set ``C`` (alive vertices) passes the almost-clique rule."""
    if C.size < 2:
        return False
    W, A = w.W, w.A
    sub_A = A[np.ix_(C, C)]
    off = ~np.eye(C.size, dtype=bool)
    if not np.all(sub_A[off]):
        return False
    sub = W[np.ix_(C, C)]
    neg_in = float(-np.minimum(sub, 0.0).sum() / 2)
    out = np.ones(W.shape[0], bool)
    out[C] = False
    pos_out = float(np.maximum(W[np.ix_(C, out)], 0.0).sum())
    cut = min_cut(np.maximum(sub, 0.0))
    tol = 0.0
    if not w.exact:
        tol = REL_TOL * float(w.M[C].sum())
    return cut >= neg_in + pos_out + tol


def _peel(w: _Work, C: np.ndarray, max_tests: int) -> np.ndarray | None:
    """The largest prefix-peeled subset of ``C`` that passes the almost-clique rule:
    ``C`` itself, then ``C`` less its member of least positive weight inside it, and so
    on (at most ``max_tests`` tests); None if none does."""
    C = np.asarray(C, np.int64)
    for _ in range(max_tests):
        if C.size < 2:
            return None
        if _almost_clique(w, C):
            return C
        inner = np.maximum(w.W[np.ix_(C, C)], 0.0).sum(1)
        C = np.delete(C, int(np.argmin(inner)))
    return None


ALL_RULES = frozenset({"heavy_edge_both", "heavy_edge_single", "similar_neighbourhood", "heavy_non_edge"})


def reduce_problem(W: np.ndarray, A: np.ndarray | None = None, *, rules=None, deadline: float | None = None,
                   max_rounds: int = 1000, candidates=None, peel: int = 8, mass: np.ndarray | None = None) -> Reduction:
    """Exactly reduce a clique partitioning problem (see the module docstring).

    Parameters
    ----------
    W : numpy.ndarray
        ``(n, n)`` symmetric weights (the diagonal is ignored).
    A : numpy.ndarray, optional
        ``(n, n)`` symmetric allowed-pair mask (default: every pair allowed).
    rules : iterable of str, optional
        A subset of ``{"heavy_edge_both", "heavy_edge_single",
        "similar_neighbourhood", "heavy_non_edge"}`` (default all of them).
    deadline : float, optional
        A time of this thread's solver clock (:func:`trustlab.solvers._clock.current`:
        ``time.perf_counter()``, or counted work) after which no new round starts (the
        reduction found so far is returned, exact as it stands).
    max_rounds : int
        Most merge rounds.
    candidates : list of array-like, optional
        Disjoint node sets to test with the almost-clique rule before the other rules
        (e.g. the clusters of a heuristic partition).
    peel : int
        Most almost-clique tests per candidate (each after peeling off the member of
        least positive weight inside the set).
    mass : numpy.ndarray, optional
        Total absolute original weight behind each entry of ``W`` when ``W`` is itself
        reduced (:attr:`Reduction.mass`): the scale of the float tolerance.

    Returns
    -------
    Reduction

    Examples
    --------
    Two groups of three, +5 inside, -1 across: every rule's fixed point is the two
    groups, so the reduced problem has two vertices and no positive edge.

    >>> import numpy as np
    >>> g = np.repeat([0, 1], 3)
    >>> W = np.where(g[:, None] == g[None, :], 5.0, -1.0); np.fill_diagonal(W, 0)
    >>> red = reduce_problem(W)
    >>> len(red.groups), red.offset, [p.size for p in red.parts]
    (2, 30.0, [1, 1])
    >>> red.expand([0, 1]).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    t0 = time.perf_counter()
    W = np.asarray(W, np.float64)
    n = W.shape[0]
    if A is None:
        A = ~np.eye(n, dtype=bool)
    rules = ALL_RULES if rules is None else frozenset(rules)
    unknown = rules - ALL_RULES
    if unknown:
        raise ValueError(f"unknown reduction rules {sorted(unknown)}; valid: {sorted(ALL_RULES)}")
    vals = W[np.asarray(A, bool)]
    exact = mass is None and bool(np.all(vals == np.round(vals)) and np.abs(vals).sum() < _EXACT_INT)
    w = _Work(W, A, exact, None if mass is None else np.asarray(mass, np.float64))
    stats = {"nodes_before": int(n), "heavy_edge_both": 0, "heavy_edge_single": 0, "similar_neighbourhood": 0,
             "forbidden": 0, "rounds": 0}
    merge_rules = rules - {"heavy_non_edge"}
    stats["almost_clique"] = 0
    from trustlab.solvers._clock import MIN_CUT_SECONDS, REDUCE_RATE, REDUCE_ROUND_SECONDS
    from trustlab.solvers._clock import current as current_clock

    clk = current_clock()  # wall time, or counted work (trustlab.solvers._clock)
    clk.charge(REDUCE_ROUND_SECONDS)  # the call's set-up (approximate)
    for C in candidates or ():
        if deadline is not None and clk.now() > deadline:
            break
        clk.charge(min(peel, np.size(C)) * MIN_CUT_SECONDS)  # its almost-clique tests (approximate)
        C = np.unique(np.asarray(C, np.int64))
        if C.size < 2 or not np.all(w.alive[C]):
            continue
        got = _peel(w, C, peel)
        if got is not None:
            for v in got[1:].tolist():
                w.merge(int(got[0]), v)
            stats["almost_clique"] += int(got.size - 1)
    for _ in range(max_rounds):
        if not merge_rules or (deadline is not None and clk.now() > deadline):
            break
        clk.charge(4.0 * n * n / REDUCE_RATE + REDUCE_ROUND_SECONDS)
        cand = _candidates(w, merge_rules)
        pairs, who = [], []
        for name, rc in cand.items():
            if rc.size:
                pairs.append(rc)
                who.extend([name] * rc.shape[0])
        if not pairs:
            break
        rc = np.concatenate(pairs)
        heavy = w.W[rc[:, 0], rc[:, 1]]
        touched = np.zeros(n, bool)
        merged = 0
        for k in np.argsort(-heavy, kind="stable").tolist():
            u, v = int(rc[k, 0]), int(rc[k, 1])
            if touched[u] or touched[v]:
                continue
            touched[u] = touched[v] = True
            w.merge(u, v)
            stats[who[k]] += 1
            merged += 1
        stats["rounds"] += 1
        if not merged:
            break
    keep = np.flatnonzero(w.alive)
    Wr = np.ascontiguousarray(w.W[np.ix_(keep, keep)])
    Ar = np.ascontiguousarray(w.A[np.ix_(keep, keep)])
    parts = _positive_parts(Wr, Ar)
    if "heavy_non_edge" in rules:
        Pr = np.maximum(Wr, 0.0).sum(1)
        tol = np.zeros(keep.size) if exact else REL_TOL * w.M[np.ix_(keep, keep)].sum(1)
        lim = np.minimum(Pr[:, None] + tol[:, None], Pr[None, :] + tol[None, :])
        part_of = np.empty(keep.size, np.int64)
        for i, p in enumerate(parts):
            part_of[p] = i
        # pairs inside one part only (the parts are solved apart anyway)
        forbid = Ar & (Wr <= 0) & (-Wr >= lim) & (part_of[:, None] == part_of[None, :])
        stats["forbidden"] = int(np.triu(forbid, 1).sum())
        Ar &= ~forbid
        Wr[forbid] = 0.0
    groups = [np.asarray(sorted(w.members[i]), np.int64) for i in keep.tolist()]
    stats.update(nodes_after=int(keep.size), largest_part=int(parts[0].size) if parts else 0,
                 seconds=time.perf_counter() - t0)
    mass_r = None if exact else np.where(Ar, w.M[np.ix_(keep, keep)], 0.0)
    return Reduction(groups=groups, W=Wr, A=Ar, offset=float(w.offset), parts=parts, stats=stats, mass=mass_r)


def reduce_component(W: np.ndarray, A: np.ndarray | None = None, *, seed: int = 0, deadline: float | None = None,
                     quick_patience: int = 10, max_part: int | None = None) -> Reduction:
    """:func:`reduce_problem` twice: the pair rules to their fixed point, then the
    almost-clique rule on the clusters of a short heuristic run on every part of 3 or
    more nodes (iterated tabu search, ``quick_patience`` stale rounds; the candidates
    only steer which sets are tested, so the result is exact whatever they are),
    followed by the pair rules again. The composed reduction is returned; if the pair
    rules leave a part of more than ``max_part`` nodes, right after them.

    Examples
    --------
    >>> import numpy as np
    >>> g = np.repeat([0, 1, 2], 4)
    >>> W = np.where(g[:, None] == g[None, :], 2.0, -1.0); np.fill_diagonal(W, 0)
    >>> W[0, 4] = W[4, 0] = 3.0  # one strong pair across two groups
    >>> red = reduce_component(W)
    >>> len(red.groups), [len(g) for g in red.groups]
    (3, [4, 4, 4])
    """
    from trustlab.kernels._jit import compile_seconds
    from trustlab.solvers._clock import current as current_clock
    from trustlab.solvers.heuristic import solve_heuristic

    compiled0 = compile_seconds()
    clk = current_clock()

    def moved() -> float | None:
        # compilations and a cold start's exact Python twins (the search's) do not count
        return None if deadline is None else deadline + clk.excluded(compile_seconds() - compiled0)

    red = reduce_problem(W, A, deadline=deadline)
    if max_part is not None and red.stats["largest_part"] > max_part:
        return red
    cands = []
    rng = np.random.default_rng(seed)
    for p in red.parts:
        if p.size < 3 or (deadline is not None and clk.now() > moved()):
            continue
        lab, _ = solve_heuristic(red.W[np.ix_(p, p)], red.A[np.ix_(p, p)], rng=rng, patience=quick_patience,
                                 deadline=moved())
        for c in np.unique(lab):
            members = p[lab == c]
            if members.size >= 2:
                cands.append(members)
    if not cands:
        return red
    return red.then(reduce_problem(red.W, red.A, deadline=moved(), candidates=cands, mass=red.mass))


def conflict_packing(W: np.ndarray, A: np.ndarray) -> tuple[float, np.ndarray]:
    """A lower bound on the weight every partition loses: a greedy fractional packing of
    conflict triples.

    The *loss* of a partition is ``P - sum_{within} w``, ``P`` the sum of the positive
    allowed weights: the positive pairs it cuts plus the absolute negative pairs it keeps.
    A conflict triple ``(a; b, c)`` has ``w_ab > 0``, ``w_ac > 0`` and ``w_bc < 0`` or
    ``bc`` forbidden; every partition incurs the loss of one of its pairs (cut ``ab``,
    cut ``ac``, or keep ``bc``). Triples given amounts ``m_t`` such that no pair carries
    more than its absolute weight in total (a forbidden pair any amount) therefore bound
    the loss from below by ``sum m_t``. Greedy: negative and forbidden pairs ``bc`` in
    order of decreasing weight, apexes ``a`` by decreasing ``min(w_ab, w_ac)``.

    Returns ``(LB, L)``: the bound and the ``(n, n)`` matrix of the amounts per vertex
    (diagonal: triples containing it) and per pair (triples containing both), from
    which the amount of the triples avoiding ``u`` and ``v`` is
    ``LB - L[u, u] - L[v, v] + L[u, v]``.

    Examples
    --------
    A path ``0 - 1 - 2`` of positive pairs with ``02`` negative loses at least 1:

    >>> import numpy as np
    >>> W = np.array([[0, 2, -1], [2, 0, 1], [-1, 1, 0]], float)
    >>> conflict_packing(W, ~np.eye(3, dtype=bool))[0]
    1.0
    """
    n = W.shape[0]
    A = np.asarray(A, bool)
    Rp = np.where(A, np.maximum(W, 0.0), 0.0)
    np.fill_diagonal(Rp, 0.0)
    cap = np.where(A, np.maximum(-W, 0.0), np.inf)  # a forbidden pair: any amount
    np.fill_diagonal(cap, 0.0)
    L = np.zeros((n, n))
    lb = 0.0
    b_, c_ = np.nonzero(np.triu(cap > 0, 1))
    order = np.argsort(-np.minimum(cap[b_, c_], 1e300), kind="stable")
    for b, c in zip(b_[order].tolist(), c_[order].tolist()):
        m = np.minimum(Rp[b], Rp[c])
        a = np.flatnonzero(m > 0)
        if a.size == 0:
            continue
        a = a[np.argsort(-m[a], kind="stable")]
        m = m[a]
        room = cap[b, c]
        if np.isfinite(room):  # the amounts through bc together stay within |w_bc|
            before = np.concatenate([[0.0], np.cumsum(m)[:-1]])
            m = np.clip(room - before, 0.0, m)
            keep = m > 0
            a, m = a[keep], m[keep]
            if a.size == 0:
                continue
            cap[b, c] = cap[c, b] = room - m.sum()
        Rp[a, b] -= m
        Rp[b, a] -= m
        Rp[a, c] -= m
        Rp[c, a] -= m
        tot = float(m.sum())
        lb += tot
        L[a, a] += m
        L[b, b] += tot
        L[c, c] += tot
        L[a, b] += m
        L[b, a] += m
        L[a, c] += m
        L[c, a] += m
        L[b, c] += tot
        L[c, b] += tot
    return lb, L


def bound_fixings(W: np.ndarray, A: np.ndarray, offset: float, target: float, *, tol: float = 0.0):
    """Pairs that every partition worth at least ``target`` keeps together, and pairs it
    keeps apart (Böcker et al.'s induced-cost rules, with the budget from a bound).

    A partition's value is ``offset + sum_{within, allowed} w = offset + P - loss``
    (:func:`conflict_packing`). If ``u, v`` are apart it loses ``w_uv`` (if positive)
    and, for every ``z``, at least ``min(w+_uz, w+_vz)`` (``z`` joins at most one of
    them): ``icf(uv)``. If they are together it loses ``|w_uv|`` (if negative) and, for
    every ``z`` whose pairs with ``u`` and ``v`` differ in sign, ``min(|w_uz|, |w_vz|)``
    (a forbidden pair counts as the other one's full weight): ``icp(uv)``. Those losses
    fall on pairs that touch ``u`` or ``v``; the packed conflict triples that avoid both
    fall on other pairs, so ``offset + P - icf(uv) - LB_rest(uv)`` bounds every partition
    that separates them (``icp`` for those that join them). A pair is returned when that
    bound is below ``target - tol``.

    This is exact for a search that only looks for partitions of value ``>= target``
    (a branch and bound below an incumbent): every such partition obeys all the returned
    merges and forbids at once (unlike the optimum-preserving rules of
    :func:`reduce_problem`, these need no disjointness).

    Returns
    -------
    merge, forbid : numpy.ndarray
        ``(n, n)`` boolean, upper triangle (``i < j``), allowed pairs only.

    Examples
    --------
    Two +3 triangles joined by a +1 pair: above the value 17 of the two triangles
    (less the joining pair's 1 it cuts) nothing separates a triangle.

    >>> import numpy as np
    >>> g = np.repeat([0, 1], 3)
    >>> W = np.where(g[:, None] == g[None, :], 3.0, -1.0); np.fill_diagonal(W, 0); W[2, 3] = W[3, 2] = 1.0
    >>> merge, forbid = bound_fixings(W, ~np.eye(6, dtype=bool), 0.0, 18.0)
    >>> int(merge.sum()), bool(merge[0, 1]), bool(merge[2, 3])
    (6, True, False)
    """
    W = np.asarray(W, np.float64)
    A = np.asarray(A, bool).copy()
    np.fill_diagonal(A, False)
    n = W.shape[0]
    Wa = np.where(A, W, 0.0)
    Wp = np.maximum(Wa, 0.0)
    P = float(np.triu(Wp, 1).sum())
    eye = np.eye(n, dtype=bool)
    # icf(uv) = w+_uv + sum_{z != u, v} min(w+_uz, w+_vz) (the z = u, v terms are 0: zero diagonal,
    # and min(w+_uv, w+_vv) = 0)
    icf = Wp + np.minimum(Wp[:, None, :], Wp[None, :, :]).sum(2)
    Au, Av = A[:, None, :], A[None, :, :]
    Wu, Wv = Wa[:, None, :], Wa[None, :, :]
    both = Au & Av
    opp = both & (((Wu > 0) & (Wv < 0)) | ((Wu < 0) & (Wv > 0)))
    t = np.where(opp, np.minimum(np.abs(Wu), np.abs(Wv)), 0.0)
    # z allowed with one end only: it cannot join, so that end's positive pair is lost
    # (z = u or v: A is False on the diagonal, and the pair uv itself is excluded below)
    t += np.where(Au & ~Av, np.maximum(Wu, 0.0), 0.0) + np.where(~Au & Av, np.maximum(Wv, 0.0), 0.0)
    idx = np.arange(n)
    t[idx, :, idx] = 0.0  # z = u
    t[:, idx, idx] = 0.0  # z = v
    icp = np.maximum(-Wa, 0.0) + t.sum(2)
    up = np.triu(A & ~eye, 1)
    if not up.any():
        return up, up.copy()
    # every packed triple takes its amount from two positive pairs, so LB_rest <= LB <= P / 2:
    # if even that cannot bring a pair below the target, skip the (costlier) packing
    best = float(max(icf[up].max(), icp[up].max()))
    if offset + P - P / 2.0 - best >= target - tol:
        return np.zeros_like(up), np.zeros_like(up)
    lb, L = conflict_packing(Wa, A)
    d = np.diag(L)
    rest = lb - d[:, None] - d[None, :] + L
    base = offset + P - rest
    merge = up & (base - icf < target - tol)
    forbid = up & (base - icp < target - tol)
    return merge, forbid
