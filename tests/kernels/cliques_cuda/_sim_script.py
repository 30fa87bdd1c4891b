"""Run the CUDA clique kernel under Numba's CUDA simulator; print JSON cliques.

Invoked by test_cliques_cuda.py in a subprocess (``python -m tests.kernels.cliques_cuda._sim_script``
from the repository root), because the simulator must be switched
on before numba.cuda is first imported in a process. Reads a JSON list of cases
``{"n", "edges", "min_size", "max_universe", "split_min", "split2_min", "thread_max", "big_degree",
"warp_ops", "max_blocks", "lean", "host_output", "chunk_bytes"}``
on stdin and writes, for each, the cliques (lists of positions) and the diagnostics dict.
"""
import json
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402

from trustlab._backend import gpu_unavailable_reason  # noqa: E402
from trustlab.kernels import cliques_cuda as cc  # noqa: E402
from trustlab.kernels.cliques_cuda import enumerate_maximal_cliques_cuda  # noqa: E402

if gpu_unavailable_reason("numba-cuda") is not None:  # the caller skips on this line
    raise SystemExit("SKIP " + gpu_unavailable_reason("numba-cuda"))

from tests.kernels.cliques_cuda._warp_shim import install  # noqa: E402
from tests.reference import edges_to_csr  # noqa: E402

install()  # warp shuffles for the simulator, so the device build (warp_ops="shfl") runs here too

to_csr = edges_to_csr
_host_arrays = cc._host_arrays


def _poisoned_host_arrays(*args):
    """The kernel's host output filled with -7 first: an element that no copy reaches shows
    (np.empty could hand back a freed output of the same bytes)."""
    ip, ix, how = _host_arrays(*args)
    ip[:] = -7
    ix[:] = -7
    return ip, ix, how


cc._host_arrays = _poisoned_host_arrays


out = []
for case in json.load(sys.stdin):
    if case.get("api_count") or case.get("api_cap"):  # count_maximal_cliques / the output cap on the GPU
        import trustlab
        from trustlab.cliques import CliqueOutputLimitError

        edges = np.asarray(case["edges"], np.int64).reshape(-1, 2)
        if case.get("api_count"):
            out.append({"count": int(trustlab.count_maximal_cliques(edges, min_size=case["min_size"],
                                                                    backend="gpu"))})
        else:
            try:
                trustlab.maximal_cliques(edges, min_size=case["min_size"], backend="gpu", max_cliques=case["api_cap"])
                out.append({"error": None})
            except CliqueOutputLimitError as exc:
                out.append({"error": str(exc)})
        continue
    if case.get("api"):  # through the public API: trustlab.maximal_cliques(backend="gpu")
        import trustlab
        import trustlab.cliques

        trustlab.cliques._GPU_HOST_OUTPUT = case.get("host_output", "touch")
        cc._CHUNK_BYTES = case.get("chunk_bytes", 8 << 20)
        res = trustlab.maximal_cliques(np.asarray(case["edges"], np.int64).reshape(-1, 2),
                                       min_size=case["min_size"], backend="gpu")
        out.append({"cliques": [[int(x) for x in c] for c in res],
                    "info": {"backend": getattr(res, "backend", None)}})
        continue
    ip, ix = to_csr(case["n"], case["edges"])
    cc._BIG_DEGREE = case.get("big_degree", 64)  # lower: more universes built by a block per vertex
    cc._CHUNK_BYTES = case.get("chunk_bytes", 8 << 20)  # lower: the threaded host outputs in many chunks
    cp, ci, info = enumerate_maximal_cliques_cuda(
        ip, ix, case["n"], case["min_size"], max_universe=case["max_universe"],
        split_min=case.get("split_min", 64), split2_min=case.get("split2_min", 48),
        max_blocks=case.get("max_blocks", 2), return_info=True,
        thread_max=case.get("thread_max", 64), warp_ops=case.get("warp_ops", "auto"), lean=case.get("lean", False),
        host_output=case.get("host_output", "touch"))
    assert cp.dtype == np.int64 and ci.dtype == np.int32 and cp[0] == 0 and cp[-1] == len(ci)
    out.append({"cliques": [ci[cp[k]:cp[k + 1]].tolist() for k in range(len(cp) - 1)],
                "info": {k: v for k, v in info.items() if not k.startswith("seconds")}})
json.dump(out, sys.stdout)
