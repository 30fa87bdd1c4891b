"""backend="gpu" dispatches to the numba.cuda kernel (run in the CUDA simulator).

The simulator must be enabled before numba.cuda is first imported, so this runs in a
subprocess; it skips (instead of failing) where numba.cuda cannot run even simulated.
The kernel's own correctness suite lives with the kernel; here we check the wiring:
labels, min_size, canonical (sorted) CSR and the result's backend tag.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = r"""
from trustlab._backend import gpu_unavailable_reason
why = gpu_unavailable_reason("numba-cuda")
if why is not None:
    raise SystemExit("SKIP " + why)
import networkx as nx
from trustlab.cliques import maximal_cliques, count_maximal_cliques
G = nx.relabel_nodes(nx.gnp_random_graph(12, 0.4, seed=3), lambda i: f"n{i}")
G.add_node("lonely")
ref = {frozenset(c) for c in nx.find_cliques(G)}
r = maximal_cliques(G, backend="gpu")
assert r.backend == "gpu", r.backend
assert r.to_sets() == ref, (r.to_sets() ^ ref)
import numpy as np
assert all(np.all(np.diff(r.indices[a:b]) > 0) for a, b in zip(r.indptr[:-1], r.indptr[1:]))
assert count_maximal_cliques(G, backend="gpu", min_size=2) == sum(len(c) >= 2 for c in ref)
print("OK")
"""


def test_gpu_backend_in_cuda_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env.pop("TRUSTLAB_BACKEND", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         timeout=300)
    last = (out.stderr.strip().splitlines() or [""])[-1]
    if out.returncode == 1 and last.startswith("SKIP "):  # no numba.cuda simulator here
        pytest.skip(last[5:])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("OK")
