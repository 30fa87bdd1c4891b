"""CuPy path for PrivEmb / M1 (imported lazily; CuPy is never imported at module load).

One chunk at a time: the projection is a cuBLAS GEMM in float64 (float32 input is
upcast on the device — TF32 is never enabled, CuPy's default), then the noise is drawn
with CuPy's Philox4x32-10 generator whose key is derived from (secret noise key, chunk
row offset), so chunks get independent streams and a fixed key reproduces the release
on the same chunking. The results equal the CPU path *in distribution* only (different
generator), not bit for bit.

Checked and timed on an H100 (``bench/gpu_device_check.py``, bench/results/gpu.md); the
project's CI has no GPU. Written to the CuPy >= 13 API.
"""
from __future__ import annotations

import numpy as np

from trustlab._backend import get_cupy

__all__ = ["to_device", "privatize_chunk", "chunk_seed"]


def chunk_seed(key0: int, key1: int, row_offset: int) -> int:
    """Per-chunk Philox key: a SeedSequence hash of (noise key, row offset)."""
    ss = np.random.SeedSequence([int(key0), int(key1), int(row_offset)])
    return int(ss.generate_state(1, dtype=np.uint64)[0])


def to_device(phi: np.ndarray):
    cp = get_cupy()
    return cp.asarray(phi, dtype=cp.float64)


def privatize_chunk(X: np.ndarray, phi_dev, scale: float, key0: int, key1: int, row_offset: int,
                    out: np.ndarray) -> int:
    """Project (if ``phi_dev`` is not None) and add radial noise to one chunk, into ``out``.

    ``X`` travels in its own dtype (float32 input: half the bytes of float64) and is
    upcast on the device; the release is rounded to ``out``'s dtype on the device and
    copied straight into ``out`` (float32 output: half the bytes back). Returns the
    number of non-finite entries of the release (counted on the device).
    """
    cp = get_cupy()
    Xd = cp.asarray(X).astype(cp.float64, copy=False)  # a fresh device array: ours to add into
    Y = Xd @ phi_dev.T if phi_dev is not None else Xd
    n, k = Y.shape
    bitgen = cp.random.Philox4x3210(seed=chunk_seed(key0, key1, row_offset))
    gen = cp.random.Generator(bitgen)
    Z = gen.standard_normal((n, k), dtype=cp.float64)
    norms = cp.sqrt(cp.sum(Z * Z, axis=1, keepdims=True))
    R = gen.standard_gamma(float(k), size=(n, 1), dtype=cp.float64) * scale  # shape = noise dimension
    Y += Z * (R / norms)
    Yo = Y.astype(out.dtype, copy=False)
    bad = int(Yo.size - int(cp.count_nonzero(cp.isfinite(Yo))))
    if out.flags.c_contiguous:
        cp.asnumpy(Yo, out=out)
    else:
        out[...] = cp.asnumpy(Yo)
    return bad
