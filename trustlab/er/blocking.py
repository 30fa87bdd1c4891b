"""Stage 3 of :func:`trustlab.resolve`, *block*: which record pairs are worth comparing.

Rules (strings, combined by union):

* ``"key:COL"`` / ``"key:COL:P"`` — records sharing the (first ``P`` characters of the)
  normalised value of ``COL`` (several columns: ``"key:A+B"``);
* ``"token:COL"`` — records sharing any word token of ``COL`` (token blocking);
  ``"token:COL:alnum"`` also splits letters from digits (``AB1234`` shares ``1234`` with
  ``AB-1234``), as the adaptive rules do for ``tokens`` fields (model numbers);
* ``"qgram:COL:Q"`` — records sharing any character ``Q``-gram of ``COL``;
* ``"sorted:COL:W"`` — sorted neighbourhood: sort by ``COL`` and pair each record with
  the next ``W-1`` records;
* ``"nearest:COL[+COL]:K"`` — schema-agnostic nearest neighbours: each record paired with
  the ``K`` records whose words (over all the rule's columns together, letters split from
  digits) are most similar to its own, by the cosine of inverse-document-frequency weighted
  word sets (:func:`nearest_pairs`; the most common words left out of the search while the
  work would exceed :data:`NEAR_MAX_WORK`). Local only (the distributed path refuses it);
* ``"all"`` — every pair (small inputs only).

Any column name works: one that holds ``: + @ ; ,``, a quote or surrounding spaces is
written in backquotes (or double quotes; the quote doubled inside), e.g.
``"token:`http://dbpedia.org/ontology#name`"``. Rules are :class:`~trustlab.er.rules.Rule` objects inside
(:func:`~trustlab.er.rules.parse_rule` reads a string, ``str(rule)`` writes one that reads back the same,
:func:`~trustlab.er.rules.quote_column` quotes a name; the rule language is shared by the stages:
:mod:`trustlab.er.rules`); the rules chosen automatically and those saved
with a model are such strings.

Blocks larger than ``max_block_size`` are purged (block purging), which bounds the work
at the cost of pairs that share only very common keys. A rule may set a smaller limit
of its own with an ``@S`` suffix: ``"token:title:alnum@50"`` purges that rule's blocks of
more than 50 records (the adaptive rules use it to keep token blocking within budget
by dropping only its most common tokens). A token rule may keep near neighbours in the
blocks it purges instead of none: ``"token:organization@50/3"`` pairs each record of a
block of more than 50 records with the 3 records of that block most similar to it (cosine
of the records' token sets weighted by inverse document frequency; meta-blocking in
the manner of a k-nearest-neighbour join), so an entity whose many spellings make its own
words common (an organisation written 150 ways) is still linked through those words,
at most 3 pairs per record and purged block. Only blocks of at most :data:`NEAR_MAX_BLOCK`
records are searched, smallest first, while the similarities computed stay within
:data:`NEAR_MAX_WORK` (a heuristic bound on time and memory). Everything is vectorised:
pandas for keys, a Numba kernel to emit the pairs of each block.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from trustlab._chunks import column_stack, sorted_unique, spans
from trustlab._validation import Interval, validate_params
from trustlab.er.kinds import KINDS, Field
from trustlab.er.rules import Rule, _expand_rows, _int_option, _norm, key_values, parse_rule, quote_column
from trustlab.kernels import er as K

__all__ = [
    "block", "default_blocking_rules", "adaptive_blocking_rules", "rule_hits", "estimate_pair_completeness",
    "pair_completeness", "reduction_ratio", "BlockingStats", "link_pair_mask", "keep_links",
]


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
    total = K.block_pair_count(bounds, max_block_size)
    left = np.empty(total, np.int64)
    right = np.empty(total, np.int64)
    K.block_pairs(r, bounds, max_block_size, left, right)
    return column_stack([left, right], total)  # = np.stack(axis=1), copied in pieces




#: the near neighbours a default token rule keeps per record in the blocks it purges
#: (:func:`adaptive_blocking_rules`)
NEAR_NEIGHBOURS = 3
#: the largest purged block in which a ``/K`` token rule keeps each record's near neighbours
NEAR_MAX_BLOCK = 2000
#: the similarities (record pairs inside the searched blocks, summed over blocks) a ``/K``
#: rule may compute: blocks are searched smallest first until the next would exceed it
NEAR_MAX_WORK = 200_000_000


def _near_blocks(cnt: np.ndarray, cap: int) -> np.ndarray:
    """The block codes a ``/K`` rule searches for neighbours: blocks of more than ``cap``
    and at most :data:`NEAR_MAX_BLOCK` records, by increasing size (then code), while the
    sum of their squared sizes stays within :data:`NEAR_MAX_WORK`."""
    cand = np.flatnonzero((cnt > cap) & (cnt <= NEAR_MAX_BLOCK))
    if not cand.size:
        return cand
    cand = cand[np.lexsort((cand, cnt[cand]))]
    work = np.cumsum(cnt[cand].astype(np.float64) ** 2)
    return cand[work <= NEAR_MAX_WORK]


def _near_count(cnt: np.ndarray, cap: int, near: int) -> int:
    """An upper bound on the pairs a ``/near`` rule adds in its purged blocks (``near``
    per record of each searched block), from the block sizes alone."""
    b = _near_blocks(cnt, cap)
    return int(np.sum(np.minimum(cnt[b] - 1, near) * cnt[b])) if b.size else 0


def _near_pairs(rec: np.ndarray, key: np.ndarray, cap: int, near: int) -> np.ndarray:
    """Each record of a purged block (more than ``cap`` records; see :func:`_near_blocks`)
    paired with the ``near`` other records of that block whose token sets are most similar
    to its own: cosine of binary token vectors weighted by ``log((N + 1) / (df + 1)) + 1``
    (``N`` records with a token, ``df`` those with this token), ties to the lower record
    position. ``rec[i]`` holds token ``key[i]`` (int codes). Heuristic: a record's nearest
    records inside one common word's block need not be its duplicates."""
    import scipy.sparse as sp

    if rec.size == 0 or near < 1:
        return np.empty((0, 2), np.int64)
    key, rec = _distinct_members(rec, key)
    cnt = np.bincount(key)
    blocks = _near_blocks(cnt, cap)
    if not blocks.size:
        return np.empty((0, 2), np.int64)
    rows, rinv = np.unique(rec, return_inverse=True)
    idf = np.log((len(rows) + 1.0) / (cnt + 1.0)) + 1.0
    X = sp.csr_matrix((idf[key], (rinv, key)), shape=(len(rows), len(cnt)))
    norm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / np.maximum(norm, 1e-300)) @ X)
    start = np.searchsorted(key, blocks)
    out = []
    for b, a in zip(blocks, start):
        m = rinv[a:a + cnt[b]]  # the block's records (rows of X), by increasing position
        S = (X[m] @ X[m].T).toarray()
        np.fill_diagonal(S, -np.inf)
        k = min(near, len(m) - 1)
        kth = -np.partition(-S, k - 1, axis=1)[:, k - 1]  # each row's k-th largest similarity
        r, c = np.nonzero(S >= kth[:, None])  # at least k a row (more where the k-th ties)
        o = np.lexsort((c, -S[r, c], r))  # by row, then similarity down, then position
        r, c = r[o], c[o]
        first = np.searchsorted(r, np.arange(len(m)))
        keep = np.arange(len(r)) - first[r] < k
        i, j = rows[m[r[keep]]], rows[m[c[keep]]]
        out.append(np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1))
    return np.concatenate(out) if out else np.empty((0, 2), np.int64)


