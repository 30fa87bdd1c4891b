"""Exact pure-Python twins of the clique partitioning search kernels, for a cold cache.

The iterated tabu search (:mod:`trustlab.kernels.cpp_heuristic`) compiles 42 Numba
specialisations on its first call after an install: about 8 s of CPU, while the
searches of a first ``trustlab partition`` or ``trustlab resolve`` on small components
take milliseconds. These twins are the same algorithm in plain Python and give the
kernels' results **bit for bit** (labels, objective values, ``stale`` counters), so a
caller may run either one for any call and get the same answer:

* **the random stream**: the kernel seeds Numba's thread-local NumPy generator with
  ``np.random.seed(seed)`` (MT19937, Knuth's ``init_genrand`` of the 32-bit seed) and
  draws ``np.random.randint(n)`` (``n == 1``: 0 without a draw; else 32-bit words masked
  to the bit length of ``n - 1``, rejected while ``>= n``) and ``np.random.random()``
  (two words, ``(a >> 5) * 2**26 + (b >> 6)`` over ``2**53``). :class:`NumbaNpRandom`
  replays that stream with :mod:`random`'s MT19937 given the same state;
* **the arithmetic**: every float sum is done on Python floats (IEEE doubles) in the
  kernel's loop order; the kernels are compiled without ``fastmath``, so LLVM keeps
  that order;
* **the control flow**: every loop, tie-break and short-circuit test of the kernels,
  in the same order (so the same draws are made).

They are ~50-100 times slower than the compiled kernels and are meant for small work:
:func:`its` counts elementary steps and raises :class:`TwinBudgetExceeded` past its
``budget`` (its in/out arrays are then untouched, so the caller can rerun the call with
the kernel). ``tests/solvers/test_heuristic_twin.py`` compares them with the kernels.
"""
from __future__ import annotations

import math
import random

import numpy as np

EPS = 1e-9  # the kernels' tolerance (cpp_heuristic.EPS)

__all__ = ["NumbaNpRandom", "TwinBudgetExceeded", "its", "objective", "pivot_labels", "relabel"]


class TwinBudgetExceeded(RuntimeError):
    """The twin's work passed its budget; nothing was written to the caller's arrays."""


class NumbaNpRandom:
    """Numba's NumPy-API random stream in a kernel after ``np.random.seed(seed)``.

    Examples
    --------
    >>> r = NumbaNpRandom(7)
    >>> r.randint(1), 0 <= r.randint(10) < 10, 0.0 <= r.random() < 1.0
    (0, True, True)
    """

    __slots__ = ("_bits",)

    def __init__(self, seed: int) -> None:
        s = int(seed) & 0xFFFFFFFF
        mt = [0] * 624
        for pos in range(624):  # init_genrand (numba_rnd_init)
            mt[pos] = s
            s = (1812433253 * (s ^ (s >> 30)) + pos + 1) & 0xFFFFFFFF
        g = random.Random()
        g.setstate((3, tuple(mt) + (624,), None))  # index 624: the first draw twists
        self._bits = g.getrandbits

    def randint(self, n: int) -> int:
        """``np.random.randint(n)`` for ``n <= 2**32`` (``n < 1`` raises, as in Numba)."""
        if n <= 1:
            if n == 1:
                return 0
            raise ValueError("empty range for randrange()")
        mask = 0xFFFFFFFF >> (32 - (n - 1).bit_length())
        bits = self._bits
        while True:
            r = bits(32) & mask
            if r < n:
                return r

    def random(self) -> float:
        """``np.random.random()``."""
        a = self._bits(32) >> 5
        b = self._bits(32) >> 6
        return (b + a * 67108864.0) / 9007199254740992.0


