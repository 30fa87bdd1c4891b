"""The clique kernel is compiled (or loaded from Numba's cache) in the calling thread
before the worker threads start (issue 28: SIGTERM exits within 2 s). Compiled on first use
inside a worker, a SIGTERM during that compilation waited for all of it: the main thread
halts the workers and joins them, and a compiling thread does not look at the halt flag
(26.6 s after the signal on a cold cache under load)."""
from __future__ import annotations

import threading

import networkx as nx
import numpy as np

from trustlab import cliques
from trustlab.kernels import cliques_cpu


def test_the_clique_kernel_is_first_called_in_the_calling_thread(monkeypatch):
    real = cliques_cpu.enumerate_chunk
    calls = []

    def recording(*args):
        calls.append((threading.current_thread() is threading.main_thread(), len(args[5])))
        return real(*args)

    from trustlab.kernels import _jit

    monkeypatch.setattr(cliques_cpu, "enumerate_chunk", recording)
    monkeypatch.setattr(cliques, "_n_threads", lambda: 2)
    monkeypatch.setenv("TRUSTLAB_CLIQUES_PYTHON", "0")  # the kernels, not the small-graph Python twin
    monkeypatch.setattr(_jit, "_keys", {})  # forget earlier warm-ups in this process
    rng = np.random.default_rng(0)
    edges = np.array([(u, v) for u in range(60) for v in range(u + 1, 60) if rng.random() < 0.3])
    n = cliques.count_maximal_cliques(edges)
    assert n == sum(1 for _ in nx.find_cliques(nx.Graph(edges.tolist())))
    workers = [k for main, k in calls if not main]
    assert calls[0] == (True, 0) and workers and all(k > 0 for k in workers)
