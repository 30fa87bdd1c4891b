"""Stage 2 of :func:`trustlab.resolve`, *fields*: the field specs a caller gives, and field
inference that looks at every column and says why it chose what it chose.

:func:`infer_fields_report` classifies each column of a record table as an **id**
(unique per record: skipped, and used as the record id when none was given), a
**truth-like** column (``label``, ``cluster``, ``entity_id``, ``true id``…: never
compared, it would leak the answer), a **source** column (by its name, or by its values: a
few file names or site URLs), an **empty** or **constant**
column (skipped), or a compared field of one of the kinds of
:data:`trustlab.er.kinds.FIELD_KINDS`: ``date``, ``email``, ``phone``, ``postcode``,
``name``, ``address``, ``string`` (short text; ``text`` when it is the only field), ``tokens`` (long free
text),
``exact`` (categories, small integers, years), ``numeric`` (measurements) or
``latlon``. The decision uses the column name and a sample of values; it is a
heuristic, so the report lists the reason for every column and ``fields=`` overrides it.
The roles (id, truth, source, empty, constant) are decided here; then the fields are judged by
the evidence of one another (:func:`trustlab.er.relevance.judge_fields`): a column that agrees on
the pairs the other fields make likely matches no more often than on random pairs (a note, a
comment about another record), or a running counter / timestamp that shows no identity, gets
``role="noise"`` and is left out of the fields, the whole-record comparison and the blocking.
The kind of a compared
column by the kinds' own recognition hints in the registry (:class:`trustlab.er.kinds.Hint`,
tried in rank order by :func:`trustlab.er.kinds.recognise`).

Beside the columns, two comparisons of the whole record are added: ``Field("*", "record")``
(TF-IDF cosine of the words of every compared field, when at least two text-like fields are
compared: sparse rows and values in other columns still match) and ``Field("#", "codes")``
(model / part numbers found anywhere in the record, when at least a fifth of the records
carry one). They are listed last in ``fields`` and ``choices``.
"""
from __future__ import annotations

import numbers
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import pandas as pd

from trustlab._validation import Interval, validate_params
from trustlab.er.kinds import (
    CODES,
    FIELD_KINDS,
    KINDS,
    RECORD,
    ColumnProfile,
    Field,
    code_tokens,
    recognise,
    record_text,
)
from trustlab.er.rules import split_outside_quotes, unquote

__all__ = ["FieldChoice", "FieldInference", "infer_fields_report", "is_truth_like", "infer_fields", "normalize_fields",
           "parse_field_spec"]

_TRUTH_EXACT = {
    "label", "labels", "cluster", "clusters", "cluster_id", "clusterid", "entity", "entities", "entity_id",
    "entityid", "true_id", "trueid", "true id", "truth", "gold", "gold_id", "match_id", "ground_truth",
    "groundtruth", "target", "y", "class_label", "dedupe_id", "canonical_id", "golden_id", "leuven_id",
}
_TRUTH_PARTS = ("cluster", "entity", "truth", "gold", "true_", "true ")
_SOURCE = {"source", "src", "src_id", "source_id", "source_dataset", "dataset", "database", "db", "origin", "srcid"}
_ID_NAMES = re.compile(
    r"(^|[_\s\-])(id|uid|uuid|key|rec|record|recid|row)$|^(id|rid|uid|uuid|unique_id|record_id|rec_id|recid|row_id|pk)$",
    re.I,
)
_UNNAMED = re.compile(r"Unnamed: \d+(_level_\d+)?")


def is_truth_like(column: Any) -> bool:
    """True for column names that look like the answer (``label``, ``cluster_id``, ``True Id``…).

    Examples
    --------
    >>> is_truth_like("True Id"), is_truth_like("entity_id"), is_truth_like("surname")
    (True, True, False)
    """
    s = str(column).strip().lower()
    return s in _TRUTH_EXACT or s.replace(" ", "_") in _TRUTH_EXACT or any(p in s + "_" for p in _TRUTH_PARTS)


