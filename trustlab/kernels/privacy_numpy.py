"""Exact NumPy twins of the CPU private-release kernels (nothing to compile).

:mod:`trustlab.kernels.privacy_cpu` compiles about 5 s of CPU the first time a process
meets an empty Numba cache, which is longer than releasing a few thousand vectors takes.
The functions here give **the same bits** as those kernels for the same key, with NumPy
(vectorised over rows) and plain Python (for the rare slow paths of the samplers), so a
small release on a cold cache uses them and compiles nothing
(:meth:`trustlab.privacy.mechanisms.Mechanism.apply` chooses). They follow the stream
definition in :mod:`trustlab.kernels.privacy_cpu` step for step:

* per row, a ``xoshiro256**`` state seeded from ``(key0, key1, row)``; the row's first
  k draws are the ziggurat candidates (vectorised over the rows); the candidates that
  fail the fast test are completed in coordinate order by the exact tail / wedge
  procedure on the row's continuing stream (Python ints); the sum of squares is
  accumulated in coordinate order; the Gamma(k) radius's first Marsaglia-Tsang
  iteration is vectorised and the rows it does not accept continue in Python;
* ``out = float64(P) + f * z`` with ``f = g * scale / sqrt(ss)``, rounded once to
  ``out``'s dtype;
* the float32 projection of :func:`~trustlab.kernels.privacy_cpu.project_noise_into` is
  a chain of correctly rounded float32 fused multiply-adds in input order. NumPy has no
  FMA, so each step is done exactly in float64 (the float32 x float32 product is exact
  there), the sum is rounded *to odd* (its exact error by TwoSum decides the last bit),
  and the round-to-odd value is rounded to float32, which is the correctly rounded
  result (Boldo & Melquiond 2008: round-to-odd in p + 2 or more bits, then round to
  nearest in p bits).

The transcendental functions of the slow paths (``log``, ``log1p``, ``exp``) are
Python's ``math`` functions, i.e. the C library's, which is what the Numba kernels call;
``numpy.log`` etc. (own SIMD implementations) are never used on a value that decides a
draw. The tests compare every function with its kernel bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["zig_tables", "noise_into", "project_into", "project_noise_into", "fill_raw", "fill_normals",
           "fill_gamma"]

_U64 = np.uint64
_M64 = (1 << 64) - 1
_MASK52 = (1 << 52) - 1
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_ROWMUL = 0xD1B54A32D192ED03


def zig_tables(n_layers: int = 256, r: float = 3.6541528853610088, v: float = 0.00492867323399):
    """Ziggurat tables (Marsaglia & Tsang 2000) for 52-bit magnitudes.

    Returns ``ki`` (uint64 acceptance thresholds), ``wi`` (scale) and ``fi`` (density
    at layer edges), the same construction NumPy uses for its normal ziggurat.

    Examples
    --------
    >>> ki, wi, fi = zig_tables()
    >>> ki.shape, float(fi[0])
    ((256,), 1.0)
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


_KI_A, _WI_A, _FI_A = zig_tables()
_KI_A = _KI_A.astype(np.int64)  # thresholds < 2**52
_KI = [int(x) for x in _KI_A]
_WI = [float(x) for x in _WI_A]
_FI = [float(x) for x in _FI_A]
_ZR = 3.6541528853610088
_ZINV_R = 1.0 / _ZR


# ----------------------------------------------------------- scalar (Python ints)
def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & _M64


def _seed(key0: int, key1: int, row: int) -> list[int]:
    x = (row * _ROWMUL + key1) & _M64
    z = (x + _GOLDEN) & _M64
    z = ((z ^ (z >> 30)) * _MIX1) & _M64
    z = ((z ^ (z >> 27)) * _MIX2) & _M64
    h = (z ^ (z >> 31)) ^ key0
    st = []
    for _ in range(4):
        h = (h + _GOLDEN) & _M64
        z = ((h ^ (h >> 30)) * _MIX1) & _M64
        z = ((z ^ (z >> 27)) * _MIX2) & _M64
        st.append(z ^ (z >> 31))
    if not any(st):  # pragma: no cover - the kernels' guard, probability 2**-256
        st[0] = 1
    return st