def _key_membership(df: pd.DataFrame, spec: "str | Rule", cache: dict | None = None):
    kind, val = membership_values(df, spec, cache)
    if kind == "members":  # block keys as int codes
        return kind, (val[0], pd.factorize(val[1])[0].astype(np.int64))
    return kind, val


#: where ``token:COL:alnum`` (and a ``nearest`` rule) splits letters from digits (model numbers
#: AB-1234 and AB1234 share 1234); ordinals (57th, 3rd) stay whole
_ALNUM_SPLIT = r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])(?!(?:st|nd|rd|th)\b)"


def _rule_text(df: pd.DataFrame, cols: list, cache: dict | None) -> pd.Series:
    """A token, q-gram, sorted or nearest rule's normalised text of ``cols``: one column's
    :func:`~trustlab.er.rules._norm` (shared through ``cache`` under ``("norm", column)``),
    several columns' values joined by a space, then normalised."""
    if len(cols) > 1:
        return _norm(df[cols].fillna("").astype(str).agg(" ".join, axis=1))
    v = cache.get(("norm", cols[0])) if cache is not None else None
    if v is None:
        v = _norm(df[cols[0]])
        if cache is not None:
            cache[("norm", cols[0])] = v
    return v


def membership_values(df: pd.DataFrame, spec: "str | Rule", cache: dict | None = None):
    """What a rule makes of ``df``: ``("all", None)``; ``("members", (rec, key))`` with
    each record position ``rec[k]`` in the block named ``key[k]`` (the normalised key or
    token, a string: the same string in any subset of the records, so blocks can be formed
    by shuffling on it, :mod:`trustlab.er.distributed`); or ``("pairs", pairs)`` for
    sorted-neighbourhood rules. ``cache`` (a dict kept by the caller for one ``df``) lets
    several rules share each column's normalisation (:func:`~trustlab.er.rules.key_values`'
    cache; a one-column token or q-gram rule's under ``("norm", column)``): the same values."""
    rule = parse_rule(spec, df.columns)
    kind = rule.kind
    if kind == "all":
        return "all", None
    cols = list(rule.columns)
    for c in cols:
        if c not in df.columns:
            raise ValueError(
                f"blocking rule {str(spec)!r} names column {c!r} that is not in the records; "
                f"available: {list(map(str, df.columns))} (quote a name that holds : + @ in backquotes, "
                "e.g. 'token:`http://x.org/ontology#name`')"
            )
    n = len(df)
    if kind == "key":
        vals, valid = key_values(df, cols, _int_option(rule, spec, None, "the key prefix length"), cache)
        rec = np.arange(n, dtype=np.int64)[valid]
        return "members", (rec, vals.to_numpy(dtype=object)[valid])
    if kind in ("token", "qgram"):
        v = _rule_text(df, cols, cache)
        if kind == "token":
            if rule.option not in (None, "alnum"):
                raise ValueError(f"blocking rule {str(spec)!r}: a token rule's option is 'alnum' "
                                 "(e.g. 'token:title:alnum')")
            if rule.option is None and len(v):
                return "members", _word_members(v)
            if rule.option == "alnum":
                # letters and digits are separate tokens (model numbers AB-1234 and AB1234
                # share 1234); ordinals (57th, 3rd) stay whole
                v = v.str.replace(_ALNUM_SPLIT, " ", regex=True)
            toks = v.str.split()
        else:
            q = _int_option(rule, spec, 3, "the q-gram length")
            toks = v.str.replace(" ", "", regex=False).map(
                lambda s: [s[i : i + q] for i in range(max(0, len(s) - q + 1))]
            )
        ex = toks.explode()
        ex = ex[ex.notna() & (ex.astype(str).str.len() > 1)]
        rec = ex.index.to_numpy(np.int64)
        return "members", (rec, ex.astype(str).to_numpy(dtype=object))
    if kind == "sorted":
        w = _int_option(rule, spec, 5, "the window")
        v = _rule_text(df, cols, cache)
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
    if kind == "nearest":
        k = _int_option(rule, spec, NEAREST_NEIGHBOURS, "the neighbours per record")
        v = _rule_text(df, cols, cache)
        return "pairs", nearest_pairs(v, k)
    raise ValueError(
        f"unknown blocking rule kind {kind!r} in {spec!r}; valid kinds are "
        "['key', 'token', 'qgram', 'sorted', 'nearest', 'all']"
    )


