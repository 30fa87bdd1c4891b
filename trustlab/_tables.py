"""Tables as they come: pandas, pyarrow and polars frames read as one pandas DataFrame.

Nothing is imported to recognise a table: a pyarrow or polars table can only exist once
its package is imported, and both are recognised by duck typing (``to_pandas()`` plus
column names), so polars need not be installed.
"""
from __future__ import annotations

import sys
from typing import Any

__all__ = ["as_pandas_table"]


def as_pandas_table(obj: Any):
    """``obj`` as a pandas DataFrame when it is a table (pandas, pyarrow ``Table`` or
    ``RecordBatch``, polars or any frame with ``to_pandas()``), else ``None``.

    Parameters
    ----------
    obj : object
        Anything; a table is converted (a pandas DataFrame is returned as is), anything
        else gives ``None``.

    Raises
    ------
    TypeError
        A table whose ``to_pandas()`` fails for a missing package (polars without pyarrow).

    Examples
    --------
    >>> import pandas as pd
    >>> as_pandas_table(pd.DataFrame({"a": [1]})).columns.tolist()
    ['a']
    >>> as_pandas_table([[0, 1]]) is None
    True
    """
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, pd.DataFrame):
        return obj
    if callable(getattr(obj, "to_pandas", None)) and (hasattr(obj, "column_names") or hasattr(obj, "columns")):
        try:
            out = obj.to_pandas()
        except ImportError as exc:  # polars without pyarrow, for one
            raise TypeError(f"could not convert the {type(obj).__name__} to pandas: {exc}") from None
        if pd is None:
            pd = sys.modules.get("pandas")
        if pd is not None and isinstance(out, pd.DataFrame):
            return out
    return None
