"""Entity resolution with every stage on Dask: :func:`resolve_distributed`.

:func:`trustlab.resolve` holds the records, the candidate pairs and their features in one
process. Here each stage runs on the partitions of Dask collections, so a table that does
not fit one machine can be resolved on a cluster:

1. **read** — a Dask DataFrame, a directory (or glob) of parquet / CSV files, or a pandas
   table; rows are put in the canonical order of :func:`trustlab.resolve` (sorted by record
   id) by a distributed sort, and each record gets its canonical position ``idx``. The
   records are counted (parquet: from the files' metadata, no pass), sampled and shuffled as
   the reader gives them (text perhaps Arrow strings); text becomes Python objects, as the
   local pipeline reads it, for the sample's rows and once per record, as each sorted
   partition is written (:func:`_source`).
2. **infer** (driver, bounded) — fields and default blocking rules from a sample of at most
   ``sample_size`` records (the whole table when it is that small, so the choices are
   :func:`trustlab.resolve`'s; on a strict sample they are estimates).
3. **corpus statistics** — the document frequencies of IDF-weighted ``tokens`` fields (and
   the records holding each number of the ``numbers`` comparison, its rarity) are value counts
   summed over the partitions (the encoded kinds' statistics come with step 4).
4. **encode** — each record is normalised ONCE, on the worker holding its partition (each
   distinct value of a column once per partition, :func:`_per_value`), into compact per-field
   arrays (:func:`_encode`): normalised strings (and their hashes) for the string
   similarities, 64-bit hashes for exact agreement, numbers, and sparse rows of token hashes
   for the whole-record comparisons, whose document frequencies are summed over the
   partitions by hash and then turned into TF-IDF / rare-code weights (:func:`_weigh`), so a
   pair's features are those of the whole table. The term-frequency tables of the
   Fellegi-Sunter model are the encoded values' counts, summed by a tree of tasks, and set on
   the encodings with the weights. Kinds without an encoder (``tokens``) keep
   their raw columns and are compared as :func:`~trustlab.er.comparisons.compare` does.
5. **blocking** — every rule's block keys (normalised keys, tokens or q-grams, as
   :mod:`trustlab.er.blocking` makes them; hashed to 64 bits with the rule's number) go
   through one shuffle by key, so every block lands whole in one partition, where blocks
   larger than the limit are purged and the pairs of each block are emitted (never all
   pairs, never a shuffle of all pairs). The pair stream — ``(i, j)`` only — is
   range-partitioned on the first record (bounds from a histogram, about
   ``pairs_per_partition`` pairs each); duplicates (a pair two rules propose) meet in one
   partition and are dropped there.
6. **comparisons** — each partition of pairs gathers the encodings of the records it
   touches from the record partitions that hold them (a bounded join by id range: at most
   twice ``pairs_per_partition`` records), compares them, and keeps the comparison levels
   and term frequencies the model needs.
7. **model** — Fellegi-Sunter by session EM (:meth:`FSModel.fit_from_counts`) on the
   *counts* of each distinct level row, summed over the partitions: the same sufficient
   statistics as the local fit over every candidate pair, in memory that grows with the
   number of distinct level rows (thousands), not of pairs; u from random record pairs
   (:func:`~trustlab.er.defaults.random_pairs`, the same draw as the local run, compared in
   pieces on the workers). The
   fitted model is sent to the workers and every pair is scored where it lies.
8. **components** — connected components of the positive-weight graph: union-find on
   each partition of the scored pairs (workers), then the per-partition maps (one row per
   record in a positive pair) are merged on the driver.
9. **solve** — records (their ids) and pairs are range-partitioned by component, so each
   component lands whole in one partition; there the pairs it misses are completed
   (``complete_components``; their records' encodings read from the record partitions'
   files, as in step 6) and scored, and the component is clustered with
   :func:`~trustlab.er.cluster.cluster_pairs` (xER: closed form, enumeration, or the
   partition layer).
10. **write** — partitioned parquet, one row per record: the record as read plus
   ``entity_id``, the id of the entity's record that comes first in the canonical order
   (its smallest id), so entity ids do not depend on partitioning or on the run.

For the same seed and options this gives the entities of :func:`trustlab.resolve` (the
tests compare them on generated records and on a bundled table), as long as the
inference sample is the whole table; on a larger table the fields and rules come from the
sample and may differ from what the local run would infer from all the records. Four
local-only additions are left out here, so where they act locally the entities can differ:
the re-estimate of ``m`` from the clusters (``trustlab.er.pipeline._refit_from_clusters``,
which acts only where many pairs are joined against their own score: not on the generated
records; ``Resolution.settings["cluster_refits"]`` says whether it acted locally),
the blocking strata of a model whose session EM had a single voting field (a table of two
identifying fields, such as first and last name only: :meth:`FSModel._fit_strata
<trustlab.er.scoring.FSModel._fit_strata>` needs the candidate pairs' key states; here the
pooled model scores every pair),
the near neighbours that the local default token rules keep in the blocks they purge
(``token:COL@CAP/K``, :data:`trustlab.er.blocking.NEAR_NEIGHBOURS`; a user rule with ``/K``
is refused here), and the completion of positive components too large to complete whole by
the pairs of records whose positive neighbourhoods overlap
(:data:`trustlab.er.scoring.NEIGHBOUR_OVERLAP`). None acts on the generated records of
``bench/er_scale.py`` (no purged block's neighbours fit the budget there; components are small;
the re-estimate's gate stays shut).
The small positive components completed whole are chosen by one rule in both paths (the
smallest first, ties by their first record, within
:func:`~trustlab.er.scoring.completion_pair_budget`: what the default pair budget leaves after
the candidate pairs, at least one pair per record), here from every component on the driver
(:func:`~trustlab.er.scoring.completion_cutoff`). (Until stop 45 the local completion stayed within what
the pair budget left, nothing at 200,000 generated records, while this path completed every
small component, so 14 of 200,000 records differed; ``bench/results/er_scale.md``.)
Block keys, exact values, whole-record tokens and the normalised strings' value codes (which
value pairs are scored once; exact agreement of e-mails, postcodes, codes and phones) are
compared by 64-bit hash: two distinct values that share a hash (probability about
``k^2 / 2^65`` among ``k`` distinct values, ~3e-8 for a million) would count as equal, the one
way the result can differ from the local run's.

**Memory.** No collection stays in the workers' memory between stages: every stage's tasks
write their partitions as files in a work directory (``work_dir``; :class:`_Work`) — the
records in canonical order (partitions of at most :data:`RECORDS_PER_PARTITION`), their
match view, their encodings (arrays memory-mapped when a partition of pairs gathers its
records, so only the touched records' pages are read: :class:`_EncFile`), the block keys,
the pair stream, its levels, its scores and the solved components — and the next stage's
tasks read them back; each directory is removed as soon as no later stage reads it, the
whole directory at the end. The shuffles (sort, blocking, pair stream, components) are
Dask's, which keep their own partitions on disk (``p2p``). What a worker holds is therefore
its tasks' working set, bounded by the partition sizes, plus the broadcast objects (the
model with its TF tables, the whole-record document frequencies, and in the solve step the
component map: 16 bytes per record that has a positive pair); the disk holds about twice the
records plus their encodings and pairs.

Not distributed: field and rule inference (a bounded sample on the driver), the EM itself
(on aggregated counts), the merge of the component maps (driver memory grows with the
number of records that have a positive pair). Evaluation against the truth is counted on
the workers (contingency cells and cluster sizes reduced to sums; no label reaches the
driver). Not supported here: supervised scoring (``labels``), several tables
(``link_type``, ``one_to_one``), saved models, incremental resolution and
sorted-neighbourhood and nearest-neighbour blocking rules (``sorted:``, ``nearest:``); each is refused
with a message.
"""
from __future__ import annotations

import math
import numbers
import os
import re
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from trustlab._chunks import _lengths
from trustlab._validation import Interval, check_random_state, validate_params
from trustlab.er.defaults import COMPLETE_COMPONENTS
from trustlab.er.rules import _expand_rows
from trustlab.er.rules import string_values as _str_values

__all__ = ["resolve_distributed", "DistributedResolution", "is_distributed_input", "check_distributed_options",
           "SAMPLE_RECORDS", "PAIRS_PER_PARTITION"]

#: field and blocking-rule inference looks at a sample of at most this many records
SAMPLE_RECORDS = 200_000
#: candidate pairs per partition of the pair stream (compared and scored together)
PAIRS_PER_PARTITION = 250_000
#: block-key rows per partition of a blocking rule's shuffle; a partition then emits at most
#: this many times ``(max_block_size - 1) / 2`` pairs
KEYS_PER_PARTITION = 100_000
#: records per partition of the id-sorted table (the input's partitions may be of any size)
RECORDS_PER_PARTITION = 100_000
#: records per partition when components are solved
RECORDS_PER_GROUP = 50_000
#: random pairs (for the model's u) compared per task
RANDOM_PAIRS_PER_TASK = 50_000
#: the budget of candidate pairs per sampled record when rules are inferred on a strict sample
#: (the local default's, MAX_CANDIDATE_PAIRS / 200,000 records)
PAIRS_PER_SAMPLED_RECORD = 50


# ----------------------------------------------------------------------------- input


def is_distributed_input(records: Any) -> bool:
    """Whether :func:`trustlab.resolve` hands ``records`` to :func:`resolve_distributed`:
    a Dask DataFrame, or a path to a directory of parquet / CSV files.

    Examples
    --------
    >>> import pandas as pd
    >>> is_distributed_input(pd.DataFrame({"a": [1]})), is_distributed_input("/")
    (False, True)
    """
    if isinstance(records, (str, os.PathLike)):
        return os.path.isdir(records)
    mod = type(records).__module__ or ""
    return mod.startswith("dask") and hasattr(records, "map_partitions") and hasattr(records, "npartitions")


def _files_of(path: str) -> tuple[list[str], str]:
    """The parquet or CSV files of a directory (or a glob), and which kind."""
    import glob

    if os.path.isdir(path):
        names = sorted(os.path.join(path, f) for f in os.listdir(path) if not f.startswith((".", "_")))
    else:
        names = sorted(glob.glob(path))
    pq = [f for f in names if f.endswith((".parquet", ".pq"))]
    csv = [f for f in names if f.endswith((".csv", ".csv.gz", ".tsv"))]
    if pq and not csv:
        return pq, "parquet"
    if csv and not pq:
        return csv, "csv"
    raise ValueError(f"{path!r} holds {len(pq)} parquet and {len(csv)} CSV file(s); resolve_distributed reads a "
                     "directory of parquet files or of CSV files (with one header each), not both or neither")


def _as_object(part: pd.DataFrame) -> pd.DataFrame:
    """Text columns as Python objects (missing: NaN), as the local pipeline reads them."""
    out = None
    for c in part.columns:
        dt = part[c].dtype
        if isinstance(dt, pd.StringDtype) or (isinstance(dt, pd.ArrowDtype) and "string" in str(dt)):
            col = part[c].astype(object)
            out = part.copy() if out is None else out
            out[c] = col.where(part[c].notna(), np.nan)
    return part if out is None else out


def _source(records: Any, npartitions: int | None):
    """A Dask DataFrame of the records as read (text columns perhaps Arrow-backed strings:
    :func:`_as_object` makes them what the local pipeline reads). The run counts, samples and
    sorts this frame and applies :func:`_as_object` to what it keeps (the sample, each sorted
    partition): the parquet reader's row counts give the number of records without a pass,
    the sample's other rows and the sort's shuffle skip the conversion to Python strings."""
    import dask.dataframe as dd

    if isinstance(records, (str, os.PathLike)):
        files, kind = _files_of(str(records))
        if kind == "parquet":
            ddf = dd.read_parquet(files)
        else:
            sep = "\t" if files[0].endswith(".tsv") else ","
            ddf = dd.read_csv(files, dtype=str, keep_default_na=False, na_values=[""], sep=sep,
                              blocksize="64MB")
    elif isinstance(records, pd.DataFrame):
        ddf = dd.from_pandas(records, npartitions=npartitions or max(2, math.ceil(len(records) / 100_000)))
    elif is_distributed_input(records):
        ddf = records
    else:
        raise TypeError(f"resolve_distributed reads a Dask DataFrame, a pandas DataFrame or a directory of "
                        f"parquet/CSV files; got {type(records).__name__}")
    if npartitions is not None and ddf.npartitions != npartitions:
        ddf = ddf.repartition(npartitions=npartitions)
    return ddf


def _with_sort_key(part: pd.DataFrame, id_col: str, numeric: bool) -> pd.DataFrame:
    """``part`` with its sort key ``_key``: the id (numbers), else the id as text as
    :func:`_as_object` leaves it (a missing id is ``"nan"``), so the key and the order do not
    depend on how the reader typed the id column."""
    ids = part[id_col]
    return part.assign(_key=ids if numeric else _as_object(part[[id_col]])[id_col].astype(str))


# ----------------------------------------------------------------------------- partition functions
# (module level, so that worker processes can unpickle them)


def _match_view(part: pd.DataFrame, id_col: str, cols: list[str], cache: dict | None = None) -> pd.DataFrame:
    """The id and the columns used for matching, placeholder cells (``N/A``…) as missing
    (``cache``: see :func:`_placeholders_to_missing`)."""
    return _placeholders_to_missing(part[[id_col] + cols], id_col, cache)


def _placeholders_to_missing(df: pd.DataFrame, id_col: str | None, cache: dict | None = None) -> pd.DataFrame:
    """:func:`~trustlab.er.records.placeholders_to_missing`, each distinct value of a column
    looked at once (:func:`_per_value`). With ``cache`` (a dict), the distinct values
    (:func:`_distinct_values`) of each column of strings left unchanged are put there under its
    name: those of the returned frame's column, which its encoding reads again."""
    out = None
    for c in df.columns:
        col = df[c]
        if c == id_col or not (col.dtype == object or isinstance(col.dtype, pd.StringDtype)):
            continue
        codes, vals = _distinct_values(col)
        v = np.asarray(_placeholder_values(vals))[codes] if codes is not None else np.asarray(_placeholder_values(col))
        hit = pd.isna(v) & col.notna().to_numpy()
        if hit.any():
            out = df.copy() if out is None else out
            out[c] = col.mask(hit, np.nan)
        elif cache is not None and codes is not None:
            cache[c] = (codes, vals)
    return df if out is None else out


def _placeholder_values(u: pd.Series) -> np.ndarray:
    """The values of ``u`` (object or string dtype), those that only say "no value" NaN:
    :func:`~trustlab.er.records.placeholders_to_missing` of one column, in one pass (a
    string stripped and lower-cased is looked up in
    :data:`~trustlab.er.records.MISSING_PLACEHOLDERS`; nothing else is one)."""
    from trustlab.er.records import MISSING_PLACEHOLDERS

    arr = u.to_numpy(dtype=object)
    hit = np.fromiter((isinstance(x, str) and x.strip().lower() in MISSING_PLACEHOLDERS for x in arr), bool, arr.size)
    if not hit.any():
        return arr
    out = arr.copy()
    out[hit] = np.nan
    return out


# ----------------------------------------------------------------------------- string passes
# The encodings' normalisations as one Python pass over the distinct values (pandas' ``str``
# methods make a pass, with its missing-value checks, per method): the same strings, for
# values that are strings or missing (``fillna("").astype(str)`` then the methods); any other
# value takes the pandas chain itself.

_CLEAN_RUN = re.compile(r"[^\w ]+")  # comparisons._clean_words' and kinds._words' pattern
_DIGIT = re.compile(r"\d")
_WORD_RUN = re.compile(r"[^\w]+")  # kinds._word_chars'
_ALNUM_RUN = re.compile(r"[^0-9a-z]+")  # kinds._alnum's