@dataclass(frozen=True)
class FieldChoice:
    """What inference decided for one column: ``role`` is ``"field"``, ``"id"``,
    ``"truth"``, ``"source"``, ``"unnamed"`` (a blank header cell), ``"empty"``,
    ``"constant"``, ``"noise"`` (no evidence of identity, see
    :func:`trustlab.er.relevance.judge_fields`) or ``"excluded"``;
    ``kind`` is the field kind for ``role="field"``."""

    column: str
    role: str
    kind: str | None
    reason: str


@dataclass
class FieldInference:
    """The chosen fields plus the decision (and reason) for every column.

    Attributes
    ----------
    fields : list of Field
        The fields chosen for comparison.
    choices : list of FieldChoice
        What was decided for every column, and why.
    id_col : str or None
        The id column, when one was recognised.

    Examples
    --------
    >>> df = pd.DataFrame({"id": [1, 2], "name": ["Ann", "Anne"], "note": ["x", "x"]})
    >>> fi = infer_fields_report(df)
    >>> [(c.column, c.role) for c in fi.choices]
    [('id', 'field'), ('name', 'field'), ('note', 'constant'), ('*', 'field')]
    """

    fields: list = field(default_factory=list)
    choices: list[FieldChoice] = field(default_factory=list)
    id_col: str | None = None

    def to_dict(self) -> dict:
        return {"fields": [{"column": f.column, "kind": f.kind} for f in self.fields],
                "choices": [asdict(c) for c in self.choices], "id_col": self.id_col}

    @classmethod
    def from_dict(cls, d: dict) -> "FieldInference":
        return cls(fields=[Field(f["column"], f["kind"]) for f in d["fields"]],
                   choices=[FieldChoice(**c) for c in d.get("choices", [])], id_col=d.get("id_col"))

    def describe(self) -> str:
        """One line per column: ``column  -> kind (reason)`` or ``skipped: reason``."""
        w = max([len(c.column) for c in self.choices] + [6])
        lines = []
        for c in self.choices:
            what = c.kind if c.role == "field" else f"skipped ({c.role})"
            lines.append(f"  {c.column:<{w}}  {what:<20} {c.reason}")
        return "\n".join(lines)

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.describe()


def _clean(s: pd.Series) -> pd.Series:
    v = s.dropna()
    if v.dtype == object or isinstance(v.dtype, pd.StringDtype):
        v = v.astype(str).str.strip()
        v = v[(v != "") & (v.str.lower() != "nan")]
    return v


#: a column of at most this many distinct values, nearly all file names or bare site URLs, names
#: the source of each record (``crawl_2012.csv``, ``http://dbpedia.org/``), whatever its header says
SOURCE_MAX_VALUES = 20
_SOURCE_VALUE = re.compile(r"\s*(?:[\w\-. ]+\.(?:csv|tsv|txt|json|jsonl|xml|xlsx?|parquet|dat)"
                           r"|https?://[^/\s]+/?)\s*", re.I)

#: records that carry a code (model number) for the codes comparison to be added
CODES_MIN_SHARE = 0.2
_AMBIGUOUS_TRUTH = {"label", "labels", "rdfs:label"}


def _label_is_text(lname: str, s: pd.Series) -> bool:
    """A column named ``label`` holding words without digits is a name (RDF's ``rdfs:label``,
    a place or product label), not a class or entity id (which nearly always carry digits)."""
    if lname not in _AMBIGUOUS_TRUTH:
        return False
    v = _clean(s).astype(str)
    if len(v) == 0:
        return False
    sample = v.sample(min(len(v), 500), random_state=0) if len(v) > 500 else v
    return bool(sample.str.fullmatch(r"[^\d]*[^\W\d_]{2}[^\d]*").mean() >= 0.9)


