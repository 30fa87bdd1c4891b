"""Blocking: which record pairs are worth comparing.

Rules (strings, combined by union):

* ``"key:COL"`` / ``"key:COL:P"`` — records sharing the (first ``P`` characters of the)
  normalised value of ``COL`` (several columns: ``"key:A+B"``);
* ``"token:COL"`` — records sharing any word token of ``COL`` (token blocking);
* ``"qgram:COL:Q"`` — records sharing any character ``Q``-gram of ``COL``;
* ``"sorted:COL:W"`` — sorted neighbourhood: sort by ``COL`` and pair each record with
  the next ``W-1`` records;
* ``"all"`` — every pair (small inputs only).

Blocks larger than ``max_block_size`` are purged (block purging), which bounds the work
at the cost of pairs that share only very common keys. Everything is vectorised:
pandas for keys, a Numba kernel to emit the pairs of each block.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from trustlab.er import _kernels as K
from trustlab.er.records import Field

__all__ = ["block", "default_blocking_rules", "pair_completeness", "reduction_ratio", "BlockingStats"]


def _norm(s: pd.Series) -> pd.Series:
    return s.fillna("").astype(str).str.lower().str.replace(r"[^0-9a-z ]+", " ", regex=True).str.strip()


def _pairs_from_membership(rec: np.ndarray, key: np.ndarray, max_block_size: int) -> np.ndarray:
    """rec[i] belongs to block key[i] (int codes) -> unique pairs (i<j) as int64 codes a*n+b is left to caller."""
    if rec.size == 0:
        return np.empty((0, 2), np.int64)
    order = np.lexsort((rec, key))
    k = key[order]
    r = rec[order]
    # drop repeated (record, key) memberships
    keep = np.ones(k.shape[0], bool)
    keep[1:] = (k[1:] != k[:-1]) | (r[1:] != r[:-1])
    k = k[keep]
    r = np.ascontiguousarray(r[keep], dtype=np.int64)
    bounds = np.flatnonzero(np.r_[True, k[1:] != k[:-1], True]).astype(np.int64)
    total = K.count_block_pairs(bounds, np.int64(max_block_size))
    left = np.empty(total, np.int64)
    right = np.empty(total, np.int64)
    K.fill_block_pairs(r, bounds, np.int64(max_block_size), left, right)
    return np.stack([left, right], axis=1)


def _key_membership(df: pd.DataFrame, spec: str):
    parts = spec.split(":")
    kind = parts[0]
    if kind == "all":
        return "all", None
    if len(parts) < 2:
        raise ValueError(f"blocking rule {spec!r} needs a column, e.g. 'token:name'")
    cols = parts[1].split("+")
    for c in cols:
        if c not in df.columns:
            raise ValueError(
                f"blocking rule {spec!r} names column {c!r} that is not in the records; "
                f"available: {list(map(str, df.columns))}"
            )
    n = len(df)
    if kind == "key":
        plen = int(parts[2]) if len(parts) > 2 else None
        vals = None
        valid = np.ones(n, bool)
        for c in cols:
            v = _norm(df[c]).str.replace(" ", "", regex=False)
            if plen:
                v = v.str[:plen]
            valid &= (v != "").to_numpy()  # a compound key needs every part
            vals = v if vals is None else vals + "|" + v
        codes = pd.factorize(vals)[0].astype(np.int64)
        rec = np.arange(n, dtype=np.int64)[valid]
        return "members", (rec, codes[valid])
    if kind in ("token", "qgram"):
        v = _norm(df[cols[0]]) if len(cols) == 1 else _norm(df[cols].fillna("").astype(str).agg(" ".join, axis=1))
        if kind == "token":
            toks = v.str.split()
        else:
            q = int(parts[2]) if len(parts) > 2 else 3
            toks = v.str.replace(" ", "", regex=False).map(lambda s: [s[i:i + q] for i in range(max(0, len(s) - q + 1))])
        ex = toks.explode()
        ex = ex[ex.notna() & (ex.astype(str).str.len() > 1)]
        rec = ex.index.to_numpy(np.int64)
        codes = pd.factorize(ex)[0].astype(np.int64)
        return "members", (rec, codes)
    if kind == "sorted":
        w = int(parts[2]) if len(parts) > 2 else 5
        v = _norm(df[cols[0]]) if len(cols) == 1 else _norm(df[cols].fillna("").astype(str).agg(" ".join, axis=1))
        order = np.argsort(v.to_numpy(dtype=object).astype(str), kind="stable")
        valid = (v.to_numpy(dtype=object)[order] != "")
        order = order[valid].astype(np.int64)
        ls, rs = [], []
        for d in range(1, w):
            ls.append(order[:-d] if d < order.size else order[:0])
            rs.append(order[d:])
        a = np.concatenate(ls) if ls else np.empty(0, np.int64)
        b = np.concatenate(rs) if rs else np.empty(0, np.int64)
        return "pairs", np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
    raise ValueError(
        f"unknown blocking rule kind {kind!r} in {spec!r}; valid kinds are ['key', 'token', 'qgram', 'sorted', 'all']"
    )


def default_blocking_rules(fields: Sequence[Field], n: int) -> list[str]:
    """Token blocking on text fields plus key blocking on exact/phone fields;
    every pair when ``n <= 1500``."""
    if n <= 1500:
        return ["all"]
    rules = []
    for f in fields:
        if f.kind in ("name", "string", "address"):
            rules.append(f"token:{f.column}")
        elif f.kind in ("exact", "phone", "date"):
            rules.append(f"key:{f.column}")
    return rules or ["sorted:" + fields[0].columns()[0] + ":10"]


def block(
    df: pd.DataFrame,
    rules: Sequence[str] | str,
    *,
    max_block_size: int = 200,
) -> np.ndarray:
    """Candidate pairs ``(i, j)`` with ``i < j`` (row positions), sorted and unique.

    Parameters
    ----------
    df : DataFrame
        The records (row positions are the record indices).
    rules : str or list of str
        Blocking rules (see the module docstring); their candidate sets are united.
    max_block_size : int
        Blocks with more records are purged.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["ann smith", "anne smith", "bob jones"]})
    >>> block(df, ["token:name"]).tolist()
    [[0, 1]]
    """
    if isinstance(rules, str):
        rules = [rules]
    n = len(df)
    chunks = []
    for spec in rules:
        kind, val = _key_membership(df, spec)
        if kind == "all":
            i, j = np.triu_indices(n, k=1)
            chunks.append(np.stack([i.astype(np.int64), j.astype(np.int64)], axis=1))
        elif kind == "members":
            chunks.append(_pairs_from_membership(val[0], val[1], max_block_size))
        else:
            chunks.append(val)
    if not chunks:
        return np.empty((0, 2), np.int64)
    allp = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
    allp = allp[allp[:, 0] != allp[:, 1]]
    code = np.unique(allp[:, 0].astype(np.int64) * n + allp[:, 1])
    return np.stack([code // n, code % n], axis=1).astype(np.int64)


@dataclass
class BlockingStats:
    n_records: int
    n_candidate_pairs: int
    reduction_ratio: float
    pair_completeness: float | None = None
    n_completed_pairs: int = 0

    def to_dict(self):
        return dict(self.__dict__)


def reduction_ratio(n_pairs: int, n: int) -> float:
    """``1 - candidate pairs / all pairs``."""
    tot = n * (n - 1) / 2
    return float(1.0 - n_pairs / tot) if tot > 0 else 1.0


def pair_completeness(pairs: np.ndarray, truth: np.ndarray) -> float:
    """Share of the true matching pairs that survive blocking."""
    truth = np.asarray(truth)
    _, tc = np.unique(truth, return_inverse=True)
    tc = tc.ravel()
    sizes = np.bincount(tc).astype(np.float64)
    total = float(np.sum(sizes * (sizes - 1) / 2))
    if total == 0:
        return 1.0
    hit = int(np.sum(tc[pairs[:, 0]] == tc[pairs[:, 1]])) if len(pairs) else 0
    return hit / total
