"""The check of a Dask ``client=`` argument: :func:`check_dask_client`."""
from __future__ import annotations

from typing import Any

from trustlab._validation.constraints import raise_invalid

__all__ = ["check_dask_client", "DASK_CLIENT"]


class _DaskClient:
    """The constraint "None or an object with a callable ``submit``" (a Dask client)."""

    def is_satisfied_by(self, v: Any) -> bool:
        return v is None or callable(getattr(v, "submit", None))

    def __str__(self) -> str:
        return 'a dask.distributed.Client (an object with a .submit method), e.g. Client("tcp://scheduler:8786")'


#: usable in :func:`~trustlab._validation.validate_params` declarations too
DASK_CLIENT = _DaskClient()


def check_dask_client(client: Any, *, name: str = "client", func: str | None = None) -> Any:
    """``client`` if it is None or a Dask ``distributed.Client`` (anything with a
    callable ``submit``), else :class:`InvalidParameterError`.

    Parameters
    ----------
    client : object
        The value received.
    name : str
        The parameter's name in the message.
    func : str, optional
        The public function, named in the message.

    Returns
    -------
    object
        ``client``.

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
    if DASK_CLIENT.is_satisfied_by(client):
        return client
    raise_invalid(name, [DASK_CLIENT], client, func=func)
