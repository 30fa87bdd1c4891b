"""``partition``: clique partitioning with certificates (Phase 2 of xER)."""
from __future__ import annotations

import math
import numbers
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from trustlab._validation import (
    Interval,
    Registry,
    check_dask_client,
    check_int,
    check_option,
    check_random_state,
    renamed_keyword,
    validate_params,
)
from trustlab.solvers._problem import Problem, as_problem, dense_from_edges, positive_weight_bound
from trustlab.solvers._problem import relative_gap as _gap

__all__ = ["partition", "PartitionResult", "METHODS"]

METHODS = Registry("method")
for _m in ("auto", "cpp", "qsp", "spp", "heuristic"):
    METHODS.register(_m, _m)

#: components up to this size go to the exact solver under ``method="auto"``
AUTO_EXACT_MAX = 400
#: components up to this size run a short heuristic before ``cpp`` (resumed only when
#: the exact solver does not prove optimality), and ...
STAGED_MAX = 64
#: ... the heuristic's pause: stale rounds before the exact solver starts
QUICK_PATIENCE = 10


class _Clock:
    """The global time budget of one :func:`partition` call, shared by its components.

    Components start smallest first. When a component starts it gets
    ``remaining * min(1, slots * size / unstarted_size)`` seconds, where ``remaining``
    is the time left of the whole call, ``size`` its node count, ``unstarted_size``
    the node count of the components not started yet (itself included) and ``slots``
    the number of components solved at once; time a component does not use stays in
    ``remaining`` and so passes on to the later ones. Seconds spent compiling kernels
    while the clock runs (:func:`~trustlab.kernels._jit.compile_seconds`: e.g. branch
    and price's, compiled the first time a component needs it) move the deadline on.
    ``deadline`` is a time of the calling thread's solver clock
    (:func:`trustlab.solvers._clock.current`: wall time, or counted work inside one
    component, whose reduced parts share its budget this way).

    With ``work`` (reference seconds of counted work, the default of :func:`partition`)
    the shares do not depend on what the earlier components used, which would make them
    depend on the order in which threads finish: component ``c`` gets
    ``work * min(1, size / unstarted_c)``, ``unstarted_c`` the node count of ``c`` and
    of every component after it in the (smallest first) order, whatever ``slots`` is.
    That is what it would get if every earlier component had used nothing, so the
    largest component gets all of ``work``, as it nearly does under a wall clock when the
    small ones finish quickly; the whole call may then count up to about
    ``work * (1 + ln(total nodes / largest))`` when many components use all of theirs.
    """

    def __init__(self, deadline: float | None, sizes: dict[int, int], slots: int, work: float | None = None):
        import threading

        from trustlab.kernels._jit import compile_seconds

        self.compiled0 = compile_seconds()
        self.deadline = deadline
        self.work = work
        self.left = float(sum(sizes.values()))
        self.sizes = sizes
        self.slots = max(1, slots)
        self.lock = threading.Lock()
        self.unstarted: dict[int, float] = {}
        rest = self.left
        for c, w in sizes.items():  # (in start order)
            self.unstarted[c] = rest
            rest -= w

    def start(self, c: int) -> float | None:
        """Seconds (or reference seconds of work) granted to component ``c`` (None: no limit)."""
        from trustlab.solvers._clock import current as current_clock

        with self.lock:
            w = self.sizes[c]
            if self.work is not None:
                return self.work * min(1.0, w / self.unstarted[c]) if self.unstarted[c] > 0 else self.work
            share = min(1.0, self.slots * w / self.left) if self.left > 0 else 1.0
            self.left -= w
            if self.deadline is None:
                return None
            from trustlab.kernels._jit import compile_seconds

            clk = current_clock()
            deadline = self.deadline + clk.excluded(compile_seconds() - self.compiled0)
            return clk.left(deadline) * share


@dataclass
class PartitionResult:
    """The outcome of :func:`partition`.

    Attributes
    ----------
    labels : numpy.ndarray
        Cluster id (0..n_clusters-1) per node, in the input's node order.
    nodes : list
        The node labels (graph nodes, edge-list names, or 0..n-1 for matrices).
    clusters : list of list
        Members (node labels) of every cluster, largest first.
    objective : float
        Total weight of within-cluster pairs.
    bound : float
        Best proven upper bound on the optimum (sum over components).
    gap : float
        ``(bound - objective) / max(|bound|, |objective|)`` (0 when both are 0).
    status : str
        ``"optimal"`` (objective == bound, up to a relative 1e-9 or the exact solver's
        tolerance), ``"feasible"`` (no exact proof attempted, e.g. the heuristic, and its
        partition short of the bound) or ``"time_limit"`` (stopped by the time limit
        before a proof). The bound of a heuristic or time-limited component is the tighter
        of its solver's and the conflict-wedge packing bound, so ``gap`` is a real
        (pessimistic) optimality gap.
    method : str
    components : list of dict
        Per positive-edge component of >= 2 nodes: ``size``, ``edges``, ``method``,
        ``status``, ``objective``, ``bound``, ``seconds`` and solver details.
    n_singleton_components : int
    seconds : float

    Examples
    --------
    >>> import numpy as np
    >>> r = partition(np.array([[0, 2, -1], [2, 0, -1], [-1, -1, 0]]), random_state=0)
    >>> r.clusters, r.objective, r.status
    ([[0, 1], [2]], 2.0, 'optimal')
    """

    labels: np.ndarray
    nodes: list
    clusters: list
    objective: float
    bound: float
    gap: float
    status: str
    method: str
    components: list = field(default_factory=list)
    n_singleton_components: int = 0
    seconds: float = 0.0
    _problem: Problem | None = field(default=None, repr=False, compare=False)

    @property
    def n_clusters(self) -> int:
        return len(self.clusters)

    def to_dict(self, include_labels: bool = False) -> dict:
        d = {
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "status": self.status,
            "n_clusters": self.n_clusters,
            "seconds": self.seconds,
            "method": self.method,
            "n_nodes": len(self.nodes),
            "n_components": len(self.components) + self.n_singleton_components,
            "components": [{k: v for k, v in c.items() if k != "labels"} for c in self.components],
        }
        if include_labels:
            d["clusters"] = [[_py(v) for v in c] for c in self.clusters]
        return d

    def to_frame(self, node_column: str = "node", cluster_column: str = "cluster"):
        """The partition as a pandas DataFrame: one row per node, in the input's node order.

        Parameters
        ----------
        node_column, cluster_column : str
            Names of the two columns (node label, cluster id ``0..n_clusters-1``).

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> import numpy as np
        >>> r = partition(np.array([[0, 1, -1], [1, 0, -1], [-1, -1, 0]]), random_state=0)
        >>> r.to_frame().values.tolist()
        [[0, 0], [1, 0], [2, 1]]
        """
        import pandas as pd

        if node_column == cluster_column:
            raise ValueError(f"node_column and cluster_column must differ; both are {node_column!r}.")
        nodes = np.empty(len(self.nodes), dtype=object)
        nodes[:] = [_py(v) for v in self.nodes]
        frame = pd.DataFrame({node_column: nodes, cluster_column: np.asarray(self.labels, dtype=np.int64)})
        frame[node_column] = frame[node_column].infer_objects()
        return frame

    def to_networkx(self, edges: str = "input"):
        """The partition as a networkx graph: every node with a ``cluster`` attribute.

        Parameters
        ----------
        edges : {"input", "within", "none"}
            Which edges the graph gets, each with its ``weight``: every edge of the input
            (for a dense matrix input that is every pair), only the pairs inside a
            cluster, or none.

        Returns
        -------
        networkx.Graph

        Examples
        --------
        >>> import numpy as np
        >>> r = partition(np.array([[0, 1, -1], [1, 0, -1], [-1, -1, 0]]), random_state=0)
        >>> G = r.to_networkx(edges="within")
        >>> dict(G.nodes(data="cluster")), list(G.edges(data="weight"))
        ({0: 0, 1: 0, 2: 1}, [(0, 1, 1.0)])
        """
        import networkx as nx

        if edges not in ("input", "within", "none"):
            raise ValueError(f"edges must be 'input', 'within' or 'none'; got {edges!r}.")
        G = nx.Graph()
        labels = np.asarray(self.labels, dtype=np.int64)
        G.add_nodes_from((_py(v), {"cluster": int(k)}) for v, k in zip(self.nodes, labels.tolist()))
        P = self._problem
        if edges == "none":
            return G
        if P is None:
            raise ValueError("this result carries no input graph (built by hand?); use edges='none'.")
        if P.complete:
            r, c = np.triu_indices(P.n, 1)
            w = P.W[r, c]
        else:
            r, c, w = P.rows, P.cols, P.vals
        if edges == "within":
            keep = labels[r] == labels[c]
            r, c, w = r[keep], c[keep], w[keep]
        nodes = [_py(v) for v in self.nodes]
        G.add_weighted_edges_from((nodes[i], nodes[j], float(x)) for i, j, x in zip(r.tolist(), c.tolist(), w))
        return G

    def __repr__(self) -> str:
        return (f"PartitionResult(n_clusters={self.n_clusters}, objective={self.objective:.6g}, "
                f"bound={self.bound:.6g}, gap={self.gap:.3g}, status={self.status!r}, "
                f"method={self.method!r}, seconds={self.seconds:.3f})")


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def default_time_limit(n_nodes: int) -> float:
    """The whole-call budget of :func:`partition` when ``time_limit`` is None:
    ``60 + n_nodes / 10``, at most 600, in reference seconds of counted work (its
    default ``work_limit``: about that many seconds on a quiet machine, approximate).

    Examples
    --------
    >>> default_time_limit(100), default_time_limit(10_000)
    (70.0, 600.0)
    """
    return float(min(600.0, 60.0 + n_nodes / 10.0))


