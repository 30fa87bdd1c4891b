"""Heuristic clique partitioning: KwikCluster pivot + local search (Numba), iterated.

Multi-start pivoting followed by iterated local search (vertex moves, cluster merges,
random perturbations that split clusters apart). No optimality guarantee: the
returned bound is the trivial one (sum of positive allowed weights) unless an exact
method supplies a better one.
"""
from __future__ import annotations

import time

import numpy as np

from trustlab.kernels.cpp_heuristic import local_search, objective, perturb, pivot_labels


def encode_forbidden(W: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, float]:
    """Dense weights with forbidden pairs replaced by ``-big`` (see the kernel module)."""
    big = 2.0 * float(np.abs(W).sum()) + 1.0
    Wh = np.where(A, W, -big)
    np.fill_diagonal(Wh, 0.0)
    return np.ascontiguousarray(Wh, dtype=np.float64), -big / 2.0


def solve_heuristic(
    W: np.ndarray,
    A: np.ndarray,
    *,
    rng: np.random.Generator,
    deadline: float | None = None,
    n_starts: int = 8,
    n_ils: int = 100,
    init: np.ndarray | None = None,
    patience: int | None = None,
) -> tuple[np.ndarray, float]:
    """Best partition found by ``n_starts`` pivot+local-search runs and ``n_ils``
    perturbation rounds (stopping early at ``deadline``, or after ``patience`` rounds in
    a row that did not improve the best). Returns (labels, objective)."""
    n = W.shape[0]
    if n <= 1:
        return np.zeros(n, np.int64), 0.0
    Wh, forbid = encode_forbidden(W, A)
    best_lab = np.arange(n, dtype=np.int64)
    best = 0.0
    starts = []
    if init is not None:
        starts.append(np.asarray(init, np.int64))
    for s in range(max(1, n_starts)):
        order = np.arange(n) if s == 0 else rng.permutation(n)
        starts.append(pivot_labels(Wh, order.astype(np.int64), forbid))
    for lab0 in starts:
        lab = local_search(Wh, lab0, rng.permutation(n).astype(np.int64), 10 * n + 10)
        val = objective(Wh, lab)
        if val > best + 1e-12:
            best, best_lab = val, lab
        if deadline is not None and time.perf_counter() > deadline:
            break
    cur, cur_val = best_lab, best
    stale = 0
    for _ in range(n_ils):
        if deadline is not None and time.perf_counter() > deadline:
            break
        if patience is not None and stale >= patience:
            break
        frac = rng.uniform(0.02, 0.2)
        lab = perturb(cur, rng.random(n), rng.integers(0, 1 << 30, n).astype(np.int64), frac)
        lab = local_search(Wh, lab, rng.permutation(n).astype(np.int64), 10 * n + 10)
        val = objective(Wh, lab)
        if val >= cur_val - 1e-12:
            cur, cur_val = lab, val
        stale += 1
        if val > best + 1e-12:
            best, best_lab = val, lab
            stale = 0
    return best_lab, float(objective(W * A, best_lab))
