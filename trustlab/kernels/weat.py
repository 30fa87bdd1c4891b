"""Numba kernels for the WEAT permutation test.

Plain functions on validated, C-contiguous arrays of fixed dtype; no checking here
(that happens once in :func:`trustlab.metrics.bias.weat`).

The permutation null of the WEAT statistic only depends on the sum of the per-word
associations ``s`` over the words put in the X side, so every kernel returns
*subset sums*: for an index subset I of size k, ``sum(s[I])`` (summed in the order the
indices are produced).

* :func:`exact_subset_sums` enumerates all C(n, k) subsets in lexicographic order,
  in parallel (each chunk unranks its first subset).
* :func:`sample_subset_sums` draws random k-subsets by a partial Fisher-Yates shuffle.
  Randomness comes from a counter-based SplitMix64 stream keyed by ``(seed, sample
  index)``, so the result does not depend on the thread count and the CUDA kernel in
  :mod:`trustlab.kernels.weat_cuda` produces bit-identical subsets. Each subset also
  gets a 128-bit key (XOR of per-element keys; exact bitmasks when n <= 128) that the
  caller uses to reject duplicate subsets (sampling *without replacement*).
"""
from __future__ import annotations

import types

import numba
import numpy as np
from numba import njit, prange

from trustlab._lazy import lazy_attributes

__all__ = [
    "exact_subset_sums",  # noqa: F822 (compiled on first use, see _LOADERS)
    "exact_subset_sums_serial",  # noqa: F822 (compiled on first use, see _LOADERS)
    "sample_subset_sums",  # noqa: F822 (compiled on first use, see _LOADERS)
    "sample_subset_sums_serial",  # noqa: F822 (compiled on first use, see _LOADERS)
    "exact_kernel",
    "sample_kernel",
    "exact_name",
    "sample_name",
    "is_ready",
    "sample_subset_sums_numpy",
    "exact_subset_sums_numpy",
    "binomial_table",
    "element_keys",
    "mix64",
]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