@dataclass(frozen=True)
class _ComponentOptions:
    """How each component of one :func:`partition` call is solved (the same for all;
    picklable, so it travels to Dask workers with the component)."""

    M: int
    workers: int | None
    mip_solver: str
    integral: bool
    max_cliques: int
    heuristic_iters: int
    heuristic_patience: int | None
    max_model_bytes: int
    threads: int = 1  # threads of one component's exact pricing (set per runner, see _solve_components)
    reduce: bool = True  # exact data reduction before the exact methods (trustlab.solvers.reduction)
    packing: bool = True  # the conflict-wedge packing bound (off only for the warm-up, see _preload)
    #: the triangle LP bound of an unproven component, after its search (``partition(lp_bound=)``;
    #: off for the parts of a reduced component, whose caller computes it once every part is
    #: solved, see _lp_certify)
    lp_bound: bool = False
    #: the components' budgets are reference seconds of counted work (trustlab.solvers._clock),
    #: with this wall-clock safety stop (a ``time.time()`` time; None: none)
    work: bool = False
    safety_epoch: float | None = None


@dataclass(frozen=True)
class _Runner:
    """Where the components run: a Dask client, ``n_jobs`` local threads, or serially."""

    client: Any
    n_jobs: int | None
    progress: bool


def _solve_component(W, A, method, opts: _ComponentOptions, *, time_limit, seed) -> dict:
    """Solve one component within ``time_limit`` seconds (None: no limit); a
    top-level function so Dask can ship it.

    The solvers compare with absolute tolerances (HiGHS, CP-SAT's float objectives,
    the tabu search's gains), so a component whose largest |weight| lies outside
    [1, 2**20] is solved on its weights scaled by a power of two (an exact scaling;
    :func:`~trustlab.solvers.heuristic.weight_scale`) and its values are scaled back
    (``weight_scale`` in the statistics). Scaled down, integer weights may stop being
    integers, so the bounds are then not rounded down."""
    from trustlab.solvers.heuristic import weight_scale

    f = weight_scale(W, A)
    if f == 1.0:
        return _solve_scaled_component(W, A, method, opts, time_limit=time_limit, seed=seed)
    info = _solve_scaled_component(W * f, A, method, replace(opts, integral=False), time_limit=time_limit,
                                   seed=seed)
    for key in ("objective", "bound", "heuristic_objective", "root_bound", "packing_bound", "lp_bound"):
        if info.get(key) is not None:
            info[key] = float(info[key]) / f
    info["weight_scale"] = f
    return info


def _solve_scaled_component(W, A, method, opts: _ComponentOptions, *, time_limit, seed) -> dict:
    """:func:`_solve_component` on weights of a safe scale."""
    from trustlab.kernels._jit import compile_seconds
    from trustlab.solvers._clock import current as current_clock
    from trustlab.solvers.heuristic import _Search, solve_heuristic

    clk = current_clock()  # wall time, or counted work (the default): trustlab.solvers._clock
    t0 = time.perf_counter()
    deadline = None if time_limit is None else clk.now() + time_limit
    compiled0 = compile_seconds()
    n = W.shape[0]
    rng = np.random.default_rng(seed)
    n_edges = int(np.triu(A, 1).sum())
    info: dict[str, Any] = {"size": n, "edges": n_edges}
    if time_limit is not None:
        info["time_budget"] = float(time_limit)
    if method == "auto":
        method = "cpp" if n <= AUTO_EXACT_MAX else "heuristic"
    info["method"] = method
    # the conflict-wedge packing bound (deterministic, capped work): on components the exact
    # solver could take, before the search (its target: a search that reaches it has an
    # optimal partition and stops; and cpp skips the exact solve); a floor under the exact
    # solver's bound. On larger heuristic components it is only the certificate, computed
    # after the search (whose time it does not take)
    pack_ub = None
    if method in ("cpp", "heuristic") and 3 <= n <= AUTO_EXACT_MAX and opts.packing:
        pack_ub = _packing_upper_bound(W, A, opts.integral, info)
        if deadline is not None:  # its compile (or cold-cache twin) does not count
            deadline += clk.excluded(compile_seconds() - compiled0)
            compiled0 = compile_seconds()
    # the heuristic first, with the same seed and stopping rule as method="heuristic":
    # the answer for "heuristic" and the warm start (and floor) of every exact method.
    # Small components under "cpp" pause it after QUICK_PATIENCE stale rounds: the exact
    # solver proves them in milliseconds, and only if it does not is the search resumed
    # to its full stopping rule (ending exactly where an uninterrupted run would).
    search = None
    staged = method == "cpp" and n <= STAGED_MAX
    if n <= 1:
        lab, val = solve_heuristic(W, A, rng=rng)
    else:
        search = _Search(W, A, rng=rng, max_rounds=opts.heuristic_iters, patience=opts.heuristic_patience,
                         init=None, params=None)
        search.run(deadline=deadline, pause=QUICK_PATIENCE if staged else None, target=pack_ub)
        lab, val = search.result()
    if deadline is not None:  # a cold start's seconds (the search's exact Python twins) do not count
        deadline += clk.excluded(compile_seconds() - compiled0)
        compiled0 = compile_seconds()
    info["heuristic_objective"] = val
    info["heuristic_seconds"] = time.perf_counter() - t0
    if method == "heuristic":
        ub, status = _trivial_certificate(val, positive_weight_bound(W, A), opts.integral)
        r = dict(labels=lab, objective=val, bound=ub, status=status)
    elif method == "cpp" and pack_ub is not None and _meets(val, pack_ub):
        # the heuristic's partition meets the packing bound: proven, no exact solve
        r = dict(labels=lab, objective=val, bound=pack_ub, status="optimal", phase="packing", root_bound=pack_ub,
                 lp_rounds=0, cuts=0, cuts_by_family={}, nodes=0)
    elif method == "cpp":
        from trustlab.solvers.cpp import solve_cpp

        exact_deadline = deadline
        if staged and search is not None and deadline is not None and not search.finished:
            # keep time to finish the paused search if the proof fails, so the answer is
            # never worse than method="heuristic" with the same budget: twice its estimated
            # remaining time, at most half of what is left
            left = clk.left(deadline)
            exact_deadline = deadline - min(0.5 * left, 2.0 * search.seconds_to_finish())
            info["heuristic_reserve"] = deadline - exact_deadline
        finish = None
        if staged and search is not None and not search.finished:
            def finish():  # branch and price is starting: finish the search, free its reserve
                end = None if deadline is None else deadline + clk.excluded(compile_seconds() - compiled0)
                t1 = time.perf_counter()
                search.run(deadline=end, target=pack_ub)
                info["heuristic_seconds"] += time.perf_counter() - t1
                # read again: the search may have compiled its kernels (its exact Python twins
                # ran out of steps on a cold cache), and branch and price must not pay for that
                end = None if deadline is None else deadline + clk.excluded(compile_seconds() - compiled0)
                return (*search.result(), end)
        r = solve_cpp(W, A, warm_labels=lab, warm_obj=val, deadline=exact_deadline, integral=opts.integral,
                      mip_solver=opts.mip_solver, workers=opts.workers, threads=opts.threads, finish_warm=finish)
    elif method == "qsp":
        from trustlab.solvers.qsp import solve_qsp

        r = solve_qsp(W, A, M=opts.M, deadline=deadline, workers=opts.workers, warm_labels=lab,
                      max_model_bytes=opts.max_model_bytes)
    else:
        from trustlab.solvers.qsp import solve_spp

        r = solve_spp(W, A, deadline=deadline, workers=opts.workers, warm_labels=lab,
                      max_cliques=opts.max_cliques, max_model_bytes=opts.max_model_bytes)
    if deadline is not None:  # kernels compiled by the exact solver (e.g. branch and price's) do not count
        deadline += clk.excluded(compile_seconds() - compiled0)
    if search is not None and not search.finished and r["status"] != "optimal":
        # not proven: finish the heuristic's own run and keep the better of the two
        t1 = time.perf_counter()
        search.run(deadline=deadline, target=pack_ub)
        info["heuristic_seconds"] += time.perf_counter() - t1
    if search is not None and search.finished:
        lab, val = search.result()  # also when solve_cpp finished it (finish_warm)
        info["heuristic_objective"] = val
    info.update(r)
    info["labels"] = np.asarray(r["labels"], np.int64)
    info["objective"] = float(r["objective"])
    info["bound"] = float(r["bound"])
    if info["objective"] < val - 1e-9:
        # never return less than the heuristic found (e.g. qsp with a small M, whose
        # optimum is then not the CPP's)
        info["labels"], info["objective"] = np.asarray(lab, np.int64), float(val)
        info["bound"] = max(info["bound"], info["objective"])
        if info["status"] == "optimal":
            info["status"] = "feasible"
    if pack_ub is None and info["status"] != "optimal" and method in ("cpp", "heuristic") and n >= 3 and opts.packing:
        pack_ub = _packing_upper_bound(W, A, opts.integral, info)  # (larger components: after the search)
    if pack_ub is not None and info["status"] != "optimal" and pack_ub < info["bound"]:
        # the packing bound is the tighter one: it certifies the gap, or proves the partition
        info["bound"] = max(pack_ub, info["objective"])
        if _meets(info["objective"], pack_ub):
            info["status"] = "optimal"
            info["proved_by"] = "packing"
    if method in ("cpp", "heuristic") and opts.lp_bound and opts.packing and info["status"] != "optimal":
        _lp_certify(W, A, opts.integral, info, _lp_budget(time_limit, clk.left(deadline)))
    if info["status"] == "optimal":
        # CP-SAT scales float objectives internally; its proof holds up to that scaling
        info["bound"] = info["objective"]
    info["seconds"] = time.perf_counter() - t0
    return info


