"""Stage 4 of :func:`trustlab.resolve`, *compare*: the similarity features of candidate pairs.

:func:`compare` computes per-field similarity features with rapidfuzz (Jaro–Winkler,
token-set and Levenshtein/Indel ratios, computed element-wise in C++ with
``process.cpdist``, in pieces of bounded size so that a signal is handled between them:
:mod:`trustlab._chunks`), phone/numeric/date/geo distances and the whole-record
comparisons (TF-IDF cosine of the record's words, shared codes); missing values give NaN.
One function per field kind (:data:`FEATURES`); which features the comparison levels are
cut from is declared by the kind (:data:`trustlab.er.kinds.COMPARISON_LEVELS`).

The features are scored by the next stage, :mod:`trustlab.er.scoring` (the
Fellegi–Sunter model, or a supervised model on labelled pairs).
"""
from __future__ import annotations

import contextvars
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd
from rapidfuzz import distance, fuzz, process

from trustlab._chunks import (factorize, fill_columns, series_distinct, series_pieces, spans, take, text_spans,
                              work_spans)
from trustlab._validation import validate_params
from trustlab.er.kinds import (
    _RECORD_TOKEN,
    KINDS,
    MAX_PARTS,
    Field,
    code_tokens,
    record_parts,
    record_slot_names,
    record_slots,
    record_text,
    text_numbers,
)
from trustlab.kernels import er as K

__all__ = ["compare", "FeatureMatrix", "FEATURES", "prepared_records"]

#: per-record work of :func:`compare` kept for the next call on the same records (None: none kept)
_PREPARED: contextvars.ContextVar = contextvars.ContextVar("trustlab_er_prepared", default=None)
#: the most memory :func:`prepared_records` keeps between calls by default (estimated,
#: :func:`_nbytes`); work beyond it is redone by each call, as without the block
MAX_KEPT_BYTES = 256 * 2**20


def _nbytes(v: Any) -> float:
    """Estimated bytes of a kept value: arrays, sparse matrices, Series, and tuples /
    dataclasses of them; infinite for an array of Python objects (strings), which is never
    kept: one object per value, scattered over the heap, costs more to hold than to remake."""
    if isinstance(v, pd.Series):
        v = v.to_numpy()
    if isinstance(v, np.ndarray):
        return float("inf") if v.dtype == object else int(v.nbytes)
    if isinstance(v, _CodeLists):
        return v.nbytes
    if hasattr(v, "indptr") and hasattr(v, "data"):  # a SciPy sparse matrix
        return int(v.data.nbytes + v.indices.nbytes + v.indptr.nbytes)
    if isinstance(v, (tuple, list)):
        return sum(_nbytes(x) for x in v)
    if hasattr(v, "__dataclass_fields__"):
        return sum(_nbytes(getattr(v, k)) for k in v.__dataclass_fields__)
    return 0


@contextmanager
def prepared_records(max_bytes: int | None = None) -> Iterator[dict]:
    """Within the block, :func:`compare` keeps the numeric work it does per record (each
    column's value codes, the token matrices of the whole-record, codes and token
    comparisons) and reuses it when it is called again on the same DataFrame object with the
    same fields, instead of redoing it for every batch of pairs (:func:`trustlab.er.resolve`
    compares its candidate pairs, the random pairs Fellegi-Sunter estimates u from and the
    pairs that complete components: three calls on one table). What is kept is what each
    call computes first, so the features are the same as without the block. The DataFrame
    must not change inside the block (the work is found by the object, not its content).

    The kept work is held until the block ends, beside whatever runs between the calls, so
    it is bounded: numeric arrays and sparse matrices only (normalised strings are remade by
    each call) and at most ``max_bytes`` of them (default :data:`MAX_KEPT_BYTES`, estimated
    by :func:`_nbytes`), kept in the order they are made; work that would go beyond it is
    redone by each call that needs it (the same features). A table of many records keeps its
    small pieces only (a million records' TF-IDF rows take ~0.8 GB).

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["ann lee", "anne lee", "bob ray"]})
    >>> P = np.array([[0, 1], [1, 2]])
    >>> with prepared_records():
    ...     a = compare(df, P[:1], [Field("name", "name")]).X
    ...     b = compare(df, P, [Field("name", "name")]).X
    >>> bool((a == b[:1]).all())
    True
    """
    memo: dict = {}
    token = _PREPARED.set(memo)
    memo[_BUDGET] = [MAX_KEPT_BYTES if max_bytes is None else int(max_bytes)]  # bytes left to keep
    try:
        yield memo
    finally:
        _PREPARED.reset(token)
        memo.clear()


_BUDGET = ("bytes left",)


def _prepared(df: pd.DataFrame, key: tuple, make: Callable[[], Any]) -> Any:
    """``make()``, the per-record work ``key`` of ``df``: kept inside :func:`prepared_records`
    (and found again for the same DataFrame object, which the entry holds so that its id is
    not reused), computed afresh outside it. What ``make`` returns is shared by the later
    calls: they must not change it."""
    memo = _PREPARED.get()
    if memo is None:
        return make()
    k = (id(df),) + tuple(key)
    hit = memo.get(k)
    if hit is not None and hit[0] is df:
        return hit[1]
    value = make()
    size = _nbytes(value)
    left = memo[_BUDGET]
    if size <= left[0]:
        memo[k] = (df, value)
        left[0] -= size
    return value


@dataclass
class FeatureMatrix:
    """Features of candidate pairs: ``X`` (n_pairs, n_features), NaN where a value is missing."""

    X: np.ndarray
    names: list[str]
    field_of: list[str]  # field column each feature belongs to
    primary: list[int]  # index of each field's main feature (for FS and explanations)
    fields: list[Field] = field(default_factory=list)


def _clean_words(s: pd.Series) -> pd.Series:
    v = s.fillna("").astype(str).str.lower().str.replace(r"[^\w ]+", " ", regex=True)
    return v.str.split().str.join(" ")


