"""Name -> object registries that reject unknown names with the valid list."""
from __future__ import annotations

from typing import Any, Mapping

__all__ = ["Registry"]


class Registry(Mapping):
    """A name -> object registry that rejects unknown names with the valid list.

    Parameters
    ----------
    kind : str
        What the names name (``"method"``), used in the error message.

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