#: the triangle LP bound's budget (reference seconds of counted work, after the search): what
#: is left of the component's own budget, at least ``LP_BUDGET_SHARE`` of that budget, at most
#: :data:`~trustlab.solvers.bounds.LP_MAX_SECONDS`; None (no time limit): the latter
LP_BUDGET_SHARE = 0.25


def _lp_budget(time_limit, left) -> float:
    """Reference seconds the triangle LP bound of a component granted ``time_limit`` (None:
    no limit) may charge, ``left`` of which its search did not use (see
    :data:`LP_BUDGET_SHARE`).

    Examples
    --------
    >>> _lp_budget(None, None), _lp_budget(120.0, 80.0), _lp_budget(4.0, 0.0)
    (10.0, 10.0, 1.0)
    """
    from trustlab.solvers.bounds import LP_MAX_SECONDS

    if time_limit is None:
        return float(LP_MAX_SECONDS)
    return float(min(LP_MAX_SECONDS, max(0.0 if left is None else float(left), LP_BUDGET_SHARE * float(time_limit))))


def _lp_certify(W, A, integral: bool, info: dict, budget: float) -> None:
    """Tighten the bound of a component (dense ``W``, ``A``) that ended unproven with the
    triangle LP bound (:func:`~trustlab.solvers.bounds.triangle_lp_bound`, weak duality
    from the LP's multipliers, so valid whatever the solver's tolerances; rounded down
    for integer weights). Runs after the search, so the partition does not depend on it.
    Its work is counted (:func:`~trustlab.solvers.bounds.lp_charge`), capped at ``budget``
    reference seconds (:func:`_lp_budget`) and charged to the component's clock; the only
    wall-clock limit is the work budget's safety stop (an explicit ``time_limit``: ``budget``
    wall seconds), and only where it stops an LP does the bound depend on the machine's
    speed (``lp_bound_wall_stop``). ``lp_bound``, ``lp_bound_rounds``, ``lp_bound_complete``,
    ``lp_bound_work``, ``lp_bound_budget`` and ``lp_bound_seconds`` in ``info``. A partition
    that meets the bound is ``optimal`` with ``proved_by="lp"``."""
    n = W.shape[0]
    if info["status"] == "optimal" or n < 3:
        return
    iu, ju = np.nonzero(np.triu(np.asarray(A, bool), 1))
    _lp_certify_edges(n, iu, ju, np.asarray(W, np.float64)[iu, ju], integral, info, budget)


def _lp_certify_edges(n, rows, cols, vals, integral: bool, info: dict, budget: float) -> None:
    """:func:`_lp_certify` on an edge-form component (nothing once the work clock's
    wall-clock safety stop has passed: the run is already far slower than its budget; nothing
    on more than :data:`~trustlab.solvers.bounds.LP_MAX_PAIRS` pairs of positive weight: the
    other pairs enter the LP only where a row holds them)."""
    from trustlab.solvers._clock import current as current_clock
    from trustlab.solvers.bounds import LP_MAX_PAIRS, triangle_lp_bound

    clk = current_clock()
    if clk.safety_hit or np.count_nonzero(vals > 0) > LP_MAX_PAIRS or budget <= 0:
        return
    t = time.perf_counter()
    obj = float(info["objective"])
    b = triangle_lp_bound(int(n), rows, cols, vals, target=obj + 1e-9 * max(1.0, abs(obj)), max_seconds=budget,
                          wall_limit=clk.wall_left(None) if clk.work else budget)
    clk.charge(b["work"])  # (counted work on a work clock)
    ub = b["bound"]
    if integral:
        ub = float(np.floor(ub + 1e-9 * max(1.0, abs(ub))))
    info.update(lp_bound=float(ub), lp_bound_rounds=int(b["rounds"]), lp_bound_complete=bool(b["complete"]),
                lp_bound_work=float(b["work"]), lp_bound_budget=float(budget), lp_bound_seconds=time.perf_counter() - t)
    if b["wall_stop"]:
        info["lp_bound_wall_stop"] = True
    if ub < info["bound"]:
        info["bound"] = max(ub, obj)
        if _meets(obj, ub):
            info["status"] = "optimal"
            info["proved_by"] = "lp"


def _preload(method: str, opts: _ComponentOptions) -> None:
    """Load the modules and Numba kernels of ``method`` once per process, on a 3-node
    instance (the heuristic's kernels, the exact solver's modules, the clique kernels
    of ``qsp``/``spp``)."""
    from trustlab.kernels._jit import warm_once

    W = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    A = ~np.eye(3, dtype=bool)

    def run():  # (without the packing bound, which proves this instance before the exact solver loads)
        _solve_component(W, A, method, replace(opts, workers=1, integral=False, packing=False), seed=0,
                         time_limit=None)

    try:
        warm_once(f"partition:{method}", run)
    except Exception:  # only a warm-up (e.g. spp with max_cliques < 7 refuses it): the real
        pass  # components report their own errors


