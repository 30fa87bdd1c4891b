"""The field kinds in one place: what each kind of field is compared, normalised and blocked on.

One :class:`FieldKind` record per kind (:data:`KINDS`, in the order of :data:`FIELD_KINDS`)
declares

* its **comparison levels** — the feature that is 1 exactly on equal values, the feature
  the *close* / *far* levels are cut from, the two thresholds and whether the exact level
  is term-frequency adjusted (:data:`COMPARISON_LEVELS` is read
  from here);
* its **value normaliser** — the form in which two values count as the same value for
  term frequencies (:func:`tf_keys`) and, for the kinds that have
  one of their own, at the exact level of :func:`trustlab.er.comparisons.compare`;
* its **blocking role** — whether the adaptive blocking tries a ``key:`` rule on it, which
  ``token:`` rule (if any) it gets, and which rule the small default blocking gives it
  (:func:`trustlab.er.blocking.adaptive_blocking_rules`,
  :func:`trustlab.er.blocking.default_blocking_rules`);
* its **columns** — one column, two (``latlon``: ``"LAT,LON"``) or none (the whole-record
  comparisons ``record`` and ``codes``, derived from the other fields);
* its **inference hints** — how a column of that kind is recognised from its name and a
  sample of its values (:class:`Hint`, read by :func:`trustlab.er.fields.infer_fields_report`
  through :func:`recognise`): every hint of every kind is tried in the order of its
  ``rank``, and the first that holds decides the column's kind.

The similarity features themselves are computed per kind by
:func:`trustlab.er.comparisons.compare` (one function per kind).

This module also holds :class:`Field` (a compared column and its kind), so that reading
records (:mod:`trustlab.er.records`) and inferring fields (:mod:`trustlab.er.fields`) both
import it from here rather than from each other; and what several stages read of a kind
(:func:`record_text`, :func:`code_tokens`, :func:`tf_keys`, :func:`needed_features`,
:data:`COMPARISON_LEVELS`), so that no stage calls back into an earlier one.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Literal, Sequence

import numpy as np
import pandas as pd

from trustlab._chunks import series_distinct, spans

__all__ = ["FieldKind", "KINDS", "FIELD_KINDS", "RECORD", "CODES", "NUMBERS", "Field", "field_kind", "Hint",
           "ColumnProfile", "recognise", "COMPARISON_LEVELS", "LEVEL_NAMES", "record_fields", "record_text",
           "code_tokens", "tf_keys", "text_numbers", "needed_features"]


def _lower(s: pd.Series) -> pd.Series:
    """Stripped and lower-cased."""
    return s.str.strip().str.lower()


def _words(s: pd.Series) -> pd.Series:
    """Lower case, punctuation to spaces, single spaces (``"O'Neil,  Ann"`` -> ``"o neil ann"``)."""
    return s.str.lower().str.replace(r"[^\w ]+", " ", regex=True).str.split().str.join(" ")


def _alnum(s: pd.Series) -> pd.Series:
    """Letters and digits only, lower case (``"SW1A 1AA"`` -> ``"sw1a1aa"``)."""
    return s.str.strip().str.lower().str.replace(r"[^0-9a-z]+", "", regex=True)


def _word_chars(s: pd.Series) -> pd.Series:
    """Lower case, every run of non-word characters one space (``"1995."`` == ``"1995,"``)."""
    return s.str.lower().str.replace(r"[^\w]+", " ", regex=True).str.split().str.join(" ")


#: the built-in value normalisers: string methods of each value alone, so
#: :meth:`FieldKind.tf_key` applies them once per distinct value
#: (:func:`~trustlab._chunks.series_distinct`)
_ELEMENTWISE = frozenset({_lower, _words, _alnum, _word_chars})


# ------------------------------------------------------------------ inference hints
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)
_PHONE = re.compile(r"^\+?[\d\s\-\(\)\.]{7,20}$")
_DATE_SEP = re.compile(r"^(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T].*)?$")
# a word mixing letters and digits (model numbers such as WH-1000XM4, ka-9093), not an ordinal (5th)
_CODE_TOKEN = re.compile(r"(?<!\w)(?=[\w\-]*\d)(?=[\w\-]*[^\W\d_])(?!\d+(?:st|nd|rd|th)\b)[^\W_][\w\-]{2,}", re.I)
_NAMEISH = ("name", "first", "last", "given", "surname", "middle", "fname", "lname", "forename", "author",
            "suburb", "city", "town", "county", "country", "company", "organisation", "organization", "firm")
_PERSON = ("name", "first", "last", "given", "surname", "forename", "author")


def date_share(sample: pd.Series) -> float:
    """Share of values that look like dates (``2001-02-03``, ``3/2/01``, ``20010203``).

    Examples
    --------
    >>> date_share(pd.Series(["2001-02-03", "19991231", "hello"]))
    0.6666666666666666
    """
    s = sample.astype(str)
    sep = s.str.match(_DATE_SEP)
    d8 = s.str.fullmatch(r"\d{8}")
    ok8 = pd.Series(False, index=s.index)
    if d8.any():
        y = pd.to_numeric(s[d8].str[:4], errors="coerce")
        a = pd.to_numeric(s[d8].str[4:6], errors="coerce")
        b = pd.to_numeric(s[d8].str[6:8], errors="coerce")
        good = y.between(1800, 2100) & ((a.between(1, 12) & b.between(1, 31)) | (b.between(1, 12) & a.between(1, 31)))
        ok8[d8] = good.to_numpy()
    return float((sep | ok8).mean()) if len(s) else 0.0


class ColumnProfile:
    """What field inference knows of one column: its name, how many values it has and
    how many distinct ones, and a sample of its values (strings, none missing), with the
    statistics the hints test, each computed on first use.

    Parameters
    ----------
    name : str
        The column name.
    sample : pandas.Series of str
        Up to 500 of the column's present values.
    n_values : int
        Present values in the column.
    nun : int
        Distinct present values.
    counts : pandas.Series of int, optional
        How often each distinct present value occurs in the whole column (``value_counts``);
        None: :attr:`top_share` is read from the sample instead.

    Examples
    --------
    >>> p = ColumnProfile("Birth Date", pd.Series(["2001-02-03", "1999-12-31"]), 2, 2)
    >>> p.name_has("birth"), p.date_share, p.num_share
    (True, 1.0, 0.0)
    """

    def __init__(self, name: str, sample: pd.Series, n_values: int, nun: int, counts: pd.Series | None = None):
        self.name = name
        self.lname = name.strip().lower()
        self.sample = sample
        self.n_values = n_values
        self.nun = nun
        self.counts = counts

    def name_has(self, *parts: str) -> bool:
        """Whether the lower-cased name contains one of ``parts``."""
        return any(k in self.lname for k in parts)

    def share(self, mask: pd.Series) -> float:
        """Mean of a boolean Series over the sample."""
        return float(mask.mean())

    @property
    def uniq_share(self) -> float:
        return self.nun / self.n_values

    @cached_property
    def numbers(self) -> pd.Series:
        """The sample as numbers (NaN where a value is not one)."""
        return pd.to_numeric(self.sample, errors="coerce")

    @cached_property
    def num_share(self) -> float:
        return float(self.numbers.notna().mean())

    @cached_property
    def integral(self) -> bool:
        """Every number of the sample is a whole number."""
        x = self.numbers.dropna()
        return bool(np.all(np.isclose(x, np.round(x))))

    @cached_property
    def top_share(self) -> float:
        """Share of the present values that are one of the :data:`VOCABULARY` most frequent
        distinct values (of the whole column when ``counts`` was given, else of the sample).

        A closed vocabulary (states, cuisines, genres, months) is nearly covered by its
        commonest values however many rows the table has; an open one (first names,
        surnames, brands) keeps a long tail of rarer values, typos among them, that the
        commonest ones leave out.

        Examples
        --------
        >>> p = ColumnProfile("x", pd.Series(["a", "a", "b", "c"]), 4, 3)
        >>> p.top_share
        1.0
        """
        c = self.counts if self.counts is not None else self.sample.value_counts()
        total = float(c.sum())
        return float(np.sort(np.asarray(c))[::-1][:VOCABULARY].sum() / total) if total else 1.0

    @cached_property
    def mean_len(self) -> float:
        return float(self.sample.str.len().mean())

    @cached_property
    def mean_tok(self) -> float:
        return float(self.sample.str.split().str.len().mean())

    @cached_property
    def date_share(self) -> float:
        return date_share(self.sample)


@dataclass(frozen=True)
class Hint:
    """One way a column is recognised as a kind.

    Attributes
    ----------
    rank : int
        Hints of all kinds are tried in increasing rank; the first whose ``test`` holds
        decides the kind (ranks are unique).
    test : callable
        ``ColumnProfile -> bool``.
    reason : str
        Why, as the inference report shows it: a format string over the profile ``p``
        (``"a few categories ({p.nun} distinct values)"``).

    Examples
    --------
    >>> h = Hint(5, lambda p: p.nun < 3, "few values ({p.nun})")
    >>> p = ColumnProfile("x", pd.Series(["a", "b"]), 2, 2)
    >>> h.test(p), h.explain(p), h.label
    (True, 'few values (2)', 'few values')
    """

    rank: int
    test: Callable[[ColumnProfile], bool]
    reason: str

    def explain(self, p: ColumnProfile) -> str:
        return self.reason.format(p=p)

    @property
    def label(self) -> str:
        """The reason without its details (the text before the first parenthesis)."""
        return self.reason.split("(")[0].strip()


#: one code token with a digit: letters, digits and - . / _ # (``TH-50PZ850U``, ``DSC-W570/P``)
_MODEL_CODE = r"(?=[^\d]*\d)[A-Za-z0-9][A-Za-z0-9\-\./_#]*"


#: a column of fewer distinct values than this is a vocabulary, and one whose this many commonest
#: values hold :data:`CLOSED_SHARE` of its values is a closed one (see :func:`_short_categories`)
VOCABULARY = 50
CLOSED_SHARE = 0.9


def _short_categories(p: ColumnProfile) -> bool:
    """Short values from a closed vocabulary (compared exactly): fewer than :data:`VOCABULARY`
    distinct values; or fewer than a fifth of the values distinct *and* the
    :data:`VOCABULARY` commonest holding at least :data:`CLOSED_SHARE` of them. The distinct
    count alone grows with the table: 539 first names in 10,000 rows passed for categories,
    while their 50 commonest hold 61 % of the rows (an open vocabulary with a long tail; the
    cuisines, states, genres and months of the real files hold 93 % to 100 %)."""
    if p.mean_len >= 12:
        return False
    return p.nun < VOCABULARY or (p.nun < 0.2 * p.n_values and p.top_share >= CLOSED_SHARE)


def _years(p: ColumnProfile) -> bool:
    return "year" in p.lname or (p.numbers.dropna().between(1800, 2100).mean() > 0.95 and p.mean_len <= 4.5)


# (every kind's hints, in the order they are tried; ``KINDS`` below attaches them to the kinds)
_HINTS: dict[str, tuple[Hint, ...]] = {
    "email": (Hint(10, lambda p: p.share(p.sample.str.match(_EMAIL)) > 0.8
                   or ("mail" in p.lname and p.share(p.sample.str.contains("@")) > 0.5),
                   "values look like e-mail addresses"),),
    "date": (Hint(20, lambda p: (p.name_has("date", "dob", "birth", "born") or p.date_share > 0.9)
                  and p.date_share > 0.5, "name or values look like dates"),),
    "postcode": (Hint(30, lambda p: p.name_has("zip", "postcode", "postal", "post_code", "plz"),
                      "name says postcode"),),
    "phone": (Hint(40, lambda p: p.name_has("phone", "fax", "tel", "mobile", "cell")
                   or (p.num_share < 0.5 and p.share(p.sample.str.match(_PHONE)) > 0.9
                       and p.sample.str.count(r"\d").mean() >= 7),
                   "name or values look like phone numbers"),),
    "numeric": (Hint(50, lambda p: p.lname in ("lat", "lon", "lng", "latitude", "longitude"), "a coordinate"),
                Hint(63, lambda p: p.num_share > 0.95, "real numbers: relative difference")),
    "exact": (Hint(60, lambda p: p.num_share > 0.95 and p.integral and _years(p), "years: compared exactly"),
              Hint(62, lambda p: p.num_share > 0.95 and p.integral, "small integers / codes: compared exactly"),
              Hint(90, lambda p: p.mean_len < 12 and p.nun <= 10 and not p.name_has(*_PERSON),
                   "a few categories ({p.nun} distinct values)"),
              Hint(110, _short_categories, "short categories ({p.nun} distinct values)")),
    "code": (Hint(61, lambda p: p.num_share > 0.95 and p.integral
                  and (p.sample.str.len().max() >= 6 or p.uniq_share > 0.5),
                  "numeric code (ids, numbers): edit distance on the digits"),),
    "address": (Hint(70, lambda p: p.name_has("address", "street", "addr"), "name says address"),),
    "model": (Hint(75, lambda p: p.mean_tok <= 1.5 and p.nun >= max(50, 0.2 * p.n_values)
                   and p.share(p.sample.str.fullmatch(_MODEL_CODE)) > 0.8
                   and p.share(p.sample.str.contains(r"[A-Za-z]")) > 0.3,
                   "codes (model / part numbers): the same code or another one"),),
    "tokens": (Hint(80, lambda p: p.mean_tok > 12 or p.mean_len > 80,
                    "long free text ({p.mean_tok:.0f} words on average): token overlap"),
               Hint(130, lambda p: p.mean_tok >= 3 and p.share(p.sample.str.contains(_CODE_TOKEN)) >= 0.5,
                    "text with codes such as model numbers ({p.mean_tok:.1f} words on average): token overlap, "
                    "rare tokens weighing most")),
    "name": (Hint(100, lambda p: p.name_has(*_NAMEISH) and p.mean_tok <= 4, "name says a name/place; short text"),
             Hint(120, lambda p: p.mean_tok <= 2.5 and p.share(p.sample.str.fullmatch(r"[^\d]+")) > 0.9,
                  "short alphabetic text")),
    "string": (Hint(1000, lambda p: True, "text ({p.mean_tok:.1f} words on average)"),),
}


@dataclass(frozen=True)
class FieldKind:
    """What one kind of field is compared, normalised and blocked on.

    Attributes
    ----------
    name : str
        The kind (``Field(column, name)``).
    exact_feature : str
        The similarity feature that is 1 exactly on equal values (the *exact* level).
    level_feature : str
        The feature the *close* and *far* levels are cut from.
    close, far : float or None
        Thresholds of ``level_feature`` for the *close* and *far* levels (None: the kind
        has only *exact* and *else*).
    tf : bool
        Whether the exact level is term-frequency adjusted (a rare value weighs more).
    normalise : callable or None
        Value normaliser (a string Series to a string Series): the form in which two values
        are the same value for term frequencies, and at the exact level of ``compare`` for
        the kinds that have one. None: values are only stripped and lower-cased for term
        frequencies (the kind's comparison features normalise in their own way).
    key_rule : bool
        The adaptive blocking tries a ``key:`` rule on the field (equal normalised value).
    token_rule : str or None
        The adaptive blocking's ``token:`` rule on the field: its option suffix (``""``
        plain word tokens, ``":alnum"`` letters and digits apart); None: no token rule.
    default_rule : {"key", "token"} or None
        The rule the small default blocking (:func:`trustlab.er.blocking.default_blocking_rules`)
        gives the field; None: none.
    arity : int
        Columns the field names: 1, 2 (``"LAT,LON"``) or 0 (compares the whole record,
        built from the other fields).
    text : bool
        Inference hint: the values are text, so the field counts towards the two text-like
        fields that make :func:`trustlab.er.fields.infer_fields_report` add the whole-record
        comparison (``Field("*", "record")``).
    hints : tuple of Hint
        How a column of this kind is recognised (see :func:`recognise`); none: the kind is
        only given explicitly, joined from two inferred fields (``latlon``, see
        ``column_names``) or derived (``record``, ``codes``).
    column_names : tuple of two tuples of str
        Inference hint of a two-column kind: the lower-cased names of its first and of its
        second column; inference compares a field named like the first and one named like the
        second as one field of this kind (``lat`` + ``lon``).
    session : bool
        Whether the pairs that agree exactly on the field (and rarely do between random
        records) open an EM session of their own (:meth:`trustlab.er.scoring.FSModel._fit_by_sessions`),
        as an identifying field does. Every kind of one or two columns does; of the whole-record
        kinds, ``codes`` does (a shared rare model number identifies a product, and duplicates
        that share one still differ in their titles and prices, which the session learns) and
        ``record`` does not (agreeing on the whole record is agreeing on every field).

    Examples
    --------
    >>> k = field_kind("postcode")
    >>> k.levels, k.key_rule, k.token_rule
    (('exact', 'levenshtein', 0.75, 0.5, True), True, None)
    >>> k.normalise(pd.Series([" SW1A 1AA"])).tolist()
    ['sw1a1aa']
    """

    name: str
    exact_feature: str
    level_feature: str
    close: float | None
    far: float | None
    tf: bool = False
    normalise: Callable[[pd.Series], pd.Series] | None = None
    key_rule: bool = False
    token_rule: str | None = None
    default_rule: Literal["key", "token"] | None = None
    arity: int = 1
    text: bool = True
    hints: tuple[Hint, ...] = ()
    column_names: tuple[tuple[str, ...], ...] = ()
    session: bool = True

    @property
    def levels(self) -> tuple[str, str, float | None, float | None, bool]:
        """``(exact_feature, level_feature, close, far, tf)``: the comparison levels."""
        return (self.exact_feature, self.level_feature, self.close, self.far, self.tf)

    @property
    def derived(self) -> bool:
        """Whether the kind compares the whole record (no column of its own)."""
        return self.arity == 0

    def tf_key(self, s: pd.Series) -> pd.Series:
        """The normalised values used for term frequencies (``s``: strings, ``""`` missing).
        The built-in normalisers (:data:`_ELEMENTWISE`: each value's result depends on that
        value alone) are applied once per distinct value and spread to the rows (the same
        strings; names, places and dates repeat, so most rows are a look-up); any other
        normaliser is applied to ``s`` itself."""
        norm = self.normalise or _lower
        if norm in _ELEMENTWISE:
            return series_distinct(s, norm)
        return norm(s)


#: every field kind, in the order of :data:`FIELD_KINDS` (with its inference hints)
KINDS: dict[str, FieldKind] = {k.name: dataclasses.replace(k, hints=_HINTS.get(k.name, ())) for k in (
    FieldKind("string", "indel", "token_set", 0.90, 0.70, key_rule=True, token_rule="", default_rule="token"),
    FieldKind("text", "indel", "char3", 0.80, 0.60, key_rule=True, token_rule="", default_rule="token"),
    FieldKind("name", "jaro_winkler", "jaro_winkler", 0.92, 0.80, tf=True, normalise=_words,
              key_rule=True, token_rule="", default_rule="token"),
    FieldKind("address", "indel", "token_set", 0.90, 0.70, key_rule=True, token_rule="", default_rule="token"),
    FieldKind("phone", "exact", "levenshtein", 0.85, 0.70, key_rule=True, default_rule="key"),
    FieldKind("numeric", "rel_sim", "rel_sim", 0.99, 0.90, text=False),
    FieldKind("date", "levenshtein", "levenshtein", 0.74, 0.50, key_rule=True, default_rule="key"),
    FieldKind("exact", "exact", "exact", None, None, tf=True, normalise=_word_chars, key_rule=True,
              default_rule="key"),
    FieldKind("latlon", "geo_sim", "geo_sim", 0.96, 0.67, arity=2, text=False,
              column_names=(("lat", "latitude"), ("lon", "lng", "long", "longitude"))),
    FieldKind("tokens", "jaccard", "idf_jaccard", 0.60, 0.30, token_rule=":alnum"),
    FieldKind("email", "exact", "jaro_winkler", 0.95, 0.85, key_rule=True),
    FieldKind("postcode", "exact", "levenshtein", 0.75, 0.50, tf=True, normalise=_alnum, key_rule=True),
    FieldKind("code", "exact", "levenshtein", 0.80, 0.60, normalise=_alnum, key_rule=True),
    # model / part numbers: one character apart is another product (WRT54GL, WRV54G), so
    # only the same code after dropping punctuation agrees (TH-50PZ850U = TH50PZ850U)
    FieldKind("model", "exact", "variant", 0.75, 0.5, normalise=_alnum, key_rule=True, default_rule="key"),
    FieldKind("record", "cosine", "cosine", 0.75, 0.5, arity=0, text=False, session=False),
    FieldKind("codes", "codes", "codes", 0.5, 0.25, arity=0, text=False),
    # the numbers written inside free text (a year, a coordinate, a street number): the
    # rarity-weighted share that agree (comparisons.number_agreement, a weighted Dice); only
    # inferred where no field holds numbers of its own (fields.py)
    FieldKind("numbers", "numbers", "numbers", 0.5, 0.25, arity=0, text=False),
)}

#: the kinds a field may have; they decide how two values are compared
FIELD_KINDS: tuple[str, ...] = tuple(KINDS)
#: the column name of the whole-record comparisons (``Field(RECORD, "record")``, ``Field(CODES, "codes")``)
RECORD = "*"
CODES = "#"
#: the column name of the comparison of the numbers inside the records' text (``Field(NUMBERS, "numbers")``)
NUMBERS = "~"


#: every kind's hints, ``(rank, kind, hint)`` in the order :func:`recognise` tries them
HINT_ORDER: tuple[tuple[int, str, Hint], ...] = tuple(sorted(
    ((h.rank, k.name, h) for k in KINDS.values() for h in k.hints), key=lambda t: t[0]))


def recognise(p: ColumnProfile) -> tuple[str, str]:
    """``(kind, reason)`` of a column: the first hint of :data:`HINT_ORDER` that holds.

    Examples
    --------
    >>> recognise(ColumnProfile("zip", pd.Series(["1234", "5678"]), 2, 2))
    ('postcode', 'name says postcode')
    >>> recognise(ColumnProfile("note", pd.Series(["a b c d", "e f g h i"]), 60, 60))
    ('string', 'text (4.5 words on average)')
    """
    for _, kind, h in HINT_ORDER:
        if h.test(p):
            return kind, h.explain(p)
    raise AssertionError("the string kind's last hint always holds")  # pragma: no cover


def field_kind(kind: str) -> FieldKind:
    """The :class:`FieldKind` of a kind name, with an error that lists the valid kinds.

    Examples
    --------
    >>> field_kind("name").tf
    True
    """
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown field kind {kind!r}. Valid kinds are: {list(FIELD_KINDS)}.") from None


@dataclass(frozen=True)
class Field:
    """One compared column: its name and kind (one of :data:`FIELD_KINDS`).

    For ``kind="latlon"`` the column is ``"LAT,LON"`` (two column names joined by a comma).
    ``kind="tokens"`` is for long set-like text (co-authors, tags): only the token-set
    ratio is computed. ``kind="text"`` is short text compared by the cosine of its character
    3-gram TF-IDF (a typo moves a few 3-grams, another rare word many, and words that most
    records hold weigh little): field inference gives it to a table's only field when that
    would be a ``string``, where no whole-record comparison weighs the words (organisation
    names, affiliations; levels close >= 0.8, far >= 0.6, heuristic cut-offs measured on the
    bench's one-column files). ``Field("*", "record")`` compares whole records: TF-IDF cosine of
    the words of every other compared field (schema-agnostic, so rows whose values sit in
    different or mostly empty columns still match); ``Field("#", "codes")`` compares the
    codes found anywhere in the records (model and part numbers: shared rare code / shared
    common code / different codes / no code); ``Field("~", "numbers")`` the numbers written
    inside the records' text (:func:`text_numbers`, :func:`trustlab.er.comparisons.number_agreement`).

    Attributes
    ----------
    column : str
        The column compared (``"LAT,LON"`` for ``kind="latlon"``).
    kind : str
        One of :data:`FIELD_KINDS` (default ``"string"``).

    Examples
    --------
    >>> Field("name", "name")
    Field(column='name', kind='name')
    """

    column: str
    kind: str = "string"

    def columns(self) -> list[str]:
        k = KINDS.get(self.kind)
        arity = 1 if k is None else k.arity
        if arity == 0:
            return []
        return self.column.split(",") if arity == 2 else [self.column]



# ----------------------------------------------------------------------------- what the stages share
# (read by fields, comparisons, scoring and distributed: kept here so that no stage calls back into
# an earlier one)

#: a word of the whole-record comparison (letters and digits apart)
_RECORD_TOKEN = r"[^\W\d_]+|\d+"


def record_fields(fields: Sequence[Field]) -> list[Field]:
    """The fields whose words make up a record's text (:func:`record_text`): the text kinds
    of one column (a kind not in :data:`KINDS` counts as text)."""
    return [f for f in fields if (k := KINDS.get(f.kind)) is None or (k.arity == 1 and k.text)]


#: at most this many columns of a record's text are told apart by the whole-record
#: comparisons (bits of an int64); later columns share the last bit
MAX_PARTS = 62


def record_slots(n_columns: int) -> int:
    """The number of columns of a record's text whose shared words
    :func:`~trustlab.er.comparisons.shared_parts` tells apart: every column up to
    :data:`MAX_PARTS` (later columns share the last bit and are left out)."""
    return min(int(n_columns), MAX_PARTS)


def record_slot_names(fields: Sequence[Field]) -> list[str]:
    """The columns of :func:`~trustlab.er.comparisons.shared_parts`'s slots, in order: the
    record text's columns (:func:`record_parts`) by name, as the whole-record comparisons
    number them, the first :data:`MAX_PARTS`."""
    names = [c for f in record_fields(fields) for c in f.columns()]
    order = sorted(range(len(names)), key=lambda q: (str(names[q]), q))
    return [str(names[q]) for q in order][:record_slots(len(names))]


def pair_width(fields: Sequence[Field]) -> int:
    """How many compared fields a candidate pair costs in memory, as the pair budget counts
    them (:func:`trustlab.er.defaults.default_pair_budget`, ``check_pair_budget``): one per
    field, plus half a field for each of the whole-record comparison's shared parts (one
    float64 feature per column of the record's text, at most :data:`MAX_PARTS`, held twice
    while the feature matrix is built, against a field's ``PAIR_FIELD_BYTES`` of 32).

    Examples
    --------
    >>> pair_width([Field("name", "name"), Field("city", "name")])  # no whole-record comparison
    2
    >>> pair_width([Field("name", "name"), Field("city", "name"), Field("*", "record")])
    4
    """
    if not any(getattr(f, "kind", None) == "record" for f in fields):
        return len(fields)
    return len(fields) + (len(record_slot_names(fields)) + 1) // 2


def record_text(df: pd.DataFrame, fields: Sequence[Field]) -> pd.Series:
    """The words of every compared text field of a record, in one string (the input of the
    whole-record comparison, ``kind="record"``, and of the codes one). Numbers and coordinates
    are compared as numbers by their own fields: as words (``30.3167`` -> ``30``, ``3167``) they
    would only lengthen the record's vector and pass for model numbers."""
    parts = record_parts(df, fields)
    if not parts:
        return pd.Series([""] * len(df), index=df.index)
    out = parts[0]
    for p in parts[1:]:
        out = out + " " + p
    return out


def record_parts(df: pd.DataFrame, fields: Sequence[Field]) -> list[pd.Series]:
    """The columns whose words make up a record's text (:func:`record_text`), one string
    Series each, in order: the whole-record comparisons read which of them a record fills
    (a word of a column the other record leaves empty is no disagreement)."""
    return [df[c].fillna("").astype(str) for f in record_fields(fields) for c in f.columns()]


#: what separates the words in which :func:`code_tokens` looks for codes: spaces, punctuation and
#: ``*`` (list separators such as ``G06F**H04J**H04L``, technology classes of a patent: three codes,
#: not one glued ``g06fh04jh04l``)
_CODE_SPLIT = r"[\s,;:()\[\]|\"'!?*]+"


def code_tokens(text: pd.Series) -> pd.Series:
    """The codes in each record's text: words that mix letters and digits (model numbers
    such as ``TH-50PZ850U``, ``MSMT2G/TQ``) of at least 4 characters, or runs of at least 5
    digits (part numbers, ids, phone numbers), lower case with ``- / . _`` removed, so
    ``TH-50PZ850U`` and ``th50pz850u`` are one code; a word with ``/`` also gives its part
    before the ``/``. Ordinals (``5th``) and short quantities (``4gb``) are not codes."""
    parts = [_code_parts(text.iloc[a:b]) for a, b in spans(len(text), _CODE_ROWS)] if len(text) \
        else [_code_parts(text)]
    # every word's codes, then every word-before-a-slash's, as one pass over all records gives them
    return pd.concat([p[0] for p in parts] + [p[1] for p in parts])


#: records per piece of :func:`code_tokens` (its string passes, ~10 us a record): a signal waits for one
_CODE_ROWS = 1 << 14


def _code_parts(text: pd.Series) -> tuple[pd.Series, pd.Series]:
    """:func:`code_tokens` of some records: the codes of their words, and those of the
    parts before a ``/``."""
    words = text.fillna("").astype(str).str.lower().str.split(_CODE_SPLIT, regex=True)
    ex = words.explode().dropna()
    ex = ex[ex.str.len() >= 4]
    head = ex[ex.str.contains("/", regex=False)].str.split("/").str[0]
    return _codes_of(ex), _codes_of(head)


def _codes_of(ex: pd.Series) -> pd.Series:
    """The codes among the words ``ex`` (:func:`code_tokens`), normalised; each distinct word
    looked at once (:func:`~trustlab._chunks.series_distinct`: the same Series)."""
    norm = series_distinct(ex, _code_norm)
    keep = series_distinct(ex, lambda w: _is_code(_code_norm(w)))
    return norm[keep.fillna(False)]


def _code_norm(ex: pd.Series) -> pd.Series:
    """Words without ``- / . _ + # *`` (for :func:`_codes_of`)."""
    return ex.str.replace(r"[-/._+#*]+", "", regex=True)


def _is_code(norm: pd.Series) -> pd.Series:
    """Whether each :func:`_code_norm` word is a code (for :func:`_codes_of`)."""
    digit = norm.str.contains(r"\d")
    alpha = norm.str.contains(r"[^\W\d_]")
    ordinal = norm.str.fullmatch(r"\d+(st|nd|rd|th|s)")
    return (digit & alpha & (norm.str.len() >= 4) & ~ordinal) | norm.str.fullmatch(r"\d{5,}")


#: kind -> (feature that is 1 exactly on equal values, level feature, close threshold,
#: far threshold, term-frequency adjusted); read from the registry :data:`trustlab.er.kinds.KINDS`
COMPARISON_LEVELS: dict[str, tuple[str, str, float | None, float | None, bool]] = {
    k.name: k.levels for k in KINDS.values()
}
#: the comparison levels of every field (and *missing*: either value empty)
LEVEL_NAMES = ("exact", "close", "far", "else")


def tf_keys(df: pd.DataFrame, f: Field) -> np.ndarray:
    """Normalised value per record used for term frequencies (same normalisation as
    :func:`trustlab.er.comparisons.compare`); ``""`` when missing."""
    s = df[f.column].fillna("").astype(str)
    v = KINDS[f.kind].tf_key(s)  # (built-in normalisers once per distinct value)
    return v.fillna("").to_numpy(dtype=object)


def needed_features(fields: Sequence[Field]) -> dict:
    """column -> the feature names the comparison levels of ``fields`` are cut from (the
    exact feature and the level feature of each kind), and ``shared`` for the whole-record
    comparison (the part of its cosine each column's shared words make, which the scoring
    takes off as already counted by the fields): what the Fellegi-Sunter model needs of
    :func:`trustlab.er.comparisons.compare` (its ``only=``).

    Examples
    --------
    >>> needed_features([Field("name", "name")])
    {'name': {'jaro_winkler'}}
    """
    out: dict = {}
    for f in fields:
        ex, sim = KINDS[f.kind].levels[:2]
        out.setdefault(f.column, set()).update({ex, sim} | ({"shared"} if f.kind == "record" else set()))
    return out


#: a number standing on its own in text (not part of a word or code such as ``g06f`` or ``4gb``):
#: an optional minus sign, digits, an optional decimal part
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
#: at most this many numbers of a record's text are compared (the first ones)
MAX_NUMBERS = 12


def text_numbers(text: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The numbers standing on their own in each record's text (:data:`_NUMBER`; the first
    :data:`MAX_NUMBERS`), as ``(values, decimal)``: two ``(n, MAX_NUMBERS)`` arrays, the
    values (NaN padded) and whether each was written with a decimal part.

    Examples
    --------
    >>> v, d = text_numbers(pd.Series(["meier 1949 7 22", "30.3167 -4.76667 http://x.org/", "g06f 4gb"]))
    >>> v[0, :3].tolist(), v[1, :2].tolist(), d[1, :2].tolist(), bool(np.isnan(v[2]).all())
    ([1949.0, 7.0, 22.0], [30.3167, -4.76667], [True, True], True)
    """
    n = len(text)
    vals = np.full((n, MAX_NUMBERS), np.nan)
    dec = np.zeros((n, MAX_NUMBERS), bool)
    for r, t in enumerate(text.fillna("").astype(str).to_numpy(dtype=object)):
        if not any(ch.isdigit() for ch in t):
            continue
        for k, m in enumerate(_NUMBER.finditer(t)):
            if k >= MAX_NUMBERS:
                break
            w = m.group(0)
            try:
                vals[r, k] = float(w)
            except ValueError:  # pragma: no cover - the pattern only matches numbers
                continue
            dec[r, k] = "." in w
    return vals, dec
