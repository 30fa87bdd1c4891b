"""One validation layer for every public entry point.

Kernels never validate; public functions call these helpers once, at the top, and
the messages say what was received and how to fix it (scikit-learn style).
"""
from __future__ import annotations

import numbers
from typing import Any, Iterable, Mapping

import numpy as np

__all__ = [
    "check_random_state",
    "check_interval",
    "check_option",
    "check_int",
    "check_finite_array",
    "Registry",
]


def check_random_state(random_state: Any) -> np.random.Generator:
    """Normalise ``random_state`` to a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, numpy.random.RandomState or SeedSequence
        ``None`` draws fresh entropy from the operating system (the default for
        privacy noise); an int gives a reproducible stream (for tests); a Generator
        is used as is.

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
    >>> check_interval(-1, "epsilon", low=0, func="privatize")
    Traceback (most recent call last):
    ...
    ValueError: The 'epsilon' parameter of privatize must be a float in the range (0, inf). Got -1 instead.
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
        raise TypeError(msg)
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(msg)
    if low is not None:
        if v < low or (v == low and closed not in ("left", "both")):
            raise ValueError(msg)
    if high is not None:
        if v > high or (v == high and closed not in ("right", "both")):
            raise ValueError(msg)
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
            raise TypeError(msg)
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(msg)
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
        raise ValueError(
            f"The {name!r} parameter{where} must be one of {opts}. Got {value!r} instead."
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
    try:
        A = np.array(X, dtype=dtype, copy=True) if copy else np.asarray(X, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} could not be converted to a numeric array of dtype {np.dtype(dtype).name}: {exc}. "
            "Pass a numeric array (ragged lists are not supported)."
        ) from None
    if ndim is not None and A.ndim != ndim:
        hint = " Reshape your data with X.reshape(1, -1) for a single sample." if ndim == 2 and A.ndim == 1 else ""
        raise ValueError(f"Expected a {ndim}D array for {name}, got {A.ndim}D array with shape {A.shape} instead.{hint}")
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
