"""P3.3 Monte-Carlo Gaussian width and its use in calibrate_m (PrivEmb)."""
import doctest
import math

import numpy as np
import pytest

from trustlab.privacy import calibration
from trustlab.privacy.calibration import calibrate_m, gaussian_width


def test_closed_forms():
    # {x, -x} for a unit x: E|<x,g>| = sqrt(2/pi)
    x = np.zeros(5)
    x[2] = 1.0
    w = gaussian_width(np.vstack([x, -x]), n_draws=40000, random_state=1)
    assert abs(w.value - math.sqrt(2 / math.pi)) < 4 * w.stderr
    # a single point: E<x,g> = 0
    w1 = gaussian_width(x[None, :], n_draws=40000, random_state=2)
    assert abs(w1.value) < 4 * w1.stderr
    # standard basis of R^3: E max of 3 iid N(0,1) = 3/(2 sqrt(pi))
    w3 = gaussian_width(np.eye(3), n_draws=40000, random_state=3)
    assert abs(w3.value - 3 / (2 * math.sqrt(math.pi))) < 4 * w3.stderr


def test_bound_and_normalisation():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 50)) * rng.uniform(0.1, 10, (200, 1))
    w = gaussian_width(X, n_draws=500, random_state=0)
    assert 0 < w.value <= math.sqrt(2 * math.log(200))
    # scaling rows does not change the normalised width
    assert gaussian_width(3 * X, n_draws=500, random_state=0).value == pytest.approx(w.value)
    # clustered data (all rows near one direction) has a much smaller width
    c = rng.standard_normal(50)
    Xc = c + 0.05 * rng.standard_normal((200, 50))
    assert gaussian_width(Xc, n_draws=500, random_state=0).value < 0.5 * w.value
    # seeded -> reproducible; batching does not change the draws' statistics
    assert gaussian_width(X, n_draws=500, random_state=7) == gaussian_width(X, n_draws=500, random_state=7)


def test_calibrate_m_with_width():
    # the default equals width = sqrt(log2 d)
    for b in (0.93, 0.66, 0.468, 0.9):
        assert calibrate_m(300, 1e-6, b) == calibrate_m(300, 1e-6, b, width=math.sqrt(math.log2(300)))
    # paper appendix pairs: formula gives 50.1 / 99.6 / 198.0, ceil -> 51 / 100 / 199 (paper prints 50/100/200)
    assert [calibrate_m(300, 1e-6, b) for b in (0.93, 0.66, 0.468)] == [51, 100, 199]
    assert calibrate_m(300, 1e-6, 0.5, width=0.0) == math.ceil(math.log(1e6) / 0.25)
    with pytest.raises(ValueError, match="width"):
        calibrate_m(300, 1e-6, 0.5, width=-1.0)


def test_errors():
    with pytest.raises(ValueError, match="zero"):
        gaussian_width(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="2D|2-D"):
        gaussian_width(np.zeros(4))


def test_doctests():
    assert doctest.testmod(calibration).failed == 0
