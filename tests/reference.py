"""Trusted slow references shared by the test suite (brute force over small inputs)."""
from __future__ import annotations


def set_partitions(items):
    """Every set partition of ``items`` (Bell(n) of them), as lists of blocks."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in set_partitions(rest):
        yield [[first]] + p
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1:]


def clique_partition_labels(n, A):
    """Label arrays of every partition of ``range(n)`` whose blocks are cliques of the
    boolean adjacency ``A`` (brute force, Bell(n) candidates)."""
    import numpy as np

    off = ~A & ~np.eye(n, dtype=bool)
    for p in set_partitions(list(range(n))):
        lab = np.empty(n, np.int64)
        for c, b in enumerate(p):
            lab[b] = c
        if not np.any((lab[:, None] == lab[None, :]) & off):
            yield lab


def brute_force_cpp(W, A):
    """(optimum, labels) of the clique partitioning problem by enumeration."""
    import numpy as np

    best, best_lab = -np.inf, None
    for lab in clique_partition_labels(W.shape[0], A):
        v = np.where(lab[:, None] == lab[None, :], W, 0.0).sum() / 2.0
        if v > best:
            best, best_lab = v, lab
    return best, best_lab


def random_cpp_instance(rng, n, density=1.0, integer=False, scale=1.0):
    """Symmetric N(0, scale^2) weights (rounded if ``integer``) and a random allowed-pair
    mask of the given density."""
    import numpy as np

    W = rng.normal(0, 1, (n, n)) * scale
    if integer:
        W = np.round(W)
    W = np.triu(W, 1)
    W = W + W.T
    A = np.triu(rng.random((n, n)) < density, 1)
    return W, A | A.T


def edges_to_csr(n, edges):
    """CSR (indptr int64, sorted indices int32) of an undirected edge list; self-loops
    are skipped."""
    import numpy as np

    adj = [set() for _ in range(n)]
    for u, v in edges:
        if u != v:
            adj[u].add(v)
            adj[v].add(u)
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum([len(a) for a in adj])
    indices = np.array([u for a in adj for u in sorted(a)], np.int32)
    return indptr, indices


class InlineClient:
    """A stand-in for ``dask.distributed.Client`` in tests of the ``client=`` path:
    ``submit`` runs the job at once and counts it."""

    def __init__(self):
        self.submitted = 0

    def submit(self, fn, *args, pure=True):
        self.submitted += 1
        out = fn(*args)

        class _Done:
            def result(self):
                return out

        return _Done()
