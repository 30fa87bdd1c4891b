"""Numba kernels: plain functions on validated contiguous arrays (no validation)."""
from trustlab.kernels._startup import preload_cython_blas as _preload

_preload()
