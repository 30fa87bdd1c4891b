"""Constraint objects and the one message template of trustlab's parameter checks.

Every check of a public parameter — declared with :func:`~trustlab._validation.validate_params`
or spelled imperatively with :func:`~trustlab._validation.check_interval`,
:func:`~trustlab._validation.check_int`, :func:`~trustlab._validation.check_option` or
:func:`~trustlab._validation.check_param` — tests the value against these objects and fails
through :func:`raise_invalid`, so every message reads the same: which parameter of which
function, what it accepts (how to fix it) and what it received.
"""
from __future__ import annotations

import math
import numbers
import os
from typing import Any, Iterable, Mapping, NoReturn

import numpy as np

__all__ = ["InvalidParameterError", "Interval", "Options", "make_constraint", "raise_invalid"]


class InvalidParameterError(ValueError, TypeError):
    """A public function received a parameter outside its declared constraints.

    Subclasses both :class:`ValueError` and :class:`TypeError`, so callers may catch
    either; the CLI turns it into a one-line error with exit status 2.

    Examples
    --------
    >>> issubclass(InvalidParameterError, ValueError) and issubclass(InvalidParameterError, TypeError)
    True
    """


# shown (and pickled) under the package name its callers import it from
InvalidParameterError.__module__ = "trustlab._validation"


