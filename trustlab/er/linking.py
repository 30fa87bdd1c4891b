"""Resolving two (or more) tables: ``link_type`` and the source column.

* ``"dedupe_only"`` — one table (or several, stacked): every pair may match;
* ``"link_only"`` — only pairs of records from *different* tables are compared, and two
  records of the same table never end in one entity (with ``method="xer"`` a pair that is
  not scored may not share a cluster, so dropping the within-table pairs is a hard
  constraint; the transitive baselines cannot give that guarantee and are refused);
* ``"link_and_dedupe"`` — pairs within and across tables.

The tables are stacked with a source column (Splink's ``source_dataset`` by default);
record ids need to be unique only within their table.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["LINK_TYPES", "stack_tables", "link_pair_mask", "is_table_collection"]

LINK_TYPES = ("dedupe_only", "link_only", "link_and_dedupe")
#: internal unique key of a stacked record: "<source>\x1f<id>"
KEY_COL = "__trustlab_key"


def is_table_collection(records: Any) -> bool:
    """True for a list/tuple/dict of tables (as opposed to one table or one path)."""
    return isinstance(records, (list, tuple, Mapping)) and not isinstance(records, (str, os.PathLike))


def _as_frame(t: Any, name: str) -> pd.DataFrame:
    from trustlab.er.records import read_records

    if isinstance(t, (str, os.PathLike)):
        return read_records(t)
    if hasattr(t, "to_pandas") and not isinstance(t, pd.DataFrame):
        t = t.to_pandas()
    if not isinstance(t, pd.DataFrame):
        hint = ""
        if isinstance(t, (list, tuple, np.ndarray, pd.Series, dict)):
            hint = ("; to pass one table as a dict of columns or a list of row dicts, make it a DataFrame first: "
                    "pd.DataFrame(...)")
        raise TypeError(
            f"table {name!r} must be a DataFrame or a path to a CSV/parquet file; got {type(t).__name__}{hint}")
    if len(t) == 0:
        raise ValueError(f"table {name!r} is empty")
    return t


def stack_tables(
    records: Any, *, id_col: str | None, source_col: str = "source_dataset", link_type: str = "link_and_dedupe",
) -> tuple[pd.DataFrame, str, str]:
    """Stack the tables of ``records`` into one frame with a source column.

    Parameters
    ----------
    records : list, tuple or dict of DataFrames / paths, or one DataFrame
        Several tables (a dict names them; a list names them by file stem or
        ``table_0``, ``table_1``…), or one table that already has ``source_col``.
    id_col : str, optional
        Id column of every table (default: ``id`` when present, else the row number).
    source_col : str
        Name of the source column (added, or read when one table is given).
    link_type : {"dedupe_only", "link_only", "link_and_dedupe"}

    Returns
    -------
    (DataFrame, id column, source column)
        The stacked records with a unique internal key column ``KEY_COL``.

    Examples
    --------
    >>> a = pd.DataFrame({"id": [1, 2], "name": ["ann", "bob"]})
    >>> b = pd.DataFrame({"id": [1, 2], "name": ["anne", "rob"]})
    >>> df, idc, src = stack_tables({"a": a, "b": b}, id_col="id")
    >>> df[src].tolist(), df[idc].tolist()
    (['a', 'a', 'b', 'b'], [1, 2, 1, 2])
    """
    if link_type not in LINK_TYPES:
        raise ValueError(f"Unknown link_type {link_type!r}. Valid choices are: {list(LINK_TYPES)}.")
    if is_table_collection(records):
        items = list(records.items()) if isinstance(records, Mapping) else [
            (Path(str(t)).name.split(".")[0] if isinstance(t, (str, os.PathLike)) else f"table_{k}", t)
            for k, t in enumerate(records)
        ]
        names = [str(k) for k, _ in items]
        if len(set(names)) != len(names):
            names = [f"{nm}_{k}" for k, nm in enumerate(names)]
        if not items:
            raise ValueError("records is an empty collection; give one or more tables")
        frames, idcs = [], []
        for nm, (_, t) in zip(names, items):
            f = _as_frame(t, nm).reset_index(drop=True)
            if source_col in f.columns:
                raise ValueError(
                    f"table {nm!r} already has a column {source_col!r}; name the source column otherwise "
                    "(source_col=..., CLI --source-col)"
                )
            if id_col is None:
                cand = [c for c in f.columns if str(c).lower() in ("id", "record_id", "unique_id", "rec_id")]
                idc = cand[0] if cand else "_row"
            else:
                idc = id_col
            if idc == "_row" and "_row" not in f.columns:
                f.insert(0, "_row", np.arange(len(f)))
            if idc not in f.columns:
                raise ValueError(
                    f"id column {idc!r} not found in table {nm!r}; it has columns {list(map(str, f.columns))}. "
                    "Pass the right one with id_col=... (CLI: --id-col)."
                )
            idcs.append(idc)
            f = f.rename(columns={idc: "__id"})
            f.insert(0, source_col, nm)
            frames.append(f)
        df = pd.concat(frames, ignore_index=True, sort=False)
        id_name = idcs[0]  # the output's id column is named after the first table's
        if id_name in df.columns:
            raise ValueError(f"id column {id_name!r} differs between tables; pass id_col=...")
        df = df.rename(columns={"__id": id_name})
    else:
        df = _as_frame(records, "records").reset_index(drop=True)
        if source_col not in df.columns:
            raise ValueError(
                f"link_type={link_type!r} with one table needs a source column {source_col!r}; the table has "
                f"columns {list(map(str, df.columns))}. Pass the tables separately or name the column with "
                "source_col=... (CLI --source-col)."
            )
        if id_col is None:
            cand = [c for c in df.columns if str(c).lower() in ("id", "record_id", "unique_id", "rec_id")]
            if cand:
                id_name = cand[0]
            else:
                id_name = "_row"
                df.insert(0, "_row", df.groupby(source_col).cumcount().to_numpy())
        else:
            id_name = id_col
        if id_name not in df.columns:
            raise ValueError(
                f"id column {id_name!r} not found; the table has columns {list(map(str, df.columns))}. "
                "Pass the right one with id_col=... (CLI: --id-col)."
            )
    if df[id_name].isna().any():
        raise ValueError(f"id column {id_name!r} has missing values; every record needs an id")
    key = df[source_col].astype(str) + "\x1f" + df[id_name].astype(str)
    dup = key.duplicated(keep=False)
    if dup.any():
        ex = df.loc[dup, [source_col, id_name]].head(3).values.tolist()
        raise ValueError(f"ids must be unique within each table; duplicated (source, id): {ex}")
    df[KEY_COL] = key
    return df, id_name, source_col


def link_pair_mask(pairs: np.ndarray, source_codes: np.ndarray, link_type: str) -> np.ndarray:
    """Which candidate pairs a ``link_type`` allows (True = keep).

    Examples
    --------
    >>> link_pair_mask(np.array([[0, 1], [0, 2]]), np.array([0, 0, 1]), "link_only").tolist()
    [False, True]
    """
    if link_type == "link_only":
        return source_codes[pairs[:, 0]] != source_codes[pairs[:, 1]]
    return np.ones(len(pairs), bool)


def source_codes(df: pd.DataFrame, source_col: str) -> np.ndarray:
    return pd.factorize(df[source_col].astype(str))[0].astype(np.int64)


def check_link_method(link_type: str, method: str) -> None:
    if link_type == "link_only" and method != "xer":
        raise ValueError(
            f"link_type='link_only' needs method='xer' (got {method!r}): only xer keeps two records of one table "
            "apart; the transitive baselines may chain them through a record of the other table"
        )


def pairs_ok(labels: np.ndarray, codes: np.ndarray) -> bool:
    """True when no entity holds two records of one source (the link-only guarantee)."""
    key = pd.DataFrame({"e": labels, "s": codes})
    return not key.duplicated().any()


class LinkInfo:
    """What :func:`trustlab.er.resolve` needs to know about stacked tables."""

    def __init__(self, df: pd.DataFrame, link_type: str, id_col: str, source_col: str):
        self.link_type = link_type
        self.id_col = id_col
        self.source_col = source_col
        self.codes = source_codes(df, source_col)

    def keep(self, pairs: np.ndarray) -> np.ndarray:
        """The pairs (rows of ``pairs``) that the link type allows."""
        return pairs[link_pair_mask(pairs, self.codes, self.link_type)] if len(pairs) else pairs


def prepare_link(records: Any, id_col: str | None, link_type: str | None, source_col: str,
                 method: str) -> tuple[Any, str | None, Any]:
    """Stack several tables when needed: returns (records, id_col, LinkInfo-maker or None)."""
    if link_type is None and not is_table_collection(records):
        return records, id_col, None
    lt = link_type or "link_and_dedupe"
    if lt not in LINK_TYPES:
        raise ValueError(f"Unknown link_type {lt!r}. Valid choices are: {list(LINK_TYPES)}.")
    if lt == "dedupe_only" and not is_table_collection(records):
        return records, id_col, None
    check_link_method(lt, method)
    df, idc, src = stack_tables(records, id_col=id_col, source_col=source_col, link_type=lt)
    return df, KEY_COL, (lambda validated: LinkInfo(validated, lt, idc, src))


def stem_names(paths: Sequence[Any]) -> list[str]:
    """Source names for files: their stems (``a.csv.gz`` -> ``a``), made unique."""
    names = [Path(str(p)).name.split(".")[0] or f"table_{k}" for k, p in enumerate(paths)]
    if len(set(names)) != len(names):
        names = [f"{nm}_{k}" for k, nm in enumerate(names)]
    return names