def _next(st: list[int]) -> int:
    s0, s1, s2, s3 = st
    r = (_rotl((s1 * 5) & _M64, 7) * 9) & _M64
    t = (s1 << 17) & _M64
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    st[0], st[1], st[2], st[3] = s0, s1, s2, _rotl(s3, 45)
    return r


def _uniform(st: list[int]) -> float:
    return float(_next(st) >> 11) * _TWO_M53


def _zig_candidate(r: int):
    idx = r & 0xFF
    r >>= 8
    sign = r & 1
    rabs = (r >> 1) & _MASK52
    return idx, sign, rabs, float(rabs) * _WI[idx] * (1.0 - 2.0 * float(sign))


def _normal_slow(st, idx, x, sign):
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


def _normal(st):
    idx, sign, rabs, x = _zig_candidate(_next(st))
    if rabs < _KI[idx]:
        return x
    return _normal_slow(st, idx, x, sign)


def _gamma_try(st, d, c, x):
    v = 1.0 + c * x
    if v <= 0.0:
        return -1.0
    v = v * v * v
    u = _uniform(st)
    x2 = x * x
    if u < 1.0 - 0.0331 * x2 * x2:
        return d * v
    if u > 0.0 and math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
        return d * v
    return -1.0


def _gamma(st, shape):
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        g = _gamma_try(st, d, c, _normal(st))
        if g >= 0.0:
            return g


def _row_direction(st, k):
    """The row rule's k normals and their sum of squares (redrawn while it is 0.0)."""
    ss = 0.0
    while ss == 0.0:
        raw = [_next(st) for _ in range(k)]
        z = []
        for r in raw:
            idx, sign, rabs, x = _zig_candidate(r)
            if rabs >= _KI[idx]:
                x = _normal_slow(st, idx, x, sign)
            z.append(x)
        ss = 0.0
        for x in z:
            ss += x * x
    return z, ss


# --------------------------------------------------------- vectorised over rows
def _v_seed(n: int, key0, key1, row_offset: int) -> list[np.ndarray]:
    rows = np.arange(n, dtype=np.uint64) + _U64(row_offset & _M64)
    x = rows * _U64(_ROWMUL) + _U64(int(key1))
    z = x + _U64(_GOLDEN)
    z = (z ^ (z >> _U64(30))) * _U64(_MIX1)
    z = (z ^ (z >> _U64(27))) * _U64(_MIX2)
    h = (z ^ (z >> _U64(31))) ^ _U64(int(key0))
    st = []
    for _ in range(4):
        h = h + _U64(_GOLDEN)
        z = (h ^ (h >> _U64(30))) * _U64(_MIX1)
        z = (z ^ (z >> _U64(27))) * _U64(_MIX2)
        st.append(z ^ (z >> _U64(31)))
    zero = (st[0] == 0) & (st[1] == 0) & (st[2] == 0) & (st[3] == 0)
    if zero.any():  # pragma: no cover - probability 2**-256 per row
        st[0][zero] = 1
    return st


def _v_next(s: list[np.ndarray]) -> np.ndarray:
    """One xoshiro256** step of every row's state (in place); returns the outputs."""
    s0, s1, s2, s3 = s
    a = s1 * _U64(5)
    r = ((a << _U64(7)) | (a >> _U64(57))) * _U64(9)
    t = s1 << _U64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s[3] = (s3 << _U64(45)) | (s3 >> _U64(19))
    return r


def _v_candidates(r: np.ndarray):
    """Ziggurat candidates of raw draws: ``(value, rejected by the fast test)``."""
    idx = (r & _U64(0xFF)).astype(np.intp)
    sign = ((r >> _U64(8)) & _U64(1)).astype(np.float64)
    rabs = ((r >> _U64(9)) & _U64(_MASK52)).astype(np.int64)
    x = rabs.astype(np.float64) * _WI_A[idx] * (1.0 - 2.0 * sign)
    return x, rabs >= _KI_A[idx]


def _state_of(s, i) -> list[int]:
    return [int(s[q][i]) for q in range(4)]


