"""Maximal clique enumeration and all-clique counting (Phase 1 of xER).

The CPU engine is a Numba Bron–Kerbosch with Tomita pivoting over a degeneracy
ordering (Eppstein–Löffler–Strash), bitset sub-problems and parallel top-level
subtrees; see :mod:`trustlab.kernels.cliques_cpu`. ``backend="gpu"`` dispatches to
the numba.cuda kernel in :mod:`trustlab.kernels.cliques_cuda`.

All results are exact.
"""
from __future__ import annotations

import numbers
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from trustlab._backend import GPUUnavailableError, resolve_backend
from trustlab._validation import Interval, validate_params
from trustlab.graph import CSRGraph, as_csr_graph

__all__ = [
    "CliqueResult",
    "CliqueCountLimitError",
    "CliqueOutputLimitError",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "maximal_cliques",
    "count_maximal_cliques",
    "count_cliques",
]


class CliqueCountLimitError(ValueError):
    """Raised by :func:`count_cliques` / :func:`count_maximal_cliques` when the number of
    cliques exceeds ``max_count``."""


class CliqueOutputLimitError(ValueError):
    """Raised by :func:`maximal_cliques` when the output would pass ``max_cliques`` or
    ``max_output_bytes``; enumeration stops as soon as a limit is passed, so memory
    stays bounded."""


#: default cap of :func:`count_maximal_cliques` (a few minutes of counting)
DEFAULT_MAX_COUNT = 10**10

#: default cap on the memory of the stored cliques (4-byte member ids + 8-byte offsets)
DEFAULT_MAX_OUTPUT_BYTES = 2**30

_BIG = np.iinfo(np.int64).max


@dataclass
class CliqueResult:
    """Maximal cliques in CSR form.

    ``indices[indptr[k]:indptr[k+1]]`` are the positions (into ``nodes``) of the
    members of clique ``k``, sorted ascending; ``nodes`` holds the original node
    labels. Iterating yields each clique as a list of labels.

    Attributes
    ----------
    indptr : numpy.ndarray of int64, shape (n_cliques + 1,)
    indices : numpy.ndarray of int32
    nodes : numpy.ndarray
        Original node labels (int64 array, or object array for other labels).
    backend : str
        ``"cpu"`` or ``"gpu"``: where the cliques were computed.

    Examples
    --------
    >>> from trustlab.cliques import maximal_cliques
    >>> res = maximal_cliques([[0, 1], [1, 2], [2, 0], [2, 3]])
    >>> isinstance(res, CliqueResult), len(res), sorted(res.to_list())
    (True, 2, [[0, 1, 2], [2, 3]])
    """

    indptr: np.ndarray  # int64, len n_cliques + 1
    indices: np.ndarray  # int32 positions into `nodes`
    nodes: np.ndarray  # original labels (object or int array)
    backend: str = "cpu"

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def __iter__(self) -> Iterator[list]:
        nodes, indptr, indices = self.nodes, self.indptr, self.indices
        for k in range(len(self)):
            yield nodes[indices[indptr[k]:indptr[k + 1]]].tolist()

    def __getitem__(self, k: int) -> list:
        """Clique ``k`` as a list of labels."""
        n = len(self)
        if not -n <= k < n:
            raise IndexError(f"clique index {k} out of range for {n} cliques")
        k %= n
        return self.nodes[self.indices[self.indptr[k]:self.indptr[k + 1]]].tolist()

    def __repr__(self) -> str:
        return (f"CliqueResult(n_cliques={len(self)}, max_size={self.max_size}, "
                f"n_nodes={len(self.nodes)}, backend={self.backend!r})")

    def sizes(self) -> np.ndarray:
        """Number of vertices of every clique (int64)."""
        return np.diff(self.indptr)

    @property
    def max_size(self) -> int:
        """Size of the largest clique (the clique number when ``min_size=1``); 0 if none."""
        ip = self.indptr
        k = len(self)
        # in pieces of 2^20 cliques (no full-size difference array; a signal is handled between pieces)
        return max((int(np.diff(ip[a:min(k, a + (1 << 20)) + 1]).max()) for a in range(0, k, 1 << 20)), default=0)

    def to_list(self) -> list[list]:
        """All cliques as lists of original labels (convenience; costs Python objects)."""
        return list(self)

    def to_sets(self) -> set[frozenset]:
        """All cliques as a set of frozensets of labels (for order-free comparisons)."""
        return {frozenset(c) for c in self}

    def membership(self) -> "Any":
        """Vertex × clique incidence matrix (``scipy.sparse.csr_matrix``, int8).

        Row ``i`` is vertex ``nodes[i]``; column ``k`` is clique ``k``.
        """
        import scipy.sparse as sp

        ncl = len(self)
        cols = np.repeat(np.arange(ncl, dtype=np.int64), self.sizes())
        data = np.ones(self.indices.shape[0], dtype=np.int8)
        return sp.csr_matrix((data, (self.indices, cols)), shape=(len(self.nodes), ncl))


