"""One validation system (trustlab._validation): the imperative helpers and the declared
constraints share one implementation and one message template."""
from __future__ import annotations

import importlib
import numbers

import numpy as np
import pytest

import trustlab._validation as V
from trustlab._validation import (
    DASK_CLIENT,
    Interval,
    InvalidParameterError,
    Options,
    check_dask_client,
    check_int,
    check_interval,
    check_option,
    check_param,
    validate_params,
)


def _message(call) -> str:
    with pytest.raises(InvalidParameterError) as info:
        call()
    return str(info.value)


def _declared(constraint, value) -> str:
    @validate_params({"p": [constraint]}, name="f")
    def f(p):
        return p

    return _message(lambda: f(value))


# (imperative call, the same rule declared, a value both refuse)
CASES = [
    (lambda v: check_interval(v, "p", low=0, func="f"), Interval(numbers.Real, 0, None), -1),
    (lambda v: check_interval(v, "p", low=0, high=1, closed="right", func="f"),
     Interval(numbers.Real, 0, 1, closed="right"), 1.5),
    (lambda v: check_interval(v, "p", low=0, func="f"), Interval(numbers.Real, 0, None), float("nan")),
    (lambda v: check_interval(v, "p", low=0, func="f"), Interval(numbers.Real, 0, None), "1"),
    (lambda v: check_int(v, "p", low=1, func="f"), Interval(numbers.Integral, 1, None, closed="left"), 0),
    (lambda v: check_int(v, "p", low=1, high=9, func="f"), Interval(numbers.Integral, 1, 9, closed="both"), 2.5),
    (lambda v: check_int(v, "p", high=9, func="f"), Interval(numbers.Integral, None, 9, closed="right"), 10),
    (lambda v: check_option(v, "p", ["b", "a"], func="f"), Options(["b", "a"]), "c"),
    (lambda v: check_option(v, "p", ["b", "a"], func="f"), Options(["b", "a"]), 3),
    (lambda v: check_dask_client(v, name="p", func="f"), DASK_CLIENT, "tcp://scheduler:8786"),
    (lambda v: check_param(v, "p", [Interval(numbers.Real, 0, None)], func="f"), Interval(numbers.Real, 0, None), -2),
]


@pytest.mark.parametrize("imperative, constraint, value", CASES)
def test_both_spellings_give_one_message(imperative, constraint, value):
    imp = _message(lambda: imperative(value))
    assert imp == _declared(constraint, value)
    # the template: which parameter of which function, what it accepts, what it got
    assert imp.startswith("The 'p' parameter of f must be ")
    assert imp.endswith(f"Got {value!r} instead.")
    assert str(constraint) in imp


def test_unbounded_sides_are_shown_open():
    assert "[1, inf)" in _message(lambda: check_int(0, "p", low=1))
    assert "(-inf, 9]" in _message(lambda: check_int(10, "p", high=9))
    assert str(Interval(numbers.Real, None, None, closed="both")) == "a float in the range (-inf, inf)"


def test_imperative_helpers_keep_their_conversions():
    assert check_int(3.0, "p") == 3 and isinstance(check_int(np.int64(3), "p"), int)
    assert check_interval(1, "p", low=0) == 1.0 and isinstance(check_interval(1, "p", low=0), float)
    with pytest.raises(InvalidParameterError):
        check_int(True, "p")
    with pytest.raises(InvalidParameterError):
        check_interval(float("inf"), "p", low=0)
    with pytest.raises(InvalidParameterError):
        check_option(["a"], "p", ["a"])  # unhashable: refused, not a crash


def test_the_package_splits_by_topic_and_reexports_everything():
    for sub in ("constraints", "params", "arrays", "random_state", "deprecation", "dask_client", "memory",
                "registry"):
        importlib.import_module(f"trustlab._validation.{sub}")
    for name in V.__all__:
        assert getattr(V, name) is not None
    # tracebacks and doctests keep naming the one public address
    assert InvalidParameterError.__module__ == "trustlab._validation"
    assert V.check_random_state.__module__ == "trustlab._validation"


def test_one_memory_check(monkeypatch):
    # privacy.mechanisms had its own copy of the memory check; now every refusal goes
    # through trustlab._validation.check_memory and its one physical_memory
    import trustlab.privacy.mechanisms as mech

    assert not hasattr(mech, "_check_memory") and not hasattr(mech, "_physical_memory")
    monkeypatch.setattr(V, "physical_memory", lambda: 2**20)
    with pytest.raises(InvalidParameterError, match=r"^privatize: the 40 x 300 projection .* GiB"):
        mech.make_mechanism(300, epsilon=1, m=40, n_hint=10**9)
