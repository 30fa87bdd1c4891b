"""Run the GPU release's noise kernels under Numba's CUDA simulator; print JSON.

Invoked by test_privacy_cuda.py in a subprocess (the simulator must be on before
numba.cuda is first imported). Reads cases ``{"n", "m", "scale", "key", "row_offset",
"dtype", "threads", "fused"}`` on stdin; writes, per case, the noise rows (P = 0) and the
non-finite count.
"""
import json
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402

from trustlab._backend import gpu_unavailable_reason  # noqa: E402

if gpu_unavailable_reason("numba-cuda") is not None:  # the caller skips on this line
    raise SystemExit("SKIP " + gpu_unavailable_reason("numba-cuda"))

from tests.kernels.cliques_cuda._warp_shim import install  # noqa: E402
from trustlab.kernels.privacy_gpu import FUSED_THREADS, _fused_kernel, _kernels  # noqa: E402

install()  # warp shuffles for the simulator, so the fused kernel's device build runs here too
cuda, k_scale, k_add = _kernels()
out = []
for c in json.load(sys.stdin):
    n, m, tpb = c["n"], c["m"], c["threads"]
    k0, k1 = c["key"]
    P = np.asarray(c.get("P", np.zeros((n, m))), dtype=np.float64)
    s = np.zeros(n)
    res = np.zeros((n, m), dtype=c["dtype"])
    bad = np.zeros(1, np.int64)
    if c.get("fused") is not None:  # the one-kernel path; "fused": "shfl" or "shared" (its two builds)
        rows = FUSED_THREADS
        _fused_kernel(c["fused"] == "shfl")[(n + rows - 1) // rows, FUSED_THREADS](
            P, np.float64(c["scale"]), np.int64(k0), np.int64(k1), np.int64(c["row_offset"]), res, bad)
        out.append({"noise": res.astype(np.float64).tolist(), "bad": int(bad[0])})
        continue
    k_scale[(n + tpb - 1) // tpb, tpb](np.int64(n), np.int64(m), np.float64(c["scale"]), np.int64(k0),
                                       np.int64(k1), np.int64(c["row_offset"]), s)
    tot = n * ((m + 1) // 2)
    k_add[(tot + tpb - 1) // tpb, tpb](P, s, np.int64(k0), np.int64(k1), np.int64(c["row_offset"]), res, bad)
    out.append({"noise": res.astype(np.float64).tolist(), "bad": int(bad[0])})
json.dump(out, sys.stdout)