def _is_real(v: Any) -> bool:
    return isinstance(v, (numbers.Real, np.floating, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_int(v: Any) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


class Interval:
    """A numeric interval constraint.

    Parameters
    ----------
    kind : {numbers.Integral, numbers.Real}
        ``Integral`` accepts ints only (``3.0`` is rejected: say ``3``); ``Real``
        accepts ints and floats. NaN is never accepted, and infinities only when
        ``allow_inf=True`` and the bound on that side is open-ended.
    left, right : float or None
        Bounds; ``None`` is unbounded.
    closed : {"neither", "left", "right", "both"}
        Which bounds belong to the interval (a missing bound is always open).
    allow_inf : bool
        Accept ``inf``/``-inf`` on an unbounded side.

    Examples
    --------
    >>> Interval(numbers.Real, 0, None).is_satisfied_by(0.5)
    True
    >>> str(Interval(numbers.Integral, 1, None, closed="left"))
    'an int in the range [1, inf)'
    """

    def __init__(self, kind: type, left: float | None, right: float | None, *,
                 closed: str = "neither", allow_inf: bool = False):
        if kind not in (numbers.Integral, numbers.Real):
            raise ValueError(f"Interval kind must be numbers.Integral or numbers.Real, got {kind!r}")
        if closed not in ("neither", "left", "right", "both"):
            raise ValueError(f"closed must be one of neither/left/right/both, got {closed!r}")
        self.kind, self.left, self.right, self.closed, self.allow_inf = kind, left, right, closed, allow_inf

    def is_satisfied_by(self, v: Any) -> bool:
        if self.kind is numbers.Integral:
            if not _is_int(v):
                return False
        elif not _is_real(v):
            return False
        x = float(v) if not _is_int(v) else int(v)
        if isinstance(x, float):
            if math.isnan(x):
                return False
            if math.isinf(x) and not self.allow_inf:
                return False
        if self.left is not None:
            if x < self.left or (x == self.left and self.closed not in ("left", "both")):
                return False
        if self.right is not None:
            if x > self.right or (x == self.right and self.closed not in ("right", "both")):
                return False
        return True

    def __str__(self) -> str:
        what = "an int" if self.kind is numbers.Integral else "a float"
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if self.closed in ("right", "both") and self.right is not None else ")"

        def fmt(b, inf):
            if b is None:
                return inf
            return f"{b:g}" if isinstance(b, float) else str(b)

        return f"{what} in the range {lb}{fmt(self.left, '-inf')}, {fmt(self.right, 'inf')}{rb}"


class Options:
    """A constraint accepting one of a fixed set of values (names, usually).

    The message lists the options in the order given (a list or tuple) or sorted (a set).

    Parameters
    ----------
    options : iterable
        The accepted values.
    kind : type
        The accepted values' type (``str``): ``1`` does not match an option ``"1"``.

    Examples
    --------
    >>> str(Options({"cpu", "gpu", "auto"}))
    "one of ['auto', 'cpu', 'gpu']"
    >>> str(Options(["xer", "connected_components"]))
    "one of ['xer', 'connected_components']"
    """

    def __init__(self, options: Iterable[Any], *, kind: type = str):
        if isinstance(options, (set, frozenset)):
            shown = sorted(options, key=str)
        else:
            shown = list(dict.fromkeys(options))
        self.options = frozenset(shown)
        self.shown = shown
        self.kind = kind

    def is_satisfied_by(self, v: Any) -> bool:
        try:
            return isinstance(v, self.kind) and v in self.options
        except TypeError:  # unhashable
            return False

    def __str__(self) -> str:
        return f"one of {self.shown!r}"


class _Special:
    """Named constraints: "array-like", "random_state", "boolean", "callable", "path", "mapping"."""

    DESCRIPTIONS = {
        "array-like": "an array-like (a list, tuple or array, not a string)",
        "random_state": "None, an int seed >= 0 or a numpy Generator",
        "boolean": "a bool",
        "callable": "a callable",
        "path": "a path (str or os.PathLike)",
        "mapping": "a mapping (dict)",
        "sequence": "a list or tuple",
        "source": "a path, a file object or a list of lines",
    }

    def __init__(self, name: str):
        if name not in self.DESCRIPTIONS:
            raise ValueError(f"unknown constraint {name!r}; valid: {sorted(self.DESCRIPTIONS)}")
        self.name = name

    def is_satisfied_by(self, v: Any) -> bool:
        n = self.name
        if n == "array-like":
            return hasattr(v, "__array__") or hasattr(v, "__len__") and not isinstance(v, (str, bytes, Mapping))
        if n == "random_state":
            if v is None or isinstance(v, (np.random.Generator, np.random.RandomState,
                                           np.random.SeedSequence, np.random.BitGenerator)):
                return True
            return _is_int(v) and int(v) >= 0
        if n == "boolean":
            return isinstance(v, (bool, np.bool_))
        if n == "callable":
            return callable(v)
        if n == "path":
            return isinstance(v, (str, os.PathLike)) and str(v) != ""
        if n == "mapping":
            return isinstance(v, Mapping)
        if n == "sequence":
            return isinstance(v, (list, tuple))
        if n == "source":
            return (
                (isinstance(v, (str, os.PathLike)) and str(v) != "")
                or hasattr(v, "read")
                or isinstance(v, (list, tuple))
            )
        return False  # pragma: no cover

    def __str__(self) -> str:
        return self.DESCRIPTIONS[self.name]


class _NoneConstraint:
    def is_satisfied_by(self, v: Any) -> bool:
        return v is None

    def __str__(self) -> str:
        return "None"


class _TypeConstraint:
    def __init__(self, t: type | tuple):
        self.t = t

    def is_satisfied_by(self, v: Any) -> bool:
        if self.t is bool or (isinstance(self.t, tuple) and bool in self.t):
            return isinstance(v, self.t)
        if isinstance(v, (bool, np.bool_)) and self.t in (int, float, numbers.Integral, numbers.Real):
            return False
        return isinstance(v, self.t)

    def __str__(self) -> str:
        names = self.t if isinstance(self.t, tuple) else (self.t,)
        return " or ".join(f"an instance of {getattr(t, '__name__', t)!r}" for t in names)


def make_constraint(c: Any):
    """Turn a constraint declaration into an object with ``is_satisfied_by``.

    Parameters
    ----------
    c : Interval, Options, set, type, tuple of types, None, str or constraint object
        A declaration as :func:`~trustlab._validation.validate_params` takes it: a set is
        :class:`Options`, a type an ``isinstance`` check, ``None`` the value None, a string
        a named constraint (``"array-like"``, ``"random_state"``, ...).

    Returns
    -------
    object
        An object with ``is_satisfied_by(value)`` and a ``str`` describing what it accepts.

    Examples
    --------
    >>> str(make_constraint({"b", "a"})), str(make_constraint(None))
    ("one of ['a', 'b']", 'None')
    """
    if c is None:
        return _NoneConstraint()
    if isinstance(c, (Interval, Options, _Special, _NoneConstraint, _TypeConstraint)):
        return c
    if callable(getattr(c, "is_satisfied_by", None)) and not isinstance(c, type):
        return c  # a constraint object defined elsewhere (e.g. DASK_CLIENT)
    if isinstance(c, str):
        return _Special(c)
    if isinstance(c, type) or (isinstance(c, tuple) and all(isinstance(t, type) for t in c)):
        return _TypeConstraint(c)
    if isinstance(c, (set, frozenset)):
        return Options(c)
    raise ValueError(f"unknown constraint declaration {c!r}")


def _describe(constraints: list) -> str:
    parts = [str(c) for c in constraints]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _short_repr(v: Any) -> str:
    r = repr(v)
    if len(r) > 80:
        r = r[:77] + "..."
    if isinstance(v, np.ndarray):
        r = f"an array of shape {v.shape}"
    return r


def invalid_message(name: str, constraints: list, value: Any, *, func: str | None = None) -> str:
    """The one message template: ``The 'NAME' parameter of FUNC must be WHAT. Got VALUE instead.``

    Parameters
    ----------
    name : str
        The parameter (or CLI option) checked.
    constraints : list
        Constraint objects (:func:`make_constraint`), or plain descriptions (str) of a
        rule checked by hand; the message lists what each accepts.
    value : object
        What was received (shown by its repr, shortened past 80 characters).
    func : str, optional
        The public function, named in the message.

    Returns
    -------
    str

    Examples
    --------
    >>> invalid_message("runs", [Interval(numbers.Integral, 1, None, closed="left")], 0, func="evaluate")
    "The 'runs' parameter of evaluate must be an int in the range [1, inf). Got 0 instead."
    """
    where = f" of {func}" if func else ""
    return f"The {name!r} parameter{where} must be {_describe(constraints)}. Got {_short_repr(value)} instead."


def raise_invalid(name: str, constraints: list, value: Any, *, func: str | None = None) -> NoReturn:
    """Raise :class:`InvalidParameterError` with :func:`invalid_message`.

    Parameters
    ----------
    name, constraints, value, func
        As for :func:`invalid_message`.

    Examples
    --------
    >>> raise_invalid("backend", [Options(["cpu", "gpu"])], "tpu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'backend' parameter must be one of ['cpu', 'gpu'].
    Got 'tpu' instead.
    """
    raise InvalidParameterError(invalid_message(name, constraints, value, func=func))
