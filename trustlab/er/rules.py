"""The rule language and the blocking keys, shared by every stage that reads a rule.

A blocking rule is written as a string (``"key:A+B"``, ``"token:title:alnum@50"``; the
syntax is described in :mod:`trustlab.er.blocking`) and held as a :class:`Rule`:
:func:`parse_rule` reads one, ``str(rule)`` writes one that reads back the same,
:func:`quote_column` quotes a column name that holds a character of the syntax.
:func:`key_codes` / :func:`key_values` compute a ``key:`` rule's key per record with
blocking's normalisation.

Shared, not a stage: blocking (:mod:`trustlab.er.blocking`) proposes pairs with these
rules, the Fellegi-Sunter scorer (:mod:`trustlab.er.scoring`) reads which fields a
``key:`` rule selected on, a saved model (:mod:`trustlab.er.model`) stores rules as
strings, and the field and column-map specs (:mod:`trustlab.er.fields`,
:mod:`trustlab.er.linking`) quote column names the same way
(:func:`split_outside_quotes`, :func:`unquote`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from trustlab._chunks import spans

__all__ = ["RULE_KINDS", "Rule", "parse_rule", "quote_column", "canonical_rules", "split_rules", "key_codes",
           "key_values", "split_outside_quotes", "unquote"]


def split_outside_quotes(text: str, seps: str) -> list[str]:
    """``text`` split at the characters of ``seps`` that are not inside a backquoted or
    double-quoted column name (the quotes stay in the pieces)."""
    out, cur, q = [], [], None
    for ch in text:
        if q is None and ch in "`\"":
            q = ch
        elif q is not None and ch == q:
            q = None
        if q is None and ch in seps:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def unquote(name: str) -> str:
    """A column name as written in a spec: bare (surrounding spaces dropped) or in
    backquotes / double quotes (the quote doubled inside stands for itself)."""
    t = name.strip()
    if len(t) >= 2 and t[0] in "`\"" and t[-1] == t[0]:
        return t[1:-1].replace(t[0] * 2, t[0])
    return t


#: the kinds of blocking rule
RULE_KINDS = ("key", "token", "qgram", "sorted", "nearest", "all")


#: characters that make a column name need quoting in a rule string
_SPECIAL = re.compile(r"[:+@`\"';,]|^\s|\s$|^$")


@dataclass(frozen=True)
class Rule:
    """One blocking rule as a structured object: ``kind`` (one of :data:`RULE_KINDS`),
    the ``columns`` it reads, its ``option`` (key prefix length, ``"alnum"`` for token,
    q for qgram, window for sorted, neighbours per record for nearest), its own block size
    limit ``cap`` and ``near``: in a
    block over the limit each record keeps its ``near`` most similar records instead of
    none (``"token:title@50/3"``; :mod:`trustlab.er.blocking`).

    ``str(rule)`` is the rule string, with column names quoted in backquotes where they
    hold ``: + @ ; ,`` quotes or surrounding spaces (a backquote inside is doubled), so
    that :func:`parse_rule` reads back the same rule for *any* column name.

    Examples
    --------
    >>> r = Rule("token", ("http://dbpedia.org/ontology#name",), "alnum", 50)
    >>> str(r)
    'token:`http://dbpedia.org/ontology#name`:alnum@50'
    >>> parse_rule(str(r)) == r
    True
    """

    kind: str
    columns: tuple = ()
    option: str | None = None
    cap: int | None = None
    near: int | None = None

    def __str__(self) -> str:
        if self.kind == "all":
            return "all"
        s = f"{self.kind}:" + "+".join(quote_column(c) for c in self.columns)
        if self.option is not None:
            s += f":{self.option}"
        if self.cap is not None:
            s += f"@{self.cap}"
        if self.near is not None:
            s += f"/{self.near}"
        return s


def quote_column(column: str) -> str:
    """``column`` as it is written in a rule string: as is, or in backquotes (a backquote
    inside doubled) when it holds a character the rule syntax uses.

    Examples
    --------
    >>> quote_column("surname"), quote_column("Site name"), quote_column("a:b")
    ('surname', 'Site name', '`a:b`')
    """
    column = str(column)
    return "`" + column.replace("`", "``") + "`" if _SPECIAL.search(column) else column


def _read_quoted(s: str, i: int) -> tuple[str, int]:
    """The quoted name starting at ``s[i]`` (a backquote or a double quote; the quote
    doubled inside stands for itself) and the index after its closing quote."""
    q = s[i]
    out, i = [], i + 1
    while i < len(s):
        if s[i] == q:
            if i + 1 < len(s) and s[i + 1] == q:
                out.append(q)
                i += 2
                continue
            return "".join(out), i + 1
        out.append(s[i])
        i += 1
    raise ValueError(f"blocking rule {s!r}: the column name opened with {q} is not closed")


def _bad_rule(spec: str, why: str) -> ValueError:
    return ValueError(
        f"blocking rule {spec!r}: {why}. Rules read KIND:COLUMN[+COLUMN][:OPTION][@LIMIT[/NEAR]], e.g. "
        "'token:name', 'token:name@50/3', "
        "'key:surname+zip', 'qgram:title:3', 'sorted:name:10', 'all'; quote a column name that holds : + @ "
        "in backquotes or double quotes, e.g. 'token:`http://x.org/ontology#name`'"
    )


def _strict_parse(spec: str) -> Rule:
    s = spec.strip()
    if s == "all":
        return Rule("all")
    kind, sep, rest = s.partition(":")
    kind = kind.strip()
    if kind not in RULE_KINDS:
        raise ValueError(
            f"unknown blocking rule kind {kind!r} in {spec!r}; valid kinds are {list(RULE_KINDS)}"
        )
    if kind == "all":
        raise _bad_rule(spec, "'all' takes no column")
    if not sep or not rest:
        raise ValueError(f"blocking rule {spec!r} needs a column, e.g. 'token:name'")
    cols: list[str] = []
    i, n = 0, len(rest)
    option = cap = near = None
    while True:
        if i < n and rest[i] in "`\"":
            c, i = _read_quoted(rest, i)
        else:
            j = i
            while j < n and rest[j] not in ":+@":
                j += 1
            c, i = rest[i:j], j
        if c == "":
            raise _bad_rule(spec, "an empty column name")
        cols.append(c)
        if i < n and rest[i] == "+":
            i += 1
            continue
        break
    if i < n and rest[i] == ":":
        j = rest.find("@", i + 1)
        j = n if j < 0 else j
        option, i = rest[i + 1 : j].strip(), j
    if i < n and rest[i] == "@":
        c, _, k = rest[i + 1 :].partition("/")
        c = c.strip()
        if not c.isdigit() or int(c) < 2:
            raise ValueError(f"blocking rule {spec!r}: the block size limit after '@' must be an integer >= 2, "
                             f"e.g. 'token:title@50'")
        if _ and (not k.strip().isdigit() or int(k) < 1):
            raise ValueError(f"blocking rule {spec!r}: the neighbours kept after '/' must be an integer >= 1, "
                             f"e.g. 'token:title@50/3'")
        cap, near, i = int(c), (int(k) if _ else None), n
    if i != n:
        raise _bad_rule(spec, f"unexpected {rest[i:]!r} after the column name(s)")
    if near is not None and kind != "token":
        raise _bad_rule(spec, "only a token rule keeps near neighbours in its purged blocks ('/K')")
    return Rule(kind, tuple(cols), option, cap, near)


def _lenient_parse(spec: str, columns: Sequence[str]) -> Rule | None:
    """An unquoted rule whose column names hold ``:``/``+``/``@`` (``token:http://x#name``):
    the reading whose column(s) are all among ``columns``, else None."""
    s = spec.strip()
    kind, _, rest = s.partition(":")
    if kind.strip() not in RULE_KINDS or not rest:
        return None
    m = re.search(r"@(\d+)(?:/(\d+))?$", rest)
    known = set(map(str, columns))
    near = int(m.group(2)) if m and m.group(2) else None
    if near is not None and (near < 1 or kind.strip() != "token"):
        return None
    for body, cp in ((rest[: m.start()], int(m.group(1))), (rest, None)) if m else ((rest, None),):
        if cp is not None and cp < 2:
            continue  # not a valid limit: the strict reading's error stands
        splits = [(body, None)]
        if ":" in body:
            head, _, opt = body.rpartition(":")
            splits.insert(0, (head, opt.strip()))
        for colpart, opt in splits:
            for cols in ([colpart], colpart.split("+")):
                if all(c in known for c in cols):
                    return Rule(kind.strip(), tuple(cols), opt, cp, near if cp is not None else None)
    return None


def parse_rule(spec: "str | Rule", columns: Sequence[str] | None = None) -> Rule:
    """Read a blocking rule string into a :class:`Rule` (a :class:`Rule` is returned as is).

    Column names are bare (``token:Site name``) or quoted in backquotes or double quotes
    (``token:`http://x.org/ontology#name```, the quote doubled inside). With ``columns``
    (the records' column names), an unquoted name that holds ``:``, ``+`` or ``@`` is
    still found when exactly the text between the kind and the option names a column.

    Examples
    --------
    >>> parse_rule("key:surname+zip:3@50")
    Rule(kind='key', columns=('surname', 'zip'), option='3', cap=50, near=None)
    >>> parse_rule("token:title@50/3")
    Rule(kind='token', columns=('title',), option=None, cap=50, near=3)
    >>> parse_rule('token:"a:b"').columns
    ('a:b',)
    >>> parse_rule("token:http://x.org/o#name:alnum", columns=["http://x.org/o#name"]).columns
    ('http://x.org/o#name',)
    """
    if isinstance(spec, Rule):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"a blocking rule is a string such as 'token:name' (or a Rule); got {type(spec).__name__}")
    try:
        rule = _strict_parse(spec)
    except ValueError:
        if columns is None or any(q in spec for q in "`\""):
            raise
        rule = _lenient_parse(spec, columns)
        if rule is None:
            raise
        return rule
    if columns is not None and rule.kind != "all" and not all(c in set(map(str, columns)) for c in rule.columns):
        if not any(q in spec for q in "`\""):
            rule = _lenient_parse(spec, columns) or rule
    return rule


def canonical_rules(rules: "Sequence[str | Rule] | str | Rule", columns: Sequence[str] | None = None) -> list[str]:
    """Rule strings that :func:`parse_rule` reads back as the same rules (column names
    quoted where needed); ``columns`` resolves unquoted names that hold ``:`` or ``+``.

    Examples
    --------
    >>> canonical_rules(["token:a:b"], columns=["a:b"])
    ['token:`a:b`']
    """
    if isinstance(rules, (str, Rule)):
        rules = [rules]
    return [str(parse_rule(r, columns)) for r in rules]


def split_rules(text: str) -> list[str]:
    """Rules written as one string separated by ``;`` (CLI ``--blocking``); a ``;`` inside
    a quoted column name does not split.

    Examples
    --------
    >>> split_rules("token:name; key:`a;b`")
    ['token:name', 'key:`a;b`']
    """
    return [r.strip() for r in split_outside_quotes(text, ";") if r.strip()]


def _split_cap(spec: "str | Rule") -> tuple[str, int | None]:
    """``"token:title@50"`` -> ``("token:title", 50)``; no suffix -> ``(spec, None)``
    (a ``/K`` of near neighbours is dropped with the limit)."""
    r = parse_rule(spec)
    return str(Rule(r.kind, r.columns, r.option)), r.cap


def _int_option(rule: Rule, spec, default: int | None, what: str) -> int | None:
    if rule.option is None or rule.option == "":
        return default
    try:
        v = int(rule.option)
    except ValueError:
        v = 0
    if v < 1:
        raise _bad_rule(str(spec), f"its option must be a positive integer ({what}); got {rule.option!r}")
    return v


#: records per piece of :func:`_norm` (each pandas string method is one C loop over its records)
_NORM_ROWS = 1 << 15


_NOT_KEY = re.compile(r"[^0-9a-z ]+")


def string_values(vals: pd.Series) -> list | None:
    """``vals.fillna("").astype(str)`` as a list, or None when a value is neither a string
    nor missing (whose ``astype(str)`` is left to pandas). The values are the objects held
    (a ``str`` subclass stays one); the type test is pandas' C loop (``is_string_array``)."""
    from pandas._libs import lib

    arr = vals.to_numpy(dtype=object)
    if not arr.size:
        return []
    miss = pd.isna(arr)
    if miss.any():
        arr = arr.copy()  # (to_numpy may return the Series' own array)
        arr[miss] = ""
    return arr.tolist() if lib.is_string_array(arr, skipna=False) else None


def _distinct_strings(s: pd.Series) -> tuple[np.ndarray, list] | None:
    """``(codes, values)``: each row's position among the distinct values of ``s`` (-1 when
    missing) and those values (strings, in order of first appearance), or None when a value
    is neither a string nor missing (two such values may be one to a hash table, ``1`` and
    ``1.0``, and not to ``str``)."""
    codes, uniq = pd.factorize(s, use_na_sentinel=True)
    vals = string_values(pd.Series(np.asarray(uniq, dtype=object), dtype=object))
    return None if vals is None else (codes, vals)


def _expand_rows(codes: np.ndarray, nvals: int, at: np.ndarray, item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-value items spread to the rows that hold the value: ``(row, item)`` for each row
    (``codes``: its value's position among ``nvals`` values) and each item of its value
    (``at``: the value of each item), rows ascending, a value's items in their order (the
    blocking keys and tokens found once per distinct value, here and in
    ``trustlab.er.distributed``)."""
    n = len(codes)
    if not len(at):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    o = np.argsort(at, kind="stable")
    item = np.asarray(item)[o]
    ptr = np.zeros(nvals + 1, np.int64)
    np.add.at(ptr, at + 1, 1)
    ptr = np.cumsum(ptr)
    lens = np.diff(ptr)[codes]
    total = int(lens.sum())
    sel = np.repeat(ptr[:-1][codes] - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(total)
    return np.repeat(np.arange(n, dtype=np.int64), lens), item[sel]


def _norm(s: pd.Series, spaces: bool = True) -> pd.Series:
    """A key column's values lower-cased, runs of characters other than ``0-9a-z`` and spaces
    to one space, stripped (missing: ``""``); without ``spaces``, the spaces then removed (a
    ``key:`` rule's value). When every value is a string or missing, one Python pass over the
    distinct values (in pieces of :data:`_NORM_ROWS`: a signal waits for one piece), spread to
    the records; otherwise the pandas chain (``fillna("").astype(str).str.lower()...``)."""
    found = _distinct_strings(s)
    if found is not None:
        codes, vals = found
        sub = _NOT_KEY.sub
        out = []
        for a, b in spans(len(vals), _NORM_ROWS):
            if spaces:
                out += [sub(" ", x.lower()).strip() for x in vals[a:b]]
            else:
                out += [sub(" ", x.lower()).strip().replace(" ", "") for x in vals[a:b]]
        out.append("")  # the missing rows' (code -1)
        got = np.empty(len(out), dtype=object)
        got[:] = out
        return pd.Series(got[codes], index=s.index, dtype=object, name=s.name)
    if len(s) > _NORM_ROWS:  # in pieces of records: a signal waits for one piece
        return pd.concat([_norm(s.iloc[a:b], spaces) for a, b in spans(len(s), _NORM_ROWS)])
    out = s.fillna("").astype(str).str.lower().str.replace(r"[^0-9a-z ]+", " ", regex=True).str.strip()
    return out if spaces else out.str.replace(" ", "", regex=False)


def key_codes(df: pd.DataFrame, cols: Sequence[str], prefix: int | None = None,
              cache: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The blocking key of ``key:A+B`` rules: per record an int64 code of its normalised
    values of ``cols`` (spaces removed, the first ``prefix`` characters), and whether it
    has the key (every part non-empty). ``cache`` (column -> normalised values) lets
    several keys share one normalisation of a column."""
    vals, valid = key_values(df, cols, prefix, cache)
    return pd.factorize(vals)[0].astype(np.int64), valid


def key_values(df: pd.DataFrame, cols: Sequence[str], prefix: int | None = None,
               cache: dict | None = None) -> tuple[pd.Series, np.ndarray]:
    """:func:`key_codes` before coding: the key strings (parts joined by ``|``) and
    whether each record has the key."""
    vals, valid = None, np.ones(len(df), bool)
    for c in cols:
        v = cache.get(c) if cache is not None else None
        if v is None:
            v = _norm(df[c], spaces=False)
            if cache is not None:
                cache[c] = v
        if prefix:
            v = v.str[:prefix]
        valid &= (v != "").to_numpy()  # a compound key needs every part
        vals = v if vals is None else vals + "|" + v
    return vals, valid
