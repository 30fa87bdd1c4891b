"""The field kinds in one place: what each kind of field is compared, normalised and blocked on.

One :class:`FieldKind` record per kind (:data:`KINDS`, in the order of :data:`FIELD_KINDS`)
declares

* its **comparison levels** — the feature that is 1 exactly on equal values, the feature
  the *close* / *far* levels are cut from, the two thresholds and whether the exact level
  is term-frequency adjusted (:data:`trustlab.er.comparisons.COMPARISON_LEVELS` is read
  from here);
* its **value normaliser** — the form in which two values count as the same value for
  term frequencies (:func:`trustlab.er.comparisons.tf_keys`) and, for the kinds that have
  one of their own, at the exact level of :func:`trustlab.er.scoring.compare`;
* its **blocking role** — whether the adaptive blocking tries a ``key:`` rule on it, which
  ``token:`` rule (if any) it gets, and which rule the small default blocking gives it
  (:func:`trustlab.er.blocking.adaptive_blocking_rules`,
  :func:`trustlab.er.blocking.default_blocking_rules`);
* its **columns** — one column, two (``latlon``: ``"LAT,LON"``) or none (the whole-record
  comparisons ``record`` and ``codes``, derived from the other fields).

The similarity features themselves are computed per kind by
:func:`trustlab.er.scoring.compare` (one function per kind).

This module also holds :class:`Field` (a compared column and its kind), so that reading
records (:mod:`trustlab.er.records`) and inferring fields (:mod:`trustlab.er.fields`) both
import it from here rather than from each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

import pandas as pd

__all__ = ["FieldKind", "KINDS", "FIELD_KINDS", "RECORD", "CODES", "Field", "field_kind"]


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

    @property
    def levels(self) -> tuple[str, str, float | None, float | None, bool]:
        """``(exact_feature, level_feature, close, far, tf)``: the comparison levels."""
        return (self.exact_feature, self.level_feature, self.close, self.far, self.tf)

    @property
    def derived(self) -> bool:
        """Whether the kind compares the whole record (no column of its own)."""
        return self.arity == 0

    def tf_key(self, s: pd.Series) -> pd.Series:
        """The normalised values used for term frequencies (``s``: strings, ``""`` missing)."""
        return (self.normalise or _lower)(s)


#: every field kind, in the order of :data:`FIELD_KINDS`
KINDS: dict[str, FieldKind] = {k.name: k for k in (
    FieldKind("string", "indel", "token_set", 0.90, 0.70, key_rule=True, token_rule="", default_rule="token"),
    FieldKind("name", "jaro_winkler", "jaro_winkler", 0.92, 0.80, tf=True, normalise=_words,
              key_rule=True, token_rule="", default_rule="token"),
    FieldKind("address", "indel", "token_set", 0.90, 0.70, key_rule=True, token_rule="", default_rule="token"),
    FieldKind("phone", "exact", "levenshtein", 0.85, 0.70, key_rule=True, default_rule="key"),
    FieldKind("numeric", "rel_sim", "rel_sim", 0.99, 0.90, text=False),
    FieldKind("date", "levenshtein", "levenshtein", 0.74, 0.50, key_rule=True, default_rule="key"),
    FieldKind("exact", "exact", "exact", None, None, tf=True, normalise=_word_chars, key_rule=True,
              default_rule="key"),
    FieldKind("latlon", "geo_sim", "geo_sim", 0.96, 0.67, arity=2, text=False),
    FieldKind("tokens", "jaccard", "idf_jaccard", 0.60, 0.30, token_rule=":alnum"),
    FieldKind("email", "exact", "jaro_winkler", 0.95, 0.85, key_rule=True),
    FieldKind("postcode", "exact", "levenshtein", 0.75, 0.50, tf=True, normalise=_alnum, key_rule=True),
    FieldKind("code", "exact", "levenshtein", 0.80, 0.60, normalise=_alnum, key_rule=True),
    # model / part numbers: one character apart is another product (WRT54GL, WRV54G), so
    # only the same code after dropping punctuation agrees (TH-50PZ850U = TH50PZ850U)
    FieldKind("model", "exact", "exact", None, None, normalise=_alnum, key_rule=True, default_rule="key"),
    FieldKind("record", "cosine", "cosine", 0.75, 0.5, arity=0, text=False),
    FieldKind("codes", "codes", "codes", 0.5, 0.25, arity=0, text=False),
)}

#: the kinds a field may have; they decide how two values are compared
FIELD_KINDS: tuple[str, ...] = tuple(KINDS)
#: the column name of the whole-record comparisons (``Field(RECORD, "record")``, ``Field(CODES, "codes")``)
RECORD = "*"
CODES = "#"


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
    ratio is computed. ``Field("*", "record")`` compares whole records: TF-IDF cosine of
    the words of every other compared field (schema-agnostic, so rows whose values sit in
    different or mostly empty columns still match); ``Field("#", "codes")`` compares the
    codes found anywhere in the records (model and part numbers: shared rare code / shared
    common code / different codes / no code).

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
