"""Deprecated spellings of keywords: :func:`renamed_keyword`."""
from __future__ import annotations

import warnings
from typing import Any

from trustlab._validation.constraints import InvalidParameterError

__all__ = ["renamed_keyword"]


def renamed_keyword(func: str, new: str, new_value: Any, old: str, old_value: Any, *, stacklevel: int = 4) -> Any:
    """The value of keyword ``new``, accepting its deprecated spelling ``old``.

    ``None`` means "not given" for both. Passing only ``old`` warns with a
    :class:`DeprecationWarning` that names ``new``; passing both raises
    :class:`InvalidParameterError`. ``stacklevel`` counts from this function (the
    default 4 points at the caller of a :func:`validate_params`-decorated function
    that calls this helper in its own body).

    Parameters
    ----------
    func : str
        The public function, named in messages.
    new, old : str
        The keyword's current and deprecated names.
    new_value, old_value : object
        What the caller passed under each name (None: not given).
    stacklevel : int
        Where the warning points (see above).

    Returns
    -------
    object
        The value to use.

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