def _text(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    v = series_distinct(s, _clean_words)  # once per distinct value, in pieces: a signal waits for one
    arr = v.to_numpy(dtype=object)
    return arr, (v == "").to_numpy()


def _token_sets(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """CSR of sorted, unique word-token ids per record."""
    tok = series_distinct(s, lambda p: p.fillna("").astype(str).str.lower().str.findall(r"\w+"))
    ex = tok.explode().dropna()
    rec = ex.index.to_numpy(np.int64) if len(ex) else np.zeros(0, np.int64)
    ids = factorize(ex)[0].astype(np.int64) if len(ex) else np.zeros(0, np.int64)
    o = np.lexsort((ids, rec))
    rec, ids = rec[o], ids[o]
    keep = np.r_[True, (rec[1:] != rec[:-1]) | (ids[1:] != ids[:-1])] if rec.size else np.zeros(0, bool)
    rec, ids = rec[keep], ids[keep]
    indptr = np.zeros(len(s) + 1, np.int64)
    np.add.at(indptr, rec + 1, 1)
    return np.cumsum(indptr), np.ascontiguousarray(ids)


_JACCARD_CHUNK = 1_000_000
"""Token entries (both records of every pair) gathered per piece by :func:`_rowwise_dot` and
:func:`_tokens_features` (~25 MB of sparse rows; ~0.1 s, the longest a signal waits there)."""


def _rowwise_dot(Aw, A, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair ``k``: the dot product of row ``i[k]`` of ``Aw`` and row ``j[k]`` of ``A``
    (two CSR matrices of the same sparsity). Computed in chunks of pairs bounded by the
    matrix entries they gather, not by the pair count: records of 1,500 words made 200,000
    pairs gather 6e8 entries (3.3 GB)."""
    out = np.empty(len(i))
    if len(i) == 0:
        return out
    if Aw.dtype != np.float64 or A.dtype != np.float64 or Aw.shape != A.shape:
        return _rowwise_dot_scipy(Aw, A, i, j)
    ap, aj = Aw.indptr.astype(np.int64), Aw.indices.astype(np.int64)
    bp, bj = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    if not (_rows_sorted(ap, aj).all() and _rows_sorted(bp, bj).all() and np.isfinite(Aw.data).all()
            and np.isfinite(A.data).all()):
        return _rowwise_dot_scipy(Aw, A, i, j)
    # canonical matrices of finite values: the kernel merges the rows of each pair and sums
    # their products as SciPy's product of the gathered rows does (the same bits)
    return merged_row_sums(ap, aj, np.ascontiguousarray(Aw.data), bp, bj, np.ascontiguousarray(A.data), i, j)


def merged_row_sums(ap: np.ndarray, ak: np.ndarray, ax: np.ndarray, bp: np.ndarray, bk: np.ndarray,
                    bx: np.ndarray, i: np.ndarray, j: np.ndarray, canonical: np.ndarray | None = None) -> np.ndarray:
    """Per pair ``k``: the dot product of row ``i[k]`` of A ``(ap, ak, ax)`` and row ``j[k]`` of
    B (CSR-like, rows sorted by strictly increasing int64 keys ``ak``/``bk``, finite values),
    equal bit for bit to :func:`_rowwise_dot_scipy` of the CSR matrices these rows come from:
    with ``canonical`` None the keys are their column indices; otherwise the keys stand for
    indices that may be in another order, and ``canonical`` (per row of A, which B's rows
    follow) says whether a row's indices increase: a piece of pairs whose rows all do is summed
    by increasing key, any other in the reverse (SciPy's two methods for the element-wise
    product). Pieces as :func:`_rowwise_dot`'s.

    Examples
    --------
    >>> ptr, key = np.array([0, 2, 4]), np.array([1, 5, 1, 7])
    >>> merged_row_sums(ptr, key, np.array([0.5, 2.0, 3.0, 1.0]), ptr, key, np.ones(4),
    ...                 np.array([0]), np.array([1])).tolist()
    [0.5]
    """
    out = np.empty(len(i))
    if len(i) == 0:
        return out
    i64, j64 = np.ascontiguousarray(i, np.int64), np.ascontiguousarray(j, np.int64)
    rowlen = np.diff(bp)
    for a, b in work_spans(rowlen[i64] + rowlen[j64] + 1, _JACCARD_CHUNK):
        desc = canonical is not None and not (canonical[i64[a:b]].all() and canonical[j64[a:b]].all())
        K.merge_row_sums(ap, ak, ax, bp, bk, bx, i64[a:b], j64[a:b], desc, out[a:b])
    return out


def _rows_sorted(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Per row of a CSR matrix: whether its indices strictly increase."""
    out = np.empty(indptr.size - 1, bool)
    K.rows_sorted(indptr, indices, out)
    return out


def _rowwise_dot_scipy(Aw, A, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """:func:`_rowwise_dot` with SciPy's products of the gathered rows (the reference the
    kernel reproduces, and the path for other dtypes)."""
    out = np.empty(len(i))
    if len(i) == 0:
        return out
    rowlen = np.diff(A.indptr)
    for a, b in work_spans(rowlen[i] + rowlen[j] + 1, _JACCARD_CHUNK):
        out[a:b] = np.asarray(Aw[i[a:b]].multiply(A[j[a:b]]).sum(1)).ravel()
    return out


def _global_counts(uniques, corpus: tuple | None, local: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Document frequency of each token in ``uniques`` and the number of records: the
    table's own (``local``, ``n``), or those of a larger table, ``corpus = (n_records,
    Series token -> records holding it)`` (:mod:`trustlab.er.distributed` computes a
    partition's features with the whole table's statistics)."""
    if corpus is None:
        return local, n
    n_all, freq = corpus
    return pd.Series(np.asarray(uniques, dtype=object)).map(freq).fillna(0).to_numpy(np.float64), int(n_all)


def _idf_jaccard(s: pd.Series, i: np.ndarray, j: np.ndarray, corpus: tuple | None = None,
                 records: tuple | None = None) -> np.ndarray:
    """Jaccard similarity of two records' word tokens, each token weighted by its inverse
    document frequency ``log(n / records holding it)``: sharing a rare token (a model
    number) counts, sharing words every record has does not. Letters and digits are
    separate tokens (``AB-1234`` and ``ab1234`` agree). NaN when a value is missing.
    ``records``: :func:`_idf_records` of ``s`` and ``corpus``, when already made."""
    if len(i) == 0:
        return np.full(len(i), np.nan)
    rec = _idf_records(s, corpus) if records is None else records
    if rec is None:
        return np.full(len(i), np.nan)
    A, Aw, tot, empty = rec
    inter = _rowwise_dot(Aw, A, i, j)
    union = tot[i] + tot[j] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(union > 0, inter / union, 1.0)
    out[empty[i] | empty[j]] = np.nan
    return out


def _idf_records(s: pd.Series, corpus: tuple | None = None) -> tuple | None:
    """:func:`_idf_jaccard`'s work per record: ``(A, Aw, tot, empty)``, the records' token
    sets (CSR of ones), weighted by idf, their summed idf and whether a record has no token;
    None when no record has one."""
    from scipy import sparse

    tok = series_distinct(s, lambda p: p.fillna("").astype(str).str.lower().str.findall(r"[^\W\d_]+|\d+"))
    ex = tok.explode().dropna()
    n = len(s)
    if len(ex) == 0:
        return None
    rec = ex.index.to_numpy(np.int64)
    ids, uniq = factorize(ex)
    ids = ids.astype(np.int64)
    A = sparse.csr_matrix((np.ones(len(ids)), (rec, ids)), shape=(n, int(ids.max()) + 1))  # sums repeats
    A.data[:] = 1.0  # a token repeated in a record counts once
    dfreq, n_docs = _global_counts(uniq, corpus, np.asarray(A.sum(0)).ravel(), n)
    idf = np.log(n_docs / np.maximum(dfreq, 1))
    Aw = A.multiply(idf[None, :]).tocsr()
    tot = np.asarray(Aw.sum(1)).ravel()
    empty = np.asarray(A.sum(1)).ravel() == 0
    return A, Aw, tot, empty


def shared_information(n_docs: float) -> float:
    """The least summed idf of the words two records share for their whole-record similarity
    to count: ``log(n)``, the idf of a word only one record holds. Below it, more than one
    record of the table is expected to hold every shared word (common words only: a city, a
    category), however alike two near-empty records look by cosine."""
    return float(np.log(max(n_docs, 1.0)))


# MAX_PARTS (kinds): at most this many columns of a record's text are told apart by the
# whole-record comparisons (bits of an int64); later columns share the last bit


def _tokens_of(text: pd.Series) -> pd.Series:
    """The words of each record's text (:data:`~trustlab.er.kinds._RECORD_TOKEN`, lower case),
    one list per record; the regex in pieces of records (~4 us a record): a signal waits for one."""
    return series_distinct(text, lambda p: p.fillna("").astype(str).str.lower().str.findall(_RECORD_TOKEN), 1 << 14)


def _part_bits(counts: Sequence[np.ndarray]) -> np.ndarray:
    """Per record, one bit per text column it fills (``counts``: its number of words or codes
    in each column, :data:`MAX_PARTS` at most told apart)."""
    bits = np.zeros(len(counts[0]) if len(counts) else 0, np.int64)
    for k, c in enumerate(counts):
        bits |= (np.asarray(c) > 0).astype(np.int64) << min(k, MAX_PARTS)
    return bits


def _exploded(parts: Sequence[pd.Series], tokens) -> tuple[np.ndarray, pd.Series, np.ndarray, np.ndarray]:
    """``(record, token, column, bits)``: every token of every column (``tokens(series)`` gives
    each record's list), with the column it comes from and each record's :func:`_part_bits`.
    The columns are numbered in the order of their names (the slots of :func:`shared_parts`,
    :func:`~trustlab.er.kinds.record_slot_names`); that numbering only names the slots: a word
    a record holds in several columns counts in all of them (:func:`_column_masks`) and every
    sum over columns is taken in an order of its values, so no result depends on the names
    or on the order of the columns (the tokens' ids are numbered by content,
    :func:`_content_ids`). The one exception: past :data:`MAX_PARTS` columns, the columns that
    share the last slot are the last by name."""
    recs, toks, cols, counts = [], [], [], []
    order = sorted(range(len(parts)), key=lambda q: (str(parts[q].name), q))
    for k, p in enumerate([parts[q] for q in order]):
        t = tokens(p.reset_index(drop=True))
        counts.append(t.str.len().fillna(0).to_numpy())
        ex = t.explode().dropna()
        recs.append(ex.index.to_numpy(np.int64))
        toks.append(ex)
        cols.append(np.full(len(ex), min(k, MAX_PARTS), np.int64))
    tok = pd.concat(toks, ignore_index=True) if toks else pd.Series([], dtype=object)
    return (np.concatenate(recs) if recs else np.zeros(0, np.int64), tok,
            np.concatenate(cols) if cols else np.zeros(0, np.int64), _part_bits(counts))


def _column_masks(A, rec: np.ndarray, ids: np.ndarray, col: np.ndarray):
    """A matrix of ``A``'s sparsity (canonical CSR, int64 entries) whose entries are the bit
    mask of the columns a record's token comes from (bit ``c``: column ``c``; a word a record
    holds in several columns has several bits, :func:`column_split`)."""
    from scipy import sparse

    o = np.lexsort((ids, rec))
    if not len(o):
        return sparse.csr_matrix(A.shape, dtype=np.int64)
    start = np.flatnonzero(np.r_[True, (rec[o][1:] != rec[o][:-1]) | (ids[o][1:] != ids[o][:-1])])
    mask = np.bitwise_or.reduceat(np.left_shift(np.int64(1), col[o].astype(np.int64)), start)
    H = sparse.csr_matrix((mask.astype(np.int64), (rec[o][start], ids[o][start])), shape=A.shape)
    H.sort_indices()
    return H


def _content_ids(ids: np.ndarray, uniq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, uniq)`` of a factorization renumbered in the order of the tokens' 64-bit hashes
    (``pd.util.hash_array``; ties, a hash collision, in order of first appearance): the matrix
    columns, and so the order in which the comparisons sum a pair's shared words, depend on
    the words and not on the order of the columns or of the records that hold them."""
    if not len(uniq):
        return ids, uniq
    from trustlab import _chunks

    u = np.asarray(uniq, dtype=object)
    h = np.empty(len(u), np.uint64)
    for a, b in spans(len(u), _chunks.ITEMS):  # in pieces: a signal waits for one
        h[a:b] = pd.util.hash_array(u[a:b], categorize=False)
    order = np.argsort(h, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank[ids], u[order]


def column_split(masks: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The columns of each bit mask of ``masks`` (int64, bit ``c``: column ``c``; only the
    first ``k`` columns with ``k``): ``(entry, column)``, by entry then increasing column.

    A word a record holds in several columns of its text is split equally among them (each
    holds ``1 / popcount(mask)`` of its squared weight): no column is its "home", so nothing
    depends on the names or the order of the columns. Heuristic: a word repeated in two
    columns (a brand in the brand and title columns) is one word of the record's vector, not
    two, and where it belongs is not known.

    Examples
    --------
    >>> e, c = column_split(np.array([0b101, 0b10], np.int64))
    >>> e.tolist(), c.tolist()
    ([0, 0, 1], [0, 2, 1])
    """
    x = np.array(masks, np.int64).ravel()
    if k is not None:
        x &= (np.int64(1) << np.int64(min(int(k), 63))) - 1 if k < 63 else np.int64(-1)
    es, cs, rs = [], [], []
    live = np.flatnonzero(x)
    r = 0
    while live.size:  # the lowest bit left of each mask, one round per bit (a few rounds)
        low = x[live] & -x[live]
        es.append(live)
        cs.append(np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1)  # exact for powers of two
        rs.append(np.full(live.size, r, np.int64))
        x[live] ^= low
        live = live[x[live] != 0]
        r += 1
    if not es:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    e, c, rr = np.concatenate(es), np.concatenate(cs), np.concatenate(rs)
    o = np.lexsort((rr, e))
    return e[o], c[o]


def _column_sums(X: np.ndarray) -> np.ndarray:
    """Row sums of ``X`` (pairs x columns) taken in increasing order of the values: the same
    bits whatever the order of the columns (the slots are numbered by the columns' names)."""
    return np.sort(X, axis=1).sum(1)


def _tfidf_cosine(text: pd.Series, i: np.ndarray, j: np.ndarray, corpus: tuple | None = None,
                  parts: Sequence[pd.Series] | None = None, shared: bool = False,
                  records: "_TfidfRecords | None" = None):
    """Cosine similarity of two records' TF-IDF vectors over word tokens (letters and
    digits apart, lower case; sublinear term frequency ``1 + log tf``, idf
    ``log(n / df)``). Shared rare words (a name, a model number) count, words every
    record has do not; a pair whose shared words are jointly common (summed idf below
    :func:`shared_information`) gets 0. NaN when a record has no word.

    With ``parts`` (the columns whose words make up ``text``,
    :func:`~trustlab.er.kinds.record_parts`), a column that only one record of a pair fills
    is no disagreement (:func:`missing_is_no_disagreement`); with ``shared`` too, it returns
    ``(similarity, shared_parts(...))``: per pair and column the part of the cosine that the
    words both records hold in that column make (:func:`shared_parts`).

    ``records``: :func:`_tfidf_records` of ``text``, ``corpus`` and ``parts``, when already
    made (the same result)."""
    k = record_slots(len(parts)) if parts is not None else 0
    if len(i) == 0:
        out = np.full(len(i), np.nan)
        return (out, np.zeros((len(i), k))) if shared and parts is not None else out
    r = _tfidf_records(text, corpus, parts) if records is None else records
    if r.A is None:
        out = np.full(len(i), np.nan)
        return (out, np.zeros((len(i), k))) if shared and parts is not None else out
    out = np.clip(_rowwise_dot(r.A, r.A, i, j), 0.0, 1.0)
    out[_rowwise_dot(r.S, r.sign, i, j) < r.gate] = 0.0
    D = None
    if parts is not None:
        out = missing_is_no_disagreement(out, r.A, r.Sg, r.H, r.bits, i, j, common=r.common)
        if shared:
            D = shared_parts(r.A, r.H, i, j, k)
    out[r.empty[i] | r.empty[j]] = np.nan
    return out if D is None else (out, D)


@dataclass
class _TfidfRecords:
    """:func:`_tfidf_cosine`'s work per record (:func:`_tfidf_records`); ``A`` None when no
    record has a word."""

    A: Any = None  # TF-IDF rows, unit length (CSR)
    S: Any = None  # the same sparsity: each word's idf
    sign: Any = None  # the same sparsity: ones
    Sg: Any = None  # S over the gate (shared_information), with parts
    H: Any = None  # int64 bit masks of the columns a record's word comes from (_column_masks), with parts
    bits: Any = None  # per record, one bit per column it fills, with parts
    empty: Any = None  # per record: no word
    gate: float = 0.0
    common: Any = None  # _in_common_records(A, H), with parts


def _unit_rows(A, idf: np.ndarray):
    """Sublinear TF-IDF rows of unit length: each count ``c`` of term ``t`` becomes
    ``(1 + log c) * idf[t]`` (in place on ``A.data``), then each row is divided by its
    Euclidean norm (an empty row stays zero); CSR."""
    from scipy import sparse

    A.data = (1.0 + np.log(A.data)) * idf[A.indices]
    norm = np.sqrt(np.asarray(A.multiply(A).sum(1)).ravel())
    return (sparse.diags(np.where(norm > 0, 1.0 / np.maximum(norm, 1e-300), 0.0)) @ A).tocsr()


def _tfidf_records(text: pd.Series, corpus: tuple | None = None,
                   parts: Sequence[pd.Series] | None = None) -> _TfidfRecords:
    """The records' TF-IDF rows and what :func:`_tfidf_cosine` reads of them besides, made
    once per table (:func:`prepared_records` keeps them between calls)."""
    from scipy import sparse

    n = len(text)
    if parts is not None:
        rec, ex, col, bits = _exploded(parts, _tokens_of)
    else:
        tok = _tokens_of(text)
        ex = tok.explode().dropna()
        rec = ex.index.to_numpy(np.int64) if isinstance(text.index, pd.RangeIndex) else \
            np.repeat(np.arange(n), tok.str.len().to_numpy())
        bits = None
    if len(ex) == 0:
        return _TfidfRecords()
    ids, uniq = factorize(ex)  # in pieces (~0.6 s as one call on 200,000 records' 2M words)
    ids, uniq = _content_ids(ids.astype(np.int64), uniq)
    A = sparse.csr_matrix((np.ones(len(ids)), (rec, ids)), shape=(n, int(ids.max()) + 1))
    A.sum_duplicates()
    dfreq, n_docs = _global_counts(uniq, corpus, np.bincount(A.indices, minlength=A.shape[1]), n)
    idf = np.log(n_docs / np.maximum(dfreq, 1)) + 1e-6
    S = A.copy()
    S.data = idf[S.indices]  # each record's words once, weighted by their idf
    A = _unit_rows(A, idf)
    r = _TfidfRecords(A=A, S=S, sign=S.sign(), bits=bits, empty=np.diff(A.indptr) == 0,
                      gate=shared_information(n_docs))
    if parts is not None:
        r.Sg = S.copy()
        r.Sg.data /= r.gate  # the gate of the columns in common is then 1
        r.H = _column_masks(A, rec, ids, col)
        for M in (r.A, r.Sg, r.H):  # the same words in the same order (the values do not change)
            M.sort_indices()
        r.common = _in_common_records(r.A, r.H)
    return r


def popcount(x: np.ndarray) -> np.ndarray:
    """The number of set bits of each int64 of ``x`` (non-negative), as int64."""
    x = np.ascontiguousarray(x, np.int64)
    if hasattr(np, "bitwise_count"):  # NumPy >= 2.0
        return np.bitwise_count(x).astype(np.int64)
    return np.unpackbits(x.view(np.uint8)).reshape(x.size, 64).sum(1).astype(np.int64)


def shared_parts(A, H, i: np.ndarray, j: np.ndarray, k: int) -> np.ndarray:
    """Per pair ``i``–``j`` and column ``c < k``: the part of the whole-record cosine (rows of
    ``A``, unit length, sorted and distinct indices) that the words both records hold in
    column ``c`` make (``H``: the same sparsity, int64, the bit mask of the columns a record's
    word comes from, :func:`_column_masks`).

    A word is split equally among the columns a record holds it in (:func:`column_split`):
    a word with weights ``a`` and ``b`` in the two records, held in the columns ``Ma`` and
    ``Mb``, adds ``a * b / sqrt(|Ma| * |Mb|)`` to each column of ``Ma & Mb`` (so ``a * b`` to
    its one column when both records hold it in that one column only, and nothing when they
    hold it in different columns). Heuristic: no column is a word's "home", so the parts do
    not depend on the names or the order of the columns. The products are added one by one
    by increasing word index, then column (``np.add.at``;
    :func:`trustlab.kernels.er.record_pair_sums` adds them the same way). A pair that agrees
    on every column has its cosine spread over its columns; the scoring reads how much of a
    pair's agreement lies in the words of fields that are compared on their own
    (:meth:`trustlab.er.scoring.FSModel.level_weights`).

    Examples
    --------
    >>> from scipy import sparse
    >>> A = sparse.csr_matrix(np.array([[0.6, 0.8, 0.0], [0.6, 0.0, 0.8]]))
    >>> H = sparse.csr_matrix(np.array([[1, 2, 0], [1, 0, 2]], np.int64))  # bit masks
    >>> shared_parts(A, H, np.array([0]), np.array([1]), 2).round(2).tolist()  # word 0 in column 0
    [[0.36, 0.0]]
    >>> H = sparse.csr_matrix(np.array([[3, 2, 0], [1, 0, 2]], np.int64))  # word 0 in both columns of row 0
    >>> shared_parts(A, H, np.array([0]), np.array([1]), 2).round(4).tolist()  # 0.36 / sqrt(2)
    [[0.2546, 0.0]]
    """
    out = np.zeros((len(i), k))
    if len(i) == 0 or A.nnz == 0 or k == 0:
        return out
    ptr, idx = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    mask = np.asarray(H.data, np.int64)
    rowlen = np.diff(ptr)
    i64, j64 = np.ascontiguousarray(i, np.int64), np.ascontiguousarray(j, np.int64)
    for a, b in work_spans(rowlen[i64] + rowlen[j64] + 1, _JACCARD_CHUNK):
        qi, qj, r = _row_matches(ptr, idx, i64[a:b], j64[a:b])
        mi, mj = mask[qi], mask[qj]
        v = A.data[qi] * A.data[qj] / np.sqrt((popcount(mi) * popcount(mj)).astype(np.float64))
        e, c = column_split(mi & mj, k)
        np.add.at(out, (a + r[e], c), v[e])
    return out


def missing_is_no_disagreement(cos: np.ndarray, A, S, H, bits: np.ndarray, i: np.ndarray,
                               j: np.ndarray, *, common: tuple | None = None) -> np.ndarray:
    """The whole-record similarity of pairs ``i``–``j`` when a column that only one record
    fills is no evidence either way.

    A record whose columns were left empty has a shorter vector than its duplicate, so the
    cosine ``cos`` of the whole records falls with every column only one of them fills. Over
    the columns both fill (``bits``: one bit per column a record fills) the two are compared
    as they are: ``c`` = their cosine there (:func:`_cosine_in_common`), scaled by ``r``,
    the geometric mean of the share of each record's vector those columns hold. Then:

    * the similarity is ``max(cos, c * r)`` (between the whole-record cosine and the cosine
      in common: a record of two columns equal to two of its duplicate's four does not
      become an exact match), where the words the columns in common share are rare enough
      to raise it: each column counts with its rarest shared word (``S``: a word's idf over
      :func:`shared_information`; the words of one column go together, ``san francisco``),
      the columns add up to at least 1 (a word only the two records hold has idf
      ``log(n / 2)``, so one column in common never raises the similarity, two can);
    * where the whole records are apart (``cos`` below the record kind's *far* threshold,
      :data:`~trustlab.er.kinds.KINDS`) but the columns both fill agree (``c`` at or above
      it, however common their words), the pair is *missing* (NaN, no evidence): the
      disagreement is the empty columns;
    * a pair with no column in common and no shared word is missing too.

    Heuristic.

    Parameters
    ----------
    cos : numpy.ndarray
        The whole-record cosine per pair (0 where its shared words are common).
    A : scipy.sparse.csr_matrix
        The records' TF-IDF rows, unit length (their indices are sorted in place).
    S : scipy.sparse.csr_matrix
        The same sparsity: each word's idf over :func:`shared_information`.
    H : scipy.sparse.csr_matrix
        The same sparsity, int64: the bit mask of the columns a record's word comes from (a
        word held in several columns is split equally among them, :func:`column_split`).
    bits : numpy.ndarray of int64
        Per record, one bit per column it fills.
    i, j : numpy.ndarray
        The pairs' records.
    common : tuple, optional
        :func:`_in_common_records` of ``A`` and ``H`` (sorted), when already made.

    Returns
    -------
    numpy.ndarray
        The similarity per pair (NaN: missing).

    Examples
    --------
    >>> import pandas as pd
    >>> from trustlab.er.kinds import Field, record_parts, record_text
    >>> df = pd.DataFrame({"name": ["ann lee", "ann lee", "bob ray", "cy orr", "di fox"],
    ...                    "city": ["york", "york", "hull", "bath", "ely"],
    ...                    "street": ["elm road 5 north", "", "oak lane 7", "ash way 9", "fir st 3"]})
    >>> fl = [Field("name", "name"), Field("city", "name"), Field("street", "address")]
    >>> i, j = np.array([0]), np.array([1])
    >>> text = record_text(df, fl)
    >>> round(float(_tfidf_cosine(text, i, j)[0]), 2)  # the whole records: below far (0.5), apart
    0.44
    >>> round(float(_tfidf_cosine(text, i, j, parts=record_parts(df, fl))[0]), 2)  # name and city agree
    0.66
    """
    for M in (A, S, H):  # the same words in the same order (in place: the values do not change)
        M.sort_indices()
    return _no_disagreement(cos, *_cosine_in_common(A, S, H, bits, i, j, common=common), bits, i, j)


def _no_disagreement(cos: np.ndarray, c: np.ndarray, r: np.ndarray, rare: np.ndarray, bits: np.ndarray,
                     i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """:func:`missing_is_no_disagreement` from the whole-record cosine ``cos`` and
    :func:`_cosine_in_common`'s ``(c, r, rare)`` of the pairs ``i``–``j``."""
    far = KINDS["record"].levels[3]
    out = np.fmax(cos, np.where(rare, c * r, np.nan))
    out[(cos < far) & (c >= far) & (out < far)] = np.nan
    out[((bits[i] & bits[j]) == 0) & (cos == 0)] = np.nan
    return out


def _cosine_in_common(A, S, H, bits: np.ndarray, i: np.ndarray, j: np.ndarray, *,
                      common: tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair, the cosine of the records' rows ``A`` over the columns both fill (NaN where
    they fill none), the geometric mean of the share of each record's (unit) vector those
    columns hold, and whether the information of the words they share there
    (:func:`missing_is_no_disagreement`) reaches 1.

    A word a record holds in several columns (``H``: their bit mask) is split equally among
    them (:func:`column_split`; heuristic): its squared weight counts ``1 / |M|`` in each
    column of ``M``, so a record's vector over the columns in common weighs each word by
    ``sqrt(f)``, ``f = |M & common| / |M|``, and a shared word adds ``a * b * sqrt(fa * fb)``
    to the dot product; its idf share (``S``) counts ``1 / |M|`` in each common column of the
    left record where both records hold it in a column in common. Nothing depends on the
    names or the order of the columns (the sums over columns are taken in an order of their
    values, :func:`_column_sums`). ``common``: :func:`_in_common_records` of ``A`` and ``H``,
    when already made."""
    out = np.full(len(i), np.nan)
    cover = np.full(len(i), np.nan)
    rare = np.zeros(len(i), bool)
    if len(i) == 0 or A.nnz == 0:
        return out, cover, rare
    mask, cnt, k, N, rowlen, ptr, idx, merge, Q, one = _in_common_records(A, H) if common is None else common
    for a, b in work_spans(rowlen[i] + rowlen[j] + 1, _JACCARD_CHUNK):
        ia, jb = i[a:b], j[a:b]
        common = bits[ia] & bits[jb]
        cols = ((common[:, None] >> np.arange(k)[None, :]) & 1).astype(np.float64)
        ni = np.sqrt(_column_sums(N[ia] * cols))
        nj = np.sqrt(_column_sums(N[jb] * cols))
        if merge:
            qi, qj, r = _row_matches(ptr, idx, np.ascontiguousarray(ia, np.int64), np.ascontiguousarray(jb, np.int64))
        else:
            # element-wise products of rows: the intersection of their words, in the same order
            pi = Q[ia].multiply(one[jb]).tocsr()
            pj = one[ia].multiply(Q[jb]).tocsr()
            pi.sort_indices()
            pj.sort_indices()
            qi, qj = pi.data.astype(np.int64) - 1, pj.data.astype(np.int64) - 1
            r = np.repeat(np.arange(b - a), np.diff(pi.indptr))
        mi, mj = mask[qi], mask[qj]
        fi = popcount(mi & common[r]).astype(np.float64) / cnt[qi]
        fj = popcount(mj & common[r]).astype(np.float64) / cnt[qj]
        keep = np.sqrt(fi * fj)
        dot = np.bincount(r, weights=A.data[qi] * A.data[qj] * keep, minlength=b - a)
        best = np.zeros((b - a, k))
        e, c = column_split(np.where(keep > 0, mi & common[r], 0))
        np.maximum.at(best, (r[e], c), (S.data[qi] / cnt[qi])[e])
        out[a:b], cover[a:b], rare[a:b] = _in_common_parts(dot, ni, nj, best)
    return out, cover, rare


def _in_common_records(A, H) -> tuple:
    """:func:`_cosine_in_common`'s work per record of the rows ``A`` and their columns ``H``
    (the same sparsity, indices sorted; ``H`` int64 bit masks of the columns, :func:`_column_masks`):
    ``(mask, cnt, k, N, rowlen, ptr, idx, merge, Q, one)``."""
    # each record's squared norm per column (a word split equally among its columns), added
    # one by one by increasing index, then column
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    mask = np.asarray(H.data, np.int64)
    cnt = popcount(mask)
    k = int(mask.max()).bit_length()
    N = np.zeros((A.shape[0], k))
    e, c = column_split(mask)
    np.add.at(N, (rows[e], c), (A.data ** 2 / cnt)[e])
    # the positions in A of the words a pair shares (their weights, columns and idf are read
    # there): by a merge of the two rows (the kernel) when the rows are sorted and distinct and
    # every weight nonzero (the positions, in the order, SciPy's products of the gathered rows
    # give), otherwise by those products (each entry's position + 1 times the other's sign)
    rowlen = np.diff(A.indptr)
    ptr, idx = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    merge = bool(_rows_sorted(ptr, idx).all() and np.all(A.data != 0) and np.isfinite(A.data).all())
    Q = one = None
    if not merge:
        Q = A.copy()
        Q.data = np.arange(1, A.nnz + 1, dtype=np.float64)
        one = A.sign()
    return mask, cnt, k, N, rowlen, ptr, idx, merge, Q, one


def _in_common_parts(dot: np.ndarray, ni: np.ndarray, nj: np.ndarray,
                     best: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_cosine_in_common`'s three results for a piece of pairs, from the dot product over
    the columns both records fill, the records' norms over them and each column's largest shared
    idf share (``best``): the cosine (NaN where a norm is 0), the geometric mean of the norms,
    and whether the shared words' information reaches 1."""
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.clip(dot / (ni * nj), 0.0, 1.0)
    cos[(ni == 0) | (nj == 0)] = np.nan
    return cos, np.sqrt(ni * nj), _column_sums(best) >= 1.0


def _row_matches(ptr: np.ndarray, idx: np.ndarray, i: np.ndarray, j: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The indices rows ``i[k]`` and ``j[k]`` of a CSR matrix (rows sorted, distinct) share:
    their positions in row ``i[k]`` and in row ``j[k]`` and the pair ``k`` of each, pair by
    pair, in increasing index."""
    cnt = np.empty(len(i), np.int64)
    none = np.empty(0, np.int64)
    K.row_matches(ptr, idx, i, j, cnt, none, none, False)
    start = np.zeros(len(i), np.int64)
    np.cumsum(cnt[:-1], out=start[1:])
    tot = int(cnt.sum())
    qi, qj = np.empty(tot, np.int64), np.empty(tot, np.int64)
    K.row_matches(ptr, idx, i, j, start, qi, qj, True)
    return qi, qj, np.repeat(np.arange(len(i)), cnt)


#: a code shared by at most this many records is a rare code (an identifier), above it a common one
RARE_CODE_DF = 5


def _code_levels(text: pd.Series, i: np.ndarray, j: np.ndarray, corpus: tuple | None = None,
                 records: tuple | None = None, parts: Sequence[pd.Series] | None = None) -> np.ndarray:
    """Per pair: 1.0 when the records share a rare code (one at most :data:`RARE_CODE_DF`
    records hold), 0.5 when they share only common codes, 0.25 when they share none and two
    of their codes are neighbours (:func:`neighbour_codes`: another model of one series),
    0.0 when both have codes and share none otherwise, NaN when either has none.
    Pairs that hold codes, share none and name two sizes of one dimension are set to 0.25
    too (:func:`quantity_levels`, read from the record's columns ``parts``, or ``text``).
    ``records``: :func:`_code_records` of ``text``, ``corpus`` and ``parts``, when already made."""
    if len(i) == 0:
        return np.full(len(i), np.nan)
    rec = _code_records(text, corpus, parts) if records is None else records
    if rec is None:
        return np.full(len(i), np.nan)
    Cw, C, rowlen, lists = rec
    out = _rowwise_dot(Cw, C, i, j)
    lv = np.where(out >= 1.0 - 1e-9, 1.0, np.where(out > 0, 0.5, 0.0))
    lv[(rowlen[i] == 0) | (rowlen[j] == 0)] = np.nan
    k = np.flatnonzero(lv == 0.0)
    lv[k[neighbour_codes(lists.lists, i[k], j[k])]] = 0.25
    return quantity_levels(lv, lists.quantities, i, j)


def _code_records(text: pd.Series, corpus: tuple | None = None,
                  parts: Sequence[pd.Series] | None = None) -> tuple | None:
    """:func:`_code_levels`'s work per record: ``(Cw, C, rowlen, lists)``, the records' codes
    (CSR of ones), weighted 1 when rare and 1e-3 when common, their number per record and
    :func:`code_lists` with :func:`quantity_lists` of ``parts`` (the record's columns; the
    whole ``text`` when None); None when no record has a code."""
    from scipy import sparse

    n = len(text)
    codes = code_tokens(text.reset_index(drop=True))
    if len(codes) == 0:
        return None
    rec = codes.index.to_numpy(np.int64)
    ids, uniq = factorize(codes)
    ids = ids.astype(np.int64)
    C = sparse.csr_matrix((np.ones(len(ids)), (rec, ids)), shape=(n, int(ids.max()) + 1))
    C.data[:] = 1.0
    C.sum_duplicates()
    C.data[:] = 1.0
    dfreq, _ = _global_counts(uniq, corpus, np.bincount(C.indices, minlength=C.shape[1]), n)
    Cw = C.multiply(np.where(dfreq <= RARE_CODE_DF, 1.0, 1e-3)[None, :]).tocsr()
    qparts = [text.reset_index(drop=True)] if parts is None else [p.reset_index(drop=True) for p in parts]
    return Cw, C, np.diff(C.indptr), _CodeLists(code_lists(codes, n), quantity_lists(qparts))


class _CodeLists:
    """:func:`code_lists` with an estimate of the bytes it holds, so that
    :func:`prepared_records` keeps it (an object array alone is never kept, :func:`_nbytes`;
    without this, every :func:`compare` call re-read every record's codes). Most records
    hold no letter-digit code: their entry is the shared empty tuple."""

    __slots__ = ("lists", "quantities", "nbytes")

    def __init__(self, lists: np.ndarray, quantities: np.ndarray | None = None):
        self.lists = lists
        self.quantities = quantities
        self.nbytes = 8 * len(lists) + sum(64 + 8 * len(t) + sum(56 + len(c) for c in t) for t in lists if t)
        if quantities is not None:
            self.nbytes += 8 * len(quantities) + sum(64 + 120 * len(t) for t in quantities if t)


def _distinct(a, b, codes):
    """``(a', b', inverse, first)``: the distinct value pairs of ``a``/``b`` (from their value
    ``codes``), each pair's row among them and the first row of each, or None when
    deduplicating does not pay (1000 pairs or fewer, or under 20% repeats). Computed once
    per piece of pairs and shared by the field's scorers."""
    if codes is None or len(a) <= 1000:
        return None
    ca, cb = codes
    k = int(max(ca.max(initial=0), cb.max(initial=0))) + 1
    inv, uniq = pd.factorize(ca.astype(np.int64) * k + cb)
    if uniq.size >= 0.8 * len(a):
        return None
    first = np.empty(uniq.size, np.int64)
    first[inv[::-1]] = np.arange(len(a) - 1, -1, -1)  # first row of each distinct pair
    return a[first], b[first], inv, first


_DEDUP = 1_048_576
"""Pairs whose distinct value pairs are found together (one ``factorize``, ~50 ms) before
they are scored: the unit of :func:`_similarities`."""


def _cpdist(a, b, scorer, pieces=None, cutoff=None) -> np.ndarray:
    """``process.cpdist(a, b, scorer)`` (float32) in pieces of bounded characters
    (:func:`trustlab._chunks.text_spans`, or the ``pieces`` given), so that a signal waits
    for one piece, not for every pair; element-wise, so the result does not depend on the
    pieces. With ``cutoff`` (rapidfuzz's ``score_cutoff``, in the scorer's units) a score
    below it is 0 (the others are the scores without it)."""
    out = np.empty(len(a), np.float32)
    for s, e in (text_spans(a, b) if pieces is None else pieces):
        out[s:e] = process.cpdist(a[s:e], b[s:e], scorer=scorer, workers=-1, dtype=np.float32, score_cutoff=cutoff)
    return out


def _similarities(a, b, scorers, codes=None, lengths=None, strings=None) -> list[np.ndarray]:
    """Element-wise similarity of ``a`` and ``b`` by each ``(scorer, scale)`` of ``scorers``
    (divided by its scale; ``(scorer, scale, cutoff)``: with :func:`_cpdist`'s cutoff).
    With ``codes`` (value codes of a and b) each distinct value pair of a piece of
    :data:`_DEDUP` pairs is scored once (:func:`_distinct`). The pieces of bounded
    characters are cut once for all scorers, from ``lengths`` (the strings' lengths, as
    :func:`trustlab._chunks.text_spans` counts them) when given. With ``strings`` (an object
    array), ``a`` and ``b`` are positions in it, and only the strings of the distinct value
    pairs are gathered (the same values: the scorers are element-wise)."""
    outs = [np.empty(len(a)) for _ in scorers]
    for s, e in spans(len(a), _DEDUP):
        pa, pb = a[s:e], b[s:e]
        dist = None if codes is None else _distinct(pa, pb, (codes[0][s:e], codes[1][s:e]))
        ln = None if lengths is None else (lengths[0][s:e], lengths[1][s:e])
        if dist is not None:
            pa, pb, inv, first = dist
            ln = None if ln is None else (ln[0][first], ln[1][first])
        if strings is not None:
            pa, pb = strings[pa], strings[pb]
        pieces = list(text_spans(pa, pb, lengths=ln))
        for out, (scorer, scale, *cut) in zip(outs, scorers):
            got = _cpdist(pa, pb, scorer, pieces, cut[0] if cut else None).astype(np.float64)
            out[s:e] = (got if dist is None else got[inv]) / scale
    return outs


def _cp(a, b, scorer, scale=1.0, codes=None, lengths=None):
    """Element-wise similarity (:func:`_similarities` with one scorer)."""
    return _similarities(a, b, [(scorer, scale)], codes, lengths)[0]


#: one kind's features: ``(df, field, i, j, fields, want) -> (columns, feature names, index of
#: the main feature)``; ``want`` (a set of feature names or None) selects optional features
_Features = Callable[[pd.DataFrame, Field, np.ndarray, np.ndarray, Sequence[Field], "set | None"],
                     "tuple[list[np.ndarray], list[str], int]"]


def _text_features(main: str, token_sort: bool = False) -> _Features:
    """Jaro–Winkler, token-set and Indel ratios (and the token-sort ratio with
    ``token_sort``) of the normalised words; ``main`` is the primary feature."""

    def features(df, f, i, j, fields, want):
        arr, miss, vc = _prepared(df, ("text", f.column), lambda: _text_codes(df[f.column]))
        a, b = take(arr, i), take(arr, j)  # object gathers in pieces: a signal waits for one
        m = miss[i] | miss[j]
        cc = (vc[i], vc[j])
        scorers = {
            "jaro_winkler": (distance.JaroWinkler.normalized_similarity, 1.0),
            "token_set": (fuzz.token_set_ratio, 100.0),
            "indel": (distance.Indel.normalized_similarity, 1.0),
        }
        if token_sort:
            scorers["token_sort"] = (fuzz.token_sort_ratio, 100.0)
        got = [k for k in scorers if want is None or k in want]
        cols = _similarities(a, b, [scorers[k] for k in got], cc)
        for v in cols:
            v[m] = np.nan
        return cols, got, (got.index(main) if main in got else 0)

    return features


def _char3_features(df, f, i, j, fields, want, corpus: tuple | None = None):
    """:func:`_text_features` (Jaro-Winkler, token-set and Indel ratios) and, as the level
    feature, ``char3``: the cosine of the records' character 3-gram TF-IDF rows
    (:func:`char3_cosine`). ``corpus``: the 3-grams' document frequencies of a larger table."""
    cols, got, _ = _text_features("token_set")(df, f, i, j, fields,
                                                None if want is None else set(want) - {"char3"})
    if want is None or "char3" in want:
        c3 = char3_cosine(df[f.column], i, j, corpus,
                          records=None if corpus is not None else
                          _prepared(df, ("char3", f.column), lambda: _char3_records(df[f.column])))
        if len(i):
            _, miss, _ = _prepared(df, ("text", f.column), lambda: _text_codes(df[f.column]))
            c3[miss[i] | miss[j]] = np.nan
        cols, got = list(cols) + [c3], list(got) + ["char3"]
    return cols, got, (got.index("char3") if "char3" in got else 0)


def char3_grams(text: str) -> list:
    """The character 3-grams of each word of ``text`` (already :func:`_clean_words`-normalised)
    padded by a space: ``"ibm corp"`` -> ``" ib", "ibm", "bm ", " co", "cor", "orp", "rp "``. A
    word with a digit (a number or a code: ``600``, ``94304``, ``g06f``) is one term, whole:
    ``600`` and ``601`` are two numbers, not two strings that share most of their characters.

    Examples
    --------
    >>> char3_grams("ibm co 600")
    [' ib', 'ibm', 'bm ', ' co', 'co ', '#600']
    """
    out = []
    for w in text.split():
        if any(ch.isdigit() for ch in w):
            out.append("#" + w)
            continue
        w = f" {w} "
        out.extend(w[k:k + 3] for k in range(len(w) - 2))
    return out


def _char3_records(s: pd.Series, corpus: tuple | None = None):
    """Unit-length TF-IDF rows (CSR, float64, sorted indices) of each record's character
    3-grams (:func:`char3_grams` of :func:`_clean_words`): term frequency ``1 + log tf``,
    idf ``log((1 + n) / (1 + df)) + 1`` over the records (or ``corpus``, :func:`_global_counts`); None
    when no record has a word. An empty record is a zero row."""
    from sklearn.feature_extraction.text import CountVectorizer

    s = s.reset_index(drop=True)
    txt = series_distinct(s, _clean_words)
    if not (txt != "").any():
        return None
    # counted record by record into a sparse matrix and a vocabulary of the distinct 3-grams (not
    # one Python string per 3-gram of the table: 30 per record)
    vec = CountVectorizer(analyzer=char3_grams, dtype=np.float64)
    A = vec.fit_transform(txt.to_numpy(dtype=object)).tocsr()
    uniq = vec.get_feature_names_out()
    dfreq, n_docs = _global_counts(uniq, corpus, np.bincount(A.indices, minlength=A.shape[1]), len(s))
    idf = np.log((1.0 + n_docs) / (1.0 + dfreq)) + 1.0
    A = _unit_rows(A, idf)
    A.sort_indices()
    return A


def char3_cosine(s: pd.Series, i: np.ndarray, j: np.ndarray, corpus: tuple | None = None,
                 records=None) -> np.ndarray:
    """Per pair, the cosine of the two records' character 3-gram TF-IDF rows
    (:func:`_char3_records`): a typo changes a few 3-grams, another rare word many, and the
    3-grams that most records hold (``inc``, ``the``, ``of``, ``univ``) weigh little, so two
    names that differ in the one word that tells them apart ("... Secretary of the Navy" /
    "... of the Army") come out far apart although most of their words agree. ``records``: the
    rows, when already made."""
    if not len(i):
        return np.zeros(0)
    X = _char3_records(s, corpus) if records is None else records
    if X is None:
        return np.zeros(len(i))
    out = _rowwise_dot(X, X, np.ascontiguousarray(i, np.int64), np.ascontiguousarray(j, np.int64))
    return np.clip(out, 0.0, 1.0)


def _text_codes(s: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_text` of a column and the codes of its distinct values."""
    arr, miss = _text(s)
    return arr, miss, factorize(arr)[0]


def _tokens_features(df, f, i, j, fields, want):
    """Jaccard and overlap of the word-token sets (and the IDF-weighted Jaccard when wanted)."""
    indptr, indices = _prepared(df, ("token_sets", f.column), lambda: _token_sets(df[f.column]))
    jac = np.empty(len(i))
    ovl = np.empty(len(i))
    i64, j64 = np.ascontiguousarray(i, np.int64), np.ascontiguousarray(j, np.int64)
    rowlen = np.diff(indptr)
    for s, e in work_spans(rowlen[i64] + rowlen[j64] + 1, _JACCARD_CHUNK):  # a signal waits for one piece
        K.token_overlap(indptr, indices, i64[s:e], j64[s:e], jac[s:e], ovl[s:e])
    cols, names = [jac, ovl], ["jaccard", "overlap"]
    if want is not None and "idf_jaccard" in want:
        cols.append(_idf_jaccard(df[f.column], i, j, records=_prepared(df, ("idf", f.column),
                                                                       lambda: _idf_records(df[f.column]))))
        names.append("idf_jaccard")
    return cols, names, 1


def _phone_digits(s: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The last 10 digits of each phone number, whether it has fewer than 5, and their codes."""
    d = series_distinct(s, lambda p: p.fillna("").astype(str).str.replace(r"\D+", "", regex=True).str[-10:])
    arr = d.to_numpy(dtype=object)
    return arr, (d.str.len() < 5).to_numpy(), factorize(arr)[0]


def _phone_features(df, f, i, j, fields, want):
    """Exact agreement and Levenshtein similarity of the last 10 digits (fewer than 5: missing)."""
    arr, miss, vc = _prepared(df, ("phone", f.column), lambda: _phone_digits(df[f.column]))
    a, b = take(arr, i), take(arr, j)  # object gathers in pieces: a signal waits for one
    m = miss[i] | miss[j]
    ex = (vc[i] == vc[j]).astype(np.float64)  # = (a == b), on integer codes: no long object loop
    lev = _cp(a, b, distance.Levenshtein.normalized_similarity, codes=(vc[i], vc[j]))
    ex[m] = np.nan
    lev[m] = np.nan
    return [ex, lev], ["exact", "levenshtein"], 1


def _no_space(s: pd.Series) -> pd.Series:
    """Stripped, lower case, no white space (e-mail addresses)."""
    return s.str.strip().str.lower().str.replace(r"\s+", "", regex=True)


def _exact_and_similar(normalise: Callable[[pd.Series], pd.Series], name: str, scorer) -> _Features:
    """Exact agreement of the normalised values and one string similarity (``name``) of them."""

    def normalised(s: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        v = series_distinct(s, lambda p: normalise(p.fillna("").astype(str)))
        arr = v.to_numpy(dtype=object)
        return arr, (v == "").to_numpy(), factorize(arr)[0]

    def features(df, f, i, j, fields, want):
        arr, miss, vc = _prepared(df, (f.kind, name, f.column), lambda: normalised(df[f.column]))
        a, b = take(arr, i), take(arr, j)  # object gathers in pieces: a signal waits for one
        m = miss[i] | miss[j]
        ex = (vc[i] == vc[j]).astype(np.float64)  # = (a == b), on integer codes: no long object loop
        sim = _cp(a, b, scorer, codes=(vc[i], vc[j]))
        ex[m] = np.nan
        sim[m] = np.nan
        return [ex, sim], ["exact", name], 1

    return features


def _fields_key(fields: Sequence[Field]) -> tuple:
    return tuple((str(f.column), str(f.kind)) for f in fields)


def _record_text(df: pd.DataFrame, fields: Sequence[Field]) -> pd.Series:
    """:func:`~trustlab.er.kinds.record_text` of ``df`` (on a fresh index)."""
    return record_text(df, fields).reset_index(drop=True)


def _record_features(df, f, i, j, fields, want):
    """TF-IDF cosine of the whole records' words (:func:`~trustlab.er.kinds.record_text`),
    a column only one record fills no disagreement (:func:`_tfidf_cosine`)."""
    parts = record_parts(df.reset_index(drop=True), fields)
    if not len(i):  # (the text is not read)
        return record_features(pd.Series([], dtype=object), i, j, None, parts, fields, want)
    records = _prepared(df, ("tfidf", _fields_key(fields)),
                        lambda: _tfidf_records(_record_text(df, fields), None, parts))
    return record_features(pd.Series([], dtype=object), i, j, None, parts, fields, want, records=records)


def record_features(text: pd.Series, i: np.ndarray, j: np.ndarray, corpus: tuple | None,
                    parts: Sequence[pd.Series], fields: Sequence[Field], want,
                    records: _TfidfRecords | None = None) -> tuple[list, list, int]:
    """The whole-record comparison's features: ``cosine`` (:func:`_tfidf_cosine`) and, when
    ``want`` names ``shared``, one ``shared:<column>`` per column of the record's text
    (:func:`shared_parts`, :func:`record_slot_names`). ``records``: :func:`_tfidf_records` of
    ``text``, ``corpus`` and ``parts``, when already made."""
    if want is None or "shared" not in want:
        return [_tfidf_cosine(text, i, j, corpus, parts=parts, records=records)], ["cosine"], 0
    out, D = _tfidf_cosine(text, i, j, corpus, parts=parts, shared=True, records=records)
    return [out] + [D[:, c] for c in range(D.shape[1])], ["cosine"] + [f"shared:{c}" for c in
                                                                        record_slot_names(fields)], 0


def _codes_features(df, f, i, j, fields, want):
    """Shared rare / shared common / different / no codes in the whole records (:func:`_code_levels`)."""
    if not len(i):
        return [np.full(0, np.nan)], ["codes"], 0
    records = _prepared(df, ("codes", _fields_key(fields)), lambda: _code_records(
        _record_text(df, fields), parts=record_parts(df.reset_index(drop=True), fields)))
    return [_code_levels(pd.Series([], dtype=object), i, j, records=records)], ["codes"], 0


#: two numbers written with a decimal part agree when they differ by at most this share of the
#: larger (coordinates rounded differently: 40.6333 / 40.6403); whole numbers only when equal
NUMBER_TOLERANCE = 0.005


def number_agreement(va: np.ndarray, da: np.ndarray, vb: np.ndarray, db: np.ndarray,
                     wa: np.ndarray | None = None, wb: np.ndarray | None = None) -> np.ndarray:
    """Per pair (rows of the :func:`~trustlab.er.kinds.text_numbers` arrays of its two
    records), the weighted share of the numbers that agree, a Dice coefficient:
    ``(weight of a's numbers that agree with one of b's + weight of b's that agree with one of
    a's) / (weight of a's numbers + weight of b's)``; NaN where a record has none, or where all
    of the pair's numbers weigh 0. Two whole numbers agree when equal; where either has a
    decimal part, when they differ by at most :data:`NUMBER_TOLERANCE` of the larger. The
    matching is by set, not by position.

    ``wa`` / ``wb`` (same shape as ``va`` / ``vb``): a weight per number, :func:`number_weights`
    (its rarity: a shared ``7`` that a tenth of the records hold weighs less than a shared
    ``19081209``); without them every number weighs 1. Heuristic: a number one record has and
    the other lacks counts as one that disagrees (a citation with its pages against one
    without).

    Examples
    --------
    >>> from trustlab.er.kinds import text_numbers
    >>> v, d = text_numbers(pd.Series(["x 1949 7 22", "y 1949 7 27", "40.6333 22.95", "40.6403 22.9439", "none"]))
    >>> number_agreement(v[[0, 2, 0]], d[[0, 2, 0]], v[[1, 3, 4]], d[[1, 3, 4]]).round(3).tolist()
    [0.667, 1.0, nan]
    >>> w = np.where(np.isnan(v), np.nan, 1.0); w[:2, 1] = 0.25  # the month: common
    >>> number_agreement(v[[0]], d[[0]], v[[1]], d[[1]], w[[0]], w[[1]]).round(3).tolist()
    [0.556]
    """
    out = np.full(len(va), np.nan)
    for s, e in spans(len(va), 1 << 15):  # pieces of pairs: (pairs, k, k) comparisons each
        a, b, x, y = va[s:e, :, None], vb[s:e, None, :], da[s:e, :, None], db[s:e, None, :]
        with np.errstate(invalid="ignore"):
            tol = np.where(x | y, NUMBER_TOLERANCE * np.maximum(np.abs(a), np.abs(b)), 0.0)
            agree = np.abs(a - b) <= tol
        ha, hb = ~np.isnan(va[s:e]), ~np.isnan(vb[s:e])
        ua = ha.astype(np.float64) if wa is None else np.nan_to_num(wa[s:e])
        ub = hb.astype(np.float64) if wb is None else np.nan_to_num(wb[s:e])
        total = ua.sum(1) + ub.sum(1)
        hit = (agree.any(2) * ua).sum(1) + (agree.any(1) * ub).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s:e] = np.where(ha.any(1) & hb.any(1) & (total > 0), hit / total, np.nan)
    return out


def number_keys(v: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The key a number is counted under for its rarity (:func:`number_counts`): a whole
    number its value; a number with a decimal part ``floor(value) + 0.5`` (a coordinate or a
    price counted with the others of its unit interval: they may agree within
    :data:`NUMBER_TOLERANCE` without being written alike; an approximation). NaN where ``v`` is.

    Examples
    --------
    >>> number_keys(np.array([[7.0, 40.6333, -4.76, np.nan]]), np.array([[False, True, True, False]])).tolist()
    [[7.0, 40.5, -4.5, nan]]
    """
    return np.where(d, np.floor(v) + 0.5, v) + 0.0  # + 0.0: -0 is 0 (one key, as the counts merge them)


def number_counts(v: np.ndarray, d: np.ndarray) -> pd.Series:
    """The number of records holding each :func:`number_keys` key (rows of the
    :func:`~trustlab.er.kinds.text_numbers` arrays; a record counted once per key), indexed
    by the key written as a string (so that counts of several partitions add up by index).

    Examples
    --------
    >>> from trustlab.er.kinds import text_numbers
    >>> number_counts(*text_numbers(pd.Series(["7 7 1949", "7 22", "none"]))).sort_index().to_dict()
    {'1949.0': 1, '22.0': 1, '7.0': 2}
    """
    k = number_keys(v, d)
    r, c = np.nonzero(~np.isnan(k))
    if not r.size:
        return pd.Series(np.zeros(0, np.int64), index=pd.Index([], dtype=object), dtype=np.int64)
    pairs = pd.DataFrame({"r": r, "k": k[r, c]}).drop_duplicates()
    vc = pairs["k"].value_counts()
    return pd.Series(vc.to_numpy(np.int64), index=pd.Index(vc.index.astype(str), dtype=object))


def number_weights(v: np.ndarray, d: np.ndarray, corpus: tuple) -> np.ndarray:
    """Each number's weight by its rarity, ``log(n / df)`` (``corpus = (n, counts)``: the
    number of records and :func:`number_counts` of the whole table; a key not counted there
    has ``df = 1``; weights never below 0), NaN where ``v`` is. An IDF weight, as the
    whole-record cosine gives its words: a number half the records hold weighs ``log 2``.

    Examples
    --------
    >>> from trustlab.er.kinds import text_numbers
    >>> v, d = text_numbers(pd.Series(["7 1949", "7 22", "7"]))
    >>> number_weights(v, d, (3, number_counts(v, d)))[:, :2].round(3).tolist()
    [[0.0, 1.099], [0.0, 1.099], [0.0, nan]]
    """
    n, counts = corpus
    k = number_keys(v, d)
    w = np.full(k.shape, np.nan)
    ok = ~np.isnan(k)
    if ok.any():
        df = pd.Series(k[ok].astype(str)).map(counts).fillna(1).to_numpy(np.float64)
        w[ok] = np.maximum(np.log(max(int(n), 1) / np.maximum(df, 1.0)), 0.0)
    return w


def _numbers_features(df, f, i, j, fields, want, corpus: tuple | None = None):
    """The rarity-weighted share of the numbers inside the two records' text that agree
    (:func:`number_agreement` with :func:`number_weights`). ``corpus``: ``(n, counts)`` of a
    larger table (the distributed run's, summed over its partitions); without it, ``df``'s own."""
    if not len(i):
        return [np.full(0, np.nan)], ["numbers"], 0
    key = _fields_key(fields)
    v, d = _prepared(df, ("numbers", key), lambda: text_numbers(_record_text(df, fields)))
    if corpus is None:
        w = _prepared(df, ("numbers:w", key), lambda: number_weights(v, d, (len(df), number_counts(v, d))))
    else:
        w = _prepared(df, ("numbers:w", key, id(corpus[1])), lambda: number_weights(v, d, corpus))
    return [number_agreement(v[i], d[i], v[j], d[j], w[i], w[j])], ["numbers"], 0


def _exact_features(df, f, i, j, fields, want):
    """Agreement of the normalised values (punctuation and case are not part of a category
    or year: ``"1995."`` == ``"1995,"``)."""
    miss, codes = _prepared(df, ("exact", f.kind, f.column), lambda: _exact_codes(df[f.column], f.kind))
    ex = (codes[i] == codes[j]).astype(np.float64)
    ex[miss[i] | miss[j]] = np.nan
    return [ex], ["exact"], 0


#: two different model numbers at least this similar (normalised Levenshtein) are neighbours
NEIGHBOUR_CODE_SIM = 0.5


def code_variant(a: np.ndarray, b: np.ndarray, letters: bool = False) -> np.ndarray:
    """How two normalised model numbers (letters and digits, lower case) relate, per pair:
    1.0 the same code, 0.75 one contains the other (a suffix or prefix variant:
    ``ea650`` / ``ea650green``), 0.5 *neighbours* (at least :data:`NEIGHBOUR_CODE_SIM`
    similar, their runs of digits differ: ``wrt54gl`` / ``wrv54g`` is not one, ``nst360u2bk``
    / ``nst285u2bk`` is), 0.0 otherwise (unrelated codes: often a part number beside a
    model number of the same product). A heuristic: neighbours are usually another model of
    one series (another size, capacity or generation), which the Fellegi-Sunter model may
    learn as a level of its own. With ``letters`` (the ``model`` kind's column of model
    numbers), :func:`letter_variant` codes (``3n1ngr`` / ``3n1ngb``: another colour) are
    neighbours too; not for codes found anywhere in a record, where such endings are as
    often typing errors of one value (postcodes: census_cis −0.016 F1 with them).

    Examples
    --------
    >>> code_variant(np.array(["ea650", "nst360u2bk", "abc123", "x1", "3n1ngr"], object),
    ...              np.array(["ea650green", "nst285u2bk", "abc123", "zz9", "3n1ngb"], object)).tolist()
    [0.75, 0.5, 1.0, 0.0, 0.0]
    >>> code_variant(np.array(["3n1ngr"], object), np.array(["3n1ngb"], object), letters=True).tolist()
    [0.5]
    """
    out = np.zeros(len(a))
    if len(a) == 0:
        return out
    sim = _cpdist(a, b, distance.Levenshtein.normalized_similarity)  # in pieces: a signal waits for one
    digits = re.compile(r"\d+")
    for k in np.flatnonzero(sim >= NEIGHBOUR_CODE_SIM):
        x, y = a[k], b[k]
        if x == y:
            out[k] = 1.0
        elif x in y or y in x:
            out[k] = 0.75
        elif digits.findall(x) != digits.findall(y) or (letters and letter_variant(x, y)):
            out[k] = 0.5
    return out


_LETTER_TAIL = re.compile(r"^(.*\d)([^\W\d_]+)$")


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(c in it for c in short)


def letter_variant(x: str, y: str) -> bool:
    """Whether two normalised codes are one model in two variants: the same code up to its
    last digit, then two different runs of letters, neither an abbreviation (a subsequence)
    of the other: ``3n1ngr`` / ``3n1ngb``, ``cvem79pnk`` / ``cvem79red``, ``ce250a`` /
    ``ce250x`` (a colour, a capacity or a region letter), but not ``exzs10bk`` /
    ``exzs10black`` nor ``gp2a1en`` / ``gp2d1en`` (a letter inside the code). Heuristic:
    such a letter is as often a packaging as a product difference in some catalogues.

    Examples
    --------
    >>> [letter_variant(*p) for p in [("3n1ngr", "3n1ngb"), ("exzs10bk", "exzs10black"), ("wrt54gl", "wrv54g")]]
    [True, False, False]
    """
    mx, my = _LETTER_TAIL.match(x), _LETTER_TAIL.match(y)
    if mx is None or my is None or mx.group(1) != my.group(1):
        return False
    tx, ty = mx.group(2), my.group(2)
    short, long = (tx, ty) if len(tx) <= len(ty) else (ty, tx)
    return tx != ty and not _subsequence(short, long)


#: the codes of a record :func:`neighbour_codes` looks at (the first ones in string order)
NEIGHBOUR_CODES_MAX = 8


def code_lists(codes: pd.Series, n: int) -> np.ndarray:
    """Per record (``codes``: :func:`~trustlab.er.kinds.code_tokens`, indexed by record
    position ``0..n-1``), its distinct codes that hold a letter, in string order, at most
    :data:`NEIGHBOUR_CODES_MAX`, as a tuple (an object array of ``n`` tuples). Runs of
    digits are left out: phone numbers and ids one digit apart are as often typing errors
    of one value (measured: csv_example −0.010, fodors_zagats −0.009 F1 with them)."""
    out = np.empty(n, dtype=object)
    out[:] = [()] * n
    codes = codes[~codes.str.fullmatch(r"\d+").fillna(True).to_numpy(bool)] if len(codes) else codes
    if len(codes):
        g = pd.Series(codes.to_numpy(dtype=object), index=codes.index.to_numpy(np.int64))
        for r, v in g.groupby(level=0, sort=False):
            out[r] = tuple(sorted(set(v.tolist())))[:NEIGHBOUR_CODES_MAX]
    return out


def neighbour_codes(lists: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair ``(i[k], j[k])``: whether some code of record ``i[k]`` and some code of
    record ``j[k]`` (``lists``: :func:`code_lists`, codes with letters) are neighbours
    (:func:`code_variant` 0.5: similar codes whose digits differ, ``nst360u2bk`` /
    ``nst285u2bk``). A heuristic sign of another
    model of the same series; with several codes per record (a compatible model named in a
    title) it can fire on a true pair too.

    Examples
    --------
    >>> L = np.array([("hd6950", "xfx1gb"), ("hd6970",), ("abc",)], dtype=object)
    >>> neighbour_codes(L, np.array([0, 0]), np.array([1, 2])).tolist()
    [True, False]
    """
    out = np.zeros(len(i), bool)
    if len(i) == 0:
        return out
    n_codes = np.fromiter(map(len, lists), np.int64, len(lists))  # once per call, not per pair
    for s, e in spans(len(i), 1 << 14):  # in pieces of pairs: a signal waits for one piece
        ii, jj = i[s:e], j[s:e]
        la, lb = n_codes[ii], n_codes[jj]
        tot = la * lb
        if tot.sum() == 0:
            continue
        pk = np.repeat(np.arange(len(ii)), tot)
        off = np.arange(int(tot.sum())) - np.repeat(np.cumsum(tot) - tot, tot)
        qa, qb = off // np.repeat(lb, tot), off % np.repeat(lb, tot)
        a = np.array([lists[ii[p]][q] for p, q in zip(pk, qa)], dtype=object)
        b = np.array([lists[jj[p]][q] for p, q in zip(pk, qb)], dtype=object)
        np.logical_or.at(out[s:e], pk, code_variant(a, b) == 0.5)
    return out


#: units of the quantities :func:`quantity_lists` reads: unit -> (dimension, scale); bytes in
#: powers of 1000 (1 GB = 1024 MB within :data:`QUANTITY_TOLERANCE`)
QUANTITY_UNITS: dict[str, tuple[str, float]] = {
    "kb": ("byte", 1e3), "mb": ("byte", 1e6), "gb": ("byte", 1e9), "tb": ("byte", 1e12),
    "mhz": ("hz", 1e6), "ghz": ("hz", 1e9), "mah": ("mah", 1.0), "watt": ("watt", 1.0), "watts": ("watt", 1.0),
    "w": ("watt", 1.0), "volt": ("volt", 1.0), "volts": ("volt", 1.0), "v": ("volt", 1.0),
    "inch": ("inch", 1.0), "inches": ("inch", 1.0), '"': ("inch", 1.0), "ft": ("inch", 12.0),
    "feet": ("inch", 12.0), "mm": ("mm", 1.0), "cm": ("mm", 10.0), "oz": ("oz", 1.0), "lb": ("lb", 1.0),
    "lbs": ("lb", 1.0), "mp": ("mp", 1.0), "megapixel": ("mp", 1.0), "pack": ("pack", 1.0),
    "pk": ("pack", 1.0), "rpm": ("rpm", 1.0), "ppm": ("ppm", 1.0), "mbps": ("bps", 1e6), "gbps": ("bps", 1e9),
}
#: units of one letter (``w``, ``v``) and the inch sign count only glued to their number
#: (``350W``, ``12V``): ``1200 W Madison`` is an address, not a wattage
_QUANTITY_GLUED = ("w", "v", '"')
_QTY_NUM = r"(\d+(?:\.\d+)?)"
_QTY_UNIT = re.compile(
    r"(?<![\w.])" + _QTY_NUM + r"(?:(\s*-?\s*)(" + "|".join(sorted(
        (re.escape(u) for u in QUANTITY_UNITS if u not in _QUANTITY_GLUED), key=len, reverse=True))
    + r")|(-?)(w|v|\"))(?![a-z0-9])")
_QTY_SIZE = re.compile(r"(?<![\w.])" + _QTY_NUM + r"\s*x\s*" + _QTY_NUM + r"(?:\s*x\s*" + _QTY_NUM
                       + r")?(?![\w.])")
#: two values of one dimension within this relative difference are one value (rounding:
#: 14.1 MP / 14 MP, 1 GB / 1024 MB)
QUANTITY_TOLERANCE = 0.05
#: the quantities of a record :func:`quantity_conflict` looks at (the first ones in the text)
QUANTITY_MAX = 8
#: a column value is read for quantities when it has at least this many words of letters
#: (units aside): a product title, not a column of measurements
QUANTITY_MIN_WORDS = 3
#: and at most this many words: a title or a name, not a free text (a description, an
#: abstract names other sizes: of parts, of compatible products, of what it measured)
QUANTITY_MAX_WORDS = 40
_QTY_WORD = r"\b[a-z]{2,}\b"
_QTY_UNIT_WORD = r"\b(?:" + "|".join(sorted((re.escape(u) for u in QUANTITY_UNITS if len(u) >= 2), key=len,
                                             reverse=True)) + r")\b"


def quantity_lists(parts: Sequence[pd.Series]) -> np.ndarray:
    """Per record (position ``0..n-1`` of the columns ``parts``, one string Series each), the
    quantities with a unit its text names, at most :data:`QUANTITY_MAX`: ``(dimension,
    value)`` tuples, value in the dimension's base unit (``500GB`` -> ``("byte", 5e11)``,
    ``15.6-inch`` -> ``("inch", 15.6)``), and sizes ``A x B [x C]`` as ``("size2", (a, b))``
    with the numbers sorted. Units: :data:`QUANTITY_UNITS` (``w``, ``v`` and ``"`` only
    glued to the number). Only a value of at least :data:`QUANTITY_MIN_WORDS` words of
    letters (units aside) and at most :data:`QUANTITY_MAX_WORDS` words is read: a title
    names the product's size; a column of measurements (``7.6 x 4.8 x 1.4 inches``, a
    shipping box) is compared as its own field, and its values differ between sources for
    one product; a free text (a description, an abstract) names other sizes. A heuristic reader of product
    titles (capacities, screen sizes, wattages, pack counts); an object array of tuples, the
    shared empty tuple for a record without any.

    Examples
    --------
    >>> quantity_lists([pd.Series(["WD 500GB hard drive 7200 rpm", "big screen 60 x 80 video",
    ...                            "1200 W Madison street", "7.6 x 4.8 x 1.4 inches"])]).tolist()
    [(('byte', 500000000000.0), ('rpm', 7200.0)), (('size2', (60.0, 80.0)),), (), ()]
    """
    if isinstance(parts, pd.Series):
        parts = [parts]
    n = len(parts[0]) if len(parts) else 0
    out = np.empty(n, dtype=object)
    out[:] = [()] * n
    if n == 0:
        return out
    read = []
    for part in parts:
        # each distinct value read once (titles, names and places repeat)
        codes, uniq = factorize(part.fillna("").astype(str).to_numpy(dtype=object))  # in pieces
        read.append((codes, _value_quantities(pd.Series(uniq, dtype=object)), len(uniq)))
    return _quantity_rows(read, out)


def _quantity_rows(read: Sequence[tuple], out: np.ndarray) -> np.ndarray:
    """:func:`quantity_lists` from each part's reading of its distinct values: ``read`` holds
    per part ``(codes, quantities of the values by position, number of values)`` (``codes``:
    each record's value); a record's quantities are those of its values, in the order of the
    parts, repeats dropped, at most :data:`QUANTITY_MAX`, written into ``out``."""
    found: dict[int, list] = {}
    for codes, per_value, nvals in read:
        if not per_value:
            continue
        has = np.zeros(nvals, bool)
        has[list(per_value)] = True
        for r in np.flatnonzero(has[codes]).tolist():
            found.setdefault(r, []).extend(per_value[int(codes[r])])
    for r, q in found.items():
        out[r] = tuple(dict.fromkeys(q))[:QUANTITY_MAX]
    return out


def _value_quantities(vals: pd.Series) -> dict[int, list]:
    """:func:`quantity_lists`' reading of each value (strings): position -> its quantities,
    in the order of the text, for the values that name one."""
    low = vals.str.lower().reset_index(drop=True)
    has = low.str.contains(r"\d\s*-?\s*[a-z\"]", regex=True).to_numpy(bool)
    found: dict[int, list] = {}
    if not has.any():
        return found
    words = low[has].str.count(_QTY_WORD).to_numpy() - low[has].str.count(_QTY_UNIT_WORD).to_numpy()
    short = low[has].str.count(r"\S+").to_numpy() <= QUANTITY_MAX_WORDS
    for r in np.flatnonzero(has)[(words >= QUANTITY_MIN_WORDS) & short]:
        s = low.iat[r]
        q = []
        for v, _, u, _, g in _QTY_UNIT.findall(s):
            x = float(v)
            if x > 0:
                dim, scale = QUANTITY_UNITS[u or g]
                q.append((dim, x * scale))
        for a, b, c in _QTY_SIZE.findall(s):
            vals_ = tuple(sorted(float(x) for x in (a, b, c) if x))
            q.append((f"size{len(vals_)}", vals_))
        if q:
            found[int(r)] = q
    return found


def _same_quantity(x, y) -> bool:
    if isinstance(x, tuple):
        return all(abs(a - b) <= QUANTITY_TOLERANCE * max(a, b) for a, b in zip(x, y))
    return abs(x - y) <= QUANTITY_TOLERANCE * max(x, y)


def quantity_conflict(lists: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair ``(i[k], j[k])``: whether both records name a quantity of one dimension
    (:func:`quantity_lists`) and no value of that dimension of one is within
    :data:`QUANTITY_TOLERANCE` of a value of the other (``500GB`` / ``1TB``, ``60 x 60`` /
    ``96 x 96``): another size or capacity of the same product line. Heuristic: a title that
    names a compatible size (``for 15.4-inch screens``) beside the product's own can make a
    true pair look like two sizes.

    Examples
    --------
    >>> L = quantity_lists([pd.Series(["WD 500GB hard drive", "WD 1TB hard drive", "WD 0.5 TB hard drive",
    ...                                "no size at all"])])
    >>> quantity_conflict(L, np.array([0, 0, 0]), np.array([1, 2, 3])).tolist()
    [True, False, False]
    """
    out = np.zeros(len(i), bool)
    if len(i) == 0 or lists is None:
        return out
    has = np.fromiter(map(bool, lists), bool, len(lists))  # once per call, not per pair
    for k in np.flatnonzero(has[i] & has[j]):
        qa, qb = lists[i[k]], lists[j[k]]
        dims = {d for d, _ in qa} & {d for d, _ in qb}
        for d in dims:
            if not any(_same_quantity(x, y) for e, x in qa if e == d for f, y in qb if f == d):
                out[k] = True
                break
    return out


def quantity_levels(lv: np.ndarray, quantities: np.ndarray | None, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """:func:`_code_levels` with the pairs whose records hold codes and share none (level
    0.0) and name two sizes of one dimension (:func:`quantity_conflict`) set to the
    neighbour level 0.25: a different capacity, size or wattage is evidence of another
    product of one series, as a neighbouring model number is. A pair that shares a code
    keeps its level (a title's size can be wrong beside a right model number), and so does a
    pair where one record holds no code (NaN): EM sees the neighbour level as *else*, so
    moving a pair from missing to it moves EM's fit (measured: titles without model numbers
    lost 0.068 F1 through a lower λ), while 0.0 and 0.25 are one level to EM."""
    if quantities is None or not len(i):
        return lv
    k = np.flatnonzero(lv == 0.0)
    if len(k):
        lv[k[quantity_conflict(quantities, i[k], j[k])]] = 0.25
    return lv


def _model_features(df, f, i, j, fields, want):
    """Exact agreement of the normalised model numbers and :func:`code_variant` of them."""
    def normalised():
        norm = series_distinct(df[f.column], lambda p: KINDS[f.kind].normalise(p.fillna("").astype(str)))
        arr = norm.fillna("").to_numpy(dtype=object)
        return arr, arr == "", factorize(arr)[0]

    arr, miss, vc = _prepared(df, ("model", f.kind, f.column), normalised)
    m = miss[i] | miss[j]
    ex = (vc[i] == vc[j]).astype(np.float64)
    var = np.full(len(i), np.nan)
    k = np.flatnonzero(~m)
    var[k] = code_variant(take(arr, i[k]), take(arr, j[k]), letters=True)
    ex[m] = np.nan
    return [ex, var], ["exact", "variant"], 0


def _exact_codes(v: pd.Series, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Whether each value is missing, and the codes of the normalised values of ``kind``."""
    norm = series_distinct(v, lambda p: KINDS[kind].normalise(p.astype(str)))
    miss = (v.isna() | (norm.fillna("") == "")).to_numpy()
    return miss, factorize(norm.fillna(""))[0]


def _numeric_features(df, f, i, j, fields, want):
    """Relative similarity ``1 - |a - b| / max(|a|, |b|)`` of the numbers."""
    x = pd.to_numeric(df[f.column], errors="coerce").to_numpy(np.float64)
    a, b = x[i], x[j]
    rel = 1.0 - np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-12)
    rel[(a == b)] = 1.0
    return [rel], ["rel_sim"], 0


def _date_features(df, f, i, j, fields, want):
    """Same day, ``exp(-days apart / 365)`` and the Levenshtein similarity of the text."""
    # utc=True: values with (mixed) time-zone offsets and tz-aware columns parse too
    # (as instants; naive values count as UTC) instead of leaving an object column
    # (each value parsed on its own with format="mixed": in pieces of records, the same instants)
    days = _prepared(df, ("days", f.column), lambda: _days(df[f.column]))
    a, b = days[i], days[j]
    diff = np.abs(a - b)
    cols = [(diff == 0).astype(np.float64), np.exp(-diff / 365.0)]
    cols[-2][np.isnan(diff)] = np.nan
    # typo-level string similarity too (swapped day/month)
    arr, miss, vc = _prepared(df, ("text", f.column), lambda: _text_codes(df[f.column]))
    lev = _cp(take(arr, i), take(arr, j), distance.Levenshtein.normalized_similarity, codes=(vc[i], vc[j]))
    lev[miss[i] | miss[j]] = np.nan
    cols.append(lev)
    return cols, ["exact", "year_sim", "levenshtein"], 2


def _days(s: pd.Series) -> np.ndarray:
    """Days since 1970-01-01 of each date (NaN where it does not parse)."""
    t = series_pieces(s, lambda p: pd.to_datetime(p, errors="coerce", format="mixed", utc=True))
    return (t - pd.Timestamp("1970-01-01", tz="UTC")).dt.days.to_numpy(np.float64)


def _latlon_features(df, f, i, j, fields, want):
    """``exp(-km apart / 25)`` of two coordinates (0,0 counts as missing)."""
    la, lo = f.columns()
    lat = pd.to_numeric(df[la], errors="coerce").to_numpy(np.float64)
    lon = pd.to_numeric(df[lo], errors="coerce").to_numpy(np.float64)
    bad = np.isnan(lat) | np.isnan(lon) | ((lat == 0) & (lon == 0))
    lat0 = np.where(bad, 0.0, lat)
    lon0 = np.where(bad, 0.0, lon)
    d = np.empty(len(i))
    for s, e in spans(len(i)):  # a signal waits for one piece
        ii, jj = i[s:e], j[s:e]
        d[s:e] = K.haversine_km(lat0[ii], lon0[ii], lat0[jj], lon0[jj])
    sim = np.exp(-d / 25.0)
    sim[bad[i] | bad[j]] = np.nan
    return [sim], ["geo_sim"], 0


#: the features of each field kind (every kind of :data:`trustlab.er.kinds.KINDS` has one)
FEATURES: dict[str, _Features] = {
    "string": _text_features("token_set"),
    "text": _char3_features,
    "name": _text_features("jaro_winkler"),
    "address": _text_features("token_set", token_sort=True),
    "phone": _phone_features,
    "numeric": _numeric_features,
    "date": _date_features,
    "exact": _exact_features,
    "model": _model_features,
    "latlon": _latlon_features,
    "tokens": _tokens_features,
    "email": _exact_and_similar(_no_space, "jaro_winkler", distance.JaroWinkler.normalized_similarity),
    "postcode": _exact_and_similar(KINDS["postcode"].normalise, "levenshtein",
                                   distance.Levenshtein.normalized_similarity),
    "code": _exact_and_similar(KINDS["code"].normalise, "levenshtein", distance.Levenshtein.normalized_similarity),
    "record": _record_features,
    "codes": _codes_features,
    "numbers": _numbers_features,
}


@validate_params({"df": [pd.DataFrame], "pairs": ["array-like"], "fields": ["sequence"], "only": ["mapping", None]})
def compare(df: pd.DataFrame, pairs: np.ndarray, fields: Sequence[Field], *, only: dict | None = None) -> FeatureMatrix:
    """Similarity features for each candidate pair (rows of ``pairs``).

    ``only`` (column -> set of feature names) computes just those text features (the
    others are left out of the matrix); used by the unsupervised model, which needs two.

    Parameters
    ----------
    df : pandas.DataFrame
        The records.
    pairs : numpy.ndarray of shape (k, 2)
        Candidate pairs (record positions).
    fields : sequence of Field
        The compared fields.
    only : dict, optional
        Column -> set of feature names to compute (the others are left out).

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["Ann Smith", "Anne Smith"]})
    >>> fm = compare(df, np.array([[0, 1]]), [Field("name", "name")])
    >>> fm.names[:2], bool(fm.X[0, 0] > 0.9)
    (['name:jaro_winkler', 'name:token_set'], True)
    """
    pairs = np.asarray(pairs)
    if _PREPARED.get() is None:  # the per-record work of the layout pass below is kept for the pairs
        with prepared_records():
            return compare(df, pairs, fields, only=only)
    for f in fields:
        if f.kind not in FEATURES:  # pragma: no cover - normalize_fields rejects unknown kinds
            raise ValueError(f"unknown field kind {f.kind!r}")
    # the layout first (names, main features, dtype: every kind's features of no pair), so
    # that each field's columns are written into the matrix as they come and freed, instead
    # of all of them being held beside the matrix they are stacked into
    none = np.zeros(0, pairs.dtype if pairs.dtype.kind in "iu" else np.int64)
    layout = [FEATURES[f.kind](df, f, none, none, fields, None if only is None else only.get(f.column))
              for f in fields]
    names: list[str] = []
    field_of: list[str] = []
    primary: list[int] = []
    for f, (fc, fn, main) in zip(fields, layout):
        primary.append(len(names) + main)
        names += [f"{f.column}:{k}" for k in fn]
        field_of += [f.column] * len(fc)
    dtypes = [c.dtype for fc, _, _ in layout for c in fc]
    X = np.empty((len(pairs), len(names)), np.result_type(*dtypes) if dtypes else np.float64)
    if len(pairs):
        i, j = pairs[:, 0], pairs[:, 1]
        at = 0
        for f, (_, fn0, _) in zip(fields, layout):
            fc, fn, _ = FEATURES[f.kind](df, f, i, j, fields, None if only is None else only.get(f.column))
            if list(fn) != list(fn0):  # pragma: no cover - a kind's feature names do not depend on the pairs
                raise RuntimeError(f"the features of {f.column!r} changed with the pairs: {fn0} -> {fn}")
            fill_columns(X, at, fc)  # in pieces: a signal waits for one
            at += len(fc)
            del fc
    return FeatureMatrix(
        X=X, names=names, field_of=field_of, primary=primary, fields=list(fields)
    )


