"""GPU path for PrivEmb / M1: counter-based noise kernels (numba.cuda) beside a cuBLAS GEMM.

Imported lazily; CuPy and numba.cuda are only touched when a GPU release runs.

Layout of one release (device arrays throughout; host input is copied in first):

1. **Projection.** ``out = X @ Φᵀ`` as one cuBLAS GEMM written straight into the output
   buffer when X and the release share a dtype (float32: an SGEMM — TF32 is never
   enabled, CuPy's default — as the CPU float32 path projects in float32; float64: a
   DGEMM). Mixed dtypes go through one float64 product. M1 has no projection: the input
   itself is noised.
2. **Radius / norm, one thread per row** (:func:`_row_scale`): the row's Gamma(m) radius
   (Marsaglia–Tsang) and the norm of its m standard normals, stored as one float64
   ``s_i = scale · r_i / ‖z_i‖``.
3. **Noise, one thread per pair of columns** (:func:`_add_noise`): regenerates the two
   normals of its pair, adds ``s_i z_ij`` in float64 and rounds once to the output dtype,
   in place; non-finite results are counted.

Where ``m <= 1,024``, steps 2-3 run as one kernel (:func:`_fused_kernel`, one warp per row,
each normal drawn once and kept in registers): the same numbers, the release equal to the
two kernels' up to the order of the norm's sum. Timed on an H200 (stop 42,
``bench/results/gpu.md``): 4M x 300 noise 5.83 -> 4.94 ms at m = 100, 16.9 -> 10.8 ms for
M1 (m = 300); the two-kernel path serves larger ``m`` (and ``fused=False``).

Every random number is a pure function of (secret key, *global* row index, column pair
or Gamma iteration, stream): Philox4x32-10 (Salmon et al., SC 2011) as a counter-based
generator, uniforms of 53 bits from two 32-bit words, normals by Box–Muller. So a fixed
key gives the same release whatever the chunking or launch shape, and chunks never share
a stream. :func:`noise_reference` computes the same numbers with NumPy (up to the last
ulp of ``log``/``cos``/``sin``); the tests compare the kernels (in the CUDA simulator)
with it. The release equals the CPU path *in distribution* only (different generator).

Arithmetic note: on the device Philox's 32 x 32 -> 64-bit products are one unsigned
64-bit multiply; the NumPy reference does them in 16-bit halves so that every
intermediate fits a signed 64-bit integer (the same numbers, tested).
"""
from __future__ import annotations

import functools
import math

import numba
import numpy as np

from trustlab._backend import get_cupy

__all__ = ["philox_key", "release_on_device", "noise_reference"]

_MASK = 0xFFFFFFFF
_M0, _M1 = 0xD2511F53, 0xCD9E8D57
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_TWO_PI = 6.283185307179586
_U53 = 1.0 / 9007199254740992.0  # 2^-53
_GAMMA_TRIES = 64  # Marsaglia–Tsang accepts with probability > 0.95 per try for shape >= 1


def philox_key(key0: int, key1: int) -> tuple[int, int]:
    """The release's Philox key (two 32-bit words) from the mechanism's secret noise key."""
    w = np.random.SeedSequence([int(key0), int(key1), 0x67707531]).generate_state(2, dtype=np.uint32)
    return int(w[0]), int(w[1])


# ---------------------------------------------------------------- shared scalar code
def _mulhilo(a, b):
    """(hi, lo) 32-bit words of a * b for 32-bit a, b, in int64-safe 16-bit halves."""
    ah = a >> 16
    al = a & 0xFFFF
    x = ah * b
    y = al * b
    hi = (x + (y >> 16)) >> 16
    lo = (((x & 0xFFFF) << 16) + y) & 0xFFFFFFFF
    return hi, lo


def _make_scalar(mulhilo):
    def philox(c0, c1, c2, c3, k0, k1):
        for _ in range(10):
            h0, l0 = mulhilo(0xD2511F53, c0)
            h1, l1 = mulhilo(0xCD9E8D57, c2)
            c0, c1, c2, c3 = (h1 ^ c1 ^ k0), l1, (h0 ^ c3 ^ k1), l0
            k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
            k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
        return c0, c1, c2, c3

    return philox


