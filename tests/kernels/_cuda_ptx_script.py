"""Compile every numba.cuda kernel trustlab launches to PTX for a real target (sm_90).

Invoked by ``test_cuda_compiles_for_a_device.py`` in a subprocess (``python -m
tests.kernels._cuda_ptx_script`` from the repository root, ``NUMBA_ENABLE_CUDASIM``
removed from its environment): the CUDA simulator runs kernels as Python and accepts code
that NVVM rejects (stop 42: ``cuda.local.array(2 * maxp, ...)``, a run-time size, passed
every simulator test and failed to compile on the H200), so the kernels are compiled
here by the real compiler, no device needed.

Each case is one kernel build with the argument types its launch site really passes
(Python ints are typed ``int64``, ``cuda.to_device`` / CuPy arrays ``Array(dtype, ndim,
"C")``). Prints one JSON object: ``{"skip": reason}`` where NVVM is missing, else
``{"results": {case: "ok" or the error}, "seconds": {...}}``. ``python -m
tests.kernels._cuda_ptx_script NAME...`` compiles only those cases.

Device functions are compiled through ``numba.cuda.dispatcher``'s ``compile_device``,
which asks the current device for its compute capability; without a driver that lookup is
answered with ``(9, 0)`` (the H100 / H200), the target of every compile here.
"""
from __future__ import annotations

import json
import os
import sys
import time

CC = (9, 0)

# the cases, by name: what the test parametrises over (importing this module imports no numba.cuda)
CASES = [
    "cliques.universes",
    "cliques.universes_big",
    "cliques.thread_tw1",
    "cliques.thread_tw2",
    "cliques.warp_shfl",
    "cliques.warp_shared",
    "cliques.warp_shfl_lean",
    "cliques.warp_shared_lean",
    "privacy.row_scale",
    "privacy.add_noise_P32_out32",
    "privacy.add_noise_P64_out64",
    "privacy.add_noise_P32_out64",
    "privacy.add_noise_P64_out32",
    "privacy.fused_shfl_P32_out32",
    "privacy.fused_shfl_P64_out64",
    "privacy.fused_shfl_P32_out64",
    "privacy.fused_shfl_P64_out32",
    "privacy.fused_shared_P32_out32",
    "privacy.fused_shared_P64_out64",
    "weat.sample",
]

# kernels (functions decorated ``@cuda.jit`` without ``device=True``) each case covers, by
# source name: the test checks that every kernel defined under trustlab/ is covered
KERNELS_COVERED = {
    "_universes": "cliques.universes",
    "_universes_big": "cliques.universes_big",
    "_bk_thread": "cliques.thread_tw1",
    "_bk_warp": "cliques.warp_shfl",
    "row_scale_kernel": "privacy.row_scale",
    "add_noise_kernel": "privacy.add_noise_P32_out32",
    "fused_kernel": "privacy.fused_shfl_P32_out32",
    "_sample_kernel": "weat.sample",
}


def _patch_device_lookup():
    """Without a driver, ``compile_device`` cannot ask the device for its compute
    capability: answer ``CC``. With a driver (a GPU machine) nothing is patched."""
    from numba import cuda

    try:
        has_driver = bool(cuda.is_available())
    except Exception:
        has_driver = False
    if has_driver:
        return

    class _Target:
        compute_capability = CC

    import numba.cuda.dispatcher as disp

    if hasattr(disp, "get_current_device"):
        disp.get_current_device = lambda: _Target()