def _prepare(P: Problem, parts: "_Decomposition", method: str, opts: _ComponentOptions) -> float:
    """Stage 2b: compile (or load from the Numba cache) every kernel and load every
    module the components will need, before the clock starts; the seconds it took,
    which :func:`partition` adds to its deadline (so a cold compile cache, seconds
    per kernel family, never eats the budget and the result does not depend on it).
    Kernels that only some components need later (branch and price's pricing) are
    compiled when first needed and excluded from the deadlines the same way
    (:class:`_Clock`, :func:`_solve_scaled_component`)."""
    from trustlab.solvers import heuristic, sparse

    t = time.perf_counter()
    sizes = parts.sizes().values()
    if any(P.complete or n <= sparse.SPARSE_MIN_NODES for n in sizes):
        heuristic.prepare()  # (compiles nothing while the search's exact Python twins will run)
        _preload(method, opts)
    if not P.complete and any(n > sparse.SPARSE_MIN_NODES for n in sizes):
        sparse.ensure_compiled()
    if any(n > _PACKING_TWIN_NODES for n in sizes):
        # the packing bound's kernel: compiled (or loaded) in one thread while the others
        # solve small components under their clocks, it cost them their proofs
        from trustlab.solvers.bounds import ensure_compiled as packing_kernel

        packing_kernel()
    return time.perf_counter() - t


def _solve_component_job(job: tuple) -> dict:
    """Dask entry point: the arguments travel in one tuple (``Client.submit`` has its
    own ``workers=`` keyword)."""
    task, method, opts, seed, time_limit = job
    return _solve_task(task, method, opts, seed=seed, time_limit=time_limit)


#: components of more nodes compile the packing bound's kernel before any clock starts
#: (smaller ones may run its exact Python twin while it is cold: at most a few ms)
_PACKING_TWIN_NODES = 40


def _meets(val: float, ub: float) -> bool:
    """True when ``val`` reaches the upper bound ``ub`` up to a relative 1e-9 (sums of
    many weights round)."""
    return val >= ub - 1e-9 * max(1.0, abs(ub))


def _packing_upper_bound(W, A, integral: bool, info: dict) -> float:
    """The conflict-wedge packing bound of a dense component
    (:func:`~trustlab.solvers.bounds.packing_bound`; rounded down for integer weights, with
    a relative tolerance so rounding never cuts below a true value); records
    ``packing_bound``, ``packing_complete`` (False: stopped at its work cap) and
    ``packing_seconds`` in ``info``."""
    from trustlab.solvers.bounds import packing_bound_dense

    t = time.perf_counter()
    b = packing_bound_dense(W, A)
    ub = b["bound"]
    if integral:
        ub = float(np.floor(ub + 1e-9 * max(1.0, abs(ub))))
    info.update(packing_bound=float(ub), packing_complete=b["complete"], packing_seconds=time.perf_counter() - t)
    return float(ub)


def _trivial_certificate(val: float, positive_sum: float, integral: bool) -> tuple[float, str]:
    """The heuristics' bound (the sum of positive weights, rounded down for integer
    weights) and status: ``"optimal"`` when the objective reaches it (relative
    tolerance: sums of huge weights round), else ``"feasible"``."""
    ub = float(np.floor(positive_sum + 1e-9)) if integral else float(positive_sum)
    return ub, "optimal" if val >= ub - 1e-9 * max(1.0, abs(ub)) else "feasible"


def _solve_task(task: tuple, method: str, opts: _ComponentOptions, *, seed: int, time_limit) -> dict:
    """Solve one component given as :meth:`Problem.sub` returns it. A graph-form
    component of more than :data:`~trustlab.solvers.sparse.SPARSE_MIN_NODES` nodes goes
    to the O(n + m)-memory sparse search whatever the method (the dense solvers would
    hold several n x n arrays); the others are solved densely by :func:`_solve_component`.

    With ``opts.work`` the component runs on its own
    :class:`~trustlab.solvers._clock.WorkClock` (``time_limit`` is then reference seconds
    of counted work; the safety stop ``opts.safety_epoch``) and reports ``budget``
    (``"work"``), ``work_spent`` and ``safety_stop`` (True when the wall-clock safety stop,
    not the work budget, ended it: then, and only then, the machine's load may have
    changed its answer; a component it ended unproven has status ``"time_limit"``)."""
    if not opts.work:
        return _solve_task_on(task, method, opts, seed=seed, time_limit=time_limit)
    from trustlab.solvers._clock import WorkClock, using

    safety = None if opts.safety_epoch is None else time.perf_counter() + (opts.safety_epoch - time.time())
    clk = WorkClock(safety)
    with using(clk):
        info = _solve_task_on(task, method, opts, seed=seed, time_limit=time_limit)
    # the safety stop was read, or the solve ended past it (an external solver's or a
    # kernel's wall limit is the safety stop's): reported as what ended it
    # (the triangle LP bound runs after the search, capped by counts: its seconds are not the
    # search's, so they do not count towards the safety stop)
    hit = clk._hit or (safety is not None and time.perf_counter() - float(info.get("lp_bound_seconds", 0.0)) >= safety)
    info.update(budget="work", work_spent=float(clk.spent), safety_stop=bool(hit))
    if hit and info.get("status") != "optimal":
        info["status"] = "time_limit"
    return info


def _solve_task_on(task: tuple, method: str, opts: _ComponentOptions, *, seed: int, time_limit) -> dict:
    """:func:`_solve_task` on the current thread's clock."""
    # before the component's own clock starts (on a Dask worker the first component
    # compiles them; in a local run partition has already done so)
    from trustlab.solvers.bounds import ensure_compiled as packing_kernel
    from trustlab.solvers.heuristic import prepare as dense_kernels
    from trustlab.solvers.sparse import SPARSE_MIN_NODES
    from trustlab.solvers.sparse import ensure_compiled as sparse_kernels

    if task[0] == "dense":
        W, A = task[1], task[2]
    else:
        _, m, rows, cols, vals = task
        if m > SPARSE_MIN_NODES:
            sparse_kernels()
            packing_kernel()
            return _solve_sparse_component(m, rows, cols, vals, method, opts, seed=seed, time_limit=time_limit)
        W, A = dense_from_edges(m, rows, cols, vals)
    dense_kernels()
    if W.shape[0] > _PACKING_TWIN_NODES:
        packing_kernel()
    if opts.reduce and method != "heuristic" and 2 < W.shape[0] <= REDUCE_MAX_NODES:
        return _solve_reduced_component(W, A, method, opts, seed=seed, time_limit=time_limit)
    return _solve_component(W, A, method, opts, seed=seed, time_limit=time_limit)


#: components of more nodes are not reduced (dense O(n^2) work per round, several n x n arrays)
REDUCE_MAX_NODES = 2500
#: share of a component's time the exact data reduction may take (it stops between rounds);
#: under ``auto``, a component too large for the exact solver gets the second
REDUCE_SHARE, REDUCE_SHARE_BIG = 0.25, 0.05
#: statistics of a reduced component's solved parts copied to the component's own
#: (from its largest part): the keys every part reports on its own
_PART_KEYS = ("size", "edges", "labels", "objective", "bound", "status", "seconds", "time_budget",
              "heuristic_objective", "heuristic_seconds", "packing_bound", "packing_complete", "packing_seconds",
              "proved_by", "lp_bound", "lp_bound_rounds", "lp_bound_complete", "lp_bound_seconds", "lp_bound_work",
              "lp_bound_budget", "lp_bound_wall_stop")