def _mulhilo_wide(a, b):
    """(hi, lo) of a * b for 32-bit a, b through one unsigned 64-bit product (the
    device build: one wide multiply instead of :func:`_mulhilo`'s 16-bit halves; the
    same numbers)."""
    p = numba.uint64(a) * numba.uint64(b)
    return numba.int64(p >> numba.uint64(32)), numba.int64(p & numba.uint64(0xFFFFFFFF))


def _make_device_fns(jit):
    mulhilo = jit(_mulhilo_wide)
    philox = jit(_make_scalar(mulhilo))

    def normal_pair(g, a, stream, k0, k1):
        x0, x1, x2, x3 = philox(g & 0xFFFFFFFF, g >> 32, a, stream, k0, k1)
        u0 = ((x0 >> 5) * 67108864 + (x1 >> 6)) * 1.1102230246251565e-16
        u1 = ((x2 >> 5) * 67108864 + (x3 >> 6)) * 1.1102230246251565e-16
        rad = math.sqrt(-2.0 * math.log(1.0 - u0))
        ang = 6.283185307179586 * u1
        return rad * math.cos(ang), rad * math.sin(ang)

    normal_pair = jit(normal_pair)

    def uniform(g, a, stream, k0, k1):
        x0, x1, _, _ = philox(g & 0xFFFFFFFF, g >> 32, a, stream, k0, k1)
        return ((x0 >> 5) * 67108864 + (x1 >> 6)) * 1.1102230246251565e-16

    uniform = jit(uniform)

    def gamma(g, shape, k0, k1):
        # Marsaglia & Tsang (2000), shape >= 1; try t uses counters (2t, 2t + 1) of stream 1
        dd = shape - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * dd)
        for t in range(64):
            z, _ = normal_pair(g, 2 * t, 1, k0, k1)
            v = 1.0 + c * z
            if v > 0.0:
                v = v * v * v
                u = uniform(g, 2 * t + 1, 1, k0, k1)
                if math.log(1.0 - u) < 0.5 * z * z + dd - dd * v + dd * math.log(v):
                    return dd * v
        return dd  # not reached in practice (each try accepts with probability > 0.95)

    gamma = jit(gamma)

    def row_scale(g, m, scale, k0, k1):
        ss = 0.0
        for a in range((m + 1) // 2):
            z0, z1 = normal_pair(g, a, 0, k0, k1)
            ss += z0 * z0
            if 2 * a + 1 < m:
                ss += z1 * z1
        return scale * gamma(g, float(m), k0, k1) / math.sqrt(ss)

    row_scale = jit(row_scale)
    return normal_pair, row_scale, gamma


cuda = None  # numba.cuda, bound on first use (the simulator swaps this module global)


@functools.lru_cache(maxsize=None)
def _kernels():
    global cuda
    from trustlab._backend import numba_cuda_numpy_compat

    numba_cuda_numpy_compat()  # before numba.cuda's first compile (NumPy >= 2.5)
    from numba import cuda as _cuda

    cuda = _cuda
    normal_pair, row_scale, _ = _make_device_fns(cuda.jit(device=True))

    @cuda.jit
    def row_scale_kernel(n, m, scale, k0, k1, row_offset, s):  # pragma: no cover - compiled
        i = cuda.grid(1)
        if i < n:
            s[i] = row_scale(row_offset + i, m, scale, k0, k1)

    @cuda.jit
    def add_noise_kernel(P, s, k0, k1, row_offset, out, bad):  # pragma: no cover - compiled
        t = cuda.grid(1)
        n = out.shape[0]
        m = out.shape[1]
        npair = (m + 1) // 2
        if t < n * npair:
            i = t // npair
            a = t - i * npair
            z0, z1 = normal_pair(row_offset + i, a, 0, k0, k1)
            si = s[i]
            j = 2 * a
            y = P[i, j] + si * z0
            out[i, j] = y
            nb = 0
            if not math.isfinite(out[i, j]):
                nb += 1
            if j + 1 < m:
                out[i, j + 1] = P[i, j + 1] + si * z1
                if not math.isfinite(out[i, j + 1]):
                    nb += 1
            if nb:
                cuda.atomic.add(bad, 0, nb)

    return cuda, row_scale_kernel, add_noise_kernel


FUSED_MAX_PAIRS = 16  # column pairs per lane held in registers: the fused kernel serves m <= 1,024
FUSED_THREADS = 128  # 4 warps per block, each warp 32 rows


@functools.lru_cache(maxsize=None)
def _fused_kernel(shfl: bool):
    """Steps 2-3 in one kernel: each warp takes 32 rows; lane ``l`` first draws row ``l``'s
    Gamma(m) radius, then for each row in turn the warp draws its normals (lane ``l`` the
    column pairs ``l, l + 32, …``, kept in registers), sums their squares across the warp
    (shuffles on a device; a shared buffer and a barrier in the simulator, ``shfl=False``)
    and writes ``P + s_i z_i``. Every normal is drawn once (the two-kernel path draws each
    twice: once for the norm, once to add it); the numbers are the same Philox counters,
    so the release equals the reference up to the order of the norm's sum."""
    _kernels()  # binds the module global ``cuda`` (the kernels below must use the global)
    normal_pair, _, gamma = _make_device_fns(cuda.jit(device=True))
    zlen = 2 * FUSED_MAX_PAIRS  # a local array's size must be a compile-time constant
    nthr = FUSED_THREADS

    if shfl:
        @cuda.jit(device=True)
        def wsum(v, sbuf, tid):  # pragma: no cover - compiled
            # xor butterfly: every lane ends with the same bits (x + y == y + x)
            v += cuda.shfl_xor_sync(0xFFFFFFFF, v, 16)
            v += cuda.shfl_xor_sync(0xFFFFFFFF, v, 8)
            v += cuda.shfl_xor_sync(0xFFFFFFFF, v, 4)
            v += cuda.shfl_xor_sync(0xFFFFFFFF, v, 2)
            v += cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)
            return v
    else:
        @cuda.jit(device=True)
        def wsum(v, sbuf, tid):  # pragma: no cover - compiled
            sbuf[tid] = v
            cuda.syncthreads()
            tot = 0.0
            base = (tid >> 5) << 5
            for j in range(32):
                tot += sbuf[base + j]
            cuda.syncthreads()
            return tot

    @cuda.jit
    def fused_kernel(P, scale, k0, k1, row_offset, out, bad):  # pragma: no cover - compiled
        tid = cuda.threadIdx.x
        lane = tid & 31
        w = tid >> 5
        n = out.shape[0]
        m = out.shape[1]
        npair = (m + 1) // 2
        nj = (npair + 31) // 32
        sbuf = cuda.shared.array(nthr, dtype=numba.float64)
        sg = cuda.shared.array(nthr, dtype=numba.float64)
        z = cuda.local.array(zlen, dtype=numba.float64)
        row0 = (cuda.blockIdx.x * (cuda.blockDim.x >> 5) + w) * 32
        if row0 + lane < n:
            sg[tid] = gamma(row_offset + row0 + lane, float(m), k0, k1)
        cuda.syncthreads()
        nb = 0
        for rr in range(32):  # every warp loops 32 times (the shared build's barriers)
            i = row0 + rr
            ss = 0.0
            if i < n:
                g = row_offset + i
                for j in range(nj):
                    a = lane + 32 * j
                    if a < npair:
                        z0, z1 = normal_pair(g, a, 0, k0, k1)
                        z[2 * j] = z0
                        z[2 * j + 1] = z1
                        ss += z0 * z0
                        if 2 * a + 1 < m:
                            ss += z1 * z1
            tot = wsum(ss, sbuf, tid)
            if i < n:
                si = scale * sg[(w << 5) + rr] / math.sqrt(tot)
                for j in range(nj):
                    a = lane + 32 * j
                    if a < npair:
                        c = 2 * a
                        out[i, c] = P[i, c] + si * z[2 * j]
                        if not math.isfinite(out[i, c]):
                            nb += 1
                        if c + 1 < m:
                            out[i, c + 1] = P[i, c + 1] + si * z[2 * j + 1]
                            if not math.isfinite(out[i, c + 1]):
                                nb += 1
        if nb:
            cuda.atomic.add(bad, 0, nb)

    return fused_kernel