def _n_threads() -> int:
    """Threads to use: ``numba.get_num_threads()`` once Numba's parallel runtime is
    up (it honours ``numba.set_num_threads``), else ``NUMBA_NUM_THREADS`` without
    starting that runtime (these kernels never need it)."""
    import numba
    from numba.np.ufunc import parallel as _par

    if getattr(_par, "_is_initialized", True):
        return max(1, int(numba.get_num_threads()))
    return max(1, int(numba.config.NUMBA_NUM_THREADS))


def _schedule(g: CSRGraph, fptr: np.ndarray, n_threads: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-level vertices in :func:`trustlab._cliques_py.schedule_order` (heavy ones
    largest first, then vertex order), cut into chunks of roughly equal work:
    ``(chunk_ptr, chunk_verts)``.

    The work of vertex ``v`` is estimated as ``p * p + deg(v)``, ``p`` its number of
    later neighbours: the sub-problem build is linear in the neighbourhood and the
    search grows with the size of ``P``."""
    from trustlab._cliques_py import schedule_order

    n = g.n_nodes
    p = np.diff(fptr)
    work = p * p + np.diff(g.indptr).astype(np.int64)
    verts = schedule_order(g.indptr, fptr)
    if n == 0:
        return np.zeros(1, np.int64), verts
    cum = np.cumsum(work[verts], dtype=np.float64)
    total = float(cum[-1]) if cum[-1] > 0 else 1.0
    # enough chunks for dynamic load balance, few enough that the per-chunk O(n)
    # marker array stays negligible
    n_chunks = int(min(n, 32 * n_threads, max(1, n // 16)))
    # equal-work cut points (each chunk at least one vertex)
    cuts = np.searchsorted(cum, total * np.arange(1, n_chunks) / n_chunks, side="left") + 1
    chunk_ptr = np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)
    return chunk_ptr, verts


#: graphs up to this many edges may take the exact pure-Python path on a cold cache
_PY_MAX_EDGES = 200_000


def _python_path(g: CSRGraph, min_size: int):
    """``(indptr, indices)`` from the exact pure-Python twin of the kernels
    (:mod:`trustlab._cliques_py`) when the enumeration kernel is neither compiled in
    this process nor in Numba's cache and the graph is small enough to finish within
    the twin's step budget; ``None`` otherwise (the caller runs the kernels).

    On a cold cache a small graph is thus enumerated in a fraction of a second instead
    of after seconds of compiling; the cliques, and their order, are the same either
    way. Set ``TRUSTLAB_CLIQUES_PYTHON=0`` to always use the kernels."""
    import os

    if g.n_edges > _PY_MAX_EDGES or os.environ.get("TRUSTLAB_CLIQUES_PYTHON", "") == "0":
        return None
    from trustlab.kernels._jit import kernel_ready
    from trustlab.kernels.cliques_cpu import enumerate_chunk

    if kernel_ready(enumerate_chunk):
        return None
    from trustlab._cliques_py import TooBig, maximal_cliques_py

    try:
        return maximal_cliques_py(g.indptr, g.indices, min_size)
    except TooBig:
        return None


def _prepare(g: CSRGraph):
    from trustlab.kernels.cliques_cpu import degeneracy_order

    _, rank, _ = degeneracy_order(g.indptr, g.indices)
    return rank


def _prepare_forward(g: CSRGraph):
    """``(rank, fptr, fidx)``: degeneracy ranks and the forward rows."""
    from trustlab.kernels.cliques_cpu import forward_adjacency

    rank = _prepare(g)
    fptr, fidx = forward_adjacency(g.indptr, g.indices, rank)
    return rank, fptr, fidx


#: words per output block of the enumeration kernel (a module attribute so that tests can
#: force many blocks on small graphs)
_OUT_BLOCK = 1 << 20


def _run_chunks(g: CSRGraph, min_size: int, materialize: bool,
                progress: Callable[[int], None] | None = None,
                max_cliques: int | None = None, max_output_bytes: int | None = None):
    """Run :func:`~trustlab.kernels.cliques_cpu.enumerate_chunk` over equal-work
    chunks of top-level vertices on a thread pool (the kernel releases the GIL).
    Returns ``(total count, parts)``. One chunk (graphs under 32 vertices: at most
    3^(31/3) maximal cliques) runs inline: the pool is not started for small graphs.

    The main thread only waits (waking every 0.1 s), so Ctrl-C, SIGTERM or any other
    exception raised there stops the kernels through a shared flag they read where
    the search descends, and the call ends within milliseconds instead of when the
    chunks finish (minutes on a Moon-Moser graph)."""
    from trustlab.kernels._jit import warm_once
    from trustlab.kernels.cliques_cpu import edges_to_csr, enumerate_chunk

    # the edge-array conversion kernel (csr_from_edges) is used once compiled or cached:
    # compile it with the clique kernels, which compile on this cold path anyway
    warm_once("cliques:edges_to_csr", lambda: edges_to_csr(np.zeros(1, np.int64), np.ones(1, np.int64), 2))
    rank, fptr, fidx = _prepare_forward(g)
    nt = _n_threads()
    chunk_ptr, verts = _schedule(g, fptr, nt)
    n_chunks = chunk_ptr.shape[0] - 1

    lock = threading.Lock()
    kept = [0, 0, 0]  # cliques, stored member ids, top-level vertices done
    stop = threading.Event()
    halt = np.zeros(1, np.uint8)  # read by the kernels: set to end them early
    # compile (or load) the kernel here, on no vertex, where a signal is handled: compiled on
    # first use in a worker, a SIGTERM waited for the whole compilation (26.6 s, cold cache)
    warm_once(f"cliques:enumerate_chunk:{g.indptr.dtype}:{g.indices.dtype}:{fptr.dtype}:{fidx.dtype}:{rank.dtype}:{verts.dtype}",
              lambda: enumerate_chunk(g.indptr, g.indices, fptr, fidx, rank, verts[:0], min_size, materialize,
                                      0, 0, halt, _OUT_BLOCK))

    def job(c: int):
        if stop.is_set():
            return None
        with lock:  # each chunk may use what the finished ones left of the budget
            left_c = _BIG if max_cliques is None else max_cliques - kept[0]
            left_m = _BIG if max_output_bytes is None else (max_output_bytes - 8 * kept[0] - 4 * kept[1]) // 4
        sb, su, mb, mu, cnt, mx = enumerate_chunk(g.indptr, g.indices, fptr, fidx, rank,
                                                  verts[chunk_ptr[c]:chunk_ptr[c + 1]], min_size, materialize,
                                                  max(left_c, 0), max(left_m, 0), halt, _OUT_BLOCK)
        cnt = int(cnt)
        with lock:
            if cnt == -2:  # halted: the caller is unwinding
                return None
            if cnt < 0:
                stop.set()
                return None
            kept[0] += cnt  # (counted or stored: max_cliques caps both)
            if materialize:
                kept[1] += sum(mu)
            kept[2] += int(chunk_ptr[c + 1] - chunk_ptr[c])
        if progress is not None:
            progress(int(chunk_ptr[c + 1] - chunk_ptr[c]))
        # (sizes, members, count, max size): the blocks as views of their used words
        return [b[:u] for b, u in zip(sb, su)], [b[:u] for b, u in zip(mb, mu)], cnt, mx

    if n_chunks <= 1:
        parts = [job(c) for c in range(n_chunks)]
    else:
        # one task per thread, each taking the next chunk until none is left (dynamic
        # balance without a future per chunk: 64 submissions cost ~5 ms a call)
        parts = [None] * n_chunks
        order = iter(range(n_chunks))

        def worker():
            while True:
                with lock:
                    c = next(order, None)
                if c is None:
                    return
                parts[c] = job(c)

        nw = min(nt, n_chunks)
        ex = ThreadPoolExecutor(max_workers=nw)
        try:
            futs = [ex.submit(worker) for _ in range(nw)]
            pending = set(futs)
            while pending:  # a timed wait: a signal's handler runs in this thread promptly
                _, pending = wait(pending, timeout=0.1)
            for f in futs:
                f.result()
        except BaseException:
            halt[0] = 1
            stop.set()
            ex.shutdown(wait=True, cancel_futures=True)
            raise
        ex.shutdown(wait=True)
    if not materialize and max_cliques is not None and (stop.is_set() or kept[0] > max_cliques):
        done = kept[2] / max(g.n_nodes, 1)
        raise CliqueCountLimitError(
            f"count_maximal_cliques stopped after {done:.0%} of the vertices: there are more than "
            f"max_count={max_cliques:,} maximal cliques. Raise max_count (None: no cap; CLI: --max-count 0) "
            "to count on, or raise min_size."
        )
    if stop.is_set():
        done = kept[2] / max(g.n_nodes, 1)
        limit = (f"max_output_bytes={max_output_bytes:,}" if max_cliques is None
                 else f"max_cliques={max_cliques:,}" if max_output_bytes is None
                 else f"max_cliques={max_cliques:,} or max_output_bytes={max_output_bytes:,}")
        raise CliqueOutputLimitError(
            f"maximal_cliques stopped after {done:.0%} of the vertices: the output passed {limit}. "
            "Count the cliques without storing them with count_maximal_cliques (CLI: trustlab "
            "cliques --count), raise min_size, or lift the cap with max_output_bytes=None / "
            "max_cliques=None (CLI: --max-output-bytes 0, --max-cliques 0) if the memory is there."
        )
    return sum(int(p[2]) for p in parts), parts


def _enumerate_cpu(g: CSRGraph, min_size: int, progress: Callable[[int], None] | None = None,
                   max_cliques: int | None = None, max_output_bytes: int | None = None):
    _, parts = _run_chunks(g, min_size, True, progress, max_cliques, max_output_bytes)
    return _join_parts(parts)


def _join_parts(parts: list) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)`` of the chunks' cliques in order, copied block by block (each
    block at most :data:`~trustlab.kernels.cliques_cpu.OUT_BLOCK` words, so a signal is
    handled between blocks) and each block freed once copied (peak memory: the result
    plus one block)."""
    n_cl = sum(int(p[2]) for p in parts)
    n_mem = sum(int(b.shape[0]) for p in parts for b in p[1])
    indptr = np.zeros(n_cl + 1, dtype=np.int64)
    indices = np.empty(n_mem, dtype=np.int32)
    ci = 0
    mi = 0
    for k in range(len(parts)):
        s_blocks, m_blocks, _, _ = parts[k]
        parts[k] = None  # free each chunk as soon as it is copied
        for t in range(len(s_blocks)):
            s = s_blocks[t]
            s_blocks[t] = None
            cnt = s.shape[0]
            if cnt:
                seg = indptr[ci + 1:ci + 1 + cnt]
                np.cumsum(s, out=seg)
                seg += indptr[ci]
            ci += cnt
        for t in range(len(m_blocks)):
            m = m_blocks[t]
            m_blocks[t] = None
            indices[mi:mi + m.shape[0]] = m
            mi += m.shape[0]
    return indptr, indices


def _count_gpu(g: CSRGraph, min_size: int) -> int:
    """The GPU's count pass only: nothing is written (the output check always refuses)."""
    from trustlab.kernels.cliques_cuda import OutputTooLarge, enumerate_maximal_cliques_cuda

    try:
        ip, _ = enumerate_maximal_cliques_cuda(g.indptr, g.indices, g.n_nodes, min_size, output_ok=lambda c, m: False)
        return int(ip.shape[0] - 1)  # only when no sub-problem reached the count pass
    except OutputTooLarge as exc:
        isolated = int(np.count_nonzero(np.diff(g.indptr) == 0)) if min_size <= 1 else 0
        return int(exc.n_cliques) + isolated


# How the GPU path prepares its host output while the write kernels run (the kernel's
# ``host_output``; the same cliques every way). "touch" is the build timed on the H200 at
# stop 42; bench/gpu_api_overhead.sh times the others through this setting.
_GPU_HOST_OUTPUT = "touch"


def _enumerate_gpu(g: CSRGraph, min_size: int, max_cliques: int | None = None,
                   max_output_bytes: int | None = None):
    try:
        from trustlab.kernels.cliques_cuda import OutputTooLarge, enumerate_maximal_cliques_cuda
    except ImportError as exc:
        raise GPUUnavailableError(
            f"the CUDA clique kernel could not be imported ({exc}). Install the GPU extra "
            "(pip install 'trustlab[gpu]') or use backend='cpu'."
        ) from None

    def output_ok(n_cl, n_mem):  # the CPU path's caps, checked after the GPU's count pass
        return ((max_cliques is None or n_cl <= max_cliques)
                and (max_output_bytes is None or 8 * n_cl + 4 * n_mem <= max_output_bytes))

    try:
        ip, ix = enumerate_maximal_cliques_cuda(g.indptr, g.indices, g.n_nodes, min_size, output_ok=output_ok,
                                                host_output=_GPU_HOST_OUTPUT)
    except OutputTooLarge as exc:
        limit = (f"max_output_bytes={max_output_bytes:,}" if max_cliques is None
                 else f"max_cliques={max_cliques:,}" if max_output_bytes is None
                 else f"max_cliques={max_cliques:,} or max_output_bytes={max_output_bytes:,}")
        raise CliqueOutputLimitError(
            f"maximal_cliques (GPU) found {exc.n_cliques:,} maximal cliques with {exc.n_members:,} members in its "
            f"count pass: the output would pass {limit}. Count them with count_maximal_cliques, raise min_size, "
            "or lift the cap (max_output_bytes=None / max_cliques=None) if the memory is there."
        ) from None
    # canonical form already: the kernels write every clique's members in ascending order
    # (the universe is sorted; tests/kernels/cliques_cuda checks it)
    return np.ascontiguousarray(ip, dtype=np.int64), np.require(ix, dtype=np.int32, requirements=["C", "W"])


# ``backend="auto"`` takes the GPU for large sparse graphs only. Measured on an H200
# machine against the same machine's 16 CPU threads, same CSR input, public API
# (bench/results/gpu.md, stop 37): 3.2-5.6x faster on G(100k, 1M), G(200k, 800k), RGG(20k)
# and an SBM (121k edges), 1.7x on BA(50k, 10), 0.95x on powerlaw-cluster (mean degree 30);
# the small dense G(300, 0.5) / G(400, 0.4) / G(500, 0.3) gain 1.5-2.2x, but G(2000, 0.05)
# (mean degree 100) loses (0.55x), so dense graphs stay on the CPU until a density rule is
# measured. Rule: at least 100,000 edges and a mean degree of at most 32.
_GPU_AUTO_EDGES = 100_000
_GPU_AUTO_MEAN_DEGREE = 32


def _gpu_auto_size(g: CSRGraph) -> int:
    """The work measure ``auto`` compares with _GPU_AUTO_EDGES (0 for dense graphs)."""
    m = int(g.n_edges)
    return m if 2 * m <= _GPU_AUTO_MEAN_DEGREE * max(g.n_nodes, 1) else 0

_MIN_SIZE = [Interval(numbers.Integral, 1, 2**31 - 1, closed="both")]
_BACKEND = [{"auto", "cpu", "gpu"}]
_CAP = [Interval(numbers.Integral, 1, None, closed="left"), None]


@validate_params({"graph": [object], "min_size": _MIN_SIZE, "backend": _BACKEND,
                  "progress": ["boolean", "callable"], "max_cliques": _CAP, "max_output_bytes": _CAP,
                  "source": [object], "target": [object]})
def maximal_cliques(
    graph: Any,
    *,
    min_size: int = 1,
    backend: str = "auto",
    progress: bool | Callable[[int], None] = False,
    max_cliques: int | None = None,
    max_output_bytes: int | None = DEFAULT_MAX_OUTPUT_BYTES,
    source: Any = None,
    target: Any = None,
) -> CliqueResult:
    """Enumerate every maximal clique of an undirected graph.

    Parameters
    ----------
    graph : networkx.Graph, igraph.Graph, edge table, array-like of shape (m, 2), scipy.sparse matrix or CSRGraph
        The graph; see :func:`trustlab.graph.as_csr_graph` for the accepted forms and
        the normalisation rules (self-loops dropped with a warning, duplicate edges
        merged, directed graphs rejected). For an edge array, node ids
        ``0..max_id`` are nodes, so an id that appears in no edge is an isolated
        node and forms a singleton maximal clique (use ``min_size=2`` to skip). An
        edge table (pandas, pyarrow or polars) holds one edge per row, its endpoint
        columns named ``source``/``target`` (or ``src``/``dst``, ``from``/``to``,
        ``u``/``v``, ...); its labels may be any hashable values.
    source, target : column name, optional
        The endpoint columns of an edge table, when their names are not recognised.
    min_size : int, default 1
        Report only maximal cliques with at least this many vertices (subtrees that
        cannot reach the size are pruned).
    backend : {"auto", "cpu", "gpu"}, default "auto"
        ``"gpu"`` runs the numba.cuda kernel (requires ``trustlab[gpu]`` and a
        device); ``"auto"`` runs the CPU kernel, which was faster on every family
        measured on an H100 machine (bench/results/gpu.md).
    progress : bool or callable, default False
        ``True`` shows a tqdm bar over top-level vertices (CPU backend); a callable
        is called with the number of top-level vertices finished after each chunk.
    max_cliques : int or None, default None
        Stop with :class:`CliqueOutputLimitError` once more than this many cliques
        would be stored (``None``: no count cap).
    max_output_bytes : int or None, default 2**30 (1 GiB)
        Stop with :class:`CliqueOutputLimitError` once the stored cliques (4 bytes per
        member, 8 per clique) would pass this size; ``None`` lifts the cap. The peak
        memory of a run is a small multiple of this (growing buffers, one final copy).
        Graphs such as Moon–Moser graphs have exponentially many maximal cliques; the
        cap turns "runs out of memory" into a clear error (CPU backend).

    Returns
    -------
    CliqueResult
        Cliques in CSR form (members sorted within each clique); iterate it for
        lists of labels. Clique order is deterministic but otherwise unspecified.

    Raises
    ------
    ValueError, TypeError
        Bad graph input or parameters (see :func:`trustlab.graph.as_csr_graph`).
    GPUUnavailableError
        ``backend="gpu"`` without a usable GPU.

    See Also
    --------
    count_maximal_cliques : the count only, without materialising cliques.
    count_cliques : the number of *all* cliques.

    Notes
    -----
    Bron–Kerbosch with Tomita pivoting [1]_ inside a degeneracy ordering [2]_; each
    top-level sub-problem is solved on bitsets and the sub-problems run in parallel
    on ``numba.get_num_threads()`` threads. While the Numba kernels are neither compiled
    in this process nor in Numba's on-disk cache (the first call after an install), a
    graph of at most 200,000 edges is enumerated by an exact pure-Python twin of the
    same algorithm when it finishes within a fixed step budget (about a second):
    the same cliques in the same order, without seconds of compiling
    (``TRUSTLAB_CLIQUES_PYTHON=0`` turns this off).

    References
    ----------
    .. [1] E. Tomita, A. Tanaka, H. Takahashi. The worst-case time complexity for
       generating all maximal cliques. Theor. Comput. Sci. 363 (2006).
    .. [2] D. Eppstein, M. Löffler, D. Strash. Listing all maximal cliques in sparse
       graphs in near-optimal time. ISAAC 2010.

    Examples
    --------
    >>> import networkx as nx
    >>> from trustlab.cliques import maximal_cliques
    >>> res = maximal_cliques(nx.karate_club_graph())
    >>> len(res), res.max_size
    (36, 5)
    >>> sorted(maximal_cliques([[0, 1], [1, 2], [2, 0], [2, 3]]).to_list())
    [[0, 1, 2], [2, 3]]
    >>> import pandas as pd
    >>> edges = pd.DataFrame({"source": ["a", "b", "c", "c"], "target": ["b", "c", "a", "d"]})
    >>> sorted(maximal_cliques(edges).to_list())
    [['a', 'b', 'c'], ['c', 'd']]
    """
    g = as_csr_graph(graph, source=source, target=target)
    be = resolve_backend(backend, size=_gpu_auto_size(g), gpu_threshold=_GPU_AUTO_EDGES, need="numba-cuda",
                         func="maximal_cliques")
    if be == "gpu":
        indptr, indices = _enumerate_gpu(g, min_size, max_cliques, max_output_bytes)
        return CliqueResult(indptr, indices, g.nodes, backend="gpu")
    cb = None
    bar = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=g.n_nodes, unit="vertex", desc="maximal cliques", leave=False)
        cb = bar.update
    elif callable(progress):
        cb = progress
    try:
        small = _python_path(g, min_size)
        if small is not None and _within(small, max_cliques, max_output_bytes):
            indptr, indices = small
            if cb is not None:
                cb(g.n_nodes)
        else:  # (past a cap: the kernels stop early and word the error)
            indptr, indices = _enumerate_cpu(g, min_size, cb, max_cliques, max_output_bytes)
    finally:
        if bar is not None:
            bar.close()
    return CliqueResult(indptr, indices, g.nodes, backend="cpu")