def _classify(c: Any, s: pd.Series, n: int, id_col: str | None) -> FieldChoice:
    name = str(c)
    lname = name.strip().lower()
    if id_col is not None and name == str(id_col):
        return FieldChoice(name, "id", None, "the record id column")
    if lname == "" or _UNNAMED.fullmatch(name.strip()):
        return FieldChoice(name, "unnamed", None, "blank header cell (e.g. a saved row index): not compared; "
                           "name the column to compare it")
    if is_truth_like(name) and not _label_is_text(lname, s):
        return FieldChoice(name, "truth", None, "name looks like a true entity / label column; never compared "
                           "(pass it as truth= to evaluate)")
    if lname in _SOURCE:
        return FieldChoice(name, "source", None, "name looks like a source/dataset column")
    v = _clean(s)
    if len(v) == 0 or (n > 1 and len(v) < max(2, 0.05 * n)):
        return FieldChoice(name, "empty", None, f"only {len(v)} of {n} values present")
    sv = v.astype(str)
    counts = sv.value_counts()  # (the hints read how the values spread: ColumnProfile.top_share)
    nun = len(counts)
    if nun <= 1 and n > 1:  # (a single record has one value per column and still has fields)
        return FieldChoice(name, "constant", None, "a single distinct value")
    sample = sv.sample(min(len(sv), 500), random_state=0) if len(sv) > 500 else sv
    if nun <= SOURCE_MAX_VALUES and nun <= 0.05 * len(v) and sample.str.fullmatch(_SOURCE_VALUE).mean() >= 0.9:
        return FieldChoice(name, "source", None, f"values name a few sources ({nun} file names / site URLs)")
    p = ColumnProfile(name, sample, len(v), nun, counts)
    uniq_share = p.uniq_share
    idname = bool(_ID_NAMES.search(lname))
    fieldname = any(k in lname for k in ("zip", "post", "phone", "tel", "fax", "mail", "date", "dob", "birth",
                                         "name", "address", "street", "title", "ssn", "soc_sec"))
    if (
        uniq_share == 1.0
        and (idname or not fieldname)
        and len(v) == n
        and n > 20
        and (idname or sample.str.fullmatch(r"[\w\-\.:]+").mean() > 0.99 and sample.str.contains(r"\d").mean() > 0.99)
        and (idname or p.date_share < 0.9)  # unique dates (timestamps) are dates, not ids
    ):
        return FieldChoice(name, "id", None, "unique per record and id-like: a record id, not evidence")
    kind, reason = recognise(p)  # the kinds' own hints (trustlab.er.kinds), in rank order
    return FieldChoice(name, "field", kind, reason)


