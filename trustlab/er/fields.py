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

import numpy as np
import pandas as pd

from trustlab._validation import Interval, validate_params
from trustlab.er.kinds import (
    CODES,
    FIELD_KINDS,
    KINDS,
    NUMBERS,
    RECORD,
    ColumnProfile,
    Field,
    code_tokens,
    recognise,
    record_text,
    text_numbers,
    tf_keys,
)
from trustlab.er.rules import split_outside_quotes, unquote

__all__ = ["FieldChoice", "FieldEvidence", "FieldInference", "infer_fields_report", "is_truth_like", "infer_fields",
           "judge_fields", "normalize_fields", "parse_field_spec", "suspect_shape"]

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
    """The present values of a column: missing cells dropped; text made ``str``, stripped, and
    empty or ``"nan"`` (any case) values dropped (the strip and the tests once per distinct
    value, spread to the rows: the same values, index and dtype as doing them per row)."""
    v = s.dropna()
    if v.dtype == object or isinstance(v.dtype, pd.StringDtype):
        v = v.astype(str)
        codes, uniq = pd.factorize(v, use_na_sentinel=False)
        u = pd.Series(uniq, dtype=v.dtype).str.strip()
        keep = ((u != "") & (u.str.lower() != "nan")).to_numpy(dtype=bool)[codes]
        out = u.take(codes[keep])
        out.index = v.index[keep]
        out.name = v.name
        return out
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
    # comparison below does that beside them). A short ``name`` alone too (first and last name in
    # one column): its Jaro-Winkler levels let EM call every *far* pair a match (inventors_israeli
    # with its two name columns joined: λ 0.62, F1 0.010; as ``text`` 0.273)
    if sum(KINDS[f.kind].text for f in fields) == 1 and len(fields) == 1 and fields[0].kind in ("string", "name"):
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
    # numbers written inside free text (a product description's year and size, a listing's
    # coordinates, a citation's pages), where no field holds numbers of its own
    if fields and len(df) and not any(_holds_numbers(df, f) for f in fields):
        sample = df.sample(min(len(df), 2000), random_state=0) if len(df) > 2000 else df
        vals, _ = text_numbers(record_text(sample.reset_index(drop=True), fields))
        count = (~pd.isna(vals)).sum(1) if len(vals) else np.zeros(0)
        share = float((count > 0).mean()) if len(count) else 0.0
        per = float(count[count > 0].mean()) if (count > 0).any() else 0.0
        if share >= NUMBERS_MIN_SHARE and per >= NUMBERS_MIN_COUNT:
            fields.append(Field(NUMBERS, "numbers"))
            choices.append(FieldChoice(NUMBERS, "field", "numbers", f"numbers inside the text of {share:.0%} of "
                                       f"records ({per:.1f} each) and no field of numbers: the share that agree "
                                       f"(weighted by rarity)"))
    return FieldInference(fields=fields, choices=choices, id_col=found_id)


#: records whose text holds a number on its own for the ``numbers`` comparison to be added
NUMBERS_MIN_SHARE = 0.5
#: and the numbers such a record holds on average: one number is mostly a house number, which
#: its text's own comparison weighs already (restaurant's addresses: counted again, F1 0.946 ->
#: 0.725); several (a date, two coordinates, pages and a year) are what a word comparison grades
#: worst. Heuristic
NUMBERS_MIN_COUNT = 2.0
#: kinds whose values are numbers, dates or codes of their own
_NUMBER_KINDS = ("numeric", "date", "phone", "postcode", "code", "latlon", "model")


def _holds_numbers(df: pd.DataFrame, f: Field) -> bool:
    """Whether a field compares numbers of its own: a kind of numbers (:data:`_NUMBER_KINDS`),
    or a column whose values are mostly numbers (years, counts: kind ``exact``)."""
    if f.kind in _NUMBER_KINDS:
        return True
    if KINDS[f.kind].derived:
        return False
    v = _clean(df[f.columns()[0]]).astype(str)
    v = v.sample(min(len(v), 500), random_state=0) if len(v) > 500 else v
    return bool(len(v)) and float(v.str.fullmatch(r"\W*[-+]?\d+(?:[.,]\d+)?\W*").mean()) > 0.5


def _drop_noise(df: pd.DataFrame, fields: list, choices: list, sources: Any) -> list:
    """The fields without those the evidence test calls noise (their choices say why)."""
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


# ----------------------------------------------------------------------------- field relevance
# Which inferred fields carry identity, judged by leave-one-field-out agreement (documented in
# trustlab.er.relevance, which re-exports these names). The code lives in this module because it
# is part of the fields stage: it runs before blocking and reads no later stage.

