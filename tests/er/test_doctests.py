"""The Examples sections of the ER modules run."""
import doctest
import importlib

import pytest

MODULES = ["trustlab.er.records", "trustlab.er.blocking", "trustlab.er.scoring", "trustlab.er.cluster",
           "trustlab.er.pipeline", "trustlab.er.interop", "trustlab.er.synthetic",
           "trustlab.er.linking", "trustlab.er.model", "trustlab.er.report",
           "trustlab.metrics.clustering", "trustlab.datasets"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0