@validate_params({"df": [pd.DataFrame], "exclude": ["array-like"], "id_col": [str, None]})
def infer_fields_report(
    df: pd.DataFrame,
    *,
    exclude: Sequence[str] = (),
    id_col: str | None = None,
    sources: Any = None,
    judge: bool = True,
) -> FieldInference:
    """Decide, for every column, whether and how to compare it; with the reasons.

    Parameters
    ----------
    df : DataFrame
        The records.
    exclude : sequence of str
        Columns never compared (e.g. the truth column given to ``resolve``).
    id_col : str, optional
        The record id column (reported as the id). When None, a unique id-like column
        is reported as ``role="id"`` and the first one becomes ``FieldInference.id_col``.
    sources : array-like of int, optional
        The table of every row when stacked tables are linked to each other
        (``link_only``): the evidence test pairs records across the tables.
    judge : bool
        Judge the inferred fields by the evidence of the others
        (:func:`trustlab.er.relevance.judge_fields`): a field that agrees on pairs the other
        fields make likely matches no more often than on random pairs, or a running counter /
        timestamp that shows no identity, is reported as ``role="noise"`` and not compared
        (a heuristic; ``fields=`` overrides it).

    Returns
    -------
    FieldInference
        ``fields`` (list of :class:`~trustlab.er.kinds.Field`), ``choices`` (one
        :class:`FieldChoice` per column) and ``id_col``.

    Examples
    --------
    >>> df = pd.DataFrame({"rid": [f"r{i}" for i in range(30)], "surname": ["smith", "smyth"] * 15,
    ...                    "dob": ["19800101", "19800110"] * 15, "label": [0, 1] * 15})
    >>> rep = infer_fields_report(df)
    >>> [(f.column, f.kind) for f in rep.fields], rep.id_col
    ([('surname', 'name'), ('dob', 'date'), ('*', 'record'), ('#', 'codes')], 'rid')
    >>> [c.role for c in rep.choices]
    ['id', 'field', 'field', 'truth', 'field', 'field']
    """
    n = len(df)
    ex = {str(e) for e in exclude}
    choices: list[FieldChoice] = []
    found_id = id_col
    for c in df.columns:
        if str(c) in ex and str(c) != str(id_col):
            choices.append(FieldChoice(str(c), "excluded", None, "excluded by the caller (truth/labels/source)"))
            continue
        ch = _classify(c, df[c], n, id_col)
        if ch.role == "id" and found_id is None:
            found_id = ch.column
        choices.append(ch)
    # a two-column kind (latlon): a field named like its first column and one named like its
    # second are one field of that kind (the names are the kind's ``column_names``); a second
    # column without a first stays a field of its own kind (a lone longitude is a number)
    joined: dict[int, tuple[str, FieldChoice]] = {}
    second_cols: set[int] = set()
    for k in KINDS.values():
        if k.arity != 2 or not k.column_names:
            continue
        first, second = (next((c for c in choices if c.role == "field" and c.column.lower() in names), None)
                         for names in k.column_names)
        if first is not None and second is not None:
            second_cols.add(id(second))
            joined[id(first)] = (k.name, second)
    fields = []
    for c in choices:
        if c.role != "field" or id(c) in second_cols:
            continue
        if id(c) in joined:
            kind, second = joined[id(c)]
            fields.append(Field(f"{c.column},{second.column}", kind))
        else:
            fields.append(Field(c.column, c.kind))
    if judge and len(fields) >= 2:
        fields = _drop_noise(df, fields, choices, sources)
    # one text field and nothing else to say which of its words matter: a short ``string`` is
    # compared by its character 3-gram TF-IDF (kind ``text``), the one comparison that weighs a
    # word by how many records hold it (with two text fields or more, the whole-record TF-IDF
    # comparison below does that beside them)
    if sum(KINDS[f.kind].text for f in fields) == 1 and len(fields) == 1 and fields[0].kind == "string":
        fields[0] = Field(fields[0].column, "text")
        for k, c in enumerate(choices):
            if c.role == "field" and c.column == fields[0].column:
                choices[k] = FieldChoice(c.column, "field", "text", f"{c.reason}; the only field: character "
                                         "3-gram TF-IDF (rare words and typos weigh as such)")
    # the whole record, compared beside the fields: sparse rows, values in other columns
    if sum(KINDS[f.kind].text for f in fields) >= 2:
        fields.append(Field(RECORD, "record"))
        choices.append(FieldChoice(RECORD, "field", "record", "the whole record: TF-IDF cosine of the words of "
                                   "every compared field"))
    # model / part numbers anywhere in the record, when a good share of records has one
    if fields and len(df):
        sample = df.sample(min(len(df), 2000), random_state=0) if len(df) > 2000 else df
        with_code = code_tokens(record_text(sample.reset_index(drop=True), fields)).index.nunique()
        if with_code >= CODES_MIN_SHARE * len(sample):
            fields.append(Field(CODES, "codes"))
            choices.append(FieldChoice(CODES, "field", "codes", f"codes (model / part numbers) in "
                                       f"{with_code / len(sample):.0%} of records: shared or different"))
    return FieldInference(fields=fields, choices=choices, id_col=found_id)


def _drop_noise(df: pd.DataFrame, fields: list, choices: list, sources: Any) -> list:
    """The fields without those the evidence test calls noise (their choices say why)."""
    from trustlab.er.relevance import judge_fields

    ev = judge_fields(df, fields, sources=sources)
    drop = {c for c, e in ev.items() if e.verdict in ("noise", "suspect")}
    if not drop or len(drop) >= len(fields):
        return fields
    for k, c in enumerate(choices):
        e = ev.get(c.column)
        if c.role == "field" and e is not None and c.column in drop:
            choices[k] = FieldChoice(c.column, "noise", c.kind, e.reason())
    return [f for f in fields if f.column not in drop]


