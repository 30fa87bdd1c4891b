"""Power-of-two rescaling at the edges of the float range (issue 28, item 8)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import trustlab
from trustlab._scale import pow2_for, pow2_scale


@pytest.mark.parametrize("top", [1e-309, 2.0**-1040, 5e-324, 2.0**-1022, 1.7e308])
def test_pow2_for_never_overflows_and_scales_exactly(top):
    f = pow2_for(top)
    assert math.isfinite(f) and f > 0 and math.log2(f).is_integer()
    scaled = top * f
    assert scaled / f == top  # exact both ways
    assert scaled < 2.0 and (scaled >= 1.0 or f == 2.0**1023)
    assert pow2_scale(np.array([top, -top / 2])) == f


def _brute(W: np.ndarray) -> float:
    n = W.shape[0]
    best = -math.inf
    for labels in itertools.product(range(n), repeat=n):
        v = sum(W[i, j] for i in range(n) for j in range(i + 1, n) if labels[i] == labels[j])
        best = max(best, v)
    return best


@pytest.mark.parametrize("method", ["auto", "cpp", "qsp", "spp", "heuristic"])
def test_partition_on_subnormal_weights(method):
    base = np.array([[0, 3, -1, 2], [3, 0, 2, -4], [-1, 2, 0, 1], [2, -4, 1, 0]], dtype=np.float64)
    W = base * 1e-310  # subnormal magnitudes (the largest is 4e-310)
    res = trustlab.partition(W, method=method, time_limit=30, random_state=0)
    assert res.objective == pytest.approx(_brute(base) * 1e-310, rel=1e-9)