def _within(cl: tuple[np.ndarray, np.ndarray], max_cliques: int | None, max_output_bytes: int | None) -> bool:
    n_cl = cl[0].shape[0] - 1
    return ((max_cliques is None or n_cl <= max_cliques)
            and (max_output_bytes is None or 8 * n_cl + 4 * cl[1].shape[0] <= max_output_bytes))


@validate_params({"graph": [object], "min_size": _MIN_SIZE, "backend": _BACKEND,
                  "max_count": [Interval(numbers.Integral, 0, None, closed="left"), None]})
def count_maximal_cliques(graph: Any, *, min_size: int = 1, backend: str = "auto",
                          max_count: int | None = DEFAULT_MAX_COUNT) -> int:
    """Number of maximal cliques (with at least ``min_size`` vertices), without storing them.

    The CPU path runs the same kernel as :func:`maximal_cliques` in count-only mode,
    chunks of top-level vertices on a thread pool (dynamic scheduling, no Numba
    parallel region, so nothing extra to compile on first use).

    Parameters
    ----------
    graph, min_size, backend
        As in :func:`maximal_cliques`.
    max_count : int or None, default 10**10
        Stop with :class:`CliqueCountLimitError` once more than this many maximal
        cliques are counted (the count can grow as 3^(n/3): a 75-node graph can have
        8.5e11; counting runs at roughly 1e8 per second and thread here, so the default
        bounds a call to a few minutes). None: no cap.

    Returns
    -------
    int

    Examples
    --------
    >>> import networkx as nx
    >>> count_maximal_cliques(nx.complete_graph(5))
    1
    >>> count_maximal_cliques(nx.karate_club_graph(), min_size=3)
    25
    """
    g = as_csr_graph(graph)
    be = resolve_backend(backend, size=_gpu_auto_size(g), gpu_threshold=_GPU_AUTO_EDGES, need="numba-cuda",
                         func="count_maximal_cliques")
    if be == "gpu":
        n = _count_gpu(g, min_size)
        if max_count is not None and n > max_count:
            raise CliqueCountLimitError(f"there are {n:,} maximal cliques, more than max_count={max_count:,}; "
                                        "raise max_count (None: no cap) or min_size.")
        return n
    small = _python_path(g, min_size)
    if small is not None and (max_count is None or small[0].shape[0] - 1 <= max_count):
        return int(small[0].shape[0] - 1)
    return _run_chunks(g, min_size, materialize=False, max_cliques=max_count)[0]


