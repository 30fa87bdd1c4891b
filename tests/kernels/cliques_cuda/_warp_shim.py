"""Warp intrinsics for Numba's CUDA simulator (test-only).

The simulator (numba 0.68) has no ``shfl_*_sync`` / ``ballot_sync``, so the warp
kernel's shuffle build (``warp_ops="shfl"``, the default on a device) could only run on
real hardware. :func:`install` adds them to the simulator's fake ``cuda`` module, built
on its block barrier: every thread of the (one-warp, 1-D) block posts its value, all
wait, each reads its source lane. Semantics follow the CUDA
programming guide for a full mask (``shfl_up_sync``: lanes below ``delta`` keep their
own value; ``ballot_sync``: bit ``j`` set when lane ``j``'s predicate holds).
"""
from __future__ import annotations

import threading

import numpy as np


def _exchange(value):
    # two buffers used in turn: a buffer is rewritten only after the barrier of the
    # exchange between, which every reader of its last use has passed (one barrier each)
    th = threading.current_thread()
    m = th._manager
    vals = m.__dict__.setdefault("_warp_vals", np.zeros((2, m._block_dim[0]), dtype=object))
    ph = th.__dict__.get("_warp_ph", 0)
    th._warp_ph = ph ^ 1
    vals[ph, th.threadIdx.x] = value
    th.syncthreads()
    return th.threadIdx.x, vals[ph].copy()


def _shfl_xor_sync(self, mask, value, lane_mask):
    t, snap = _exchange(value)
    return snap[t ^ lane_mask]


def _shfl_up_sync(self, mask, value, delta):
    t, snap = _exchange(value)
    return snap[t - delta] if t >= delta else value


def _shfl_sync(self, mask, value, src_lane):
    _, snap = _exchange(value)
    return snap[src_lane]


def _ballot_sync(self, mask, predicate):
    _, snap = _exchange(bool(predicate))
    return sum(1 << j for j, b in enumerate(snap) if b)


def install() -> None:
    """Add the four intrinsics to the simulator's fake ``cuda`` module (idempotent)."""
    from numba.cuda.simulator import kernelapi

    for name, fn in (("shfl_xor_sync", _shfl_xor_sync), ("shfl_up_sync", _shfl_up_sync),
                     ("shfl_sync", _shfl_sync), ("ballot_sync", _ballot_sync)):
        if not hasattr(kernelapi.FakeCUDAModule, name):
            setattr(kernelapi.FakeCUDAModule, name, fn)
