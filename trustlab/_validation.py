"""One validation layer for every public entry point.

Kernels never validate; public functions call these helpers once, at the top, and
the messages say what was received and how to fix it (scikit-learn style).
"""
from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import warnings
from typing import Any, Callable, Iterable, Mapping

import numpy as np

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
    "renamed_keyword",
    "Registry",
    "physical_memory",
    "check_memory",
]


def check_random_state(random_state: Any) -> np.random.Generator:
    """Normalise ``random_state`` to a :class:`numpy.random.Generator`: the one seed
    normaliser of trustlab.

    The policy (also in the README's Guarantees, *Randomness*): every public function
    that draws random numbers takes ``random_state`` (no ``seed=``/``rng=`` keywords),
    declares it as ``"random_state"`` in :func:`validate_params` and calls this once.
    Its default is ``None`` — always where privacy noise is drawn — except in the two
    end-to-end entry points whose answer should not change between runs,
    :func:`trustlab.resolve` and :func:`trustlab.privacy.evaluation.load_embeddings_subset`,
    which default to ``0``. ``tests/test_random_state_policy.py`` enforces this.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, numpy.random.RandomState or SeedSequence
        ``None`` draws fresh entropy from the operating system (never NumPy's global
        state); an int >= 0 gives a reproducible stream (for tests); a Generator is
        used as is (so successive calls continue its stream); a ``SeedSequence`` or
        ``BitGenerator`` seeds a new Generator; a legacy ``RandomState`` gives one
        seed drawn from it.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> g = check_random_state(0)
    >>> int(g.integers(10)) == int(check_random_state(0).integers(10))
    True
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        if int(random_state) < 0:
            raise ValueError(
                f"random_state must be a non-negative int, got {random_state!r}. "
                "Pass None for OS entropy or a seed >= 0 for reproducibility."
            )
        return np.random.default_rng(int(random_state))
    raise TypeError(
        f"random_state must be None, an int seed or a numpy Generator; got "
        f"{type(random_state).__name__} ({random_state!r})."
    )


def renamed_keyword(func: str, new: str, new_value: Any, old: str, old_value: Any, *, stacklevel: int = 4) -> Any:
    """The value of keyword ``new``, accepting its deprecated spelling ``old``.

    ``None`` means "not given" for both. Passing only ``old`` warns with a
    :class:`DeprecationWarning` that names ``new``; passing both raises
    :class:`InvalidParameterError`. ``stacklevel`` counts from this function (the
    default 4 points at the caller of a :func:`validate_params`-decorated function
    that calls this helper in its own body).

    Examples
    --------
    >>> renamed_keyword("partition", "client", "c", "scheduler", None)
    'c'
    >>> renamed_keyword("partition", "client", "c", "scheduler", "s")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: partition() got both client= and scheduler=; ... pass only client=.
    """
    if old_value is None:
        return new_value
    if new_value is not None:
        raise InvalidParameterError(
            f"{func}() got both {new}= and {old}=; {old} is the deprecated name of {new}, pass only {new}=.")
    warnings.warn(
        f"{func}(): the keyword {old}= is deprecated and will be removed in a future release; "
        f"use {new}= (same meaning).", DeprecationWarning, stacklevel=stacklevel)
    return old_value


def check_dask_client(client: Any, *, name: str = "client", func: str | None = None) -> Any:
    """``client`` if it is None or a Dask ``distributed.Client`` (anything with a
    callable ``submit``), else :class:`InvalidParameterError`.

    Examples
    --------
    >>> check_dask_client(None) is None
    True
    >>> check_dask_client("tcp://scheduler:8786", func="partition")  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'client' parameter of partition must be a ...
    Got 'tcp://scheduler:8786' instead.
    """
    if client is None or callable(getattr(client, "submit", None)):
        return client
    where = f" of {func}" if func else ""
    raise InvalidParameterError(
        f"The {name!r} parameter{where} must be a dask.distributed.Client (an object with a .submit method), "
        f"e.g. Client(\"tcp://scheduler:8786\"). Got {_short_repr(client)} instead."
    )


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine (``None`` where it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def check_memory(nbytes: int, what: str, fix: str) -> None:
    """Refuse, before allocating, a structure larger than the machine's physical memory.

    Raises :class:`InvalidParameterError` (a ``ValueError``) naming ``what`` would need
    how much and how to ``fix`` it, instead of letting the allocation fail deep inside
    (or the operating system kill the process).

    Examples
    --------
    >>> check_memory(1024, "a tiny array", "nothing to fix")
    """
    total = physical_memory()
    if total is not None and nbytes > total:
        raise InvalidParameterError(
            f"{what} would need {nbytes / 2**30:,.1f} GiB, more than this machine's "
            f"{total / 2**30:,.1f} GiB of memory; {fix}."
        )


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

    ``closed`` is one of ``"neither"``, ``"left"``, ``"right"``, ``"both"``.

    Examples
    --------
    >>> check_interval(0.5, "beta", low=0, high=1)
    0.5
    >>> check_interval(-1, "epsilon", low=0, func="privatize")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'epsilon' parameter of privatize must be a float ... Got -1 instead.
    """
    where = f" of {func}" if func else ""
    lo_b = "[" if closed in ("left", "both") else "("
    hi_b = "]" if closed in ("right", "both") else ")"
    lo_s = "-inf" if low is None else f"{low:g}"
    hi_s = "inf" if high is None else f"{high:g}"
    msg = (
        f"The {name!r} parameter{where} must be a float in the range "
        f"{lo_b}{lo_s}, {hi_s}{hi_b}. Got {value!r} instead."
    )
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise InvalidParameterError(msg)
    v = float(value)
    if not np.isfinite(v):
        raise InvalidParameterError(msg)
    if low is not None:
        if v < low or (v == low and closed not in ("left", "both")):
            raise InvalidParameterError(msg)
    if high is not None:
        if v > high or (v == high and closed not in ("right", "both")):
            raise InvalidParameterError(msg)
    return v


