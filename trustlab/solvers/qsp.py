"""xER's Quadratic Set Packing (QSP) in its linearised form (LSP), and the SPP baseline.

QSP (Vadrevu et al., eqs. 9–12): for every maximal clique ``S_k`` and sub-partition
``m < M`` a binary ``y_imk`` (``i ∈ S_k``) says node ``i`` is in partition ``m`` of
``S_k``; each node is in at most one partition; a pair scores ``w_ij`` when both ends
share a partition. LSP replaces each product ``y_imk·y_jmk`` by ``u_ijmk`` with the
McCormick constraints. We keep only the side the objective can push against (``u <=
y_i, u <= y_j`` when ``w_ij > 0``; ``u >= y_i + y_j - 1`` when ``w_ij < 0``; no ``u`` when
``w_ij = 0``), which is equivalent at the optimum. Symmetry between the M partitions of
a clique is broken by ordering their sizes (``|m| >= |m+1|``).

With ``M`` at least the number of clusters the optimum inside one maximal clique can
have, QSP equals the CPP; with a smaller ``M`` it is a restriction (a lower bound
on the CPP optimum, and the reported bound is QSP's own bound, not the CPP's).

SPP (eqs. 6–8): weighted set packing over *all* cliques (size >= 2) of the graph,
weight = the within-clique weight; guarded by ``max_cliques``.

Guards: both models are sized before they are built (:func:`qsp_model_size`,
:func:`spp_model_size`: variables, constraints and an estimate of the bytes the
Python model plus CP-SAT's copy take) and refused with a ``ValueError`` naming the
estimate above ``max_model_bytes``; building checks the deadline every few hundred
cliques and returns the warm start with ``status="time_limit"`` when it runs out.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from trustlab.kernels.cpp_heuristic import objective
from trustlab.solvers._problem import positive_weight_bound
from trustlab.solvers.cpp import configure_cpsat


def _graph(A: np.ndarray) -> nx.Graph:
    G = nx.Graph()
    G.add_nodes_from(range(A.shape[0]))
    r, c = np.nonzero(np.triu(A, 1))
    G.add_edges_from(zip(r.tolist(), c.tolist()))
    return G


def _maximal_cliques_csr(A: np.ndarray):
    from trustlab.cliques import maximal_cliques

    return maximal_cliques(_graph(A), min_size=1)


def _clique_lists(cr) -> list[list[int]]:
    nodes = np.asarray(cr.nodes)
    out = []
    for k in range(len(cr)):
        out.append(sorted(int(nodes[i]) for i in cr.indices[cr.indptr[k]:cr.indptr[k + 1]]))
    return out


def maximal_cliques_of(A: np.ndarray) -> list[list[int]]:
    """Maximal cliques of the allowed graph (via :func:`trustlab.cliques.maximal_cliques`)."""
    return _clique_lists(_maximal_cliques_csr(A))


#: estimated bytes per model variable / per constraint (Python objects, the model
#: proto and CP-SAT's presolved copy; measured with ortools 9 on x86-64)
BYTES_PER_VAR = 400
BYTES_PER_CONSTRAINT = 450
#: building checks the clock every this many cliques
_CLOCK_EVERY = 64


def qsp_model_size(clique_sizes: np.ndarray, M: int, n: int) -> dict:
    """Upper estimate of the LSP model size from the maximal-clique sizes (every pair
    of a clique counted as a nonzero weight): variables, constraints, bytes."""
    s = np.asarray(clique_sizes, np.int64)
    s = s[s >= 2]
    mk = np.maximum(np.minimum(M, s // 2), 1)
    pairs = s * (s - 1) // 2
    n_var = int((mk * (s + pairs)).sum())
    n_con = int((mk * 2 * pairs).sum() + (mk - 1).sum() + n)
    return dict(variables=n_var, constraints=n_con,
                bytes=int(n_var * BYTES_PER_VAR + n_con * BYTES_PER_CONSTRAINT))


def spp_model_size(clique_sizes: np.ndarray, n: int) -> dict:
    """Size of the SPP model from the sizes of all cliques (>= 2 nodes)."""
    s = np.asarray(clique_sizes, np.int64)
    n_var = int(s.size)
    n_con = n
    # an at-most-one constraint holds every clique of the node: sum |c| terms
    return dict(variables=n_var, constraints=n_con,
                bytes=int(n_var * BYTES_PER_VAR + int(s.sum()) * 16 + n_con * BYTES_PER_CONSTRAINT))


#: CP-SAT's peak memory over the model's estimated size (its presolved copy, the LP relaxation
#: and the workers' state): a 400-node clique's QSP model, estimated 1.04 GB, peaked at 3.46 GB of
#: address space (ortools 9.15), so a model is refused when this many times its estimate does not
#: fit in what the process may still use
CPSAT_PEAK = 3.5


def _refuse(what: str, est: dict, max_model_bytes: int, hint: str) -> None:
    if est["bytes"] > max_model_bytes:
        raise ValueError(
            f"{what}: the model would have about {est['variables']:,} variables and "
            f"{est['constraints']:,} constraints, an estimated {est['bytes'] / 2**30:.2f} GiB, over "
            f"max_model_bytes={max_model_bytes:,} ({max_model_bytes / 2**30:.2f} GiB). {hint} "
            "or raise max_model_bytes (partition(..., max_model_bytes=...)) if the memory is there."
        )
    from trustlab._validation import memory as _memory

    budget = _memory.memory_budget()
    if est["bytes"] * CPSAT_PEAK > budget:
        raise ValueError(
            f"{what}: not enough memory: the model would have about {est['variables']:,} variables and "
            f"{est['constraints']:,} constraints, an estimated {est['bytes'] / 2**30:.2f} GiB and about "
            f"{est['bytes'] * CPSAT_PEAK / 2**30:.2f} GiB while CP-SAT solves it, more than the "
            f"{budget / 2**30:.2f} GiB this process may still use (the memory available, or what an "
            f"address-space limit such as `ulimit -v` leaves). {hint} or run it where the memory is."
        )


def _solve(model, workers: int | None, deadline: float | None):
    """Run CP-SAT on ``model`` with ``workers`` threads until ``deadline``; (solver, status)."""
    from ortools.sat.python import cp_model

    from trustlab.solvers._clock import current

    clk = current()
    s = cp_model.CpSolver()
    configure_cpsat(s, workers)
    if deadline is not None:
        s.parameters.max_time_in_seconds = max(0.01, clk.wall_left(deadline) or 0.0)
        if clk.work:  # a work budget: CP-SAT's deterministic time (about seconds), charged after
            s.parameters.max_deterministic_time = max(0.01, clk.left(deadline))
    st = s.solve(model)
    clk.charge(float(s.deterministic_time))
    return s, st


def _clock_now() -> float:
    """This thread's solver clock (:mod:`trustlab.solvers._clock`): wall time, or counted
    work (the clique enumeration and the model building are charged ``_BUILD_SECONDS`` per
    clique checked)."""
    from trustlab.solvers._clock import current

    clk = current()
    clk.charge(_CLOCK_EVERY * _BUILD_SECONDS)
    return clk.now()


#: reference seconds charged per clique enumerated or added to a model (approximate)
_BUILD_SECONDS = 2e-5


def _timeout_result(W, warm_labels, n, A, **extra) -> dict:
    labels = np.arange(n, dtype=np.int64) if warm_labels is None else np.asarray(warm_labels, np.int64)
    val = float(objective(W, labels))
    bound = positive_weight_bound(W, A)
    return dict(labels=labels, objective=val, bound=bound, status="time_limit", phase="model_building", **extra)


def _status(s, st, cp_model):
    if st == cp_model.OPTIMAL:
        return "optimal"
    return "time_limit"


def solve_qsp(W, A, *, M: int, deadline=None, workers=None, warm_labels=None, cliques=None,
              max_model_bytes: int = 2 * 1024**3) -> dict:
    """Solve the LSP with CP-SAT. Returns labels/objective/bound/status and model sizes.

    Refuses (``ValueError``) a model whose estimated size exceeds ``max_model_bytes``;
    returns the warm start with ``status="time_limit"`` if ``deadline`` passes while
    the model is being built."""
    from ortools.sat.python import cp_model

    n = W.shape[0]
    if cliques is None:
        cr = _maximal_cliques_csr(A)
        sizes = np.diff(np.asarray(cr.indptr))
        sizes = sizes[sizes >= 2]
    else:
        sizes = np.array([len(c) for c in cliques if len(c) >= 2], np.int64)
    # refuse before the clique lists (let alone the model) are built
    est = qsp_model_size(sizes, M, n)
    _refuse(f"qsp: {sizes.size:,} maximal cliques with M={M}", est, max_model_bytes,
            "Use method='cpp' or 'auto' (exact, no clique enumeration), a smaller M,")
    cl = cliques if cliques is not None else _clique_lists(cr)
    cl = [c for c in cl if len(c) >= 2]
    if deadline is not None and _clock_now() >= deadline:
        return _timeout_result(W, warm_labels, n, A, n_maximal_cliques=len(cl), model_estimate=est)
    model = cp_model.CpModel()
    y = {}  # (k, m, i) -> var
    per_node: list[list] = [[] for _ in range(n)]
    obj = []
    n_u = 0
    for k, S in enumerate(cl):
        if k % _CLOCK_EVERY == 0 and deadline is not None and _clock_now() >= deadline:
            return _timeout_result(W, warm_labels, n, A, n_maximal_cliques=len(cl), model_estimate=est)
        Mk = min(M, len(S) // 2) if len(S) >= 2 else 0  # a partition needs >= 2 nodes to score
        Mk = max(Mk, 1)
        sizes = []
        for m in range(Mk):
            ys = {}
            for i in S:
                v = model.new_bool_var("")
                y[k, m, i] = v
                ys[i] = v
                per_node[i].append(v)
            sizes.append(sum(ys.values()))
            for a in range(len(S)):
                i = S[a]
                for b in range(a + 1, len(S)):
                    j = S[b]
                    wij = float(W[i, j])
                    if wij == 0.0:
                        continue
                    u = model.new_bool_var("")
                    n_u += 1
                    if wij > 0:
                        model.add(u <= ys[i])
                        model.add(u <= ys[j])
                    else:
                        model.add(u >= ys[i] + ys[j] - 1)
                    obj.append(wij * u)
        for m in range(Mk - 1):
            model.add(sizes[m] >= sizes[m + 1])
    for i in range(n):
        if len(per_node[i]) > 1:
            model.add_at_most_one(per_node[i])
    model.maximize(sum(obj) if obj else 0)
    if warm_labels is not None:
        _hint_qsp(model, y, cl, warm_labels, M)
    if deadline is not None and _clock_now() >= deadline:
        return _timeout_result(W, warm_labels, n, A, n_maximal_cliques=len(cl), model_estimate=est)
    s, st = _solve(model, workers, deadline)
    labels = np.arange(n, dtype=np.int64)
    val = 0.0
    bound = positive_weight_bound(W, A)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        for (k, m, i), v in y.items():
            if s.value(v):
                labels[i] = n + k * M + m
        _, labels = np.unique(labels, return_inverse=True)
        labels = labels.astype(np.int64)
        val = float(objective(W, labels))
        bound = float(s.best_objective_bound)
    elif warm_labels is not None:
        labels = np.asarray(warm_labels, np.int64)
        val = float(objective(W, labels))
    return dict(labels=labels, objective=val, bound=bound, status=_status(s, st, cp_model),
                n_maximal_cliques=len(cl), n_y=len(y), n_u=n_u, model_estimate=est)


def _hint_qsp(model, y, cl, warm, M):
    sets = [set(c) for c in cl]
    used: dict[int, int] = {}
    clusters: dict[int, list[int]] = {}
    for i, l in enumerate(np.asarray(warm).tolist()):
        clusters.setdefault(l, []).append(i)
    assign = {}
    for mem in sorted(clusters.values(), key=len, reverse=True):
        if len(mem) < 2:
            continue
        for k, S in enumerate(sets):
            if used.get(k, 0) < M and set(mem) <= S and (k, used.get(k, 0), mem[0]) in y:
                m = used.get(k, 0)
                used[k] = m + 1
                for i in mem:
                    assign[k, m, i] = 1
                break
        else:
            return  # warm start not representable with this M
    for key, v in y.items():
        model.add_hint(v, key in assign)


def solve_spp(W, A, *, deadline=None, workers=None, warm_labels=None, max_cliques: int = 200_000,
              max_model_bytes: int = 2 * 1024**3) -> dict:
    """Weighted set packing over all cliques (size >= 2) with CP-SAT; refuses more than
    ``max_cliques`` cliques or an estimated model over ``max_model_bytes``."""
    from ortools.sat.python import cp_model

    n = W.shape[0]
    G = _graph(A)
    msg = (f"spp: the graph has more than max_cliques={max_cliques} cliques; SPP needs all of "
           "them as columns. Use method='cpp' or 'auto', or raise max_cliques.")
    try:
        from trustlab.cliques import count_cliques
    except ImportError:  # pragma: no cover
        count_cliques = None
    if count_cliques is not None:
        try:
            count_cliques(G, max_count=max_cliques, min_size=2)
        except ValueError:
            raise ValueError(msg) from None
    cl = []
    for t, c in enumerate(nx.enumerate_all_cliques(G)):
        if t % 1024 == 0 and deadline is not None and _clock_now() >= deadline:
            return _timeout_result(W, warm_labels, n, A, n_cliques=len(cl))
        if len(c) >= 2:
            cl.append(c)
            if len(cl) > max_cliques:
                raise ValueError(msg)
    est = spp_model_size(np.array([len(c) for c in cl], np.int64), n)
    _refuse(f"spp: {len(cl):,} cliques", est, max_model_bytes, "Use method='cpp' or 'auto',")
    model = cp_model.CpModel()
    xs = []
    per_node: list[list] = [[] for _ in range(n)]
    obj = []
    for t, c in enumerate(cl):
        if t % 1024 == 0 and deadline is not None and _clock_now() >= deadline:
            return _timeout_result(W, warm_labels, n, A, n_cliques=len(cl), model_estimate=est)
        v = model.new_bool_var("")
        xs.append(v)
        wt = float(sum(W[c[a], c[b]] for a in range(len(c)) for b in range(a + 1, len(c))))
        obj.append(wt * v)
        for i in c:
            per_node[i].append(v)
    for i in range(n):
        if len(per_node[i]) > 1:
            model.add_at_most_one(per_node[i])
    model.maximize(sum(obj) if obj else 0)
    if warm_labels is not None:
        groups: dict[int, list[int]] = {}
        for i, l in enumerate(np.asarray(warm_labels).tolist()):
            groups.setdefault(l, []).append(i)
        want = {tuple(sorted(g)) for g in groups.values() if len(g) >= 2}
        for c, v in zip(cl, xs):
            model.add_hint(v, tuple(sorted(c)) in want)
    if deadline is not None and _clock_now() >= deadline:
        return _timeout_result(W, warm_labels, n, A, n_cliques=len(cl), model_estimate=est)
    s, st = _solve(model, workers, deadline)
    labels = np.arange(n, dtype=np.int64)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        for t, (c, v) in enumerate(zip(cl, xs)):
            if s.value(v):
                labels[c] = n + t
        _, labels = np.unique(labels, return_inverse=True)
        bound = float(s.best_objective_bound)
    else:
        if warm_labels is not None:
            labels = np.asarray(warm_labels, np.int64)
        bound = positive_weight_bound(W, A)
    labels = labels.astype(np.int64)
    val = float(objective(W, labels))
    return dict(labels=labels, objective=val, bound=bound, status=_status(s, st, cp_model),
                n_cliques=len(cl), model_estimate=est)
