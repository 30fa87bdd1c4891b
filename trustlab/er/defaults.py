"""Safe defaults of :func:`trustlab.er.resolve`: time budget, blocking, fields, row order."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from trustlab._validation.memory import memory_budget  # noqa: F401 (resolve's pair check reads it here)

__all__ = ["check_time_limit", "default_time_limit", "default_rules", "field_report", "canonical_order",
           "random_pairs", "default_pair_budget", "pair_bytes", "ALL_PAIRS_MAX", "COMPLETE_COMPONENTS"]

#: up to this many records every pair is compared (no blocking)
ALL_PAIRS_MAX = 1500

#: after scoring, every pair inside a positive component of up to this many records is compared
#: and scored (``complete_components`` of :func:`trustlab.resolve` and ``resolve_distributed``),
#: within the pair budget, the smallest components first: at most ~2M pairs per component, about
#: twice what :data:`ALL_PAIRS_MAX` compares in a table. A record left out of a component's
#: comparisons cannot share its cluster (the partition forbids uncompared pairs), and a blocked
#: citation table of a little more than ALL_PAIRS_MAX records forms one positive component of
#: nearly all its records (stop 51: 1,737 of a simulated 1,879-record cora; 1,000 left it to the
#: neighbour completion, F1 0.821 against 0.837 compared whole). Heuristic.
COMPLETE_COMPONENTS = 2000


def check_time_limit(time_limit: Any, *, func: str = "resolve") -> float | None:
    """None (the size-scaled default) or a positive finite number of seconds.

    Examples
    --------
    >>> check_time_limit(None), check_time_limit(5)
    (None, 5.0)
    >>> check_time_limit(0)
    Traceback (most recent call last):
    ...
    ValueError: resolve: time_limit must be a positive number of seconds (or None for the size-scaled default); got 0
    """
    if time_limit is None:
        return None
    try:
        t = float(time_limit)
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}: time_limit must be a number of seconds or None; got {type(time_limit).__name__}"
        ) from None
    if not math.isfinite(t) or t <= 0:
        raise ValueError(
            f"{func}: time_limit must be a positive number of seconds (or None for the size-scaled default); "
            f"got {time_limit!r}"
        )
    return t


#: the partition solves' budget when a whole-call ``time_limit`` of :func:`~trustlab.er.resolve`
#: is (nearly) spent before clustering: they return the best partition their heuristic
#: found, status "time_limit"
MIN_CLUSTERING_SECONDS = 0.05


def default_time_limit(n_nodes: int) -> float:
    """The budget of the partition layer of :func:`~trustlab.er.resolve` (one partition
    call, shared by every component it solves) when the caller gives no time limit:
    ``10 + n_nodes / 20`` for the largest component's ``n_nodes``, capped at 120 (a
    376-record component gets ~29), in **reference seconds of counted work** (the
    ``work_limit`` of :func:`trustlab.solvers.partition`: about that many seconds on a
    quiet machine, approximate; the answer does not depend on the load). Within it the
    exact solver proves what it can; on expiry the best partition found is kept, with
    status ``"time_limit"`` and its gap.

    Examples
    --------
    >>> default_time_limit(376)
    28.8
    """
    return float(min(120.0, 10.0 + n_nodes / 20.0))


def default_rules(df: pd.DataFrame, fields: Sequence[Any], *, max_block_size: int = 200,
                  max_pairs: int | None = None, near_neighbours: int | None = None) -> list[str]:
    """Every pair up to :data:`ALL_PAIRS_MAX` records, else
    :func:`~trustlab.er.blocking.adaptive_blocking_rules` within ``max_pairs`` (default
    :func:`default_pair_budget`; a table wide enough that even its :data:`ALL_PAIRS_MAX`
    records' pairs do not fit it gets the adaptive rules too), with ``near_neighbours`` kept
    per record in the blocks its token rules purge. Where the memory left lowered
    the budget and that changed the rules, a warning says so."""
    import sys
    import warnings

    from trustlab.er.kinds import pair_width

    width = pair_width(fields)  # the fields, and the whole record's shared parts
    budget = default_pair_budget(width) if max_pairs is None else int(max_pairs)
    rules = _rules_within(df, fields, max_block_size, budget, near_neighbours)
    full = _full_pair_budget(width)
    if budget < full and rules != _rules_within(df, fields, max_block_size, full, near_neighbours):
        warnings.warn(
            f"the default blocking kept to {budget:,} candidate pairs instead of {full:,}: "
            f"{_size(full * pair_bytes(width))} of pairs and comparisons ({len(fields)} compared fields) do "
            f"not fit the memory this run may use ({_size(memory_budget())}), so it chose other rules ({rules}); "
            "fewer pairs may miss some matches. Give it more memory, compare fewer columns (fields=..., CLI "
            "--fields) or set the blocking yourself (blocking=..., CLI --blocking).",
            UserWarning, stacklevel=_caller_level(sys._getframe(0)))
    return rules


def _rules_within(df: pd.DataFrame, fields: Sequence[Any], max_block_size: int, budget: int,
                  near_neighbours: int | None = None) -> list[str]:
    from trustlab.er.blocking import adaptive_blocking_rules

    n = len(df)
    if n <= ALL_PAIRS_MAX and n * (n - 1) // 2 <= budget:
        return ["all"]
    return adaptive_blocking_rules(df, fields, max_block_size=max_block_size, max_pairs=budget,
                                   near_neighbours=near_neighbours)


#: the default blocking's memory budget for its candidate pairs and their comparisons
#: (estimated with :data:`PAIR_BYTES` + :data:`PAIR_FIELD_BYTES` per compared field)
MAX_CANDIDATE_BYTES = 4 * 2**30
#: the share of the memory a run may still use (:func:`memory_budget`) that the default
#: blocking plans for when :data:`MAX_CANDIDATE_BYTES` does not fit it
MEMORY_SHARE = 0.5


def pair_bytes(n_fields: int) -> int:
    """The estimated bytes of one candidate pair and its comparisons for ``n_fields``
    compared fields (:data:`PAIR_BYTES` + :data:`PAIR_FIELD_BYTES` per field), as the pair
    budget counts them.

    Examples
    --------
    >>> pair_bytes(10)
    384
    """
    return PAIR_BYTES + PAIR_FIELD_BYTES * max(1, int(n_fields))


def _full_pair_budget(n_fields: int) -> int:
    from trustlab.er.blocking import MAX_CANDIDATE_PAIRS

    return int(min(MAX_CANDIDATE_PAIRS, MAX_CANDIDATE_BYTES // pair_bytes(n_fields)))


def default_pair_budget(n_fields: int) -> int:
    """How many candidate pairs (counted rule by rule) the default blocking, and completing
    components after it, may make for ``n_fields`` compared fields: at most
    :data:`~trustlab.er.blocking.MAX_CANDIDATE_PAIRS` and at most :data:`MAX_CANDIDATE_BYTES`
    of pairs and comparisons, so a wide table (tens of compared columns) gets fewer pairs
    instead of a refusal. The budget is the same on every machine that can hold it (the same
    rules, the same answer); only where :func:`memory_budget` cannot hold it is it lowered
    to :data:`MEMORY_SHARE` of what can be used (:func:`default_rules` warns when that changes
    its rules).

    Examples
    --------
    >>> default_pair_budget(8) <= 10_000_000    # 64 + 8 * 32 bytes a pair: at most the pair cap
    True
    >>> default_pair_budget(64) <= 4 * 2**30 // (64 + 64 * 32)
    True
    """
    full = _full_pair_budget(n_fields)
    return int(max(0, min(full, int(memory_budget() * MEMORY_SHARE) // pair_bytes(n_fields))))


#: field inference looks at tables of at most this many columns (it costs tens of
#: milliseconds per column); wider tables need ``fields=...``
MAX_INFER_COLUMNS = 256
#: at most this many inferred fields are compared (the first ones, in column order):
#: every field adds to each comparison, EM step and blocking refit
MAX_INFERRED_FIELDS = 64
#: at most this many fields, given or inferred
MAX_FIELDS = 256


def field_report(fields: Any, df: pd.DataFrame, *, id_col: str, exclude: Sequence[str] = (), sources: Any = None):
    """:class:`~trustlab.er.fields.FieldInference` for ``fields`` (inferred when None,
    else the caller's spec, validated).

    The work is bounded up front: inference refuses tables of more than
    :data:`MAX_INFER_COLUMNS` columns and keeps the first :data:`MAX_INFERRED_FIELDS`
    fields it finds (a warning says so); a spec of more than :data:`MAX_FIELDS` fields
    is refused."""
    from trustlab.er.fields import FieldChoice, FieldInference, infer_fields_report, normalize_fields

    if fields is None:
        if df.shape[1] > MAX_INFER_COLUMNS:
            raise ValueError(
                f"the records have {df.shape[1]} columns; field inference looks at tables of at most "
                f"{MAX_INFER_COLUMNS} columns. Name the columns to compare: fields=... (CLI: --fields "
                "col:kind,...)"
            )
        rep = infer_fields_report(df, exclude=exclude, id_col=id_col, sources=sources)
        if not rep.fields:
            raise ValueError(
                "could not infer any field to compare (all columns empty, constant, id- or truth-like):\n"
                + rep.describe() + "\npass fields=... (CLI: --fields col:kind,...)"
            )
        if len(rep.fields) > MAX_INFERRED_FIELDS:
            import warnings

            dropped = {f.column for f in rep.fields[MAX_INFERRED_FIELDS:]}
            why = (f"beyond the first {MAX_INFERRED_FIELDS} inferred fields (pass fields=... to choose)")
            rep.choices = [FieldChoice(c.column, "excluded", None, why) if c.role == "field" and c.column in dropped
                           else c for c in rep.choices]
            warnings.warn(
                f"{len(rep.fields)} columns qualify as fields; only the first {MAX_INFERRED_FIELDS} are compared "
                f"(the rest, from {rep.fields[MAX_INFERRED_FIELDS].column!r} on, are not). Name the columns that "
                "identify an entity with fields=... (CLI: --fields col:kind,...)", UserWarning, stacklevel=4)
            rep.fields = rep.fields[:MAX_INFERRED_FIELDS]
        rep.id_col = id_col
        return rep
    flds = normalize_fields(fields, df, id_col=id_col, exclude=exclude)
    if len(flds) > MAX_FIELDS:
        raise ValueError(f"fields names {len(flds)} fields; at most {MAX_FIELDS} can be compared. Keep the "
                         "columns that identify an entity.")
    ch = [FieldChoice(f.column, "field", f.kind, "given by the caller") for f in flds]
    return FieldInference(fields=flds, choices=ch, id_col=id_col)


def canonical_order(df: pd.DataFrame, id_col: str) -> np.ndarray:
    """A row order that does not depend on the input order of the rows or of the columns, nor
    on the columns' names: by record id, or by a hash of the record's content when the id is
    the row number. The content's columns are taken in the order of a hash of their values
    (a sum over the rows of each value's hash, so not of the row order; ties, two columns of
    the same values, in the input's order), then each row hashed.

    Examples
    --------
    >>> df = pd.DataFrame({"_row": [0, 1, 2], "a": ["x", "y", "z"], "b": ["1", "2", "2"]})
    >>> o = canonical_order(df, "_row")
    >>> same = df.rename(columns={"a": "zz", "b": "aa"})[["_row", "aa", "zz"]].iloc[[2, 0, 1]]
    >>> same.iloc[canonical_order(same.reset_index(drop=True), "_row")]["_row"].tolist() == o.tolist()
    True
    """
    if id_col == "_row":
        content = df.drop(columns=["_row"])
        key = [int(pd.util.hash_pandas_object(content.iloc[:, q], index=False).to_numpy().sum(dtype=np.uint64))
               for q in range(content.shape[1])]
        content = content.iloc[:, sorted(range(content.shape[1]), key=lambda q: key[q])]
        content.columns = range(content.shape[1])
        h = pd.util.hash_pandas_object(content, index=False).to_numpy()
        return np.argsort(h, kind="stable")
    ids = df[id_col]
    if pd.api.types.is_numeric_dtype(ids):
        return np.argsort(ids.to_numpy(), kind="stable")
    return np.argsort(ids.astype(str).to_numpy(dtype=object).astype(str), kind="stable")


def random_pairs(n: int, rng: np.random.Generator) -> np.ndarray:
    """Random record pairs (i < j) for estimating u-probabilities."""
    n_rand = int(min(max(n * 5, 50_000), 300_000, n * (n - 1) // 2))
    ri = rng.integers(0, n, size=n_rand)
    rj = rng.integers(0, n, size=n_rand)
    ok = ri != rj
    return np.sort(np.stack([ri[ok], rj[ok]], axis=1), axis=1).astype(np.int64)


#: bytes per candidate pair, plus this many per compared field (pair indices, their
#: sort keys, probabilities and weights; comparison features): an estimate
PAIR_BYTES, PAIR_FIELD_BYTES = 64, 32


def check_pair_budget(df: pd.DataFrame, rules: Sequence[str], max_block_size: int, n_fields: int) -> int:
    """Count, before any pair is made, the candidate pairs ``rules`` can emit (an upper
    bound: rules are summed, pairs two rules share counted twice) and refuse with a
    ValueError when their estimated memory exceeds the budget (:func:`memory_budget`)
    or 2**31 pairs; return the count.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["ann lee", "anne lee", "bob lee"]})
    >>> check_pair_budget(df, ["token:name"], 200, 1)
    3
    """
    from trustlab.er.blocking import _key_membership, _near_count, _sizes_under, _unique_counts
    from trustlab.er.rules import _split_cap, parse_rule

    n = len(df)
    total = 0
    for spec in rules:
        base, cap = _split_cap(spec)
        kind, val = _key_membership(df, base)
        if kind == "all":
            total += n * (n - 1) // 2
        elif kind == "members":
            cnt = np.bincount(val[1]) if val[0].size else np.zeros(0, np.int64)
            size = min(max_block_size, cap or max_block_size)
            total += _sizes_under(cnt, size, n)[0]
            near = parse_rule(spec, df.columns).near
            if near:  # the near neighbours kept in the purged blocks (an upper bound)
                total += _near_count(_unique_counts(val[0], val[1]), size, near)
        else:
            total += len(val)
    need = total * pair_bytes(n_fields)
    budget = memory_budget()
    if total >= 2**31 or need > budget:
        raise ValueError(
            f"blocking {rules} with max_block_size={max_block_size} would make up to {total:,} candidate pairs "
            f"of {n:,} records (about {_size(need)} with their comparisons; {_size(budget)} can be used "
            "here). Lower max_block_size (CLI --max-block-size) or use more selective blocking "
            "rules (CLI --blocking), e.g. 'token:name@50'."
        )
    return total


def _caller_level(frame: Any) -> int:
    """The ``stacklevel`` of a warning raised in ``frame`` that points at the first caller
    outside this package (the user's line, whatever path led to the warning)."""
    import os

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def _size(b: int) -> str:
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"