def pivot_labels(W: np.ndarray, order: np.ndarray, forbid: float, *, Wl: list | None = None) -> np.ndarray:
    """Twin of :func:`trustlab.kernels.cpp_heuristic.pivot_labels` (same labels); ``Wl``
    is ``W.tolist()`` when the caller has it already.

    Examples
    --------
    >>> W = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    >>> pivot_labels(W, np.array([1, 0, 2]), -10.0).tolist()
    [0, 0, 0]
    """
    n = W.shape[0]
    Wl = W.tolist() if Wl is None else Wl
    order = order.tolist()
    forbid = float(forbid)
    labels = [-1] * n
    c = 0
    for t in range(n):
        p = order[t]
        if labels[p] >= 0:
            continue
        labels[p] = c
        members = [p]
        Wp = Wl[p]
        for s in range(n):
            v = order[s]
            if labels[v] >= 0 or Wp[v] <= 0.0:
                continue
            ok = True
            for m in members:
                if Wl[m][v] <= forbid:
                    ok = False
                    break
            if ok:
                labels[v] = c
                members.append(v)
        c += 1
    return np.array(labels, np.int64)


def relabel(labels: np.ndarray) -> tuple[np.ndarray, int]:
    """Twin of :func:`trustlab.kernels.cpp_heuristic.relabel`.

    Examples
    --------
    >>> relabel(np.array([5, 5, 2, 7]))[0].tolist()
    [0, 0, 1, 2]
    """
    out, k = _relabel(labels.tolist())
    return np.array(out, np.int64), k


def _relabel(lab: list) -> tuple[list, int]:
    mp: dict = {}
    out = []
    for x in lab:
        y = mp.get(x)
        if y is None:
            y = mp[x] = len(mp)
        out.append(y)
    return out, len(mp)


def objective(W: np.ndarray, labels: np.ndarray) -> float:
    """Twin of :func:`trustlab.kernels.cpp_heuristic.objective`: the within-cluster
    pairs ``i < j`` summed one at a time in row-major order from 0.0 (a cumulative sum:
    NumPy's ``add.accumulate`` adds sequentially, unlike ``sum``'s pairwise reduction).

    Examples
    --------
    >>> W = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    >>> objective(W, np.array([0, 0, 1]))
    1.0
    """
    n = W.shape[0]
    if n < 2:
        return 0.0
    lab = np.asarray(labels)
    iu, ju = np.triu_indices(n, 1)  # row-major, as the kernel's double loop
    same = lab[iu] == lab[ju]
    vals = np.concatenate(([0.0], np.asarray(W, np.float64)[iu[same], ju[same]]))
    return float(np.cumsum(vals)[-1])


def _objective_l(Wl: list, lab: list) -> float:
    n = len(lab)
    s = 0.0
    for i in range(n):
        li = lab[i]
        Wi = Wl[i]
        for j in range(i + 1, n):
            if lab[j] == li:
                s += Wi[j]
    return s


def its(W, nbr_ptr, nbr_idx, use_nbrs, cur_lab, best_lab, best_val, seed, n_rounds, depth, tt_lo, tt_hi, str_lo,
        str_hi, split_prob, restart_prob, restart_after, stale, first, directed, q, stop, *, budget=None, Wl=None):
    """Twin of :func:`trustlab.kernels.cpp_heuristic.its`: the same arguments, the same
    in/out arrays (``cur_lab``, ``best_lab``) and return value ``(best_val, stale)``.

    ``budget`` (None: unlimited) caps the elementary steps (gain-table entries and
    candidate clusters visited); past it :class:`TwinBudgetExceeded` is raised before
    anything is written to ``cur_lab`` / ``best_lab``. ``Wl`` is ``W.tolist()`` when the
    caller has it already. Returns ``(best_val, stale, steps)``.
    """
    st = _Twin(W.tolist() if Wl is None else Wl, nbr_ptr.tolist(), nbr_idx.tolist(), bool(use_nbrs),
               NumbaNpRandom(seed), stop, budget)
    blab = best_lab.tolist()
    bv, stale = st.its(cur_lab.tolist(), blab, float(best_val), int(n_rounds), int(depth), int(tt_lo), int(tt_hi),
                       int(str_lo), int(str_hi), float(split_prob), float(restart_prob), int(restart_after),
                       int(stale), bool(first), bool(directed), int(q))
    cur_lab[:] = st.lab
    best_lab[:] = blab
    return bv, stale, st.steps