#: records read by the evidence test (a seeded sample of larger tables)
MAX_RECORDS = 50_000
#: pairs agreeing on one field taken per value (spread over many values: rare values weigh as much)
PAIRS_PER_VALUE = 2
#: disjoint rounds of pairs drawn from each value of a few-valued field (a record is in at most
#: this many pairs of one field)
ROUNDS = 3
#: pairs a gain needs to make a field relevant, or to measure how enriched in matches a
#: conditioner's pairs are
MIN_PAIRS = 50
#: pairs per conditioning field, and random pairs
MAX_PAIRS = 4000
#: a gain (share of what random pairs leave) smaller than this is no evidence of identity
MIN_GAIN = 0.05
#: the z-score a gain needs to count
MIN_Z = 4.0
#: a field is noise when, on the pairs of the strongest conditioners, its gain (at its upper
#: confidence bound) is below this share of the gain the identity fields show on them
NOISE_SHARE = 0.25
#: a conditioner whose values random pairs share at least this often is a category (a city, a
#: cuisine): its pairs are hardly enriched in matches, and what other fields gain on them is how
#: attributes go together (streets in a city), not identity; noise is judged on rarer values only
MAX_CONDITIONER_AGREEMENT = 0.02
#: the gain the relevant fields must show on the strongest conditioners' pairs for anything to
#: be called noise on them (weaker pairs are too little enriched in matches to tell)
MIN_STRENGTH = 0.2
#: pairs (both values present) a field needs, over all conditioners, to be called noise
MIN_EVIDENCE = 100
#: pairs compared in the first pass, over all conditioners (each gets at most :data:`MAX_PAIRS`)
MAX_TOTAL_PAIRS = 60_000
#: a field that random pairs agree on at least this often (exact level) is left to the model:
#: it cannot pass for a match class nor make blocks, and its weight is small either way
MAX_RANDOM_AGREEMENT = 0.5

#: conjunctions of this many other fields at most make the "likely match" pairs of the second pass
MAX_CONJUNCTION = 3
#: the fields (the most distinctive ones) whose conjunctions the second pass forms
MAX_CONJUNCTION_FIELDS = 8
#: a conjunction is *strong* when at least this share of the pairs that agree on it cannot be
#: explained by its fields agreeing independently (its excess share: likely matches)
MIN_EXCESS = 0.5
#: a field is noise when its gain on the likely matches, at its upper bound, is below this
#: share of their excess share (measured on the real files: columns about another record
#: 0.01-0.02, identity fields 0.3 and more, a name with typos the lowest)
CONJUNCTION_NOISE_SHARE = 0.1

_TIMESTAMP = re.compile(
    r"\s*(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})[ T,]+\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
    r"\s*(?:[ap]\.?m\.?)?\s*(?:z|utc|gmt|[+-]\d{2}:?\d{2})?\s*", re.I)
_EQUAL = 1.0 - 1e-9  # a similarity this high is agreement
_INT = re.compile(r"\s*[+-]?\d+(?:\.0+)?\s*")


@dataclass
class FieldEvidence:
    """What the evidence test found for one field.

    Attributes
    ----------
    column : str
        The field's column(s).
    verdict : str
        ``"relevant"`` (agrees more on pairs another field makes likely matches),
        ``"noise"`` (with enough evidence, a gain below :data:`NOISE_SHARE` of the
        identity fields' gain on the same pairs, or below :data:`CONJUNCTION_NOISE_SHARE` of
        the excess share of every strong conjunction of other fields),
        ``"suspect"`` (a counter or timestamp shape, no evidence of identity) or
        ``"undecided"``.
    gain : float
        The largest significant gain over any conditioner (0.0 when none).
    upper : float
        The largest upper confidence bound of a gain (how much identity the field could
        carry given the evidence).
    evidence : int
        Pairs of other fields on which both values of this field were present.
    shape : str or None
        The suspect shape (``"counter"``, ``"timestamp"``), if any.
    conjunction : bool
        Judged by the second pass, on the likely matches of conjunctions of other fields
        (``upper`` is then the largest upper bound of its gain there as a share of their
        excess share, ``threshold`` :data:`CONJUNCTION_NOISE_SHARE`).
    best : str or None
        The conditioner that gave ``gain``.
    """

    column: str
    verdict: str = "undecided"
    gain: float = 0.0
    upper: float = 0.0
    evidence: int = 0
    shape: str | None = None
    best: str | None = None
    random_rate: float = float("nan")
    random_exact: float = float("nan")
    threshold: float = float("nan")
    reverse: bool = False
    conjunction: bool = False
    detail: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict, repr=False)

    def reason(self) -> str:
        if self.shape is not None:
            what = {"counter": "a running counter (each table's values are consecutive integers)",
                    "timestamp": "a timestamp with a varying time of day (export / change time)"}[self.shape]
            return (f"{what}, with no evidence that it carries identity (no significant gain on the pairs that "
                    "agree on another field): not compared (pass fields=... to compare it)")
        if self.conjunction:
            return (f"no evidence of identity: on {self.evidence} likely matches (pairs that agree on two or three "
                    f"other fields together far more often than chance) it agrees no more than on random pairs "
                    f"(gain at its upper bound {self.upper:.2f} of their excess share, < {self.threshold}): not "
                    "compared (pass fields=... to compare it)")
        if self.reverse:
            return (f"no evidence of identity: too sparse to be judged on the other fields' pairs, and the pairs "
                    f"that agree on it are no more alike in the other fields than random pairs (at most "
                    f"{self.upper:.2f} of what identity pairs show, < {self.threshold}): not compared (pass "
                    "fields=... to compare it)")
        return (f"no evidence of identity: on {self.evidence} pairs that agree on another field it agrees as "
                f"often as on random pairs (gain at its upper bound {self.upper:.3f}, below a share of what the "
                f"identity fields gain there: {self.threshold:.3f}): not compared (pass fields=... to compare it)")