def _use_shuffles() -> bool:
    from trustlab._backend import cuda_simulator_enabled

    return not cuda_simulator_enabled()


def _noise_into(P, out, scale, key, row_offset, threads=256, fused=True):
    """Steps 2-3 on device arrays (``P`` may be ``out``); returns the non-finite count.
    ``fused=True`` (the default) runs :func:`_fused_kernel` where ``m <= 1,024`` (the same
    numbers; faster on an H200 at every ``m`` timed, see the module docstring);
    ``fused=False`` or a larger ``m`` runs the two-kernel path."""
    cp = get_cupy()
    cuda, k_scale, k_add = _kernels()
    n, m = out.shape
    if n == 0:
        return 0
    k0, k1 = key
    bad = cp.zeros(1, dtype=cp.int64)
    if fused and m <= 2 * 32 * FUSED_MAX_PAIRS:
        k_f = _fused_kernel(_use_shuffles())
        rows_per_block = 32 * (FUSED_THREADS // 32)
        k_f[(n + rows_per_block - 1) // rows_per_block, FUSED_THREADS](
            P, np.float64(scale), np.int64(k0), np.int64(k1), np.int64(row_offset), out, bad)
        return int(bad.get()[0])
    s = cp.empty(n, dtype=cp.float64)
    k_scale[(n + threads - 1) // threads, threads](np.int64(n), np.int64(m), np.float64(scale), np.int64(k0),
                                                   np.int64(k1), np.int64(row_offset), s)
    total = n * ((m + 1) // 2)
    k_add[(total + threads - 1) // threads, threads](P, s, np.int64(k0), np.int64(k1), np.int64(row_offset),
                                                     out, bad)
    return int(bad.get()[0])


def release_on_device(X, phiT, scale: float, key: tuple[int, int], row_offset: int, out) -> int:
    """Project (``phiT``: Φᵀ as a device array of X's dtype, or ``None`` for M1) and noise
    the device rows ``X`` into the device array ``out``; returns the non-finite count."""
    cp = get_cupy()
    if phiT is None:
        P = X
    elif X.dtype == out.dtype:
        P = cp.matmul(X, phiT, out=out)
    else:
        P = cp.matmul(X.astype(cp.float64, copy=False), phiT.astype(cp.float64, copy=False))
    return _noise_into(P, out, scale, key, row_offset)


# ---------------------------------------------------------------- NumPy reference
def _philox_np(c0, c1, c2, c3, k0, k1):
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.int64) for c in (c0, c1, c2, c3))
    k0 = np.int64(k0)
    k1 = np.int64(k1)
    for _ in range(10):
        h0, l0 = _mulhilo(np.int64(_M0), c0)
        h1, l1 = _mulhilo(np.int64(_M1), c2)
        c0, c1, c2, c3 = (h1 ^ c1 ^ k0), l1, (h0 ^ c3 ^ k1), l0
        k0 = (k0 + _W0) & _MASK
        k1 = (k1 + _W1) & _MASK
    return c0, c1, c2, c3