class _Twin:
    """The search state (``lab``, gain table ``S`` cluster-major, ``size``, ``active``,
    ``apos``, ``K`` and the cached best moves) as Python lists; methods are the kernel's
    helpers, line for line."""

    def __init__(self, Wl, ptr, idx, use_nbrs, rng, stop, budget):
        n = len(Wl)
        self.W, self.ptr, self.idx, self.use_nbrs = Wl, ptr, idx, use_nbrs
        self.rng, self.stop = rng, stop
        self.n = n
        self.steps = 0
        self.budget = math.inf if budget is None else budget
        self.S = [[0.0] * n for _ in range(n)]
        self.size = [0] * n
        self.active = [0] * n
        self.apos = [0] * n
        self.mark = [0] * n
        self.tabu = [0] * n
        self.bgain = [0.0] * n
        self.btgt = [0] * n
        self.K = 0
        self.lab: list = []

    def _spend(self, k: int) -> None:
        self.steps += k
        if self.steps > self.budget:
            raise TwinBudgetExceeded(f"more than {self.budget} steps")

    def stopped(self) -> bool:
        return self.stop[0] != 0

    # ------------------------------------------------------------------ state
    def build(self) -> None:
        n, W, lab, S, size = self.n, self.W, self.lab, self.S, self.size
        self._spend(n * n)
        for row in S:
            for v in range(n):
                row[v] = 0.0
        for c in range(n):
            size[c] = 0
        for i in range(n):
            size[lab[i]] += 1
        for j in range(n):
            Sc = S[lab[j]]
            Wj = W[j]
            for i in range(n):
                if i != j:
                    Sc[i] += Wj[i]
        K = 0
        active, apos = self.active, self.apos
        for c in range(n):
            apos[c] = -1
        for c in range(n):
            if size[c] > 0:
                active[K] = c
                apos[c] = K
                K += 1
        self.K = K

    def free_id(self) -> int:
        size = self.size
        for c in range(self.n):
            if size[c] == 0:
                return c
        return -1

    def move(self, i: int, b: int) -> None:
        n, lab, size, active, apos = self.n, self.lab, self.size, self.active, self.apos
        self._spend(n)
        a = lab[i]
        Wi, Sa, Sb = self.W[i], self.S[a], self.S[b]
        for v in range(n):
            w = Wi[v]
            Sa[v] -= w
            Sb[v] += w
        size[a] -= 1
        K = self.K
        if size[b] == 0:
            active[K] = b
            apos[b] = K
            K += 1
        size[b] += 1
        lab[i] = b
        if size[a] == 0:
            p = apos[a]
            K -= 1
            last = active[K]
            active[p] = last
            apos[last] = p
            apos[a] = -1
        self.K = K

    def objective(self) -> float:
        self._spend(self.n * self.n // 2)
        return _objective_l(self.W, self.lab)

    def merge_pass(self) -> float:
        n, lab, S, size, active, apos, K = self.n, self.lab, self.S, self.size, self.active, self.apos, self.K
        total = 0.0
        if K < 2:
            return total
        self._spend(n * K)
        ids = active[:K]
        G = [[0.0] * K for _ in range(K)]
        for t in range(K):
            Sc = S[ids[t]]
            Gt = G[t]
            for i in range(n):
                Gt[apos[lab[i]]] += Sc[i]
        alive = [True] * K
        while not self.stopped():
            self._spend(K * K // 2 + 2 * n)
            bg = EPS
            ba = -1
            bb = -1
            for x in range(K):
                if not alive[x]:
                    continue
                Gx = G[x]
                for y in range(x + 1, K):
                    if alive[y] and Gx[y] > bg:
                        bg = Gx[y]
                        ba = x
                        bb = y
            if ba < 0:
                break
            ca = ids[ba]
            cb = ids[bb]
            for i in range(n):
                if lab[i] == cb:
                    lab[i] = ca
            Sa, Sb = S[ca], S[cb]
            for v in range(n):
                Sa[v] += Sb[v]
                Sb[v] = 0.0
            size[ca] += size[cb]
            size[cb] = 0
            Ga, Gb = G[ba], G[bb]
            for t in range(K):
                Ga[t] += Gb[t]
            for t in range(K):
                Gt = G[t]
                Gt[ba] += Gt[bb]
            alive[bb] = False
            total += bg
        Kn = 0
        for t in range(K):
            apos[ids[t]] = -1
        for t in range(K):
            if alive[t]:
                active[Kn] = ids[t]
                apos[ids[t]] = Kn
                Kn += 1
        self.K = Kn
        return total

    # ------------------------------------------------------------ best moves
    def vertex_best(self, i: int) -> tuple[float, int]:
        """_vertex_best with _consider inlined (the same comparisons and draws)."""
        lab, S, size = self.lab, self.S, self.size
        own = lab[i]
        so = S[own][i]
        bg = -math.inf
        bc = -2
        ties = 0
        if size[own] > 1:
            bg = -so
            bc = -1
            ties = 1
        randint = self.rng.randint
        if self.use_nbrs:
            mark, idx = self.mark, self.idx
            lo, hi = self.ptr[i], self.ptr[i + 1]
            self.steps += 2 * (hi - lo) + 1
            mark[own] = 1
            for p in range(lo, hi):
                c = lab[idx[p]]
                if mark[c] == 1:
                    continue
                mark[c] = 1
                g = S[c][i] - so
                if g > bg + EPS:
                    bg, bc, ties = g, c, 1
                elif g >= bg - EPS:
                    ties += 1
                    if randint(ties) == 0:
                        bc = c
            mark[own] = 0
            for p in range(lo, hi):
                mark[lab[idx[p]]] = 0
        else:
            active = self.active
            K = self.K
            self.steps += K + 1
            for t in range(K):
                c = active[t]
                if c == own:
                    continue
                g = S[c][i] - so
                if g > bg + EPS:
                    bg, bc, ties = g, c, 1
                elif g >= bg - EPS:
                    ties += 1
                    if randint(ties) == 0:
                        bc = c
        return bg, bc

    def refresh(self) -> None:
        bgain, btgt, vb = self.bgain, self.btgt, self.vertex_best
        for i in range(self.n):
            bgain[i], btgt[i] = vb(i)
        self._spend(0)

    def apply(self, i: int, b: int) -> None:
        n, lab, S, size, bgain, btgt, vb = self.n, self.lab, self.S, self.size, self.bgain, self.btgt, self.vertex_best
        if b < 0:
            b = self.free_id()
        a = lab[i]
        self.move(i, b)
        Wi, Sa, Sb = self.W[i], S[a], S[b]
        for v in range(n):
            lv = lab[v]
            if v == i or lv == a or lv == b:
                bgain[v], btgt[v] = vb(v)
                continue
            w = Wi[v]
            t = btgt[v]
            if t == a or (t == b and w < 0.0):
                bgain[v], btgt[v] = vb(v)
            elif w > 0.0:
                g = Sb[v] - S[lv][v]
                if t == b or g > bgain[v] + EPS:
                    bgain[v] = g
                    btgt[v] = b
            elif (size[a] > 0 and Sa[v] - S[lv][v] > bgain[v] + EPS) or Sb[v] - S[lv][v] > bgain[v] + EPS:
                bgain[v], btgt[v] = vb(v)
        self._spend(n)

    def pick(self, it: int, cur: float, wbest: float, improving: bool) -> tuple[float, int, int]:
        bgain, btgt, tabu = self.bgain, self.btgt, self.tabu
        randint = self.rng.randint
        bg = -math.inf
        bi = -1
        ties = 0
        self.steps += self.n
        for i in range(self.n):
            if btgt[i] == -2:
                continue
            g = bgain[i]
            if improving:
                if g <= EPS:
                    continue
            elif tabu[i] > it and not (cur + g > wbest + EPS):
                continue
            if g > bg + EPS:
                bg = g
                bi = i
                ties = 1
            elif g >= bg - EPS:
                ties += 1
                if randint(ties) == 0:
                    bi = i
        if bi < 0:
            return bg, -1, -2
        return bg, bi, btgt[bi]

    def descent(self) -> float:
        total = 0.0
        while not self.stopped():
            self.refresh()
            while not self.stopped():
                g, i, c = self.pick(0, 0.0, 0.0, True)
                if i < 0:
                    break
                self.apply(i, c)
                total += g
            gm = self.merge_pass()
            total += gm
            if gm <= EPS:
                break
        return total

    # ---------------------------------------------------------- perturbations
    def perturb(self, strength: int, split_prob: float) -> None:
        n, lab, size, rng = self.n, self.lab, self.size, self.rng
        if rng.random() < split_prob:
            for _ in range(10):
                c = lab[rng.randint(n)]
                if size[c] >= 2:
                    nc = self.free_id()
                    for i in range(n):
                        if lab[i] == c and size[c] > 1 and rng.random() < 0.5:
                            self.move(i, nc)
                    break
        for _ in range(strength):
            i = rng.randint(n)
            r = rng.randint(self.K + 1)
            if r == self.K:
                if size[lab[i]] == 1:
                    continue
                c = self.free_id()
            else:
                c = self.active[r]
                if c == lab[i]:
                    continue
            self.move(i, c)

    def perturb_directed(self, strength: int, q: int, moved: list) -> None:
        n, bgain, btgt = self.n, self.bgain, self.btgt
        for i in range(n):
            moved[i] = 0
        self.refresh()
        topg = [0.0] * q
        topi = [0] * q
        for _ in range(strength):
            if self.stopped():
                break
            self._spend(n)
            m = 0
            for i in range(n):
                if moved[i] or btgt[i] == -2:
                    continue
                g = bgain[i]
                if m < q:
                    t = m
                    m += 1
                elif g > topg[m - 1]:
                    t = m - 1
                else:
                    continue
                while t > 0 and topg[t - 1] < g:
                    topg[t] = topg[t - 1]
                    topi[t] = topi[t - 1]
                    t -= 1
                topg[t] = g
                topi[t] = i
            if m == 0:
                break
            i = topi[self.rng.randint(m)]
            self.apply(i, btgt[i])
            moved[i] = 1

    # -------------------------------------------------------------- the search
    def its(self, cur_lab, best_lab, best_val, n_rounds, depth, tt_lo, tt_hi, str_lo, str_hi, split_prob,
            restart_prob, restart_after, stale, first, directed, q):
        n, rng, tabu = self.n, self.rng, self.tabu
        self.lab, _ = _relabel(cur_lab)
        lab = self.lab
        self.build()
        cur = self.objective()
        if first:
            g = self.descent()
            cur += g
            if cur > best_val + EPS:
                cur = self.objective()
                best_val = cur
                best_lab[:] = lab
        wlab = lab[:]
        moved = [0] * n
        it = 1
        for _rnd in range(n_rounds):
            if self.stopped():
                break
            if stale > 0 and stale % restart_after == 0:
                kb = 1
                for i in range(n):
                    if best_lab[i] + 1 > kb:
                        kb = best_lab[i] + 1
                for i in range(n):
                    lab[i] = rng.randint(kb)
                self.build()
                self.descent()
            else:
                if rng.random() < restart_prob:
                    lab[:] = best_lab
                    self.build()
                s = str_lo + rng.randint(str_hi - str_lo + 1)
                if directed:
                    self.perturb_directed(s, q, moved)
                else:
                    self.perturb(s, split_prob)
            cur = self.objective()
            wbest = cur
            wlab[:] = lab
            stall = 0
            self.refresh()
            while stall < depth and not self.stopped():
                g, i, c = self.pick(it, cur, wbest, False)
                if i < 0:
                    break
                self.apply(i, c)
                tabu[i] = it + tt_lo + rng.randint(tt_hi - tt_lo + 1)
                it += 1
                cur += g
                if cur > wbest + EPS:
                    wbest = cur
                    wlab[:] = lab
                    stall = 0
                else:
                    stall += 1
            lab[:] = wlab
            self.build()
            self.descent()
            cur = self.objective()
            if cur > best_val + EPS:
                if cur > best_val + 1e-7 * max(1.0, abs(best_val)):
                    stale = 0
                else:
                    stale += 1
                best_val = cur
                best_lab[:] = lab
            else:
                stale += 1
        return best_val, stale