def _solve_reduced_component(W, A, method, opts: _ComponentOptions, *, seed, time_limit) -> dict:
    """:func:`_solve_component` after exact data reduction
    (:func:`~trustlab.solvers.reduction.reduce_component`): merge the nodes that some
    optimal partition keeps together, forbid pairs that some optimal partition keeps
    apart, and solve the positive-edge parts of the reduced problem one by one under a
    :class:`_Clock` of the component's time. Values are reported in the component's own
    terms (objective on its weights, bound = the parts' bounds + the merged pairs'
    weight); a component the rules leave unchanged is solved as before, with its own
    seed. ``reduction`` in the statistics: nodes before/after, the largest part, the
    merges per rule, the forbidden pairs, rounds, seconds, ``applied``, and the parts'
    sizes and methods; the solver details (``phase``, ``cuts_by_family``, ``nodes``, ...)
    are the largest part's, ``root_bound`` the parts' root bounds plus the offset. A
    component the reduction solves alone (no part of 2 or more nodes left) reports
    ``phase="trivial"`` under ``cpp``."""
    from trustlab.kernels._jit import compile_seconds
    from trustlab.solvers._clock import current as current_clock
    from trustlab.solvers.reduction import reduce_component

    clk = current_clock()
    t0 = time.perf_counter()
    c0 = clk.now()
    compiled0 = compile_seconds()
    deadline = None if time_limit is None else c0 + time_limit
    n = W.shape[0]
    auto_big = method == "auto" and n > AUTO_EXACT_MAX
    share = REDUCE_SHARE_BIG if auto_big else REDUCE_SHARE
    red = reduce_component(W, A, seed=seed, deadline=None if time_limit is None else c0 + share * time_limit,
                           max_part=AUTO_EXACT_MAX if auto_big else None)
    if deadline is not None:  # a cold start's seconds (the search's exact Python twins) do not count
        deadline += clk.excluded(compile_seconds() - compiled0)
    stats = dict(red.stats)
    # under auto, a component too large for the exact solver is reduced only if all its
    # parts then fit it; otherwise it goes to the heuristic as given
    stats["applied"] = red.changed and not (auto_big and red.stats["largest_part"] > AUTO_EXACT_MAX)
    if not stats["applied"]:
        rest = clk.left(deadline)
        info = _solve_component(W, A, method, opts, seed=seed, time_limit=rest)
        info["reduction"] = stats
        if time_limit is not None:
            info["time_budget"] = float(time_limit)
        info["seconds"] = time.perf_counter() - t0
        return info
    parts = [p for p in red.parts if p.size >= 2]
    stats["parts"] = [int(p.size) for p in parts]
    order = sorted(range(len(parts)), key=lambda i: (parts[i].size, i))  # smallest first
    clock = _Clock(deadline, {i: int(parts[i].size) for i in order}, 1)
    # the largest part keeps the component's seed (a component reduced to one part is
    # searched with the same seed as before); the others get seeds drawn from it
    seeds = np.random.default_rng(seed).integers(0, 2**63 - 1, size=max(1, len(parts)))
    seeds[0] = seed
    lab = np.arange(len(red.groups), dtype=np.int64)  # a vertex of no part is its own cluster
    nxt = lab.size
    bound = heur = red.offset
    statuses, outs = [], {}
    part_opts = replace(opts, lp_bound=False)  # (the LP bounds after every part: no part's time depends on them)
    for i in order:
        p = parts[i]
        out = _solve_component(np.ascontiguousarray(red.W[np.ix_(p, p)]), np.ascontiguousarray(red.A[np.ix_(p, p)]),
                               method, part_opts, seed=int(seeds[i]), time_limit=clock.start(i))
        _, loc = np.unique(np.asarray(out["labels"], np.int64), return_inverse=True)
        lab[p] = nxt + loc
        nxt += int(loc.max()) + 1
        outs[i] = out
    # the unproven parts' LP bounds share the component's LP budget (smallest part first)
    lp_left = _lp_budget(time_limit, clk.left(deadline)) if opts.lp_bound else 0.0
    for i in order:
        out = outs[i]
        if opts.lp_bound and opts.packing and out["method"] in ("cpp", "heuristic") and out["status"] != "optimal":
            p = parts[i]
            _lp_certify(red.W[np.ix_(p, p)], red.A[np.ix_(p, p)], opts.integral, out, lp_left)
            lp_left -= out.get("lp_bound_work", 0.0)
            if out["status"] == "optimal":
                out["bound"] = out["objective"]
        bound += out["bound"]
        heur += out["heuristic_objective"]
        statuses.append(out["status"])
    labels = red.expand(lab)
    _, labels = np.unique(labels, return_inverse=True)
    same = labels[:, None] == labels[None, :]
    objective = float(np.triu(np.where(same & A, W, 0.0), 1).sum())
    if "time_limit" in statuses:
        status = "time_limit"
    elif all(s == "optimal" for s in statuses):
        status = "optimal"
    else:
        status = "feasible"
    if status == "optimal":
        bound = objective  # the parts' bounds + offset, up to the rounding of the sums
    info: dict[str, Any] = {}
    bound = float(max(bound, objective))
    if parts:
        # the largest part's solver details (cuts, nodes, phase, ...); the root bound in
        # the component's terms
        info.update({k: v for k, v in outs[0].items() if k not in _PART_KEYS})
        stats["part_methods"] = sorted({outs[i]["method"] for i in outs})
        if any("root_bound" in o for o in outs.values()):
            rb = red.offset + sum(o.get("root_bound", o["bound"]) for o in outs.values())
            info["root_bound"] = float(max(rb, bound))
        if any("packing_bound" in o for o in outs.values()):  # in the component's terms, as root_bound
            info["packing_bound"] = float(red.offset + sum(o.get("packing_bound", o["bound"]) for o in outs.values()))
            info["packing_complete"] = all(o.get("packing_complete", True) for o in outs.values())
            info["packing_seconds"] = float(sum(o.get("packing_seconds", 0.0) for o in outs.values()))
            n_pack = sum(o.get("proved_by") == "packing" or o.get("phase") == "packing" for o in outs.values())
            if n_pack:
                stats["parts_proved_by_packing"] = int(n_pack)
        if any("lp_bound" in o for o in outs.values()):
            info["lp_bound_seconds"] = float(sum(o.get("lp_bound_seconds", 0.0) for o in outs.values()))
            info["lp_bound_work"] = float(sum(o.get("lp_bound_work", 0.0) for o in outs.values()))
            if any(o.get("lp_bound_wall_stop") for o in outs.values()):
                info["lp_bound_wall_stop"] = True
            n_lp = sum(o.get("proved_by") == "lp" for o in outs.values())
            if n_lp:
                stats["parts_proved_by_lp"] = int(n_lp)
    else:  # the reduction alone solved it: nothing was left for the solver
        info["method"] = "cpp" if method == "auto" else method
        if info["method"] == "cpp":
            info.update(root_bound=bound, cuts_by_family={}, nodes=0, phase="trivial")
    info.update(size=n, edges=int(np.triu(A, 1).sum()), labels=labels.astype(np.int64), objective=objective,
                bound=bound, status=status, heuristic_objective=float(heur),
                heuristic_seconds=float(sum(o.get("heuristic_seconds", 0.0) for o in outs.values())),
                reduction=stats, seconds=time.perf_counter() - t0)
    if time_limit is not None:
        info["time_budget"] = float(time_limit)
    return info


def _solve_sparse_component(m, rows, cols, vals, method, opts: _ComponentOptions, *, seed, time_limit) -> dict:
    """:func:`_solve_task` for a large graph-form component: the sparse heuristic, its
    bound the sum of positive weights less the conflict-wedge packing (statistics as for
    ``method="heuristic"``)."""
    from trustlab.solvers._clock import current as current_clock
    from trustlab.solvers.sparse import solve_sparse_heuristic

    t0 = time.perf_counter()
    deadline = None if time_limit is None else current_clock().now() + time_limit
    info: dict[str, Any] = {"size": int(m), "edges": int(rows.size), "method": "sparse_heuristic",
                            "requested_method": method}
    if time_limit is not None:
        info["time_budget"] = float(time_limit)
    st: dict = {}
    lab, val = solve_sparse_heuristic(m, rows, cols, vals, rng=np.random.default_rng(seed), deadline=deadline,
                                      stats=st)
    ub, status = _trivial_certificate(val, float(vals[vals > 0].sum()), opts.integral)
    if status != "optimal":  # the conflict-wedge packing bound (capped work; after the search)
        from trustlab.solvers.bounds import packing_bound

        t1 = time.perf_counter()
        b = packing_bound(int(m), rows, cols, vals)
        pub = float(np.floor(b["bound"] + 1e-9 * max(1.0, abs(b["bound"])))) if opts.integral else b["bound"]
        info.update(packing_bound=pub, packing_complete=b["complete"], packing_seconds=time.perf_counter() - t1)
        if pub < ub:
            ub = max(pub, val)
            status = "optimal" if _meets(val, pub) else status
    info.update(labels=lab, objective=val, bound=ub, status=status,
                heuristic_objective=val, heuristic_rounds=st.get("rounds", 0),
                heuristic_seconds=time.perf_counter() - t0)
    if status != "optimal" and opts.lp_bound and opts.packing:
        _lp_certify_edges(int(m), np.asarray(rows, np.int64), np.asarray(cols, np.int64),
                          np.asarray(vals, np.float64), opts.integral, info,
                          _lp_budget(time_limit, current_clock().left(deadline)))
    info["seconds"] = time.perf_counter() - t0
    return info


# ----------------------------------------------------------------------------- stages