def check_int(
    value: Any, name: str, *, low: int | None = None, high: int | None = None, func: str | None = None
) -> int:
    """Check an integer parameter (bounds inclusive) and return it as int.

    Examples
    --------
    >>> check_int(3, "M", low=1)
    3
    """
    where = f" of {func}" if func else ""
    rng = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
    msg = f"The {name!r} parameter{where} must be an int in the range {rng}. Got {value!r} instead."
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise InvalidParameterError(msg)
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise InvalidParameterError(msg)
    return v


def check_option(value: Any, name: str, options: Iterable[str], *, func: str | None = None) -> str:
    """Check that ``value`` is one of ``options``; the error lists the valid names.

    Examples
    --------
    >>> check_option("cpu", "backend", ["auto", "cpu", "gpu"])
    'cpu'
    """
    opts = list(options)
    if not isinstance(value, str) or value not in opts:
        where = f" of {func}" if func else ""
        raise InvalidParameterError(
            f"The {name!r} parameter{where} must be one of {opts}. Got {_short_repr(value)} instead."
        )
    return value


def check_finite_array(
    X: Any,
    name: str = "X",
    *,
    ndim: int | None = 2,
    dtype: Any = np.float64,
    allow_empty: bool = False,
    copy: bool = False,
) -> np.ndarray:
    """Convert to a C-contiguous array of ``dtype`` and reject NaN/inf and bad shapes.

    Examples
    --------
    >>> check_finite_array([[1, 2], [3, 4]]).dtype
    dtype('float64')
    """
    if np.dtype(dtype).kind != "c" and getattr(getattr(X, "dtype", None), "kind", None) == "c":
        # NumPy would drop the imaginary parts with only a ComplexWarning: silent data loss
        raise ValueError(
            f"{name} has complex dtype {X.dtype}; trustlab needs real numbers. Pass the real part "
            f"({name}.real) or the magnitude (np.abs({name})) explicitly."
        )
    try:
        A = np.array(X, dtype=dtype, copy=True) if copy else np.asarray(X, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} could not be converted to a numeric array of dtype {np.dtype(dtype).name}: {exc}. "
            "Pass a numeric array (ragged lists are not supported)."
        ) from None
    if ndim is not None and A.ndim != ndim:
        hint = " Reshape your data with X.reshape(1, -1) for a single sample." if ndim == 2 and A.ndim == 1 else ""
        raise ValueError(
            f"Expected a {ndim}D array for {name}, got {A.ndim}D array with shape {A.shape} instead.{hint}"
        )
    if not allow_empty and A.size == 0:
        raise ValueError(f"{name} is empty (shape {A.shape}); at least one element is required.")
    if A.dtype.kind == "f":
        bad = ~np.isfinite(A)
        if bad.any():
            idx = np.argwhere(bad)[0]
            raise ValueError(
                f"{name} contains NaN or infinity ({int(bad.sum())} value(s); first at index "
                f"{tuple(int(i) for i in idx)}). Remove or impute them first."
            )
    return np.ascontiguousarray(A)