@validate_params({"graph": [object], "max_count": [Interval(numbers.Integral, 0, None, closed="left")],
                  "min_size": _MIN_SIZE})
def count_cliques(graph: Any, *, max_count: int = 10_000_000, min_size: int = 1) -> int:
    """Number of *all* cliques with at least ``min_size`` vertices (|C| in xER Table 1).

    Every complete subgraph counts, not only maximal ones: with the default
    ``min_size=1`` the singletons and the edges are included (``min_size=2`` leaves
    out singletons, ``min_size=3`` also edges). The count grows exponentially with
    the clique number (a k-clique alone has 2**k - 1 sub-cliques), so enumeration
    stops as soon as ``max_count`` is exceeded.

    Parameters
    ----------
    graph
        As in :func:`maximal_cliques`.
    max_count : int, default 10_000_000
        Cap on the count; the work is bounded by it.
    min_size : int, default 1

    Returns
    -------
    int

    Raises
    ------
    CliqueCountLimitError
        (a ``ValueError``) when there are more than ``max_count`` cliques; raise the
        cap to count further.

    Examples
    --------
    >>> import networkx as nx
    >>> count_cliques(nx.complete_graph(4))  # 4 + 6 + 4 + 1
    15
    >>> count_cliques(nx.complete_graph(4), min_size=3)
    5
    """
    g = as_csr_graph(graph)
    from trustlab.kernels.cliques_cpu import count_all_cliques

    rank = _prepare(g)
    count, capped = count_all_cliques(g.indptr, g.indices, rank, min_size, max_count)
    if capped:
        raise CliqueCountLimitError(
            f"the graph has more than max_count={max_count} cliques of size >= {min_size}; "
            "pass a larger max_count (the work grows with the count) or a larger min_size."
        )
    return int(count)