def _check_options(*, M, workers, n_jobs, mip_solver, max_cliques, max_model_bytes, heuristic_iters,
                   heuristic_patience) -> tuple[dict, int | None]:
    """Stage 1: the solver options, checked: the keywords of :class:`_ComponentOptions`
    (but ``integral``, a property of the input) and ``n_jobs``."""
    f = "partition"
    M = 10 if M is None else check_int(M, "M", low=1, func=f)
    if workers is not None:
        workers = check_int(workers, "workers", low=1, func=f)
    if n_jobs is not None:
        n_jobs = check_int(n_jobs, "n_jobs", low=1, func=f)
    mip_solver = check_option(mip_solver, "mip_solver", ["scip", "cpsat"], func=f)
    max_cliques = check_int(max_cliques, "max_cliques", low=1, func=f)
    max_model_bytes = check_int(max_model_bytes, "max_model_bytes", low=1, func=f)
    heuristic_iters = check_int(heuristic_iters, "heuristic_iters", low=1, func=f)
    if heuristic_patience is not None:
        heuristic_patience = check_int(heuristic_patience, "heuristic_patience", low=1, func=f)
    return dict(M=M, workers=workers, mip_solver=mip_solver, max_cliques=max_cliques,
                max_model_bytes=max_model_bytes, heuristic_iters=heuristic_iters,
                heuristic_patience=heuristic_patience), n_jobs


def _deadline(t0: float, time_limit: float | None, n_nodes: int) -> float | None:
    """The whole call's deadline: ``time_limit`` None is the size-scaled default
    budget, ``inf`` no limit (None)."""
    if time_limit is None:
        time_limit = default_time_limit(n_nodes)
    return None if math.isinf(time_limit) else t0 + time_limit


@dataclass(frozen=True)
class _Decomposition:
    """Stage 2: the components of the positive-edge graph (one component holding
    every node when ``decompose`` is False)."""

    comps: list
    comp_of: np.ndarray
    #: components of >= 2 nodes, smallest first (the order the clock starts them in)
    big: list
    decompose: bool

    @classmethod
    def of(cls, P: Problem, decompose: bool) -> "_Decomposition":
        comps = P.components(decompose)
        comp_of = np.empty(P.n, np.int64)
        for c, idx in enumerate(comps):
            comp_of[idx] = c
        big = sorted((c for c, idx in enumerate(comps) if idx.size >= 2), key=lambda c: (comps[c].size, c))
        return cls(comps, comp_of, big, decompose)

    def sizes(self) -> dict[int, int]:
        return {c: int(self.comps[c].size) for c in self.big}

    def task(self, P: Problem, c: int) -> tuple:
        """Component ``c`` as :meth:`Problem.sub` gives it (its edges in graph form, so
        what travels to a worker is O(edges); dense matrices are built where it runs)."""
        return P.sub(self.comps[c], self.comp_of if self.decompose else None, c)