class Registry(Mapping):
    """A name -> object registry that rejects unknown names with the valid list.

    Examples
    --------
    >>> r = Registry("method")
    >>> @r.register("a")
    ... def f(): return 1
    >>> r["a"]()
    1
    >>> r["b"]
    Traceback (most recent call last):
    ...
    ValueError: Unknown method 'b'. Valid choices are: ['a'].
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, Any] = {}

    def register(self, name: str, obj: Any = None):
        if obj is not None:
            self._items[name] = obj
            return obj

        def deco(o):
            self._items[name] = o
            return o

        return deco

    def __getitem__(self, name: str) -> Any:
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"Unknown {self.kind} {name!r}. Valid choices are: {sorted(self._items)}."
            ) from None

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


# ---------------------------------------------------------------------------
# Declarative parameter validation (in the spirit of scikit-learn's
# ``validate_params``): constraints are stored on each public function, checked
# once on entry, and every failure uses one template naming the parameter, the
# function, what is accepted and what was received.
# ---------------------------------------------------------------------------


class InvalidParameterError(ValueError, TypeError):
    """A public function received a parameter outside its declared constraints.

    Subclasses both :class:`ValueError` and :class:`TypeError`, so callers may catch
    either; the CLI turns it into a one-line error with exit status 2.
    """


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
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"

        def fmt(b, inf):
            if b is None:
                return inf
            return f"{b:g}" if isinstance(b, float) else str(b)

        return f"{what} in the range {lb}{fmt(self.left, '-inf')}, {fmt(self.right, 'inf')}{rb}"


class Options:
    """A constraint accepting one of a fixed set of values (names, usually).

    Examples
    --------
    >>> str(Options({"cpu", "gpu", "auto"}))
    "one of ['auto', 'cpu', 'gpu']"
    """

    def __init__(self, options: Iterable[Any], *, kind: type = str):
        self.options = frozenset(options)
        self.kind = kind

    def is_satisfied_by(self, v: Any) -> bool:
        try:
            return isinstance(v, self.kind) and v in self.options
        except TypeError:  # unhashable
            return False

    def __str__(self) -> str:
        return f"one of {sorted(self.options, key=str)!r}"


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
    """Turn a constraint declaration into an object with ``is_satisfied_by``."""
    if c is None:
        return _NoneConstraint()
    if isinstance(c, (Interval, Options, _Special, _NoneConstraint, _TypeConstraint)):
        return c
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
                    raise InvalidParameterError(
                        f"The {pname!r} parameter of {fname} must be {_describe(cs)}. "
                        f"Got {_short_repr(value)} instead."
                    )
            return func(*args, **kwargs)

        wrapper.__trustlab_params__ = compiled
        VALIDATED_FUNCTIONS[f"{func.__module__}.{func.__qualname__}"] = wrapper
        return wrapper

    return deco


def param_constraints(func: Callable, param: str) -> list:
    """The declared constraints of ``func``'s parameter ``param`` (for the CLI)."""
    try:
        return func.__trustlab_params__[param]
    except (AttributeError, KeyError):
        raise KeyError(f"{getattr(func, '__qualname__', func)!r} declares no constraint for {param!r}") from None


def check_param(value: Any, name: str, constraints: list, *, func: str | None = None) -> Any:
    """Check one value against declared constraints with the common template.

    Examples
    --------
    >>> check_param(3, "runs", [Interval(numbers.Integral, 1, 1000, closed="both")], func="evaluate")
    3
    """
    cs = [make_constraint(c) for c in constraints]
    if not any(c.is_satisfied_by(value) for c in cs):
        where = f" of {func}" if func else ""
        raise InvalidParameterError(
            f"The {name!r} parameter{where} must be {_describe(cs)}. Got {_short_repr(value)} instead."
        )
    return value
