"""CPU kernels for private embedding release (PrivEmb / M1).

Plain Numba functions on validated, C-contiguous float32/float64 arrays; no validation
here (that happens once in :mod:`trustlab.privacy`; the noise kernels count the
non-finite values they store, which is how the pipeline checks finiteness without an
extra pass over the input).

Randomness design (reproducible *and* parallel)
-----------------------------------------------
Numba's ``np.random`` inside ``prange`` uses one state per thread, so results would
depend on the thread schedule. Instead every vector gets its **own stream**, a function
only of a 128-bit noise key and the vector's global row index:

* the row index is passed through a bijective 64-bit mix (``row * odd`` then
  ``splitmix64``) and XOR-ed with the key, and the result seeds a
  ``xoshiro256**`` state through four ``splitmix64`` steps (the seeding Vigna
  recommends);
* standard normals come from a 256-layer Marsaglia--Tsang ziggurat on the
  ``xoshiro256**`` output (52-bit magnitude, as in NumPy), the Gamma radius from
  Marsaglia--Tsang's squeeze/rejection method, both exact samplers.

So the released vectors are bit-for-bit identical for a fixed key whatever the chunk
size or number of threads, every vector gets a fresh independent draw, and rows never
share a stream.

Speed without changing a bit: in the fused kernel the ziggurat's fast path (≈ 98.8 %
of draws) runs on the xoshiro state held in four scalars (registers) with a branch-free
sign, and only the rare tail/wedge branch goes through the state array; the stream is
consumed exactly as by the plain :func:`_normal` loop (tested bit-for-bit). Everything
stays float64 with 52-bit ziggurat magnitudes: no float32/32-bit-uniform sampler is
used, because a coarse noise grid is what floating-point attacks on textbook
samplers exploit (Mironov, CCS 2012); the noise is added to ``Φx`` in float64 and the
sum rounded once to the output dtype. The generator is a statistical (not cryptographic) PRNG, like NumPy's
PCG64; with ``random_state=None`` the key itself comes from OS entropy.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = [
    "add_radial_noise",
    "noise_into",
    "noise_into_serial",
    "fill_normals",
    "fill_gamma",
    "fill_raw",
    "nn_argmin_update",
    "nn_top2_update",
    "zig_tables",
]

_U64 = np.uint64
_MASK52 = np.uint64((1 << 52) - 1)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53


def zig_tables(n_layers: int = 256, r: float = 3.6541528853610088, v: float = 0.00492867323399):
    """Ziggurat tables (Marsaglia & Tsang 2000) for 52-bit magnitudes.

    Returns ``ki`` (uint64 acceptance thresholds), ``wi`` (scale) and ``fi`` (density
    at layer edges), the same construction NumPy uses for its normal ziggurat.
    """
    m1 = float(2**52)
    ki = np.zeros(n_layers, dtype=np.uint64)
    wi = np.zeros(n_layers, dtype=np.float64)
    fi = np.zeros(n_layers, dtype=np.float64)
    dn = r
    tn = dn
    q = v / math.exp(-0.5 * dn * dn)
    ki[0] = np.uint64((dn / q) * m1)
    ki[1] = 0
    wi[0] = q / m1
    wi[n_layers - 1] = dn / m1
    fi[0] = 1.0
    fi[n_layers - 1] = math.exp(-0.5 * dn * dn)
    for i in range(n_layers - 2, 0, -1):
        dn = math.sqrt(-2.0 * math.log(v / dn + math.exp(-0.5 * dn * dn)))
        ki[i + 1] = np.uint64((dn / tn) * m1)
        tn = dn
        fi[i] = math.exp(-0.5 * dn * dn)
        wi[i] = dn / m1
    return ki, wi, fi


_KI, _WI, _FI = zig_tables()
_KI = _KI.astype(np.int64)  # thresholds < 2**52
_ZR = 3.6541528853610088
_ZINV_R = 1.0 / _ZR


@njit(inline="always", cache=True)
def _rotl(x, k):
    return (x << _U64(k)) | (x >> _U64(64 - k))


@njit(inline="always", cache=True)
def _splitmix64(x):
    z = x + _U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


@njit(inline="always", cache=True)
def _seed_row(st, key0, key1, row):
    """Seed the 4-word xoshiro256** state ``st`` for global row ``row``."""
    h = _splitmix64(_U64(row) * _U64(0xD1B54A32D192ED03) + key1) ^ key0
    for k in range(4):
        h = h + _U64(0x9E3779B97F4A7C15)
        z = h
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        st[k] = z ^ (z >> _U64(31))
    if st[0] == 0 and st[1] == 0 and st[2] == 0 and st[3] == 0:  # pragma: no cover
        st[0] = _U64(1)


@njit(inline="always", cache=True)
def _next_regs(s0, s1, s2, s3):
    """One xoshiro256** step (Blackman & Vigna 2018) on a state held in four scalars
    (kept in registers by LLVM); returns ``(output, s0, s1, s2, s3)``."""
    result = _rotl(s1 * _U64(5), 7) * _U64(9)
    t = s1 << _U64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@njit(inline="always", cache=True)
def _next(st):
    """xoshiro256** on the 4-word state array ``st``."""
    r, s0, s1, s2, s3 = _next_regs(st[0], st[1], st[2], st[3])
    st[0] = s0
    st[1] = s1
    st[2] = s2
    st[3] = s3
    return r


@njit(inline="always", cache=True)
def _uniform(st):
    """Uniform double in [0, 1) from the top 53 bits."""
    return float(np.int64(_next(st) >> _U64(11))) * _TWO_M53


@njit(inline="always", cache=True)
def _zig_candidate(r):
    """Ziggurat candidate from one 64-bit draw: ``(layer, sign bit, 52-bit magnitude,
    signed value)``. The sign is applied branch-free (a data-dependent branch
    mispredicts half the time; multiplying by -1.0 is exact, -0.0 included)."""
    idx = np.int64(r & _U64(0xFF))
    r = r >> _U64(8)
    sign = r & _U64(1)
    rabs = np.int64((r >> _U64(1)) & _MASK52)  # < 2**52: exact, fast int64 -> double
    return idx, sign, rabs, float(rabs) * _WI[idx] * (1.0 - 2.0 * float(np.int64(sign)))


@njit(cache=True)
def _normal(st):
    """Standard normal by the 256-layer ziggurat (exact)."""
    idx, sign, rabs, x = _zig_candidate(_next(st))
    if rabs < _KI[idx]:
        return x
    return _normal_slow(st, idx, x, sign)


@njit(cache=True)
def _gamma(st, shape):
    """Gamma(shape, 1) for shape >= 1 by Marsaglia & Tsang (2000) (exact rejection)."""
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(st)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = _uniform(st)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2:
            return d * v
        if u > 0.0 and math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v


_BLOCK = 64  # rows per parallel task (amortises the per-task buffers)


@njit(cache=True)
def _normal_slow(st, idx, x, sign):
    """The ziggurat after its fast test rejected the candidate ``(idx, x, sign)``:
    the tail (layer 0, Marsaglia's method) or wedge test, and on rejection fresh
    candidates until one is accepted. Together with the fast test in :func:`_normal`
    (or inlined in :func:`_radial_row`) this is the whole Marsaglia-Tsang sampler."""
    while True:
        if idx == 0:
            while True:
                xx = -_ZINV_R * math.log1p(-_uniform(st))
                yy = -math.log1p(-_uniform(st))
                if yy + yy > xx * xx:
                    if sign:
                        return -(_ZR + xx)
                    return _ZR + xx
        if (_FI[idx - 1] - _FI[idx]) * _uniform(st) + _FI[idx] < math.exp(-0.5 * x * x):
            return x
        idx, sign, rabs, x = _zig_candidate(_next(st))
        if rabs < _KI[idx]:
            return x


@njit(cache=True, inline="always")
def _radial_row(st, z, key0, key1, row, shape, scale):
    """Draw row ``row``'s noise direction into ``z`` (unnormalised normals) and
    return the factor ``radius / ||z||`` (radius ~ Gamma(shape, scale)).

    The ziggurat's fast path (taken ~98.8 % of the time) runs on the xoshiro state
    held in four scalars, so it stays in registers instead of going through the
    ``st`` array on every draw; the rare tail/wedge path syncs ``st`` and calls
    :func:`_normal_slow`. The stream is consumed exactly as by :func:`_normal`, so
    the values are bit-identical to ``z[j] = _normal(st)`` (tested).
    """
    _seed_row(st, key0, key1, row)
    ss = 0.0
    k = z.shape[0]
    while ss == 0.0:
        s0 = st[0]
        s1 = st[1]
        s2 = st[2]
        s3 = st[3]
        for j in range(k):
            r, s0, s1, s2, s3 = _next_regs(s0, s1, s2, s3)
            idx, sign, rabs, x = _zig_candidate(r)
            if rabs >= _KI[idx]:  # rare: tail / wedge
                st[0] = s0
                st[1] = s1
                st[2] = s2
                st[3] = s3
                x = _normal_slow(st, idx, x, sign)
                s0 = st[0]
                s1 = st[1]
                s2 = st[2]
                s3 = st[3]
            z[j] = x
            ss += x * x
        st[0] = s0
        st[1] = s1
        st[2] = s2
        st[3] = s3
    return _gamma(st, shape) * scale / math.sqrt(ss)


def add_radial_noise(Y, scale, key0, key1, row_offset):
    """In place: ``Y[i] += l_i * u_i`` for every row, fresh draw per row.

    ``u_i`` is uniform on the unit sphere of R^k (k = ``Y.shape[1]``, a normalised
    vector of k ziggurat normals) and ``l_i ~ Gamma(shape=k, scale=scale)``; so the
    noise has density proportional to ``exp(-||z|| / scale)`` in R^k. The Gamma shape
    is *taken from the array*, never passed, so it always equals the dimension the
    noise lives in. Row ``i``'s stream depends only on ``(key0, key1, row_offset+i)``.
    Returns the number of non-finite values written (0 on success).
    """
    return noise_into(Y, Y, scale, key0, key1, row_offset)  # element-wise, so in place is safe


@njit(cache=True, inline="always")
def _noise_rows(out, P, scale, key0, key1, row_offset, lo, hi, st, z):
    """Rows ``lo..hi-1`` of :func:`noise_into`; returns how many stored values are
    not finite. The sum is formed in float64 and rounded once to ``out``'s dtype."""
    k = out.shape[1]
    shape = float(k)
    bad = 0
    for i in range(lo, hi):
        f = _radial_row(st, z, key0, key1, row_offset + i, shape, scale)
        for j in range(k):
            out[i, j] = np.float64(P[i, j]) + f * z[j]
            x = out[i, j]
            bad += not (x - x == 0.0)  # NaN or +-inf (after rounding to out's dtype)
    return bad


@njit(parallel=True, cache=True)
def noise_into(out, P, scale, key0, key1, row_offset):
    """``out[i] = P[i] + l_i u_i``: the fused (cast +) noise + store of one chunk.

    ``out`` is float64 or float32, ``P`` float32 or float64 (the same shape);
    ``out`` may be ``P`` itself (in place). The noise is drawn in float64 (see
    :func:`add_radial_noise`), added to ``P`` in float64 and rounded once to
    ``out``'s dtype, so a float32 ``out`` holds exactly the float32 rounding of the
    float64 result. Rows run in parallel blocks of 64. Returns the number of
    non-finite values stored (the caller's finiteness check, for free).
    """
    n, k = out.shape
    nblocks = (n + _BLOCK - 1) // _BLOCK
    bad = 0
    for b in prange(nblocks):
        st = np.empty(4, dtype=np.uint64)
        z = np.empty(k, dtype=np.float64)
        lo = b * _BLOCK
        bad += _noise_rows(out, P, scale, key0, key1, row_offset, lo, min(n, lo + _BLOCK), st, z)
    return bad


@njit(cache=True)
def noise_into_serial(out, P, scale, key0, key1, row_offset):
    """:func:`noise_into` on one thread (identical output): for small chunks, so the
    Numba parallel runtime (thread pool start-up) is not needed."""
    n, k = out.shape
    st = np.empty(4, dtype=np.uint64)
    z = np.empty(k, dtype=np.float64)
    return _noise_rows(out, P, scale, key0, key1, row_offset, 0, n, st, z)


@njit(parallel=True, cache=True)
def fill_normals(out, key0, key1, row_offset):
    """Fill ``out`` with standard normals, row ``i`` from row stream ``row_offset+i``."""
    n, k = out.shape
    for i in prange(n):
        st = np.empty(4, dtype=np.uint64)
        _seed_row(st, key0, key1, row_offset + i)
        for j in range(k):
            out[i, j] = _normal(st)


@njit(parallel=True, cache=True)
def fill_gamma(out, shape, key0, key1, row_offset):
    """Fill ``out[i]`` with Gamma(shape, 1) draws, one row stream per element."""
    n = out.shape[0]
    for i in prange(n):
        st = np.empty(4, dtype=np.uint64)
        _seed_row(st, key0, key1, row_offset + i)
        out[i] = _gamma(st, shape)


@njit(cache=True)
def fill_raw(out, key0, key1, row):
    """Raw xoshiro256** output of one row stream (for known-answer tests)."""
    st = np.empty(4, dtype=np.uint64)
    _seed_row(st, key0, key1, row)
    for j in range(out.shape[0]):
        out[j] = _next(st)


@njit(parallel=True, cache=True)
def nn_argmin_update(G, norms, col_offset, best_val, best_idx):
    """Running exact-argmin step of the nearest-neighbour swap.

    For one block of vocabulary columns: ``score[i, j] = norms[j] - 2 G[i, j]``
    (= ``||v_i - e_j||^2 - ||v_i||^2``). Keeps the smallest score per row (ties to the
    lowest index) in ``best_val`` / ``best_idx``.
    """
    n, b = G.shape
    for i in prange(n):
        bv = best_val[i]
        bi = best_idx[i]
        for j in range(b):
            s = norms[j] - 2.0 * G[i, j]
            if s < bv:
                bv = s
                bi = col_offset + j
        best_val[i] = bv
        best_idx[i] = bi


@njit(parallel=True, cache=True)
def nn_top2_update(G, norms, col_offset, best_val, best_idx, second_val):
    """Like :func:`nn_argmin_update` but also keeps the runner-up score per row
    (used to certify float32 winners before exact refinement)."""
    n, b = G.shape
    for i in prange(n):
        bv = best_val[i]
        bi = best_idx[i]
        sv = second_val[i]
        for j in range(b):
            s = norms[j] - 2.0 * G[i, j]
            if s < bv:
                sv = bv
                bv = s
                bi = col_offset + j
            elif s < sv:
                sv = s
        best_val[i] = bv
        best_idx[i] = bi
        second_val[i] = sv
