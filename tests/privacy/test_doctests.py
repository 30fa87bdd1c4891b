"""The Examples sections of the privacy API run as written."""
import doctest
import importlib

import pytest

MODULES = ["trustlab.privacy.calibration", "trustlab.privacy.bounds", "trustlab.privacy.mechanisms",
           "trustlab.privacy.io", "trustlab.privacy.evaluation", "trustlab.kernels.privacy_cpu"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
