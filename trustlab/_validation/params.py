"""Parameter checks, in two spellings over one implementation.

* Declared: :func:`validate_params` stores the constraints on a public function and
  checks them on entry (scikit-learn style); :func:`param_constraints` reads them back
  (the CLI's option types use them).
* Imperative: :func:`check_param` checks one value against constraints, and
  :func:`check_interval`, :func:`check_int` and :func:`check_option` are shorthands that
  build an :class:`~trustlab._validation.Interval` or
  :class:`~trustlab._validation.Options` and call it.

Both fail through :func:`~trustlab._validation.constraints.raise_invalid`: one message
template.
"""
from __future__ import annotations

import functools
import inspect
import numbers
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from trustlab._validation.constraints import (
    Interval,
    Options,
    make_constraint,
    raise_invalid,
)

__all__ = ["validate_params", "param_constraints", "check_param", "check_interval", "check_int",
           "check_option", "VALIDATED_FUNCTIONS"]

#: qualified public name -> the decorated function (the walking test reads this)
VALIDATED_FUNCTIONS: dict[str, Callable] = {}


def validate_params(constraints: Mapping[str, list], *, name: str | None = None):
    """Decorate a public function with declared parameter constraints.

    Each key names a parameter; its value is a list of accepted forms (any one
    suffices): :class:`Interval`, :class:`Options` (or a set of strings), a type,
    ``None``, or one of ``"array-like"``, ``"random_state"``, ``"boolean"``,
    ``"callable"``, ``"path"``, ``"mapping"``, ``"sequence"``, ``"source"``. Parameters not listed
    are not checked here (the function checks them itself). The check runs once, on
    entry, before any work; a failure raises :class:`InvalidParameterError` with one
    message template.

    Parameters
    ----------
    constraints : mapping of str to list
        Parameter name -> accepted forms (see above).
    name : str, optional
        The function's name in messages (default: its ``__name__``).

    Returns
    -------
    callable
        A decorator; the decorated function keeps its signature and docstring, and
        its compiled constraints are on ``__trustlab_params__``.

    Examples
    --------
    >>> @validate_params({"epsilon": [Interval(numbers.Real, 0, None)]})
    ... def privatize_demo(X, epsilon=1.0):
    ...     return epsilon
    >>> privatize_demo([1], epsilon=-1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'epsilon' parameter of privatize_demo must be ... Got -1 instead.
    """

    def deco(func):
        sig = inspect.signature(func)
        unknown = set(constraints) - set(sig.parameters)
        if unknown:
            raise ValueError(f"constraints for unknown parameters {sorted(unknown)} of {func.__qualname__}")
        compiled = {k: [make_constraint(c) for c in v] for k, v in constraints.items()}
        fname = name or func.__name__

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{fname}(): {exc}") from None
            for pname, value in bound.arguments.items():
                cs = compiled.get(pname)
                if cs is None:
                    continue
                if sig.parameters[pname].kind is inspect.Parameter.VAR_KEYWORD:
                    continue
                if not any(c.is_satisfied_by(value) for c in cs):
                    raise_invalid(pname, cs, value, func=fname)
            return func(*args, **kwargs)

        wrapper.__trustlab_params__ = compiled
        VALIDATED_FUNCTIONS[f"{func.__module__}.{func.__qualname__}"] = wrapper
        return wrapper

    return deco


def param_constraints(func: Callable, param: str) -> list:
    """The declared constraints of ``func``'s parameter ``param`` (for the CLI).

    Parameters
    ----------
    func : callable
        A function decorated with :func:`validate_params`.
    param : str
        One of its parameters.

    Returns
    -------
    list
        The compiled constraint objects.

    Examples
    --------
    >>> from trustlab.privacy.calibration import calibrate_m
    >>> [str(c) for c in param_constraints(calibrate_m, "beta")]
    ['a float in the range (0, 1)']
    """
    try:
        return func.__trustlab_params__[param]
    except (AttributeError, KeyError):
        raise KeyError(f"{getattr(func, '__qualname__', func)!r} declares no constraint for {param!r}") from None


