"""CPU kernels for private embedding release (PrivEmb / M1).

Plain Numba functions on validated float32/float64 arrays; no validation here (that
happens once in :mod:`trustlab.privacy`; the noise kernels count the non-finite values
they store, which is how the pipeline checks finiteness without an extra pass over the
input).

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

**Row rule** (stream definition 2). For a row of ``k`` noise coordinates the row's first
``k`` 64-bit draws are the ziggurat candidates of coordinates ``0..k-1``; a candidate
that fails the ziggurat's fast test (≈ 1.2 %) is then completed, in coordinate order,
by the exact tail/wedge procedure on the *continuing* stream; then (if all ``k``
normals were 0.0, never seen in practice, the direction is redrawn the same way) the
Gamma(k) radius is drawn from the continuation. Every coordinate is the ziggurat run on
fresh draws (which draws a coordinate's slow path uses depends only on earlier
outcomes), so the coordinates are i.i.d. N(0, 1) exactly as with one-at-a-time draws.
:func:`noise_into_reference` is that rule written plainly, row by row.

So the released vectors are bit-for-bit identical for a fixed key whatever the chunk
size or number of threads, every vector gets a fresh independent draw, and rows never
share a stream.

Speed without changing a bit: :func:`noise_into` runs **8 rows at once** in SIMD
lanes (explicit LLVM vector code through Numba intrinsics, lowered to what the CPU has:
AVX-512, AVX2, SSE2...): the 8 rows' xoshiro states step together, each step yielding the 8 rows'
candidates for one coordinate (branch-free: table look-ups, int -> double conversion of
the 52-bit magnitudes, sign by bit flip, fast-test mask); the rare rejected candidates
are completed by the scalar exact procedure on their own row's state; the sums of
squares (in coordinate order, as the plain rule), the Gamma radius (its fast path
vectorised the same way, the rare rejections completed by the scalar sampler) and the
store follow. It is tested bit-for-bit against :func:`noise_into_reference`.

For float32 input, :func:`project_noise_into` also does the projection: per block of
256 rows, a float32 register-blocked product (4 rows x 64 columns of fused
multiply-adds in input order; correctly rounded FMA, so the same bits on every CPU)
straight into the output, then the noise on those rows while they are in cache. Each
row depends only on itself, so the release is the same whatever the chunking.

Everything stays float64 with 52-bit ziggurat magnitudes: no float32/32-bit-uniform
sampler is used, because a coarse noise grid is what floating-point attacks on textbook
samplers exploit (Mironov, CCS 2012); the noise is added to ``Φx`` in float64 and the
sum rounded once to the output dtype. The generator is a statistical (not cryptographic)
PRNG, like NumPy's PCG64; with ``random_state=None`` the key itself comes from OS
entropy.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange
from numba.core import cgutils, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic, overload

from trustlab.kernels.privacy_numpy import zig_tables

__all__ = [
    "add_radial_noise",
    "noise_into",
    "noise_into_serial",
    "noise_into_reference",
    "padded_projection",
    "project_into",
    "project_noise_into",
    "project_noise_into_serial",
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
        g = _gamma_try(st, d, c, _normal(st))
        if g >= 0.0:
            return g


@njit(cache=True)
def _gamma_try(st, d, c, x):
    """One Marsaglia-Tsang iteration with normal ``x``: ``d v`` if it accepts, else -1.
    Draws the uniform from ``st`` only when ``v > 0`` (the stream of :func:`_gamma`)."""
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


@njit(cache=True)
def _normal_slow(st, idx, x, sign):
    """The ziggurat after its fast test rejected the candidate ``(idx, x, sign)``:
    the tail (layer 0, Marsaglia's method) or wedge test, and on rejection fresh
    candidates until one is accepted. Together with the fast test in :func:`_normal`
    (or in :func:`_row_direction` / the SIMD :func:`_vcand`) this is the whole
    Marsaglia-Tsang sampler."""
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


_BLOCK = 256  # rows per parallel task (amortises the per-task buffers)


# --------------------------------------------------------------------------- row rule
@njit(cache=True)
def _row_direction(st, z, raw):
    """The row rule, plainly: fill ``z`` with the row's k standard normals and return
    ``sum(z**2)`` (accumulated in coordinate order).

    The stream's next k draws are the ziggurat candidates of coordinates 0..k-1 (kept
    in ``raw``); each candidate that fails the fast test is then completed, in
    coordinate order, by :func:`_normal_slow` on the continuing stream. If every
    normal is 0.0 the direction is drawn again the same way.
    """
    k = z.shape[0]
    ss = 0.0
    while ss == 0.0:
        for j in range(k):
            raw[j] = _next(st)
        for j in range(k):
            idx, sign, rabs, x = _zig_candidate(raw[j])
            if rabs >= _KI[idx]:
                x = _normal_slow(st, idx, x, sign)
            z[j] = x
        ss = 0.0
        for j in range(k):
            ss += z[j] * z[j]
    return ss


@njit(cache=True, inline="always")
def _reference_rows(out, P, scale, key0, key1, row_offset, lo, hi, st, z, raw):
    """Rows ``lo..hi-1`` by the plain row rule; returns the non-finite count."""
    k = out.shape[1]
    shape = float(k)
    bad = 0
    for i in range(lo, hi):
        _seed_row(st, key0, key1, row_offset + i)
        ss = _row_direction(st, z, raw)
        f = _gamma(st, shape) * scale / math.sqrt(ss)
        for j in range(k):
            out[i, j] = np.float64(P[i, j]) + f * z[j]
            x = out[i, j]
            bad += not (x - x == 0.0)  # NaN or +-inf (after rounding to out's dtype)
    return bad


@njit(cache=True)
def noise_into_reference(out, P, scale, key0, key1, row_offset):
    """:func:`noise_into` written plainly, one row at a time (the definition of the
    streams; the SIMD kernel is tested bit-for-bit against it)."""
    n, k = out.shape
    st = np.empty(4, dtype=np.uint64)
    return _reference_rows(out, P, scale, key0, key1, row_offset, 0, n,
                           st, np.empty(k), np.empty(k, dtype=np.uint64))


# --------------------------------------------------------------- SIMD row groups
# Explicit LLVM vector IR (Numba intrinsics): one <8 x i64> register holds the same
# state word of 8 rows. LLVM lowers it to one zmm (AVX-512), two ymm (AVX2) or four
# xmm (SSE2) registers (all three tested bit for bit, NUMBA_CPU_NAME=haswell / x86-64);
# no data-dependent control flow inside a step.
_W = 8
_I1 = ir.IntType(1)
_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()
_F64 = ir.DoubleType()
_V64 = ir.VectorType(_I64, _W)
_VF64 = ir.VectorType(_F64, _W)
_VB = ir.VectorType(_I1, _W)
# ziggurat tables interleaved per layer (wi as bits, ki): one 16-byte load per lane
_ZPAIR = np.empty(2 * _KI.shape[0], dtype=np.int64)
_ZPAIR[0::2] = _WI.view(np.int64)
_ZPAIR[1::2] = _KI


def _c(v, ty=_I64):
    return ir.Constant(ty, v)


def _splat(v, ty=_V64):
    return ir.Constant(ty, [ir.Constant(ty.element, v)] * _W)


def _bcast(b, x, ty):
    """Scalar ``x`` in every lane."""
    v = b.insert_element(ir.Constant(ty, ir.Undefined), x, _c(0, _I32))
    return b.shuffle_vector(v, ir.Constant(ty, ir.Undefined), ir.Constant(ir.VectorType(_I32, _W), [0] * _W))


def _data(context, b, aty, a):
    return context.make_array(aty)(context, b, a).data


def _vload(b, p, ty):
    return b.load(b.bitcast(p, ir.PointerType(ty)), align=8)


def _vstore(b, v, p):
    b.store(v, b.bitcast(p, ir.PointerType(v.type)), align=8)


def _vrotl(b, x, k):
    return b.or_(b.shl(x, _splat(k)), b.lshr(x, _splat(64 - k)))


def _vxoshiro(b, s):
    """One xoshiro256** step in every lane: ``(output, new state)`` (as :func:`_next_regs`)."""
    s0, s1, s2, s3 = s
    r = b.mul(_vrotl(b, b.mul(s1, _splat(5)), 7), _splat(9))
    t = b.shl(s1, _splat(17))
    s2 = b.xor(s2, s0)
    s3 = b.xor(s3, s1)
    s1 = b.xor(s1, s2)
    s0 = b.xor(s0, s3)
    s2 = b.xor(s2, t)
    s3 = _vrotl(b, s3, 45)
    return r, (s0, s1, s2, s3)


def _vzig(b, r, pairp):
    """Ziggurat candidates of 8 raw draws (as :func:`_zig_candidate`): ``(x, rejected)``,
    ``rejected`` the lanes failing the fast test ``rabs < ki[idx]``."""
    idx = b.and_(r, _splat(0xFF))
    rabs = b.and_(b.lshr(r, _splat(9)), _splat((1 << 52) - 1))
    v2 = ir.VectorType(_I64, 2)
    parts = []
    for lane in range(_W):
        i = b.extract_element(idx, _c(lane, _I32))
        parts.append(b.load(b.bitcast(b.gep(pairp, [b.shl(i, _c(1))]), ir.PointerType(v2)), align=8))
    width = 2
    while len(parts) > 1:
        mask = ir.Constant(ir.VectorType(_I32, 2 * width), list(range(2 * width)))
        parts = [b.shuffle_vector(parts[q], parts[q + 1], mask) for q in range(0, len(parts), 2)]
        width *= 2
    both = parts[0]
    wi = b.bitcast(b.shuffle_vector(both, both, ir.Constant(ir.VectorType(_I32, _W), list(range(0, 2 * _W, 2)))),
                   _VF64)
    ki = b.shuffle_vector(both, both, ir.Constant(ir.VectorType(_I32, _W), list(range(1, 2 * _W, 2))))
    xa = b.fmul(b.sitofp(rabs, _VF64), wi)  # rabs < 2**52: exact conversion
    sign = b.and_(b.shl(r, _splat(55)), _splat(1 << 63))  # bit 8 of r -> sign bit (= * -1.0, exact)
    x = b.bitcast(b.xor(b.bitcast(xa, _V64), sign), _VF64)
    return x, b.icmp_signed(">=", rabs, ki)


def _pair_table(context, b):
    aty = types.Array(types.int64, 1, "C")
    return _data(context, b, aty, context.get_constant_generic(b, aty, _ZPAIR))


def _state_ptrs(b, sp):
    return [b.gep(sp, [_c(q * _W)]) for q in range(5)]


def _loop_blocks(b, name: str):
    """The skeleton of a counted loop in LLVM IR: appends ``NAME.head``, ``NAME.body`` and
    ``NAME.done`` blocks, branches from the current block (returned as ``entry``) to the
    head and leaves the builder there, where the caller creates the loop's phis and the
    conditional branch to ``body`` / ``done``. Returns ``(entry, head, body, done)``."""
    fn = b.function
    entry = b.basic_block
    head = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    return entry, head, body, done


@intrinsic
def _vcand(typingctx, S, R, Z, M, k):
    """The k candidate steps of 8 rows (lanes). ``S``: uint64[5*8], lane l's state words
    at ``S[q*8+l]`` (updated). For step j: raw draws -> ``R[j*8:(j+1)*8]``, candidates
    (before the fast test) -> ``Z[j*8:(j+1)*8]``, rejected-lane mask -> ``M[j]``.
    Returns the OR of the masks."""
    sig = types.int64(S, R, Z, M, k)

    def codegen(context, b, signature, args):
        sp, rp, zp, mp = (_data(context, b, signature.args[q], args[q]) for q in range(4))
        k_ = args[4]
        pairp = _pair_table(context, b)
        sptr = _state_ptrs(b, sp)
        s_in = [_vload(b, sptr[q], _V64) for q in range(4)]
        entry, head, body, done = _loop_blocks(b, "vcand")
        pj = b.phi(_I64)
        ps = [b.phi(_V64) for _ in range(4)]
        pany = b.phi(_I64)
        pj.add_incoming(_c(0), entry)
        for q in range(4):
            ps[q].add_incoming(s_in[q], entry)
        pany.add_incoming(_c(0), entry)
        b.cbranch(b.icmp_signed("<", pj, k_), body, done)
        b.position_at_end(body)
        r, s_new = _vxoshiro(b, ps)
        x, rej = _vzig(b, r, pairp)
        off = b.mul(pj, _c(_W))
        _vstore(b, x, b.gep(zp, [off]))
        _vstore(b, r, b.gep(rp, [off]))
        m8 = b.bitcast(rej, _I8)
        b.store(m8, b.gep(mp, [pj]))
        end = b.basic_block
        pj.add_incoming(b.add(pj, _c(1)), end)
        for q in range(4):
            ps[q].add_incoming(s_new[q], end)
        pany.add_incoming(b.or_(pany, b.zext(m8, _I64)), end)
        b.branch(head)
        b.position_at_end(done)
        for q in range(4):
            _vstore(b, ps[q], sptr[q])
        return pany

    return sig, codegen


def _transpose8(b, rows):
    """8 x 8 transpose of eight <8 x double> (three shuffle stages)."""
    def shuf(a, c, idx):
        return b.shuffle_vector(a, c, ir.Constant(ir.VectorType(_I32, _W), idx))
    t = []
    for i in range(0, 8, 2):
        t.append(shuf(rows[i], rows[i + 1], [0, 8, 2, 10, 4, 12, 6, 14]))
        t.append(shuf(rows[i], rows[i + 1], [1, 9, 3, 11, 5, 13, 7, 15]))
    u = [None] * 8
    for base in (0, 4):
        for h in (0, 1):
            u[base + h] = shuf(t[base + h], t[base + 2 + h], [0, 1, 8, 9, 4, 5, 12, 13])
            u[base + 2 + h] = shuf(t[base + h], t[base + 2 + h], [2, 3, 10, 11, 6, 7, 14, 15])
    v = [None] * 8
    for i in range(4):
        v[i] = shuf(u[i], u[i + 4], [0, 1, 2, 3, 8, 9, 10, 11])
        v[i + 4] = shuf(u[i], u[i + 4], [4, 5, 6, 7, 12, 13, 14, 15])
    return v


@intrinsic
def _vsumsq_t(typingctx, Z, SS, ZT, k, kp):
    """``SS[l] = sum_j Z[j*8+l]**2`` (coordinate order, as the plain rule) and the
    transpose ``ZT[l*kp+j] = Z[j*8+l]`` (8 x 8 blocks; ``Z`` and ``ZT`` hold kp rows)."""
    sig = types.void(Z, SS, ZT, k, kp)

    def codegen(context, b, signature, args):
        zp, ssp, ztp = (_data(context, b, signature.args[q], args[q]) for q in range(3))
        k_, kp_ = args[3], args[4]
        acc = cgutils.alloca_once_value(b, _splat(0.0, _VF64))
        with cgutils.for_range(b, k_) as loop:
            z = _vload(b, b.gep(zp, [b.mul(loop.index, _c(_W))]), _VF64)
            b.store(b.fadd(b.load(acc), b.fmul(z, z)), acc)
        _vstore(b, b.load(acc), ssp)
        with cgutils.for_range(b, b.sdiv(kp_, _c(8))) as loop:
            j0 = b.mul(loop.index, _c(8))
            rows = [_vload(b, b.gep(zp, [b.mul(b.add(j0, _c(q)), _c(_W))]), _VF64) for q in range(8)]
            for lane, col in enumerate(_transpose8(b, rows)):
                _vstore(b, col, b.gep(ztp, [b.add(b.mul(_c(lane), kp_), j0)]))

    return sig, codegen


@intrinsic
def _vgamma(typingctx, S, GX, d, c):
    """First Marsaglia-Tsang iteration of the Gamma radius in 8 lanes (as :func:`_gamma`:
    normal x, ``v = (1 + c x)^3``, uniform u, squeeze ``u < 1 - 0.0331 x^4``), the
    second draw taken only by lanes whose normal passed the fast test and ``1 + c x > 0``.
    Stores ``d v`` / x / v / u in ``GX[0:8]`` / ``[8:16]`` / ``[16:24]`` / ``[24:32]``,
    the first raw draw in ``S[32:40]``; returns the lane masks ``accepted | normal fast
    << 8 | (1 + c x > 0) << 16``."""
    sig = types.int64(S, GX, d, c)

    def codegen(context, b, signature, args):
        sp, gp = (_data(context, b, signature.args[q], args[q]) for q in range(2))
        d_, c_ = args[2], args[3]
        pairp = _pair_table(context, b)
        sptr = _state_ptrs(b, sp)
        s = [_vload(b, sptr[q], _V64) for q in range(4)]
        r1, s1 = _vxoshiro(b, s)
        x, rej = _vzig(b, r1, pairp)
        fast = b.not_(rej)
        v = b.fadd(_splat(1.0, _VF64), b.fmul(_bcast(b, c_, _VF64), x))
        vpos = b.fcmp_unordered(">", v, _splat(0.0, _VF64))  # not (v <= 0)
        ok = b.and_(fast, vpos)
        r2, s2 = _vxoshiro(b, s1)
        for q in range(4):
            _vstore(b, b.select(ok, s2[q], s1[q]), sptr[q])
        _vstore(b, r1, sptr[4])
        u = b.fmul(b.sitofp(b.lshr(r2, _splat(11)), _VF64), _splat(_TWO_M53, _VF64))
        v = b.fmul(b.fmul(v, v), v)
        x2 = b.fmul(x, x)
        sq = b.fcmp_ordered("<", u, b.fsub(_splat(1.0, _VF64), b.fmul(b.fmul(_splat(0.0331, _VF64), x2), x2)))
        acc = b.and_(ok, sq)
        for q, val in enumerate((b.fmul(_bcast(b, d_, _VF64), v), x, v, u)):
            _vstore(b, val, b.gep(gp, [_c(q * _W)]))

        def m(mask, shift):
            return b.shl(b.zext(b.bitcast(mask, _I8), _I64), _c(shift))
        return b.or_(b.or_(m(acc, 0), m(fast, 8)), m(vpos, 16))

    return sig, codegen


def _masked_mem(b, name, vt, args):
    sfx = "f64" if vt.element == _F64 else "f32"
    if name == "load":
        fnty = ir.FunctionType(vt, [ir.PointerType(vt), _I32, _VB, vt])
    else:
        fnty = ir.FunctionType(ir.VoidType(), [vt, ir.PointerType(vt), _I32, _VB])
    fn = cgutils.get_or_insert_function(b.module, fnty, f"llvm.masked.{name}.v{_W}{sfx}.p0")
    return b.call(fn, args)


@intrinsic
def _vout_row(typingctx, out, P, ZT, i, lane, f, k, kp):
    """``out[i, j] = float64(P[i, j]) + f * ZT[lane*kp + j]`` for j < k, rounded once to
    out's dtype (8 coordinates per step, masked at the end of the row); returns how many
    stored values are not finite. C-contiguous ``out`` and ``P`` only."""
    if not (isinstance(out, types.Array) and isinstance(P, types.Array) and out.layout == "C" and P.layout == "C"):
        return None
    sig = types.int64(out, P, ZT, i, lane, f, k, kp)

    def codegen(context, b, signature, args):
        oty, pty = signature.args[0], signature.args[1]
        oa = context.make_array(oty)(context, b, args[0])
        pa = context.make_array(pty)(context, b, args[1])
        ztp = _data(context, b, signature.args[2], args[2])
        i_, lane_, f_, k_, kp_ = args[3:]
        o_el = _F32 if oty.dtype == types.float32 else _F64
        p_el = _F32 if pty.dtype == types.float32 else _F64
        ovt, pvt = ir.VectorType(o_el, _W), ir.VectorType(p_el, _W)

        def row(arr, el):
            stride = cgutils.unpack_tuple(b, arr.strides, 2)[0]
            base = b.bitcast(arr.data, ir.PointerType(_I8))
            return b.bitcast(b.gep(base, [b.mul(i_, stride)]), ir.PointerType(el))
        orow, prow = row(oa, o_el), row(pa, p_el)
        zrow = b.gep(ztp, [b.mul(lane_, kp_)])
        fv = _bcast(b, f_, _VF64)
        lanes = ir.Constant(_V64, [ir.Constant(_I64, q) for q in range(_W)])
        ctpop = cgutils.get_or_insert_function(b.module, ir.FunctionType(_I64, [_I64]), "llvm.ctpop.i64")
        bad = cgutils.alloca_once_value(b, _c(0))
        with cgutils.for_range(b, b.sdiv(b.add(k_, _c(_W - 1)), _c(_W))) as loop:
            j0 = b.mul(loop.index, _c(_W))
            mask = b.icmp_signed("<", lanes, _bcast(b, b.sub(k_, j0), _V64))
            pv = b.bitcast(b.gep(prow, [j0]), ir.PointerType(pvt))
            p = _masked_mem(b, "load", pvt, [pv, _c(4, _I32), mask, ir.Constant(pvt, ir.Undefined)])
            if p_el == _F32:
                p = b.fpext(p, _VF64)
            y = b.fadd(p, b.fmul(fv, _vload(b, b.gep(zrow, [j0]), _VF64)))
            if o_el == _F32:
                y = b.fptrunc(y, ovt)
            _masked_mem(b, "store", ovt, [y, b.bitcast(b.gep(orow, [j0]), ir.PointerType(ovt)), _c(4, _I32), mask])
            dy = b.fsub(y, y)
            nonfinite = b.and_(b.fcmp_unordered("uno", dy, dy), mask)  # y - y is NaN iff y is NaN or inf
            b.store(b.add(b.load(bad), b.call(ctpop, [b.zext(b.bitcast(nonfinite, _I8), _I64)])), bad)
        return b.load(bad)

    return sig, codegen


def _out_row(out, P, ZT, i, lane, f, k, kp):  # pragma: no cover - compiled through the overload
    raise NotImplementedError


@overload(_out_row, jit_options={"cache": True})
def _out_row_impl(out, P, ZT, i, lane, f, k, kp):
    if out.layout == "C" and P.layout == "C":
        def impl(out, P, ZT, i, lane, f, k, kp):
            return _vout_row(out, P, ZT, i, lane, f, k, kp)
    else:
        def impl(out, P, ZT, i, lane, f, k, kp):
            bad = 0
            for j in range(k):
                out[i, j] = np.float64(P[i, j]) + f * ZT[lane * kp + j]
                x = out[i, j]
                bad += not (x - x == 0.0)
            return bad
    return impl


@njit(cache=True, inline="always")
def _lane_get(S, st, lane):
    for q in range(4):
        st[q] = S[q * _W + lane]


@njit(cache=True, inline="always")
def _lane_put(S, st, lane):
    for q in range(4):
        S[q * _W + lane] = st[q]


@njit(cache=True)
def _complete_candidates(S, R, Z, M, st):
    """The scalar step of the row rule for 8 lanes: every rejected candidate, in
    coordinate order, finished by :func:`_normal_slow` on its own lane's continuing
    state. ``M`` (one lane mask per coordinate, zero-padded to a multiple of 8) is
    scanned 8 coordinates per word."""
    M8 = M.view(np.uint64)
    for w in range(M8.shape[0]):
        bits = M8[w]
        while bits:
            t = np.int64(trailing_zeros(bits))
            j = w * 8 + (t >> 3)
            bits &= ~(_U64(0xFF) << _U64(t & ~7))
            m = np.int64(M[j])
            while m:
                lane = np.int64(trailing_zeros(m))
                m &= m - 1
                _lane_get(S, st, lane)
                idx, sign, rabs, x = _zig_candidate(R[j * _W + lane])
                Z[j * _W + lane] = _normal_slow(st, idx, x, sign)
                _lane_put(S, st, lane)


@njit(cache=True)
def _redraw_lane(S, Z, SS, st, lane, z, raw):
    """Lane ``lane``'s k normals were all 0.0: redraw its direction by the plain rule
    (never seen in practice: each normal is 0.0 with probability ~2**-60)."""
    k = z.shape[0]
    _lane_get(S, st, lane)
    SS[lane] = _row_direction(st, z, raw)
    for j in range(k):
        Z[j * _W + lane] = z[j]
    _lane_put(S, st, lane)


@njit(cache=True)
def _gamma_after_normal(st, shape, x):
    """The rest of one :func:`_gamma` iteration whose normal is ``x``, then (if that
    iteration rejects) :func:`_gamma` from the continuing state."""
    d = shape - 1.0 / 3.0
    g = _gamma_try(st, d, 1.0 / math.sqrt(9.0 * d), x)
    return g if g >= 0.0 else _gamma(st, shape)


@njit(cache=True)
def _complete_gamma(S, GX, st, res, shape):
    """The lanes whose first Gamma iteration did not accept by the squeeze (see
    :func:`_vgamma`), finished exactly as :func:`_gamma` would."""
    d = shape - 1.0 / 3.0
    for lane in range(_W):
        if (res >> lane) & 1:
            continue
        _lane_get(S, st, lane)
        if not (res >> (8 + lane)) & 1:  # the normal needs the tail / wedge
            idx, sign, rabs, x = _zig_candidate(S[4 * _W + lane])
            g = _gamma_after_normal(st, shape, _normal_slow(st, idx, x, sign))
        elif not (res >> (16 + lane)) & 1:  # 1 + c x <= 0: next iteration
            g = _gamma(st, shape)
        else:  # squeeze failed: the log test, else next iteration
            x = GX[_W + lane]
            v = GX[2 * _W + lane]
            u = GX[3 * _W + lane]
            x2 = x * x
            if u > 0.0 and math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
                g = d * v
            else:
                g = _gamma(st, shape)
        GX[lane] = g
        _lane_put(S, st, lane)


@njit(cache=True, inline="always")
def _group_rows(out, P, scale, key0, key1, row_offset, i0, S, R, Z, M, SS, ZT, GX, st, z, raw):
    """Rows ``i0..i0+7`` of :func:`noise_into` in SIMD lanes (bit-identical to the
    plain row rule); returns the non-finite count."""
    k = out.shape[1]
    kp = ZT.shape[0] // _W
    for lane in range(_W):
        _seed_row(st, key0, key1, row_offset + i0 + lane)
        _lane_put(S, st, lane)
    if _vcand(S, R, Z, M, np.int64(k)):
        _complete_candidates(S, R, Z, M, st)
    _vsumsq_t(Z, SS, ZT, np.int64(k), np.int64(kp))
    redo = False
    for lane in range(_W):
        if SS[lane] == 0.0:  # pragma: no cover - probability ~2**-60 per coordinate
            _redraw_lane(S, Z, SS, st, lane, z, raw)
            redo = True
    if redo:  # pragma: no cover
        _vsumsq_t(Z, SS, ZT, np.int64(k), np.int64(kp))
    shape = float(k)
    d = shape - 1.0 / 3.0
    res = _vgamma(S, GX, d, 1.0 / math.sqrt(9.0 * d))
    if res & 0xFF != 0xFF:
        _complete_gamma(S, GX, st, res, shape)
    bad = 0
    for lane in range(_W):
        f = GX[lane] * scale / math.sqrt(SS[lane])
        bad += _out_row(out, P, ZT, np.int64(i0 + lane), np.int64(lane), f, np.int64(k), np.int64(kp))
    return bad


@njit(cache=True)
def _noise_rows(out, P, scale, key0, key1, row_offset, lo, hi):
    """Rows ``lo..hi-1`` of :func:`noise_into`: groups of 8 in SIMD lanes, the last
    ``< 8`` by the plain row rule (the same streams). Returns the non-finite count."""
    k = out.shape[1]
    kp = (k + 7) // 8 * 8
    # two scratch buffers, cut into views: state S | raw draws R | masks M | st | raw;
    # candidates Z | transpose ZT | sums of squares SS | Gamma lanes GX | z
    a = 5 * _W
    b = a + kp * _W
    c = b + kp // 8
    U = np.empty(c + 4 + k, dtype=np.uint64)
    U[b:c] = 0  # M's padding stays 0
    S, R, M, st, raw = U[:a], U[a:b], U[b:c].view(np.uint8), U[c:c + 4], U[c + 4:]
    F = np.empty(2 * kp * _W + 5 * _W + k)
    Z, ZT = F[:kp * _W], F[kp * _W:2 * kp * _W]
    SS, GX, z = F[2 * kp * _W:2 * kp * _W + _W], F[2 * kp * _W + _W:2 * kp * _W + 5 * _W], F[2 * kp * _W + 5 * _W:]
    bad = 0
    i = lo
    while i + _W <= hi:
        bad += _group_rows(out, P, scale, key0, key1, row_offset, i, S, R, Z, M, SS, ZT, GX, st, z, raw)
        i += _W
    bad += _reference_rows(out, P, scale, key0, key1, row_offset, i, hi, st, z, raw)
    return bad


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


@njit(parallel=True, cache=True)
def noise_into(out, P, scale, key0, key1, row_offset):
    """``out[i] = P[i] + l_i u_i``: the fused (cast +) noise + store of one chunk.

    ``out`` is float64 or float32, ``P`` float32 or float64 (the same shape);
    ``out`` may be ``P`` itself (in place). The noise is drawn in float64 (see
    :func:`add_radial_noise` and the row rule in the module docstring), added to ``P``
    in float64 and rounded once to ``out``'s dtype, so a float32 ``out`` holds exactly
    the float32 rounding of the float64 result. Rows run in parallel blocks of 256,
    8 rows at a time in SIMD lanes. Returns the number of non-finite values stored (the
    caller's finiteness check, for free). Bit-identical to :func:`noise_into_reference`.
    """
    n = out.shape[0]
    nblocks = (n + _BLOCK - 1) // _BLOCK
    bad = 0
    for b in prange(nblocks):
        lo = b * _BLOCK
        bad += _noise_rows(out, P, scale, key0, key1, row_offset, lo, min(n, lo + _BLOCK))
    return bad


@njit(cache=True)
def noise_into_serial(out, P, scale, key0, key1, row_offset):
    """:func:`noise_into` on one thread (identical output): for small chunks, so the
    Numba parallel runtime (thread pool start-up) is not needed."""
    return _noise_rows(out, P, scale, key0, key1, row_offset, 0, out.shape[0])


# ------------------------------------------------- fused float32 projection + noise
_PROJ_ROWS = 4  # rows per projection micro-kernel call
_PANEL = 64  # output columns per panel: four <16 x float> accumulators per row
_V16 = ir.VectorType(_F32, 16)


@intrinsic
def _vproject(typingctx, X, i0, BT, out, o0, nrows):
    """``out[o0+r, :m] = X[i0+r] @ BT[:, :m]`` for ``r < nrows`` (<= 4), m = out's width.

    float32 products accumulated with fused multiply-adds (correctly rounded, so the
    same bits on every CPU) in input-coordinate order, 4 rows x 64 columns per panel in
    registers; stored (masked, exactly widened for a float64 ``out``) straight into
    ``out``. ``X``: C-contiguous float32 rows (rows ``i0..i0+3`` must exist); ``BT``:
    C-contiguous float32 (d, mp), mp a multiple of 64 >= m, zero beyond m."""
    if not (isinstance(out, types.Array) and out.layout == "C" and isinstance(X, types.Array) and X.layout == "C"):
        return None
    sig = types.void(X, i0, BT, out, o0, nrows)

    def codegen(context, b, signature, args):
        xa = context.make_array(signature.args[0])(context, b, args[0])
        bta = context.make_array(signature.args[2])(context, b, args[2])
        oa = context.make_array(signature.args[3])(context, b, args[3])
        i0_, o0_, nrows_ = args[1], args[4], args[5]
        d = cgutils.unpack_tuple(b, xa.shape, 2)[1]
        mp = cgutils.unpack_tuple(b, bta.shape, 2)[1]
        m = cgutils.unpack_tuple(b, oa.shape, 2)[1]
        o_el = _F32 if signature.args[3].dtype == types.float32 else _F64
        ovt = ir.VectorType(o_el, 16)
        vb16 = ir.VectorType(_I1, 16)

        def row_ptr(arr, row, el):
            stride = cgutils.unpack_tuple(b, arr.strides, 2)[0]
            base = b.bitcast(arr.data, ir.PointerType(_I8))
            return b.bitcast(b.gep(base, [b.mul(row, stride)]), ir.PointerType(el))
        xrows = [row_ptr(xa, b.add(i0_, _c(r)), _F32) for r in range(_PROJ_ROWS)]
        fma = cgutils.get_or_insert_function(b.module, ir.FunctionType(_V16, [_V16] * 3), "llvm.fma.v16f32")
        sfx = "f32" if o_el == _F32 else "f64"
        mstore = cgutils.get_or_insert_function(
            b.module, ir.FunctionType(ir.VoidType(), [ovt, ir.PointerType(ovt), _I32, vb16]),
            f"llvm.masked.store.v16{sfx}.p0")
        zero = ir.Constant(_V16, [ir.Constant(_F32, 0.0)] * 16)
        cols = ir.Constant(ir.VectorType(_I64, 16), [ir.Constant(_I64, q) for q in range(16)])
        splat16 = ir.Constant(ir.VectorType(_I32, 16), [0] * 16)
        with cgutils.for_range(b, b.sdiv(mp, _c(_PANEL))) as panel:
            c0 = b.mul(panel.index, _c(_PANEL))
            entry, head, body, done = _loop_blocks(b, "proj")
            pp = b.phi(_I64)
            pp.add_incoming(_c(0), entry)
            accs = [[b.phi(_V16) for _ in range(4)] for _ in range(_PROJ_ROWS)]
            for row in accs:
                for a in row:
                    a.add_incoming(zero, entry)
            b.cbranch(b.icmp_signed("<", pp, d), body, done)
            b.position_at_end(body)
            brow = b.gep(bta.data, [b.add(b.mul(pp, mp), c0)])
            bv = [b.load(b.bitcast(b.gep(brow, [_c(16 * q)]), ir.PointerType(_V16)), align=4) for q in range(4)]
            new = []
            for r in range(_PROJ_ROWS):
                x = b.load(b.gep(xrows[r], [pp]))
                xv = b.shuffle_vector(b.insert_element(ir.Constant(_V16, ir.Undefined), x, _c(0, _I32)),
                                      ir.Constant(_V16, ir.Undefined), splat16)
                new.append([b.call(fma, [xv, bv[q], accs[r][q]]) for q in range(4)])
            end = b.basic_block
            pp.add_incoming(b.add(pp, _c(1)), end)
            for r in range(_PROJ_ROWS):
                for q in range(4):
                    accs[r][q].add_incoming(new[r][q], end)
            b.branch(head)
            b.position_at_end(done)
            for r in range(_PROJ_ROWS):
                with b.if_then(b.icmp_signed("<", _c(r), nrows_)):
                    orow = row_ptr(oa, b.add(o0_, _c(r)), o_el)
                    for q in range(4):
                        j0 = b.add(c0, _c(16 * q))
                        lim = b.sub(m, j0)
                        limv = b.shuffle_vector(
                            b.insert_element(ir.Constant(ir.VectorType(_I64, 16), ir.Undefined), lim, _c(0, _I32)),
                            ir.Constant(ir.VectorType(_I64, 16), ir.Undefined), splat16)
                        mask = b.icmp_signed("<", cols, limv)
                        v = accs[r][q] if o_el == _F32 else b.fpext(accs[r][q], ovt)
                        b.call(mstore, [v, b.bitcast(b.gep(orow, [j0]), ir.PointerType(ovt)), _c(4, _I32), mask])

    return sig, codegen


def padded_projection(phi: np.ndarray) -> np.ndarray:
    """``Φᵀ`` as the float32 (d, mp) operand of :func:`project_noise_into` (mp = m rounded
    up to a multiple of 64, zeros beyond m)."""
    m, d = phi.shape
    BT = np.zeros((d, -(-m // _PANEL) * _PANEL), dtype=np.float32)
    BT[:, :m] = phi.T
    return BT


@njit(cache=True)
def _project_rows(out, X, BT, lo, hi, Xs):
    """``out[lo:hi] = X[lo:hi] @ BT[:, :m]`` (float32, see :func:`_vproject`); the last
    ``< 4`` rows through the zero-padded scratch ``Xs`` (4, d)."""
    i = lo
    while i + _PROJ_ROWS <= hi:
        _vproject(X, np.int64(i), BT, out, np.int64(i), np.int64(_PROJ_ROWS))
        i += _PROJ_ROWS
    if i < hi:
        for r in range(hi - i):
            for p in range(X.shape[1]):
                Xs[r, p] = X[i + r, p]
        _vproject(Xs, np.int64(0), BT, out, np.int64(i), np.int64(hi - i))


@njit(parallel=True, cache=True)
def project_into(out, X, BT):
    """``out = X @ Φᵀ`` in float32 (``BT`` from :func:`padded_projection`), the
    projection step of :func:`project_noise_into` alone."""
    n, d = X.shape
    nblocks = (n + _BLOCK - 1) // _BLOCK
    for b in prange(nblocks):
        lo = b * _BLOCK
        _project_rows(out, X, BT, lo, min(n, lo + _BLOCK), np.zeros((_PROJ_ROWS, d), dtype=np.float32))


@njit(cache=True, inline="always")
def _project_noise_block(out, X, BT, scale, key0, key1, row_offset, lo, hi):
    _project_rows(out, X, BT, lo, hi, np.zeros((_PROJ_ROWS, X.shape[1]), dtype=np.float32))
    return _noise_rows(out, out, scale, key0, key1, row_offset, lo, hi)


@njit(parallel=True, cache=True)
def project_noise_into(out, X, BT, scale, key0, key1, row_offset):
    """PrivEmb for float32 ``X`` in one pass: ``out[i] = X[i] Φᵀ + l_i u_i``.

    Per block of 256 rows: the float32 projection (:func:`_vproject`) straight into
    ``out``, then :func:`noise_into` on those rows in place while they are still in
    cache. Identical to ``project_into`` followed by ``noise_into(out, out, ...)``, and
    row-local, so the same whatever the chunking or thread count. Returns the number of
    non-finite values stored.
    """
    n = X.shape[0]
    nblocks = (n + _BLOCK - 1) // _BLOCK
    bad = 0
    for b in prange(nblocks):
        lo = b * _BLOCK
        bad += _project_noise_block(out, X, BT, scale, key0, key1, row_offset, lo, min(n, lo + _BLOCK))
    return bad


@njit(cache=True)
def project_noise_into_serial(out, X, BT, scale, key0, key1, row_offset):
    """:func:`project_noise_into` on one thread (identical output), for small chunks."""
    return _project_noise_block(out, X, BT, scale, key0, key1, row_offset, 0, X.shape[0])


@njit(parallel=True, cache=True)
def fill_normals(out, key0, key1, row_offset):
    """Row ``i`` of ``out``: the k = ``out.shape[1]`` standard normals (the direction
    before normalisation) that the row rule draws for row stream ``row_offset+i``."""
    n, k = out.shape
    for i in prange(n):
        st = np.empty(4, dtype=np.uint64)
        raw = np.empty(k, dtype=np.uint64)
        z = np.empty(k)
        _seed_row(st, key0, key1, row_offset + i)
        _row_direction(st, z, raw)
        for j in range(k):
            out[i, j] = z[j]


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
