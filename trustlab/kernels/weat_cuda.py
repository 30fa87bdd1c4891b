"""CUDA (numba.cuda) kernel for Monte-Carlo WEAT permutations: one thread per sample.

Imported lazily, only when ``backend="gpu"`` is chosen. Each thread runs the same
``draw_subset`` routine as the CPU kernel (:func:`trustlab.kernels.weat.make_draw_subset`)
with the same counter-based SplitMix64 stream, so sample ``i`` is bit-identical on both
backends (tested under ``NUMBA_ENABLE_CUDASIM=1``). The per-thread Fisher-Yates scratch
lives in global memory (``m x n`` int32). Its speed on a GPU has not been measured.
"""
from __future__ import annotations

import numpy as np

from trustlab._backend import numba_cuda_numpy_compat

numba_cuda_numpy_compat()  # before numba.cuda's first compile (NumPy >= 2.5)

from numba import cuda  # noqa: E402

from trustlab.kernels.weat import _mix64_py, make_draw_subset  # noqa: E402

__all__ = ["sample_subset_sums_cuda"]

_mix64_dev = cuda.jit(device=True)(_mix64_py)
_draw_dev = cuda.jit(device=True)(make_draw_subset(_mix64_dev))


@cuda.jit
def _sample_kernel(s, k, seed, start, keys_lo, keys_hi, scratch, out, out_lo, out_hi):
    i = cuda.grid(1)
    if i < out.shape[0]:
        acc, klo, khi = _draw_dev(s, k, seed, start + i, scratch[i], keys_lo, keys_hi)
        out[i] = acc
        out_lo[i] = klo
        out_hi[i] = khi


def sample_subset_sums_cuda(s, k, seed, start, m, keys_lo, keys_hi, *, threads_per_block=128, max_batch=1 << 20):
    """GPU twin of :func:`trustlab.kernels.weat.sample_subset_sums` (host arrays in/out)."""
    n = s.shape[0]
    out = np.empty(m)
    out_lo = np.empty(m, dtype=np.uint64)
    out_hi = np.empty(m, dtype=np.uint64)
    d_s = cuda.to_device(np.ascontiguousarray(s, dtype=np.float64))
    d_lo = cuda.to_device(keys_lo)
    d_hi = cuda.to_device(keys_hi)
    for a in range(0, m, max_batch):
        b = min(m, a + max_batch)
        mb = b - a
        scratch = cuda.device_array((mb, n), dtype=np.int64)
        d_out = cuda.device_array(mb, dtype=np.float64)
        d_olo = cuda.device_array(mb, dtype=np.uint64)
        d_ohi = cuda.device_array(mb, dtype=np.uint64)
        blocks = (mb + threads_per_block - 1) // threads_per_block
        _sample_kernel[blocks, threads_per_block](
            d_s, np.int64(k), np.uint64(seed), np.int64(start + a), d_lo, d_hi, scratch, d_out, d_olo, d_ohi
        )
        out[a:b] = d_out.copy_to_host()
        out_lo[a:b] = d_olo.copy_to_host()
        out_hi[a:b] = d_ohi.copy_to_host()
    return out, out_lo, out_hi