def suspect_shape(values: pd.Series, sources: np.ndarray | None = None) -> str | None:
    """``"counter"``, ``"timestamp"`` or None: whether a column has a shape that rarely
    carries identity (heuristic).

    A *counter*: every value an integer, and within each table (``sources``: a code per row;
    None: one table) the values are distinct and consecutive (``k .. k+n-1``) on more than 20
    rows. A *timestamp*: at least 90 % of the values a date with a time of day, the times of
    day varied (at least 10 distinct and more than a tenth of the values), and at least half of
    the values distinct.

    Examples
    --------
    >>> suspect_shape(pd.Series([str(i) for i in range(1, 31)] * 2), np.repeat([0, 1], 30))
    'counter'
    >>> suspect_shape(pd.Series([f"2026-03-1{i % 3} {i % 24:02d}:{i % 60:02d}:07" for i in range(50)]))
    'timestamp'
    >>> suspect_shape(pd.Series(["2001-02-03", "1999-12-31"] * 20)) is None
    True
    """
    v = values.fillna("").astype(str)
    present = (v.str.strip() != "").to_numpy()
    if present.sum() < 21:
        return None
    vp = v[present]
    codes = np.zeros(len(v), np.int64) if sources is None else np.asarray(sources)
    cp = codes[present]
    if present.all() and bool(vp.str.fullmatch(_INT).all()):
        num = pd.to_numeric(vp.str.strip(), errors="coerce").to_numpy()
        ok = True
        for s in np.unique(cp):
            x = num[cp == s]
            if x.size < 21 or np.unique(x).size != x.size or x.max() - x.min() + 1 != x.size:
                ok = False
                break
        if ok:
            return "counter"
    sample = vp.sample(min(len(vp), 2000), random_state=0) if len(vp) > 2000 else vp
    is_ts = sample.str.fullmatch(_TIMESTAMP)
    if is_ts.mean() >= 0.9:
        times = sample[is_ts].str.extract(r"(\d{1,2}:\d{2}(?::\d{2})?)", expand=False)
        nt = times.nunique()
        if nt >= 10 and nt > 0.1 * len(times) and vp.nunique() >= 0.5 * len(vp):
            return "timestamp"
    return None


def _keys(df: pd.DataFrame, f: Field) -> np.ndarray:
    """The normalised value of a field per record (``""``: missing)."""
    if KINDS[f.kind].arity == 1:
        k = tf_keys(df, f)
    else:
        parts = [df[c].fillna("").astype(str).str.strip().str.lower() for c in f.columns()]
        k = parts[0]
        for p in parts[1:]:
            k = k.where((k == "") | (p == ""), k + "|" + p).where(p != "", "")
        k = k.to_numpy(dtype=object)
    return pd.Series(k, dtype=object).fillna("").astype(str).to_numpy(dtype=object)


