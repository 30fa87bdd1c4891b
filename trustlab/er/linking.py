"""Stage 1 of :func:`trustlab.resolve`, *read* (with :mod:`trustlab.er.records`): resolving
two (or more) tables, ``link_type`` and the source column.

* ``"dedupe_only"`` — one table (or several, stacked): every pair may match;
* ``"link_only"`` — only pairs of records from *different* tables are compared, and two
  records of the same table never end in one entity (with ``method="xer"`` a pair that is
  not scored may not share a cluster, so dropping the within-table pairs is a hard
  constraint; the transitive baselines cannot give that guarantee and are refused);
* ``"link_and_dedupe"`` — pairs within and across tables.

The tables are stacked with a source column (Splink's ``source_dataset`` by default);
record ids need to be unique only within their table. When the tables' headers differ,
their columns are paired (:func:`pair_columns`: by name, normalised name, then content;
``column_map`` gives pairs explicitly): each other table's paired columns take the first
table's names, and unpaired columns stay in the records but are not compared. The
pairing is :class:`ColumnPairing` (``Resolution.column_pairing``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["LINK_TYPES", "stack_tables", "is_table_collection", "pair_columns", "ColumnPairing",
           "normalize_column_name", "parse_column_map"]

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
    column_map: Mapping[str, str] | None = None,
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
    column_map : mapping, optional
        ``{first table's column: other table's column}`` pairs to take as given (the
        rest are paired by :func:`pair_columns`).

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
    return _stack(records, id_col=id_col, source_col=source_col, link_type=link_type, column_map=column_map)[:3]


def _stack(records: Any, *, id_col: str | None, source_col: str, link_type: str,
           column_map: Mapping[str, str] | None) -> tuple[pd.DataFrame, str, str, ColumnPairing | None]:
    pairing = None
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
        frames, pairing = _pair_frames(frames, names, source_col, column_map)
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
    return df, id_name, source_col, pairing


def _pair_frames(frames: list, names: list, source_col: str, column_map: Mapping[str, str] | None):
    """Rename each other table's paired columns to the first table's names
    (:func:`pair_columns`); unpaired columns whose name is taken get `` (TABLE)``."""
    if len(frames) < 2:
        if column_map:
            raise ValueError("column_map needs two or more tables")
        return frames, None
    excl = [source_col, "__id"]
    ref = frames[0]
    pairing = ColumnPairing(reference=names[0])
    paired_ref: set[str] = set()
    out = [ref]
    for nm, f in zip(names[1:], frames[1:]):
        pairs, _, ur = pair_columns(ref, f, column_map=column_map, exclude_left=excl, exclude_right=excl)
        rename = {p["right"]: p["left"] for p in pairs if p["right"] != p["left"]}
        taken = set(map(str, ref.columns)) | set(rename.values())
        moved = {}
        for c in ur:
            if c in taken:
                new, k = f"{c} ({nm})", 2
                while new in taken or new in set(map(str, f.columns)):
                    new, k = f"{c} ({nm} {k})", k + 1
                moved[c] = new
                taken.add(new)
        out.append(f.rename(columns={**rename, **moved}))
        pairing.pairs[nm] = pairs
        pairing.unpaired[nm] = ur
        if moved:
            pairing.renamed[nm] = moved
        paired_ref |= {p["left"] for p in pairs}
    pairing.unpaired = {names[0]: [str(c) for c in ref.columns if str(c) not in excl and str(c) not in paired_ref],
                        **pairing.unpaired}
    return out, pairing


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

    def __init__(self, df: pd.DataFrame, link_type: str, id_col: str, source_col: str,
                 pairing: ColumnPairing | None = None):
        self.link_type = link_type
        self.id_col = id_col
        self.source_col = source_col
        self.codes = source_codes(df, source_col)
        #: how the tables' columns were paired (None: one table given)
        self.pairing = pairing

    def excluded(self) -> list[str]:
        """Columns that are not compared: the id, the source and unpaired columns."""
        return [self.id_col, self.source_col] + (self.pairing.excluded() if self.pairing is not None else [])

    def keep(self, pairs: np.ndarray) -> np.ndarray:
        """The pairs (rows of ``pairs``) that the link type allows."""
        from trustlab.er.blocking import keep_links

        return keep_links(pairs, self.codes, self.link_type)


def prepare_link(records: Any, id_col: str | None, link_type: str | None, source_col: str,
                 method: str, column_map: Mapping[str, str] | None = None) -> tuple[Any, str | None, Any]:
    """Stack several tables when needed: returns (records, id_col, LinkInfo-maker or None)."""
    if column_map is not None and not is_table_collection(records):
        raise ValueError("column_map pairs the columns of two tables; give records as a list or dict of tables "
                         "(CLI: two INPUT files)")
    if link_type is None and not is_table_collection(records):
        return records, id_col, None
    lt = link_type or "link_and_dedupe"
    if lt not in LINK_TYPES:
        raise ValueError(f"Unknown link_type {lt!r}. Valid choices are: {list(LINK_TYPES)}.")
    if lt == "dedupe_only" and not is_table_collection(records):
        return records, id_col, None
    check_link_method(lt, method)
    df, idc, src, pairing = _stack(records, id_col=id_col, source_col=source_col, link_type=lt,
                                   column_map=column_map)
    return df, KEY_COL, (lambda validated: LinkInfo(validated, lt, idc, src, pairing))


def stem_names(paths: Sequence[Any]) -> list[str]:
    """Source names for files: their stems (``a.csv.gz`` -> ``a``), made unique."""
    names = [Path(str(p)).name.split(".")[0] or f"table_{k}" for k, p in enumerate(paths)]
    if len(set(names)) != len(names):
        names = [f"{nm}_{k}" for k, nm in enumerate(names)]
    return names


# ----------------------------------------------------------------------------- column pairing
_TOKEN = re.compile(r"[0-9a-z]+")
_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?")
_DATEISH = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")
#: a content/name pairing needs at least this score (see :func:`pair_columns`)
PAIR_MIN_SCORE = 0.5
_SAMPLE = 2000


def normalize_column_name(column: Any) -> str:
    """A column name reduced for pairing: the last part of a URL (after ``#`` or the last
    ``/``), lower case, letters and digits only.

    Examples
    --------
    >>> normalize_column_name("http://dbpedia.org/ontology#name"), normalize_column_name("http://x.org/property/name")
    ('name', 'name')
    >>> normalize_column_name("Release_Year"), normalize_column_name("releaseYear")
    ('releaseyear', 'releaseyear')
    """
    s = str(column).strip()
    if "#" in s and s.rsplit("#", 1)[1].strip():
        s = s.rsplit("#", 1)[1]
    elif "/" in s and s.rstrip("/").rsplit("/", 1)[-1].strip():
        s = s.rstrip("/").rsplit("/", 1)[-1]
    t = re.sub(r"[^0-9a-z]+", "", s.lower())
    return t or s.lower()


@dataclass
class _Profile:
    tokens: dict  # token -> share of the column's tokens
    kind: np.ndarray  # share numeric, date-like, with letters; mean tokens per value (/10, capped)


def _profile(s: pd.Series) -> _Profile | None:
    v = s.dropna().astype(str).str.strip()
    v = v[v != ""]
    if v.empty:
        return None
    if len(v) > _SAMPLE:  # evenly spaced: deterministic
        v = v.iloc[np.linspace(0, len(v) - 1, _SAMPLE).astype(int)]
    low = v.str.lower()
    toks = low.str.findall(_TOKEN)
    counts: dict[str, int] = {}
    for ts in toks:
        for t in ts:
            counts[t] = counts.get(t, 0) + 1
    total = sum(counts.values()) or 1
    kind = np.array([
        float(low.str.fullmatch(_NUMBER).mean()),
        float(low.str.match(_DATEISH).mean()),
        float(low.str.contains(r"[a-z]", regex=True).mean()),
        min(1.0, float(toks.map(len).mean()) / 10.0),
    ])
    return _Profile({t: c / total for t, c in counts.items()}, kind)


def _content_similarity(a: _Profile | None, b: _Profile | None, idf: Mapping[str, float]) -> tuple[float, float]:
    """(token overlap: weighted Jaccard of the two token distributions, each token
    weighted by its inverse column frequency, so a token every date column has (``01``)
    counts little; value-type similarity: 1 - mean absolute difference of the type
    shares)."""
    if a is None or b is None:
        return 0.0, 0.0
    num = den = 0.0
    for t in a.tokens.keys() | b.tokens.keys():
        pa, pb, w = a.tokens.get(t, 0.0), b.tokens.get(t, 0.0), idf.get(t, 1.0)
        num += w * min(pa, pb)
        den += w * max(pa, pb)
    return (float(num / den) if den > 0 else 0.0), float(1.0 - np.abs(a.kind - b.kind).mean())


def _token_idf(profiles: Sequence[_Profile | None]) -> dict[str, float]:
    """log(1 + columns / columns holding the token) over the profiled columns."""
    n = sum(p is not None for p in profiles)
    cnt: dict[str, int] = {}
    for p in profiles:
        if p is not None:
            for t in p.tokens:
                cnt[t] = cnt.get(t, 0) + 1
    return {t: float(np.log1p(n / c)) for t, c in cnt.items()}


def pair_columns(
    left: pd.DataFrame,
    right: pd.DataFrame,
    *,
    column_map: Mapping[str, str] | None = None,
    exclude_left: Sequence[str] = (),
    exclude_right: Sequence[str] = (),
) -> tuple[list[dict], list[str], list[str]]:
    """Pair the columns of two tables that describe the same attribute.

    In this order, each column used once: the explicit ``column_map`` (``{left column:
    right column}``); the same name; the same normalised name
    (:func:`normalize_column_name`: ``…/ontology#name`` and ``…/property/name`` are both
    ``name``); then, greedily by score, pairs whose
    ``0.5 * token overlap + 0.2 * value-type similarity + 0.3 * name similarity`` is at
    least :data:`PAIR_MIN_SCORE` with some token overlap (>= 0.05) or similar names
    (>= 0.8). Token overlap is the weighted Jaccard similarity of the two columns'
    distributions of lower-cased word tokens (a sample of up to 2,000 values each), each
    token weighted by its inverse frequency over the columns being paired; value type
    compares the shares of numbers, dates and text; name similarity is difflib's ratio
    of the normalised names. Last, a column whose token overlap with one column of the
    other table (>= 0.1, value types alike) is at least twice its overlap with every
    other candidate, and that column's with every other, is paired whatever the names.
    A heuristic: the pairing is reported, and ``column_map`` overrides it.

    Parameters
    ----------
    left, right : DataFrame
        The two tables (``right``'s columns are paired to ``left``'s).
    column_map : mapping, optional
        Pairs to take as given: ``{left column: right column}``.
    exclude_left, exclude_right : sequence of str
        Columns never paired (ids, the source column).

    Returns
    -------
    (pairs, unpaired left, unpaired right)
        ``pairs``: one dict per pair, ``{"left", "right", "how", "score"}``, ``how`` one
        of ``"given"``, ``"same name"``, ``"same normalised name"``, ``"content"``.

    Examples
    --------
    >>> a = pd.DataFrame({"id": [1, 2], "http://x.org/o#name": ["ann lee", "bob ray"], "city": ["oslo", "rome"]})
    >>> b = pd.DataFrame({"id": [1, 2], "http://y.org/p/name": ["anne lee", "bob ray"], "town": ["oslo", "rome"]})
    >>> pairs, ua, ub = pair_columns(a, b, exclude_left=["id"], exclude_right=["id"])
    >>> [(p["left"], p["right"], p["how"]) for p in pairs]
    [('http://x.org/o#name', 'http://y.org/p/name', 'same normalised name'), ('city', 'town', 'content')]
    """
    import difflib

    lcols = [str(c) for c in left.columns if str(c) not in set(map(str, exclude_left))]
    rcols = [str(c) for c in right.columns if str(c) not in set(map(str, exclude_right))]
    pairs: list[dict] = []
    used_l: set[str] = set()
    used_r: set[str] = set()

    def take(a: str, b: str, how: str, score: float) -> None:
        pairs.append({"left": a, "right": b, "how": how, "score": round(float(score), 4)})
        used_l.add(a)
        used_r.add(b)

    for a, b in (column_map or {}).items():
        a, b = str(a), str(b)
        if a not in lcols:
            raise ValueError(f"column_map names {a!r}, which is not a column of the first table (it has {lcols}); "
                             "write the mapping as {first table's column: other table's column} "
                             "(CLI --column-map 'A_COL=B_COL,...')")
        if b not in rcols:
            raise ValueError(f"column_map pairs {a!r} with {b!r}, which is not a column of the other table "
                             f"(it has {rcols})")
        if a in used_l or b in used_r:
            raise ValueError(f"column_map uses {a!r} or {b!r} twice; each column pairs with one column")
        take(a, b, "given", 1.0)
    for a in lcols:
        if a not in used_l and a in rcols and a not in used_r:
            take(a, a, "same name", 1.0)
    norm_l = {a: normalize_column_name(a) for a in lcols if a not in used_l}
    norm_r = {b: normalize_column_name(b) for b in rcols if b not in used_r}
    for a, na in norm_l.items():
        ls = [x for x, nx in norm_l.items() if nx == na]
        rs = [y for y, ny in norm_r.items() if ny == na and y not in used_r]
        if len(ls) == 1 and len(rs) == 1:
            take(a, rs[0], "same normalised name", 1.0)
    rest_l = [a for a in lcols if a not in used_l]
    rest_r = [b for b in rcols if b not in used_r]
    if rest_l and rest_r:
        pl = {a: _profile(left[a]) for a in rest_l}
        pr = {b: _profile(right[b]) for b in rest_r}
        idf = _token_idf([*pl.values(), *pr.values()])
        cands, ov = [], {}
        for a in rest_l:
            for b in rest_r:
                overlap, tsim = _content_similarity(pl[a], pr[b], idf)
                nsim = difflib.SequenceMatcher(None, normalize_column_name(a), normalize_column_name(b)).ratio()
                score = 0.5 * overlap + 0.2 * tsim + 0.3 * nsim
                ov[a, b] = (overlap, tsim, score)
                if score >= PAIR_MIN_SCORE and (overlap >= 0.05 or nsim >= 0.8):
                    cands.append((-score, rest_l.index(a), rest_r.index(b), a, b, score))
        for _, _, _, a, b, score in sorted(cands):
            if a not in used_l and b not in used_r:
                take(a, b, "content", score)
        # a clear winner on content alone: the overlap is at least twice that of every other
        # candidate of either column (same value type), whatever the names
        for a in rest_l:
            if a in used_l:
                continue
            free_r = [b for b in rest_r if b not in used_r]
            if not free_r:
                break
            b = max(free_r, key=lambda y: ov[a, y][0])
            top, tsim, score = ov[a, b]
            if top < 0.1 or tsim < 0.8:
                continue
            rivals = [ov[a, y][0] for y in free_r if y != b] + [ov[x, b][0] for x in rest_l
                                                                 if x != a and x not in used_l]
            if all(top >= 2 * r for r in rivals):
                take(a, b, "content", score)
    order = {a: k for k, a in enumerate(lcols)}
    pairs.sort(key=lambda p: order[p["left"]])
    return pairs, [a for a in lcols if a not in used_l], [b for b in rcols if b not in used_r]


@dataclass
class ColumnPairing:
    """How the columns of several tables were paired (each other table to the first).

    ``pairs``: per table, dicts ``{"left", "right", "how", "score"}`` (``left`` is the
    first table's column, ``right`` the table's own, renamed to ``left`` when stacked);
    ``unpaired``: per table, its columns that are not compared (ids and the source
    column aside); ``renamed``: per table, unpaired columns renamed because their name
    was taken by a paired column.
    """

    reference: str
    pairs: dict = field(default_factory=dict)
    unpaired: dict = field(default_factory=dict)
    renamed: dict = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        """True when some column was paired with another name or left unpaired."""
        return any(p["left"] != p["right"] for ps in self.pairs.values() for p in ps) or any(
            self.unpaired.values())

    def excluded(self) -> list[str]:
        """Columns of the stacked table that are not compared (unpaired)."""
        out = list(self.unpaired.get(self.reference, []))
        for t, cols in self.unpaired.items():
            if t != self.reference:
                out += [self.renamed.get(t, {}).get(c, c) for c in cols]
        return list(dict.fromkeys(out))

    def to_dict(self) -> dict:
        return {"reference": self.reference, "pairs": self.pairs, "unpaired": self.unpaired,
                "renamed": self.renamed}

    def describe(self) -> str:
        """One line per pair and per table's unpaired columns."""
        lines = []
        for t, ps in self.pairs.items():
            for p in ps:
                how = p["how"] + (f" {p['score']:.2f}" if p["how"] == "content" else "")
                lines.append(f"  {self.reference}.{p['left']}  <->  {t}.{p['right']}  ({how})")
        for t, cols in self.unpaired.items():
            if cols:
                lines.append(f"  {t}: not paired, not compared: {', '.join(cols)}")
        return "\n".join(lines)