#: neighbours per record of a ``nearest`` rule without an option (the default rules never
#: choose one: bench/results/er_real_experiments.md, stop 52 text52)
NEAREST_NEIGHBOURS = 5
#: rows of the similarity matrix a ``nearest`` rule holds at once: ``_NEAREST_CELLS // n`` records
_NEAREST_CELLS = 1 << 24
#: the most records a ``nearest`` rule takes: its similarity rows are dense (time grows with the
#: square of the records; the largest table it was measured on, 24,628 records, took well under
#: a minute), so a larger table is refused with a message instead of running for hours
NEAREST_MAX_RECORDS = 50_000


def nearest_pairs(v: pd.Series, k: int) -> np.ndarray:
    """Each record paired with its ``k`` most similar other records (``i < j``, unique).

    ``v`` holds each record's normalised text (:func:`~trustlab.er.rules._norm`); its words
    (letters split from digits, as ``token:COL:alnum``; words of one character dropped) form
    a binary vector per record weighted by ``log((N + 1) / (df + 1)) + 1`` (``N`` records with
    a word, ``df`` those with this word) and scaled to unit length; the similarity is the
    cosine, ties to the lower record position, and a record without a shared word gets no
    neighbour. Work bound (an approximation): the words held by the most records are left out
    of the search (not of the lengths) while the products it computes, the sum over words of
    ``df ** 2``, would exceed :data:`NEAR_MAX_WORK`; so two records that share only very
    common words may not be found. The similarity matrix is computed
    ``_NEAREST_CELLS // n`` rows at a time (memory ~``_NEAREST_CELLS`` floats); its time
    grows with ``n ** 2``, so at most :data:`NEAREST_MAX_RECORDS` records are taken (a
    ``ValueError`` above).

    Examples
    --------
    >>> v = pd.Series(["acme widget 3000", "acme widget 3000 blue", "zeta gear", "zeta gear x1"])
    >>> nearest_pairs(v, 1).tolist()
    [[0, 1], [2, 3]]
    """
    import scipy.sparse as sp

    n = len(v)
    if n < 2 or k < 1:
        return np.empty((0, 2), np.int64)
    if n > NEAREST_MAX_RECORDS:
        raise ValueError(
            f"a 'nearest:' blocking rule takes at most {NEAREST_MAX_RECORDS:,} records (its work grows with the "
            f"square of the records); got {n:,}. Use key, token or qgram rules on this table "
            "(or resolve it in parts).")
    v = v.reset_index(drop=True).str.replace(_ALNUM_SPLIT, " ", regex=True)
    rec, word = _word_members(v)
    if not rec.size:
        return np.empty((0, 2), np.int64)
    key = pd.factorize(word)[0].astype(np.int64)
    key, rec = _distinct_members(rec, key)
    cnt = np.bincount(key)
    rows, rinv = np.unique(rec, return_inverse=True)
    idf = np.log((len(rows) + 1.0) / (cnt + 1.0)) + 1.0
    X = sp.csr_matrix((idf[key], (rinv, key)), shape=(len(rows), len(cnt)))
    norm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / np.maximum(norm, 1e-300)) @ X)
    # the search: the words by increasing df while sum df**2 stays within the work bound
    # (a word one record holds pairs no one: not searched)
    shared = np.flatnonzero(cnt > 1)
    order = shared[np.lexsort((shared, cnt[shared]))]
    work = np.cumsum(cnt[order].astype(np.float64) ** 2)
    keep = np.zeros(len(cnt), bool)
    keep[order[work <= NEAR_MAX_WORK]] = True
    Y = sp.csr_matrix(X @ sp.diags(keep.astype(np.float64)))
    Y.eliminate_zeros()
    YT = sp.csr_matrix(Y.T)
    m = len(rows)
    step = max(1, _NEAREST_CELLS // max(m, 1))
    kk = min(k, m - 1)
    out = []
    for a in range(0, m, step):
        b = min(m, a + step)
        S = (Y[a:b] @ YT).toarray()
        S[np.arange(b - a), np.arange(a, b)] = 0.0
        kth = -np.partition(-S, kk - 1, axis=1)[:, kk - 1]
        r, c = np.nonzero((S >= kth[:, None]) & (S > 0))
        o = np.lexsort((c, -S[r, c], r))  # by row, then similarity down, then position
        r, c = r[o], c[o]
        first = np.searchsorted(r, np.arange(b - a))
        sel = np.arange(len(r)) - first[r] < kk
        i, j = rows[a + r[sel]], rows[c[sel]]
        out.append(np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1))
    P = np.concatenate(out) if out else np.empty((0, 2), np.int64)
    if not len(P):
        return P.astype(np.int64)
    code = np.unique(P[:, 0].astype(np.int64) * n + P[:, 1])
    return np.stack([code // n, code % n], axis=1)


def _word_members(v: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A token rule's ``(rec, key)`` of normalised values ``v`` (strings): each word longer
    than one character of each record's value (``v.str.split().explode()``, records in order,
    a value's words in order; ``rec``: ``v``'s index), each distinct value split once."""
    codes, uniq = pd.factorize(v)
    at, words = [], []
    for p, x in enumerate(np.asarray(uniq, dtype=object)):
        for t in x.split():
            if len(t) > 1:
                at.append(p)
                words.append(t)
    flat = np.empty(len(words), dtype=object)
    flat[:] = words
    rows, pos = _expand_rows(codes.astype(np.int64), len(uniq), np.array(at, np.int64), np.arange(len(words)))
    return v.index.to_numpy(np.int64)[rows], flat[pos]


def default_blocking_rules(fields: Sequence[Field], n: int) -> list[str]:
    """Token blocking on text fields plus key blocking on exact/phone/date fields (each
    kind's ``default_rule`` in :data:`trustlab.er.kinds.KINDS`); every pair when ``n <= 1500``."""
    if n <= 1500:
        return ["all"]
    rules = []
    for f in fields:
        k = KINDS.get(f.kind)  # an unknown kind gets no rule
        rule = None if k is None else k.default_rule
        if rule is not None:
            rules.append(f"{rule}:{quote_column(f.column)}")
    return rules or ["sorted:" + quote_column(fields[0].columns()[0]) + ":10"]


@validate_params(
    {
        "df": [pd.DataFrame],
        "rules": [str, "sequence"],
        "max_block_size": [Interval(numbers.Integral, 2, None, closed="left")],
    }
)
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
    if isinstance(rules, (str, Rule)):
        rules = [rules]
    n = len(df)
    chunks = []
    for spec in rules:
        rule = parse_rule(spec, df.columns)
        cap = rule.cap
        kind, val = _key_membership(df, rule)
        if kind == "all":
            i, j = np.triu_indices(n, k=1)
            chunks.append(np.stack([i.astype(np.int64), j.astype(np.int64)], axis=1))
        elif kind == "members":
            size = min(max_block_size, cap or max_block_size)
            chunks.append(_pairs_from_membership(val[0], val[1], size))
            if rule.near:
                chunks.append(_near_pairs(val[0], val[1], size, rule.near))
        else:
            chunks.append(val)
    if not chunks:
        return np.empty((0, 2), np.int64)
    # in pieces of pairs, the sort too: a signal waits for one piece
    code = np.empty(sum(len(c) for c in chunks), np.int64)
    at = 0
    for c in chunks:
        for a, b in spans(len(c)):
            p = c[a:b][c[a:b, 0] != c[a:b, 1]]
            code[at:at + len(p)] = p[:, 0].astype(np.int64) * n + p[:, 1]
            at += len(p)
    code = sorted_unique(code[:at])
    out = np.empty((len(code), 2), np.int64)
    for a, b in spans(len(code)):
        out[a:b, 0], out[a:b, 1] = code[a:b] // n, code[a:b] % n
    return out


@dataclass
class BlockingStats:
    n_records: int
    n_candidate_pairs: int
    reduction_ratio: float
    pair_completeness: float | None = None
    n_completed_pairs: int = 0
    rules: list = None  # type: ignore[assignment]
    estimated_pair_completeness: float | None = None
    #: the max_block_size asked for when resolve tightened its default blocking (EM had
    #: drifted to look-alikes); the size used is in ``Resolution.settings``
    tightened_from: int | None = None
    #: the candidate-pair budget of the default blocking and of completing components
    #: (:func:`trustlab.er.defaults.default_pair_budget`), stated whatever the rules' origin
    pair_budget: int | None = None
    #: the memory the pair budget plans for: ``pair_budget`` pairs at the estimated bytes a
    #: pair and its comparisons take (:func:`trustlab.er.defaults.default_pair_budget`; an
    #: estimate of the pairs' share, not of the whole run)
    budget_bytes: int | None = None

    def to_dict(self):
        return dict(self.__dict__)


@validate_params(
    {
        "n_pairs": [Interval(numbers.Integral, 0, None, closed="left")],
        "n": [Interval(numbers.Integral, 0, None, closed="left")],
    }
)
def reduction_ratio(n_pairs: int, n: int) -> float:
    """``1 - candidate pairs / all pairs``.

    Parameters
    ----------
    n_pairs : int
        Number of candidate pairs blocking produced.
    n : int
        Number of records (all pairs: ``n (n - 1) / 2``).

    Examples
    --------
    >>> reduction_ratio(2, 4)  # 2 of 6 pairs kept
    0.6666666666666667
    """
    tot = n * (n - 1) / 2
    return float(1.0 - n_pairs / tot) if tot > 0 else 1.0


@validate_params({"pairs": ["array-like"], "truth": ["array-like"]})
def pair_completeness(pairs: np.ndarray, truth: np.ndarray) -> float:
    """Share of the true matching pairs that survive blocking.

    Parameters
    ----------
    pairs : numpy.ndarray of shape (k, 2)
        Candidate pairs, as record positions.
    truth : array-like of shape (n,)
        True entity id per record.

    Examples
    --------
    >>> pair_completeness(np.array([[0, 1], [2, 3]]), [0, 0, 0, 1])  # finds 1 of 3 true pairs
    0.3333333333333333
    """
    truth = np.asarray(truth)
    _, tc = np.unique(truth, return_inverse=True)
    tc = tc.ravel()
    sizes = np.bincount(tc).astype(np.float64)
    total = float(np.sum(sizes * (sizes - 1) / 2))
    if total == 0:
        return 1.0
    hit = int(np.sum(tc[pairs[:, 0]] == tc[pairs[:, 1]])) if len(pairs) else 0
    return hit / total


def _key_sizes(df: pd.DataFrame, spec: str, max_block_size: int, cache: dict | None = None) -> tuple[int, float]:
    """(pairs the rule emits after purging blocks larger than ``max_block_size``, share
    of records purged) without emitting them (``cache``: :func:`membership_values`')."""
    cnt = _block_counts(df, spec, cache)
    if cnt is None:
        return 0, 0.0
    if cnt.size == 0:
        return 0, 1.0
    return _sizes_under(cnt, max_block_size, len(df))


def _block_counts(df: pd.DataFrame, spec: str, cache: dict | None = None) -> np.ndarray | None:
    """Records per block of a membership rule (None for pair rules)."""
    kind, val = _key_membership(df, spec, cache)
    if kind != "members":
        return None
    return np.bincount(val[1]) if val[0].size else np.zeros(0, np.int64)


def _distinct_members(rec: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (key, record) memberships (a record that holds a token twice once), as
    int64 ``(key, rec)`` sorted by key, then record."""
    width = int(rec.max()) + 1
    code = np.unique(key.astype(np.int64) * width + rec.astype(np.int64))
    return code // width, code % width


def _unique_counts(rec: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Distinct records per block (a record that holds a token twice counted once)."""
    if not rec.size:
        return np.zeros(0, np.int64)
    return np.bincount(_distinct_members(rec, key)[0], minlength=int(key.max()) + 1)


def _sizes_under(cnt: np.ndarray, cap: int, n: int) -> tuple[int, float]:
    kept = cnt[cnt <= cap]
    return int(np.sum(kept * (kept - 1) // 2)), float(cnt[cnt > cap].sum()) / max(1, n)


#: the smallest per-rule block limit the adaptive token rules use
_MIN_TOKEN_CAP = 10


#: candidate pairs the default blocking may emit in all (its rules counted one by one): about
#: 4 GB of comparison features and scores; tables of more than 200,000 records get fewer pairs
#: per record rather than more memory
MAX_CANDIDATE_PAIRS = 10_000_000


@validate_params(
    {
        "df": [pd.DataFrame],
        "fields": ["sequence"],
        "max_block_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "pairs_per_record": [Interval(numbers.Integral, 1, None, closed="left")],
        "near_neighbours": [Interval(numbers.Integral, 0, None, closed="left"), None],
    }
)
def adaptive_blocking_rules(
    df: pd.DataFrame,
    fields: Sequence[Field],
    *,
    max_block_size: int = 200,
    pairs_per_record: int = 50,
    max_pairs: int | None = None,
    near_neighbours: int | None = None,
) -> list[str]:
    """Blocking rules chosen from the data: a union of several cheap rules.

    For each keyable field the exact normalised value is a rule when its blocks are
    small (after purging at most ``pairs_per_record * n`` pairs and less than 30 % of
    the records purged); fields too coarse alone (state, year, sex…) are combined in
    pairs into compound keys that are selective; text fields (names, titles,
    addresses) also get token blocking when it stays within budget — with a smaller
    block limit of its own (``token:title@50``: the most common tokens dropped) when the
    plain rule would not —, so records that agree on no field exactly but share a rare
    word are still compared. The union
    catches a true pair when *any* rule does. Heuristic; see
    :func:`estimate_pair_completeness` for a label-free estimate of what it misses.

    Parameters
    ----------
    df : pandas.DataFrame
        The records.
    fields : sequence of Field
        The compared fields (their kinds decide which rules are tried).
    max_block_size : int
        Blocks larger than this are purged.
    pairs_per_record : int
        Budget: a rule is kept only if it emits at most ``max(10000, pairs_per_record * len(df))``
        pairs.
    max_pairs : int, optional
        Budget of the whole union (default :data:`MAX_CANDIDATE_PAIRS`, about 4 GB of
        comparison features): rules are taken in order (selective keys, cheapest first; then
        token rules; then compound keys) while the pairs they emit, counted rule by rule (an
        upper bound on the union), stay within it. So the candidate pairs, and with them the
        time and memory of comparing and scoring, stop growing with the table once it holds
        more than ``max_pairs / pairs_per_record`` records (200,000 by default).
    near_neighbours : int
        A token rule keeps, in each block it purges, each record's ``near_neighbours`` most
        similar records (``token:title@50/3``, see the module docstring) when those pairs
        (counted as ``near_neighbours`` per record of each searched block) fit the rule's
        budget and what the other rules left of ``max_pairs`` (rules are chosen first, token
        rules in order then get theirs); 0: purged blocks give no pair; None:
        :data:`NEAR_NEIGHBOURS`.

    Examples
    --------
    >>> df = pd.DataFrame({"surname": ["lee", "lee", "ray", "roy"] * 5, "city": ["a", "b"] * 10})
    >>> adaptive_blocking_rules(df, [Field("surname", "name"), Field("city", "exact")])
    ['key:surname', 'key:city', 'token:surname']
    """
    n = len(df)
    if near_neighbours is None:
        near_neighbours = NEAR_NEIGHBOURS
    budget = max(10_000, pairs_per_record * n)
    total = MAX_CANDIDATE_PAIRS if max_pairs is None else int(max_pairs)
    used = 0
    mbs = int(max_block_size)
    selective, coarse, rules = [], [], []
    norms: dict = {}  # each column normalised once for all the rules tried (membership_values' cache)
    for f in fields:
        k = KINDS.get(f.kind)  # an unknown kind gets no rule
        if k is None or not k.key_rule:
            continue
        p, purged = _key_sizes(df, f"key:{quote_column(f.column)}", mbs, norms)
        if p <= budget and purged < 0.3:
            selective.append((p, f.column))
        else:
            coarse.append(f.column)
    selective.sort()
    for p, c in selective:
        if used + p <= total:
            rules.append(f"key:{quote_column(c)}")
            used += p
    # (index in rules, rule, its block limit, its pairs, distinct records per block): the
    # counts only, not the memberships, are kept until the near neighbours are decided
    tokens = []
    for f in fields:
        k = KINDS.get(f.kind)
        option = None if k is None else k.token_rule
        if option is not None:
            spec = f"token:{quote_column(f.column)}" + option
            kind, val = _key_membership(df, spec, norms)
            cnt = np.bincount(val[1]) if val[0].size else np.zeros(0, np.int64)
            room = min(budget, total - used)
            p, _ = _sizes_under(cnt, mbs, n)
            if p <= room:
                tokens.append((len(rules), spec, mbs, p, _unique_counts(val[0], val[1]) if near_neighbours else None))
                rules.append(spec)
                used += p
                continue
            # over budget: drop only the most common tokens (a smaller block limit for
            # this rule; rare tokens such as model numbers keep their blocks)
            cap = mbs // 2
            while cap >= _MIN_TOKEN_CAP:
                p = _sizes_under(cnt, cap, n)[0]
                if p <= room:
                    counts = _unique_counts(val[0], val[1]) if near_neighbours else None
                    tokens.append((len(rules), spec, cap, p, counts))
                    rules.append(f"{spec}@{cap}")
                    used += p
                    break
                cap //= 2
    for a in range(len(coarse)):
        for b in coarse[a + 1:]:
            spec = f"key:{quote_column(coarse[a])}+{quote_column(b)}"
            p, purged = _key_sizes(df, spec, mbs, norms)
            if p <= min(budget, total - used) and purged < 0.3:
                rules.append(spec)
                used += p
    # near neighbours in the blocks a token rule purges, from what the rules above left of
    # the budget (they never displace a rule)
    for at, spec, cap, p, ucnt in tokens if near_neighbours else ():
        q = _near_count(ucnt, cap, near_neighbours)
        if q and p + q <= budget and used + q <= total:
            rules[at] = f"{spec}@{cap}/{near_neighbours}"
            used += q
    if not rules:
        f0 = next((f for f in fields if len(f.columns()) == 1), fields[0])  # one column of its own (arity 1)
        rules = [f"sorted:{quote_column(f0.columns()[0])}:10"]
    return rules


def rule_hits(df: pd.DataFrame, rules: Sequence[str], pairs: np.ndarray, *, max_block_size: int = 200) -> np.ndarray:
    """Boolean matrix (n_pairs, n_rules): which rule proposes each candidate pair."""
    n = len(df)
    H = np.zeros((len(pairs), len(rules)), bool)
    for r, spec in enumerate(rules):
        pr = block(df, [spec], max_block_size=max_block_size)
        got = pr[:, 0] * n + pr[:, 1]  # sorted and unique (block's output order)
        if not len(got):
            continue
        for a, b in spans(len(pairs)):  # a signal waits for one piece
            code = pairs[a:b, 0].astype(np.int64) * n + pairs[a:b, 1]
            at = np.minimum(np.searchsorted(got, code), len(got) - 1)
            H[a:b, r] = got[at] == code
    return H


@validate_params({"hits": ["array-like"], "is_match": ["array-like"]})
def estimate_pair_completeness(hits: np.ndarray, is_match: np.ndarray) -> float | None:
    """Label-free estimate of the share of true pairs the union of rules finds.

    Capture–recapture over the rules: the recall ``r_k`` of rule ``k`` is estimated as
    the share of the predicted matches found by the *other* rules that rule ``k`` also
    finds; assuming rules miss pairs independently, the union misses
    ``prod_k (1 - r_k)`` of them. Approximate (rules that share a field are not
    independent, and predicted matches stand in for true ones). None with fewer than
    two rules or no predicted match.

    Parameters
    ----------
    hits : array-like of bool, shape (k, n_rules)
        Per candidate pair, which rules found it.
    is_match : array-like of bool, shape (k,)
        Per candidate pair, whether the model predicts a match.

    Examples
    --------
    >>> hits = np.array([[1, 1], [1, 0], [0, 1], [1, 1], [0, 0]], bool)
    >>> round(estimate_pair_completeness(hits, [1, 1, 1, 1, 0]), 4)  # each rule's recall 2/3
    0.8889
    """
    H = np.asarray(hits, bool)[np.asarray(is_match, bool)]
    if H.shape[0] == 0 or H.shape[1] < 2:
        return None
    miss = 1.0
    for k in range(H.shape[1]):
        others = np.delete(H, k, axis=1).any(1)
        if others.sum() == 0:
            continue
        r = float(H[others, k].mean())
        miss *= 1.0 - r
    return float(1.0 - miss)


def link_pair_mask(pairs: np.ndarray, source_codes: np.ndarray, link_type: str) -> np.ndarray:
    """Which candidate pairs a ``link_type`` allows (True = keep).

    Examples
    --------
    >>> link_pair_mask(np.array([[0, 1], [0, 2]]), np.array([0, 0, 1]), "link_only").tolist()
    [False, True]
    """
    if link_type == "link_only":
        return source_codes[pairs[:, 0]] != source_codes[pairs[:, 1]]
    return np.ones(len(pairs), bool)


def keep_links(pairs: np.ndarray, source_codes: np.ndarray, link_type: str) -> np.ndarray:
    """The rows of ``pairs`` that ``link_type`` allows (:func:`link_pair_mask`): with
    ``"link_only"`` the pairs of records from different tables.

    Examples
    --------
    >>> keep_links(np.array([[0, 1], [0, 2]]), np.array([0, 0, 1]), "link_only").tolist()
    [[0, 2]]
    """
    return pairs[link_pair_mask(pairs, source_codes, link_type)] if len(pairs) else pairs