# ----------------------------------------------------------------------------- fields given by the caller
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

    Parameters
    ----------
    df : pandas.DataFrame
        The records.
    exclude : sequence of str
        Columns never compared (e.g. the id and truth columns).
    max_fields : int, optional
        Keep only the first so many fields.

    Examples
    --------
    >>> df = pd.DataFrame({"id": [1, 2], "name": ["Ann", "Anne"], "phone": ["555-1234", "5551234"]})
    >>> [(f.column, f.kind) for f in infer_fields(df, exclude=["id"])]
    [('name', 'name'), ('phone', 'phone'), ('*', 'record'), ('#', 'codes')]
    """
    out = infer_fields_report(df, exclude=exclude).fields
    if max_fields is not None:
        out = out[:max_fields]
    if not out:
        raise ValueError(
            "could not infer any field to compare (all columns empty, constant, id- or truth-like); "
            "pass fields=... (CLI: --fields col:kind,...)"
        )
    return out


def parse_field_spec(text: str, columns: Sequence[str] | None = None) -> list[Field]:
    """Read a field spec string (CLI ``--fields``): ``col:kind`` entries separated by
    ``,`` (or by ``;`` when the string has one outside quotes); ``kind`` defaults to
    ``string``; a ``latlon`` field names two columns joined by ``+``.

    Any column name works: quote a name that holds ``, ; : +`` in backquotes or double
    quotes (``"`http://x.org/ontology#name`:name"``). With ``columns`` (the records'
    column names), an unquoted entry that is itself a column name (``http://x#name``),
    or whose text before its last ``:`` is (followed by a kind), is read as that column.

    Examples
    --------
    >>> [(f.column, f.kind) for f in parse_field_spec("name:name,zip:exact")]
    [('name', 'name'), ('zip', 'exact')]
    >>> [(f.column, f.kind) for f in parse_field_spec('`a:b,c`:name;lat+lon:latlon')]
    [('a:b,c', 'name'), ('lat,lon', 'latlon')]
    >>> [(f.column, f.kind) for f in parse_field_spec("http://x.org/o#name", columns=["http://x.org/o#name"])]
    [('http://x.org/o#name', 'string')]
    """
    known = set(columns) if columns is not None else set()
    parts = split_outside_quotes(text, ";")
    if len(parts) == 1:
        parts = split_outside_quotes(text, ",")
    out: list[Field] = []
    for item in parts:
        if not item.strip():
            continue
        if unquote(item) in known and item.strip()[:1] not in "`\"":
            out.append(Field(unquote(item), "string"))
            continue
        pieces = split_outside_quotes(item, ":")
        if len(pieces) == 1:
            col, kind = item, "string"
        else:
            col, kind = ":".join(pieces[:-1]), pieces[-1].strip()
            if kind not in FIELD_KINDS and unquote(item) in known:
                col, kind = item, "string"
        if kind in KINDS and KINDS[kind].arity == 2:  # latlon: two columns joined by +
            cols = [unquote(c) for c in split_outside_quotes(col, "+")]
            out.append(Field(",".join(cols), kind))
        else:
            out.append(Field(unquote(col), kind))
    return out


def normalize_fields(fields: Any, df: pd.DataFrame, *, id_col: str, exclude: Sequence[str] = ()) -> list[Field]:
    """Turn ``fields`` (None, list of names, ``{col: kind}``, list of Field or
    ``"col:kind,col2"``) into a list of :class:`Field`, checking the columns exist."""
    if fields is None:
        return infer_fields(df, exclude=[id_col, *exclude])
    if isinstance(fields, str):
        fields = parse_field_spec(fields, columns=list(map(str, df.columns)))
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