def _solve_components(P: Problem, parts: _Decomposition, method: str, opts: _ComponentOptions,
                      seeds: np.ndarray, deadline: float | None, run: _Runner) -> dict[int, dict]:
    """Stage 3: solve every component of >= 2 nodes under one :class:`_Clock`; the
    solver output per component index."""
    big = parts.big
    from tqdm.auto import tqdm

    threads = run.n_jobs or os.cpu_count() or 1
    bar = tqdm(total=len(big), desc="components", unit="comp", disable=not run.progress or not big)
    try:
        if run.client is not None and big:
            return _solve_on_dask(run.client, P, parts, method, opts, seeds, deadline, bar)
        if len(big) > 1 and threads > 1:
            slots = min(len(big), threads, _memory_slots(P, parts))
            return _solve_on_threads(slots, P, parts, method, replace(opts, threads=max(1, threads // slots)),
                                     seeds, deadline, bar)
        opts = replace(opts, threads=threads)  # one component at a time: its exact pricing takes the threads
        clock = _call_clock(deadline, parts.sizes(), 1, opts)
        outs = {}
        for c in big:
            outs[c] = _solve_task(parts.task(P, c), method, opts, seed=int(seeds[c]), time_limit=clock.start(c))
            bar.update()
        return outs
    finally:
        bar.close()


def _call_clock(deadline, sizes: dict[int, int], slots: int, opts: _ComponentOptions) -> _Clock:
    """The :class:`_Clock` of one call: ``deadline`` is a wall-clock time, or with
    ``opts.work`` the call's budget in reference seconds of counted work."""
    if opts.work:
        return _Clock(None, sizes, slots, work=deadline)
    return _Clock(deadline, sizes, slots)


def _memory_slots(P: Problem, parts: _Decomposition) -> int:
    """How many components may be solved at once without their dense arrays (about
    40 n^2 bytes each: weights, mask, the search's copies and gain table) exceeding
    half of this machine's memory (8 GiB where it cannot be read), counting every
    slot as the largest densely solved component."""
    from trustlab._validation import physical_memory
    from trustlab.solvers.sparse import SPARSE_MIN_NODES

    dense = [n for n in parts.sizes().values() if P.complete or n <= SPARSE_MIN_NODES]
    if not dense:
        return len(parts.big)
    budget = (physical_memory() or 16 * 2**30) // 2
    return max(1, int(budget // (40 * max(dense) ** 2)))


def _solve_on_dask(client, P, parts, method, opts, seeds, deadline, bar) -> dict[int, dict]:
    """Every component is submitted at once, with its size share of the time left now."""
    clock = _call_clock(deadline, parts.sizes(), len(parts.big), opts)
    futs = {c: client.submit(_solve_component_job,
                             (parts.task(P, c), method, opts, int(seeds[c]), clock.start(c)), pure=False)
            for c in parts.big}
    outs = {}
    for c, f in futs.items():
        outs[c] = f.result()
        bar.update()
    return outs


def _solve_on_threads(slots, P, parts, method, opts, seeds, deadline, bar) -> dict[int, dict]:
    """``slots`` components at once; each gets its share when a thread starts it."""
    clock = _call_clock(deadline, parts.sizes(), slots, opts)

    def job(c):  # the component's arrays are built in the thread that solves it (peak memory)
        return _solve_task(parts.task(P, c), method, opts, seed=int(seeds[c]), time_limit=clock.start(c))

    outs = {}
    ex = ThreadPoolExecutor(max_workers=slots)
    try:
        futs = {ex.submit(job, c): c for c in parts.big}
        for f in as_completed(futs):
            outs[futs[f]] = f.result()
            bar.update()
    except BaseException:
        # a signal (SIGTERM, Ctrl-C) or an error: the components not started are dropped at
        # once; waiting for them (``with ThreadPoolExecutor``) solved every one of them
        # first, 57 s after a SIGTERM on 600 components. Running ones end on their own.
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    return outs


def _assemble(P: Problem, parts: _Decomposition, outs: dict[int, dict], method: str, t0: float) -> PartitionResult:
    """Stage 4: global labels (clusters largest first), objective, summed bound, status."""
    labels = np.empty(P.n, np.int64)
    nxt = 0
    bound = 0.0
    statuses = []
    stats = []
    for c, idx in enumerate(parts.comps):
        if idx.size < 2:
            labels[idx] = nxt
            nxt += 1
            continue
        o = outs[c]
        _, loc = np.unique(o["labels"], return_inverse=True)
        labels[idx] = loc + nxt
        nxt += int(loc.max()) + 1
        bound += o["bound"]
        statuses.append(o["status"])
        stats.append({k: _py(v) for k, v in o.items() if k != "labels"})
    if not P.is_feasible(labels):  # pragma: no cover - solver bug guard
        raise RuntimeError("internal error: a cluster is not a clique of the graph")
    obj = P.objective(labels)
    if "time_limit" in statuses:
        status = "time_limit"
    elif all(s == "optimal" for s in statuses):
        status = "optimal"
    else:
        status = "feasible"
    if status == "optimal":
        bound = max(bound, obj)
    labels, clusters = _largest_first(labels, P.nodes)
    return PartitionResult(
        labels=labels, nodes=list(P.nodes), clusters=clusters, objective=obj, bound=float(bound),
        gap=_gap(obj, bound), status=status, method=method, components=stats,
        n_singleton_components=len(parts.comps) - len(parts.big), seconds=time.perf_counter() - t0, _problem=P,
    )


def _largest_first(labels: np.ndarray, nodes: Sequence) -> tuple[np.ndarray, list[list]]:
    """Relabel clusters largest first, ties by first member; the members of each."""
    n = labels.size
    sizes = np.bincount(labels)
    first = np.full(sizes.size, n)
    np.minimum.at(first, labels, np.arange(n))
    order = np.lexsort((first, -sizes))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    labels = rank[labels]
    clusters: list[list] = [[] for _ in range(order.size)]
    for i, l in enumerate(labels.tolist()):
        clusters[l].append(nodes[i])
    return labels, clusters


@validate_params(
    {
        "graph_or_weights": [object],
        "method": [str],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither", allow_inf=True), None],
        "M": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "workers": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_jobs": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "decompose": ["boolean"],
        "weight": [str],
        "nodes": ["array-like", None],
        "mip_solver": [{"scip", "cpsat"}],
        "max_cliques": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_model_bytes": [Interval(numbers.Integral, 1, None, closed="left")],
        "heuristic_iters": [Interval(numbers.Integral, 1, None, closed="left")],
        "heuristic_patience": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "progress": ["boolean"],
        "source": [object],
        "target": [object],
        "reduce": ["boolean"],
        "work_limit": [Interval(numbers.Real, 0, None, closed="neither", allow_inf=True), None],
    }
)
def partition(
    graph_or_weights: Any,
    method: str = "auto",
    time_limit: float | None = None,
    M: int | None = None,
    *,
    workers: int | None = None,
    n_jobs: int | None = None,
    random_state: Any = None,
    client: Any = None,
    decompose: bool = True,
    weight: str = "weight",
    nodes: Sequence | None = None,
    mip_solver: str = "scip",
    max_cliques: int = 200_000,
    max_model_bytes: int = 2 * 1024**3,
    heuristic_iters: int = 100_000,
    heuristic_patience: int | None = None,
    progress: bool = False,
    scheduler: Any = None,
    source: Any = None,
    target: Any = None,
    reduce: bool = True,
    work_limit: float | None = None,
    lp_bound: bool = False,
) -> PartitionResult:
    """Clique partitioning: disjoint clusters, each a clique, of maximum within-cluster weight.

    Parameters
    ----------
    graph_or_weights : networkx.Graph, igraph.Graph, edge table, ndarray, scipy.sparse matrix or edge list
        * networkx graph with a ``weight`` attribute on every edge; a **missing edge
          forbids** the pair from sharing a cluster. An undirected ``igraph.Graph`` is read
          the same way (labels from its ``name`` vertex attribute, else the vertex ids).
        * edge table (pandas, pyarrow or polars): one row per edge with two endpoint
          columns and a weight column, found by name (``source``/``target``, ``src``/``dst``,
          ``from``/``to``, ``u``/``v``, ...; ``weight`` or ``w``) or given with ``source=``,
          ``target=``, ``weight=``; missing pairs are forbidden, labels may be any hashable
          values (sorted when they sort).
        * dense square symmetric ``numpy.ndarray``: **every pair is an edge** with
          weight ``W[i, j]`` (the CP-Lib convention; the diagonal is ignored).
        * scipy sparse matrix: stored entries are the edges (an explicit 0 is an edge of
          weight 0), missing entries forbid the pair; symmetric or one triangle.
        * edge list: a list of ``(i, j, weight)`` tuples or an ``(m, 3)`` array; missing
          pairs are forbidden. (A list is always an edge list; a square ndarray is
          always a dense matrix.)
    method : {"auto", "cpp", "qsp", "spp", "heuristic"}
        ``cpp``: exact (triangle, 2-partition, odd-wheel cutting planes, then branch and price
        on components of <= 64 nodes, then a lazy-constraint MIP), proves optimality.
        ``qsp``: xER's linearised quadratic set packing over maximal cliques (CP-SAT),
        exact when ``M`` is large enough. ``spp``: set packing over all cliques
        (CP-SAT; refuses graphs with more than ``max_cliques`` cliques). ``heuristic``:
        KwikCluster pivot + iterated local search (Numba), **approximate**; its bound is
        the sum of positive weights less a greedy packing of conflict wedges
        (:func:`~trustlab.solvers.bounds.packing_bound`, work capped), and a component
        whose partition meets that bound is reported ``optimal`` (``proved_by="packing"``).
        The same packing bound caps the bound ``cpp`` reports when it stops at the time
        limit, and a component whose heuristic partition meets it skips the exact solver
        (``phase="packing"``; its search also stops once it reaches it). A ``cpp`` or
        ``heuristic`` component still unproven after its search also gets the tighter
        triangle LP bound with ``lp_bound=True`` (opt-in). ``auto``: ``cpp``
        on components up to 400 nodes, ``heuristic`` above. A component given as a graph with more than 4,000 nodes
        is solved by :func:`~trustlab.solvers.sparse.solve_sparse_heuristic` whatever the
        method (O(n + m) memory, **approximate**; ``method="sparse_heuristic"`` in its
        statistics). Every method runs the heuristic first (same seed and
        stopping rule as ``method="heuristic"``) and never returns less than it found,
        so ``auto`` is at least as good as ``heuristic`` whenever the heuristic stops
        by its own rule before the time limit (on a component that ``reduce``
        changed, the heuristic runs on the reduced parts, and the floor is its result
        there). (``cpp`` on a component of at most 64
        nodes pauses the heuristic after 10 rounds without improvement and resumes it
        to its own rule only if the exact solver does not prove optimality; a resumed
        run ends where an uninterrupted one would. The exact solver stops early enough
        to leave the resumed run twice its estimated remaining time, at most half of
        what is left.)
    time_limit : float, optional
        Default None: a deterministic **work budget** (``work_limit``, default
        :func:`default_time_limit`: 60 plus 0.1 per node, at most 600 reference seconds),
        so no default call can run unbounded and its answer does not depend on the
        machine's load (see ``work_limit``); pass ``math.inf`` for no limit (exact
        methods then run to a proof, however long). Given: wall-clock seconds for the
        **whole call** (input checks, decomposition,
        heuristic, model building and solving of every component). Components start
        smallest first; a starting component gets the time left times
        ``min(1, slots * size / unstarted)`` (``size`` its node count, ``unstarted``
        the node count of the components not started yet, itself included, ``slots``
        the components solved at once), so the budget is shared in proportion to size
        and time a component does not use passes on to the later ones. On expiry the
        best feasible partition found is returned with ``status="time_limit"`` and the
        best bound. Solvers check the clock between steps, so a call can overrun by a
        fraction of a second. The one-off compilation (or cache load) of the Numba
        kernels and loading of the solver modules a call needs is **not** counted: it
        is done before the clock starts, or, for kernels needed only later (branch and
        price's pricing), the deadline moves on by the time it took; so a first call on
        an empty compile cache gets the same search time as later calls (it takes
        longer in total, by the compile time).
    work_limit : float, optional
        Only with ``time_limit`` None (passing both is an error): the whole call's budget
        in **reference seconds of counted work** (default :func:`default_time_limit` of
        the node count; ``math.inf``: no limit). The solvers count their work (search
        rounds, LP solves and iterations, pricing nodes, master LPs, MIP nodes, reduction
        rounds) and charge each unit the seconds it takes on a quiet reference machine
        (:mod:`trustlab.solvers._clock`; approximate: a loaded or slower machine takes
        longer, a faster one less), so every stop depends on the input alone: the same
        input gives the same partition and statuses whatever the load, the Numba cache
        (compiled kernels or their exact Python twins) or the threads' scheduling. A
        component gets ``work_limit * min(1, size / unstarted)`` (``unstarted``: its node
        count and that of every component after it, smallest first), whatever was used
        before it. A wall-clock **safety stop** at ``SAFETY_FACTOR`` (4) times the budget
        plus 30 s still ends a run that is far slower than the reference machine; a
        component it ended says so (``safety_stop=True`` in its statistics; status
        ``"time_limit"`` when unproven): only then can the load change the answer.
        Every component reports ``budget="work"`` and ``work_spent``.
    M : int, optional
        Partitions per maximal clique for ``qsp`` (default 10, the paper's choice for
        the dedupe sets). Must be >= 1.
    workers : int, optional
        CP-SAT search workers (``qsp``, ``spp``, ``mip_solver="cpsat"``). Below 8 CP-SAT
        runs one worker with ``linearization_level=2``; from 8 up its default portfolio.
    n_jobs : int, optional
        Threads on this machine (default: CPU count): components are solved in
        parallel; the threads left to a component (all of them when one component is
        solved at a time) run the exact pricing of branch and price
        (``method="cpp"``) in parallel. Fewer components run at once when their dense
        arrays (about 40 n^2 bytes each) would pass half of the machine's memory.
    random_state : None, int or numpy.random.Generator
        Seeds the heuristic (pivot orders and perturbations).
    client : dask.distributed.Client, optional
        Ship components to a Dask cluster instead of local threads (each component
        with its share of the time left when it is submitted). Named ``client``, as in
        :func:`trustlab.resolve` and LightGBM's and XGBoost's Dask interfaces, because it
        must be a ``distributed.Client``: Dask's own ``scheduler=`` (``dask.compute``,
        dask-ml's searches) also takes names such as ``"threads"``, which this does not.
    decompose : bool, default True
        Split into connected components of the positive-edge graph first; exact (see
        Notes).
    weight : str
        Edge attribute holding the weight (networkx or igraph input), or the weight column
        of an edge table (default: a column named ``weight`` or ``w``).
    source, target : column name, optional
        The endpoint columns of an edge table, when their names are not recognised.
    nodes : sequence, optional
        Node labels for matrix input, or the node order for an edge list.
    mip_solver : {"scip", "cpsat"}
        Integer solver of ``cpp``'s MIP phase.
    max_cliques : int
        Guard for ``spp``: more cliques than this are refused.
    max_model_bytes : int, default 2 GiB
        Guard for ``qsp``/``spp``: the model's size is estimated from its variable and
        constraint counts before it is built, and a larger estimate is refused with a
        ``ValueError`` naming the estimate (raise this to override).
    heuristic_iters : int
        Most rounds (perturbation + tabu walk + descent) of the heuristic's iterated
        tabu search.
    heuristic_patience : int, optional
        The heuristic stops after this many rounds in a row without improving its best
        partition; default ``100000 // n`` clipped to [20, 1000] for a component of
        ``n`` nodes (a round's tabu walk grows with ``n``). A round counts as progress
        only if it gains more than a relative 1e-7.
    progress : bool
        Show a tqdm bar over the components (the CLI turns it on for terminals).
    scheduler : dask.distributed.Client, optional
        Deprecated name of ``client`` (a ``DeprecationWarning``; passing both is an
        error).
    lp_bound : bool, default False
        Opt-in (measured at stop 52 as a default: the ≤ 1 % gap counts of the real files'
        large components did not move, while CPU doubled on two files and the LP's charge
        below under-counted one file's LPs about 6x). Certify harder: each ``cpp`` or
        ``heuristic`` component still unproven after its search gets the triangle LP bound
        (:func:`~trustlab.solvers.bounds.triangle_lp_bound`: cutting planes from the
        packing's wedges, valid by weak duality from the LP's multipliers). It runs after
        the search, so the partition is the same either way; only ``bound``, ``status``
        (``proved_by="lp"`` where it meets the objective) and the per-component
        ``lp_bound``, ``lp_bound_rounds``, ``lp_bound_work``, ``lp_bound_budget``,
        ``lp_bound_seconds`` change. Its work is counted in reference seconds
        (:func:`~trustlab.solvers.bounds.lp_charge`, from the LPs' sizes: deterministic) and
        charged to the component's budget: it may use what the search left of the
        component's share, and at least a quarter of that share (``LP_BUDGET_SHARE``), at
        most 10 reference seconds per component
        (:data:`~trustlab.solvers.bounds.LP_MAX_SECONDS`); so a component's counted work is
        at most 1.25 times its share. With an explicit ``time_limit`` the same budget is
        also its wall-clock limit; by default its only wall-clock limit is the work budget's
        safety stop (``lp_bound_wall_stop`` where that stopped an LP: the bound, still
        valid, then depends on the machine's speed; the partition and status never do).
        ``resolve`` passes ``solver_options={"lp_bound": True}`` through.
    reduce : bool, default True
        Exact data reduction before every method but ``heuristic``
        (:func:`~trustlab.solvers.reduction.reduce_component`): each component of 3 to
        2,500 nodes first has the nodes merged that some optimal partition keeps
        together (heavy-edge and similar-neighbourhood rules of weighted cluster
        editing) and the pairs forbidden that some optimal partition keeps apart; the
        positive-edge parts of what remains are solved one by one (``auto`` picks the
        method by a part's size, so a large component that reduces to parts of at most
        400 nodes is solved exactly; one that does not is solved as given, after at most
        a twentieth of its time spent trying). Objectives and bounds are those of the original
        weights, and a proof on the reduced parts is a proof for the component. The
        component's statistics get ``reduction`` (nodes before/after, largest part,
        merges per rule, forbidden pairs, seconds; the solver details are those of the
        largest part, ``root_bound`` in the component's terms); it may take a quarter of the
        component's time. Its heuristic (warm start and floor) then runs on the reduced
        parts. ``False``: solve the components as given.

    Returns
    -------
    PartitionResult

    Raises
    ------
    ValueError
        NaN/inf weights, asymmetric or non-square matrices, unknown ``method``, ``M < 1``,
        negative ``time_limit``, an edge without a weight, ``spp`` over the clique guard.
    TypeError
        An input type that is none of the above.

    Notes
    -----
    *Stages.* Check the options; normalise the input to a :class:`~trustlab.solvers._problem.Problem`;
    decompose it into positive-edge components; solve the components of >= 2 nodes
    under one clock (see ``time_limit``; on a Dask client, local threads or serially);
    assemble the labels, objective and summed bound.

    *Decomposition theorem.* If a cluster ``C`` of a feasible partition is not connected
    in the positive-edge graph, split it into ``C1`` (one positive component of ``C``) and
    ``C2 = C \\ C1``: every pair between them has weight <= 0, so the objective does not
    decrease, and sub-cliques stay cliques. Repeating gives an optimal partition whose
    clusters all lie inside positive-edge components, so solving the components
    independently is exact and the global bound is the sum of component bounds.

    Examples
    --------
    Table 8 of the xER paper (nodes 7, 12, 20, 25):

    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_weighted_edges_from([(7, 12, 0.456), (7, 20, 0.999), (12, 20, 0.085),
    ...                            (7, 25, -0.076), (12, 25, -0.156), (20, 25, -0.253)])
    >>> r = partition(G, method="cpp", random_state=0)
    >>> sorted(map(sorted, r.clusters)), round(r.objective, 3), r.status
    ([[7, 12, 20], [25]], 1.54, 'optimal')
    """
    t0 = time.perf_counter()
    client = check_dask_client(renamed_keyword("partition", "client", client, "scheduler", scheduler),
                               func="partition")
    method = METHODS[method]
    checked, n_jobs = _check_options(M=M, workers=workers, n_jobs=n_jobs, mip_solver=mip_solver,
                                     max_cliques=max_cliques, max_model_bytes=max_model_bytes,
                                     heuristic_iters=heuristic_iters, heuristic_patience=heuristic_patience)
    rng = check_random_state(random_state)
    P = as_problem(graph_or_weights, weight=weight, nodes=nodes, source=source, target=target)
    if P.n == 0:
        raise ValueError("The input has no nodes.")
    parts = _Decomposition.of(P, decompose)
    seeds = rng.integers(0, 2**63 - 1, size=len(parts.comps))
    opts = _ComponentOptions(integral=P.integral, reduce=bool(reduce), lp_bound=bool(lp_bound), **checked)
    if time_limit is None:  # the default: a work budget (deterministic), with a safety stop
        work = default_time_limit(P.n) if work_limit is None else float(work_limit)
        if client is None and parts.big:
            _prepare(P, parts, method, opts)  # (compiled before the safety stop's clock starts)
        deadline = None
        if not math.isinf(work):
            from trustlab.solvers._clock import safety_seconds

            deadline = work
            opts = replace(opts, work=True, safety_epoch=time.time() + safety_seconds(work))
    else:
        if work_limit is not None:
            raise ValueError("partition: pass time_limit (wall-clock seconds) or work_limit (counted work), "
                             "not both.")
        deadline = _deadline(t0, time_limit, P.n)
        if deadline is not None and client is None and parts.big:
            deadline += _prepare(P, parts, method, opts)  # compiling is not part of the budget
    outs = _solve_components(P, parts, method, opts, seeds, deadline, _Runner(client, n_jobs, progress))
    return _assemble(P, parts, outs, method, t0)