def _agreeing_pairs(key: np.ndarray, sources: np.ndarray | None, rng: np.random.Generator,
                    cap: int = MAX_PAIRS) -> np.ndarray:
    """Pairs of records with the same non-empty key (across tables when ``sources`` is
    given), at most :data:`PAIRS_PER_VALUE` per value and :data:`MAX_PAIRS` in all."""
    ok = key != ""
    idx = np.flatnonzero(ok)
    if idx.size < 2:
        return np.zeros((0, 2), np.int64)
    codes, uniq = pd.factorize(pd.Series(key[idx]))
    order = np.lexsort((rng.random(idx.size), codes))
    idx, codes = idx[order], codes[order]
    starts = np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1]
    ends = np.r_[starts[1:], idx.size]
    shared = int(((ends - starts) >= 2).sum())
    # few shared values (a category): more pairs per value, so that the evidence does not hang
    # on how many values the field has
    per = max(PAIRS_PER_VALUE, -(-cap // max(1, shared)))
    out = []
    for a, b in zip(starts, ends):
        if b - a < 2:
            continue
        members = idx[a:b]
        if sources is None:
            first = other = members
        else:
            s = sources[members]
            first, other = members[s == s[0]], members[s != s[0]]
            if other.size == 0:
                continue
        # disjoint pairs of the group's records (in a random order already); a few-valued
        # field's groups give ROUNDS such draws, so a record is in at most ROUNDS pairs and a
        # few records do not make the evidence
        for r in range(ROUNDS if per > PAIRS_PER_VALUE else 1):
            if r:
                first, other = rng.permutation(first), (rng.permutation(other) if sources is not None else None)
            if sources is None:
                m = first[:2 * per]
                out.extend((m[2 * t], m[2 * t + 1]) for t in range(min(per, m.size // 2)))
            else:
                out.extend(zip(first[:per], other[:per]))
    if not out:
        return np.zeros((0, 2), np.int64)
    P = np.unique(np.sort(np.asarray(out, np.int64), axis=1), axis=0)
    if len(P) > cap:
        P = P[np.sort(rng.choice(len(P), cap, replace=False))]
    return P


def _random_pairs(n: int, sources: np.ndarray | None, rng: np.random.Generator,
                  among: np.ndarray | None = None) -> np.ndarray:
    """Random pairs of distinct records (across tables with ``sources``; of the records
    ``among`` marks, when given)."""
    k = 4 * MAX_PAIRS
    pool = np.arange(n) if among is None else np.flatnonzero(among)
    a = pool[rng.integers(0, pool.size, k)]
    b = pool[rng.integers(0, pool.size, k)]
    ok = a != b
    if sources is not None:
        ok &= sources[a] != sources[b]
    P = np.sort(np.stack([a[ok], b[ok]], axis=1), axis=1)[:2 * MAX_PAIRS]
    return P.astype(np.int64)


def _gain(x: np.ndarray, r: np.ndarray) -> tuple[float, float, float]:
    """(gain, upper bound of the gain, z) of the mean of ``x`` over the mean of ``r``,
    relative to what ``r`` leaves (``(mx - mr) / (1 - mr)``)."""
    mx, mr = float(x.mean()), float(r.mean())
    # the variance of a few pairs that all agree (or all differ) is no smaller than a quarter of
    # a Bernoulli's of the mean with one pair each way added: a small sample stays uncertain
    def var(v: np.ndarray) -> float:
        p = (float(v.sum()) + 1.0) / (v.size + 2.0)
        return max(float(v.var()), 0.25 * p * (1.0 - p))

    se = float(np.sqrt(var(x) / x.size + var(r) / r.size)) + 1e-9
    room = max(1.0 - mr, 1e-3)
    return (mx - mr) / room, (mx - mr + 2.0 * se) / room, (mx - mr) / se


def _similarities(df: pd.DataFrame, f: Field, pairs: np.ndarray) -> np.ndarray:
    """Two similarities of the field's values for each pair (NaN where either is missing): equal
    normalised values (the kind's TF key), and the Jaccard overlap of their word sets. Made
    here, not by the comparison stage (which runs after blocking): what the judge needs is
    whether the values go together, not the kind's graded comparison."""
    from scipy import sparse

    key = _keys(df, f)
    a, b = pairs[:, 0], pairs[:, 1]
    miss = (key[a] == "") | (key[b] == "")
    X = np.full((len(pairs), 2), np.nan)
    X[~miss, 0] = (key[a] == key[b])[~miss]
    text = df[f.columns()[0]].fillna("").astype(str) if len(f.columns()) == 1 else pd.Series(key)
    # the word sets of the distinct values, spread to the rows (one row of the matrix per value)
    vcodes, uniq = pd.factorize(text.reset_index(drop=True), use_na_sentinel=False)
    tok = pd.Series(uniq, dtype=text.dtype).str.lower().str.findall(r"\w+").explode().dropna()
    if len(tok):
        ids = pd.factorize(tok)[0]
        M = sparse.csr_matrix((np.ones(len(ids)), (tok.index.to_numpy(np.int64), ids)),
                              shape=(len(uniq), int(ids.max()) + 1))
        M.data[:] = 1.0  # word sets: a word twice in a value counts once
        M = M[vcodes]
        size = np.asarray(M.sum(axis=1)).ravel()
        inter = np.asarray(M[a].multiply(M[b]).sum(axis=1)).ravel()
        union = size[a] + size[b] - inter
        ok = ~miss & (union > 0)
        X[ok, 1] = inter[ok] / union[ok]
    return X


def _measure(df: pd.DataFrame, fields: Sequence[Field], judged: Sequence[Field], rand: np.ndarray,
             blocks: dict, out: dict) -> None:
    """Compare the pairs and record, for each field of ``judged``, its gain on every other
    field's pairs (``blocks``) over the random pairs ``rand``."""
    allp = np.concatenate([rand] + [blocks[f.column] for f in fields])
    rows, inv = np.unique(allp, return_inverse=True)  # compare the records in the pairs only
    sub = df.iloc[rows].reset_index(drop=True)
    pairs = inv.reshape(allp.shape).astype(np.int64)
    offs = np.cumsum([0, len(rand)] + [len(blocks[f.column]) for f in fields])
    for f in judged:
        X = _similarities(sub, f, pairs)
        names = (f"{f.column}:equal", f"{f.column}:jaccard")
        feats = [0, 1]
        ev = out[f.column]
        for fi in feats:
            xr = X[:offs[1], fi]
            xr = xr[~np.isnan(xr)]
            if xr.size < 30:
                continue
            # a field most random pairs agree on (a near-constant value, a missing-value
            # marker) is left to the model: a small difference would pass for a large gain
            r0 = X[:offs[1], 0]
            rate = float((r0[~np.isnan(r0)] >= _EQUAL).mean())
            if len(judged) == len(fields) or np.isnan(ev.random_exact):
                ev.random_exact = rate
            common = rate >= MAX_RANDOM_AGREEMENT
            for q, g in enumerate(fields):
                if g.column == f.column:
                    continue
                x = X[offs[q + 1]:offs[q + 2], fi]
                x = x[~np.isnan(x)]
                if x.size < 10:
                    continue
                gain, upper, z = _gain(x, xr)
                ev.detail[(g.column, names[fi])] = (round(gain, 3), round(upper, 3), round(z, 1), int(x.size))
                ev.stats[(g.column, fi == feats[0])] = (x, xr)
                if z >= MIN_Z and gain >= MIN_GAIN and x.size >= MIN_PAIRS and out[g.column].shape is None \
                        and not common and gain > ev.gain:
                    ev.gain, ev.best = gain, g.column
        if ev.gain > 0:
            ev.verdict = "relevant"


def judge_fields(df: pd.DataFrame, fields: Sequence[Field], *, sources: np.ndarray | None = None,
                 random_state: int = 0) -> dict[str, FieldEvidence]:
    """Judge every field by the agreement of the others (see the module docstring).

    Parameters
    ----------
    df : DataFrame
        The records (missing values empty or NaN).
    fields : sequence of Field
        The fields inferred from the columns (no whole-record ``*`` / ``#``).
    sources : array of int, optional
        The table of every row when tables are linked to each other (``link_only``): the
        pairs are then taken across tables, where matches are.
    random_state : int
        Seed of the samples.

    Returns
    -------
    dict
        column -> :class:`FieldEvidence`; the fields to leave out are those whose
        ``verdict`` is ``"noise"`` or ``"suspect"``.

    Examples
    --------
    Two records of each of 1,000 people (first and last names drawn from 500 each) and a
    column of four values drawn at random:

    >>> rng = np.random.default_rng(0)
    >>> first, last = rng.integers(0, 500, 1000), rng.integers(0, 500, 1000)
    >>> df = pd.DataFrame({"first": [f"f{v}" for v in np.repeat(first, 2)],
    ...                    "last": [f"l{v}" for v in np.repeat(last, 2)],
    ...                    "noise": rng.choice(["a", "b", "c", "d"], 2000)})
    >>> ev = judge_fields(df, [Field("first", "exact"), Field("last", "exact"), Field("noise", "exact")])
    >>> [ev[c].verdict for c in ("first", "last", "noise")]
    ['relevant', 'relevant', 'noise']
    """
    fields = [f for f in fields if not KINDS[f.kind].derived]
    out = {f.column: FieldEvidence(f.column) for f in fields}
    if len(fields) < 2 or len(df) < 50:
        return out
    rng = np.random.default_rng(random_state)
    # the rows and the fields in an order of their content (not of the input's rows, columns or
    # names), so that a file whose rows or columns come in another order gets the same verdicts
    hashes = {c: pd.util.hash_pandas_object(df[c].fillna("").astype(str), index=False).to_numpy()
              for c in dict.fromkeys(c for f in fields for c in f.columns())}
    row_key = np.zeros(len(df), np.uint64)
    for h in hashes.values():
        row_key += h
    order = np.argsort(row_key, kind="stable")
    df = df.iloc[order]
    sources = None if sources is None else np.asarray(sources)[order]
    fields = sorted(fields, key=lambda f: sum(int(hashes[c].sum(dtype=np.uint64)) for c in f.columns()))
    if len(df) > MAX_RECORDS:
        take = np.sort(rng.choice(len(df), MAX_RECORDS, replace=False))
        df = df.iloc[take].reset_index(drop=True)
        sources = None if sources is None else np.asarray(sources)[take]
    else:
        df = df.reset_index(drop=True)
    src = None if sources is None else np.asarray(sources)
    if src is not None and np.unique(src).size < 2:
        src = None
    for f in fields:
        if KINDS[f.kind].arity == 1:
            out[f.column].shape = suspect_shape(df[f.column], src)
    n = len(df)
    keys = {f.column: _keys(df, f) for f in fields}
    cap = max(500, min(MAX_PAIRS, MAX_TOTAL_PAIRS // len(fields)))
    blocks = {f.column: _agreeing_pairs(keys[f.column], src, rng, cap) for f in fields}
    rand = _random_pairs(n, src, rng)
    if len(rand) < 50:
        return out
    _measure(df, fields, fields, rand, blocks, out)
    # a sparse field has few pairs of the others on which its value is present on both: every
    # field not yet relevant is measured again on the others' pairs among the records that hold
    # it (for a dense field nearly the same pairs; ``evidence`` is only counted by _decide, below)
    thin = [f for f in fields if out[f.column].verdict != "relevant"]
    for f in thin:
        has = keys[f.column] != ""
        if has.sum() < 20:
            continue
        sub = {g.column: _agreeing_pairs(np.where(has, keys[g.column], ""), src, rng, MAX_PAIRS // 4)
               for g in fields if g.column != f.column}
        sub[f.column] = np.zeros((0, 2), np.int64)
        r_sub = _random_pairs(n, src, rng, has)
        if len(r_sub) >= 50:
            _measure(df, fields, [f], r_sub, sub, out)
    _decide(out)
    _conjunctions(df, fields, keys, src, rng, rand, out)
    for ev in out.values():
        ev.stats = {}
    return out


def _decide(out: dict) -> None:
    """Verdicts from the gains: noise is judged on the pairs of the strong conditioners (the
    fields whose pairs raise a relevant field's agreement the most: the pairs most enriched in
    matches), pooled, against the gain the identity fields show on those same pairs (how much
    the pairs are enriched in matches sets how large a gain identity can show)."""
    strength: dict = {}
    for c, ev in out.items():
        for (g, primary), (x, xr) in ev.stats.items():
            gain, _, z = _gain(x, xr)
            if z >= MIN_Z and gain >= MIN_GAIN and x.size >= MIN_PAIRS and ev.verdict == "relevant" \
                    and out[g].random_exact < MAX_CONDITIONER_AGREEMENT:
                strength[g] = max(strength.get(g, 0.0), gain)
    if strength and max(strength.values()) < MIN_STRENGTH:
        strength = {}
    if not strength:
        for ev in out.values():
            if ev.verdict != "relevant" and ev.shape is not None:
                ev.verdict = "suspect"
        return
    top = max(strength.values())
    strong = {g for g, v in strength.items() if v >= 0.5 * top}
    for c, ev in out.items():
        if ev.verdict == "relevant":
            continue
        used = [g for g in strong if g != c]
        ref = min((strength[g] for g in used), default=0.0)
        seen_agreement, common = 0.0, False
        for primary in (True, False):
            xs = [x for (g, p), (x, xr) in ev.stats.items() if p == primary and g in used]
            rs = [xr for (g, p), (x, xr) in ev.stats.items() if p == primary and g in used]
            if not xs:
                continue
            x = np.concatenate(xs)
            _, upper, _ = _gain(x, rs[0])
            ev.upper = max(ev.upper, upper)
            seen_agreement = max(seen_agreement, float(x.mean()), float(rs[0].mean()))
            if primary:
                ev.evidence = int(x.size)
                ev.random_rate = float((rs[0] >= _EQUAL).mean())
                common = ev.random_rate >= MAX_RANDOM_AGREEMENT
        judged = seen_agreement > 0 and not common
        if ev.shape is not None:
            ev.verdict = "suspect"
        ev.threshold = NOISE_SHARE * ref
        if ev.shape is None and judged and ev.evidence >= MIN_EVIDENCE and ev.upper < ev.threshold:
            ev.verdict = "noise"
        elif ev.shape is None and ev.evidence < MIN_EVIDENCE:
            _reverse(c, ev, out, strong)


def _reverse(c: str, ev: FieldEvidence, out: dict, strong: set) -> None:
    """A sparse field, present on both records of too few pairs to be judged by the others'
    pairs, judged the other way round: if it carried identity, the pairs that agree on it
    would be enriched in matches and the relevant fields would agree on them more than on
    random pairs (as on the strongest conditioners' pairs). Noise when every relevant field
    with enough pairs gains there less than :data:`NOISE_SHARE` of what it gains on the
    strongest conditioners' pairs."""
    rand = [xr for (g, p), (x, xr) in ev.stats.items() if p]
    if not rand or float((rand[0] >= _EQUAL).mean()) >= MAX_RANDOM_AGREEMENT:
        return
    seen, worst = 0, 0.0
    for r, er in out.items():
        if r == c or er.verdict != "relevant" or (c, True) not in er.stats:
            continue
        for p in (True, False):
            refs = [_gain(x, xr)[0] for (g, q), (x, xr) in er.stats.items()
                    if q == p and g in strong and g != r and x.size >= MIN_PAIRS]
            ref = max(refs, default=0.0)
            if (c, p) not in er.stats or ref < MIN_GAIN:
                continue
            x, xr = er.stats[(c, p)]
            if x.size < MIN_PAIRS:
                continue
            seen += 1
            worst = max(worst, _gain(x, xr)[1] / ref)
    if seen:
        ev.upper, ev.threshold, ev.reverse = worst, NOISE_SHARE, True
        if worst < NOISE_SHARE:
            ev.verdict = "noise"


def _pair_count(code: np.ndarray, sources: np.ndarray | None) -> float:
    """Pairs of records with the same code (``-1``: missing; across tables with ``sources``)."""
    ok = code >= 0
    if ok.sum() < 2:
        return 0.0
    if sources is None:
        k = np.bincount(code[ok]).astype(np.float64)
        return float((k * (k - 1) / 2).sum())
    s = np.unique(sources, return_inverse=True)[1].reshape(-1)
    ns = int(s.max()) + 1
    t = np.bincount(code[ok] * ns + s[ok], minlength=(int(code.max()) + 1) * ns).reshape(-1, ns).astype(np.float64)
    return float(((t.sum(1) ** 2 - (t ** 2).sum(1)) / 2).sum())


def _combine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The code of the pair of codes ``(a, b)`` (``-1`` where either is missing), renumbered."""
    both = (a >= 0) & (b >= 0)
    out = np.full(a.shape, -1, np.int64)
    if both.any():
        out[both] = np.unique(a[both] * (int(b.max()) + 1) + b[both], return_inverse=True)[1].reshape(-1)
    return out


def _conjunctions(df: pd.DataFrame, fields: Sequence[Field], keys: dict, src: np.ndarray | None,
                  rng: np.random.Generator, rand: np.ndarray, out: dict) -> None:
    """Second pass for the fields the first left undecided (few-duplicate tables, where no
    single field's pairs are enriched enough in matches): the *likely matches* are the pairs
    that agree exactly on a conjunction ``S`` of two or three other fields, and how enriched
    in matches they are is measured without labels, by their **excess share**
    ``1 - E/O``: ``O`` the pairs that agree on every field of ``S``, ``E`` the pairs that would
    if the fields agreed independently (all pairs times the product of each field's share of
    agreeing pairs). Matches agree on their identity fields together, which chance does not
    do. A conjunction is strong when its excess share is at least :data:`MIN_EXCESS`.

    An undecided field is called noise when, on **every** strong conjunction without it on which
    it has :data:`MIN_PAIRS` pairs (both values present; at least one such conjunction), its
    gain over random pairs (exact level and word overlap, at the upper confidence bound) is
    below :data:`CONJUNCTION_NOISE_SHARE` of the excess share: an identity field would agree on
    the likely matches. Cost: at most ``C(8, 2) + C(8, 3)`` conjunctions counted on integer
    codes, and one similarity computation per judged field. One strong conjunction on which it
    gains is enough to keep it (fields that go together without being identity, a street and its
    city, can make a conjunction look strong; a true identity conjunction then keeps the field).
    Conjunctions are formed from the :data:`MAX_CONJUNCTION_FIELDS` most distinctive fields
    (share present times the information of an agreement) that are not suspect, noise or mostly
    agreeing on random pairs; the pairs compared are drawn as in the first pass
    (:data:`PAIRS_PER_VALUE` per value of the conjunction). Heuristic; the independence the
    excess share assumes fails for fields that go together, which is why one gaining conjunction
    suffices to keep a field."""
    from itertools import combinations

    todo = [f for f in fields if out[f.column].verdict == "undecided" and out[f.column].shape is None]
    if not todo:
        return
    n = len(df)
    if src is None:
        total = n * (n - 1) / 2.0
    else:
        cnt = np.bincount(np.unique(src, return_inverse=True)[1].reshape(-1)).astype(np.float64)
        total = float((cnt.sum() ** 2 - (cnt ** 2).sum()) / 2)
    if total <= 0:
        return
    share, score, codes = {}, {}, {}
    for f in fields:
        ev = out[f.column]
        if ev.verdict in ("noise", "suspect") or ev.shape is not None:
            continue
        if not (ev.random_exact < MAX_RANDOM_AGREEMENT):
            continue
        key = keys[f.column]
        code = pd.factorize(pd.Series(key))[0].astype(np.int64)
        code[key == ""] = -1
        code = np.where(code >= 0, np.unique(np.where(code >= 0, code, 0), return_inverse=True)[1].reshape(-1), -1)
        o = _pair_count(code, src)
        if o <= 0:
            continue
        codes[f.column] = code
        share[f.column] = o / total
        present = float((key != "").mean())
        score[f.column] = present * -np.log(max(share[f.column] / max(present * present, 1e-12), 1.0 / n))
    cond = sorted(share, key=lambda c: -score[c])[:MAX_CONJUNCTION_FIELDS]
    strong = []
    for size in range(2, MAX_CONJUNCTION + 1):
        for S in combinations(cond, size):
            code = codes[S[0]]
            for c in S[1:]:
                code = _combine(code, codes[c])
            o = _pair_count(code, src)
            if o < MIN_PAIRS:
                continue
            e = total * float(np.prod([share[c] for c in S]))
            excess = 1.0 - e / o
            if excess >= MIN_EXCESS:
                strong.append((S, excess, code))
    if not strong:
        return
    rs = np.random.default_rng(rng.integers(0, 2 ** 32))
    pairs = {S: _agreeing_pairs(np.where(code >= 0, code.astype(str), "").astype(object), src, rs)
             for S, _, code in strong}
    for f in todo:
        ev = out[f.column]
        use = [(S, excess) for S, excess, _ in strong if f.column not in S and len(pairs[S]) >= MIN_PAIRS]
        if not use:
            continue
        # every pair set and the random pairs compared at once, on the records they hold
        allp = np.concatenate([rand] + [pairs[S] for S, _ in use])
        rows, inv = np.unique(allp, return_inverse=True)
        X = _similarities(df.iloc[rows].reset_index(drop=True), f, inv.reshape(allp.shape).astype(np.int64))
        offs = np.cumsum([0, len(rand)] + [len(pairs[S]) for S, _ in use])
        X0 = X[:offs[1]]
        r0 = X0[:, 0][~np.isnan(X0[:, 0])]
        if r0.size and float((r0 >= _EQUAL).mean()) >= MAX_RANDOM_AGREEMENT:
            continue
        seen, worst, best_n = 0, 0.0, 0
        for q, (S, excess) in enumerate(use):
            XS = X[offs[q + 1]:offs[q + 2]]
            ups, n_f = [], 0
            for fi in (0, 1):
                x, xr = XS[:, fi], X0[:, fi]
                x, xr = x[~np.isnan(x)], xr[~np.isnan(xr)]
                if fi == 0:
                    n_f = int(x.size)
                if x.size < MIN_PAIRS or xr.size < 30:
                    continue
                gain, upper, z = _gain(x, xr)
                ev.detail[("+".join(S), "conjunction" if fi == 0 else "conjunction:jaccard")] = (
                    round(gain, 3), round(upper, 3), round(z, 1), int(x.size), round(excess, 3))
                ups.append(upper / excess)
            if not ups:
                continue
            seen += 1
            best_n = max(best_n, n_f)
            worst = max(worst, max(ups))
        if not seen:
            continue
        ev.upper, ev.evidence, ev.threshold, ev.conjunction = worst, best_n, CONJUNCTION_NOISE_SHARE, True
        if worst < CONJUNCTION_NOISE_SHARE:
            ev.verdict = "noise"
