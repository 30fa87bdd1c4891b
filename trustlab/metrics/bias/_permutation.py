"""The WEAT permutation test: exact enumeration or Monte-Carlo sampling of distinct splits."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._backend import resolve_backend
from trustlab._results import ResultMixin
from trustlab._validation import (
    Interval,
    Options,
    check_int,
    check_option,
    check_random_state,
    validate_params,
)

ALTERNATIVES = ("two-sided", "greater", "less")

# exact enumeration is always capped (memory: 8 bytes per partition)
_EXACT_HARD_CAP = 50_000_000
# Monte-Carlo splits are drawn in kernel calls of at most this many samples, so a
# SIGTERM or Ctrl-C (handled between calls) ends a long test within a fraction of a second
_DRAW_BATCH = 1 << 20
#: subsets x k up to which a job runs the kernels' NumPy twins while the kernel it would
#: use is neither compiled nor cached (same bits; a cold compile costs 1-2 s of CPU)
_NUMPY_MAX_WORK = 4_000_000
# up to this many sampled splits are kept distinct (24 bytes each, held at once); above
# it splits are drawn with replacement and counted batch by batch in constant memory
DISTINCT_MAX = 1 << 22


@dataclass(frozen=True)
class PermutationResult(ResultMixin):
    """Permutation test of a two-group mean difference of per-word associations.

    Attributes
    ----------
    p_value : float
    method : {"exact", "monte-carlo"}
    n_permutations : int
        Partitions enumerated (exact) or distinct partitions sampled (Monte Carlo,
        not counting the observed one).
    n_partitions : int
        C(n_x + n_y, n_x), capped at int64 max.
    alternative : str
    p_value_se : float
        Monte-Carlo standard error sqrt(p(1-p)/M) (0 for exact).

    Examples
    --------
    >>> r = weat_permutation_test([0.9, 0.8, 0.1, 0.2], 2)
    >>> r.method, r.n_permutations, round(r.p_value, 4)
    ('exact', 6, 0.3333)
    """

    p_value: float
    method: str
    n_permutations: int
    n_partitions: int
    alternative: str
    p_value_se: float = 0.0


def _n_partitions(n: int, k: int) -> int:
    return math.comb(n, k)


def _count_extreme(md: np.ndarray, md_obs: float, tol: float, alternative: str) -> int:
    if alternative == "greater":
        return int(np.count_nonzero(md >= md_obs - tol))
    if alternative == "less":
        return int(np.count_nonzero(md <= md_obs + tol))
    return int(np.count_nonzero(np.abs(md) >= abs(md_obs) - tol))


def _sample_distinct(s, k, m, seed, backend):
    """m distinct random k-subsets (as sums), excluding the identity subset 0..k-1."""
    from trustlab.kernels import weat as K

    n = s.shape[0]
    lo_keys, hi_keys = K.element_keys(n)
    obs_lo = np.bitwise_xor.reduce(lo_keys[:k]) if k else np.uint64(0)
    obs_hi = np.bitwise_xor.reduce(hi_keys[:k]) if k else np.uint64(0)
    sums = np.empty(0)
    klo = np.empty(0, dtype=np.uint64)
    khi = np.empty(0, dtype=np.uint64)
    start = 0
    seed = np.uint64(seed)
    for _ in range(1000):
        need = m - sums.size
        if need <= 0:
            break
        batch = int(need * 1.02) + 16
        bs, bl, bh = _draw_batch(s, k, seed, start, batch, lo_keys, hi_keys, backend)
        start += batch
        sums = np.concatenate([sums, bs])
        klo = np.concatenate([klo, bl])
        khi = np.concatenate([khi, bh])
        first = _first_occurrences(klo, khi)
        keep = first[~((klo[first] == obs_lo) & (khi[first] == obs_hi))]
        sums, klo, khi = sums[keep], klo[keep], khi[keep]
    if sums.size < m:  # pragma: no cover - only if m is close to C, which callers avoid
        raise RuntimeError(f"could not draw {m} distinct splits; use permutations='exact'.")
    return sums[:m]


def _first_occurrences(klo: np.ndarray, khi: np.ndarray) -> np.ndarray:
    """Sorted indices of the first occurrence of each distinct (lo, hi) key."""
    if not khi.any():
        order = np.argsort(klo, kind="stable")
        sk = klo[order]
        new = np.empty(sk.size, dtype=bool)
        new[:1] = True
        new[1:] = sk[1:] != sk[:-1]
    else:
        order = np.lexsort((khi, klo))  # stable: ties keep generation order
        sl, sh = klo[order], khi[order]
        new = np.empty(sl.size, dtype=bool)
        new[:1] = True
        new[1:] = (sl[1:] != sl[:-1]) | (sh[1:] != sh[:-1])
    return np.sort(order[new])


def _draw_batch(s, k, seed, start, m, lo_keys, hi_keys, backend):
    """Samples ``start .. start + m - 1`` (sample ``i`` depends only on ``(seed, i)``),
    drawn in kernel calls of at most :data:`_DRAW_BATCH` so signals are handled promptly."""
    if m <= _DRAW_BATCH:
        return _draw_one(s, k, seed, start, m, lo_keys, hi_keys, backend)
    out = np.empty(m)
    out_lo = np.empty(m, dtype=np.uint64)
    out_hi = np.empty(m, dtype=np.uint64)
    for a in range(0, m, _DRAW_BATCH):
        b = min(m, a + _DRAW_BATCH)
        out[a:b], out_lo[a:b], out_hi[a:b] = _draw_one(s, k, seed, start + a, b - a, lo_keys, hi_keys, backend)
    return out, out_lo, out_hi


def _count_streamed(s, k, m, seed, backend, a, b, md_obs, tol, alternative) -> tuple[int, int]:
    """(extreme count, samples) over ``m`` splits drawn **with replacement** (the observed
    split excluded), batch by batch: memory does not grow with ``m``."""
    from trustlab.kernels import weat as K

    n = s.shape[0]
    lo_keys, hi_keys = K.element_keys(n)
    obs_lo = np.bitwise_xor.reduce(lo_keys[:k]) if k else np.uint64(0)
    obs_hi = np.bitwise_xor.reduce(hi_keys[:k]) if k else np.uint64(0)
    seed = np.uint64(seed)
    c = got = start = 0
    while got < m:
        batch = min(_DRAW_BATCH, m - got + 16)
        bs, bl, bh = _draw_one(s, k, seed, start, batch, lo_keys, hi_keys, backend)
        start += batch
        bs = bs[~((bl == obs_lo) & (bh == obs_hi))][: m - got]
        c += _count_extreme(bs * a - b, md_obs, tol, alternative)
        got += bs.size
    return c, got


def _draw_one(s, k, seed, start, m, lo_keys, hi_keys, backend):
    from trustlab.kernels import weat as K

    if backend == "gpu":
        from trustlab.kernels.weat_cuda import sample_subset_sums_cuda

        return sample_subset_sums_cuda(s, k, seed, start, m, lo_keys, hi_keys)
    if m * k <= _NUMPY_MAX_WORK and not K.is_ready(K.sample_name(m * k)):
        # the kernel's bits without its cold compile (~2 s of CPU)
        return K.sample_subset_sums_numpy(s, k, seed, start, m, lo_keys, hi_keys)
    out = np.empty(m)
    out_lo = np.empty(m, dtype=np.uint64)
    out_hi = np.empty(m, dtype=np.uint64)
    K.sample_kernel(m * k)(s, k, seed, start, lo_keys, hi_keys, K.n_chunks(m), out, out_lo, out_hi)
    return out, out_lo, out_hi


def _exact_sums(s: np.ndarray, k: int) -> np.ndarray:
    from trustlab.kernels import weat as K

    n = s.shape[0]
    T = K.binomial_table(n, k)
    total = int(T[n, k])
    out = np.empty(total)
    # blocks of ranks: a signal is handled between kernel calls (50M splits: ~3 s in all)
    step = 4 * _DRAW_BATCH
    for a in range(0, total, step):
        b = min(total, a + step)
        work = (b - a) * k
        if work <= _NUMPY_MAX_WORK and not K.is_ready(K.exact_name(work)):
            out[a:b] = K.exact_subset_sums_numpy(s, k, a, b - a)  # the kernel's bits, no compile
        else:
            K.exact_kernel(work)(s, k, T, K.n_chunks(b - a), out[a:b], a)
    return out


@validate_params(
    {
        "associations": ["array-like"],
        "n_x": [Interval(numbers.Integral, 1, None, closed="left")],
        "permutations": [Interval(numbers.Integral, 1, 1000000000, closed="both"), Options({"auto", "exact"})],
        "exact_limit": [Interval(numbers.Integral, 1, None, closed="left")],
        "alternative": [Options({"two-sided", "greater", "less"})],
        "random_state": ["random_state"],
        "backend": [Options({"auto", "cpu", "gpu"})],
    }
)
def weat_permutation_test(
    associations: Any,
    n_x: int,
    *,
    permutations: int | str = "auto",
    exact_limit: int = 1_000_000,
    alternative: str = "two-sided",
    random_state: Any = None,
    backend: str = "auto",
) -> PermutationResult:
    """Permutation p-value for the difference of mean association between X and Y.

    The first ``n_x`` entries of ``associations`` are s(x, A, B) for x in X, the rest
    s(y, A, B) for y in Y. Under the null every split of X u Y into sizes
    (n_x, n_y) is equally likely. The statistic is the difference of means (for
    equal sizes this orders partitions exactly like Caliskan's sum difference S).

    * **exact**: all C(n_x + n_y, n_x) splits are enumerated (the observed split is
      one of them): p = #{extreme} / C.
    * **Monte Carlo**: ``permutations`` *distinct* splits other than the observed one
      are drawn uniformly without replacement; p = (1 + #{extreme}) / (1 + M), which is
      a valid (slightly conservative) p-value. Above :data:`DISTINCT_MAX` (4,194,304)
      splits, keeping them distinct would need memory growing with M, so they are drawn
      uniformly *with* replacement (the observed split excluded) and counted batch by
      batch in constant memory; p = (1 + #{extreme}) / (1 + M) is still a valid p-value
      (Phipson & Smyth 2010).

    Parameters
    ----------
    associations : array-like of shape (n_x + n_y,)
    n_x : int
    permutations : "auto", "exact" or int
        ``"auto"``: exact when C <= ``exact_limit``, else 100,000 sampled splits.
        An int M: exact when M >= C - 1 (enumeration is then cheaper), else M samples.
    exact_limit : int
        Largest number of splits enumerated under ``"auto"``.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: X more associated with A than Y is (Caliskan's one-sided test,
        for similarity measures); ``"two-sided"``: |difference| (P2's |S| form, valid
        for distance measures whose polarity is reversed).
    random_state : None, int or Generator
        Seed of the sampler (Monte Carlo only).
    backend : {"auto", "cpu", "gpu"}
        ``"gpu"`` samples on a CUDA device with numba.cuda (identical draws to the CPU
        kernel); exact enumeration always runs on the CPU.

    Returns
    -------
    PermutationResult

    Notes
    -----
    Ties: a split counts as "at least as extreme" when its statistic is within a
    relative rounding tolerance (~1e-12) of the observed one, so splits that are
    mathematically tied are never lost to floating-point summation order.

    Examples
    --------
    >>> r = weat_permutation_test([3.0, 2.0, 1.0, 0.0], 2, alternative="greater")
    >>> r.method, r.n_partitions, r.p_value
    ('exact', 6, 0.16666666666666666)
    """
    func = "weat_permutation_test"
    s = np.ascontiguousarray(np.asarray(associations, dtype=np.float64).ravel())
    n = s.size
    n_x = check_int(n_x, "n_x", low=1, high=max(1, n - 1), func=func)
    if n < 2 or n_x >= n:
        raise ValueError(f"need at least one word on each side; got n_x={n_x} of {n} associations.")
    if not np.isfinite(s).all():
        raise ValueError("associations contain NaN or infinity; check the input vectors.")
    check_option(alternative, "alternative", ALTERNATIVES, func=func)
    exact_limit = check_int(exact_limit, "exact_limit", low=1, high=_EXACT_HARD_CAP, func=func)
    n_y = n - n_x
    total = _n_partitions(n, n_x)
    if isinstance(permutations, str):
        check_option(permutations, "permutations", ["auto", "exact"], func=func)
        if permutations == "exact":
            if total > _EXACT_HARD_CAP:
                raise ValueError(
                    f"exact enumeration of C({n}, {n_x}) = {total:.3g} splits is too large "
                    f"(limit {_EXACT_HARD_CAP:,}); pass permutations=<int> to sample instead."
                )
            mode, m = "exact", total
        elif total <= exact_limit:
            mode, m = "exact", total
        else:
            mode, m = "mc", 100_000
    else:
        m = check_int(permutations, "permutations", low=1, func=func)
        mode = "mc"
    if mode == "mc" and m >= total - 1:
        mode, m = "exact", total  # enumerating every split is cheaper and exact
    # mean difference as a function of the X-side subset sum
    T = float(s.sum())
    a, b = 1.0 / n_x + 1.0 / n_y, T / n_y
    obs_sum = 0.0
    for v in s[:n_x]:  # sequential, the order the kernels sum the identity split in
        obs_sum += float(v)
    md_obs = obs_sum * a - b
    tol = 64.0 * np.finfo(float).eps * float(np.abs(s).sum()) * a
    if mode == "exact":
        sums = _exact_sums(s, n_x)
        c = _count_extreme(sums * a - b, md_obs, tol, alternative)
        return PermutationResult(c / sums.size, "exact", int(sums.size), int(min(total, 2**63 - 1)), alternative)
    rng = check_random_state(random_state)
    be = resolve_backend(backend, size=m * n, gpu_threshold=5_000_000, need="numba-cuda", func=func)
    seed = int(rng.integers(0, 2**63 - 1))
    if m > DISTINCT_MAX and total > 4 * m:
        c, got = _count_streamed(s, n_x, m, seed, be, a, b, md_obs, tol, alternative)
        p = (1.0 + c) / (1.0 + got)
        se = math.sqrt(max(p * (1 - p), 0.0) / got)
        return PermutationResult(p, "monte-carlo", int(got), int(min(total, 2**63 - 1)), alternative, se)
    if total <= 4 * m and total <= _EXACT_HARD_CAP:
        # dense regime: enumerate, then draw m of the other C - 1 splits without replacement
        allsums = _exact_sums(s, n_x)
        pick = np.random.default_rng(seed).choice(total - 1, size=m, replace=False) + 1
        sums = allsums[pick]
    else:
        sums = _sample_distinct(s, n_x, m, seed, be)
    c = _count_extreme(sums * a - b, md_obs, tol, alternative)
    p = (1.0 + c) / (1.0 + sums.size)
    se = math.sqrt(max(p * (1 - p), 0.0) / sums.size)
    return PermutationResult(p, "monte-carlo", int(sums.size), int(min(total, 2**63 - 1)), alternative, se)
