"""The shared base of the metrics' result dataclasses."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

__all__ = ["ResultMixin"]


class ResultMixin:
    """``to_dict()`` for a result dataclass: its fields, with NumPy arrays as lists (JSON-ready).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Demo(ResultMixin):
    ...     value: float
    ...     per_item: np.ndarray
    >>> Demo(0.5, np.array([1, 2])).to_dict()
    {'value': 0.5, 'per_item': [1, 2]}
    """

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)  # type: ignore[call-overload]
        for k, v in list(d.items()):
            if isinstance(v, np.ndarray):
                d[k] = v.tolist()
        return d
