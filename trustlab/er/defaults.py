"""Safe defaults of :func:`trustlab.er.resolve`: time budget, blocking, fields, row order."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = ["check_time_limit", "default_time_limit", "default_rules", "field_report", "canonical_order",
           "random_pairs", "ALL_PAIRS_MAX"]

#: up to this many records every pair is compared (no blocking)
ALL_PAIRS_MAX = 1500


def check_time_limit(time_limit: Any, *, func: str = "resolve") -> float | None:
    """None (the size-scaled default) or a positive finite number of seconds.

    Examples
    --------
    >>> check_time_limit(None), check_time_limit(5)
    (None, 5.0)
    >>> check_time_limit(0)
    Traceback (most recent call last):
    ...
    ValueError: resolve: time_limit must be a positive number of seconds (or None for the size-scaled default); got 0
    """
    if time_limit is None:
        return None
    try:
        t = float(time_limit)
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}: time_limit must be a number of seconds or None; got {type(time_limit).__name__}"
        ) from None
    if not math.isfinite(t) or t <= 0:
        raise ValueError(
            f"{func}: time_limit must be a positive number of seconds (or None for the size-scaled default); "
            f"got {time_limit!r}"
        )
    return t


def default_time_limit(n_nodes: int) -> float:
    """Seconds per component for the partition layer when the caller gives none:
    ``10 + n_nodes / 20``, capped at 120 (a 376-record component gets ~29 s). Within it
    the exact solver proves what it can; on expiry the best partition found is kept,
    with status ``"time_limit"`` and its gap."""
    return float(min(120.0, 10.0 + n_nodes / 20.0))


def default_rules(df: pd.DataFrame, fields: Sequence[Any], *, max_block_size: int = 200) -> list[str]:
    """Every pair up to :data:`ALL_PAIRS_MAX` records, else
    :func:`~trustlab.er.blocking.adaptive_blocking_rules`."""
    from trustlab.er.blocking import adaptive_blocking_rules

    if len(df) <= ALL_PAIRS_MAX:
        return ["all"]
    return adaptive_blocking_rules(df, fields, max_block_size=max_block_size)


def field_report(fields: Any, df: pd.DataFrame, *, id_col: str, exclude: Sequence[str] = ()):
    """:class:`~trustlab.er.fields.FieldInference` for ``fields`` (inferred when None,
    else the caller's spec, validated)."""
    from trustlab.er.fields import FieldChoice, FieldInference, infer_fields_report
    from trustlab.er.records import normalize_fields

    if fields is None:
        rep = infer_fields_report(df, exclude=exclude, id_col=id_col)
        if not rep.fields:
            raise ValueError(
                "could not infer any field to compare (all columns empty, constant, id- or truth-like):\n"
                + rep.describe() + "\npass fields=... (CLI: --fields col:kind,...)"
            )
        rep.id_col = id_col
        return rep
    flds = normalize_fields(fields, df, id_col=id_col, exclude=exclude)
    ch = [FieldChoice(f.column, "field", f.kind, "given by the caller") for f in flds]
    return FieldInference(fields=flds, choices=ch, id_col=id_col)


def canonical_order(df: pd.DataFrame, id_col: str) -> np.ndarray:
    """A row order that does not depend on the input order: by record id, or by a hash
    of the record's content when the id is the row number."""
    if id_col == "_row":
        h = pd.util.hash_pandas_object(df.drop(columns=["_row"]), index=False).to_numpy()
        return np.argsort(h, kind="stable")
    ids = df[id_col]
    if pd.api.types.is_numeric_dtype(ids):
        return np.argsort(ids.to_numpy(), kind="stable")
    return np.argsort(ids.astype(str).to_numpy(dtype=object).astype(str), kind="stable")


def random_pairs(n: int, rng: np.random.Generator) -> np.ndarray:
    """Random record pairs (i < j) for estimating u-probabilities."""
    n_rand = int(min(max(n * 5, 50_000), 300_000, n * (n - 1) // 2))
    ri = rng.integers(0, n, size=n_rand)
    rj = rng.integers(0, n, size=n_rand)
    ok = ri != rj
    return np.sort(np.stack([ri[ok], rj[ok]], axis=1), axis=1).astype(np.int64)