def parse_column_map(text: str) -> dict[str, str]:
    """``"a_col=b_col,a2=b2"`` (CLI ``--column-map``) as a dict; quote a name that holds
    ``, = ;`` in backquotes or double quotes.

    Examples
    --------
    >>> parse_column_map("name=title, `a=b`=c")
    {'name': 'title', 'a=b': 'c'}
    """
    from trustlab.er.rules import split_outside_quotes, unquote

    out: dict[str, str] = {}
    for item in split_outside_quotes(text, ",;"):
        if not item.strip():
            continue
        parts = split_outside_quotes(item, "=")
        if len(parts) != 2 or not unquote(parts[0]) or not unquote(parts[1]):
            raise ValueError(f"--column-map entry {item.strip()!r} is not FIRST_TABLE_COLUMN=OTHER_TABLE_COLUMN "
                             "(quote a name that holds , = in backquotes, e.g. '`a=b`=c')")
        out[unquote(parts[0])] = unquote(parts[1])
    return out


def one_to_one_sources(df: pd.DataFrame, link: Any, one_to_one: bool | tuple) -> np.ndarray | None:
    """The table of every record when ``one_to_one`` is asked for (None otherwise),
    checked before any work: the records come from several tables (``link``, a
    :class:`~trustlab.er.linking.LinkInfo`) and the tables named exist."""
    if one_to_one is False:
        return None
    if link is None:
        raise ValueError("one_to_one=... needs several tables: pass records as a list or dict of tables (or one "
                         "table with link_type=... and its source column, source_col=...)")
    sources = df[link.source_col].astype(str).to_numpy(dtype=object)
    if one_to_one is not True:
        names = sorted(set(sources))
        unknown = sorted(set(one_to_one) - set(names))
        if unknown:
            raise ValueError(f"one_to_one names table(s) {unknown} that are not among the tables {names}")
    return sources