def check_param(value: Any, name: str, constraints: list, *, func: str | None = None) -> Any:
    """Check one value against declared constraints with the common template.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The parameter's name in the message.
    constraints : list
        Accepted forms, as :func:`validate_params` takes them (any one suffices).
    func : str, optional
        The public function, named in the message.

    Returns
    -------
    object
        ``value`` unchanged.

    Examples
    --------
    >>> check_param(3, "runs", [Interval(numbers.Integral, 1, 1000, closed="both")], func="evaluate")
    3
    """
    cs = [make_constraint(c) for c in constraints]
    if not any(c.is_satisfied_by(value) for c in cs):
        raise_invalid(name, cs, value, func=func)
    return value


@functools.lru_cache(maxsize=1024)
def _interval(kind: type, low, high, closed: str) -> Interval:
    return Interval(kind, low, high, closed=closed)


def _cached_interval(kind: type, low, high, closed: str) -> Interval:
    try:
        return _interval(kind, low, high, closed)
    except TypeError:  # an unhashable bound (a 0-d array): build it afresh
        return Interval(kind, low, high, closed=closed)


def check_interval(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    closed: str = "neither",
    func: str | None = None,
) -> float:
    """Check that a real scalar lies in an interval and return it as float.

    Shorthand for :func:`check_param` with ``Interval(numbers.Real, low, high, closed=closed)``
    (same acceptance, same message); ``closed`` is one of ``"neither"``, ``"left"``,
    ``"right"``, ``"both"``. NaN and infinities are refused.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The parameter's name in the message.
    low, high : float, optional
        Bounds (None: unbounded).
    closed : {"neither", "left", "right", "both"}
        Which bounds are included.
    func : str, optional
        The public function, named in the message.

    Returns
    -------
    float

    Examples
    --------
    >>> check_interval(0.5, "beta", low=0, high=1)
    0.5
    >>> check_interval(-1, "epsilon", low=0, func="privatize")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'epsilon' parameter of privatize must be a float ... Got -1 instead.
    """
    c = _cached_interval(numbers.Real, low, high, closed)
    if not c.is_satisfied_by(value):
        raise_invalid(name, [c], value, func=func)
    return float(value)


def check_int(
    value: Any, name: str, *, low: int | None = None, high: int | None = None, func: str | None = None
) -> int:
    """Check an integer parameter (bounds inclusive) and return it as int.

    Shorthand for :func:`check_param` with ``Interval(numbers.Integral, low, high,
    closed="both")`` (same message), except that a float holding a whole number
    (``3.0``, e.g. from ``1e6``) is accepted as that int.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The parameter's name in the message.
    low, high : int, optional
        Inclusive bounds (None: unbounded).
    func : str, optional
        The public function, named in the message.

    Returns
    -------
    int

    Examples
    --------
    >>> check_int(3, "M", low=1)
    3
    >>> check_int(0, "M", low=1, func="partition")
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'M' parameter of partition must be an int in the range
    [1, inf). Got 0 instead.
    """
    c = _cached_interval(numbers.Integral, low, high, "both")
    v = value
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    if not c.is_satisfied_by(v):
        raise_invalid(name, [c], value, func=func)
    return int(v)


def check_option(value: Any, name: str, options: Iterable[str], *, func: str | None = None) -> str:
    """Check that ``value`` is one of ``options``; the error lists the valid names.

    Shorthand for :func:`check_param` with ``Options(options)`` (same message; the
    names are listed in the order given).

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        The parameter's name in the message.
    options : iterable of str
        The valid names.
    func : str, optional
        The public function, named in the message.

    Returns
    -------
    str
        ``value``.

    Examples
    --------
    >>> check_option("cpu", "backend", ["auto", "cpu", "gpu"])
    'cpu'
    >>> check_option("tpu", "backend", ["auto", "cpu", "gpu"], func="weat")
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'backend' parameter of weat must be one of
    ['auto', 'cpu', 'gpu']. Got 'tpu' instead.
    """
    c = Options(list(options))
    if not c.is_satisfied_by(value):
        raise_invalid(name, [c], value, func=func)
    return value
