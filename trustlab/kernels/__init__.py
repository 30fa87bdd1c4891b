"""Numba kernels: plain functions on validated contiguous arrays (no validation)."""
from trustlab.kernels._startup import defer_numpy_f2py as _defer_f2py
from trustlab.kernels._startup import preload_cython_blas as _preload

_preload()
_defer_f2py()
