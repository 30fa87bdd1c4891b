"""The conflict-wedge packing bound (kernels/packing.py, solvers/bounds.py) and its use as
the certificate of partition's heuristic and time-limited components."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from tests.bench_modules import bench_module
from tests.reference import set_partitions
from trustlab.kernels import packing as K
from trustlab.solvers import partition
from trustlab.solvers.bounds import _csr, packing_bound, packing_bound_dense


def _random_graph(seed, n_lo=2, n_hi=60, decimals=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(n_lo, n_hi))
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].size) < rng.uniform(0.05, 1.0)
    w = rng.normal(0.3, 1.5, int(keep.sum()))
    d = int(rng.integers(0, 3)) if decimals is None else decimals
    return n, iu[0][keep], iu[1][keep], np.round(w, d)  # (rounding: ties and zero weights)


def _brute(n, r, c, w):
    """Best within-cluster weight (absent pairs kept apart) and every partition's value."""
    D = np.zeros((n, n))
    E = np.zeros((n, n), bool)
    D[r, c] = D[c, r] = w
    E[r, c] = E[c, r] = True
    vals = []
    for p in set_partitions(list(range(n))):
        ok, v = True, 0.0
        for cl in p:
            for i in range(len(cl)):
                for j in range(i + 1, len(cl)):
                    ok &= bool(E[cl[i], cl[j]])
                    v += D[cl[i], cl[j]]
        if ok:
            vals.append(v)
    return max(vals)


def test_kernel_twin_and_bench_reference_agree():
    with bench_module("er_components") as erc:
        for seed in range(150):
            n, r, c, w = _random_graph(seed)
            cs = _csr(n, r, c, w)
            ref = erc.packing_bound(sp.coo_matrix((w, (r, c)), shape=(n, n)))
            kern = K.wedge_packing(*cs, r.size, 10**15)
            twin = K.wedge_packing_twin(*cs, r.size, 10**15)
            assert kern == twin, seed
            assert kern[:2] == ref and kern[3], (seed, kern, ref)  # the same bits