def _put_state(s, i, st) -> None:
    for q in range(4):
        s[q][i] = st[q]


def _noise(n: int, k: int, key0, key1, row_offset: int):
    """Every row's k normals (k, n) in coordinate order, their sums of squares and the
    Gamma(k) radii, drawn exactly as the row rule draws them."""
    s = _v_seed(n, key0, key1, row_offset)
    R = np.empty((k, n), dtype=np.uint64)
    for j in range(k):
        R[j] = _v_next(s)
    Z, rej = _v_candidates(R)
    for i in np.flatnonzero(rej.any(axis=0)):  # ~1.2 % of the candidates: exact completion
        st = _state_of(s, i)
        for j in np.flatnonzero(rej[:, i]):
            idx, sign, _, x = _zig_candidate(int(R[j, i]))
            Z[j, i] = _normal_slow(st, idx, x, sign)
        _put_state(s, i, st)
    ss = np.zeros(n)
    for j in range(k):
        ss += Z[j] * Z[j]
    for i in np.flatnonzero(ss == 0.0):  # pragma: no cover - probability ~2**-60 per coordinate
        st = _state_of(s, i)
        z, ss[i] = _row_direction(st, k)
        Z[:, i] = z
        _put_state(s, i, st)
    # Gamma(k): the first Marsaglia-Tsang iteration of every row at once
    shape = float(k)
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    r1 = _v_next(s)
    x, rej1 = _v_candidates(r1)
    v = 1.0 + c * x
    vpos = ~(v <= 0.0)
    ok = ~rej1 & vpos
    s1 = [w.copy() for w in s]
    r2 = _v_next(s)
    for q in range(4):  # only the rows that draw the uniform advance past r1
        s[q] = np.where(ok, s[q], s1[q])
    u = (r2 >> _U64(11)).astype(np.int64).astype(np.float64) * _TWO_M53
    v = v * v * v
    x2 = x * x
    acc = ok & (u < 1.0 - 0.0331 * x2 * x2)
    g = d * v
    for i in np.flatnonzero(~acc):
        st = _state_of(s, i)
        if rej1[i]:  # the normal needs the tail / wedge
            idx, sign, _, x0 = _zig_candidate(int(r1[i]))
            gi = _gamma_try(st, d, c, _normal_slow(st, idx, x0, sign))
        elif not vpos[i]:  # 1 + c x <= 0: the next iteration
            gi = -1.0
        else:  # the squeeze failed: the log test
            xi, vi, ui = float(x[i]), float(v[i]), float(u[i])
            xx = xi * xi
            ok_log = ui > 0.0 and math.log(ui) < 0.5 * xx + d * (1.0 - vi + math.log(vi))
            gi = d * vi if ok_log else -1.0
        g[i] = gi if gi >= 0.0 else _gamma(st, shape)
        _put_state(s, i, st)
    return Z, ss, g


def noise_into(out: np.ndarray, P: np.ndarray, scale: float, key0, key1, row_offset) -> int:
    """:func:`trustlab.kernels.privacy_cpu.noise_into` in NumPy, the same bits:
    ``out[i] = P[i] + l_i u_i`` rounded once to ``out``'s dtype; returns the number of
    non-finite values stored. ``out`` may be ``P``.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.zeros((3, 4))
    >>> noise_into(out, out, 1.0, np.uint64(1), np.uint64(2), 0), bool(np.all(out != 0))
    (0, True)
    """
    n, k = out.shape
    if n == 0 or k == 0:
        return 0
    Z, ss, g = _noise(n, k, key0, key1, int(row_offset))
    f = g * scale / np.sqrt(ss)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.asarray(P, dtype=np.float64) + f[:, None] * Z.T
        out[...] = y
    return int(out.size - np.count_nonzero(np.isfinite(out)))