def _clean_text(vals: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~trustlab.er.comparisons._text` (words lower-cased, punctuation runs to spaces,
    single spaces; missing) in one pass."""
    from trustlab.er.comparisons import _text

    strs = _str_values(vals)
    if strs is None:
        return _text(vals)
    sub = _CLEAN_RUN.sub
    arr = np.empty(len(strs), dtype=object)
    arr[:] = [" ".join(sub(" ", x.lower()).split()) for x in strs]
    return arr, arr == ""


def _key_rows(part: pd.DataFrame, rules: Sequence[str]) -> pd.DataFrame:
    """Each record's block keys under every rule: rows ``key`` (a 64-bit hash of the rule's
    number and the key string), ``rec`` (canonical position) and ``r`` (the rule's number).
    Hashes keep the shuffle small (16 bytes a key instead of a string); two distinct keys
    share a hash with probability about ``k^2 / 2^65`` for ``k`` distinct keys (then their
    blocks are one)."""
    from trustlab.er.blocking import membership_values
    from trustlab.er.rules import parse_rule

    df = part.reset_index(drop=True)
    idx = part.index.to_numpy(np.int64)
    keys, recs, rs = [], [], []
    memo: dict = {}  # each column's distinct values, found once for all its rules

    def members(frame, rule):
        got = _plain_members(frame, rule)
        if got is None:
            kind, got = membership_values(frame, rule)
            if kind != "members":  # pragma: no cover - refused before any work
                raise ValueError(f"blocking rule {rule!r} cannot be distributed")
        rec, val = got
        try:
            return rec, _hash(val)
        except TypeError:  # pragma: no cover - keys are strings
            return rec, _hash(np.asarray(val, dtype=object).astype(str).astype(object))

    for r, rule in enumerate(rules):
        if rule == "all":
            rec, h = np.arange(len(df)), _hash(np.full(len(df), "", dtype=object))
        elif len(cols := parse_rule(rule, df.columns).columns) == 1:
            # a one-column rule's keys are those of the record's value: each distinct value's once
            c = cols[0]
            rec, h = _value_tokens(df[c], lambda v, c=c, rule=rule: members(pd.DataFrame({c: v}), rule), memo)
        else:
            rec, h = members(df, rule)
        keys.append(pd.util.hash_array(h ^ np.uint64((r + 1) * 0x9E3779B97F4A7C15 % 2**64)).astype(np.uint64))
        recs.append(idx[rec])
        rs.append(np.full(len(rec), r, np.int16))
    if not keys:
        return pd.DataFrame({"key": np.zeros(0, np.uint64), "rec": np.zeros(0, np.int64), "r": np.zeros(0, np.int16)})
    return pd.DataFrame({"key": np.concatenate(keys), "rec": np.concatenate(recs), "r": np.concatenate(rs)})


_KEY_DROP = re.compile(r"[^0-9a-z]+")  # what a key keeps: rules._norm's characters, without its spaces


def _plain_members(frame: pd.DataFrame, rule: str) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`~trustlab.er.blocking.membership_values`' ``(rec, key)`` of a one-column ``key``
    or ``token`` rule without an option (no prefix, no ``alnum``), in one Python pass over the
    values: the key is the value lower-cased with every character but ``0-9a-z`` removed
    (``_norm`` then no spaces), a token each word of ``_norm``'s value longer than one
    character; ``""`` (no key) for a missing value. None for another rule, or a column with a
    value neither a string nor missing (pandas' chain then)."""
    from trustlab.er.rules import _NOT_KEY, parse_rule

    r = parse_rule(rule, frame.columns)
    if r.kind not in ("key", "token") or r.option is not None or len(r.columns) != 1 or \
            r.columns[0] not in frame.columns:
        return None
    col = frame[r.columns[0]]
    codes, vals = _distinct_values(col)
    if codes is None:  # (a short column, or one not of strings only)
        codes, vals = np.arange(len(col)), col
    strs = _str_values(vals)
    if strs is None:
        return None
    # each distinct value read once, its key or tokens spread to its records (positions ascending)
    if r.kind == "key":
        drop = _KEY_DROP.sub
        keys = np.empty(len(strs), dtype=object)
        keys[:] = [drop("", x.lower()) for x in strs]
        has = np.fromiter(map(bool, keys), bool, keys.size)
        rec = np.flatnonzero(has[codes]).astype(np.int64)
        return rec, keys[codes[rec]]
    sub, at, toks = _NOT_KEY.sub, [], []
    for p, x in enumerate(strs):
        for t in sub(" ", x.lower()).split():
            if len(t) > 1:
                at.append(p)
                toks.append(t)
    out = np.empty(len(toks), dtype=object)
    out[:] = toks
    rows, pos = _expand_rows(np.asarray(codes, np.int64), len(strs), np.array(at, np.int64), np.arange(len(toks)))
    return rows.astype(np.int64), out[pos]


def _block_pairs(part: pd.DataFrame, caps: Sequence[int]) -> pd.DataFrame:
    """The pairs of the blocks of one partition (every block is whole here), blocks of more
    than ``caps[r]`` records purged under rule ``r``."""
    from trustlab.er.blocking import _pairs_from_membership

    out = [np.zeros((0, 2), np.int64)]
    if len(part):
        rcol = part["r"].to_numpy()
        for r in np.unique(rcol):
            sel = rcol == r
            codes = pd.factorize(part["key"].to_numpy()[sel])[0].astype(np.int64)
            p = _pairs_from_membership(part["rec"].to_numpy(np.int64)[sel], codes, int(caps[r]))
            out.append(p[p[:, 0] != p[:, 1]])
    p = np.concatenate(out)
    return pd.DataFrame({"i": p[:, 0], "j": p[:, 1]})


@dataclass
class _Context:
    """What the workers need to compare and score pairs (sent once per stage)."""

    fields: list
    only: Any
    corpus: dict
    tf_model: Any  # FSModel with the tables set (tf_values), or the fitted model
    columns: list
    truth: str | None = None
    doc_freq: dict | None = None  # the whole-record fields' document frequencies (by token hash)


def _raw_features(df: pd.DataFrame, f, i: np.ndarray, j: np.ndarray, ctx: _Context) -> tuple[list, list, int]:
    """The features of field ``f`` from the raw records ``df``, as
    :func:`~trustlab.er.comparisons.compare` computes them, with the document frequencies of the
    whole table (``ctx.corpus``) for the IDF-weighted features."""
    from trustlab.er.comparisons import FEATURES, _code_levels, _idf_jaccard, _tokens_features, record_features
    from trustlab.er.kinds import record_parts, record_text

    want = None if ctx.only is None else ctx.only.get(f.column)
    if f.kind == "record":
        return record_features(record_text(df, ctx.fields).reset_index(drop=True), i, j, ctx.corpus["record"],
                               record_parts(df.reset_index(drop=True), ctx.fields), ctx.fields, want)
    if f.kind == "codes":
        return [_code_levels(record_text(df, ctx.fields).reset_index(drop=True), i, j, ctx.corpus["codes"],
                             parts=record_parts(df.reset_index(drop=True), ctx.fields))], ["codes"], 0
    if f.kind == "text":  # the 3-grams' document frequencies of the whole table
        from trustlab.er.comparisons import _char3_features
        return _char3_features(df, f, i, j, ctx.fields, want, corpus=ctx.corpus.get(("char3", f.column)))
    if f.kind == "numbers":  # the numbers' rarity from the whole table's counts
        from trustlab.er.comparisons import _numbers_features
        return _numbers_features(df, f, i, j, ctx.fields, want, corpus=ctx.corpus["numbers"])
    if f.kind == "tokens":
        fc, fn, main = _tokens_features(df, f, i, j, ctx.fields, set())
        if want is not None and "idf_jaccard" in want:
            fc.append(_idf_jaccard(df[f.column], i, j, ctx.corpus[("tokens", f.column)]))
            fn.append("idf_jaccard")
        return fc, fn, main
    return FEATURES[f.kind](df, f, i, j, ctx.fields, want)


def _feature_matrix(ctx: _Context, n_pairs: int, features, order: str = "C") -> Any:
    """A FeatureMatrix from ``features(field) -> (columns, names, main)`` over ``ctx.fields``;
    ``order="F"``: ``X`` column by column in memory (the same values), for callers that only
    read its columns (the levels: each a contiguous read instead of a strided one)."""
    from trustlab.er.comparisons import FeatureMatrix

    cols, names, field_of, primary = [], [], [], []
    for f in ctx.fields:
        fc, fn, main = features(f)
        primary.append(len(cols) + main)
        cols += fc
        names += [f"{f.column}:{k}" for k in fn]
        field_of += [f.column] * len(fc)
    if order == "F" and cols:
        X = np.empty((n_pairs, len(cols)), np.result_type(*cols), order="F")
        for k, col in enumerate(cols):
            X[:, k] = col
    else:
        X = np.ascontiguousarray(np.column_stack(cols)) if cols else np.empty((n_pairs, 0))
    return FeatureMatrix(X=X, names=names, field_of=field_of, primary=primary,
                         fields=list(ctx.fields))


def _compare(df: pd.DataFrame, pairs: np.ndarray, ctx: _Context):
    """:func:`~trustlab.er.comparisons.compare` of ``pairs`` of ``df`` with the document
    frequencies of the whole table (``ctx.corpus``) for the IDF-weighted features."""
    i, j = pairs[:, 0], pairs[:, 1]
    return _feature_matrix(ctx, len(pairs), lambda f: _raw_features(df, f, i, j, ctx))


def _level_counts(part: pd.DataFrame, d: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The distinct level rows of a partition, their counts and the matching pairs in it."""
    from trustlab.er.scoring import _distinct_rows_inverse

    G = part[[f"g{c}" for c in range(d)]].to_numpy(np.int8) if len(part) else np.zeros((0, d), np.int8)
    if not len(G):
        return G, np.zeros(0), int(part["same"].sum()) if "same" in part else 0
    Gu, inv = _distinct_rows_inverse(G)
    same = int(part["same"].sum()) if "same" in part else 0
    return Gu, np.bincount(inv, minlength=len(Gu)).astype(np.float64), same


def _score_frame(part: pd.DataFrame, model, d: int, weights: str) -> pd.DataFrame:
    """Probability and signed weight of every pair of a partition (from its levels)."""
    from trustlab.er.scoring import to_weights

    G = part[[f"g{c}" for c in range(d)]].to_numpy(np.int8)
    T = np.full(G.shape, np.nan)
    for c in range(d):  # as FSModel.tf_values: only the fields the fitted model has a table for
        if f"t{c}" in part and model.fields[c].column in model.tf_tables_:
            T[:, c] = part[f"t{c}"].to_numpy(np.float64)
    # the record comparison's shared parts (_level_frame), per field
    R = {c: part[f"r{c}"].to_numpy(np.float64) for c in range(d) if f"r{c}" in part} or None
    prob = model.proba_from_field_weights(model.level_weights(G, T, R)) if len(part) else np.zeros(0)
    return pd.DataFrame({"i": part["i"].to_numpy(np.int64), "j": part["j"].to_numpy(np.int64), "prob": prob,
                         "w": to_weights(prob, weights) if len(prob) else np.zeros(0)})


def _local_roots(part: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Union-find of a partition's positive pairs: each node and the smallest node of its
    local component."""
    pos = part["w"].to_numpy() > 0
    return _min_roots(part["i"].to_numpy(np.int64)[pos], part["j"].to_numpy(np.int64)[pos])


def _min_roots(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nodes of the edges ``a``–``b`` (sorted) and the smallest node of each one's
    connected component."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from trustlab._chunks import sorted_unique

    nodes = sorted_unique(np.concatenate([a, b]))
    if not nodes.size:
        return nodes, nodes
    ia, ib = np.searchsorted(nodes, a), np.searchsorted(nodes, b)
    g = sp.coo_matrix((np.ones(ia.size, np.int8), (ia, ib)), shape=(nodes.size, nodes.size))
    _, lab = connected_components(g, directed=False)
    root = np.full(lab.max() + 1, np.iinfo(np.int64).max)
    np.minimum.at(root, lab, nodes)
    return nodes, root[lab]


def _component_of(idx: np.ndarray, labels: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Component (smallest member) of each record; -1 for records in no positive pair."""
    nodes, comp = labels
    if not nodes.size:
        return np.full(len(idx), -1, np.int64)
    k = np.minimum(np.searchsorted(nodes, idx), nodes.size - 1)
    return np.where(nodes[k] == idx, comp[k], -1)


def _records_by_component(part: pd.DataFrame, labels) -> pd.DataFrame:
    c = _component_of(part.index.to_numpy(np.int64), labels)
    keep = c >= 0
    out = part[keep].copy()
    out.insert(0, "_idx", part.index.to_numpy(np.int64)[keep])
    out.insert(0, "comp", c[keep])
    return out.reset_index(drop=True)


def _edges_by_component(part: pd.DataFrame, labels) -> pd.DataFrame:
    ci = _component_of(part["i"].to_numpy(np.int64), labels)
    cj = _component_of(part["j"].to_numpy(np.int64), labels)
    keep = (ci >= 0) & (ci == cj)
    out = part[keep].copy()
    out.insert(0, "comp", ci[keep])
    return out.reset_index(drop=True)


@dataclass
class _SolveConfig:
    method: str
    threshold: float | None
    time_limit: float | None
    M: int
    solver_options: dict
    complete_components: int
    weights: str
    #: the small components completed whole: those of 3 to ``complete_components`` records whose
    #: ``(size, first record)`` is at most this key (chosen from every component by
    #: :func:`trustlab.er.scoring.completion_cutoff` before the partitions are solved; None: all)
    completion_cutoff: tuple[int, int] | None = None


def _solve_groups(recs: pd.DataFrame, edges: pd.DataFrame, ctx: _Context, cfg: _SolveConfig,
                  id_col: str, encs: Sequence["_EncFile"], enc_divs) -> tuple[pd.DataFrame, dict]:
    """Complete, score and cluster the components of one partition (each lies whole
    here): ``(frame of _idx, entity_id; stats)``. The completed pairs' records are read from
    the encoded record partitions ``encs`` (divisions ``enc_divs``: :func:`_gather`)."""
    from trustlab.er.cluster import cluster_pairs
    from trustlab.er.scoring import _component_completion, to_weights

    recs = recs.reset_index(drop=True).sort_values("_idx", kind="stable").reset_index(drop=True)
    nodes = recs["_idx"].to_numpy(np.int64)
    m = nodes.size
    stats = {"n_completed_pairs": 0, "status": {}, "n_components": 0}
    if m == 0:
        return pd.DataFrame({"_idx": np.zeros(0, np.int64), "entity_id": recs[id_col].iloc[:0]}), stats
    e = edges.reset_index(drop=True)
    P = np.stack([np.searchsorted(nodes, e["i"].to_numpy(np.int64)),
                  np.searchsorted(nodes, e["j"].to_numpy(np.int64))], axis=1).astype(np.int64)
    w = e["w"].to_numpy(np.float64)
    prob = e["prob"].to_numpy(np.float64)
    if cfg.complete_components and len(P):
        order = np.lexsort((P[:, 1], P[:, 0]))
        P, w, prob = P[order], w[order], prob[order]
        extra = _component_completion(m, P, w, int(cfg.complete_components), cutoff=cfg.completion_cutoff,
                                      positions=nodes)
        if len(extra):
            # only the records of the completed pairs are read from their encodings (canonical
            # positions: the encodings' records)
            from trustlab._chunks import sorted_unique

            touched = sorted_unique(extra.ravel())
            enc = _Enc.concat(_gather(encs, enc_divs, nodes[touched]))
            G, T, _, R = _encoded_levels(enc, nodes[extra], ctx)
            px = ctx.tf_model.proba_from_field_weights(ctx.tf_model.level_weights(G, T, R))
            P = np.concatenate([P, extra])
            prob = np.concatenate([prob, px])
            w = np.concatenate([w, to_weights(px, cfg.weights)])
            stats["n_completed_pairs"] = int(len(extra))
    kw: dict[str, Any] = {}
    if cfg.method == "xer":
        kw = {"time_limit": cfg.time_limit, "M": cfg.M, "solver_options": dict(cfg.solver_options)}
    elif cfg.method == "hierarchical":
        kw = {"prob": prob}
    cr = cluster_pairs(m, P, w, method=cfg.method, threshold=cfg.threshold, **kw)
    # entity id: the id of the entity's first record in the canonical order
    first = np.full(int(cr.labels.max()) + 1, m, np.int64)
    np.minimum.at(first, cr.labels, np.arange(m))
    ids = recs[id_col].to_numpy()
    sizes = np.bincount(cr.component)
    multi = np.flatnonzero(sizes >= 2)
    stats["n_components"] = int(multi.size)
    for c in multi:
        st = cr.status[c] if c < len(cr.status) else "unknown"
        stats["status"][st] = stats["status"].get(st, 0) + 1
    return pd.DataFrame({"_idx": nodes, "entity_id": ids[first[cr.labels]]}), stats


def _write_part(recs: pd.DataFrame, solved: pd.DataFrame, id_col: str, columns: list[str]) -> pd.DataFrame:
    """One partition of the output: the records as read and their ``entity_id``."""
    ent = recs[id_col].copy()
    if solved is not None and len(solved):
        pos = solved.index.to_numpy(np.int64)
        loc = recs.index.get_indexer(pos)
        vals = ent.to_numpy(dtype=object).copy()
        vals[loc] = solved["entity_id"].to_numpy(dtype=object)
        ent = pd.Series(vals, index=recs.index).astype(recs[id_col].dtype)
    out = recs[columns].copy()
    out.insert(1, "entity_id", ent.to_numpy())
    return out.reset_index(drop=True)


def _token_counts(part: pd.DataFrame, what, fields) -> pd.DataFrame:
    """Records holding each token (one partition): the document frequencies of the
    IDF-weighted comparisons, tokenised as :mod:`trustlab.er.scoring` does."""
    from trustlab.er.kinds import _RECORD_TOKEN, code_tokens, record_text

    df = part.reset_index(drop=True)
    if what == "record":
        ex = record_text(df, fields).fillna("").astype(str).str.lower().str.findall(_RECORD_TOKEN).explode()
    elif what == "codes":
        ex = code_tokens(record_text(df, fields).reset_index(drop=True))
    elif what == "numbers":  # records holding each number (comparisons.number_counts' keys)
        from trustlab.er.comparisons import number_counts
        from trustlab.er.kinds import text_numbers
        vc = number_counts(*text_numbers(record_text(df, fields).reset_index(drop=True)))
        return pd.DataFrame({"tok": vc.index.to_numpy(dtype=object), "n": vc.to_numpy(np.int64)})
    elif what[0] == "char3":
        from trustlab.er.comparisons import _clean_words, char3_grams
        ex = _clean_words(df[what[1]]).map(char3_grams).explode()
    else:
        ex = df[what[1]].fillna("").astype(str).str.lower().str.findall(r"[^\W\d_]+|\d+").explode()
    ex = ex.dropna()
    pairs = pd.DataFrame({"r": ex.index.to_numpy(), "t": ex.astype(str).to_numpy(dtype=object)}).drop_duplicates()
    vc = pairs["t"].value_counts()
    return pd.DataFrame({"tok": vc.index.to_numpy(dtype=object), "n": vc.to_numpy(np.int64)})


def _tf_counts(part: pd.DataFrame, fields) -> pd.DataFrame:
    """Records holding each normalised value of every TF field ``fields[k]`` (rows ``f = k``,
    ``tok``, ``n``) in one partition (each distinct value normalised once)."""
    df = part.reset_index(drop=True)
    out = [pd.DataFrame({"f": np.zeros(0, np.int16), "tok": pd.Series([], dtype=object), "n": np.zeros(0, np.int64)})]
    for k, f in enumerate(fields):
        key = pd.Series(_tf_keys(df, f))
        vc = key[key != ""].astype(str).value_counts()
        out.append(pd.DataFrame({"f": np.full(len(vc), k, np.int16), "tok": vc.index.to_numpy(dtype=object),
                                 "n": vc.to_numpy(np.int64)}))
    return pd.concat(out, ignore_index=True)


# ----------------------------------------------------------------------------- encoded records
# Each record is normalised ONCE, on the worker that holds its partition, into compact
# per-field arrays (normalised strings for the string similarities, 64-bit hashes for
# exact agreement, numbers, and sparse rows of token hashes with their weights for the
# whole-record comparisons); a partition of pairs then gathers the encodings of the records
# it touches by id range and compares them with no string normalisation left to do.
# Kinds without an encoder here travel as their raw columns and are compared by
# :data:`trustlab.er.comparisons.FEATURES` per partition (correct, slower).

#: the kinds whose features are computed from the encoded records
_TEXT_KINDS = ("string", "name", "address")
_NORM_KINDS = ("email", "postcode", "code")
ENCODED_KINDS = _TEXT_KINDS + _NORM_KINDS + ("phone", "exact", "model", "numeric", "date", "latlon", "record",
                                             "codes")


def _hash(values) -> np.ndarray:
    """64-bit hashes of strings (equal strings, equal hashes, in every process)."""
    arr = np.asarray(values, dtype=object)
    return pd.util.hash_array(arr, categorize=False).astype(np.uint64) if arr.size else np.zeros(0, np.uint64)


@dataclass
class _Enc:
    """The encoded records of one partition (or of a selection of partitions): canonical
    positions ``idx`` (sorted), per-record arrays ``cols``, sparse rows ``csr`` (name ->
    ``(indptr, token hashes, weights, …)``: one or more arrays of values per token) and the raw
    columns of fields without an encoder; ``shares``: the partition's
    :func:`~trustlab.er.scoring.record_share_sums` and ``tf_counts``: its TF fields' value
    counts (rows ``f``, ``tok``, ``n`` as :func:`_tf_counts`), neither kept by ``take`` and
    ``concat``."""

    idx: np.ndarray
    cols: dict
    csr: dict
    raw: pd.DataFrame | None
    shares: tuple | None = None
    tf_counts: pd.DataFrame | None = None

    def take(self, want: np.ndarray) -> "_Enc":
        """The records whose positions are in ``want`` (sorted, unique)."""
        want = np.asarray(want, np.int64)
        pos = np.searchsorted(self.idx, want)
        ok = pos < self.idx.size
        pos = pos[ok]
        pos = pos[self.idx[pos] == want[ok]]
        csr = {}
        for k, (ptr, *arrays) in self.csr.items():
            lens = np.diff(ptr)[pos]
            starts = ptr[:-1][pos]
            sel = np.repeat(starts - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(int(lens.sum()))
            csr[k] = (np.r_[0, np.cumsum(lens)].astype(np.int64), *(a[sel] for a in arrays))
        return _Enc(self.idx[pos], {k: v[pos] for k, v in self.cols.items()}, csr,
                    None if self.raw is None else self.raw.iloc[pos].reset_index(drop=True))

    @staticmethod
    def concat(parts: Sequence["_Enc"]) -> "_Enc":
        """One encoding of parts with increasing positions."""
        parts = [p for p in parts if p is not None]
        first = parts[0]
        csr = {}
        for k in first.csr:
            ptrs, off = [np.zeros(1, np.int64)], 0
            for p in parts:
                ptrs.append(p.csr[k][0][1:] + off)
                off += int(p.csr[k][0][-1])
            csr[k] = (np.concatenate(ptrs), *(np.concatenate([p.csr[k][a] for p in parts])
                                                for a in range(1, len(first.csr[k]))))
        raw = None if first.raw is None else pd.concat([p.raw for p in parts], ignore_index=True)
        return _Enc(np.concatenate([p.idx for p in parts]),
                    {k: np.concatenate([p.cols[k] for p in parts]) for k in first.cols}, csr, raw)

    def nbytes(self) -> int:
        """Approximate memory of the arrays (object strings counted as 64 bytes each)."""
        tot = self.idx.nbytes
        for v in self.cols.values():
            tot += v.nbytes + (64 * v.size if v.dtype == object else 0)
        for arrays in self.csr.values():
            tot += sum(a.nbytes for a in arrays)
        return int(tot)


# ----------------------------------------------------------------------------- the work directory
# No collection stays in the workers' memory between stages: each stage's tasks write their
# partitions as files under the run's work directory and later tasks read them back, so what a
# worker holds is its tasks' working set (bounded by the partition sizes), whatever the table's
# size. The encodings are stored as arrays that are memory-mapped when a partition of pairs
# gathers its records: only the pages of the records it touches are read.


def _save_frame(df: pd.DataFrame, path: str) -> int:
    """Write one partition (pickled: every dtype and the index round-trip exactly); its length."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _dump_fast(df, path)
    return len(df)


def _dump_fast(obj, path: str) -> None:
    """Pickle ``obj`` to ``path`` (read by ``pd.read_pickle``) without the pickler's memo: each
    object written as it is met, so a string held twice is read back as two equal strings. A
    partition's text columns are hundreds of thousands of strings, and remembering each one
    cost about three quarters of the write (0.2-0.35 -> 0.06-0.1 CPU s for 125,000 records of
    11 columns). An object that refers to itself cannot be written so (Python's pickler raises
    ``ValueError``): it is written with the memo."""
    import pickle

    try:
        with open(path, "wb") as fh:
            p = pickle.Pickler(fh, protocol=pickle.HIGHEST_PROTOCOL)
            p.fast = True
            p.dump(obj)
    except ValueError:
        pd.to_pickle(obj, path, compression=None)


def _load_frame(path: str) -> pd.DataFrame:
    return pd.read_pickle(path, compression=None)


def _spilled(paths: Sequence[str], meta: pd.DataFrame, divisions=None, offsets: Sequence[int] | None = None):
    """A Dask DataFrame whose partitions are read from ``paths`` each time a task needs them
    (with ``offsets``: partitions of the id-sorted table, read with their canonical positions)."""
    import dask
    import dask.dataframe as dd

    if not paths:
        return dd.from_pandas(meta, npartitions=1)
    divs = tuple(divisions) if divisions is not None else (None,) * (len(paths) + 1)
    parts = [dask.delayed(_load_frame, pure=True)(p) for p in paths] if offsets is None else \
        [dask.delayed(_load_positioned, pure=True)(p, int(o)) for p, o in zip(paths, offsets)]
    return dd.from_delayed(parts, meta=meta, divisions=divs, verify_meta=False)


class _Strings:
    """A column of strings stored as the two buffers of an Arrow ``large_string`` array (its
    offsets and its bytes, two ``.npy`` files: :func:`_save_array`), memory-mapped: ``s[pos]``
    reads the strings at ``pos`` only (an object array of ``str``). ``known``: the two files'
    headers (:func:`_npy_header`), when already read. (An array made from its buffers costs
    microseconds; opening an Arrow IPC file costs about a millisecond, and a partition of pairs
    opens every string column of every record partition it reads.)"""

    dtype = np.dtype(object)

    def __init__(self, path: str, known: tuple | None = None):
        self.path = path
        self.known = known

    def _array(self):
        import pyarrow as pa

        ko, kd = self.known if self.known is not None else (_npy_header(self.path + ".o.npy"),
                                                            _npy_header(self.path + ".d.npy"))
        off, data = _map_npy(self.path + ".o.npy", *ko), _map_npy(self.path + ".d.npy", *kd)
        return pa.LargeStringArray.from_buffers(off.size - 1, pa.py_buffer(off), pa.py_buffer(data))

    def __getitem__(self, pos) -> np.ndarray:
        import pyarrow as pa

        col = self._array()
        if isinstance(pos, slice):
            return col.to_numpy(zero_copy_only=False)[pos]
        return col.take(pa.array(np.asarray(pos, np.int64))).to_numpy(zero_copy_only=False)


def _save_array(a: np.ndarray, path: str) -> str:
    """Write one array: strings as the buffers of an Arrow array (memory-mapped on reading,
    :class:`_Strings`), numbers as ``.npy``, other objects pickled (read whole); the kind written."""
    a = np.asarray(a)
    if a.dtype == object:
        if a.size and pd.api.types.infer_dtype(a, skipna=False) == "string":
            import pyarrow as pa

            arr = pa.array(a, type=pa.large_string())
            _, offsets, data = arr.buffers()
            off = np.frombuffer(offsets, np.int64, len(arr) + 1, arr.offset * 8)
            np.save(path + ".o.npy", off - off[0], allow_pickle=False)
            np.save(path + ".d.npy", np.frombuffer(data, np.uint8, int(off[-1] - off[0]), int(off[0]))
                    if data is not None else np.zeros(0, np.uint8), allow_pickle=False)
            return "str"
        pd.to_pickle(a, path + ".pkl", compression=None)
        return "pkl"
    np.save(path + ".npy", a, allow_pickle=False)
    return "npy"


def _open_array(path: str, kind: str, mmap: bool, known=None):
    """One array written by :func:`_save_array` (memory-mapped with ``mmap``, but for
    pickled objects). ``known``: what :func:`_file_parts` kept of the file (the array of a
    pickle, the header of an ``.npy``: then it is mapped without reading the header again)."""
    if known is not None:
        if kind == "pkl":
            return known
        if kind == "npy" and mmap:
            return _map_npy(path + ".npy", *known)
    if kind == "str":
        s = _Strings(path, known)
        return s if mmap else s[slice(None)]
    if kind == "pkl":
        return pd.read_pickle(path + ".pkl", compression=None)
    if mmap:
        try:
            return np.load(path + ".npy", mmap_mode="r")
        except ValueError:  # an empty array cannot be mapped
            pass
    return np.load(path + ".npy")


def _npy_header(path: str) -> tuple:
    """``(shape, fortran order, dtype, data offset)`` of an ``.npy`` file."""
    from numpy.lib import format as npf

    with open(path, "rb") as fh:
        version = npf.read_magic(fh)
        shape, fortran, dtype = npf.read_array_header_1_0(fh) if version == (1, 0) else \
            npf.read_array_header_2_0(fh)
        return shape, fortran, dtype, fh.tell()


def _map_npy(path: str, shape, fortran, dtype, offset) -> np.ndarray:
    """The array of an ``.npy`` file of known header (:func:`_npy_header`), memory-mapped
    read-only (as ``np.load(path, mmap_mode="r")``, without parsing the header)."""
    import mmap

    count = int(np.prod(shape, dtype=np.int64))
    if count == 0 or dtype.hasobject:
        return np.load(path, allow_pickle=False)
    with open(path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return np.frombuffer(buf, dtype=dtype, count=count, offset=offset).reshape(shape, order="F" if fortran else "C")


#: per worker process, the parts of recently opened encodings that cost more to read than
#: to keep (:func:`_file_parts`), by description file (path and stamp) -> (value, bytes), most
#: recent last (:func:`_recall`, :func:`_keep`): the description and
#: the arrays' headers (a few KB an encoding), at most :data:`_PARTS_MAX` encodings. A pair
#: partition opens every encoded record partition it touches (80 at 10M records, and as many
#: weighed descriptions), so a bound below that made nearly every open a miss (~10 ms each)
_PARTS: dict = {}
_PARTS_MAX = 1024
#: the pickled arrays kept, by file (path and stamp; the weighed and unweighed descriptions of a
#: partition share theirs); at most :data:`_PICKLES_MAX_BYTES`, counted as the
#: array's own bytes plus its file's (the objects it points to)
_PICKLES: dict = {}
_PICKLES_MAX_BYTES = 256 << 20
_PARTS_LOCK = threading.Lock()


def _stamped(file: str) -> tuple[tuple, int]:
    """``file``'s key in the caches above (path and stamp: a file written again is another
    key) and its size."""
    st = os.stat(file)
    return (file, st.st_ino, st.st_mtime_ns, st.st_size), st.st_size


_MISSING = object()


def _recall(cache: dict, key: tuple):
    """The value kept under ``key`` (made the most recent), or :data:`_MISSING`."""
    with _PARTS_LOCK:
        hit = cache.pop(key, None)
        if hit is None:
            return _MISSING
        cache[key] = hit  # (most recent last)
        return hit[0]


def _keep(cache: dict, key: tuple, value, size: int, max_n: float = float("inf"),
          max_bytes: float = float("inf")) -> None:
    """Keep ``value`` (of ``size`` bytes) under ``key``, dropping the least recent entries
    while more than ``max_n`` or ``max_bytes`` are kept (the newest one always stays)."""
    with _PARTS_LOCK:
        cache[key] = (value, size)
        total = sum(v[1] for v in cache.values())
        while len(cache) > 1 and (len(cache) > max_n or total > max_bytes):
            total -= cache.pop(next(iter(cache)))[1]


def _kept_pickle(file: str):
    """The pickled array in ``file``, read once per stamp while it stays among the last
    :data:`_PICKLES_MAX_BYTES` read (the one read last is always kept); read-only."""
    key, size = _stamped(file)
    a = _recall(_PICKLES, key)
    if a is not _MISSING:
        return a
    a = pd.read_pickle(file, compression=None)
    if isinstance(a, np.ndarray):
        a.setflags(write=False)
        size += a.nbytes
    _keep(_PICKLES, key, a, size, max_bytes=_PICKLES_MAX_BYTES)
    return a


def _file_parts(path: str, meta_name: str) -> tuple[dict, dict]:
    """An encoding's description (``meta``) and, per array file, what is kept of it between
    opens in this process: a pickled array itself (read-only), an ``.npy`` file's header.
    A partition of pairs reads the records it touches from every encoded partition, so each
    is opened many times in a stage; the description and these parts are read once (per
    stamp of the description file: a file written again is read again). Kept for the
    :data:`_PARTS_MAX` encodings opened last, the pickled arrays by :func:`_kept_pickle`
    (bounded in bytes); memory-mapped arrays are not kept (their pages would count towards
    the worker's memory, and pin removed files)."""
    full = os.path.join(path, meta_name)
    key, _ = _stamped(full)
    hit = _recall(_PARTS, key)
    if hit is not _MISSING:
        return hit
    meta = pd.read_pickle(full, compression=None)
    parts: dict = {}
    for name, kind in [meta["idx"]] + [(nm, kd) for _, nm, kd in meta["cols"]] + \
            [f for _, fs in meta["csr"] for f in fs]:
        if kind == "pkl":
            parts[name] = _kept_pickle(os.path.join(path, name + ".pkl"))
        elif kind == "npy":
            parts[name] = _npy_header(os.path.join(path, name + ".npy"))
        elif kind == "str":
            parts[name] = (_npy_header(os.path.join(path, name + ".o.npy")),
                           _npy_header(os.path.join(path, name + ".d.npy")))
    _keep(_PARTS, key, (meta, parts), 0, max_n=_PARTS_MAX)
    return meta, parts


@dataclass
class _EncFile:
    """An encoded partition (:class:`_Enc`) written under ``path``: ``take`` reads only the
    records it is asked for (the arrays are memory-mapped), ``load`` reads it whole."""

    path: str
    n: int
    meta: str = "meta.pkl"

    @staticmethod
    def save(enc: _Enc, path: str, prefix: str = "", kept: dict | None = None) -> "_EncFile":
        """Write ``enc`` under ``path`` (file names starting with ``prefix``, its description in
        ``{prefix}meta.pkl``); an array that is one of ``kept``'s (by identity: an array read from
        the files already there) keeps its file."""
        os.makedirs(path, exist_ok=True)
        kept = kept or {}

        def put(a, name):
            if id(a) in kept:
                return kept[id(a)]
            return name, _save_array(a, os.path.join(path, name))

        meta = {"idx": put(enc.idx, f"{prefix}idx"),
                "cols": [(k, *put(v, f"{prefix}c{q}")) for q, (k, v) in enumerate(enc.cols.items())],
                "csr": [(k, [put(a, f"{prefix}s{q}_{b}") for b, a in enumerate(arrays)])
                        for q, (k, arrays) in enumerate(enc.csr.items())],
                "raw": enc.raw, "n": int(len(enc.idx))}
        full = os.path.join(path, f"{prefix}meta.pkl")
        pd.to_pickle(meta, full, compression=None)
        with _PARTS_LOCK:  # (written again here: what this process kept of it is stale)
            for key in [k for k in _PARTS if k[0] == full]:
                del _PARTS[key]
        return _EncFile(path, meta["n"], f"{prefix}meta.pkl")

    def _open(self, mmap: bool) -> tuple[_Enc, dict]:
        """The encoding (arrays memory-mapped with ``mmap``) and, by array identity, the file
        each array came from."""
        if mmap:  # the description, pickled arrays and headers of the last encodings opened
            meta, known = _file_parts(self.path, self.meta)
        else:
            meta, known = pd.read_pickle(os.path.join(self.path, self.meta), compression=None), {}
        files: dict = {}

        def get(name, kind):
            a = _open_array(os.path.join(self.path, name), kind, mmap, known.get(name))
            files[id(a)] = (name, kind)
            return a

        enc = _Enc(get(*meta["idx"]), {k: get(name, kind) for k, name, kind in meta["cols"]},
                   {k: tuple(get(*f) for f in fs) for k, fs in meta["csr"]}, meta["raw"])
        return enc, files

    def take(self, want: np.ndarray) -> _Enc:
        """The records whose positions are in ``want`` (sorted, unique), read from the files."""
        e = self._open(mmap=True)[0].take(want)
        return _Enc(np.asarray(e.idx), {k: np.asarray(v) for k, v in e.cols.items()},
                    {k: tuple(np.asarray(a) for a in v) for k, v in e.csr.items()}, e.raw)

    def load(self) -> _Enc:
        return self._open(mmap=False)[0]

    def weigh(self, fields, doc_freq: dict | None, tf_model) -> "_EncFile":
        """:func:`_weigh` the partition beside its files: only the arrays it changes (the
        whole-record weights, the TF frequencies) are written, under new names with a description
        of their own (``wmeta.pkl``); the others keep their files. The unweighed description
        stays, so a task run again (a lost worker's) weighs the same arrays again, not twice."""
        enc, files = self._open(mmap=True)
        for k in list(enc.cols):
            if k.startswith("tfkey"):  # read whole: they become the TF frequencies
                enc.cols[k] = np.asarray(enc.cols[k][slice(None)])
        return _EncFile.save(_weigh(enc, fields, doc_freq, tf_model), self.path, prefix="w", kept=files)


def _encode_file(part: pd.DataFrame, fields, only, tf_model, truth: str | None, path: str, doc: bool,
                 view: tuple | None = None):
    """:func:`_encode` one record partition and write it under ``path``: ``(handle, TF value
    counts, shares, document counts (with ``doc``), bytes)``: the encoding itself leaves the
    worker. With ``view = (view path, id column, compared columns, truth)``, ``part`` is the
    records as read: their match view (:func:`_view`) is written to the view path and encoded."""
    memo: dict = {}  # the columns' distinct values, found once for the view and the encoding
    if view is not None:
        part = _view(part, *view[1:], cache=memo)
        _save_frame(part, view[0])
    enc = _encode(part, fields, only, None, tf_model, truth, memo)
    del memo, part  # not held while the encoding is written
    return (_EncFile.save(enc, path), enc.tf_counts, enc.shares if enc.shares is not None else ({}, 0),
            _doc_counts(enc) if doc else None, enc.nbytes())


def _per_value(s: pd.Series, fn, cache: dict | None = None) -> np.ndarray:
    """``fn(s)`` (an element-wise function of a Series, returning one value per row) as an
    array, computed once per distinct value of ``s``: generated and real tables repeat their
    names, places and dates, so most rows are a look-up. Missing cells are passed to ``fn``
    as they are (``None`` and NaN apart); columns that hold anything but strings are passed
    whole (``1`` and ``1.0`` are one value to a hash table, not to ``str``). ``cache``: see
    :func:`_distinct_values`."""
    codes, vals = _distinct_values(s, cache)
    return np.asarray(fn(vals))[codes] if codes is not None else np.asarray(fn(s))


def _distinct_values(s: pd.Series, cache: dict | None = None) -> tuple[np.ndarray | None, pd.Series]:
    """``(codes, values)``: each row's position among the distinct values of a column of
    strings, each missing cell a value of its own (as it is); ``(None, s)`` for a column that
    holds anything but strings (see :func:`_per_value`). With ``cache`` (a dict, for the
    columns of one frame), a column's are found once and kept there under its name."""
    if cache is not None:
        if s.name not in cache:
            cache[s.name] = _distinct_values(s)
        return cache[s.name]
    if len(s) < 2 or pd.api.types.infer_dtype(s, skipna=True) != "string":
        return None, s
    codes, uniq = pd.factorize(s)
    na = codes < 0
    vals = uniq.to_numpy(dtype=object)
    if na.any():
        vals = np.concatenate([vals, s.to_numpy(dtype=object)[na]])
        codes = codes.copy()
        codes[na] = np.arange(uniq.size, vals.size)
    return codes, pd.Series(vals, dtype=object)


def _value_tokens(s: pd.Series, tokens, cache: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The token occurrences of every row of ``s``: ``(row, token hash)`` arrays (rows
    ascending), ``tokens(values)`` giving ``(position of the value, token hash)`` arrays of a
    Series of values (repeats kept); tokenised once per distinct value (as :func:`_per_value`)."""
    n = len(s)
    codes, vals = _distinct_values(s, cache)
    if codes is None:
        codes, vals = np.arange(n), s.reset_index(drop=True)
    at, h = tokens(vals)
    if not len(at):
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    return _expand_rows(codes, len(vals), at, h)


def _hashed(tok: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    tok = tok.dropna()
    return tok.index.to_numpy(np.int64), _hash(tok.astype(str).to_numpy(dtype=object))


def _record_tokens(vals: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The words of the whole-record comparison in each value (``record_text``'s words):
    ``(position of the value, token hash)``, in one pass over the values (pandas'
    ``str.findall`` when a value is neither a string nor missing)."""
    from itertools import chain

    from trustlab.er.kinds import _RECORD_TOKEN

    strs = _str_values(vals)
    if strs is None:
        return _hashed(vals.fillna("").astype(str).str.lower().str.findall(_RECORD_TOKEN).explode())
    find = re.compile(_RECORD_TOKEN).findall
    # a value of letters only (or of decimal digits only) is one word: ``[^\W\d_]+`` and ``\d+``
    # are runs of str.isalpha and str.isdecimal characters (the test is cheaper than the search)
    toks = [[x] if x.isalpha() or x.isdecimal() else find(x) for x in map(str.lower, strs)]
    lens = np.fromiter(map(len, toks), np.int64, len(toks))
    flat = np.empty(int(lens.sum()), dtype=object)
    flat[:] = list(chain.from_iterable(toks))
    return np.repeat(np.asarray(vals.index, np.int64), lens), _hash(flat)


def _value_codes(vals: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~trustlab.er.kinds.code_tokens` of each value (as ``record_text`` writes it):
    those of its words, each distinct word's found once (a word's codes do not depend on
    the words around it). Only words with a digit can be codes; a word of digits only is one
    when it has at least 5 (``code_tokens``' rule), the others go through ``code_tokens``."""
    from trustlab.er.kinds import code_tokens

    words = _digit_words(vals)
    if not len(words):
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    dec = words.str.isdecimal().to_numpy(bool)
    at = words.index.to_numpy(np.int64)
    num = words[dec]
    num = num[num.str.len() >= 5]
    rest = words[~dec]
    r, h = _value_tokens(rest.reset_index(drop=True), lambda w: _hashed(code_tokens(w.reset_index(drop=True))))
    return (np.concatenate([num.index.to_numpy(np.int64), at[~dec][r]]),
            np.concatenate([_hash(num.to_numpy(dtype=object)), h]))


def _value_letter_codes(vals: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The codes of each value that hold something besides digits (those
    :func:`~trustlab.er.comparisons.code_lists` keeps), as strings: ``(position of the value,
    code)``. A word of digits only gives only a code of digits, so only the other words with a
    digit (:func:`_digit_words`) go through ``code_tokens``, each distinct word once."""

    words = _digit_words(vals)
    rest = words[~words.str.isdecimal().to_numpy(bool)] if len(words) else words
    if not len(rest):
        return np.zeros(0, np.int64), np.zeros(0, dtype=object)
    r, code = _value_tokens(rest.reset_index(drop=True), _letter_codes)
    return rest.index.to_numpy(np.int64)[r], code


def _value_code_pair(vals: pd.Series) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(_value_codes(vals), _value_letter_codes(vals))`` (the same arrays, in the same order)
    with one :func:`_digit_words` pass and one ``code_tokens`` call on the distinct words
    without a digit-only form: the ``codes`` field's rows and its neighbour lists read the
    same words of the same values."""
    from trustlab.er.kinds import code_tokens

    none = (np.zeros(0, np.int64), np.zeros(0, np.uint64)), (np.zeros(0, np.int64), np.zeros(0, dtype=object))
    words = _digit_words(vals)
    if not len(words):
        return none
    dec = words.str.isdecimal().to_numpy(bool)
    at = words.index.to_numpy(np.int64)
    num = words[dec]
    num = num[num.str.len() >= 5]
    rest = words[~dec].reset_index(drop=True)
    at_rest = at[~dec]
    # code_tokens of each distinct word once: (word, code) rows, words ascending (as _value_tokens)
    wcodes, uw = _distinct_values(rest)
    if wcodes is None:
        wcodes, uw = np.arange(len(rest)), rest
    ct = code_tokens(uw.reset_index(drop=True)) if len(uw) else pd.Series([], dtype=object)
    ct = ct.dropna()
    c_at = ct.index.to_numpy(np.int64)
    c_str = ct.astype(str).to_numpy(dtype=object)
    r_all, pos_all = _expand_rows(wcodes, len(uw), c_at, np.arange(c_at.size))
    h = _hash(c_str)[pos_all] if c_at.size else np.zeros(0, np.uint64)
    codes_all = (np.concatenate([num.index.to_numpy(np.int64), at_rest[r_all]]),
                 np.concatenate([_hash(num.to_numpy(dtype=object)), h]))
    letter = np.fromiter((_ALL_DIGITS.fullmatch(x) is None for x in c_str), bool, c_str.size)
    r_let, pos_let = _expand_rows(wcodes, len(uw), c_at[letter], np.flatnonzero(letter))
    if not r_let.size:
        return codes_all, none[1]
    return codes_all, (at_rest[r_let], c_str[pos_let])


_ALL_DIGITS = re.compile(r"\d+")  # str.fullmatch(r"\d+")'s test


_CODE_PAIR = object()  # the key of a column's _value_code_pair in an encoding's cache


def _code_pair_part(cache: dict, col, k: int):
    """A ``tokens`` function for :func:`_value_tokens` of column ``col`` with ``cache``: part
    ``k`` of :func:`_value_code_pair` of the column's distinct values (0: ``_value_codes``,
    1: ``_value_letter_codes``), the pair found once and kept in ``cache``."""
    def tokens(vals: pd.Series):
        key = (_CODE_PAIR, col)
        if key not in cache:
            cache[key] = _value_code_pair(vals)
        return cache[key][k]
    return tokens


def _letter_codes(w: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``code_tokens`` of the words ``w`` without the codes of digits only: ``(position, code)``."""
    from trustlab.er.kinds import code_tokens

    ct = code_tokens(w.reset_index(drop=True))
    ct = ct[~ct.str.fullmatch(r"\d+").fillna(True).to_numpy(bool)] if len(ct) else ct
    return ct.index.to_numpy(np.int64), ct.to_numpy(dtype=object)


def _record_code_lists(df: pd.DataFrame, fields, n: int, cache: dict | None = None) -> np.ndarray:
    """:func:`~trustlab.er.comparisons.code_lists` of ``code_tokens(record_text(df, fields))``
    (each record's distinct codes with a letter, sorted, at most ``NEIGHBOUR_CODES_MAX``),
    from the codes of each column's distinct values: ``record_text`` joins the values with a
    space, which splits codes, so a record's codes are those of its values."""
    from trustlab.er.comparisons import code_lists
    from trustlab.er.kinds import record_fields

    recs, codes = [np.zeros(0, np.int64)], [np.zeros(0, dtype=object)]
    for g in record_fields(fields):
        for col in g.columns():
            r, c = _value_tokens(df[col], _value_letter_codes if cache is None else _code_pair_part(cache, col, 1),
                                 cache)
            recs.append(r)
            codes.append(np.asarray(c, dtype=object))
    return code_lists(pd.Series(np.concatenate(codes), index=np.concatenate(recs), dtype=object), n)


def _record_quantity_lists(df: pd.DataFrame, fields, n: int, cache: dict | None = None) -> np.ndarray:
    """:func:`~trustlab.er.comparisons.quantity_lists` of ``record_parts(df, fields)``, each
    column's distinct values (:func:`_distinct_values`, shared through ``cache``) read once."""
    from trustlab.er.comparisons import _quantity_rows, _value_quantities, quantity_lists
    from trustlab.er.kinds import record_fields, record_parts

    read = []
    for g in record_fields(fields):
        for col in g.columns():
            codes, vals = _distinct_values(df[col], cache)
            if codes is None:  # a column of other values: quantity_lists' own pass
                return quantity_lists(record_parts(df, fields))
            # as record_parts writes them (missing: ""); distinct values may write alike
            read.append((codes, _value_quantities(vals.fillna("").astype(str)), len(vals)))
    out = np.empty(n, dtype=object)
    out[:] = [()] * n
    return _quantity_rows(read, out) if n else out


def _digit_words(vals: pd.Series) -> pd.Series:
    """The words (``code_tokens``' split, lower case) of at least 4 characters with a digit in
    ``vals``, indexed by their value's index: the only words that can give a code."""
    from trustlab.er.kinds import _CODE_SPLIT

    char = "[^" + _CODE_SPLIT[1:-2] + "]"  # a character of a word (its separators: ``_CODE_SPLIT``)
    strs = _str_values(vals)
    if strs is None:
        low = vals.fillna("").astype(str).str.lower()
        low = low[low.str.contains(r"\d", regex=True).to_numpy(bool)]  # the others have no such word (nor
        # any backtracking search for one, quadratic in a word's length)
        words = low.str.findall(f"{char}*\\d{char}*").explode().dropna()
    else:  # the same words in one pass: values with a digit, lower-cased, their words with a digit
        find, at, got = re.compile(f"{char}*\\d{char}*").findall, [], []
        for p, x in enumerate(strs):
            x = x.lower()
            if _DIGIT.search(x):
                w = find(x)
                at += [p] * len(w)
                got += w
        index = np.asarray(vals.index)
        words = pd.Series(got, index=pd.Index(index[np.asarray(at, np.int64)], dtype=index.dtype), dtype=object)
    return words[words.str.len() >= 4]  # as code_tokens: shorter words give no code


def _sparse_rows(rec: np.ndarray, h: np.ndarray, n: int, order: bool = False) -> tuple:
    """Per record (``rec``: row of each token occurrence, ``h``: its token hash), its distinct
    tokens (by hash, ascending) and how often it has each: ``(indptr, hashes, counts)``; with
    ``order``, also the occurrences' order by (record, hash) and where each distinct token's
    run starts in it (what the record kind's column masks are reduced over)."""
    if not len(h):
        z = np.zeros(0, np.int64)
        return (np.zeros(n + 1, np.int64), np.zeros(0, np.uint64), np.zeros(0)) + ((z, z) if order else ())
    o = _by_row_and_hash(rec, h)
    rec, h = rec[o], h[o]
    new = np.r_[True, (rec[1:] != rec[:-1]) | (h[1:] != h[:-1])]
    starts = np.flatnonzero(new)
    cnt = np.diff(np.r_[starts, rec.size]).astype(np.float64)
    r, hh = rec[starts], h[starts]
    ptr = np.zeros(n + 1, np.int64)
    ptr[1:] = np.bincount(r, minlength=n)
    return (np.cumsum(ptr), hh, cnt) + ((o, starts) if order else ())


def _by_row_and_hash(rec: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``np.lexsort((h, rec))`` (the occurrences by row, then by hash; ties in their order):
    the hashes ranked among their distinct values (a hash table, then a sort of the distinct
    hashes only: a record's words repeat across records) and one stable sort of ``row x
    distinct + rank``, about half lexsort's time on a partition's million words."""
    rec = np.asarray(rec, np.int64)
    codes, uniq = pd.factorize(np.asarray(h, np.uint64))
    nu = int(uniq.size)
    if not rec.size or int(rec.max()) >= (2**62) // max(nu, 1) or int(rec.min()) < 0:
        return np.lexsort((h, rec))
    rank = np.empty(nu, np.int64)
    rank[np.argsort(uniq, kind="stable")] = np.arange(nu)
    return np.argsort(rec * np.int64(nu) + rank[codes], kind="stable")


def _tf_keys(df: pd.DataFrame, f, cache: dict | None = None) -> np.ndarray:
    """:func:`~trustlab.er.kinds.tf_keys`, once per distinct value."""
    return _per_value(df[f.column], lambda v: _tf_key_values(v, f), cache)


def _tf_key_values(vals: pd.Series, f) -> np.ndarray:
    """``tf_keys`` of the values ``vals`` of field ``f``: in one pass for the normalisations of
    :mod:`trustlab.er.kinds` written here (``_words``, ``_word_chars``, ``_alnum``, ``_lower``:
    the same strings), otherwise (or for a value neither a string nor missing) by
    :func:`~trustlab.er.kinds.tf_keys` itself."""
    from trustlab.er import kinds

    norm = kinds.KINDS[f.kind].normalise or kinds._lower
    one = {kinds._words: lambda x: " ".join(_CLEAN_RUN.sub(" ", x.lower()).split()),
           kinds._word_chars: lambda x: " ".join(_WORD_RUN.sub(" ", x.lower()).split()),
           kinds._alnum: lambda x: _ALNUM_RUN.sub("", x.strip().lower()),
           kinds._lower: lambda x: x.strip().lower()}.get(norm)
    strs = None if one is None else _str_values(vals)
    if strs is None:
        return kinds.tf_keys(pd.DataFrame({f.column: vals}), f)
    out = np.empty(len(strs), dtype=object)
    out[:] = [one(x) for x in strs]
    return out


def _encode(part: pd.DataFrame, fields, only, doc_freq: dict | None, tf_model, truth: str | None,
            memo: dict | None = None) -> _Enc:
    """Normalise the records of one partition once (each distinct value of a column once):
    the arrays :func:`_encoded_features` compares. The whole-record rows hold raw counts until
    :func:`_weigh` (here when ``doc_freq``, the whole table's document frequencies of
    :func:`_sum_doc_counts`, is given), and, per word, the bit mask of the columns it comes from
    (columns numbered by name, as :func:`~trustlab.er.comparisons._exploded` numbers them; a
    word in several columns is split equally among them,
    :func:`~trustlab.er.comparisons.column_split`); ``{c}:bits``
    holds the columns each record fills. With a whole-record field, ``shares`` holds the
    partition's :func:`~trustlab.er.scoring.record_share_sums`, counted from the same words.
    A TF field whose table ``tf_model`` lacks keeps its normalised values (``tfkey{k}``) and
    their counts (``tf_counts``) until :func:`_weigh` sets the frequencies: the tables are
    summed from the encodings, with no pass of their own over the records. ``memo``: the
    columns' distinct values already found (:func:`_distinct_values`' cache, for these records
    in this order), filled further here."""
    from trustlab.er.comparisons import MAX_PARTS, _no_space, _part_bits
    from trustlab.er.kinds import KINDS, record_fields

    df = part.reset_index(drop=True)
    n = len(df)
    cols: dict = {}
    csr: dict = {}
    raw_cols: list[str] = []
    shares = None
    memo = {} if memo is None else memo  # each column's distinct values, found once (:func:`_distinct_values`)
    for f in fields:
        c, kind = f.column, f.kind
        want = None if only is None else only.get(c)
        if kind in _TEXT_KINDS:
            cols[f"{c}:s"], cols[f"{c}:m"] = _text_arrays(df[c], _clean_text, memo)
        elif kind in _NORM_KINDS:
            norm = _no_space if kind == "email" else KINDS[kind].normalise
            v = _per_value(df[c], lambda x: norm(x.fillna("").astype(str)).to_numpy(dtype=object), memo)
            cols[f"{c}:s"], cols[f"{c}:m"] = v, v == ""
        elif kind == "phone":
            d = _per_value(df[c], lambda x: x.fillna("").astype(str).str.replace(r"\D+", "", regex=True)
                           .str[-10:].to_numpy(dtype=object), memo)
            cols[f"{c}:s"], cols[f"{c}:m"] = d, np.array([len(x) < 5 for x in d], bool)
        elif kind in ("exact", "model"):
            def norm_hash(v, kind=kind):
                norm = KINDS[kind].normalise(v.astype(str))
                return np.stack([_hash(norm.fillna("").to_numpy(dtype=object)),
                                 (v.isna() | (norm.fillna("") == "")).to_numpy().astype(np.uint64)], axis=1)

            hm = _per_value(df[c], norm_hash, memo)
            cols[f"{c}:h"] = np.ascontiguousarray(hm[:, 0]).astype(np.uint64, copy=False)
            cols[f"{c}:m"] = hm[:, 1] == 1
            if kind == "model":  # the normalised codes, for their variant level (code_variant)
                cols[f"{c}:s"] = _per_value(df[c], lambda x: KINDS["model"].normalise(x.fillna("").astype(str))
                                            .fillna("").to_numpy(dtype=object), memo)
        elif kind == "numeric":
            cols[f"{c}:x"] = pd.to_numeric(df[c], errors="coerce").to_numpy(np.float64)
        elif kind == "date":
            if want is None or want & {"exact", "year_sim"}:
                def days(v):
                    t = pd.to_datetime(v, errors="coerce", format="mixed", utc=True)
                    return (t - pd.Timestamp("1970-01-01", tz="UTC")).dt.days.to_numpy(np.float64)

                cols[f"{c}:x"] = _per_value(df[c], days, memo).astype(np.float64)
            cols[f"{c}:s"], cols[f"{c}:m"] = _text_arrays(df[c], _clean_text, memo)
        elif kind == "latlon":
            la, lo = f.columns()
            lat = pd.to_numeric(df[la], errors="coerce").to_numpy(np.float64)
            lon = pd.to_numeric(df[lo], errors="coerce").to_numpy(np.float64)
            bad = np.isnan(lat) | np.isnan(lon) | ((lat == 0) & (lon == 0))
            cols[f"{c}:lat"], cols[f"{c}:lon"] = np.where(bad, 0.0, lat), np.where(bad, 0.0, lon)
            cols[f"{c}:m"] = bad
        elif kind in ("record", "codes"):
            # the record text's words (or codes) are those of its columns' values, each value
            # tokenised once: ``record_text`` joins the values with spaces, which no token spans
            own = record_fields(fields)
            names = [col for g in own for col in g.columns()]
            by_name = sorted(range(len(names)), key=lambda q: (str(names[q]), q))
            rank = np.empty(len(names), np.int64)
            rank[by_name] = np.arange(len(names))
            recs, hs, ks, per_field, per_col = [], [], [], [], [None] * len(names)
            q = 0
            for g in own:
                count = np.zeros(n)
                for col in g.columns():
                    r, h = _value_tokens(df[col], _record_tokens if kind == "record" else _code_pair_part(memo, col, 0),
                                         memo)
                    recs.append(r)
                    hs.append(h)
                    ks.append(np.full(r.size, min(int(rank[q]), MAX_PARTS), np.int64))
                    per_col[rank[q]] = np.bincount(r, minlength=n)
                    count += per_col[rank[q]]
                    q += 1
                per_field.append(count)
            rec = np.concatenate(recs) if recs else np.zeros(0, np.int64)
            h = np.concatenate(hs) if hs else np.zeros(0, np.uint64)
            ptr, hh, cnt, o, start = _sparse_rows(rec, h, n, order=True)
            if kind == "record":
                # each distinct word's columns (a bit mask, columns numbered by name), in
                # _sparse_rows' order (record, hash)
                k = np.concatenate(ks) if ks else np.zeros(0, np.int64)
                mask = np.bitwise_or.reduceat(np.left_shift(np.int64(1), k[o]), start).astype(np.int64) \
                    if o.size else np.zeros(0, np.int64)
                csr[c] = (ptr, hh, cnt, mask)
                cols[f"{c}:bits"] = _part_bits(per_col) if names else np.zeros(n, np.int64)
            else:
                csr[c] = (ptr, hh, np.ones_like(cnt))
                # each record's codes as strings, for the neighbour level (_code_levels)
                cols[f"{c}:cl"] = _record_code_lists(df, fields, n, memo)
                cols[f"{c}:ql"] = _record_quantity_lists(df, fields, n, memo)  # their sizes, capacities
            if kind == "record" and own and n:
                # record_share_sums: each field's share of the record's words, summed
                cnt_f = np.stack(per_field, axis=1)
                sh = (cnt_f / np.maximum(cnt_f.sum(1, keepdims=True), 1.0)).sum(0)
                shares = ({g.column: float(x) for g, x in zip(own, sh)}, n)
        else:  # a whole-record kind without an encoder (numbers): the record text's columns
            own_cols = f.columns() or [x for g in record_fields(fields) for x in g.columns()]
            raw_cols += [x for x in own_cols if x not in raw_cols]
        if f"{c}:s" in cols:  # the normalised strings' hashes: value codes without hashing strings per pair partition
            cols[f"{c}:v"] = _hash(cols[f"{c}:s"])
            # and their lengths: the pieces of the string comparisons without counting per pair partition
            cols[f"{c}:n"] = _lengths(cols[f"{c}:s"]).astype(np.int32)
    counts = []
    for pos, k in enumerate(tf_model._tf_fields()):
        f = tf_model.fields[k]
        tab = tf_model.tf_tables_.get(f.column)
        if tab is not None:
            dflt = tf_model.tf_default_[f.column]
            cols[f"tf{k}"] = _per_value(df[f.column], lambda v, f=f, tab=tab, dflt=dflt: _tf_lookup(
                _tf_key_values(v, f), tab, dflt), memo)
        else:
            key = _tf_keys(df, f, memo)
            cols[f"tfkey{k}"] = key
            vc = pd.Series(key)
            vc = vc[vc != ""].astype(str).value_counts()
            counts.append(pd.DataFrame({"f": np.full(len(vc), pos, np.int16), "tok": vc.index.to_numpy(dtype=object),
                                        "n": vc.to_numpy(np.int64)}))
    if truth is not None:
        t = df[truth]
        cols["truth:h"], cols["truth:ok"] = _hash(t.astype(str).to_numpy(dtype=object)), t.notna().to_numpy()
    raw = df[raw_cols].copy() if raw_cols else None
    enc = _Enc(part.index.to_numpy(np.int64), cols, csr, raw, shares,
               pd.concat(counts, ignore_index=True) if counts else None)
    return enc if doc_freq is None else _weigh(enc, fields, doc_freq)


def _text_arrays(s: pd.Series, text, cache: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``text(s)`` (normalised words, missing), once per distinct value."""
    both = _per_value(s, lambda v: np.stack(text(v), axis=1), cache)
    return np.ascontiguousarray(both[:, 0]), both[:, 1].astype(bool)


def _doc_counts(enc: _Enc) -> dict:
    """Per whole-record field: the distinct token hashes of a partition and how many of its
    records hold each (a record's tokens are distinct in its row)."""
    out = {}
    for c, (_, h, *_) in enc.csr.items():
        u, k = np.unique(h, return_counts=True)
        out[c] = (u, k.astype(np.int64))
    return out


def _sum_doc_counts(parts: Sequence[dict], n: int) -> dict:
    """The whole table's document frequencies from the partitions' (:func:`_doc_counts`):
    per field, ``(n records, sorted token hashes, records holding each)``."""
    out = {}
    for c in (parts[0] if parts else {}):
        h = np.concatenate([p[c][0] for p in parts])
        k = np.concatenate([p[c][1] for p in parts])
        u, inv = np.unique(h, return_inverse=True)
        out[c] = (int(n), u, np.bincount(inv.ravel(), weights=k, minlength=u.size).astype(np.int64))
    return out


def _weigh(enc: _Enc, fields, doc_freq: dict | None, tf_model=None) -> _Enc:
    """The weights of the whole-record rows from the whole table's document frequencies:
    TF-IDF rows normalised to unit length (``record``, as ``_tfidf_cosine`` makes them:
    sublinear term frequency, ``idf = log(n / df) + 1e-6``; a fourth array holds each word's idf
    over :func:`~trustlab.er.comparisons.shared_information`) and rare (1) / common (1e-3)
    codes (``codes``, rare: held by at most ``RARE_CODE_DF`` records); with ``tf_model``, the
    TF fields' frequencies from its tables (for the records encoded before the tables were known)."""
    from trustlab.er.comparisons import RARE_CODE_DF, shared_information

    csr = dict(enc.csr)
    for f in fields:
        c = f.column
        if doc_freq is None or f.kind not in ("record", "codes") or c not in csr:
            continue
        ptr, h, cnt, *mask = csr[c]
        n_all, hs, ks = doc_freq[c]
        dfreq = np.zeros(h.size)
        if hs.size:
            dfreq = _frequencies(hs, ks, h)
        if f.kind == "record":
            w = (1.0 + np.log(np.maximum(cnt, 1.0))) * (np.log(n_all / np.maximum(dfreq, 1)) + 1e-6)
            rowid = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
            norm = np.sqrt(np.bincount(rowid, weights=w * w, minlength=ptr.size - 1))
            csr[c] = (ptr, h, w / np.where(norm > 0, norm, 1.0)[rowid])
            # beside the weights, each word's idf over the table's shared_information: a pair's
            # shared words count when theirs sum to 1
            idf = np.log(n_all / np.maximum(dfreq, 1)) + 1e-6
            csr[c] += (idf / max(shared_information(n_all), 1e-300), *mask)
        else:
            csr[c] = (ptr, h, np.where(dfreq <= RARE_CODE_DF, 1.0, 1e-3))
    cols = dict(enc.cols)
    if tf_model is not None:  # the TF fields' frequencies from the whole table's tables
        for k in tf_model._tf_fields():
            f = tf_model.fields[k]
            key = cols.pop(f"tfkey{k}", None)
            tab = tf_model.tf_tables_.get(f.column)
            if key is not None and tab is not None:
                dflt = tf_model.tf_default_[f.column]
                cols[f"tf{k}"] = _per_value(pd.Series(key, dtype=object),
                                            lambda v, tab=tab, dflt=dflt: _tf_lookup(v, tab, dflt))
    return _Enc(enc.idx, cols, csr, enc.raw, enc.shares)


def _row_keys(ptr: np.ndarray, tok: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the sparse rows ``(ptr, tok)`` of an encoding (each row's token hashes strictly
    increasing): the column of each token as the matrices of the comparisons number them
    (``pd.factorize`` order), the hashes as int64 keys in the same order (the sign bit
    flipped) and, per row, whether its columns increase (the rows SciPy would take as
    canonical)."""
    from trustlab.er.comparisons import _rows_sorted

    ids = pd.factorize(tok)[0].astype(np.int64)
    key = (np.asarray(tok, np.uint64) ^ np.uint64(1 << 63)).view(np.int64)
    return ids, key, _rows_sorted(np.asarray(ptr, np.int64), ids)


def _frequencies(hs: np.ndarray, ks: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The count ``ks`` of each token hash of ``h`` in the table ``(hs sorted, ks)`` (0 when
    absent), as float; each distinct hash of ``h`` looked up once (a partition's words repeat:
    a hash table, then a sort of the distinct ones only), in sorted order (a binary search that
    moves forward, about twice as fast as in the rows' order on a table of millions)."""
    codes, uniq = pd.factorize(np.asarray(h, np.uint64))
    o = np.argsort(uniq)
    k = np.empty(uniq.size, np.int64)
    k[o] = np.minimum(np.searchsorted(hs, uniq[o]), hs.size - 1)
    return np.where(hs[k] == uniq, ks[k], 0).astype(np.float64)[codes]


def _tf_lookup(keys, tab: dict, dflt: float) -> np.ndarray:
    """``Series(keys).map(tab).astype(float).fillna(dflt)`` as an array, by dict look-ups (no
    Series of the whole table per call): the TF frequency of each key, ``dflt`` for a key the
    table lacks."""
    keys = np.asarray(keys, dtype=object)
    got = np.fromiter((tab.get(x, np.nan) for x in keys), np.float64, keys.size)
    return np.where(np.isnan(got), dflt, got)


def _sparse_dot(rows: tuple, wa: np.ndarray, wb: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair ``k``: the sum over the tokens rows ``i[k]`` and ``j[k]`` share of weight
    ``wa`` times ``wb`` (two weightings of the same sparse rows; ``rows = (ptr, ids, key,
    canonical)``, :func:`_row_keys`), bit for bit the sums of SciPy's products of the CSR
    matrices of columns ``ids`` (:func:`~trustlab.er.comparisons.merged_row_sums`)."""
    from trustlab.er.comparisons import _rowwise_dot_scipy, merged_row_sums

    ptr, ids, key, canonical = rows
    m = ptr.size - 1
    if not key.size or not len(i):
        return np.zeros(len(i))
    wa, wb = np.ascontiguousarray(wa, np.float64), np.ascontiguousarray(wb, np.float64)
    if np.isfinite(wa).all() and np.isfinite(wb).all():
        p64 = np.asarray(ptr, np.int64)
        return merged_row_sums(p64, key, wa, p64, key, wb, i, j, canonical)
    from scipy import sparse

    A = sparse.csr_matrix((wa, ids, ptr), shape=(m, int(ids.max()) + 1))
    B = sparse.csr_matrix((wb, ids, ptr), shape=(m, int(ids.max()) + 1))
    return _rowwise_dot_scipy(A, B, i, j)


def _pair_lengths(cols: dict, c: str, i: np.ndarray, j: np.ndarray) -> tuple | None:
    """The lengths of field ``c``'s normalised strings in pairs ``i``–``j`` (None for an
    encoding without them)."""
    n = cols.get(f"{c}:n")
    return None if n is None else (n[i], n[j])


def _value_codes_of(cols: dict, c: str) -> np.ndarray:
    """Codes of the normalised strings of field ``c`` (equal codes: equal hashes), from their
    64-bit hashes (a hash table of integers is several times faster than one of strings)."""
    v = cols.get(f"{c}:v")
    return pd.factorize(v if v is not None else cols[f"{c}:s"])[0]


def _pair_similarities(cols: dict, c: str, i: np.ndarray, j: np.ndarray, scorers, miss: np.ndarray,
                       vc: np.ndarray | None = None) -> list[np.ndarray]:
    """The similarities of field ``c``'s normalised strings in pairs ``i``–``j`` by each
    ``(scorer, scale)`` of ``scorers`` (:func:`~trustlab.er.comparisons._similarities` of the
    gathered strings), NaN where ``miss`` (either value missing, as the callers mark them).
    Neither those pairs nor the pairs of two equal values (equal value codes ``vc``) are
    scored: an equal pair is 1.0, the value every scorer used here gives a value and itself
    (Jaro–Winkler, Indel and Levenshtein similarities always; the token-set and token-sort
    ratios when the string has a word, as every normalised string that is not missing has:
    ``_clean_words`` keeps words joined by single spaces, and an empty one is missing). The
    strings of the others are gathered once per distinct pair of values."""
    from trustlab.er.comparisons import _similarities

    if vc is None:
        vc = _value_codes_of(cols, c)
    ci, cj = vc[i], vc[j]
    todo = np.flatnonzero(~(miss | (ci == cj)))
    outs = [np.ones(len(i)) for _ in scorers]
    if todo.size:
        it, jt = i[todo], j[todo]
        got = _similarities(it, jt, scorers, (ci[todo], cj[todo]), _pair_lengths(cols, c, it, jt),
                            strings=cols[f"{c}:s"])
        for out, g in zip(outs, got):
            out[todo] = g
    for out in outs:
        out[miss] = np.nan
    return outs


def _record_cosine(ptr: np.ndarray, ids: np.ndarray, key: np.ndarray, canonical: np.ndarray, w: np.ndarray,
                   share: np.ndarray, mask: np.ndarray, bits: np.ndarray, i: np.ndarray,
                   j: np.ndarray, slots: int = 0):
    """The whole-record feature (``cosine``) of pairs ``i``–``j`` of an encoding's weighed
    rows ``(ptr, w, share, mask)`` (``ids``, ``key``, ``canonical``: :func:`_row_keys`;
    ``mask``: the bit mask of the columns each record's word comes from; ``bits``: the
    columns each record fills), bit for bit what :func:`_encoded_features`
    computes from two :func:`_sparse_dot` and
    :func:`~trustlab.er.comparisons.missing_is_no_disagreement`, with one merge of each
    pair's rows (:func:`trustlab.kernels.er.record_pair_sums`) instead of three and no
    sorted copies of the rows; None where that path does not apply (no pairs or no words,
    a weight that is zero or not finite: the callers then take the general one). With
    ``slots``, ``(feature, shared parts)``: the parts of :func:`~trustlab.er.comparisons.shared_parts`
    of the first ``slots`` columns, from the same merge."""
    from trustlab._chunks import work_spans
    from trustlab.er.comparisons import _JACCARD_CHUNK, _column_sums, _in_common_parts, _no_disagreement
    from trustlab.kernels import er as K

    if not len(i) or not key.size or not (np.isfinite(w).all() and np.isfinite(share).all() and np.all(w != 0)):
        return None
    p64 = np.ascontiguousarray(ptr, np.int64)
    w, share = np.ascontiguousarray(w, np.float64), np.ascontiguousarray(share, np.float64)
    mask = np.ascontiguousarray(mask, np.int64)
    i64, j64 = np.ascontiguousarray(i, np.int64), np.ascontiguousarray(j, np.int64)
    rowlen = np.diff(p64)
    n_rows = rowlen.size
    # each record's squared norm per column (a word split equally among its columns), summed
    # as _cosine_in_common sums it: np.add.at over the rows' words by increasing ids, then column
    k = int(mask.max()).bit_length()
    N = np.zeros((n_rows, k))
    K.row_column_norms(p64, np.ascontiguousarray(ids, np.int64), w, mask, N)
    dot_w, dot_s = np.empty(len(i)), np.empty(len(i))
    c_in, cover, rare = np.full(len(i), np.nan), np.full(len(i), np.nan), np.zeros(len(i), bool)
    same = np.zeros((len(i), slots))
    cols = np.arange(k)
    for a, b in work_spans(rowlen[i64] + rowlen[j64] + 1, _JACCARD_CHUNK):
        ia, jb = i64[a:b], j64[a:b]
        desc = not (canonical[ia].all() and canonical[jb].all())
        common = np.ascontiguousarray(bits[ia] & bits[jb], np.int64)
        best = np.zeros((b - a, k))
        dot = np.empty(b - a)
        K.record_pair_sums(p64, key, ids, w, share, mask, common, ia, jb, desc, dot_w[a:b], dot_s[a:b], dot, best,
                           same[a:b])
        on = ((common[:, None] >> cols[None, :]) & 1).astype(np.float64)
        ni = np.sqrt(_column_sums(N[ia] * on))
        nj = np.sqrt(_column_sums(N[jb] * on))
        c_in[a:b], cover[a:b], rare[a:b] = _in_common_parts(dot, ni, nj, best)
    out = np.clip(dot_w, 0.0, 1.0)
    out[dot_s < 1.0] = 0.0
    out = _no_disagreement(out, c_in, cover, rare, bits, i, j)
    empty = rowlen == 0
    out[empty[i] | empty[j]] = np.nan
    return (out, same) if slots else out


def _level_floors(model, f) -> dict:
    """Per feature of field ``f`` that ``model``'s comparison levels are cut from
    (``model.spec``: exact feature, level feature, thresholds), the smallest value they tell
    apart from 0: 1 - 1e-9 for the exact feature (level 0), the lower threshold for the
    level feature (levels 1 and 2; none without a second threshold)."""
    ex, sim, t1, t2, _ = model.spec(f)
    exact = 1.0 - 1e-9
    out = {ex: exact}
    low = exact if t2 is None else min(t for t in (t1, t2, exact) if t is not None)
    out[sim] = min(out.get(sim, exact), low)
    return out


def _cutoff(floors: dict | None, name: str, scale: float) -> tuple:
    """The scorer's ``score_cutoff`` for a feature whose values below ``floors[name]`` only
    matter as "below" (``()`` without floors): just under the floor (1e-6 in the feature's
    units), so a score it sets to 0 was below the floor even after the float32 rounding of
    the scores, and the levels are those of the scores themselves."""
    if floors is None or name not in floors:
        return ()
    return ((floors[name] - 1e-6) * scale,)


def _encoded_features(enc: _Enc, f, i: np.ndarray, j: np.ndarray, want,
                      floors: dict | None = None, fields=None) -> tuple[list, list, int]:
    """The features of field ``f`` for pairs ``i``–``j`` of ``enc``, as
    :data:`trustlab.er.comparisons.FEATURES` computes them from the raw records (only the
    features in ``want``, or all of them when None). With ``floors`` (:func:`_level_floors`:
    for the levels only), a string similarity below its floor may be 0 instead (rapidfuzz
    stops early): the comparison levels do not change. The whole-record comparison's
    ``shared:<column>`` parts need the compared ``fields`` (their columns)."""
    from rapidfuzz import distance, fuzz

    from trustlab.er.comparisons import neighbour_codes, quantity_levels
    from trustlab.kernels import er as K

    c, kind = f.column, f.kind
    cols = enc.cols
    if kind in _TEXT_KINDS:
        miss = cols[f"{c}:m"]
        scorers = {"jaro_winkler": (distance.JaroWinkler.normalized_similarity, 1.0),
                   "token_set": (fuzz.token_set_ratio, 100.0),
                   "indel": (distance.Indel.normalized_similarity, 1.0)}
        if kind == "address":
            scorers["token_sort"] = (fuzz.token_sort_ratio, 100.0)
        got = [k for k in scorers if want is None or k in want]
        out = _pair_similarities(cols, c, i, j, [scorers[k] + _cutoff(floors, k, scorers[k][1]) for k in got],
                                 miss[i] | miss[j])
        main = "jaro_winkler" if kind == "name" else "token_set"
        return out, got, (got.index(main) if main in got else 0)
    if kind in _NORM_KINDS or kind == "phone":
        miss = cols[f"{c}:m"]
        vc = _value_codes_of(cols, c)
        ex = (vc[i] == vc[j]).astype(np.float64)
        name, scorer = {"email": ("jaro_winkler", distance.JaroWinkler.normalized_similarity)}.get(
            kind, ("levenshtein", distance.Levenshtein.normalized_similarity))
        m = miss[i] | miss[j]
        sim = _pair_similarities(cols, c, i, j, [(scorer, 1.0, *_cutoff(floors, name, 1.0))], m, vc)[0]
        ex[m] = np.nan
        return [ex, sim], ["exact", name], 1
    if kind in ("exact", "model"):
        h, miss = cols[f"{c}:h"], cols[f"{c}:m"]
        ex = (h[i] == h[j]).astype(np.float64)
        m = miss[i] | miss[j]
        ex[m] = np.nan
        if kind == "exact":
            return [ex], ["exact"], 0
        from trustlab.er.comparisons import code_variant
        s, var = cols[f"{c}:s"], np.full(len(i), np.nan)
        k = np.flatnonzero(~m)
        var[k] = code_variant(s[i[k]], s[j[k]], letters=True)
        return [ex, var], ["exact", "variant"], 0
    if kind == "numeric":
        x = cols[f"{c}:x"]
        a, b = x[i], x[j]
        with np.errstate(invalid="ignore"):
            rel = 1.0 - np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-12)
        rel[(a == b)] = 1.0
        return [rel], ["rel_sim"], 0
    if kind == "date":
        out, names = [], []
        if f"{c}:x" in cols:
            a, b = cols[f"{c}:x"][i], cols[f"{c}:x"][j]
            diff = np.abs(a - b)
            exact = (diff == 0).astype(np.float64)
            exact[np.isnan(diff)] = np.nan
            out += [exact, np.exp(-diff / 365.0)]
            names += ["exact", "year_sim"]
        miss = cols[f"{c}:m"]
        lev = _pair_similarities(cols, c, i, j, [(distance.Levenshtein.normalized_similarity, 1.0,
                                                  *_cutoff(floors, "levenshtein", 1.0))], miss[i] | miss[j])[0]
        return out + [lev], names + ["levenshtein"], len(names)
    if kind == "latlon":
        lat, lon, bad = cols[f"{c}:lat"], cols[f"{c}:lon"], cols[f"{c}:m"]
        d = np.empty(len(i))
        if len(i):
            d[:] = K.haversine_km(lat[i], lon[i], lat[j], lon[j])
        sim = np.exp(-d / 25.0)
        sim[bad[i] | bad[j]] = np.nan
        return [sim], ["geo_sim"], 0
    if kind == "record":
        from trustlab.er.kinds import record_slot_names

        ptr, tok, w, share, mask = enc.csr[c]
        ids, key, canonical = _row_keys(ptr, tok)
        names = record_slot_names(fields) if fields is not None and want is not None and "shared" in want else []
        slots = len(names)

        def with_parts(out, D):
            return [out] + [D[:, s] for s in range(slots)], ["cosine"] + [f"shared:{x}" for x in names], 0

        fused = _record_cosine(ptr, ids, key, canonical, w, share, mask, cols[f"{c}:bits"], i, j, slots)
        if fused is not None:
            return with_parts(*fused) if slots else ([fused], ["cosine"], 0)
        rows = (ptr, ids, key, canonical)
        out = np.clip(_sparse_dot(rows, w, w, i, j), 0.0, 1.0)
        out[_sparse_dot(rows, share, np.ones_like(share), i, j) < 1.0] = 0.0
        D = np.zeros((len(i), slots))
        if tok.size and len(i):  # a column only one record fills is no disagreement (as compare)
            from scipy import sparse

            from trustlab.er.comparisons import missing_is_no_disagreement, shared_parts

            shape = (ptr.size - 1, int(ids.max()) + 1)
            A, S, H = (sparse.csr_matrix((v, ids, ptr), shape=shape) for v in (w, share, mask))
            out = missing_is_no_disagreement(out, A, S, H, cols[f"{c}:bits"], i, j)  # sorts A and H
            if slots:
                D = shared_parts(A, H, i, j, slots)
        empty = np.diff(ptr) == 0
        out[empty[i] | empty[j]] = np.nan
        return with_parts(out, D) if slots else ([out], ["cosine"], 0)
    if kind == "codes":
        ptr, tok, w = enc.csr[c]
        ids, key, canonical = _row_keys(ptr, tok)
        out = _sparse_dot((ptr, ids, key, canonical), w, np.ones_like(w), i, j)
        lv = np.where(out >= 1.0 - 1e-9, 1.0, np.where(out > 0, 0.5, 0.0))
        rowlen = np.diff(ptr)
        lv[(rowlen[i] == 0) | (rowlen[j] == 0)] = np.nan
        k = np.flatnonzero(lv == 0.0)
        lv[k[neighbour_codes(enc.cols[f"{c}:cl"], i[k], j[k])]] = 0.25
        return [quantity_levels(lv, enc.cols.get(f"{c}:ql"), i, j)], ["codes"], 0
    raise KeyError(kind)  # pragma: no cover - callers check ENCODED_KINDS



def _encoded_levels(enc: _Enc, pairs: np.ndarray, ctx: _Context) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """Levels (n_pairs, n_fields), term frequencies of the left records, the local rows
    ``(i, j)`` of ``pairs`` (canonical positions) in ``enc`` and the whole-record comparison's
    shared parts per field (:meth:`~trustlab.er.scoring.FSModel.shared_parts`, None without)."""
    loc = np.stack([np.searchsorted(enc.idx, pairs[:, 0]), np.searchsorted(enc.idx, pairs[:, 1])], axis=1)
    loc = loc.astype(np.int64)
    i, j = loc[:, 0], loc[:, 1]

    def features(f):
        if f.kind in ENCODED_KINDS:  # for the levels only: string scores under the levels' floors may be 0
            return _encoded_features(enc, f, i, j, None if ctx.only is None else ctx.only.get(f.column),
                                     _level_floors(ctx.tf_model, f), ctx.fields)
        return _raw_features(enc.raw, f, i, j, ctx)

    fm = _feature_matrix(ctx, len(pairs), features, order="F")  # only its columns are read
    G = ctx.tf_model.levels(fm)
    T = np.full((len(pairs), len(ctx.fields)), np.nan)
    for c in ctx.tf_model._tf_fields():
        if f"tf{c}" in enc.cols:
            T[:, c] = enc.cols[f"tf{c}"][i]
    return G, T, loc, ctx.tf_model.shared_parts(fm)


def _shared_fields(ctx: _Context) -> list[int]:
    """The fields whose shared parts of the whole-record comparison a level frame holds
    (``r<c>``): the record text's columns when the model asks for them (``ctx.only``)."""
    from trustlab.er.kinds import record_slot_names

    rec = [f for f in ctx.fields if f.kind == "record"]
    if not rec or ctx.only is None or "shared" not in ctx.only.get(rec[0].column, ()):
        return []
    names = set(record_slot_names(ctx.fields))
    return [c for c, f in enumerate(ctx.fields) if f.column in names]


def _pair_ids(part: pd.DataFrame) -> np.ndarray:
    """The records (canonical positions, sorted) one partition of the pair stream touches."""
    from trustlab._chunks import sorted_unique  # by sorting: NumPy's hash-based unique is slower here

    return sorted_unique(np.concatenate([part.index.to_numpy(np.int64), part["j"].to_numpy(np.int64)]))


def _level_frame_meta(ctx: _Context) -> pd.DataFrame:
    out = {"i": np.zeros(0, np.int64), "j": np.zeros(0, np.int64)}
    for c in range(len(ctx.fields)):
        out[f"g{c}"] = np.zeros(0, np.int8)
    for c in ctx.tf_model._tf_fields():
        out[f"t{c}"] = np.zeros(0)
    for c in _shared_fields(ctx):
        out[f"r{c}"] = np.zeros(0)
    if ctx.truth is not None:
        out["same"] = np.zeros(0, bool)
    return pd.DataFrame(out)


def _level_frame(pairs: pd.DataFrame, ctx: _Context, *encs: _Enc) -> pd.DataFrame:
    """One partition of the pair stream (index ``i``, column ``j``; pairs two rules
    propose appear twice and are kept once) compared from the encodings of its records
    (``encs``: the slices of the record partitions it touches): levels (``g0``…), term
    frequencies (``t0``…, TF fields) and, with the truth, whether the pair matches."""
    i = pairs.index.to_numpy(np.int64)
    j = pairs["j"].to_numpy(np.int64)
    if not len(i):
        return _level_frame_meta(ctx)
    n = int(max(i.max(), j.max())) + 1
    from trustlab._chunks import sorted_unique

    code = sorted_unique(i * n + j)  # distinct pairs, sorted
    P = np.stack([code // n, code % n], axis=1)
    enc = _Enc.concat(encs)
    G, T, loc, R = _encoded_levels(enc, P, ctx)
    out = {"i": P[:, 0], "j": P[:, 1]}
    for c in range(G.shape[1]):
        out[f"g{c}"] = G[:, c].astype(np.int8)
    for c in ctx.tf_model._tf_fields():  # term frequencies of the TF fields only (the others are NaN)
        out[f"t{c}"] = T[:, c]
    for c in _shared_fields(ctx):  # the record comparison's shared parts (scoring)
        out[f"r{c}"] = R[c] if R is not None and c in R else np.zeros(len(P))
    if ctx.truth is not None:
        h, ok = enc.cols["truth:h"], enc.cols["truth:ok"]
        out["same"] = (h[loc[:, 0]] == h[loc[:, 1]]) & ok[loc[:, 0]] & ok[loc[:, 1]]
    return pd.DataFrame(out)


def _random_level_rows(rp: np.ndarray, ctx: _Context, encs: Sequence[_EncFile], enc_divs) -> np.ndarray:
    """Levels of the random pairs ``rp`` (every row, repeats kept), their records' encodings
    read from ``encs`` (:func:`_gather`)."""
    from trustlab._chunks import sorted_unique

    if not len(rp):
        return np.zeros((0, len(ctx.fields)), np.int8)
    return _encoded_levels(_Enc.concat(_gather(encs, enc_divs, sorted_unique(rp.ravel()))), rp, ctx)[0]


def _gather(encs: Sequence[_EncFile], enc_divs, want: np.ndarray) -> list:
    """The encodings of the records at positions ``want`` (sorted, unique), read from the files
    of the record partitions that hold them (divisions ``enc_divs``), in the task that needs
    them: no intermediate result, one task per partition of pairs."""
    out = []
    for k, e in enumerate(encs):
        a = np.searchsorted(want, enc_divs[k], side="left")
        b = np.searchsorted(want, enc_divs[k + 1], side="right")
        if a < b:
            out.append(e.take(want[a:b]))
    return out or [encs[0].take(want[:0])]


# ----------------------------------------------------------------------------- the result


@dataclass
class DistributedResolution:
    """What :func:`resolve_distributed` did: where the entities are and how it got them.

    Attributes
    ----------
    output : str
        Directory of the partitioned parquet output: the records as read plus
        ``entity_id`` (the id of the entity's first record in id order).
    n_records, n_entities : int
    id_col : str
    fields : list of Field
        The compared fields (inferred on the sample, or given).
    rules : list of str
        The blocking rules used.
    model : FSModel
        The fitted Fellegi-Sunter model (the same on every worker).
    blocking : dict
        Candidate pairs, completed pairs, pair completeness (with the truth) and the
        partitioning of the pair stream.
    seconds : dict
        Seconds per stage.
    cpu_seconds : dict
        CPU seconds per stage, of the driver process and the workers together.
    memory_mb : dict
        Per stage: with a distributed client, each worker's resident and Dask-managed memory
        (``rss``, ``managed``: MB, sorted) at the stage's end, what the workers still hold; and
        the work directory's size then (``work_dir``, MB).
    metrics : dict or None
        Pairwise precision / recall / F1 and cluster metrics against ``truth`` (those of
        :func:`~trustlab.er.resolution.evaluate`, counted on the workers).
    settings : dict
        The options of the run.

    Examples
    --------
    >>> import dask, pandas as pd
    >>> df = pd.DataFrame({"id": [1, 2, 3], "name": ["ann lee", "ann lee", "bob ray"]})
    >>> with dask.config.set(scheduler="synchronous"):
    ...     r = resolve_distributed(df, fields={"name": "name"}, blocking=["token:name"])
    >>> r.entities().compute().sort_values("id")["entity_id"].tolist()
    [1, 1, 3]
    """

    output: str
    n_records: int
    n_entities: int
    id_col: str
    fields: list
    rules: list
    model: Any
    blocking: dict
    seconds: dict
    metrics: dict | None
    settings: dict
    field_report: Any = None
    components: dict = field(default_factory=dict)
    cpu_seconds: dict = field(default_factory=dict)
    memory_mb: dict = field(default_factory=dict)

    def entities(self):
        """The output as a Dask DataFrame (``dask.dataframe.read_parquet``)."""
        import dask.dataframe as dd

        return dd.read_parquet(self.output)

    def summary(self) -> dict:
        """A JSON-serialisable digest of the run."""
        return {"output": self.output, "n_records": self.n_records, "n_entities": self.n_entities,
                "fields": [f"{f.column}:{f.kind}" for f in self.fields], "rules": list(self.rules),
                "blocking": dict(self.blocking), "components": dict(self.components),
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
                "cpu_seconds": {k: round(v, 3) for k, v in self.cpu_seconds.items()},
                "memory_mb": dict(self.memory_mb), "metrics": self.metrics,
                "settings": dict(self.settings), "model_problems": list(getattr(self.model, "problems_", []))}


# ----------------------------------------------------------------------------- the driver


class _Work:
    """The run's work directory: each stage's partitions as files (``path(stage, k)``),
    removed stage by stage as soon as no later stage reads them, and all at the end. On a
    cluster of several machines it must be a directory every worker can read and write (a
    shared file system); on one machine, any local directory."""

    def __init__(self, parent: str | os.PathLike | None):
        if parent is not None:
            os.makedirs(parent, exist_ok=True)
        self.root = tempfile.mkdtemp(prefix="trustlab-work-", dir=None if parent is None else str(parent))
        self._n = 0

    def path(self, stage: str, k: int, suffix: str = ".pkl") -> str:
        return os.path.join(self.root, stage, f"part-{k:05d}{suffix}")

    def size(self) -> int:
        """Bytes of the files now in the work directory."""
        tot = 0
        for d, _, files in os.walk(self.root):
            for f in files:
                try:
                    tot += os.path.getsize(os.path.join(d, f))
                except OSError:  # pragma: no cover - removed meanwhile
                    pass
        return tot

    def fresh(self, stage: str) -> str:
        """A new stage name (``stage1``, ``stage2``…): the blocking rules may be fitted twice."""
        self._n += 1
        return f"{stage}{self._n}"

    def remove(self, stage: str | None = None) -> None:
        import shutil

        shutil.rmtree(self.root if stage is None else os.path.join(self.root, stage), ignore_errors=True)


class _Run:
    """Stage timing, computing and Dask diagnostics of one run."""

    def __init__(self, client, progress: bool):
        self.client = client
        self.progress = progress and client is not None
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}
        self.memory_mb: dict[str, dict] = {}
        self.work: _Work | None = None

    def _memory(self) -> dict:
        """Each worker's resident memory and Dask-managed memory (the data it holds: persisted
        collections and task results), in MB, at the end of a stage."""
        out = {} if self.work is None else {"work_dir": round(self.work.size() / 2**20, 1)}
        if self.client is None:
            return out
        try:
            got = self.client.run(_worker_memory)
        except Exception:  # pragma: no cover - a worker lost between stages: no figure
            return out
        return {"rss": sorted(v[0] for v in got.values()), "managed": sorted(v[1] for v in got.values()), **out}

    def _cpu(self) -> float:
        """CPU seconds used so far by this process and the workers (a stage's CPU time is
        a steadier measure than its wall time on a shared machine)."""
        got = dict([_process_cpu()])
        if self.client is not None:
            try:
                got.update(self.client.run(_process_cpu).values())  # by process: workers may be threads here
            except Exception:  # pragma: no cover - a worker lost between stages: no figure
                return float("nan")
        return float(sum(got.values()))

    @contextmanager
    def stage(self, name: str):
        import logging

        log = logging.getLogger(__name__)
        log.info("stage %s: start", name)
        t, c = time.perf_counter(), self._cpu()
        yield
        dt, dc = time.perf_counter() - t, self._cpu() - c
        self.seconds[name] = self.seconds.get(name, 0.0) + dt
        self.cpu_seconds[name] = self.cpu_seconds.get(name, 0.0) + dc
        self.memory_mb[name] = mem = self._memory()
        log.info("stage %s: %.1f s (%.1f CPU s); workers' memory at its end (MB): %s", name, dt, dc, mem)

    def submit(self, objs: list):
        """Start computing ``objs`` (on a cluster: now, in the background); :meth:`gather` the results."""
        if self.client is not None:
            futs = self.client.compute(list(objs))
            if self.progress:
                from distributed import progress

                progress(futs)
            return futs
        return list(objs)

    def gather(self, started) -> list:
        if self.client is not None:
            return self.client.gather(started)
        import dask

        return list(dask.compute(*started))

    def compute(self, *objs):
        if self.progress:
            return tuple(self.gather(self.submit(list(objs))))
        import dask

        return dask.compute(*objs)

    def share(self, obj):
        """``obj`` as one task every partition task can read (scattered to the workers)."""
        import dask

        if self.client is not None:
            fut = self.client.scatter([obj], broadcast=True, hash=False)[0]  # a list: a dict is not taken apart
            return dask.delayed(_identity)(fut)
        return dask.delayed(obj)


def _identity(x):
    return x


#: glibc ``mallopt`` parameters (``malloc.h``)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: glibc's initial mmap threshold (``DEFAULT_MMAP_THRESHOLD_MIN``) and the largest values its
#: dynamic thresholds reach on 64-bit systems (``DEFAULT_MMAP_THRESHOLD_MAX``, twice it)
_MMAP_DEFAULT, _MMAP_KEEP, _TRIM_KEEP = 128 * 1024, 32 * 2**20, 64 * 2**20
#: the environment variables each of which switches glibc's dynamic thresholds off
_MALLOC_ENV = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")


def _malloc_keep(on: bool) -> bool:
    """Let this (worker) process's glibc ``malloc`` keep and reuse freed blocks of up to
    32 MiB while a run lasts (``on``), and put back the settings it found after it.

    Dask's nanny starts every worker process with ``MALLOC_TRIM_THRESHOLD_=65536``
    (``distributed.nanny.pre-spawn-environ``), so that freed memory goes back to the
    system at once. Setting it also switches off glibc's *dynamic* mmap threshold, so
    every allocation of 128 KiB or more (each numpy temporary of more than 16,384
    values) is a fresh ``mmap`` whose pages are faulted in and zeroed, then unmapped
    when freed. The comparison and scoring tasks make such temporaries by the
    thousand: on 200,000 generated records the workers took 13.4 million page faults
    and 37 system CPU seconds (of 118), 0.6 million and 6.5 s without the variable
    (``bench/results/er_scale.md``, stop 47). With ``on`` the thresholds are set to
    the values the dynamic ones reach (mmap 32 MiB, trim 64 MiB): at most ~64 MiB of
    freed memory per arena stays in the process between tasks. With ``on=False`` the
    thresholds go back to the variable's value and glibc's initial mmap threshold
    (128 KiB), and freed memory is returned (``malloc_trim``).

    Acts only on Linux with glibc, and only where ``MALLOC_TRIM_THRESHOLD_`` is set and
    none of the other variables that fix a threshold is (Dask's default; with none set
    the dynamic thresholds already do this). Memory allocation only: results do not
    depend on it. Returns whether it acted.
    """
    import platform

    env = os.environ
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    if "MALLOC_TRIM_THRESHOLD_" not in env or any(k in env for k in _MALLOC_ENV[1:]) \
            or "glibc.malloc" in env.get("GLIBC_TUNABLES", ""):
        return False
    try:
        trim = int(env["MALLOC_TRIM_THRESHOLD_"])
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        if on:
            ok = libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_KEEP) and libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_KEEP)
        else:
            ok = libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_DEFAULT) and libc.mallopt(_M_TRIM_THRESHOLD, trim)
            libc.malloc_trim(0)
        return bool(ok)
    except (ValueError, OSError, AttributeError):  # pragma: no cover - an odd value, or no such libc
        return False


def _profiler(pause: bool, dask_worker=None) -> bool:
    """Pause (``pause``) or resume the statistical profiler of the Dask worker this runs on
    (its ``profile`` periodic callback, the dashboard's Profile page): whether it changed it.
    Every 10 ms (``distributed.worker.profile.interval``) it takes the stack of the task
    thread and adds it to the profile, on the worker's event loop and under the GIL; on
    this path's tasks it cost about a tenth of the workers' CPU time (200,000 generated
    records, 2 workers: 86.5 CPU s with it, 79.0 without; ``bench/results/er_scale.md``,
    stop 47)."""
    pc = getattr(dask_worker, "periodic_callbacks", {}).get("profile")
    if pc is None or pc.is_running() != pause:
        return False
    if pause:
        pc.stop()
    else:
        pc.start()
    return True


def _gc_freeze(on: bool) -> bool:
    """Move every object this process tracks now out of the cyclic garbage collector's sight
    while a run lasts (``on``: :func:`gc.freeze`), and back after it (``on=False``:
    :func:`gc.unfreeze`); whether it acted.

    The encoding, blocking and inference passes make Python lists by the hundred thousand
    (a value's words, its codes), and each full collection the collector runs meanwhile walks
    every object of the process: a worker's or the caller's modules, Dask's state and every
    list made so far. On one partition of 100,000 generated records the encoding spent
    0.3-0.5 of 2.3-2.5 CPU s in the collector, 0.0-0.2 with the objects of the process as
    the run found them frozen (``bench/results/er_scale.md``, stop 50). The objects made
    during the run are collected as before (a frozen object that becomes garbage is found
    after the run, or freed at once when nothing else refers to it). Acts only where the
    collector is on and nothing is frozen yet (a caller's own freeze is left alone), so a
    process that runs two resolutions at once is frozen and thawed once. Memory
    management only: results do not depend on it."""
    import gc

    if on:
        if not gc.isenabled() or gc.get_freeze_count():
            return False
        gc.freeze()
        return True
    gc.unfreeze()
    return True


def _run_on_workers(client, fn, *args, workers=None) -> bool | list:
    """``fn(*args)`` on every worker process of ``client`` (on ``workers``, addresses, when
    given; nothing without a client): the workers where it returned true (a list of
    addresses, or ``False`` for none)."""
    if client is None:
        return False
    try:
        got = client.run(fn, *args, **({} if workers is None else {"workers": list(workers)}))
    except Exception:  # pragma: no cover - a worker lost: the run goes on without it
        return False
    return [w for w, ok in got.items() if ok] or False


def _process_cpu() -> tuple[int, float]:
    return os.getpid(), time.process_time()


def _worker_memory(dask_worker=None) -> tuple[float, float]:
    """(resident MB, Dask-managed MB) of the worker this runs on."""
    import psutil

    rss = psutil.Process().memory_info().rss / 2**20
    managed = float(getattr(getattr(dask_worker, "state", None), "nbytes", 0) or 0) / 2**20
    return round(rss, 1), round(managed, 1)


def check_distributed_options(*, labels=None, truth=None, scorer="auto", model="logistic", link_type=None,
                              existing=None, one_to_one=False, column_map=None, compare_methods=()) -> None:
    """Refuse the :func:`trustlab.resolve` options the distributed path does not support,
    naming them and the way out.

    Examples
    --------
    >>> check_distributed_options(scorer="fellegi_sunter")
    >>> check_distributed_options(labels="entity")
    Traceback (most recent call last):
    ...
    ValueError: resolve on a Dask DataFrame or a directory (every stage on Dask) does not support labels yet; ...
    """
    bad = []
    if labels is not None:
        bad.append("labels")
    if scorer == "supervised":
        bad.append("scorer='supervised'")
    if not (isinstance(model, str) and model == "logistic"):
        bad.append("model (a saved model)")
    if link_type is not None:
        bad.append("link_type")
    if existing is not None:
        bad.append("existing")
    if one_to_one is not False:
        bad.append("one_to_one")
    if column_map is not None:
        bad.append("column_map")
    if tuple(compare_methods):
        bad.append("compare_methods")
    if truth is not None and not isinstance(truth, str):
        bad.append("truth other than a column name")
    if bad:
        raise ValueError(
            f"resolve on a Dask DataFrame or a directory (every stage on Dask) does not support {', '.join(bad)} "
            "yet; it scores pairs without labels (Fellegi-Sunter) and resolves one table. Resolve in memory "
            "(pass a pandas DataFrame or one file) or drop these options.")


@validate_params(
    {
        "records": [object],
        "output": [str, os.PathLike, None],
        "id_col": [str, None],
        "fields": [str, "sequence", "mapping", None],
        "truth": [str, None],
        "blocking": [str, "sequence", None],
        "max_block_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "method": [str],
        "weights": [{"centered", "logit"}],
        "threshold": [Interval(numbers.Real, None, None), None],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "M": [Interval(numbers.Integral, 1, None, closed="left")],
        "solver_options": ["mapping", None],
        "complete_components": [Interval(numbers.Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "sample_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "pairs_per_partition": [Interval(numbers.Integral, 1000, None, closed="left")],
        "npartitions": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "work_dir": [str, os.PathLike, None],
        "worker_profile": ["boolean"],
    }
)
def resolve_distributed(
    records: Any,
    *,
    output: str | os.PathLike | None = None,
    client: Any = None,
    id_col: str | None = None,
    fields: Any = None,
    truth: str | None = None,
    blocking: Sequence[str] | str | None = None,
    max_block_size: int = 200,
    method: str = "xer",
    weights: str = "centered",
    threshold: float | None = None,
    time_limit: float | None = None,
    M: int = 10,
    solver_options: Mapping[str, Any] | None = None,
    complete_components: int = COMPLETE_COMPONENTS,
    random_state: Any = 0,
    progress: bool = False,
    sample_size: int = SAMPLE_RECORDS,
    pairs_per_partition: int = PAIRS_PER_PARTITION,
    npartitions: int | None = None,
    work_dir: str | os.PathLike | None = None,
    worker_profile: bool = False,
) -> DistributedResolution:
    """Resolve a table that need not fit one machine, every stage on Dask.

    See the module docstring for the stages and what runs where. The options mean what
    they mean in :func:`trustlab.resolve` (unsupervised Fellegi-Sunter scoring, one table).

    Parameters
    ----------
    records : dask DataFrame, pandas DataFrame or path
        The records, or a directory (or glob) of parquet or CSV files.
    output : str or path, optional
        Directory for the partitioned parquet output (default: a new temporary directory).
    client : distributed.Client, optional
        The cluster to run on (default: the current client, else Dask's local scheduler).
    id_col : str, optional
        Unique record id column (default: ``id``, ``record_id``, ``unique_id`` or ``rec_id``).
    fields : None, list, dict or str
        Columns to compare and their kinds; inferred on the sample when None.
    truth : str, optional
        Column of true entity ids: ``metrics`` and the blocking's pair completeness.
    blocking : list of str, optional
        Blocking rules (``key``, ``token``, ``qgram``, ``all``); inferred on the sample when None.
    max_block_size : int
        Blocks with more records are purged.
    method, weights, threshold, time_limit, M, solver_options, complete_components
        As in :func:`trustlab.resolve`.
    random_state : int, Generator or None
        Seed of the random pairs u is estimated from (the local run's draw).
    progress : bool
        Show Dask's progress bar for each stage (with a distributed client; the
        dashboard shows the tasks too).
    sample_size : int
        Records the fields and rules are inferred from.
    pairs_per_partition : int
        Candidate pairs per partition of the pair stream.
    npartitions : int, optional
        Repartition the input into this many partitions first.
    work_dir : str or path, optional
        Where the intermediates go (a new subdirectory, removed at the end; default: the
        system's temporary directory): the records in canonical order, their encodings, the
        block keys, the pair stream, its levels and scores, the solved components. No stage
        keeps a collection in the workers' memory, so a worker holds its tasks' working set
        (bounded by the partition sizes) whatever the table's size; the disk holds about the
        records twice plus their encodings and pairs. On a cluster of several machines this
        must be a directory every worker can read and write (a shared file system).
    worker_profile : bool
        Keep the workers' statistical profiler (the dashboard's Profile page) running during
        the run. By default it is paused while the run lasts and resumed after: it costs about
        a tenth of the workers' CPU time here (:func:`_profiler`). Either way, on Linux with
        glibc the workers' ``malloc`` keeps freed blocks for reuse while the run lasts
        (:func:`_malloc_keep`; Dask's default ``MALLOC_TRIM_THRESHOLD_`` made a third of
        their CPU time page faults), and the objects the workers and this process hold when
        the run starts are out of the garbage collector's sight until it ends
        (:func:`_gc_freeze`; not where the caller froze them already). None of these changes
        the result.

    Returns
    -------
    DistributedResolution

    Examples
    --------
    >>> import dask
    >>> from trustlab.er import generate_records
    >>> df = generate_records(300, random_state=0)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     r = resolve_distributed(df, id_col="rec_id", truth="entity")
    >>> r.n_records, r.metrics["f1"] > 0.9
    (300, True)
    """
    import dask

    from trustlab._validation import check_option
    from trustlab.er.cluster import CLUSTER_METHODS
    from trustlab.er.defaults import check_time_limit
    from trustlab.er.pipeline import _solver_options

    check_option(method, "method", list(CLUSTER_METHODS), func="resolve_distributed")
    time_limit = check_time_limit(time_limit, func="resolve_distributed")
    opts = _solver_options(solver_options, None)
    opts.pop("client", None)
    if method != "xer" and threshold is not None and threshold < 0:
        raise ValueError(f"resolve_distributed solves each positive-weight component apart; method={method!r} "
                         f"needs threshold >= 0 (got {threshold})")
    if client is None:
        try:
            from distributed import get_client

            client = get_client()
        except (ImportError, ValueError):
            client = None
    run = _Run(client, progress)
    ctx_client = client.as_current() if client is not None else nullcontext()
    t0 = time.perf_counter()
    with ctx_client, dask.config.set({"dataframe.convert-string": False}):
        work = run.work = _Work(work_dir)
        kept = _run_on_workers(client, _malloc_keep, True)  # see _malloc_keep: CPU time, not results
        paused = False if worker_profile else _run_on_workers(client, _profiler, True)
        frozen = _run_on_workers(client, _gc_freeze, True)  # see _gc_freeze: CPU time, not results
        here = _gc_freeze(True)  # (the driver's; False where a worker of this process froze it)
        try:
            res = _resolve(run, work, records, output=output, id_col=id_col, fields=fields, truth=truth,
                           blocking=blocking, max_block_size=int(max_block_size), random_state=random_state,
                           sample_size=int(sample_size), pairs_per_partition=int(pairs_per_partition),
                           npartitions=npartitions,
                           cfg=_SolveConfig(method, threshold, time_limit, int(M), opts, int(complete_components),
                                            weights))
        finally:
            work.remove()
            if kept:
                _run_on_workers(client, _malloc_keep, False, workers=kept)
            if paused:
                _run_on_workers(client, _profiler, False, workers=paused)
            if frozen:
                _run_on_workers(client, _gc_freeze, False, workers=frozen)
            if here:
                _gc_freeze(False)
    run.seconds["total"] = time.perf_counter() - t0
    res.seconds = dict(run.seconds)
    res.cpu_seconds = dict(run.cpu_seconds)
    res.memory_mb = dict(run.memory_mb)
    return res


def _resolve(run: _Run, work: _Work, records, *, output, id_col, fields, truth, blocking, max_block_size, random_state,
             sample_size, pairs_per_partition, npartitions, cfg: _SolveConfig) -> DistributedResolution:
    import dask
    import dask.dataframe as dd

    from trustlab.er.defaults import field_report
    from trustlab.er.records import _normalize_columns
    from trustlab.er.scoring import FSModel

    rng = check_random_state(random_state)
    # ---------------------------------------------------------------- read and order
    with run.stage("read"):
        # the records as read (``src``: counted, sampled and sorted as they are) and with text
        # as Python objects (``ddf``: its meta is what every later stage sees)
        src = _source(records, npartitions)
        names = list(_normalize_columns(_as_object(src._meta)).columns)
        if names != list(src.columns):
            src = src.rename(columns=dict(zip(src.columns, names)))
        ddf = src.map_partitions(_as_object, meta=_as_object(src._meta))
        if id_col is None:
            cands = [c for c in ddf.columns if str(c).strip().lower() in ("id", "record_id", "unique_id", "rec_id")]
            if not cands:
                raise ValueError(f"resolve_distributed needs a unique record id column; none of {list(ddf.columns)} "
                                 "is named id, record_id, unique_id or rec_id. Pass id_col=... (CLI --id-col).")
            id_col = cands[0]
        if id_col not in ddf.columns:
            raise ValueError(f"id column {id_col!r} not found; the records have columns {list(ddf.columns)}. "
                             "Pass the right one with id_col=... (CLI: --id-col).")
        if truth is not None and truth not in ddf.columns:
            raise ValueError(f"truth column {truth!r} not found; the records have columns {list(ddf.columns)}")
        # the input is read again by each use (it is not held in memory); counting reads no
        # records where the reader knows its row counts (parquet metadata)
        n = int(run.compute(src.shape[0])[0])
        if n == 0:
            raise ValueError("records is empty; at least one record is required")
    # ---------------------------------------------------------------- infer on a sample (input order)
    with run.stage("infer"):
        # (sampled as read, then text made objects: the same rows and values as sampling ``ddf``)
        if n <= sample_size:
            sample = _as_object(src.compute().reset_index(drop=True))
        else:
            seed = int(random_state) if isinstance(random_state, numbers.Integral) else 0  # rng is the local run's
            sample = _as_object(src.sample(frac=min(1.0, sample_size / n), random_state=seed).compute()
                                .reset_index(drop=True))
        if sample[id_col].isna().any():
            raise ValueError(f"id column {id_col!r} has missing values; every record needs an id")
    # ---------------------------------------------------------------- canonical order (by id)
    with run.stage("order"):
        # the distributed sort starts here, into partitions of at most RECORDS_PER_PARTITION records
        # written to the work directory; on a cluster the workers sort while the driver infers
        # (the records shuffled as read: text made objects once, by _save_sorted, not before the
        # shuffle, which would turn it into Arrow and back)
        numeric = pd.api.types.is_numeric_dtype(ddf[id_col].dtype)
        kmeta = _with_sort_key(src._meta, id_col, numeric)
        keyed = src.map_partitions(_with_sort_key, id_col, numeric, meta=kmeta)
        # the partition bounds from the sample's ids (no pass of their own over the table)
        skeys = sample[id_col].dropna()
        srt = keyed.set_index("_key", divisions=_sort_divisions(skeys if numeric else skeys.astype(str),
                                                                max(1, math.ceil(n / RECORDS_PER_PARTITION))))
        sorted_meta = _as_object(srt._meta)
        sorting = run.submit([dask.delayed(_save_sorted)(p, work.path("raw", k), id_col) for k, p in
                              enumerate(srt.to_delayed())])
        del srt, keyed
    with run.stage("infer"):
        sample = _placeholders_to_missing(sample, id_col)
        report = field_report(fields, sample, id_col=id_col, exclude=[truth] if truth else [])
        flds = list(report.fields)
        columns = sorted({c for f in flds for c in f.columns()}, key=list(sample.columns).index)
        default_blocking = blocking is None
        rules = _rules(blocking, sample, flds, max_block_size, n)
    with run.stage("order"):
        got = run.gather(sorting)
        lengths = np.array([g[0] for g in got], np.int64)
        offsets = np.r_[0, np.cumsum(lengths)]
        keep_cols = columns + ([truth] if truth and truth not in columns else [])
        mcols = [c for c in columns if c != id_col]
        view_truth = truth if truth and truth not in columns else None
        ks = [k for k in range(len(lengths)) if lengths[k] > 0]
        _check_unique_ids([got[k][1] for k in ks], id_col)
        # the sorted partitions are the records (as read): each read with its canonical positions
        divs = [int(offsets[k]) for k in ks] + [n - 1]
        raw_meta = _positioned_meta(sorted_meta)
        raw = _spilled([work.path("raw", k) for k in ks], raw_meta, divs, offsets=[int(offsets[k]) for k in ks])
        mview_meta = _view(raw_meta, id_col, mcols, view_truth)
        # the match view: written by the encoding tasks (until then, made from the records when read)
        mview = raw.map_partitions(_view, id_col, mcols, view_truth, meta=mview_meta)
    # ---------------------------------------------------------------- corpus statistics
    with run.stage("statistics"):  # the kinds without an encoder (the encoded ones' come with the encodings)
        corpus, _, _ = _statistics(run, mview, flds, n, skip=ENCODED_KINDS, tf=False)
        only = FSModel(flds).needed_features()
    # ---------------------------------------------------------------- encode every record once
    with run.stage("encode"):
        # each record partition encoded on a worker and written to the work directory; the TF
        # tables from the encoded values' counts (summed by a tree of tasks), and the whole-record
        # fields' document frequencies by token hash, summed over the partitions; then each
        # partition's TF frequencies and word weights are set (no second pass over the strings)
        tf_fields = [flds[c] for c in FSModel(flds)._tf_fields()]
        doc = any(f.kind in ("record", "codes") for f in flds)
        view_paths = [work.path("mview", k) for k in range(raw.npartitions)]
        E = [dask.delayed(_encode_file, nout=5)(p, flds, only, FSModel(flds), truth, work.path("enc", k, ""), doc,
                                                (view_paths[k], id_col, mcols, view_truth))
             for k, p in enumerate(raw.to_delayed())]
        root = _count_tree([e[1] for e in E]) if tf_fields else None
        tf_got, encs, shares, docs, enc_bytes = run.compute(root, [e[0] for e in E], [e[2] for e in E],
                                                            [e[3] for e in E], [e[4] for e in E])
        mview = _spilled(view_paths, mview_meta, divs)
        tf_tables, tf_default = _tf_tables_of_rows(tf_got, tf_fields, n) if tf_fields \
            else ({}, {})
        tf_model = FSModel(flds)
        tf_model.tf_tables_, tf_model.tf_default_ = tf_tables, tf_default
        doc_freq = _sum_doc_counts(docs, n) if doc else None
        del docs
        if doc_freq is not None or tf_fields:
            shared_df, shared_tf = run.share(doc_freq), run.share(tf_model)
            encs = list(run.compute(*[dask.delayed(_EncFile.weigh)(e, flds, shared_df, shared_tf) for e in encs]))
        ctx = _Context(flds, only, corpus, tf_model, keep_cols, truth, doc_freq)
    # ---------------------------------------------------------------- blocking, comparisons, model
    size = max_block_size
    tightened_from = None
    fitted = _fit(run, work, mview, encs, shares, rules, size, flds, ctx, tf_tables, tf_default, truth, n, rng,
                  pairs_per_partition)
    if default_blocking and fitted["model"].drifted_:
        from trustlab.er.pipeline import MIN_TIGHT_BLOCK_SIZE

        s = size
        while s // 2 >= MIN_TIGHT_BLOCK_SIZE:
            s //= 2
            r2 = _rules(None, sample, flds, s, n)
            f2 = _fit(run, work, mview, encs, shares, r2, s, flds, ctx, tf_tables, tf_default, truth, n, rng,
                      pairs_per_partition)
            if not f2["model"].drifted_:
                work.remove(fitted["dir"])
                fitted, rules, tightened_from, size = f2, r2, max_block_size, s
                break
            work.remove(f2["dir"])
    model = fitted["model"]
    model.warn_if_degenerate(stacklevel=4)
    d = len(flds)
    # ---------------------------------------------------------------- score every pair where it lies
    with run.stage("scoring"):
        shared_model = run.share(model)
        meta = pd.DataFrame({"i": np.zeros(0, np.int64), "j": np.zeros(0, np.int64), "prob": np.zeros(0),
                             "w": np.zeros(0)})
        # each partition of levels scored and written; its union-find map (the components'
        # first step) comes back with it
        spaths = [work.path("scored", k) for k in range(len(fitted["level_paths"]))]
        parts = run.compute(*[dask.delayed(_score_file)(lp, shared_model, d, cfg.weights, spaths[k])
                              for k, lp in enumerate(fitted["level_paths"])])
        scored = _spilled(spaths, meta, fitted["divisions"])
        work.remove(fitted["dir"])
    # ---------------------------------------------------------------- connected components
    with run.stage("components"):
        labels = _merge_roots(parts)
        nodes, comp = labels
        sizes = np.unique(comp, return_counts=True)[1] if comp.size else np.zeros(0, np.int64)
    # ---------------------------------------------------------------- solve each component where it lands
    with run.stage("clustering"):
        from trustlab.er.cluster import ENUM_MAX
        from trustlab.er.defaults import default_time_limit

        if cfg.method == "xer" and cfg.time_limit is None and sizes.size and sizes.max() > ENUM_MAX:
            # the local run's work budget (deterministic, counted work): from the largest component
            cfg.solver_options = {"work_limit": default_time_limit(int(sizes.max())), **dict(cfg.solver_options)}
        if cfg.complete_components:
            # the local run's rule (the smallest components first, within completion_pair_budget),
            # chosen here from every component (a partition sees only its own); a component's
            # label is its first record (canonical position, as the local run's)
            from trustlab.er.defaults import default_pair_budget
            from trustlab.er.kinds import pair_width
            from trustlab.er.scoring import completion_cutoff, completion_pair_budget

            firsts, sizes_ = np.unique(comp, return_counts=True) if comp.size else (np.zeros(0, np.int64),) * 2
            cfg.completion_cutoff = completion_cutoff(
                sizes_, firsts, cfg.complete_components,
                completion_pair_budget(n, default_pair_budget(pair_width(flds)), fitted["n_pairs"]))
        ctx = _Context(flds, only, corpus, model, columns, None, doc_freq)
        # (only the ids travel with the records: the completed pairs' records are read from
        # their encodings, which are removed after this stage)
        solved, group_stats, n_solved_entities = _solve(run, work, mview, scored, labels, ctx, cfg, id_col, encs,
                                                        [int(x) for x in mview.divisions])
        del encs
        work.remove("enc")
        work.remove("scored")
    # ---------------------------------------------------------------- write
    with run.stage("write"):
        out = str(output) if output is not None else tempfile.mkdtemp(prefix="trustlab-resolve-")
        solved_idx = solved.set_index("_idx", divisions=list(raw.divisions)) if len(nodes) else None
        cols = [id_col] + [c for c in raw.columns if c != id_col]
        meta = raw._meta[cols].copy()
        meta.insert(1, "entity_id", raw._meta[id_col])
        if solved_idx is not None:
            final = dd.map_partitions(_write_part, raw, solved_idx, id_col, cols, meta=meta, align_dataframes=False)
        else:
            final = raw.map_partitions(_write_part, None, id_col, cols, meta=meta)
        final.to_parquet(out, write_index=False, overwrite=True)
    # ---------------------------------------------------------------- evaluate
    metrics = None
    n_entities = int(n - len(nodes) + n_solved_entities)
    with run.stage("evaluation"):
        if truth is not None:
            metrics = _metrics_on_workers(out, truth)
            # measured against the truth here, not while fitting: it is evaluation, not resolution
            fitted["pair_completeness"] = _pair_completeness(run, mview, truth, fitted["truth_hits"])
            metrics["pair_completeness"] = fitted["pair_completeness"]
    status: dict[str, int] = {}
    for s in group_stats:
        for k, v in s["status"].items():
            status[k] = status.get(k, 0) + v
    blocking_stats = {
        "n_candidate_pairs": fitted["n_pairs"], "n_completed_pairs": sum(s["n_completed_pairs"] for s in group_stats),
        "pair_completeness": fitted["pair_completeness"], "rules": list(rules), "pair_partitions": fitted["npart"],
        "max_pairs_per_partition": fitted["max_part"], "tightened_from": tightened_from,
        "encoded_mb": round(sum(enc_bytes) / 2**20, 1),
        "reduction_ratio": float(1.0 - fitted["n_pairs"] / (n * (n - 1) / 2)) if n > 1 else 1.0,
    }
    return DistributedResolution(
        output=out, n_records=n, n_entities=n_entities, id_col=id_col, fields=flds, rules=list(rules), model=model,
        blocking=blocking_stats, seconds={}, metrics=metrics, field_report=report,
        components={"n_records_in_positive_pairs": int(len(nodes)), "n_components_multi": int(sizes.size),
                    "largest": int(sizes.max()) if sizes.size else 1, "status": status},
        settings={"method": cfg.method, "weights": cfg.weights, "threshold": cfg.threshold,
                  "max_block_size": size, "time_limit": cfg.time_limit, "id_col": id_col,
                  "complete_components": cfg.complete_components, "sample_size": sample_size,
                  "inferred_on": "all records" if n <= sample_size else f"a sample of about {sample_size} records",
                  "pairs_per_partition": pairs_per_partition},
    )


def _rules(blocking, sample: pd.DataFrame, flds, max_block_size: int, n: int) -> list[str]:
    """The blocking rules: the given ones, or :func:`trustlab.resolve`'s defaults inferred on
    the sample (the same rules when the sample is the whole table; see :func:`_scaled_rules`)."""
    from trustlab.er.blocking import adaptive_blocking_rules
    from trustlab.er.defaults import ALL_PAIRS_MAX
    from trustlab.er.rules import Rule, canonical_rules, parse_rule

    if blocking is None:
        if n <= ALL_PAIRS_MAX:
            rules = ["all"]
        elif len(sample) >= n:
            rules = adaptive_blocking_rules(sample, flds, max_block_size=max_block_size,
                                            max_pairs=_pair_budget(n), near_neighbours=0)
        else:
            rules = _scaled_rules(sample, flds, max_block_size, n)
    else:
        rules = [blocking] if isinstance(blocking, str) else list(blocking)
    rules = canonical_rules(rules, sample.columns)
    for r in rules:
        rule = parse_rule(r, sample.columns)
        if rule.kind == "sorted":
            raise ValueError(f"blocking rule {r!r}: sorted-neighbourhood rules are not distributed; use key, token "
                             "or qgram rules (e.g. 'token:name', 'qgram:name:4')")
        if rule.kind == "nearest":
            raise ValueError(f"blocking rule {r!r}: nearest-neighbour rules are not distributed; use key, token or "
                             "qgram rules (e.g. 'token:name', 'qgram:name:4')")
        if rule.near:
            plain = str(Rule(rule.kind, rule.columns, rule.option, rule.cap))
            raise ValueError(f"blocking rule {r!r}: near neighbours in purged blocks ('/{rule.near}') are not "
                             f"distributed; use the rule without them ({plain!r})")
        if rule.kind == "all" and n > 20_000:
            raise ValueError(f"blocking rule 'all' on {n:,} records would compare every pair; use key, token or "
                             "qgram rules")
        for c in rule.columns:
            if c not in sample.columns:
                raise ValueError(f"blocking rule {r!r} names column {c!r} that is not in the records; available: "
                                 f"{list(map(str, sample.columns))}")
    return rules


#: with default blocking, candidate pairs per record the rules may emit in all on tables of more
#: than a million records (below, the local budget, MAX_CANDIDATE_PAIRS, applies unchanged)
PAIRS_PER_RECORD = 10


def _pair_budget(n: int) -> int:
    """The default blocking's budget of candidate pairs: the local run's
    (:data:`~trustlab.er.blocking.MAX_CANDIDATE_PAIRS`) up to a million records, then
    :data:`PAIRS_PER_RECORD` per record, so the pairs grow with the table."""
    from trustlab.er.blocking import MAX_CANDIDATE_PAIRS

    return int(max(MAX_CANDIDATE_PAIRS, PAIRS_PER_RECORD * n))


def _scaled_rules(sample: pd.DataFrame, flds, max_block_size: int, n: int) -> list[str]:
    """:func:`~trustlab.er.blocking.adaptive_blocking_rules` on a sample of ``s`` of ``n``
    records, its sizes scaled: a block of ``c`` sampled records stands for about ``c n / s``
    records (so the block limit is ``max_block_size s / n``) and its pairs for ``(n / s)^2``
    times as many (so the budgets shrink by ``(s / n)^2``); the per-rule limits found
    (``@cap``) are scaled back up. An estimate: keys whose frequency the sample misjudges
    get blocks purged (or kept) that the whole table would not."""
    from trustlab.er.blocking import adaptive_blocking_rules
    from trustlab.er.rules import Rule, parse_rule

    s = len(sample)
    f = s / n
    mbs = max(2, int(round(max_block_size * f)))
    rules = adaptive_blocking_rules(sample, flds, max_block_size=mbs, pairs_per_record=max(1, int(50 * f)),
                                    max_pairs=max(1, int(_pair_budget(n) * f * f)), near_neighbours=0)
    out = []
    for r in rules:
        rule = parse_rule(r, sample.columns)
        if rule.cap is not None:
            rule = Rule(rule.kind, rule.columns, rule.option, min(max_block_size, max(2, int(round(rule.cap / f)))))
        out.append(str(rule))
    return out


def _id_ends(p: pd.DataFrame, id_col: str) -> tuple:
    """Duplicated ids within a sorted partition, and its first and last id."""
    v = p[id_col]
    return int(v.duplicated().sum()), v.iloc[0] if len(v) else None, v.iloc[-1] if len(v) else None


def _sort_divisions(keys: pd.Series, k: int) -> list:
    """Bounds that sort a table into about ``k`` partitions of equal size, from a sample of its
    sort keys (``keys``: numbers or strings): the sample's quantiles, the first bound below
    every key (Dask puts a key below the first bound into the last partition)."""
    v = np.sort(keys.to_numpy())
    if v.dtype == object:
        low = ""
    elif np.issubdtype(v.dtype, np.integer):
        low = np.iinfo(v.dtype).min
    else:
        low = -np.inf
    if not v.size:
        return [low, low]
    inner = [v[int(q)] for q in np.arange(1, k) * v.size // k] if k > 1 else []
    out = [low]
    for x in inner + [v[-1]]:
        if x > out[-1]:
            out.append(x)
    if len(out) == 1:
        out.append(out[0])
    return [x.item() if hasattr(x, "item") else x for x in out]


def _positioned_meta(sorted_meta: pd.DataFrame) -> pd.DataFrame:
    out = sorted_meta.reset_index(drop=True)
    out.index = pd.Index(np.zeros(0, np.int64), name="_idx")
    return out


def _save_sorted(part: pd.DataFrame, path: str, id_col: str) -> tuple[int, tuple]:
    """Write one partition of the id-sorted table (its sort key dropped, its text made Python
    objects by :func:`_as_object`: the shuffle moves the records as read): its length and
    :func:`_id_ends`."""
    part = _as_object(part.reset_index(drop=True))
    _save_frame(part, path)
    return len(part), _id_ends(part, id_col)


def _load_positioned(path: str, offset: int) -> pd.DataFrame:
    """A partition of the id-sorted table with its canonical positions (the index ``_idx``)."""
    part = _load_frame(path)
    part.index = pd.Index(np.arange(len(part), dtype=np.int64) + int(offset), name="_idx")
    return part


def _labels(part: pd.DataFrame, truth: str) -> pd.DataFrame:
    return pd.DataFrame({"p": part["entity_id"].astype(str).to_numpy(dtype=object),
                         "t": part[truth].astype(str).to_numpy(dtype=object)})


def _part_cell_sums(cells: pd.DataFrame) -> pd.DataFrame:
    from trustlab.metrics.clustering import CELL_SUMS, _cell_sums

    return pd.DataFrame([_cell_sums(cells["n"], cells["a"], cells["b"])], columns=list(CELL_SUMS))


def _part_size_sums(sizes: pd.Series) -> pd.DataFrame:
    from trustlab.metrics.clustering import SIZE_SUMS, _size_sums

    return pd.DataFrame([_size_sums(sizes)], columns=list(SIZE_SUMS))


def _metrics_on_workers(out: str, truth: str) -> dict:
    """:func:`~trustlab.er.resolution.evaluate` of the written entities against ``truth``
    (labels compared as text, as ``evaluate`` does), counted where the records lie: the
    contingency table's cells and the cluster sizes are Dask group-bys, each partition of
    them is reduced to a few sums on its worker, and the driver adds those up
    (:func:`trustlab.metrics.clustering._report_from_sums`). No record's label reaches the
    driver, so its memory does not grow with the records; the metrics equal ``evaluate``'s
    up to summation order (about 1e-12)."""
    import dask
    import dask.dataframe as dd

    from trustlab.metrics.clustering import CELL_SUMS, SIZE_SUMS, _report_from_sums

    raw = dd.read_parquet(out, columns=["entity_id", truth])
    lab = raw.map_partitions(_labels, truth, meta=pd.DataFrame({"p": pd.Series(dtype=object),
                                                                 "t": pd.Series(dtype=object)}))
    k = max(1, lab.npartitions)
    cells = lab.groupby(["p", "t"]).size(split_out=k).rename("n").reset_index()
    a = cells.groupby("p")["n"].sum(split_out=k).rename("a")
    b = cells.groupby("t")["n"].sum(split_out=k).rename("b")
    cells = cells.merge(a.to_frame(), left_on="p", right_index=True).merge(b.to_frame(), left_on="t",
                                                                           right_index=True)
    cmeta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in CELL_SUMS})
    smeta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in SIZE_SUMS})
    cs, as_, bs = dask.compute(cells.map_partitions(_part_cell_sums, meta=cmeta).sum(),
                               a.map_partitions(_part_size_sums, meta=smeta).sum(),
                               b.map_partitions(_part_size_sums, meta=smeta).sum())
    return _report_from_sums(cs[list(CELL_SUMS)].to_numpy(), as_[list(SIZE_SUMS)].to_numpy(),
                             bs[list(SIZE_SUMS)].to_numpy())


def _view(part: pd.DataFrame, id_col: str, mcols: list[str], truth: str | None,
          cache: dict | None = None) -> pd.DataFrame:
    """The match view (:func:`_match_view`), plus the truth column when it is not compared
    (``cache``: see :func:`_placeholders_to_missing`)."""
    view = _match_view(part, id_col, mcols, cache)
    return view.assign(**{truth: part[truth]}) if truth else view


def _check_unique_ids(got: Sequence[tuple], id_col: str) -> None:
    """Ids are sorted: a duplicate sits next to its twin, in a partition or across a boundary
    (``got``: :func:`_id_ends` of each partition, in order)."""
    dup = sum(g[0] for g in got) + sum(1 for a, b in zip(got[:-1], got[1:]) if a[2] is not None and a[2] == b[1])
    if dup:
        raise ValueError(f"id column {id_col!r} has {dup} duplicate id(s); ids must be unique per record")


def _statistics(run: _Run, mview, flds, n: int, skip: Sequence[str] = (), tf: bool = True):
    """Document frequencies of the IDF-weighted comparisons (of the fields whose kind is not
    in ``skip``: the encoded kinds' come from the encodings) and (with ``tf``) the model's TF
    tables, summed over the partitions."""
    from trustlab.er.scoring import FSModel

    meta = pd.DataFrame({"tok": pd.Series([], dtype=object), "n": np.zeros(0, np.int64)})

    def total(frame) -> pd.Series:
        s = frame.groupby("tok")["n"].sum(split_out=max(1, frame.npartitions // 4))
        return run.compute(s)[0]

    corpus: dict = {}
    for f in flds:
        what = "record" if f.kind == "record" else "codes" if f.kind == "codes" else \
            ("tokens", f.column) if f.kind == "tokens" else ("char3", f.column) if f.kind == "text" else \
            "numbers" if f.kind == "numbers" else None
        if what is not None and what not in corpus and f.kind not in skip:
            corpus[what] = (n, total(mview.map_partitions(_token_counts, what, flds, meta=meta)))
    tf_fields = [flds[c] for c in FSModel(flds)._tf_fields()]
    if not tf_fields or not tf:
        return corpus, {}, {}
    # every TF field's value counts in one pass over the records, summed by a tree of tasks
    # (the tables come to the driver whole anyway; a groupby's shuffle of every partition's
    # value rows cost more than counting them)
    import dask

    counts = _summed_counts(run, [dask.delayed(_tf_counts)(p, tf_fields) for p in mview.to_delayed()], _counts_meta())
    return corpus, *_tf_tables(counts, tf_fields, n)


def _counts_meta() -> pd.DataFrame:
    return pd.DataFrame({"f": np.zeros(0, np.int16), "tok": pd.Series([], dtype=object), "n": np.zeros(0, np.int64)})


def _summed_counts(run: _Run, parts: list, meta: pd.DataFrame) -> pd.Series:
    """The value counts of the partitions (delayed frames of ``f``, ``tok``, ``n``; None: no
    rows) summed by a tree of tasks: a Series of ``n`` by ``(f, tok)``."""
    root = _count_tree(parts)
    return _counts_series(run.compute(root)[0] if root is not None else None, meta)


def _count_tree(parts: list):
    """The delayed sum (:func:`_add_counts`) of the partitions' value counts, by a tree of tasks
    (None: no partitions)."""
    import dask

    level = list(parts)
    while len(level) > 1:
        level = [dask.delayed(_add_counts)(*level[k:k + _TREE]) for k in range(0, len(level), _TREE)]
    return level[0] if level else None


def _counts_series(got: pd.DataFrame | None, meta: pd.DataFrame) -> pd.Series:
    return (got if got is not None else meta).set_index(["f", "tok"])["n"]


def _tf_tables(counts: pd.Series, tf_fields, n: int) -> tuple[dict, dict]:
    """The TF tables (values held by at least two records, their share of the records with a
    value) and default frequencies (``1 / n``) from the summed value counts."""
    tf_tables, tf_default = {}, {}
    for k, f in enumerate(tf_fields):
        vc = counts[counts.index.get_level_values(0) == k]
        vc.index = vc.index.get_level_values(1)
        tot = max(1, int(vc.sum()))
        vc = vc[vc >= 2].sort_values(ascending=False, kind="stable")
        tf_tables[f.column] = {str(v): float(cnt / tot) for v, cnt in vc.items()}
        tf_default[f.column] = 1.0 / max(1, n)
    return tf_tables, tf_default


def _tf_tables_of_rows(got: pd.DataFrame | None, tf_fields, n: int) -> tuple[dict, dict]:
    """``_tf_tables(_counts_series(got, _counts_meta()), tf_fields, n)`` (the same tables, their
    entries in the same order) from the summed rows ``f``, ``tok``, ``n`` themselves, without a
    (field, value) index over all of them (on the driver, ~1.3 CPU s at 1M records)."""
    tf_tables, tf_default = {}, {}
    f_all = got["f"].to_numpy() if got is not None else np.zeros(0, np.int16)
    by_f = np.argsort(f_all, kind="stable")  # each field's rows, in their order
    bounds = np.searchsorted(f_all[by_f], np.arange(len(tf_fields) + 1))
    for k, f in enumerate(tf_fields):
        rows = by_f[bounds[k]:bounds[k + 1]]
        cnt = got["n"].to_numpy()[rows] if rows.size else np.zeros(0, np.int64)
        tot = max(1, int(cnt.sum()))
        keep = cnt >= 2
        rows, cnt = rows[keep], cnt[keep]
        o = np.argsort(-cnt, kind="stable")  # descending, ties in their order (sort_values' stable)
        tok = got["tok"].to_numpy(dtype=object)[rows[o]] if rows.size else np.zeros(0, dtype=object)
        tf_tables[f.column] = dict(zip([str(v) for v in tok], (cnt[o] / tot).tolist()))
        tf_default[f.column] = 1.0 / max(1, n)
    return tf_tables, tf_default


#: partial results combined per task in a tree reduction
_TREE = 8


def _add_counts(*frames: pd.DataFrame | None) -> pd.DataFrame | None:
    """Rows ``f``, ``tok``, ``n`` of several partitions, ``n`` summed per ``(f, tok)``."""
    frames = [f for f in frames if f is not None]
    if not frames:
        return None
    return pd.concat(frames, ignore_index=True).groupby(["f", "tok"], sort=False)["n"].sum().reset_index()


def _fit(run: _Run, work: "_Work", mview, encs, shares, rules, size, flds, ctx: _Context, tf_tables, tf_default,
         truth, n, rng, pairs_per_partition) -> dict:
    """Blocking, comparisons and the model for one set of rules: the pairs' levels (files in
    the work directory), the fitted model and the blocking statistics.
    ``encs``: the encoded record partitions (:class:`_EncFile`, in the order and divisions of
    ``mview``); ``shares``: their whole-record share sums; ``ctx``: the shared comparison
    context. Every intermediate (block keys, pairs, levels) goes to files under ``work``, none
    stays in memory; the levels' files are ``level_paths`` (divisions ``divisions``)."""
    import dask

    from trustlab._chunks import spans as _spans
    from trustlab.er.defaults import random_pairs
    from trustlab.er.rules import parse_rule
    from trustlab.er.scoring import FSModel, _distinct_rows_inverse

    d = len(flds)
    shared_ctx = run.share(ctx)
    fit = work.fresh("fit")
    with run.stage("blocking"):
        # one shuffle of every rule's block keys (hashed): each block lands whole in one partition
        pmeta = pd.DataFrame({"i": np.zeros(0, np.int64), "j": np.zeros(0, np.int64)})
        kmeta = pd.DataFrame({"key": np.zeros(0, np.uint64), "rec": np.zeros(0, np.int64), "r": np.zeros(0, np.int16)})
        caps = [n if parse_rule(r).kind == "all" else min(size, parse_rule(r).cap or size) for r in rules]
        kpaths = [work.path(f"{fit}/keys", k) for k in range(mview.npartitions)]
        n_keys = int(sum(run.compute(*[dask.delayed(_save_frame)(dask.delayed(_key_rows)(p, list(rules)), kpaths[k])
                                       for k, p in enumerate(mview.to_delayed())])))
        nparts = max(1, math.ceil(n_keys / KEYS_PER_PARTITION))
        blocks = _spilled(kpaths, kmeta).shuffle(on="key", npartitions=nparts).map_partitions(_block_pairs, caps,
                                                                                               meta=pmeta)
        ppaths = [work.path(f"{fit}/blocks", k) for k in range(nparts)]
        hists = run.compute(*[dask.delayed(_save_pairs)(p, ppaths[k], n) for k, p in enumerate(blocks.to_delayed())])
        work.remove(f"{fit}/keys")
        divs, n_raw = _pair_divisions(np.sum(hists, axis=0) if hists else np.zeros(_POSITION_BINS, np.int64), n,
                                      pairs_per_partition, mview.npartitions)
    with run.stage("comparisons"):
        # the pair stream by ranges of first records (divisions ``divs``): each partition reads
        # its range of every block partition's pairs (written sorted by first record: only
        # those pages), gathers the encodings of the records it touches (by id range, from the
        # record partitions' files: only their pages) and compares them; its levels are written
        # to the work directory and its level counts come back
        nlev = max(1, len(divs) - 1)
        lpaths = [work.path(f"{fit}/levels", p) for p in range(nlev)]
        edivs = [int(x) for x in mview.divisions]
        got = run.compute(*[dask.delayed(_level_file)((ppaths, divs[p], divs[p + 1], p == nlev - 1), shared_ctx, d,
                                                      lpaths[p], encs, edivs)
                            for p in range(nlev)])
        work.remove(f"{fit}/blocks")
        counts = [g[0] for g in got]
        part_sizes = np.array([g[1] for g in got], np.int64)
    with run.stage("model"):
        Gs = [c[0] for c in counts if len(c[0])]
        n_pairs = int(sum(c[1].sum() for c in counts))
        if Gs:
            Gall = np.concatenate(Gs)
            call = np.concatenate([c[1] for c in counts if len(c[0])])
            Gu, inv = _distinct_rows_inverse(Gall)
            cnt = np.bincount(inv, weights=call, minlength=len(Gu))
        else:
            Gu, cnt = np.zeros((0, d), np.int8), np.zeros(0)
        # u from random record pairs: the local run's draw, their encodings gathered from the partitions
        # (in pieces compared in parallel, each gathering the encodings of its own records)
        rp = random_pairs(n, rng)
        pieces = [rp[a:b] for a, b in _spans(len(rp), RANDOM_PAIRS_PER_TASK)]
        Gr = np.concatenate(run.compute(*[dask.delayed(_random_level_rows)(q, shared_ctx, encs, edivs)
                                          for q in pieces])) if pieces else np.zeros((0, d), np.int8)
        # each field's share of the whole record's words, summed over the partitions
        # (counted when the records were encoded, from the words of their whole-record rows)
        n_share = sum(k for _, k in shares)
        share = {c: sum(sm.get(c, 0.0) for sm, _ in shares) / n_share for c in {c for sm, _ in shares for c in sm}} \
            if n_share else {}
        model = FSModel(flds).fit_from_counts(Gu, cnt, Gr, n, tf_tables=tf_tables, tf_default=tf_default,
                                              rules=rules, record_share={k: v for k, v in share.items() if v > 0})
    # the candidate pairs of one entity (with ``truth``): the pair completeness, measured at the evaluation
    return {"level_paths": lpaths, "divisions": divs, "dir": fit, "model": model, "n_pairs": n_pairs,
            "pair_completeness": None, "truth_hits": int(sum(c[2] for c in counts)), "npart": int(len(lpaths)),
            "max_part": int(np.max(part_sizes)) if len(part_sizes) else 0}


def _save_pairs(part: pd.DataFrame, path: str, n: int) -> np.ndarray:
    """Write one partition of block pairs sorted by first record (stable), as two arrays
    (``path.i.npy``, ``path.j.npy``; nothing for none), so a range of first records is read by
    bisection (:func:`_pair_range`); the histogram of its first records (:func:`_first_counts`)."""
    i, j = part["i"].to_numpy(np.int64), part["j"].to_numpy(np.int64)
    if len(i):
        o = np.argsort(i, kind="stable")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        np.save(path + ".i.npy", i[o])
        np.save(path + ".j.npy", j[o])
    return _first_counts(part, n)


def _pair_range(paths: Sequence[str], lo: int, hi: int, last: bool) -> pd.DataFrame:
    """The block pairs (:func:`_save_pairs`' files ``paths``) whose first record ``i`` is in
    ``[lo, hi)`` (``[lo, hi]`` when ``last``): one partition of the pair stream, as the shuffle
    by ``i`` with these divisions gives it (index ``i``, column ``j``; in another row order,
    which :func:`_level_frame` does not depend on)."""
    I, J = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for p in paths:
        if not os.path.exists(p + ".i.npy"):
            continue
        i = np.load(p + ".i.npy", mmap_mode="r")
        a = int(np.searchsorted(i, lo, side="left"))
        b = int(np.searchsorted(i, hi, side="right" if last else "left"))
        if b > a:
            I.append(np.array(i[a:b]))
            J.append(np.array(np.load(p + ".j.npy", mmap_mode="r")[a:b]))
    return pd.DataFrame({"j": np.concatenate(J)}, index=pd.Index(np.concatenate(I), name="i"))


def _level_file(pairs, ctx: _Context, d: int, path: str, encs: Sequence[_EncFile], enc_divs) -> tuple:
    """:func:`_level_frame` of one partition of pairs (a frame, or ``(paths, lo, hi, last)``
    read by :func:`_pair_range`; the encodings of the records it touches read from ``encs``:
    :func:`_gather`), written to ``path``: its :func:`_level_counts` and its number of pairs
    come back."""
    if isinstance(pairs, tuple):
        pairs = _pair_range(*pairs)
    lv = _level_frame(pairs, ctx, *_gather(encs, enc_divs, _pair_ids(pairs)))
    _save_frame(lv, path)
    return _level_counts(lv, d), len(lv)


def _score_file(path: str, model, d: int, weights: str, out: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_score_frame` of one partition of levels, written to ``out``; its positive pairs'
    union-find map (:func:`_local_roots`) comes back."""
    sc = _score_frame(_load_frame(path), model, d, weights)
    _save_frame(sc, out)
    return _local_roots(sc)


#: bins of first-record positions counted to place the pair stream's partition bounds
_POSITION_BINS = 4096


def _first_counts(part: pd.DataFrame, n: int) -> np.ndarray:
    b = part["i"].to_numpy(np.int64) * _POSITION_BINS // max(n, 1)
    return np.bincount(b, minlength=_POSITION_BINS)[:_POSITION_BINS]


def _pair_divisions(hist: np.ndarray, n: int, per_part: int, at_least: int) -> tuple[list[int], int]:
    """Bounds of first-record positions that split the pair stream into partitions of about
    ``per_part`` pairs (pairs ``i < j`` crowd the low positions, so equal ranges of
    positions would not do), from a histogram of ``i`` (:func:`_first_counts`); and the number of pairs."""
    total = int(hist.sum())
    k = max(at_least, math.ceil(total / per_part))
    cum = np.cumsum(hist)
    cuts = np.searchsorted(cum, np.arange(1, k) * total / k, side="left")
    bounds = [int(-(-c * n // _POSITION_BINS)) for c in cuts + 1]  # the first position of the next bin
    if n <= 1:
        return [0, 0], total
    return sorted({0, *(b for b in bounds if 0 < b < n - 1), n - 1}), total


def _pair_completeness(run: _Run, mview, truth: str, hit: int) -> float:
    t = mview[truth].dropna().astype(str)
    vc = run.compute(t.value_counts())[0].to_numpy(np.float64)
    total = float(np.sum(vc * (vc - 1) / 2))
    return float(hit / total) if total else 1.0


def _merge_roots(parts) -> tuple[np.ndarray, np.ndarray]:
    """Global components from the per-partition union-find maps (node -> local root):
    nodes (sorted) and the smallest node of each one's component."""
    a = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    b = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    return _min_roots(a, b)


def _solve(run: _Run, work: "_Work", mview, scored, labels, ctx: _Context, cfg: _SolveConfig, id_col: str,
           encs: Sequence["_EncFile"], enc_divs):
    """Range-partition records and pairs by component and solve each partition's
    components: (Dask DataFrame of ``_idx``, ``entity_id``, read from the work directory;
    per-partition statistics; the number of entities among these records). The records travel
    with their ids only: a completed pair's records are read from the encoded record partitions
    ``encs`` (divisions ``enc_divs``)."""
    import dask
    import dask.dataframe as dd

    nodes, comp = labels
    meta = pd.DataFrame({"_idx": np.zeros(0, np.int64), "entity_id": mview._meta[id_col].to_numpy()})
    if not nodes.size:
        return dd.from_pandas(meta, npartitions=1), [], 0
    shared = run.share(labels)
    sc = np.sort(comp)
    k = max(1, math.ceil(sc.size / RECORDS_PER_GROUP))
    divs = sorted(set(sc[np.linspace(0, sc.size - 1, k + 1).round().astype(np.int64)].tolist()))
    if len(divs) < 2:
        divs = [divs[0], divs[0] + 1]
    base = mview[[id_col]]
    rmeta = _records_by_component(base._meta, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    recs = base.map_partitions(_records_by_component, shared, meta=rmeta).set_index("comp", divisions=divs)
    emeta = _edges_by_component(scored._meta, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    edges = scored.map_partitions(_edges_by_component, shared, meta=emeta).set_index("comp", divisions=divs)
    ctx2 = run.share(_Context(ctx.fields, ctx.only, ctx.corpus, ctx.tf_model, ctx.columns, None, ctx.doc_freq))
    # each partition solved once: its frame written to the work directory, its statistics and
    # its entities' number (entities lie whole in one partition) come back
    paths = [work.path("solved", k) for k in range(recs.npartitions)]
    got = run.compute(*[dask.delayed(_solve_file)(r, e, ctx2, cfg, id_col, paths[k], encs, enc_divs)
                        for k, (r, e) in enumerate(zip(recs.to_delayed(), edges.to_delayed()))])
    return _spilled(paths, meta), [g[0] for g in got], int(sum(g[1] for g in got))


def _solve_file(recs: pd.DataFrame, edges: pd.DataFrame, ctx: _Context, cfg: _SolveConfig, id_col: str,
                path: str, encs: Sequence["_EncFile"], enc_divs) -> tuple[dict, int]:
    """:func:`_solve_groups` of one partition, its frame written to ``path``: its statistics
    and number of entities come back."""
    frame, stats = _solve_groups(recs, edges, ctx, cfg, id_col, encs, enc_divs)
    _save_frame(frame, path)
    return stats, int(frame["entity_id"].nunique())
