"""One validation layer for every public entry point.

Kernels never validate; public functions check their parameters once, at the top, and
the messages say what was received and how to fix it (scikit-learn style). One system,
split by topic:

* :mod:`~trustlab._validation.constraints`: the constraint objects (:class:`Interval`,
  :class:`Options`, named ones) and the one message template;
* :mod:`~trustlab._validation.params`: :func:`validate_params` (declared) and its
  imperative spellings :func:`check_param`, :func:`check_interval`, :func:`check_int`,
  :func:`check_option`, built on the same objects;
* :mod:`~trustlab._validation.arrays`: :func:`check_finite_array`;
* :mod:`~trustlab._validation.random_state`: :func:`check_random_state`;
* :mod:`~trustlab._validation.deprecation`: :func:`renamed_keyword`;
* :mod:`~trustlab._validation.dask_client`: :func:`check_dask_client`;
* :mod:`~trustlab._validation.memory`: :func:`physical_memory`, :func:`check_memory`;
* :mod:`~trustlab._validation.registry`: :class:`Registry`.

Everything is importable from ``trustlab._validation`` itself.
"""
from __future__ import annotations

import numbers  # noqa: F401  (the examples of the re-exported names use it)

from trustlab._validation.arrays import check_finite_array
from trustlab._validation.constraints import (
    Interval,
    InvalidParameterError,
    Options,
    _describe,
    _is_int,
    _is_real,
    _NoneConstraint,
    _short_repr,
    _Special,
    _TypeConstraint,
    invalid_message,
    make_constraint,
    raise_invalid,
)
from trustlab._validation.dask_client import DASK_CLIENT, check_dask_client
from trustlab._validation.deprecation import renamed_keyword
from trustlab._validation.memory import check_memory, physical_memory
from trustlab._validation.params import (
    VALIDATED_FUNCTIONS,
    check_int,
    check_interval,
    check_option,
    check_param,
    param_constraints,
    validate_params,
)
from trustlab._validation.random_state import check_random_state
from trustlab._validation.registry import Registry

__all__ = [
    "InvalidParameterError",
    "Interval",
    "Options",
    "validate_params",
    "param_constraints",
    "check_param",
    "VALIDATED_FUNCTIONS",
    "check_random_state",
    "check_interval",
    "check_option",
    "check_int",
    "check_finite_array",
    "check_dask_client",
    "DASK_CLIENT",
    "renamed_keyword",
    "Registry",
    "physical_memory",
    "check_memory",
    "make_constraint",
    "invalid_message",
    "raise_invalid",
]

# private helpers some modules and tests import from here
_PRIVATE = (_describe, _is_int, _is_real, _NoneConstraint, _short_repr, _Special, _TypeConstraint)

# one public address: reprs, tracebacks and qualified names say trustlab._validation.NAME
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) or callable(_obj) and hasattr(_obj, "__code__"):
        _obj.__module__ = __name__
del _name, _obj
