"""Which inferred fields carry identity: field relevance by leave-one-field-out agreement.

Real files carry columns that say nothing about which entity a record is: row numbers,
export timestamps, sparse notes, a free-text comment about something else. Compared as
fields they cost more than time: they enter the whole-record comparison and the blocking,
and Fellegi-Sunter's EM can even elect "agrees on the notes" as its match class. This
module judges every inferred field by **evidence from the other fields**, before anything
is blocked or fitted (so nothing a noise column contaminated is read):

* the pairs that agree exactly on another field ``g`` (its normalised value; for stacked
  tables linked to each other, pairs across the tables) are enriched in matches whenever
  ``g`` carries identity;
* a field ``f`` that carries identity agrees more often, and is more similar, on those pairs
  than on random record pairs; a field that carries none agrees on them as on random pairs,
  whatever ``g`` is.

:func:`judge_fields` measures, for every field ``f`` and every other field ``g``, the gain
of ``f``'s agreement on ``g``'s pairs over random pairs (a gain relative to what random pairs
leave, ``(a - r) / (1 - r)``, of its exact level and of its similarity) and whether it is
significant (a z-score). A field with a significant gain on some other field's pairs is
*relevant*. A field is called **noise** only when

1. there are *strong conditioners*: fields of rare values (random pairs share one less than
   2 % of the time, :data:`MAX_CONDITIONER_AGREEMENT`; a city's or a cuisine's pairs are hardly
   enriched in matches, and what other fields gain on them is how attributes go together)
   on whose pairs the relevant fields gain at least :data:`MIN_STRENGTH`;
2. ``f`` has enough evidence on their pairs (both values present on :data:`MIN_EVIDENCE`);
3. on those pairs its gain, even at its upper confidence bound, is below a quarter
   (:data:`NOISE_SHARE`) of the gain the relevant fields show there: how enriched in matches
   the pairs are sets how large a gain identity can show.

A field too sparse for this (present on both records of too few pairs) is judged the other
way round: are the pairs that agree on it more alike in the relevant fields than random pairs
(compared with what the strong conditioners' pairs show)? A field that random pairs mostly
agree on (a near-constant flag, a missing-value marker) or whose comparison sees no two values
as equal is not judged: it cannot mislead. Where the evidence is missing (a one-field file:
the only real field and a noise column cannot be told apart by their values; small tables of
few duplicates), nothing is dropped.

Two *shapes* are suspect from the start (:func:`suspect_shape`): a running counter (each
table's values are the consecutive integers ``k .. k+n-1``, so the tables share numbers that
say nothing) and a timestamp with a time of day that varies (an export or modification time).
A suspect field is dropped unless the evidence shows it carries identity (a counter of two
tables aligned row by row would).

All of this is heuristic: the thresholds (:data:`MIN_GAIN`, :data:`MIN_Z`, :data:`MIN_PAIRS`,
:data:`NOISE_SHARE`, :data:`MIN_STRENGTH`, :data:`MAX_CONDITIONER_AGREEMENT`) were chosen on the
real files of ``bench/er_real.py`` and their ``extra`` presentation
(``bench/er_perturb.py``), and the test reads a sample (:data:`MAX_RECORDS` records).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from trustlab.er.kinds import KINDS, Field, tf_keys

__all__ = ["FieldEvidence", "judge_fields", "suspect_shape"]

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
#: a field whose exact agreement stays below this on the conditioners' pairs and on random
#: pairs is not judged (its comparison sees no value as equal, e.g. ``1999`` vs ``1999.0``)
MIN_AGREEMENT = 0.01

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
        identity fields' gain on the same pairs),
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
    detail: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict, repr=False)

    def reason(self) -> str:
        if self.shape is not None:
            what = {"counter": "a running counter (each table's values are consecutive integers)",
                    "timestamp": "a timestamp with a varying time of day (export / change time)"}[self.shape]
            return (f"{what}, with no evidence that it carries identity (no significant gain on the pairs that "
                    "agree on another field): not compared (pass fields=... to compare it)")
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


def _measure(df: pd.DataFrame, fields: Sequence[Field], judged: Sequence[Field], rand: np.ndarray,
             blocks: dict, out: dict) -> None:
    """Compare the pairs and record, for each field of ``judged``, its gain on every other
    field's pairs (``blocks``) over the random pairs ``rand``."""
    from trustlab.er.comparisons import compare
    from trustlab.er.kinds import needed_features

    allp = np.concatenate([rand] + [blocks[f.column] for f in fields])
    rows, inv = np.unique(allp, return_inverse=True)  # compare the records in the pairs only
    sub = df.iloc[rows].reset_index(drop=True) if rows.size < len(df) else df
    pairs = inv.reshape(allp.shape).astype(np.int64) if rows.size < len(df) else allp
    fm = compare(sub, pairs, list(judged), only=needed_features(judged))
    col = {nm: k for k, nm in enumerate(fm.names)}
    offs = np.cumsum([0, len(rand)] + [len(blocks[f.column]) for f in fields])
    for f in judged:
        ex, sim = KINDS[f.kind].levels[:2]
        feats = [col[c] for c in dict.fromkeys((f"{f.column}:{ex}", f"{f.column}:{sim}")) if c in col]
        ev = out[f.column]
        for fi in feats:
            xr = fm.X[:offs[1], fi]
            xr = xr[~np.isnan(xr)]
            if xr.size < 30:
                continue
            # a field most random pairs agree on (a near-constant value, a missing-value
            # marker) is left to the model: a small difference would pass for a large gain
            r0 = fm.X[:offs[1], feats[0]]
            rate = float((r0[~np.isnan(r0)] >= _EQUAL).mean())
            if len(judged) == len(fields) or np.isnan(ev.random_exact):
                ev.random_exact = rate
            common = rate >= MAX_RANDOM_AGREEMENT
            for q, g in enumerate(fields):
                if g.column == f.column:
                    continue
                x = fm.X[offs[q + 1]:offs[q + 2], fi]
                x = x[~np.isnan(x)]
                if x.size < 10:
                    continue
                gain, upper, z = _gain(x, xr)
                ev.detail[(g.column, fm.names[fi])] = (round(gain, 3), round(upper, 3), round(z, 1), int(x.size))
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
    # a sparse field has few pairs of the others on which its value is present on both: its own
    # pairs of the others, among the records that hold it
    thin = [f for f in fields if out[f.column].verdict != "relevant" and out[f.column].evidence < MIN_EVIDENCE]
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
            if primary and z >= MIN_Z and gain >= MIN_GAIN and x.size >= MIN_PAIRS and ev.verdict == "relevant" \
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
        judged = False
        for primary in (True, False):
            xs = [x for (g, p), (x, xr) in ev.stats.items() if p == primary and g in used]
            rs = [xr for (g, p), (x, xr) in ev.stats.items() if p == primary and g in used]
            if not xs:
                continue
            x = np.concatenate(xs)
            _, upper, _ = _gain(x, rs[0])
            ev.upper = max(ev.upper, upper)
            if primary:
                ev.evidence = int(x.size)
                ev.random_rate = float((rs[0] >= _EQUAL).mean())
                judged = MIN_AGREEMENT <= max(float(x.mean()), float(rs[0].mean())) \
                    and ev.random_rate < MAX_RANDOM_AGREEMENT
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
        refs = [_gain(x, xr)[0] for (g, p), (x, xr) in er.stats.items()
                if p and g in strong and g != r and x.size >= MIN_PAIRS]
        ref = max(refs, default=0.0)
        x, xr = er.stats[(c, True)]
        if ref <= 0 or x.size < MIN_PAIRS:
            continue
        seen += 1
        worst = max(worst, _gain(x, xr)[1] / ref)
    if seen:
        ev.upper, ev.threshold, ev.reverse = worst, NOISE_SHARE, True
        if worst < NOISE_SHARE:
            ev.verdict = "noise"