def _mix64_py(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


# compiled on first use (as part of the sampling kernel), not at import
mix64 = njit(cache=True)(_mix64_py)


def binomial_table(n: int, k: int) -> np.ndarray:
    """``T[a, b] = C(a, b)`` for a <= n, b <= k, clipped to int64 max."""
    from math import comb

    big = np.iinfo(np.int64).max
    T = np.zeros((n + 1, k + 1), dtype=np.int64)
    for a in range(n + 1):
        for b in range(min(a, k) + 1):
            T[a, b] = min(comb(a, b), big)
    return T


def element_keys(n: int, seed: int = 0x5EED) -> tuple[np.ndarray, np.ndarray]:
    """Per-element 128-bit keys (lo, hi) whose XOR identifies a subset.

    For ``n <= 128`` these are single bits (the key *is* the subset's bitmask, so
    distinctness checks are exact); above that, random 128-bit Zobrist keys
    (collision probability ~ m**2 / 2**129 for m samples).
    """
    lo = np.zeros(n, dtype=np.uint64)
    hi = np.zeros(n, dtype=np.uint64)
    if n <= 128:
        for j in range(n):
            if j < 64:
                lo[j] = np.uint64(1) << np.uint64(j)
            else:
                hi[j] = np.uint64(1) << np.uint64(j - 64)
    else:
        rng = np.random.default_rng(seed)
        lo[:] = rng.integers(0, 2**64, size=n, dtype=np.uint64)
        hi[:] = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    return lo, hi


@njit(cache=True)
def _unrank(rank, n, k, T, out):
    # lexicographic unranking of a k-subset of range(n)
    x = 0
    r = rank
    for i in range(k):
        while T[n - x - 1, k - i - 1] <= r:
            r -= T[n - x - 1, k - i - 1]
            x += 1
        out[i] = x
        x += 1


def _exact_subset_sums_py(s, k, T, nchunks, out, offset):
    """Fill ``out[r]`` with the sum of ``s`` over the (``offset`` + r)-th k-subset
    (lexicographic), for r < len(out) (callers cover C(n, k) = ``T[n, k]`` ranks in
    blocks, so a signal is handled between blocks); ``nchunks`` chunks run in parallel.
    """
    n = s.shape[0]
    total = out.shape[0]
    for c in prange(nchunks):
        start = (total * c) // nchunks
        stop = (total * (c + 1)) // nchunks
        if start >= stop:
            continue
        comb = np.empty(k, dtype=np.int64)
        _unrank(offset + start, n, k, T, comb)
        for r in range(start, stop):
            acc = 0.0
            for j in range(k):
                acc += s[comb[j]]
            out[r] = acc
            # next combination in lexicographic order
            i = k - 1
            while i >= 0 and comb[i] == n - k + i:
                i -= 1
            if i < 0:
                break
            comb[i] += 1
            for j in range(i + 1, k):
                comb[j] = comb[j - 1] + 1


def make_draw_subset(mix):
    """Build the one-sample routine around a compiled ``mix64`` (CPU or CUDA device)."""

    def draw_subset(s, k, seed, idx, perm, keys_lo, keys_hi):
        # One random k-subset of range(n): partial Fisher-Yates on ``perm`` (reset to
        # the identity first so every backend draws the same subset for (seed, idx)).
        # Returns (sum of s over the subset, key_lo, key_hi).
        n = s.shape[0]
        for j in range(n):
            perm[j] = j
        st = mix(np.uint64(seed) ^ mix(np.uint64(idx) + np.uint64(1)))
        acc = 0.0
        klo = np.uint64(0)
        khi = np.uint64(0)
        for j in range(k):
            st = st + _GOLDEN
            z = mix(st)
            u = np.float64(z >> np.uint64(11)) * _INV53
            r = j + np.int64(u * (n - j))
            if r >= n:  # guard against u * m rounding up to m
                r = n - 1
            t = perm[j]
            perm[j] = perm[r]
            perm[r] = t
            e = perm[j]
            acc += s[e]
            klo ^= keys_lo[e]
            khi ^= keys_hi[e]
        return acc, klo, khi

    return draw_subset


_draw_subset = njit(cache=True)(make_draw_subset(mix64))


def _sample_subset_sums_py(s, k, seed, start, keys_lo, keys_hi, nchunks, out, out_lo, out_hi):
    """Random k-subsets for sample indices ``start .. start+len(out)-1``.

    Writes the subset sum and its 128-bit key; sample ``i`` depends only on
    ``(seed, start + i)``.
    """
    n = s.shape[0]
    m = out.shape[0]
    for c in prange(nchunks):
        a = (m * c) // nchunks
        b = (m * (c + 1)) // nchunks
        perm = np.empty(n, dtype=np.int64)
        for i in range(a, b):
            acc, klo, khi = _draw_subset(s, k, seed, start + i, perm, keys_lo, keys_hi)
            out[i] = acc
            out_lo[i] = klo
            out_hi[i] = khi


_SIG_EXACT = "void(float64[::1], int64, int64[:, ::1], int64, float64[::1], int64)"
_SIG_SAMPLE = (
    "void(float64[::1], int64, uint64, int64, uint64[::1], uint64[::1], int64,"
    " float64[::1], uint64[::1], uint64[::1])"
)
# each kernel compiled twice (umap style): threaded, and serial for small jobs where
# thread start-up (and a busy machine) costs more than the work


def _renamed(f, name):
    # Numba's on-disk cache is keyed by qualname + signature, not by the parallel flag:
    # the serial twin needs its own name or it would load the threaded build.
    g = types.FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
    g.__qualname__ = name
    return g


# Each of the four subset-sum kernels is compiled (or loaded from the on-disk cache) on
# first use, not at import: a call needs one or two of them (exact or sampled, serial
# or threaded by the amount of work), and compiling all four cost a cold first
# ``trustlab bias weat`` about 2.6 s of CPU (the threaded ones ~1 s each).
_LOADERS = {
    "exact_subset_sums": lambda: njit(_SIG_EXACT, parallel=True, cache=True)(_exact_subset_sums_py),
    "exact_subset_sums_serial": lambda: njit(_SIG_EXACT, cache=True)(
        _renamed(_exact_subset_sums_py, "_exact_subset_sums_serial")),
    "sample_subset_sums": lambda: njit(_SIG_SAMPLE, parallel=True, cache=True)(_sample_subset_sums_py),
    "sample_subset_sums_serial": lambda: njit(_SIG_SAMPLE, cache=True)(
        _renamed(_sample_subset_sums_py, "_sample_subset_sums_serial")),
}
__getattr__, __dir__ = lazy_attributes(globals(), _LOADERS)

# Signature-free twins of the four kernels, never called: creating one compiles
# nothing, and its on-disk cache entry is the kernel's (same function, qualname, file).
_PROBES = {
    "exact_subset_sums": lambda: njit(cache=True)(_exact_subset_sums_py),
    "exact_subset_sums_serial": lambda: njit(cache=True)(_renamed(_exact_subset_sums_py, "_exact_subset_sums_serial")),
    "sample_subset_sums": lambda: njit(cache=True)(_sample_subset_sums_py),
    "sample_subset_sums_serial": lambda: njit(cache=True)(
        _renamed(_sample_subset_sums_py, "_sample_subset_sums_serial")),
}


def is_ready(name: str) -> bool:
    """True when the kernel ``name`` is loaded in this process or in Numba's on-disk
    cache, i.e. when using it compiles nothing."""
    if name in globals():
        return True
    from trustlab.kernels._jit import kernel_ready

    return kernel_ready(_PROBES[name]())

PARALLEL_MIN_WORK = 200_000  # subsets x k below which the serial kernel is used


def _kernel(name: str):
    k = globals().get(name)
    return k if k is not None else __getattr__(name)


def exact_name(work: int) -> str:
    """Name of the exact-enumeration kernel for ``work`` = subsets x k operations."""
    return "exact_subset_sums" if work >= PARALLEL_MIN_WORK else "exact_subset_sums_serial"


def sample_name(work: int) -> str:
    """Name of the sampling kernel for ``work`` = samples x k operations."""
    return "sample_subset_sums" if work >= PARALLEL_MIN_WORK else "sample_subset_sums_serial"


def exact_kernel(work: int):
    """The exact-enumeration kernel for ``work`` = subsets x k operations."""
    return _kernel(exact_name(work))


def sample_kernel(work: int):
    """The sampling kernel for ``work`` = samples x k operations."""
    return _kernel(sample_name(work))


def sample_subset_sums_numpy(s, k, seed, start, m, keys_lo, keys_hi):
    """``(sums, keys_lo, keys_hi)`` of samples ``start .. start+m-1``, bit for bit the
    sampling kernel's (the same SplitMix64 stream, partial Fisher-Yates and summation
    order, vectorised over the samples in NumPy): for small jobs on a cold cache."""
    n = s.shape[0]
    out = np.empty(m)
    out_lo = np.empty(m, dtype=np.uint64)
    out_hi = np.empty(m, dtype=np.uint64)
    step = max(1, (1 << 22) // max(n, 1))  # perm block of at most 4M entries
    base = np.arange(n, dtype=np.int64)
    for a in range(0, m, step):
        b = min(m, a + step)
        rows = np.arange(b - a)
        idx = np.arange(start + a, start + b, dtype=np.int64).astype(np.uint64)
        st = _mix64_np(np.uint64(seed) ^ _mix64_np(idx + np.uint64(1)))
        perm = np.tile(base, (b - a, 1))
        acc = np.zeros(b - a)
        klo = np.zeros(b - a, dtype=np.uint64)
        khi = np.zeros(b - a, dtype=np.uint64)
        for j in range(k):
            st = st + _GOLDEN
            u = (_mix64_np(st) >> np.uint64(11)).astype(np.float64) * _INV53
            r = np.minimum(j + (u * (n - j)).astype(np.int64), n - 1)
            t = perm[:, j].copy()
            e = perm[rows, r]
            perm[:, j] = e
            perm[rows, r] = t
            acc += s[e]
            klo ^= keys_lo[e]
            khi ^= keys_hi[e]
        out[a:b], out_lo[a:b], out_hi[a:b] = acc, klo, khi
    return out, out_lo, out_hi


def _mix64_np(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def exact_subset_sums_numpy(s, k, offset, count):
    """Sums of ``s`` over the k-subsets of rank ``offset .. offset+count-1`` in
    lexicographic order, bit for bit the exact kernel's (same order, same summation
    order): for small jobs on a cold cache."""
    import itertools

    n = s.shape[0]
    it = itertools.islice(itertools.combinations(range(n), k), offset, offset + count)
    comb = np.fromiter(itertools.chain.from_iterable(it), dtype=np.int64, count=count * k).reshape(count, k)
    acc = np.zeros(count)
    for j in range(k):
        acc += s[comb[:, j]]
    return acc


def n_chunks(total: int) -> int:
    """A chunk count that keeps all threads busy without tiny chunks."""
    t = numba.get_num_threads()
    return int(max(1, min(total // 2048 + 1, 8 * t)))