def _u53(a, b):
    return ((a >> 5) * 67108864 + (b >> 6)) * _U53


def noise_reference(n: int, m: int, scale: float, key: tuple[int, int], row_offset: int = 0) -> np.ndarray:
    """The kernels' noise rows ``s_i z_i`` for global rows ``row_offset .. row_offset + n - 1``,
    computed with NumPy (the tests' reference; also usable to audit a GPU release)."""
    k0, k1 = key
    g = np.arange(row_offset, row_offset + n, dtype=np.int64)[:, None]
    npair = (m + 1) // 2
    a = np.arange(npair, dtype=np.int64)[None, :]
    x0, x1, x2, x3 = _philox_np(g & _MASK, g >> 32, a, 0, k0, k1)
    rad = np.sqrt(-2.0 * np.log(1.0 - _u53(x0, x1)))
    ang = _TWO_PI * _u53(x2, x3)
    Z = np.empty((n, 2 * npair))
    Z[:, 0::2] = rad * np.cos(ang)
    Z[:, 1::2] = rad * np.sin(ang)
    Z = Z[:, :m]
    norm = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    r = np.empty(n)
    dd = m - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * dd)
    for i in range(n):
        gi = int(g[i, 0])
        r[i] = dd
        for t in range(_GAMMA_TRIES):
            y0, y1, y2, y3 = _philox_np(gi & _MASK, gi >> 32, 2 * t, 1, k0, k1)
            z = math.sqrt(-2.0 * math.log(1.0 - _u53(int(y0), int(y1)))) * math.cos(_TWO_PI * _u53(int(y2), int(y3)))
            v = 1.0 + c * z
            if v > 0.0:
                v = v * v * v
                w0, w1, _, _ = _philox_np(gi & _MASK, gi >> 32, 2 * t + 1, 1, k0, k1)
                u = _u53(int(w0), int(w1))
                if math.log(1.0 - u) < 0.5 * z * z + dd - dd * v + dd * math.log(v):
                    r[i] = dd * v
                    break
    return (scale * r / norm)[:, None] * Z