def _toolkit_missing():
    """Why this machine cannot compile for a device (None: it can): NVVM and libdevice
    must load and compile a trivial kernel."""
    try:
        import math

        from numba import cuda

        def probe(a):  # pragma: no cover - compiled
            a[0] = math.sqrt(a[0])

        cuda.compile_ptx(probe, "void(float64[::1])", cc=CC)
    except Exception as exc:  # NvvmSupportError, a missing libdevice, a numba without CUDA support
        return ("the CUDA toolkit's compiler (NVVM, libdevice) is not usable here, so nothing can be compiled "
                f"for a device: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
    return None


def _builders():
    """case -> a function returning (kernel dispatcher, signature). Signatures are strings
    (``int64[::1]``: a 1-D C-contiguous array, what ``cuda.to_device`` and a contiguous
    CuPy array are typed as; ``int64``: a Python int or ``np.int64``), parsed by the
    installed numba.cuda's own type system (numba's built-in one here, numba-cuda's on
    the device)."""
    from trustlab.kernels import cliques_cuda as cc
    from trustlab.kernels import privacy_gpu as pg

    def sig(*args):
        return "void(" + ", ".join(args) + ")"

    a1, a2, a4 = "{}[::1]", "{}[:, ::1]", "{}[:, :, :, ::1]"
    i64, i32 = a1.format("int64"), a1.format("int32")
    ip, ix = i64, i32  # _as_csr: int64 indptr, int32 indices

    def universes():
        # k_small[...](d_indptr, d_indices, n, min_size, _BIG_DEGREE, d_sub, d_ksz, d_p0)
        return cc._get_universe_kernel()[0], sig(ip, ix, "int64", "int64", "int64", i32, i64, i64)

    def universes_big():
        # k_big[...](d_indptr, d_indices, to_device(hubs int64), min_size, d_keep int8, d_sub, d_ksz, d_p0)
        return cc._get_universe_kernel()[1], sig(ip, ix, i64, "int64", a1.format("int8"), i32, i64, i64)

    def thread(tw):
        # launch_t: (d_indptr, d_indices, d_sv, d_ksz, d_sub, s0, ns, obase, min_size, mode,
        #            d_cnt, d_ecnt, cbase, ebase, oip, oix)
        s = sig(ip, ix, i64, i64, i32, "int64", "int64", "int64", "int64", "int64", i64, i64, i64, i64, i64, i32)
        return lambda: (cc._get_thread_kernel(tw), s)

    def warp(shfl, lean):
        # launch_w: (d_indptr, d_indices, d_sv, d_ksz, d_sub, item_s, item_b, item_b2, adj_ws (uint32, 2-D), W,
        #            stk_ws (int64, 4-D), min_size, mode, cnt, ecnt, cbase, ebase, oip, oix, work_ctr)
        s = sig(ip, ix, i64, i64, i32, i64, i64, i64, a2.format("uint32"), "int64", a4.format("int64"), "int64",
                "int64", i64, i64, i64, i64, i64, i32, i64)
        return lambda: (cc._get_warp_kernel(shfl, lean), s)

    def row_scale():
        # k_scale[...](int64 n, int64 m, float64 scale, int64 k0, int64 k1, int64 row_offset, s float64)
        return pg._kernels()[1], sig("int64", "int64", "float64", "int64", "int64", "int64", a1.format("float64"))

    # P: the GEMM's output (the release's dtype), a float64 product (mixed dtypes) or the
    # input itself (M1): every (P, out) pair of float32 / float64 can reach the noise kernels
    def add_noise(pdt, odt):
        # k_add[...](P, s, k0, k1, row_offset, out, bad)
        s = sig(a2.format(pdt), a1.format("float64"), "int64", "int64", "int64", a2.format(odt), i64)
        return lambda: (pg._kernels()[2], s)

    def fused(shfl, pdt, odt):
        # k_f[...](P, float64 scale, int64 k0, int64 k1, int64 row_offset, out, bad)
        s = sig(a2.format(pdt), "float64", "int64", "int64", "int64", a2.format(odt), i64)
        return lambda: (pg._fused_kernel(shfl), s)

    def weat():
        from trustlab.kernels import weat_cuda as wc

        # _sample_kernel[...](d_s float64, int64 k, uint64 seed, int64 start, keys_lo uint64, keys_hi uint64,
        #                     scratch int64 2-D, d_out float64, d_olo uint64, d_ohi uint64)
        u64, f64 = a1.format("uint64"), a1.format("float64")
        return wc._sample_kernel, sig(f64, "int64", "uint64", "int64", u64, u64, a2.format("int64"), f64, u64, u64)

    f32, f64 = "float32", "float64"
    return {
        "cliques.universes": universes,
        "cliques.universes_big": universes_big,
        "cliques.thread_tw1": thread(1),
        "cliques.thread_tw2": thread(2),
        "cliques.warp_shfl": warp(True, False),
        "cliques.warp_shared": warp(False, False),
        "cliques.warp_shfl_lean": warp(True, True),
        "cliques.warp_shared_lean": warp(False, True),
        "privacy.row_scale": row_scale,
        "privacy.add_noise_P32_out32": add_noise(f32, f32),
        "privacy.add_noise_P64_out64": add_noise(f64, f64),
        "privacy.add_noise_P32_out64": add_noise(f32, f64),
        "privacy.add_noise_P64_out32": add_noise(f64, f32),
        "privacy.fused_shfl_P32_out32": fused(True, f32, f32),
        "privacy.fused_shfl_P64_out64": fused(True, f64, f64),
        "privacy.fused_shfl_P32_out64": fused(True, f32, f64),
        "privacy.fused_shfl_P64_out32": fused(True, f64, f32),
        "privacy.fused_shared_P32_out32": fused(False, f32, f32),
        "privacy.fused_shared_P64_out64": fused(False, f64, f64),
        "weat.sample": weat,
    }


def main(names):
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        print(json.dumps({"skip": "NUMBA_ENABLE_CUDASIM is set: the simulator compiles nothing"}))
        return
    why = _toolkit_missing()
    if why is not None:
        print(json.dumps({"skip": why}))
        return
    from numba import cuda

    _patch_device_lookup()
    builders = _builders()
    results, seconds = {}, {}
    for name in names or CASES:
        t0 = time.perf_counter()
        try:
            kern, sig = builders[name]()
            ptx, _ = cuda.compile_ptx(kern.py_func, sig, cc=CC)
            target = f".target sm_{CC[0]}{CC[1]}"
            results[name] = "ok" if target in ptx else f"no '{target}' in the PTX"
        except Exception as exc:  # reported per case: the test shows which kernel failed and why
            results[name] = f"{type(exc).__name__}: {exc}"[:4000]
        seconds[name] = round(time.perf_counter() - t0, 3)
    print(json.dumps({"results": results, "seconds": seconds}))


if __name__ == "__main__":
    main(sys.argv[1:])