def project_into(out: np.ndarray, X: np.ndarray, BT: np.ndarray) -> None:
    """``out = X @ BT[:, :m]`` as :func:`trustlab.kernels.privacy_cpu.project_into`
    computes it, the same bits: per output, a chain of correctly rounded float32 fused
    multiply-adds over the input coordinates in order, starting from +0.0 (emulated
    exactly in float64 with round-to-odd, see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.ones((2, 3), np.float32); BT = np.full((3, 64), 0.5, np.float32)
    >>> out = np.empty((2, 5), np.float32); project_into(out, X, BT); out[0, 0]
    np.float32(1.5)
    """
    n, d = X.shape
    m = out.shape[1]
    B = BT[:, :m].astype(np.float64)
    step = max(1, 65536 // max(m, 1))  # rows per block (a few hundred KB of float64 buffers)
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, n, step):
            Xb = X[lo:lo + step].astype(np.float64)
            nb = Xb.shape[0]
            acc = np.zeros((nb, m))
            prod = np.empty((nb, m))
            s = np.empty((nb, m))
            for p in range(d):
                np.multiply(Xb[:, p, None], B[p], out=prod)  # exact: 24 + 24 bits
                np.add(prod, acc, out=s)
                bits = s.view(np.uint64)
                # s.astype(float32) rounds correctly unless the exact sum was rounded onto a
                # float32 midpoint (low 29 bits 1000...0) or the result is float32-subnormal:
                # only there the exact error is needed (then round to odd)
                hard = (bits & _U64(0x1FFFFFFF)) == _U64(0x10000000)
                hard |= np.abs(s) < 2.0 ** -125
                if hard.any():
                    hi = np.flatnonzero(hard.ravel())
                    a, b, t = prod.ravel()[hi], acc.ravel()[hi], s.ravel()[hi]
                    bb = t - a
                    err = (a - (t - bb)) + (b - bb)
                    fix = (err != 0.0) & np.isfinite(err) & ((t.view(np.uint64) & _U64(1)) == 0)
                    t = np.where(fix, np.nextafter(t, np.where(err > 0.0, np.inf, -np.inf)), t)
                    s.ravel()[hi] = t
                acc[...] = s.astype(np.float32)
            out[lo:lo + nb] = acc


def project_noise_into(out: np.ndarray, X: np.ndarray, BT: np.ndarray, scale: float, key0, key1,
                       row_offset) -> int:
    """:func:`trustlab.kernels.privacy_cpu.project_noise_into` in NumPy, the same bits:
    the float32 projection (:func:`project_into`) into ``out``, then :func:`noise_into`
    in place; returns the number of non-finite values stored.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.ones((2, 3), np.float32); BT = np.full((3, 64), 0.5, np.float32)
    >>> out = np.empty((2, 5), np.float32)
    >>> project_noise_into(out, X, BT, 1.0, np.uint64(1), np.uint64(2), 0)
    0
    """
    project_into(out, X, BT)
    return noise_into(out, out, scale, key0, key1, row_offset)


def fill_raw(out: np.ndarray, key0, key1, row: int) -> None:
    """Raw xoshiro256** output of one row stream (as the kernel of the same name).

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(2, np.uint64); fill_raw(out, 1, 2, 0); out.dtype
    dtype('uint64')
    """
    st = _seed(int(key0), int(key1), int(row))
    for j in range(out.shape[0]):
        out[j] = _next(st)


def fill_normals(out: np.ndarray, key0, key1, row_offset: int) -> None:
    """Row ``i``: the k = ``out.shape[1]`` normals the row rule draws for row stream
    ``row_offset + i`` (as the kernel of the same name).

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty((2, 3)); fill_normals(out, 1, 2, 0); bool(np.isfinite(out).all())
    True
    """
    n, k = out.shape
    for i in range(n):
        out[i] = _row_direction(_seed(int(key0), int(key1), int(row_offset) + i), k)[0]


def fill_gamma(out: np.ndarray, shape: float, key0, key1, row_offset: int) -> None:
    """``out[i]``: a Gamma(shape, 1) draw from row stream ``row_offset + i`` (as the
    kernel of the same name; ``shape >= 1``).

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(3); fill_gamma(out, 2.0, 1, 2, 0); bool((out > 0).all())
    True
    """
    for i in range(out.shape[0]):
        out[i] = _gamma(_seed(int(key0), int(key1), int(row_offset) + i), float(shape))