def test_capped_packing_is_the_same_prefix_in_kernel_and_twin():
    for seed in range(60):
        n, r, c, w = _random_graph(seed, 5, 70)
        cs = _csr(n, r, c, w)
        full = K.wedge_packing(*cs, r.size, 10**15)
        for cap in sorted({0, 7, full[2] // 3, max(0, full[2] - 1), full[2]}):
            a = K.wedge_packing(*cs, r.size, cap)
            assert a == K.wedge_packing_twin(*cs, r.size, cap), (seed, cap)
            assert a[3] == (cap >= full[2]) and a[1] <= full[1] + 1e-9
            assert a[0] == full[0]


def test_bound_is_above_every_partition_brute_force():
    tight = 0
    for seed in range(80):
        n, r, c, w = _random_graph(seed, 3, 8)
        opt = _brute(n, r, c, w)
        full = packing_bound(n, r, c, w)
        assert full["bound"] >= opt - 1e-9, (seed, full, opt)
        assert full["bound"] <= full["positive"] + 1e-12 and full["packing"] >= 0
        tight += full["bound"] <= opt + 1e-9
        for cap in (0, 3, 10):  # a capped packing is a valid, weaker bound
            b = packing_bound(n, r, c, w, max_work=cap)
            assert full["bound"] - 1e-9 <= b["bound"] and b["bound"] >= opt - 1e-9
    assert 0 < tight < 80  # neither never nor always exact: the test can tell


def test_dense_form_and_checks():
    W = np.array([[0, 2, -1], [2, 0, 1], [-1, 1, 0]], float)
    b = packing_bound_dense(W, ~np.eye(3, dtype=bool))
    assert (b["positive"], b["packing"], b["bound"]) == (3.0, 1.0, 2.0)
    A = ~np.eye(3, dtype=bool)
    A[0, 2] = A[2, 0] = False  # forbidden instead of negative: the same loss
    assert packing_bound_dense(W, A)["bound"] == 2.0
    with pytest.raises(ValueError):
        packing_bound(3, np.array([0]), np.array([0]), np.array([1.0]))
    with pytest.raises(ValueError):
        packing_bound(3, np.array([0]), np.array([3]), np.array([1.0]))
    with pytest.raises(ValueError):
        packing_bound(3, np.array([0]), np.array([1]), np.array([np.nan]))


@pytest.mark.parametrize("method", ["heuristic", "auto"])
def test_partition_bound_stays_valid_and_proofs_are_honest(method):
    """The bound partition reports (the tighter of its own and the packing bound) is never
    below the brute-force optimum, and a component is ``optimal`` only at the optimum."""
    proved = 0
    for seed in range(25):
        n, r, c, w = _random_graph(seed, 4, 9, decimals=2)
        opt = _brute(n, r, c, w)
        res = partition(list(zip(r.tolist(), c.tolist(), w.tolist())), nodes=list(range(n)), method=method,
                        random_state=seed, time_limit=30)
        assert res.bound >= opt - 1e-7, (seed, res.bound, opt)
        assert res.objective <= opt + 1e-7
        if res.status == "optimal":
            assert res.objective == pytest.approx(opt, abs=1e-7)
        for comp in res.components:
            assert comp["bound"] <= comp.get("packing_bound", np.inf) + 1e-9
            proved += comp.get("proved_by") == "packing" or comp.get("phase") == "packing"
    if method == "heuristic":
        assert proved > 0  # the packing bound proves some of them (the trivial bound alone fewer)


def test_time_limited_component_reports_the_packing_bound():
    """A component the exact solver cannot finish in its time reports at most the packing
    bound (not the trivial sum of positive weights)."""
    rng = np.random.default_rng(3)
    n = 120
    W = rng.normal(-0.2, 1.0, (n, n))
    W = np.triu(W, 1)
    W = W + W.T
    res = partition(W, method="cpp", random_state=0, time_limit=0.05)
    comp = res.components[0]
    assert "packing_bound" in comp and comp["packing_complete"]
    assert res.bound <= comp["packing_bound"] + 1e-9
    assert res.bound < np.triu(np.maximum(W, 0), 1).sum() - 1.0
    assert res.bound >= res.objective


_COLD = """
import json, numpy as np
from trustlab.solvers.bounds import packing_bound
rng = np.random.default_rng(0)
out = []
for n, p in ((30, 0.3), (400, 0.2)):  # a small graph (the Python twin) and a larger one (compiles)
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].size) < p
    b = packing_bound(n, iu[0][keep], iu[1][keep], np.round(rng.normal(0.2, 1, int(keep.sum())), 3))
    out.append([b["positive"], b["packing"], b["python"]])
print(json.dumps(out))
"""


def test_cold_cache_gives_the_same_bound(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = []
    for _ in range(2):  # cold, then warm (loaded from the cache just written)
        p = subprocess.run([sys.executable, "-c", _COLD], capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold[0][2] is True and warm[0][2] is False  # the twin only while the kernel is cold
    assert cold[1][2] is False
    assert [x[:2] for x in cold] == [x[:2] for x in warm]


_PRELOAD = """
import sys
from trustlab.solvers.api import _ComponentOptions, _preload
_preload("auto", _ComponentOptions(M=10, workers=None, mip_solver="scip", integral=False, max_cliques=1000,
                                   heuristic_iters=100, heuristic_patience=None, max_model_bytes=2**30))
print("scipy.optimize" in sys.modules)
"""


def test_warm_up_still_loads_the_exact_solver():
    """The packing bound proves partition's 3-node warm-up instance; the warm-up must still
    load the LP (before, the first component that needed it paid ~0.3 s of imports out of
    its budget: 7-node components of csv_example ended time_limit)."""
    p = subprocess.run([sys.executable, "-c", _PRELOAD], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip().splitlines()[-1] == "True"


def test_default_cap_scales_with_nodes(monkeypatch):
    import trustlab.solvers.bounds as B

    n, r, c, w = _random_graph(14, 7, 8, decimals=2)
    full = packing_bound(n, r, c, w)
    assert full["complete"] and full["work"] > 3 * n
    monkeypatch.setattr(B, "PACKING_WORK_PER_NODE", 3)
    capped = packing_bound(n, r, c, w)
    assert not capped["complete"] and capped["work"] <= 3 * n + 2 * n * n  # (stops at the first step past it)
    assert capped["bound"] >= _brute(n, r, c, w) - 1e-9 and capped["bound"] > full["bound"] + 1e-9
    monkeypatch.setattr(B, "PACKING_MAX_WORK", 0)
    assert packing_bound(n, r, c, w)["packing"] == 0.0
