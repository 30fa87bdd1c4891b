"""The GPU release's counter-based noise (trustlab.kernels.privacy_gpu).

* Philox4x32-10 against Random123's published known-answer vectors.
* The NumPy reference (the same numbers the kernels draw): radius ~ Gamma(m, scale),
  isotropic directions, rows independent of where a chunk starts.
* The kernels themselves under Numba's CUDA simulator (one subprocess), against the
  reference, whatever the launch shape and row offset.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tests import background
from trustlab.kernels import privacy_gpu as G

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("ctr,key,want", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox_known_answers(ctr, key, want):
    got = G._philox_np(*ctr, *key)
    assert tuple(int(x) for x in got) == want


def test_mulhilo_matches_python_integers():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**32, 2000, dtype=np.int64)
    b = rng.integers(0, 2**32, 2000, dtype=np.int64)
    a[:3] = [0, 2**32 - 1, 2**32 - 1]
    b[:3] = [2**32 - 1, 2**32 - 1, 1]
    hi, lo = G._mulhilo(a, b)
    for x, y, h, w in zip(a.tolist(), b.tolist(), hi.tolist(), lo.tolist()):
        assert (h, w) == ((x * y) >> 32, (x * y) & 0xFFFFFFFF)


def test_reference_noise_has_the_mechanism_distribution():
    n, m, scale = 4000, 7, 0.8
    Z = G.noise_reference(n, m, scale, G.philox_key(11, 12))
    R = np.linalg.norm(Z, axis=1)
    assert stats.kstest(R, stats.gamma(m, scale=scale).cdf).pvalue > 1e-3
    U = Z / R[:, None]  # directions: isotropic (mean ~ 0, covariance ~ I/m)
    assert np.abs(U.mean(axis=0)).max() < 4 / np.sqrt(n)
    np.testing.assert_allclose(U.T @ U / n, np.eye(m) / m, atol=0.02)


def test_reference_rows_do_not_depend_on_the_chunking():
    key = G.philox_key(3, 4)
    whole = G.noise_reference(50, 5, 1.0, key)
    parts = np.vstack([G.noise_reference(20, 5, 1.0, key, 0), G.noise_reference(30, 5, 1.0, key, 20)])
    np.testing.assert_array_equal(whole, parts)
    other = G.noise_reference(50, 5, 1.0, G.philox_key(3, 5))
    assert np.abs(np.corrcoef(whole.ravel(), other.ravel())[0, 1]) < 0.2


def _noise_cases():
    key = G.philox_key(21, 22)
    cases = [
        {"n": 5, "m": 4, "scale": 0.5, "key": key, "row_offset": 0, "dtype": "float64", "threads": 4},
        {"n": 7, "m": 5, "scale": 2.0, "key": key, "row_offset": 2**33 + 5, "dtype": "float64", "threads": 3},
        {"n": 3, "m": 1, "scale": 1.0, "key": key, "row_offset": 9, "dtype": "float32", "threads": 32},
        {"n": 2, "m": 3, "scale": 1e308, "key": key, "row_offset": 0, "dtype": "float32", "threads": 8,
         "P": [[1e38, 0, 0], [0, 0, 0]]},
    ]
    # the fused kernel (one warp per row, 128 rows per block), both builds: rows past the
    # first block, m over one column pair per lane (m = 67: 34 pairs), odd m, m = 1
    fused = [
        {"n": 5, "m": 4, "scale": 0.5, "key": key, "row_offset": 0, "dtype": "float64", "threads": 0,
         "fused": "shared"},
        {"n": 130, "m": 3, "scale": 2.0, "key": key, "row_offset": 2**33 + 5, "dtype": "float64", "threads": 0,
         "fused": "shared"},
        {"n": 3, "m": 67, "scale": 1.0, "key": key, "row_offset": 9, "dtype": "float64", "threads": 0,
         "fused": "shfl"},
        {"n": 4, "m": 1, "scale": 1.0, "key": key, "row_offset": 9, "dtype": "float32", "threads": 0,
         "fused": "shfl"},
        {"n": 2, "m": 3, "scale": 1e308, "key": key, "row_offset": 0, "dtype": "float32", "threads": 0,
         "P": [[1e38, 0, 0], [0, 0, 0]], "fused": "shared"},
    ]
    return cases + fused


def _noise_run(cases) -> background.Run:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    return background.Run([sys.executable, "-m", "tests.kernels.privacy_cuda._sim_noise"], json.dumps(cases), env,
                          str(ROOT), timeout=400)


def background_runs(selected) -> dict:
    """The simulator run of the selected test, for tests/conftest.py to start early."""
    name = "test_noise_kernels_in_simulator_equal_the_reference"
    return {name: _noise_run(_noise_cases())} if name in selected else {}


@pytest.mark.slow
def test_noise_kernels_in_simulator_equal_the_reference():
    cases = _noise_cases()
    proc = background.result("test_noise_kernels_in_simulator_equal_the_reference", _noise_run(cases))
    last = (proc.stderr.strip().splitlines() or [""])[-1]
    if proc.returncode == 1 and last.startswith("SKIP "):
        pytest.skip(last[5:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    for c, r in zip(cases[:3] + cases[4:8], res[:3] + res[4:8]):
        want = G.noise_reference(c["n"], c["m"], c["scale"], tuple(c["key"]), c["row_offset"])
        got = np.asarray(r["noise"])
        if c["dtype"] == "float32":
            want = want.astype(np.float32).astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-12 if c["dtype"] == "float64" else 1e-6, atol=0)
        assert r["bad"] == 0
    assert res[3]["bad"] >= 3 and res[8]["bad"] >= 3  # an overflowing float32 release is counted, not hidden


def test_wide_mulhilo_equals_the_halves():
    rng = np.random.default_rng(1)
    xs = rng.integers(0, 2**32, 500).tolist() + [2**32 - 1, 0]
    ys = rng.integers(0, 2**32, 500).tolist() + [2**32 - 1, 2**32 - 1]
    for a, b in zip(xs, ys):
        assert tuple(int(x) for x in G._mulhilo_wide(a, b)) == tuple(int(x) for x in G._mulhilo(a, b))
