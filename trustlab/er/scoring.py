"""Stage 5 of :func:`trustlab.resolve`, *score*: match probabilities and signed weights of
the compared pairs.

* :class:`FSModel` — the unsupervised Fellegi–Sunter model over multi-level comparisons
  (below), fitted by EM;
* :class:`SupervisedScorer` — a regularised logistic (or ridge) model on labelled pairs;
* :func:`to_weights` maps probabilities to signed weights (log-odds or ``p - 0.5``) so
  positive means "same entity";
* :func:`one_to_one_log_odds` — link mode (duplicate-free tables): the pairs' log-odds with
  each record's other candidates competing for it (``resolve`` applies it with
  ``link_type="link_only"`` and Fellegi–Sunter);
* :func:`_component_completion` lists the pairs inside small positive components that
  blocking missed (``complete_components``: the orchestrator compares and scores them too).

The Fellegi–Sunter model:

Every field is compared at four levels — **exact**, **close**, **far**, **else** — plus
**missing** (either value empty: weight 0). The similarity feature and the two
thresholds depend on the field kind (:data:`~trustlab.er.kinds.COMPARISON_LEVELS`). :class:`FSModel`
fits the Fellegi–Sunter m/u probabilities and the match share λ:

* u-probabilities from randomly sampled record pairs (Splink's
  ``estimate_u_using_random_sampling``), re-estimated in EM on the candidate non-matches
  and shrunk towards the random-pair estimate by how random the candidates are;
* EM initialised from a deterministic rule: candidate pairs whose exact agreements
  are jointly so rare that fewer than one random pair in the whole table is expected
  to show them (``sum of -log u_exact >= log(n(n-1)/2)``) start as matches;
* blocking-aware: among the candidates a ``key:`` blocking rule proposes, its fields
  agree by construction, so for those pairs they are left out of the likelihood; which
  key rules a pair agrees on (or lacks a key of) enters its prior log-odds through a
  logistic model fitted in the M step (Splink estimates m per blocking rule without the
  rule's fields for the same reason). Without the correction a rule such as
  ``key:publisher+year`` made agreeing on publisher or year count against a match;
* with every pair a candidate, level patterns that non-matches show together more often
  than independent fields would (neighbours share a street *and* a city), measured on
  the random pairs, are discounted in EM, so its match class stays with the duplicates;
* term-frequency adjustment at the exact level of name-like and categorical fields
  (Splink's TF adjustment): agreeing on a rare value weighs ``log(m / tf(value))``
  instead of ``log(m / u)``.

The model assumes fields agree independently given the match status (the usual FS
approximation), so its probabilities are estimates, not calibrated truths.
Everything fitted is JSON-serialisable through ``to_dict`` / ``from_dict``.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from trustlab import _chunks
from trustlab._chunks import setdiff_sorted
from trustlab._validation import Interval, validate_params
from trustlab.er.kinds import COMPARISON_LEVELS, KINDS, LEVEL_NAMES, Field, needed_features, record_fields, tf_keys

__all__ = ["FSModel", "DegenerateModelWarning", "SupervisedScorer", "to_weights", "one_to_one_log_odds"]

_L = len(LEVEL_NAMES)


#: fewer records than this: no EM (too few pairs to estimate m, u and λ); a fixed prior model
MIN_RECORDS_EM = 10
# the prior model: Bayes factors about e^2.8 (exact), e^1.3 (close), e^-3.2 (far), e^-6.2 (else),
# prior log-odds -1: one exact or close agreement with nothing far off is a match
_PRIOR_U = np.array([0.05, 0.05, 0.2, 0.7])
_PRIOR_M = _PRIOR_U * np.exp([3.0, 1.5, -3.0, -6.0])
_PRIOR_M = _PRIOR_M / _PRIOR_M.sum()
_PRIOR_LAMBDA = 1.0 / (1.0 + math.e)
#: a word of the whole-record comparison (as :func:`trustlab.er.kinds.record_text` is tokenised)
_WORD = r"[^\W\d_]+|\d+"
#: a field is identifying when random pairs agree on it (exactly or closely) less often than this
IDENTIFYING_U = 0.1
#: share of EM's matches that should agree (exactly or closely) on some identifying field
PLAUSIBLE_AGREEMENT = 0.5
#: pseudo-pairs that shrink the observed / expected count of a level pattern among random pairs
DEPENDENCE_PSEUDO = 10.0
#: ridge penalty on the log-odds each key rule adds to the prior of the pairs it proposes
KEY_PRIOR_RIDGE = 0.01
#: a field opens an EM session (Splink-style training) when random pairs agree on it exactly
#: less often than this
SESSION_U = 0.02
#: smallest m-probability of a level of the whole-record comparisons (record, codes)
DERIVED_M_FLOOR = 0.01
#: pseudo-pairs that shrink a session's own u (its non-matches) towards the random-pair u
SESSION_U_PSEUDO = 10.0
#: ... and at least this many candidate pairs agree on it exactly
MIN_SESSION_PAIRS = 10
#: random record pairs are taken for non-matches when u is estimated on them; where EM (m fixed at
#: the sessions' estimate) finds at least this share of them to be matches (a few entities hold
#: much of the table: one company's 292 records spelled alike), u is re-estimated on their
#: non-match posteriors and the sessions run again with it (:meth:`FSModel._random_nonmatch_u`)
RANDOM_MATCH_SHARE = 0.01
#: the session of a field with a key rule of its own keeps the pairs that share a value only
#: when at least this share of the record pairs sharing that value are candidates (a purged
#: block's candidates are selected by the other rules, FSModel._complete_session_pairs)
SESSION_BLOCK_COMPLETE = 0.5
#: where the random pairs hold many matches (RANDOM_MATCH_SHARE), a session pair is *confident*
#: when its agreement on the session's value alone, weighed by that value's frequency, makes it a
#: match with at least this probability (FSModel._confident_session_m)
CONFIDENT_MATCH = 0.9
#: ... and the session's m is taken from its confident pairs when its EM's mean match posterior
#: over them is below this (the EM's match class excludes most pairs the field alone calls matches:
#: patent's company names 0.16; pv_inventors' sessions 0.45-0.88, where 0.5 let its city session
#: through and cost 0.17 F1) and they disagree more than its match class does
CONFIDENT_EM_AGREEMENT = 0.25
#: at most this many key rules enter the prior (two bits each in an int64 code)
MAX_KEY_RULES = 31
#: pseudo-pairs that shrink a blocking stratum's u of a whole-record comparison (its candidate
#: non-matches) towards the random-pair u (:meth:`FSModel._fit_strata`)
STRATUM_U_PSEUDO = 1000.0
#: pseudo-pairs of the beta prior of a blocking stratum's match share, centred on the pooled
#: model's mean match probability in the stratum (:meth:`FSModel._fit_strata`)
STRATUM_LAMBDA_PSEUDO = 10.0
#: the session EM runs on at most this many cells (distinct level rows x fields): beyond it
#: (wide tables, tens of compared fields, where almost every pair has its own row) it runs
#: on a seeded uniform sample of the candidate pairs, each counted 1 / (sampling share)
EM_MAX_CELLS = 4_000_000


#: the kinds of free text that may hold the numbers of the ``numbers`` comparison
_FREE_TEXT_KINDS = ("string", "text", "tokens", "address")


class DegenerateModelWarning(UserWarning):
    """Unsupervised training ended in a degenerate model (see the message for the fix).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", DegenerateModelWarning)  # make it an error in a pipeline
    ...     try:
    ...         warnings.warn("every pair scored alike", DegenerateModelWarning)
    ...     except DegenerateModelWarning as w:
    ...         print(type(w).__name__, isinstance(w, UserWarning))
    DegenerateModelWarning True
    """


def _em_rows(G: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The distinct level rows of ``G`` and their counts for the session EM, and the pairs
    they come from (None: all; else a boolean mask of the sample).

    Every pair while the rows hold at most :data:`EM_MAX_CELLS` cells; else a seeded uniform
    sample of the pairs, each kept with probability ``(EM_MAX_CELLS / fields) / distinct
    rows``, lowered until at most ``EM_MAX_CELLS / fields`` distinct rows remain, with counts
    scaled to the number of pairs (:func:`_counted_rows`): an estimate, so the fit is
    approximate there (the counts of rare level rows are sampled)."""
    Gu, cnt = _counted_rows(G)
    if Gu.size <= EM_MAX_CELLS:
        return Gu, cnt, None
    cap = max(1, EM_MAX_CELLS // G.shape[1])
    draw = np.random.default_rng(0).random(len(G))
    share = cap / len(Gu)
    while True:  # rows that many pairs show survive any sample: lower the share until the rows fit
        keep = draw < share
        Gs, cs = _counted_rows(G, keep, keep)
        if len(Gs) <= cap:
            return Gs, cs, keep
        share *= 0.9 * cap / len(Gs)


def _counted_rows(G: np.ndarray, keep: np.ndarray | None = None,
                  sample: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``G[keep]`` (every row when None) and how many pairs each
    stands for: its count, scaled by ``len(G) / sample.sum()`` where the pairs are
    ``sample``, a sample of them (:func:`_em_rows`)."""
    Gu, inv = _distinct_rows_inverse(G if keep is None else G[keep])
    cnt = np.bincount(inv, minlength=len(Gu)).astype(np.float64)
    if sample is not None:
        cnt *= len(G) / max(int(sample.sum()), 1)
    return Gu, cnt


def _distinct_rows_inverse(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a small-integer matrix (values -1..3, or any non-negative ints
    in extra columns) and each row's index among them."""
    if len(G) == 0:
        return G, np.zeros(0, np.int64)
    # in pieces of rows, the sort too (trustlab._chunks): a signal waits for one piece
    base = max(5, max(int(G[a:b].max()) for a, b in _chunks.spans(len(G))) + 2)
    if G.shape[1] * math.log(base) < 62 * math.log(2):  # one int64 code per row
        code = np.zeros(len(G), np.int64)
        for a, b in _chunks.spans(len(G)):
            for c in range(G.shape[1]):
                code[a:b] = code[a:b] * base + (G[a:b, c].astype(np.int64) + 1)
        _, first, inv = _chunks.unique(code)
        return G[first], inv
    U, inv = np.unique(G, axis=0, return_inverse=True)
    return U, inv.ravel()


def _key_logit(Hb: np.ndarray, n_h: np.ndarray, s_h: np.ndarray, lam: float,
               beta: np.ndarray | None = None, ridge: float = KEY_PRIOR_RIDGE,
               upper: np.ndarray | None = None, max_iter: int = 50) -> np.ndarray:
    """Logistic regression of the match share ``s_h / n_h`` of each combination of key
    rules on indicators of the rules (``Hb``: intercept first), weighted by ``n_h``, with
    a ridge penalty on the rule coefficients (projected Newton steps); the log prior odds
    of a combination add up over the rules that propose it. ``upper`` caps the rule
    coefficients (see :meth:`FSModel.fit`)."""
    k = Hb.shape[1]
    if beta is None:
        beta = np.r_[math.log(max(lam, 1e-9) / max(1 - lam, 1e-9)), np.zeros(k - 1)]
    hi = np.r_[np.inf, upper if upper is not None else np.full(k - 1, np.inf)]
    beta = np.minimum(beta.copy(), hi)
    pen = np.full(k, ridge)
    pen[0] = 1e-9

    def objective(b):
        z = Hb @ b
        return float(s_h @ z - n_h @ np.logaddexp(0, z) - 0.5 * pen @ (b * b))

    f = objective(beta)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-np.clip(Hb @ beta, -30, 30)))
        g = Hb.T @ (s_h - n_h * p) - pen * beta
        Hs = (Hb * (n_h * p * (1 - p) + 1e-9)[:, None]).T @ Hb + np.diag(pen)
        step = np.linalg.solve(Hs, g)
        t = 1.0
        while t > 1e-4:  # backtracking: Newton overshoots when a combination is all matches
            fn = objective(np.minimum(beta + t * step, hi))
            if fn >= f - 1e-12:
                break
            t *= 0.5
        else:
            break  # no improving step: at the (capped) optimum
        beta, f_old, f = np.minimum(beta + t * step, hi), f, fn
        if abs(f - f_old) < 1e-9 * max(1.0, abs(f)):
            break
    return beta


def _mask_code(M: np.ndarray) -> np.ndarray:
    """One integer per row of a boolean matrix (which fields are missing)."""
    code = np.zeros(len(M), np.int64)
    for c in range(M.shape[1]):
        code = (code * 2 + M[:, c]) % (2**61 - 1)
    return code


def _feature_index(names: Sequence[str], column: str, feat: str) -> int:
    key = f"{column}:{feat}"
    try:
        return list(names).index(key)
    except ValueError:
        raise ValueError(f"feature {key!r} missing from the feature matrix (has {list(names)})") from None


def record_share_sums(df: pd.DataFrame, fields: Sequence[Field]) -> tuple[dict[str, float], int]:
    """Per field, the sum over the records of the field's share of the record's words (the
    words of :func:`trustlab.er.kinds.record_text`), and the number of records; empty when
    the fields have no whole-record comparison. Sums add up over partitions of a table
    (:mod:`trustlab.er.distributed`); :meth:`FSModel._fit_record_share` divides by the count."""
    own = record_fields(fields)
    if not any(f.kind == "record" for f in fields) or not own or len(df) == 0:
        return {}, 0
    cnt = np.stack([sum(_chunks.series_distinct(df[c].fillna("").astype(str), lambda p: p.str.count(_WORD))
                        .to_numpy(np.float64)
                        for c in f.columns() if c in df.columns) + np.zeros(len(df)) for f in own], axis=1)
    sh = (cnt / np.maximum(cnt.sum(1, keepdims=True), 1.0)).sum(0)
    return {f.column: float(x) for f, x in zip(own, sh)}, int(len(df))

def _m_step(post, cnt, onehot, cols, m, u, u_weight, u_prior) -> None:
    """The EM's M step for the comparison columns ``cols``, in place: ``m[c]`` from the pairs'
    match posteriors ``post`` (weights ``cnt``, a 1e-3 floor per level), ``u[c]`` from their
    non-match share plus ``u_weight`` pseudo-pairs distributed as ``u_prior[c]``; ``None``
    leaves that side as it is."""
    for c in cols:
        if m is not None:
            mc = (post * cnt) @ onehot[c] + 1e-3
            m[c] = mc / mc.sum()
        if u is not None:
            uc = ((1 - post) * cnt) @ onehot[c] + u_weight * u_prior[c]
            u[c] = uc / uc.sum()


#: rows per piece of :meth:`FSModel.levels` (a few MB of a wide feature matrix: the piece's
#: cache lines are read once for all its fields)
_LEVEL_ROWS = 4096


class FSModel:
    """Fellegi–Sunter model over multi-level comparisons with TF adjustment (EM-fitted).

    Parameters
    ----------
    fields : list of Field
        The compared fields (kinds decide the levels, :data:`~trustlab.er.kinds.COMPARISON_LEVELS`).
    max_iter, tol : EM stopping rule.
    tf : bool
        Term-frequency adjustment of the exact level for name/postcode/exact fields.

    Attributes (after fitting)
    --------------------------
    m_, u_ : ndarray (n_fields, 4)
        P(level | match) and P(level | non-match), levels exact/close/far/else.
    lambda_ : float
        Prior match share among the candidate pairs.
    tf_tables_ : dict column -> {value: frequency}
        Relative frequency of values (those seen at least twice) of TF fields.
    tf_default_ : dict column -> float
        Frequency used for values not in the table (1 / number of records).
    forcing_ : list of list of str
        The fields of each ``key:`` blocking rule (:meth:`set_forcing`).
    key_coef_ : list of float
        The key prior: intercept, then per key rule the log-odds of agreeing on its key,
        then of lacking it (both against keys that differ); empty without key rules.
    tf_centre_ : dict column -> float
        Mean log term frequency over the candidate pairs that agree on a key of this
        TF field (a rare value's deviation from it is kept as evidence).
    random_match_share_ : float
        The share of the random record pairs EM (m fixed) calls matches
        (:meth:`_random_nonmatch_u`); NaN where not fitted by sessions.
    strata_ : dict int -> (float, ndarray (n_fields, 4))
        Blocking strata (:meth:`_fit_strata`): per set of ``key:`` rules agreed on (bit ``r``
        for rule ``r`` of ``forcing_``), the log-odds of a match and the non-match
        probabilities of its pairs; empty unless a session had a single voting field.

    Examples
    --------
    >>> from trustlab.er.comparisons import compare
    >>> from trustlab.er.synthetic import generate_people
    >>> df = generate_people(150, random_state=0)
    >>> fl = [Field("first_name", "name"), Field("surname", "name"), Field("dob", "date")]
    >>> P = np.array([[i, j] for i in range(150) for j in range(i + 1, 150)])
    >>> fm = compare(df, P, fl)
    >>> m = FSModel(fl).fit(df, P, fm, P, fm)
    >>> p = m.predict_proba(df, P, fm)
    >>> same = df["cluster"].to_numpy()[P[:, 0]] == df["cluster"].to_numpy()[P[:, 1]]
    >>> bool(np.mean(p[same] > 0.5) > 0.9 and np.mean(p[~same] > 0.5) < 0.01)
    True
    """

    def __init__(self, fields: Sequence[Field], *, max_iter: int = 200, tol: float = 1e-7, tf: bool = True,
                 u_prior: float = 1000.0, sessions: bool = True):
        self.fields = list(fields)
        self.sessions = bool(sessions)
        self.sessions_: list[dict] = []
        self.u_prior = float(u_prior)
        self.max_iter = int(max_iter)
        self.tol = float(tol)
        self.tf = bool(tf)
        self.m_: np.ndarray | None = None
        self.u_: np.ndarray | None = None
        self.lambda_: float = float("nan")
        self.tf_tables_: dict[str, dict[str, float]] = {}
        self.tf_default_: dict[str, float] = {}
        self.n_iter_ = 0
        self.n_seed_pairs_ = 0
        self.em_pairs_ = 0  # pairs the session EM ran on (a sample where EM_MAX_CELLS binds)
        self.problems_: list[str] = []
        self.drifted_ = False
        self.u_random_: np.ndarray | None = None  # u from random pairs (before any refit on the candidates)
        self.random_match_share_ = float("nan")
        self.forcing_: list[list[str]] = []
        self.key_coef_: list[float] = []
        self.tf_centre_: dict[str, float] = {}
        self.tf_scale_: dict[str, float] = {}
        self.record_share_: dict[str, float] = {}
        self.strata_: dict[int, tuple[float, np.ndarray]] = {}

    # ------------------------------------------------------------------ levels
    def spec(self, f: Field) -> tuple[str, str, float | None, float | None, bool]:
        return KINDS[f.kind].levels

    def levels(self, fm: Any) -> np.ndarray:
        """Level per pair and field: 0 exact, 1 close, 2 far, 3 else, -1 missing."""
        n = fm.X.shape[0]
        G = np.full((n, len(self.fields)), -1, np.int8)
        cols = []
        for f in self.fields:
            ex_name, sim_name, t1, t2, _ = self.spec(f)
            cols.append((_feature_index(fm.names, f.column, ex_name), _feature_index(fm.names, f.column, sim_name),
                         t1, t2))
        # in pieces of rows small enough to stay in cache while every field reads its two
        # columns of them (X is row-major: a whole column at a time reads all of X per
        # column); a signal waits for one piece. Element-wise: the same levels in any pieces
        for a, b in _chunks.spans(n, _LEVEL_ROWS):
            Xp = fm.X[a:b]
            for c, (kx, ks, t1, t2) in enumerate(cols):
                ex, sim = Xp[:, kx], Xp[:, ks]
                ok = ~np.isnan(ex) & ~np.isnan(sim)
                g = np.full(b - a, 3, np.int8)
                if t2 is not None:
                    g[sim >= t2] = 2
                    g[sim >= t1] = 1
                g[ex >= 1.0 - 1e-9] = 0
                G[a:b, c] = np.where(ok, g, -1)
        return G

    def needed_features(self) -> dict:
        """column -> feature names the levels need (for ``compare(..., only=...)``;
        :func:`trustlab.er.kinds.needed_features`)."""
        return needed_features(self.fields)

    def _tf_fields(self) -> list[int]:
        return [c for c, f in enumerate(self.fields) if self.tf and self.spec(f)[4]]

    def fit_tf(self, df: pd.DataFrame) -> "FSModel":
        """Term-frequency tables of the TF fields from the records."""
        n = len(df)
        self.tf_tables_, self.tf_default_ = {}, {}
        for c in self._tf_fields():
            f = self.fields[c]
            k = pd.Series(tf_keys(df, f))
            k = k[k != ""]
            vc = k.value_counts()
            tot = max(1, int(vc.sum()))
            vc = vc[vc >= 2]
            self.tf_tables_[f.column] = {str(v): float(cnt / tot) for v, cnt in vc.items()}
            self.tf_default_[f.column] = 1.0 / max(1, n)
        return self

    def tf_values(self, df: pd.DataFrame, pairs: np.ndarray) -> np.ndarray:
        """Term frequency of the left record's value per pair and field (NaN: no TF)."""
        T = np.empty((len(pairs), len(self.fields)))
        for a, b in _chunks.spans(len(pairs)):  # in pieces of rows: a signal waits for one piece
            T[a:b] = np.nan
        for c in self._tf_fields():
            f = self.fields[c]
            tab = self.tf_tables_.get(f.column)
            if tab is None:
                continue
            keys = pd.Series(tf_keys(df, f))
            freq = keys.map(tab).astype(float).fillna(self.tf_default_[f.column]).to_numpy()
            for a, b in _chunks.spans(len(pairs)):
                T[a:b, c] = freq[pairs[a:b, 0]]
        return T

    # ------------------------------------------------------------------ blocking keys
    def set_forcing(self, rules: Sequence[str] | None) -> "FSModel":
        """Remember the blocking rules that select on agreement: ``key:A`` / ``key:A+B``
        on compared fields (whole normalised values, no prefix). The candidate pairs such
        a rule proposes agree on its fields *because* they were selected, so those fields
        are no evidence of their own among the candidates; whether a pair agrees on each
        rule's key (or misses it) enters the pair's prior instead (see :meth:`fit`)."""
        from trustlab.er.rules import parse_rule

        cols = {f.column for f in self.fields}
        self.forcing_ = []
        for spec in rules or []:
            r = parse_rule(spec)  # a block limit (key:A@50) selects the same way
            if r.kind != "key" or r.option is not None:
                continue
            keys = list(r.columns)
            if keys and all(k in cols for k in keys) and keys not in self.forcing_:
                self.forcing_.append(keys)
        self.forcing_ = self.forcing_[:MAX_KEY_RULES]
        return self

    def key_codes(self, df: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per key rule (:meth:`set_forcing`): each record's key code and whether it has
        the key (every part non-empty after blocking's normalisation)."""
        from trustlab.er.rules import key_codes

        cache: dict[str, pd.Series] = {}
        return [key_codes(df, keys, cache=cache) for keys in self.forcing_]

    def key_states(self, df: pd.DataFrame, pairs: np.ndarray, codes: list | None = None) -> np.ndarray:
        """Per pair, a code of each key rule's state (:meth:`set_forcing`): bit ``r`` set
        when both records have the same non-empty key of rule ``r`` (blocking's
        normalisation), bit ``R + r`` when either record lacks it; neither: the keys differ.
        ``codes``: :meth:`key_codes` of ``df`` (computed when None)."""
        h = np.zeros(len(pairs), np.int64)
        if not self.forcing_ or not len(pairs):
            return h
        codes = self.key_codes(df) if codes is None else codes
        R = len(self.forcing_)
        for r, (code, valid) in enumerate(codes):
            a, b = code[pairs[:, 0]], code[pairs[:, 1]]
            ok = valid[pairs[:, 0]] & valid[pairs[:, 1]]
            h |= (ok & (a == b)).astype(np.int64) << r
            h |= (~ok).astype(np.int64) << (R + r)
        return h

    def _forced(self, h: np.ndarray) -> np.ndarray:
        """Boolean (n_pairs, n_fields): the fields of the key rules a pair agrees on."""
        F = np.zeros((len(h), len(self.fields)), bool)
        cols = {f.column: c for c, f in enumerate(self.fields)}
        for r, keys in enumerate(self.forcing_):
            hit = ((h >> r) & 1).astype(bool)
            for k in keys:
                F[:, cols[k]] |= hit
        return F

    def _key_design(self, h: np.ndarray) -> np.ndarray:
        """Design of the key prior: intercept, one indicator per rule agreed on, one per
        rule a record lacks."""
        R = len(self.forcing_)
        return np.column_stack([np.ones(len(h))] + [((h >> b) & 1).astype(np.float64) for b in range(2 * R)])

    def _prior_logit(self, h: np.ndarray) -> np.ndarray:
        """Log prior odds of a match per pair from its key states (:meth:`key_states`)."""
        if not self.key_coef_:
            return np.full(len(h), math.log(self.lambda_ / (1 - self.lambda_)))
        return self._key_design(h) @ np.asarray(self.key_coef_)

    # ------------------------------------------------------------------ fitting
    def fit(self, df: pd.DataFrame, pairs: np.ndarray, fm: Any, random_pairs: np.ndarray, fm_random: Any, *,
            rules: Sequence[str] | None = None, max_matches: float | None = None,
            sources: np.ndarray | None = None) -> "FSModel":
        """Fit u on random pairs, then m and λ by EM on the candidate ``pairs``.

        ``max_matches`` caps the expected number of matching pairs (two duplicate-free
        tables hold at most as many as the smaller one has records).

        ``sources`` (link mode: the table of each record, pairs only across tables) tells
        the sessions which record pairs could be candidates at all
        (:meth:`_complete_session_pairs`).

        ``fm`` / ``fm_random`` are :class:`~trustlab.er.comparisons.FeatureMatrix` of the
        candidate and the random pairs (from :func:`~trustlab.er.comparisons.compare`).

        ``rules`` are the blocking rules that chose the candidates. Among the candidates a
        ``key:`` rule proposes, its fields agree by construction: with a rule on
        ``publisher+year``, candidate non-matches agree on publisher and year far more
        often than matches do, and estimating u on them makes agreement look like evidence
        *against* a match. So the fields of the key rules a pair agrees on are left out of
        its likelihood (level -1), and the pair's prior log-odds are a logistic function
        of which key rules it agrees on and which keys it lacks (fitted in the M step,
        each agreement's coefficient capped by how rare the agreement is between random
        records). Without key rules (every pair compared, or token / q-gram / sorted
        rules) this is the plain model with one λ.
        """
        n = len(df)
        self.set_forcing(rules)
        self.key_coef_, self.tf_centre_, self.tf_scale_, self.record_share_ = [], {}, {}, {}
        self.strata_ = {}
        self.u_random_ = None
        if n < MIN_RECORDS_EM:
            return self._fit_prior(n)
        self.fit_tf(df)
        self._fit_record_share(df)
        G = self._em_levels(self.levels(fm))
        Gr = self._em_levels(self.levels(fm_random))
        d = G.shape[1]
        u = self._random_u(Gr)
        u_rand = u.copy()
        self.u_random_ = u_rand
        npairs = G.shape[0]
        n_all = n * (n - 1) / 2.0
        frac = min(1.0, npairs / max(1.0, n_all))
        if self.sessions:
            return self._fit_by_sessions(G, u, n, n_all, df, pairs, max_matches, sources=sources, Gr=Gr)
        # key states: fields of the key rules a pair agrees on carry no evidence (level -1)
        kc = self.key_codes(df) if self.forcing_ else []
        h = self.key_states(df, pairs, kc)
        hv, hk = np.unique(h, return_inverse=True)
        hk = hk.ravel()
        nh = len(hv)
        Gf = np.where(self._forced(h), np.int8(-1), G)
        Gu, inv = _distinct_rows_inverse(np.column_stack([Gf, hk]) if nh > 1 else Gf)
        cnt = np.bincount(inv, minlength=len(Gu)).astype(np.float64)
        if nh > 1:
            gk, Gu = Gu[:, -1].astype(np.int64), np.ascontiguousarray(Gu[:, :-1])
        else:
            gk = np.zeros(len(Gu), np.int64)
        Hb = self._key_design(hv)
        R = len(self.forcing_)
        Fu = self._forced(hv[gk]) if len(Gu) else np.zeros((0, d), bool)
        onehot = [np.stack([(Gu[:, c] == k) for k in range(_L)], axis=1).astype(np.float64) for c in range(d)]
        # non-matches agree on several fields together more often than independence says
        # (neighbours share a street and a city); with every pair a candidate, the random
        # pairs measure it per level pattern
        logr = self._dependence(Gu, Gr, u) if frac >= 1.0 else np.zeros(len(Gu))
        # deterministic seed: exact agreements (key agreements included) jointly rarer
        # than 1 / (number of record pairs)
        rare = -np.log(u[:, 0])
        score = (((Gu == 0) | Fu) * rare[None, :]).sum(1)
        seed = score >= math.log(max(2.0, n_all))
        self.n_seed_pairs_ = int(cnt[seed].sum())
        n_h = np.bincount(gk, weights=cnt, minlength=nh)
        s_h = np.bincount(gk, weights=cnt * seed, minlength=nh)
        # cap on the coefficient of agreeing on a rule's key (against keys that differ):
        # log(m / u) - log((1 - m) / (1 - u)), u = the share of random pairs that agree on
        # it, m = the share of clear duplicates (the seed) that do, both among pairs where
        # both records have the key; without clear duplicates (m = 0) a key that
        # look-alikes share (a first name) cannot make its pairs matches on its own
        hr = self.key_states(df, random_pairs, kc) if len(random_pairs) else np.zeros(0, np.int64)
        upper = np.full(2 * R, np.inf)
        for r in range(R):
            pres_r = ((hr >> (R + r)) & 1) == 0
            u_key = max(float(((hr[pres_r] >> r) & 1).mean()) if pres_r.any() else 1.0, 0.5 / max(1, len(hr)))
            pres_s = Hb[:, 1 + R + r] == 0
            m_key = min(float(Hb[pres_s, 1 + r] @ s_h[pres_s]) / max(1.0, float(s_h[pres_s].sum())), 0.999)
            upper[r] = math.log(u_key ** -1 * (1 - u_key) / (1 - m_key)) if u_key < 1 else 0.0
        if self.n_seed_pairs_ >= 2:
            m = np.stack(
                [
                    np.bincount(
                        Gu[seed & (Gu[:, c] >= 0), c].astype(np.int64),
                        weights=cnt[seed & (Gu[:, c] >= 0)],
                        minlength=_L,
                    )
                    + 0.5
                    for c in range(d)
                ]
            ).astype(np.float64)
            lam = float(np.clip(self.n_seed_pairs_ / max(1.0, cnt.sum()), 1e-6, 0.5))
            beta = _key_logit(Hb, n_h, s_h, lam, upper=upper) if R else None
        else:
            m = np.tile(np.array([0.7, 0.2, 0.07, 0.03]), (d, 1))
            lam = 1e-3
            beta = np.r_[math.log(lam / (1 - lam)), np.zeros(Hb.shape[1] - 1)] if R else None
        m /= m.sum(1, keepdims=True)
        nu = Gu.shape[0]
        # how much the candidates look like random pairs: all pairs -> u stays the
        # random-pair estimate; strict blocking -> u follows the candidate non-matches
        prior = max(self.u_prior, 10.0 * npairs * frac)
        prev = -np.inf
        it = 0
        post = np.zeros(nu)
        for it in range(self.max_iter):
            if beta is not None:
                lw = np.clip(Hb @ beta, -30, 30)[gk] - logr
            else:
                lw = np.full(nu, math.log(lam / (1 - lam))) - logr
            for c in range(d):
                lw += onehot[c] @ (np.log(m[c]) - np.log(u[c]))
            post = 1.0 / (1.0 + np.exp(-np.clip(lw, -50, 50)))
            if npairs:
                lam = float(np.clip((post * cnt).sum() / npairs, 1e-9, 1 - 1e-9))
                if beta is not None:
                    # a few Newton steps from the last coefficients (an ECM step)
                    beta = _key_logit(Hb, n_h, np.bincount(gk, weights=post * cnt, minlength=nh), lam, beta,
                                      upper=upper, max_iter=5)
            # u: the candidate non-matches (blocking makes them more alike than random
            # pairs), shrunk towards the random-pair estimate
            _m_step(post, cnt, onehot, range(d), m, u, prior, u_rand)
            ll = float(np.sum(cnt * np.logaddexp(0, lw)))
            if abs(ll - prev) < self.tol * max(1.0, abs(ll)):
                break
            prev = ll
        self._set_tf_scale(u_rand, u)
        self.m_, self.u_, self.lambda_ = m, u, lam
        if beta is not None:
            self.key_coef_ = [float(b) for b in beta]
            # a rare value still says more than a common one: forced TF fields keep their
            # deviation from the average forced agreement (field_weights)
            F = self._forced(h)
            T = self.tf_values(df, pairs)
            for c in self._tf_fields():
                sel = F[:, c] & ~np.isnan(T[:, c])
                if sel.any():
                    self.tf_centre_[self.fields[c].column] = float(np.mean(np.log(np.maximum(T[sel, c], 1e-12))))
        self.n_iter_ = it + 1
        self.problems_ = self._diagnose(np.repeat(post, cnt.astype(np.int64)), npairs, n)
        return self

    def _fit_record_share(self, df: pd.DataFrame) -> None:
        """Each field's share of the whole record's words (mean over the records), the
        overlap :meth:`_record_beyond_fields` takes off the record's weight."""
        sums, n = record_share_sums(df, self.fields)
        self.record_share_ = {k: v / n for k, v in sums.items() if v > 0} if n else {}

    def _set_tf_scale(self, u_rand: np.ndarray, u: np.ndarray) -> None:
        """How much more often the candidate non-matches agree exactly on each TF field than
        random pairs do (``u`` refitted on the candidates over the random-pair ``u``). A
        value's term frequency is its chance of agreement between *random* records; once u
        follows the candidates (blocked on the brand: half of them share one), the TF weight
        of an exact agreement is divided by the same factor, so a rare brand that blocking
        made every candidate share is not counted as rare again.

        :meth:`_fit_by_sessions` passes the random pairs' non-match u (:meth:`_random_nonmatch_u`)
        instead where that correction applies (random pairs hold at least
        :data:`RANDOM_MATCH_SHARE` matches): there the candidate refit's non-matches include a
        large entity's pairs that look alike on nothing but the name, and the scale says how
        much rarer a value's agreement is between non-matches than between random records
        (heuristic: blocking's own selection is then not counted)."""
        self.tf_scale_ = {self.fields[c].column: float(u[c, 0] / u_rand[c, 0]) for c in self._tf_fields()
                          if u_rand[c, 0] > 0 and u[c, 0] / u_rand[c, 0] != 1.0}

    def fit_from_counts(self, level_rows: np.ndarray, counts: np.ndarray, random_levels: np.ndarray, n: int, *,
                        tf_tables: dict, tf_default: dict, rules: Sequence[str] | None = None,
                        max_matches: float | None = None, record_share: dict | None = None) -> "FSModel":
        """:meth:`fit` from sufficient statistics: the distinct comparison level rows of the
        candidate pairs (``level_rows``, as :func:`_distinct_rows_inverse` orders them) and
        how many pairs show each (``counts``), the levels of the random pairs, the number of
        records ``n`` and the term-frequency tables of the whole table. The same model as
        :meth:`fit` on the pairs (session EM), with memory that depends on the number of
        distinct level rows rather than of pairs; :mod:`trustlab.er.distributed` sums the
        counts over the workers' partitions of the pair stream; ``record_share`` is
        :meth:`_fit_record_share`'s result on the whole table. The counts hold no record
        values, so the sessions here use every pair that agrees on their field (the local fit
        leaves out the values blocking proposed only in part, :meth:`_complete_session_pairs`):
        the two differ where a session field's blocks were purged."""
        self.set_forcing(rules)
        self.key_coef_, self.tf_centre_, self.tf_scale_ = [], {}, {}
        self.strata_ = {}
        self.u_random_ = None
        self.record_share_ = {str(k): float(v) for k, v in (record_share or {}).items()}
        if n < MIN_RECORDS_EM:
            return self._fit_prior(n)
        self.tf_tables_ = {k: dict(v) for k, v in tf_tables.items()}
        self.tf_default_ = dict(tf_default)
        Gr = self._em_levels(np.asarray(random_levels))
        u = self._random_u(Gr)
        rows, counts = np.asarray(level_rows), np.asarray(counts, np.float64)
        if self._neighbour_fields():  # the folded rows, distinct again, their counts summed
            rows, inv = _distinct_rows_inverse(self._em_levels(rows))
            counts = np.bincount(inv.ravel(), weights=counts, minlength=len(rows))
        return self._fit_by_sessions(None, u, n, n * (n - 1) / 2.0, None, None, max_matches,
                                     counts=(rows, counts), Gr=Gr)

    def _neighbour_fields(self) -> list[int]:
        """The fields whose *far* level is set, not fitted (:meth:`level_bayes_factors`)."""
        return [c for c, f in enumerate(self.fields) if f.kind in ("model", "codes")]

    def _em_levels(self, G: np.ndarray) -> np.ndarray:
        """The levels EM sees: the *far* level of ``model`` and ``codes`` fields
        (neighbouring model numbers) counted as *else*, so that EM neither fits it nor lets
        it vote (pairs with neighbouring codes agree on the rest, and EM would call them
        matches)."""
        cols = self._neighbour_fields()
        if not cols or not len(G):
            return G
        G = G.copy()
        for c in cols:
            g = G[:, c]
            g[g == 2] = 3
        return G

    def _random_u(self, Gr: np.ndarray) -> np.ndarray:
        """u per field and level from the random pairs' levels (0.5 added to every count)."""
        d = len(self.fields)
        u = np.stack([np.bincount(Gr[Gr[:, c] >= 0, c].astype(np.int64), minlength=_L) + 0.5 for c in range(d)])
        u = u.astype(np.float64)
        return u / u.sum(1, keepdims=True)

    def _session_em(self, Gu: np.ndarray, cnt: np.ndarray, u: np.ndarray, free: np.ndarray,
                    m0: np.ndarray, lam0: float, *, fit_m: bool = True, fit_u: bool = False,
                    u_pseudo: float = 0.0, lam_max: float = 1.0,
                    passive: np.ndarray | None = None,
                    combine: bool = False,
                    lam_prior: tuple[float, float] | None = None) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        """EM on distinct level rows ``Gu`` (weights ``cnt``) over the fields ``free``, with u
        fixed (``fit_u``: re-estimated on the rows' non-matches, shrunk towards the given u by
        ``u_pseudo`` pseudo-pairs); λ (at most ``lam_max``) is the match share of the rows;
        ``passive`` fields get their m estimated without voting on the posterior; ``combine``
        scores rows as :meth:`field_weights` does (the record beyond the fields); ``lam_prior``
        ``(a, pi)``: a beta prior on λ, ``a`` pseudo-pairs at the share ``pi``. Returns m, λ, u
        and the posterior per row."""
        d = Gu.shape[1]
        m = m0.copy()
        u0, u = u, u.copy()
        lam = lam0
        npairs = float(cnt.sum())
        onehot = [np.stack([(Gu[:, c] == k) for k in range(_L)], axis=1).astype(np.float64) for c in range(d)]
        post = np.zeros(len(Gu))
        prev = -np.inf
        vote = np.flatnonzero(free if passive is None else free & ~passive)
        for _ in range(self.max_iter):
            Wr = np.zeros((len(Gu), d))
            for c in vote:
                Wr[:, c] = onehot[c] @ (np.log(m[c]) - np.log(u[c]))
            if combine:
                Wr = self._record_beyond_fields(Wr)
            lw = math.log(lam / (1 - lam)) + Wr.sum(1)
            post = 1.0 / (1.0 + np.exp(-np.clip(lw, -50, 50)))
            a_p, pi = (0.0, 0.0) if lam_prior is None else lam_prior
            lam = float(np.clip(((post * cnt).sum() + a_p * pi) / max(npairs + a_p, 1.0), 1e-12,
                                min(1 - 1e-9, lam_max)))
            _m_step(post, cnt, onehot, np.flatnonzero(free), m if fit_m else None, u if fit_u else None,
                    u_pseudo, u0)
            ll = float(np.sum(cnt * np.logaddexp(0, lw)))
            if abs(ll - prev) < self.tol * max(1.0, abs(ll)):
                break
            prev = ll
        return m, lam, u, post

    def _fit_by_sessions(self, G: np.ndarray | None, u: np.ndarray, n: int, n_all: float, df: pd.DataFrame | None,
                         pairs: np.ndarray | None, max_matches: float | None = None,
                         counts: tuple[np.ndarray, np.ndarray] | None = None,
                         sources: np.ndarray | None = None, Gr: np.ndarray | None = None) -> "FSModel":
        """m per field from EM *sessions*, λ as the match share of all record pairs.

        Splink's training scheme: within the pairs that agree exactly on one identifying
        field (a session), that field says nothing more, and EM on the *other* fields
        (u fixed from random pairs, the session's own match share free) estimates their
        m-probabilities. Each field's m is the mean over the sessions where it was free,
        so no single field defines the match class: pairs that share an address but not
        a name are non-matches in the address session, and the name's m says so. The pairs
        that share a rare code (``Field("#", "codes")``) are a session too (``FieldKind.session``). A field
        that is never free (the only identifying one) keeps the m of a plain EM over all
        candidates. λ is then the share of matches among *all* record pairs (the
        candidates' posterior mass over n(n-1)/2, the others counted as non-matches),
        consistent with u from random pairs, so blocking does not change the odds.

        With the pairs and records at hand, the session of a field that a ``key:`` rule blocks
        on alone leaves out the values whose pairs that rule proposed only in part (a purged
        block, :meth:`_complete_session_pairs`); a field without such a rule keeps its whole
        session (the other rules' selection is all of it).

        Where a session has a single voting field (a table of two identifying fields), its EM
        is not identified, and a key agreement is weighed by its blocking stratum's own match
        share and u instead (:meth:`_fit_strata`, a heuristic kept to that case).

        ``Gr``: the random pairs' levels (as EM sees them). Where EM with the sessions' m calls
        at least :data:`RANDOM_MATCH_SHARE` of them matches (a few large entities), u is their
        non-match estimate (:meth:`_random_nonmatch_u`) and the sessions run again with it, so
        that a field whose values one large entity holds can open a session; the random-pair u
        (``u_random_``, the TF scale's and the strata's reference) is unchanged. There the TF
        scale (:meth:`_set_tf_scale`) is that non-match u over the random-pair u, not the
        candidate refit's u over it (patent: 0.60 instead of 5.8 for the name; F1 0.189 ->
        0.259, pv_inventors 0.569 -> 0.642; stop 49).
        """
        if counts is None:  # on a sample of the pairs where their distinct rows are too many (EM_MAX_CELLS)
            Gu, cnt, sample = _em_rows(G)
            self.em_pairs_ = len(G) if sample is None else int(sample.sum())
        else:  # the distinct level rows and their counts, aggregated elsewhere (fit_from_counts)
            Gu, cnt = counts
            sample = None
            self.em_pairs_ = int(round(float(cnt.sum())))
        d = Gu.shape[1]
        u_rand = u.copy()
        self.u_random_ = u_rand
        npairs = float(cnt.sum())
        m = self._session_m(Gu, cnt, u, G, df, pairs, sample, sources, max_matches, n)
        self.random_match_share_ = float("nan")
        if Gr is not None and len(Gr):
            # random pairs are not all non-matches where a few entities hold much of the table
            # (patent: one company's 292 records spelled alike, 10 % of random pairs matches,
            # random-pair u(name exact) 0.031 against ~0 among non-matches): u from their
            # non-match posteriors, and the sessions again with it (a field may now open one)
            u_nm, self.random_match_share_ = self._random_nonmatch_u(Gr, m, u_rand, n)
            if self.random_match_share_ >= RANDOM_MATCH_SHARE:
                m = self._session_m(Gu, cnt, u_nm, G, df, pairs, sample, sources, max_matches, n,
                                    confident=(self.random_match_share_, m))
                u, _ = self._random_nonmatch_u(Gr, m, u_rand, n)
        # the TF scale's reference where the random pairs hold many matches: their non-match u
        # (below); elsewhere the candidate refit's u, as before
        u_tf = u.copy() if self.random_match_share_ >= RANDOM_MATCH_SHARE else None

        # u: the candidate non-matches (blocking makes them more alike than random pairs:
        # same brand, shared title words), shrunk towards the random-pair estimate by how
        # random the candidates are (every pair a candidate: u stays the random-pair u)
        frac = min(1.0, npairs / max(1.0, n_all))
        lam_max = 1.0 if max_matches is None else max(max_matches, 1.0) / max(npairs, 1.0)
        # λ first with the random-pair u (its non-match estimate where corrected; no feedback), then
        # u follows the non-matches
        _, lam, _, _ = self._session_em(Gu, cnt, u, np.ones(d, bool), m, 1.0 / max(n, 2),
                                        fit_m=False, lam_max=lam_max, combine=True)
        _, lam, u, post = self._session_em(Gu, cnt, u, np.ones(d, bool), m, lam,
                                           fit_m=False, fit_u=True, u_pseudo=max(self.u_prior, 10.0 * npairs * frac),
                                           lam_max=lam_max, combine=True)
        # where a few large entities hold many random pairs, the candidates' non-match posterior
        # is wrong in the same way the random pairs' was: the sessions' match class is pairs that
        # look alike, so a large entity's pairs that agree only on its name count as non-matches,
        # and the refit's u(name exact) measures that entity, not blocking's selection (patent:
        # 0.173 against 0.031 for random pairs and ~0 among the true non-matches; the TF scale
        # 5.8 took 1.8 nats off every exact name). The TF weights are then scaled by the random
        # pairs' non-match share instead (u_nm / u_rand, 0.60 there); m, u and λ are unchanged
        self._set_tf_scale(u_rand, u if u_tf is None else u_tf)
        self.m_, self.u_, self.lambda_ = m, u, lam
        self.n_iter_ = 1
        self.key_coef_, self.tf_centre_, self.strata_ = [], {}, {}
        # one voting field in a session (a table of two identifying fields, names only): its EM
        # is not identified (with u fixed, a ridge of (λ, m) fits the session's counts; stop 44),
        # so the m of the key fields, which the pooled weights of a key agreement rest on, are
        # unreliable; blocking strata weigh a key agreement by the stratum's match share instead
        if (G is not None and df is not None and pairs is not None and self.forcing_
                and any(s.get("voters") == 1 for s in self.sessions_)):
            self._fit_strata(G, sample, df, pairs, u_rand, lam)
        if not self.strata_:
            self.forcing_ = []
        rare = -np.log(u[:, 0])
        self.n_seed_pairs_ = int(cnt[((Gu == 0) * rare[None, :]).sum(1) >= math.log(max(2.0, n_all))].sum())
        self.problems_ = self._diagnose(post, int(npairs), n, weights=cnt)
        return self

    def _session_m(self, Gu: np.ndarray, cnt: np.ndarray, u: np.ndarray, G: np.ndarray | None,
                   df: pd.DataFrame | None, pairs: np.ndarray | None, sample: np.ndarray | None,
                   sources: np.ndarray | None, max_matches: float | None, n: int,
                   confident: tuple[float, np.ndarray] | None = None) -> np.ndarray:
        """m per field from the EM sessions with the non-match probabilities ``u``
        (:meth:`_fit_by_sessions`, whose arguments these are; ``Gu``, ``cnt``: the distinct
        candidate level rows and their counts, ``sample`` the EM's sample of the pairs);
        sets ``sessions_``. ``confident``: ``(λ_r, m)``, the random pairs' match share and the
        previous pass's m, where that share reached :data:`RANDOM_MATCH_SHARE`: a TF field's
        session may then take its m from the pairs its value alone makes matches
        (:meth:`_confident_session_m`; the local fit only, it needs the records)."""
        d = Gu.shape[1]
        npairs = float(cnt.sum())
        m_init = np.tile(np.array([0.7, 0.2, 0.07, 0.03]), (d, 1))
        # the whole-record comparisons (record, codes) are passive in another field's session
        # (their m is estimated on the session's matches, they do not vote on them): pairs
        # that agree on the whole record agree on every field, and the record-level
        # similarity would decide a session's match class alone, so the fields' m would come
        # out with no disagreement at all. The record opens no session either; the codes do
        # (FieldKind.session): pairs that share a rare model number are a session in which a
        # product title, the only identifying field of a table of products, is free (before,
        # its m came from the plain EM below, whose match class the shared codes decided,
        # accessories included: on walmart_amazon with its model numbers in the titles,
        # title and price F1 0.333 -> 0.436, title only 0.347 -> 0.445; stop 41)
        # (the numbers inside the text vote: they are what the record's words compare least)
        derived = np.array([KINDS[f.kind].derived and f.kind != "numbers" for f in self.fields], bool)
        opens = np.array([KINDS[f.kind].session for f in self.fields], bool)
        ident = np.flatnonzero((u[:, 0] < SESSION_U) & opens)
        numbers_free = np.array([f.kind != "numbers" for f in self.fields], bool)
        sums = np.zeros((d, _L))
        hits = np.zeros(d)
        self.sessions_ = []
        tf_fields = set(self._tf_fields())
        for c in ident:
            rows = Gu[:, c] == 0
            Gs, cs = Gu[rows], cnt[rows]
            smask = None if G is None else G[:, c] == 0  # the session's pairs, one by one
            if G is not None and df is not None and pairs is not None and [self.fields[c].column] in self.forcing_:
                # a field with a key rule of its own: only the values whose pairs that rule
                # proposed (mostly) in full (_complete_session_pairs); a field without one keeps
                # its whole session (the other rules' selection is all of it)
                keep = self._complete_session_pairs(df, pairs, G, c, sources)
                smask = keep.copy()
                if sample is not None:  # the EM's sample of a wide table (EM_MAX_CELLS), counted as there
                    keep &= sample
                Gs, cs = _counted_rows(G, keep, sample)
            n_s = float(cs.sum())
            if n_s < MIN_SESSION_PAIRS:
                continue
            free = np.ones(d, bool)
            free[c] = False
            if self.fields[c].kind in _FREE_TEXT_KINDS:
                # the numbers inside the text are part of the session's field: its exact agreement
                # is theirs, so their m would come out with no disagreement at all
                free &= numbers_free
            free &= (Gs >= 0).any(0)
            if not free.any():
                continue
            m_s, lam_s, u_s, _ = self._session_em(Gs, cs, u, free, m_init, 0.3, fit_u=True,
                                                  u_pseudo=SESSION_U_PSEUDO, passive=derived)
            exp_matches = lam_s * n_s
            self.sessions_.append({"field": self.fields[c].column, "pairs": int(n_s), "lambda": lam_s,
                                   "voters": int((free & ~derived).sum())})
            if confident is not None and smask is not None and df is not None and pairs is not None \
                    and c in tf_fields:
                got = self._confident_session_m(c, G, df, pairs, smask, free, free & ~derived, confident,
                                                (m_s, lam_s, u_s))
                if got is not None:
                    m_s, n_conf = got
                    self.sessions_[-1]["confident"] = n_conf
            if exp_matches < 1.0:
                continue
            if max_matches is not None and exp_matches > max(max_matches, 1.0):
                # more matches than the tables can hold (duplicate-free tables: at most one
                # per record of the smaller one): the session's "matches" are look-alikes
                # that share the session's field (same brand), not duplicates; its m would
                # describe them
                self.sessions_[-1]["ignored"] = "more matches than the tables can hold"
                continue
            sums[free] += m_s[free]
            hits[free] += 1
        # plain EM over all candidates for the fields no session could estimate
        lam0 = float(np.clip(n / max(npairs, 1.0), 1e-6, 0.5))
        m_all, _, _, _ = self._session_em(Gu, cnt, u, np.ones(d, bool), m_init, lam0)
        m = np.where(hits[:, None] > 0, sums / np.maximum(hits, 1)[:, None], m_all)
        # the whole-record comparisons are no veto: their m comes from session matches, which
        # agree on a whole field and so resemble each other more than duplicates at large
        m = np.maximum(m, np.where(derived, DERIVED_M_FLOOR, 1e-6)[:, None])
        m /= m.sum(1, keepdims=True)
        return m

    def _confident_session_m(self, c: int, G: np.ndarray, df: pd.DataFrame, pairs: np.ndarray,
                             smask: np.ndarray, free: np.ndarray, vote: np.ndarray,
                             confident: tuple[float, np.ndarray],
                             em: tuple[np.ndarray, float, np.ndarray]) -> tuple[np.ndarray, int] | None:
        """The m of field ``c``'s session from the pairs its value alone makes matches, where
        the session's EM calls most of them non-matches; ``None`` where it does not apply.

        Where a few large entities hold many random pairs (:meth:`_fit_by_sessions`, λ_r =
        ``confident[0]`` >= :data:`RANDOM_MATCH_SHARE`), the session's EM (u refitted on its
        non-matches) takes the pairs that look alike on every field for its match class: on
        ``patent`` it calls 7 % of the 45,274 same-name pairs matches where all are, so the
        classes and codes, which vary inside one company, come out with m(else) 0.16 / 0.06
        (the truth among candidate matches 0.53 / 0.32). A session pair sharing a value held by
        a share ``t`` of the records (the TF table) is a match on that agreement alone with
        odds λ_r · m_c(exact) / ((1 - λ_r) · t) (m from the previous pass, ``confident[1]``;
        ``t`` is the value's chance agreement between random records, not scaled). Pairs at
        probability >= :data:`CONFIDENT_MATCH` are *confident* (patent: companies of 2–4
        records under a name of their own, their classes as varied as the large companies');
        if there are at least :data:`MIN_SESSION_PAIRS` of them, the session's EM (``em``:
        its m, λ and u; ``vote`` the fields that voted) gives them a mean match posterior
        below :data:`CONFIDENT_EM_AGREEMENT`, and their *else* levels (summed over the ``free``
        fields) are more frequent than in the EM's m, the session's m for those fields is their
        level shares (1e-3 added to each level's count, as the EM's M step does): λ = 1 on
        them. Heuristic: it trusts the value frequencies and λ_r, and it is applied only in
        the λ_r-gated pass, so elsewhere the fit is unchanged; the distributed fit (counts,
        no values) does not apply it.

        Examples
        --------
        >>> fm = FSModel([Field("name", "name"), Field("klass", "string")])
        >>> df = pd.DataFrame({"name": ["acme", "acme", "bolt", "bolt"], "klass": ["x", "y", "z", "z"]})
        >>> _ = fm.fit_tf(df)
        >>> G = np.array([[0, 3], [0, 0]], np.int8)  # acme's records disagree on the class
        >>> em = (np.array([[0.7, 0.2, 0.07, 0.03], [0.9, 0.05, 0.03, 0.02]]), 0.5, np.full((2, 4), 0.25))
        >>> args = (0, G, df, np.array([[0, 1], [2, 3]]), np.ones(2, bool), np.array([False, True]),
        ...         np.array([False, True]))
        >>> fm._confident_session_m(*args, (0.5, em[0]), em) is None  # fewer than MIN_SESSION_PAIRS
        True
        """
        sel = np.flatnonzero(smask)
        lam_r, m_prev = confident
        if len(sel) < MIN_SESSION_PAIRS or not 0.0 < lam_r < 1.0:
            return None
        t = self.tf_values(df, pairs[sel])[:, c]
        logit = math.log(lam_r / (1 - lam_r)) + math.log(max(float(m_prev[c, 0]), 1e-12)) \
            - np.log(np.maximum(np.nan_to_num(t, nan=1.0), 1e-12))
        ok = ~np.isnan(t) & (logit >= math.log(CONFIDENT_MATCH / (1 - CONFIDENT_MATCH)))
        if int(ok.sum()) < MIN_SESSION_PAIRS:
            return None
        Gc = G[sel[ok]]
        m_s, lam_s, u_s = em
        lw = np.full(len(Gc), math.log(max(lam_s, 1e-12) / max(1 - lam_s, 1e-12)))
        for f in np.flatnonzero(vote):
            g = Gc[:, f]
            have = g >= 0
            lw[have] += np.log(m_s[f, g[have]]) - np.log(u_s[f, g[have]])
        if float(np.mean(_expit(lw))) >= CONFIDENT_EM_AGREEMENT:
            return None
        m = m_s.copy()
        for f in np.flatnonzero(free):
            g = Gc[:, f]
            mc = np.bincount(g[g >= 0].astype(np.int64), minlength=_L) + 1e-3
            m[f] = mc / mc.sum()
        # the premise is a match class narrower than the entities (look-alikes): its m disagrees
        # less than the confident pairs do; where the confident pairs agree more, it is not that
        fr = np.flatnonzero(free)
        if float(m[fr, _L - 1].sum()) <= float(m_s[fr, _L - 1].sum()):
            return None
        return m, int(ok.sum())

    def _random_nonmatch_u(self, Gr: np.ndarray, m: np.ndarray, u_rand: np.ndarray, n: int) -> tuple[np.ndarray, float]:
        """u from the random record pairs that are not matches, and the share that are.

        The random-pair u (:meth:`_random_u`) counts every random pair as a non-match; where a
        few entities hold much of the table, many random pairs are matches, and a value only one
        large entity holds looks common (patent: one company's name on 292 of 2,379 records).
        EM on the random pairs' levels ``Gr`` with m fixed (the sessions' ``m``) estimates
        their match share λ_r and u on their non-match posteriors: ``u = Σ (1 - p_i) 1[level_i]
        / Σ (1 - p_i)``, each level's count smoothed by 0.5 as the random-pair u is (during the
        EM, one pseudo-pair at ``u_rand``; on a sample of the pairs where their distinct rows hold more
        than :data:`EM_MAX_CELLS` cells, :func:`_em_rows`). The random pairs are a uniform sample of all record
        pairs, so this is the EM's own estimate of u, not a selection; it is used only where
        λ_r reaches :data:`RANDOM_MATCH_SHARE` (:meth:`_fit_by_sessions`). Heuristic guard: m
        is the sessions' (a match class that agrees more than a large entity's records do
        finds fewer matches among them than there are), and below that share the correction
        moves only levels seen in a few random pairs (the close whole records of RLdata500's
        17 duplicate pairs among 50,000: F1 0.952 -> 0.926 when applied there).

        Examples
        --------
        >>> fm = FSModel([Field("a", "name"), Field("b", "name")])
        >>> m = np.array([[0.9, 0.05, 0.03, 0.02], [0.9, 0.05, 0.03, 0.02]])
        >>> Gr = np.array([[0, 0]] * 50 + [[3, 3]] * 900 + [[0, 3]] * 25 + [[3, 0]] * 25, np.int8)
        >>> u_rand = fm._random_u(Gr)
        >>> u, share = fm._random_nonmatch_u(Gr, m, u_rand, 100)
        >>> round(share, 2), bool(u[0, 0] < u_rand[0, 0] / 2)  # the pairs agreeing on both: matches
        (0.05, True)
        """
        Gu, cnt, _ = _em_rows(Gr)  # a sample of the pairs where their distinct rows are too many, as for the candidates
        d = Gu.shape[1]
        _, lam_r, _, post = self._session_em(Gu, cnt, u_rand, np.ones(d, bool), m, 1.0 / max(n, 2), fit_m=False,
                                             fit_u=True, u_pseudo=1.0, combine=True)
        u = np.stack([((1 - post) * cnt) @ np.stack([(Gu[:, c] == k) for k in range(_L)], axis=1) + 0.5
                      for c in range(d)])
        return u / u.sum(1, keepdims=True), float(lam_r)

    def _agreed_keys(self, df: pd.DataFrame, pairs: np.ndarray) -> np.ndarray:
        """Per pair, the bits of the key rules whose key both records share (:meth:`key_states`
        without the bits of a missing key): the pair's blocking stratum."""
        return self.key_states(df, pairs) & ((1 << len(self.forcing_)) - 1)

    def _fit_strata(self, G: np.ndarray, sample: np.ndarray | None, df: pd.DataFrame, pairs: np.ndarray,
                    u_rand: np.ndarray, lam: float) -> None:
        """The match share and u per blocking stratum (the set of ``key:`` rules whose key a
        candidate pair shares), m fixed at the sessions' estimate (``m_``; ``u_`` and λ ``lam``
        are the pooled model's, ``u_rand`` the random-pair u).

        The candidates are a union of blocks: pairs that share a last name (their first names
        are as unrelated as random records') and pairs that share a first name or one of its
        words (their first names agree by selection). One u over all candidates mixes them, so
        a close first name says little even for a pair found by its last name, among whose
        non-matches it is rare (inventors_ens: first-name u(close) 0.424 pooled, 0.007 among
        random pairs). Within a stratum the agreed key fields say nothing of their own (level
        missing); the stratum's match share carries them. A stratum's u is the random-pair u for
        a field of its own (among the non-matches of a block on other fields it agrees as
        between random records: the model's conditional independence), and for a whole-record
        comparison, which holds the agreed key fields' words, one M step on the pooled model's
        non-match posteriors of its pairs (no feedback), shrunk towards the random-pair u by
        :data:`STRATUM_U_PSEUDO` pseudo-pairs. A stratum is also the keys its pairs do *not*
        share: a pair that does not share a one-field key cannot agree exactly on that field
        (nor on the whole record holding its words), so there m and u of those fields are
        conditioned on the levels below *exact* (:meth:`_stratum_bayes_factors`; with the
        global m, which puts most of a match's mass on *exact*, a stratum's close last names
        were explained as non-matches: febrl3 given name and surname only, 0.636 -> 0.496 with
        the unconditioned strata, 0.683 conditioned; stop 46). The share λ_s is then fitted by
        EM with those m and u_s fixed, under a beta prior of :data:`STRATUM_LAMBDA_PSEUDO`
        pseudo-pairs at the pooled model's mean match probability in the stratum. Strata of
        fewer than :data:`MIN_SESSION_PAIRS` pairs, with no field left to vote, or agreeing on
        no key keep the pooled model. Sets ``strata_`` {agreed-key bits: (log-odds of a match,
        u_s)} and ``tf_centre_``. A local fit only: :meth:`fit_from_counts` (the distributed
        fit) has level counts, not pairs, and keeps the pooled model.

        Heuristic, used only where a session had a single voting field (:meth:`_fit_by_sessions`):
        m is the pooled one (conditioned as above), but a stratum's matches can be selected in
        other ways (a household stratum's matches are those whose names are mistyped); on files
        with several voters per session the pooled key-field weights did better (stop 44:
        census_cis -0.008, pv_inventors -0.074 when applied everywhere). The random-pair u of a
        field assumes its stratum's blocks were proposed whole; where blocking purged a large
        block, the stratum's pairs are the other rules' selection and agree on that field more
        often than random pairs.
        """
        h = self._agreed_keys(df, pairs)
        hv, hk = np.unique(h, return_inverse=True)
        hk = hk.ravel()
        # distinct (levels, stratum) rows of the pairs (of the EM's sample where it has one)
        rows = np.column_stack([G, hk]) if sample is None else np.column_stack([G[sample], hk[sample]])
        Gk, inv = _distinct_rows_inverse(rows)
        n_k = np.bincount(inv, minlength=len(Gk)).astype(np.float64)
        kk = Gk[:, -1].astype(np.int64)
        Gk = Gk[:, :-1]
        # the pooled model's match probability of each row (a stratum's prior share, and the
        # non-match posteriors the u_s of its whole-record comparison is counted on); the EM's
        # levels (no neighbouring-code level) and no TF, as the EM saw them
        Wk = self.level_weights(Gk, np.full(Gk.shape, np.nan))
        post_k = 1.0 / (1.0 + np.exp(-np.clip(math.log(lam / (1 - lam)) + Wk.sum(1), -50, 50)))
        # the agreed key fields out (level missing): distinct (levels, stratum) rows again
        Gf = np.where(self._forced(hv[kk]), -1, Gk)
        Gs_all, inv = _distinct_rows_inverse(np.column_stack([Gf, kk]))
        n_rows = np.bincount(inv, weights=n_k, minlength=len(Gs_all))
        cnt = n_rows * (1.0 if sample is None else len(G) / max(int(sample.sum()), 1))
        post_rows = np.bincount(inv, weights=n_k * post_k, minlength=len(Gs_all)) / np.maximum(n_rows, 1)
        sk = Gs_all[:, -1].astype(np.int64)
        Gs_all = np.ascontiguousarray(Gs_all[:, :-1]).astype(np.int8)
        d = G.shape[1]
        derived = np.array([KINDS[f.kind].derived for f in self.fields], bool)
        strata: dict[int, tuple[float, np.ndarray]] = {}
        for s_i, code in enumerate(hv.tolist()):
            sel = sk == s_i
            cs = cnt[sel]
            Gs = Gs_all[sel]
            free = (Gs >= 0).any(0)
            if code == 0 or cs.sum() < MIN_SESSION_PAIRS or not free.any():
                continue  # no key agreed, too few pairs, or no field left to tell its matches
            pi = float(np.sum(cs * post_rows[sel]) / cs.sum())
            onehot = [np.stack([(Gs[:, c] == k) for k in range(_L)], axis=1).astype(np.float64) for c in range(d)]
            u_s = u_rand.copy()
            _m_step(post_rows[sel], cs, onehot, np.flatnonzero(free & derived), None, u_s, STRATUM_U_PSEUDO, u_rand)
            # m and u whose log ratio is the stratum's Bayes factors (the EM's levels: no
            # neighbouring-code level, so level_bayes_factors' override does not enter)
            ex = self._stratum_excluded(int(code))
            m_c, u_c = self.m_.copy(), u_s.copy()
            m_c[ex, 1:] /= np.maximum(1.0 - m_c[ex, :1], 1e-12)
            u_c[ex, 1:] /= np.maximum(1.0 - u_c[ex, :1], 1e-12)
            _, lam_s, _, _ = self._session_em(Gs, cs, u_c, np.ones(d, bool), m_c, min(max(pi, 1e-6), 1 - 1e-6),
                                              fit_m=False, combine=True, lam_prior=(STRATUM_LAMBDA_PSEUDO, pi))
            lam_s = float(np.clip(lam_s, 1e-9, 1 - 1e-9))
            strata[int(code)] = (math.log(lam_s / (1 - lam_s)), u_s)
        self.strata_ = strata
        if strata:  # each TF field's mean log frequency over the pairs that agree on its key
            recs = np.arange(len(df))
            Tr = self.tf_values(df, np.column_stack([recs, recs]))  # per record, not per pair
            F = self._forced(h)
            for c in self._tf_fields():
                left = pairs[F[:, c], 0]
                t = Tr[left, c]
                t = t[~np.isnan(t)]
                if len(t):
                    self.tf_centre_[self.fields[c].column] = float(np.mean(np.log(np.maximum(t, 1e-12))))

    def _stratum_excluded(self, code: int) -> np.ndarray:
        """Boolean (n_fields,): the fields whose *exact* level the pairs of blocking stratum
        ``code`` (the bits of the key rules agreed, :meth:`_agreed_keys`) cannot show: the field
        of each one-field ``key:`` rule the stratum does not agree on, and the whole-record
        comparison when one of those fields' words are in the record (``record_share_``).
        Approximate: a key's normalisation and the exact level's may differ (such a pair keeps
        the exact level's weight), and a pair whose fields hold each other's words could still
        agree on the whole record."""
        ex = np.zeros(len(self.fields), bool)
        cols = {f.column: c for c, f in enumerate(self.fields)}
        for r, keys in enumerate(self.forcing_):
            if not (code >> r) & 1 and len(keys) == 1:
                ex[cols[keys[0]]] = True
        if any(self.record_share_.get(self.fields[c].column, 0.0) > 0 for c in np.flatnonzero(ex)):
            ex |= np.array([f.kind == "record" for f in self.fields], bool)
        return ex

    def _stratum_bayes_factors(self, code: int, u_s: np.ndarray) -> np.ndarray:
        """``log(m / u)`` per field and level in blocking stratum ``code`` with its u ``u_s``
        (:meth:`level_bayes_factors`), the fields it excludes at *exact*
        (:meth:`_stratum_excluded`) conditioned on the levels below: their close, far and else
        levels weigh ``log(m / (1 - m_exact)) - log(u_s / (1 - u_s,exact))``.

        Examples
        --------
        >>> m = FSModel([Field("first", "name"), Field("last", "name")])
        >>> m.m_ = np.array([[0.6, 0.3, 0.05, 0.05], [0.5, 0.3, 0.1, 0.1]])
        >>> m.u_ = np.array([[0.01, 0.02, 0.07, 0.9], [0.01, 0.01, 0.08, 0.9]])
        >>> m.forcing_ = [["last"], ["first"]]
        >>> bf = m._stratum_bayes_factors(0b10, m.u_)  # the first names agreed, the last names not
        >>> bool(np.allclose(bf[0], np.log(m.m_[0] / m.u_[0])))
        True
        >>> bool(np.isclose(bf[1, 0], np.log(0.5 / 0.01)))  # exact keeps its weight; below it, log(0.99 / 0.5) more
        True
        >>> [round(float(x), 3) for x in bf[1, 1:] - np.log(m.m_[1, 1:] / m.u_[1, 1:])]
        [0.683, 0.683, 0.683]
        """
        bf = self.level_bayes_factors(u_s)
        for c in np.flatnonzero(self._stratum_excluded(code)):
            bf[c, 1:] += math.log(max(1.0 - float(u_s[c, 0]), 1e-12)) - math.log(max(1.0 - float(self.m_[c, 0]), 1e-12))
        return bf

    def _complete_session_pairs(self, df: pd.DataFrame, pairs: np.ndarray, G: np.ndarray, c: int,
                                sources: np.ndarray | None = None) -> np.ndarray:
        """The candidate pairs of field ``c``'s session: those that agree exactly on it in a
        value at least :data:`SESSION_BLOCK_COMPLETE` of whose record pairs are candidates.

        A session's EM needs the pairs that share the value, all of them: its non-matches
        then agree on the other fields as random pairs do. Where blocking purged the value's
        block (a surname held by 700 records), the pairs that share it are candidates only
        through the *other* rules (same birth month and day, same first name), so every such
        non-match agrees on those fields, and EM takes that selection for its match class
        (RLdata10000: 7,000 pairs of purged surnames made the surname session's match share
        7x the truth's). Used only for a field with a ``key:`` rule of its own
        (:meth:`_fit_by_sessions`): without one (a birth year) every pair of the session is
        the other rules' selection, and a value held by two records looks complete as soon as
        its one pair was proposed. The value
        is the field's raw value (as the records hold it; both columns of a two-column
        field); the exact level may normalise more, which only makes a block look more complete.
        With ``sources`` (link mode) a value's record pairs are those across its tables."""
        cols = self.fields[c].columns()
        if not cols or any(x not in df.columns for x in cols):
            return G[:, c] == 0
        # -1: a value missing
        codes = df[cols].groupby(cols, sort=False, dropna=True).ngroup().fillna(-1).to_numpy(np.int64)
        nv = int(codes.max()) + 1 if len(codes) else 0
        k = np.bincount(codes[codes >= 0], minlength=nv).astype(np.float64)
        ex = np.flatnonzero(G[:, c] == 0)
        v = codes[pairs[ex, 0]]
        got = np.bincount(v[v >= 0], minlength=nv).astype(np.float64)
        possible = k * (k - 1) / 2
        if sources is not None:  # only pairs across tables: minus the pairs inside each table
            src = np.unique(np.asarray(sources), return_inverse=True)[1].ravel()
            ok = codes >= 0
            ks = np.bincount(codes[ok] * (int(src.max()) + 1) + src[ok], minlength=nv * (int(src.max()) + 1))
            possible = k * k / 2 - (ks.reshape(nv, -1).astype(np.float64) ** 2).sum(1) / 2
        full = got >= SESSION_BLOCK_COMPLETE * possible
        keep = np.zeros(len(G), bool)
        keep[ex[(v >= 0) & full[np.maximum(v, 0)]]] = True
        return keep

    def _dependence(self, Gu: np.ndarray, Gr: np.ndarray, u: np.ndarray) -> np.ndarray:
        """log(observed / expected) count among the random pairs of each level pattern of
        ``Gu``, shrunk towards 0 by :data:`DEPENDENCE_PSEUDO` pseudo-pairs: how much more
        often non-matches show the pattern than independently agreeing fields would."""
        if len(Gr) == 0 or len(Gu) == 0:
            return np.zeros(len(Gu))
        Gc, inv = _distinct_rows_inverse(np.concatenate([Gu, Gr]))
        obs = np.bincount(inv[len(Gu):], minlength=len(Gc)).astype(np.float64)[inv[:len(Gu)]]
        mv, mc = np.unique(_mask_code(Gr < 0), return_counts=True)
        share = dict(zip(mv.tolist(), (mc / len(Gr)).tolist()))
        p_mask = np.array([share.get(int(x), 0.0) for x in _mask_code(Gu < 0)])
        logu = np.zeros(len(Gu))
        for c in range(Gu.shape[1]):
            ok = Gu[:, c] >= 0
            logu[ok] += np.log(u[c][Gu[ok, c]])
        expected = len(Gr) * p_mask * np.exp(logu)
        a = DEPENDENCE_PSEUDO
        return np.log((obs + a) / (expected + a))

    def _fit_prior(self, n: int) -> "FSModel":
        """The fixed prior model for tables too small to fit (fewer than
        :data:`MIN_RECORDS_EM` records): no EM, no TF adjustment; a pair matches when the
        fields both records fill agree exactly or closely and none is far off."""
        d = len(self.fields)
        self.tf_tables_, self.tf_default_ = {}, {}
        self.m_ = np.tile(_PRIOR_M, (d, 1))
        self.u_ = np.tile(_PRIOR_U, (d, 1))
        self.lambda_ = _PRIOR_LAMBDA
        self.n_iter_, self.n_seed_pairs_ = 0, 0
        self.problems_ = [] if n < 2 else [
            f"only {n} records: too few to fit the model without labels (EM needs at least {MIN_RECORDS_EM}); "
            "a fixed prior model is used instead (records match when the values they both have agree exactly "
            "or closely)"
        ]
        return self

    def _diagnose(self, post: np.ndarray, npairs: int, n: int, weights: np.ndarray | None = None) -> list[str]:
        """Problems of the fitted model, as sentences; sets ``drifted_`` when EM's match
        class is not a class of duplicates (almost every candidate a match, or matches
        that agree on no identifying field): a symptom of candidates dominated by
        look-alikes, which ``resolve`` answers by tightening its default blocking. Whether a
        field is rarely shared by chance (identifying) is read on the random pairs' u
        (``u_random_``; the candidate u where a model has none). Heuristic thresholds
        (:data:`IDENTIFYING_U`, :data:`PLAUSIBLE_AGREEMENT`)."""
        out = []
        self.drifted_ = False
        if n < 2:
            return out  # one record: nothing to match
        if npairs == 0:
            return ["there are no candidate pairs (blocking found none)"]
        info = float(np.sum(-np.log(self.u_[:, 0])))
        if n > 2 and info < math.log(n):
            out.append(f"the fields cannot single out a record: agreeing exactly on all of them happens by chance "
                       f"(information {info:.1f} nats < log(n records) = {math.log(n):.1f})")
        if self.lambda_ * npairs < 0.5:
            out.append(f"EM found (almost) no matches (lambda = {self.lambda_:.2e} over {npairs} candidate pairs)")
        if self.lambda_ > 0.9:
            out.append(f"EM calls almost every candidate pair a match (lambda = {self.lambda_:.3f})")
            self.drifted_ = True
        # ``weights``: how many pairs each entry of ``post`` stands for (one each when None)
        wts = np.ones(len(post)) if weights is None else np.asarray(weights, np.float64)
        share = float((post > 0.5) @ wts / max(wts.sum(), 1.0)) if len(post) else float("nan")
        if npairs >= 20 and share > 0.95:
            out.append(f"{share:.0%} of candidate pairs come out as matches")
            self.drifted_ = True
        bf = np.abs(np.log(self.m_) - np.log(self.u_))
        # weight of the levels that actually carry mass
        if np.all(np.max(np.where(self.u_ > 1e-3, bf, 0.0), axis=1) < 0.5):
            out.append("m ~ u for every field: no field separates matches from non-matches")
        n_match = int(round(float((post > 0.5) @ wts))) if len(post) else 0
        if n_match == 0 and self.lambda_ * npairs >= 0.5:
            # EM's match share says there are duplicates, yet none is likely enough to be
            # merged: the comparisons hold too little evidence (e.g. one text field whose
            # "close" level is also reached by many of the non-matching pairs)
            out.append(f"EM estimates about {self.lambda_ * npairs:.0f} matching pair(s) among the {npairs} "
                       "candidates, but no pair reaches probability 0.5, so nothing is merged: the compared "
                       f"field(s) ({', '.join(f.column for f in self.fields)}) do not carry enough evidence to "
                       "single the duplicates out; add identifying columns or pass labels for supervised scoring")
        if n_match and self.n_seed_pairs_ < 2:
            out.append(f"no candidate pair agrees exactly on values rare enough to be a clear duplicate, yet EM "
                       f"calls {n_match} pair(s) matches on partial agreement: the table may hold no duplicates "
                       "(the matches are look-alikes) or only heavily corrupted ones")
        # duplicates agree on most identifying fields; a match class that agrees (exactly or
        # closely) with fewer than half of its pairs on every field rarely shared by chance
        # is a class of look-alikes (same street, similar names), not of duplicates
        # "rarely shared by chance" is measured on random pairs: the u refitted on the candidates
        # counts what blocking made them share (a key rule on the company name: patent's candidate
        # u(name exact) 0.19, random pairs 0.03), and a name that only blocking made common is no
        # look-alike's field (stop 46: patent tightened to blocks of 100 and lost its name key)
        ur = self.u_ if self.u_random_ is None or self.u_random_.shape != self.u_.shape else self.u_random_
        top_m, top_u = self.m_[:, :2].sum(1), ur[:, :2].sum(1)
        ident = top_u < IDENTIFYING_U
        if n_match and ident.any() and top_m[ident].max() < PLAUSIBLE_AGREEMENT:
            k = int(np.flatnonzero(ident)[np.argmax(top_m[ident])])
            self.drifted_ = True
            out.append(f"the pairs EM calls matches do not agree on any identifying field: at best "
                       f"{top_m[k]:.0%} of them agree exactly or closely on {self.fields[k].column!r} (random pairs: "
                       f"{top_u[k]:.1%}); duplicates agree on most fields, so these look like look-alikes (same "
                       "street, similar names) rather than duplicates")
        return out

    def warn_if_degenerate(self, stacklevel: int = 3) -> None:
        """Emit :class:`DegenerateModelWarning` when :meth:`fit` found a problem."""
        if self.problems_:
            cols = ", ".join(f"{f.column}:{f.kind}" for f in self.fields)
            warnings.warn(
                "unsupervised Fellegi-Sunter training degenerated: " + "; ".join(self.problems_)
                + f". Compared fields: {cols}. Check them (Resolution.field_report; the CLI prints them): "
                "pass fields=... (CLI --fields) with the columns that identify an entity, drop truth-like or "
                "constant columns, widen blocking=..., or give labels=... for supervised scoring.",
                DegenerateModelWarning, stacklevel=stacklevel,
            )

    # ------------------------------------------------------------------ scoring
    def field_weights(self, df: pd.DataFrame, pairs: np.ndarray, fm: Any) -> np.ndarray:
        """Per pair and field natural-log Bayes factor ``log(m/u)`` of its level (0 when
        missing; TF-adjusted at the exact level)."""
        if self.m_ is None:
            raise RuntimeError("FSModel is not fitted; call fit(...) first")
        T = self.tf_values(df, pairs)
        if self.strata_ and self.forcing_:
            return self._strata_weights(df, pairs, self.levels(fm), T, self.shared_parts(fm))
        W = self.level_weights(self.levels(fm), T, self.shared_parts(fm))
        if self.forcing_ and self.key_coef_:
            # fields of the key rules a pair agrees on carry no evidence of their own; the
            # key states do (the prior, relative to the overall λ, shared out over the key
            # fields), plus a rare value's TF deviation from the average key agreement
            h_all = self.key_states(df, pairs)
            key = np.zeros(len(self.fields), bool)
            cols = {f.column: c for c, f in enumerate(self.fields)}
            for keys in self.forcing_:
                key[[cols[k] for k in keys]] = True
            for a, b in _chunks.spans(len(pairs)):  # in pieces of rows: a signal waits for one piece
                h, Wp, Tp = h_all[a:b], W[a:b], T[a:b]
                F = self._forced(h)
                Wp[F] = 0.0
                for col, centre in self.tf_centre_.items():
                    c = next(k for k, f in enumerate(self.fields) if f.column == col)
                    sel = F[:, c] & ~np.isnan(Tp[:, c])
                    Wp[sel, c] = centre - np.log(np.maximum(Tp[sel, c], 1e-12))
                extra = self._prior_logit(h) - math.log(self.lambda_ / (1 - self.lambda_))
                Wp[:, key] += extra[:, None] / key.sum()
        return W

    def _strata_weights(self, df: pd.DataFrame, pairs: np.ndarray, G: np.ndarray, T: np.ndarray,
                        R: dict[int, np.ndarray] | None) -> np.ndarray:
        """:meth:`field_weights` of a model with blocking strata (:meth:`_fit_strata`): a pair
        of a fitted stratum is weighed with the stratum's u and the levels it excludes
        (:meth:`_stratum_bayes_factors`), its agreed key fields at 0 but for
        a rare value's TF deviation from the average key agreement (``tf_centre_``), and the
        stratum's log-odds over the overall λ shared out over the key fields; other pairs as
        :meth:`level_weights`."""
        h = self._agreed_keys(df, pairs)
        W = np.zeros(G.shape)
        key = np.zeros(len(self.fields), bool)
        cols = {f.column: c for c, f in enumerate(self.fields)}
        for keys in self.forcing_:
            key[[cols[k] for k in keys]] = True
        base = math.log(self.lambda_ / (1 - self.lambda_))
        codes = np.array(sorted(self.strata_), np.int64)
        for a, b in _chunks.spans(len(pairs)):  # in pieces of rows: a signal waits for one piece
            hp, Gp, Tp = h[a:b], G[a:b], T[a:b]
            Rp = None if R is None else {c: v[a:b] for c, v in R.items()}
            fitted = np.isin(hp, codes)
            Wp = W[a:b]
            if (~fitted).any():
                Rq = None if Rp is None else {c: v[~fitted] for c, v in Rp.items()}
                Wp[~fitted] = self.level_weights(Gp[~fitted], Tp[~fitted], Rq)
            for code in np.unique(hp[fitted]).tolist():
                sel = hp == code
                logit_s, u_s = self.strata_[code]
                F = self._forced(np.full(int(sel.sum()), code, np.int64))
                Rq = None if Rp is None else {c: v[sel] for c, v in Rp.items()}
                Ws = self.level_weights(np.where(F, np.int8(-1), Gp[sel]), Tp[sel], Rq,
                                        bf=self._stratum_bayes_factors(code, u_s))
                Ts = Tp[sel]
                for col, centre in self.tf_centre_.items():
                    c = cols[col]
                    ok = F[:, c] & ~np.isnan(Ts[:, c])
                    Ws[ok, c] = centre - np.log(np.maximum(Ts[ok, c], 1e-12))
                Ws[:, key] += (logit_s - base) / key.sum()
                Wp[sel] = Ws
        return W

    def shared_parts(self, fm: Any) -> dict[int, np.ndarray] | None:
        """Per field (its index) whose column the whole record's text holds, the part of each
        pair's record cosine that the words both records hold in that column make (the record
        comparison's ``shared:<column>`` features, :func:`trustlab.er.comparisons.shared_parts`;
        columns of ``fm.X``, not copies), or None when the feature matrix has none (a supervised
        one, or one compared without ``only=needed_features()``)."""
        rec = [f.column for f in self.fields if f.kind == "record"]
        if not rec:
            return None
        col = {f.column: c for c, f in enumerate(self.fields)}
        prefix = f"{rec[0]}:shared:"
        R = {col[nm[len(prefix):]]: fm.X[:, k] for k, nm in enumerate(fm.names)
             if nm.startswith(prefix) and nm[len(prefix):] in col}
        return R or None

    def _record_beyond_fields(self, W: np.ndarray, R: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """The whole-record comparison without what the fields have said already.

        Its words are the fields' words, so part of its evidence is the fields' evidence seen
        a second time (a product title is half the record's words: a near title and a near
        record are not two independent coincidences). Each field's weight overlaps the
        record's in proportion to the field's share of the record's words
        (``record_share_``, measured on the records at fit time): where the record's weight
        and that overlap point the same way, the record adds only its excess over the overlap;
        where they disagree, both count. Models without shares (saved before) are unchanged.

        With ``R`` (:meth:`shared_parts`: per pair, the part of the record's cosine each
        field's shared words make), a record that agrees (positive weight) overlaps at least
        the agreeing fields' weights in proportion to those parts: two people with the same
        rare first and last names agree on the name fields, and their whole records agree
        through the same two names, not a third time (RLdata500: such pairs with every birth-date
        part different got about +7 nats from the record, of which the table's shares, 1/7 per
        field, took off 0.7).
        The larger of the two overlaps is taken off: where a field that agrees holds few of
        the pair's shared words (a long product title called close by its own comparison),
        the table's share stays. Heuristic: the overlap of two weights is not a probability."""
        rec = [c for c, f in enumerate(self.fields) if f.kind == "record"]
        if not rec or not self.record_share_:
            return W
        share = np.array([self.record_share_.get(f.column, 0.0) for f in self.fields])
        own = sorted(R) if R else []
        for a, b in _chunks.spans(len(W)):  # in pieces of rows: a signal waits for one piece
            Wp = W[a:b]
            # column by column (not Wp @ share, whose BLAS kernel and so its last bits depend on
            # the number of rows in the piece): each pair's overlap is its own
            S = np.zeros(b - a)
            for c in np.flatnonzero(share):
                S += Wp[:, c] * share[c]
            P = np.zeros(b - a)
            for c in own:  # the agreeing fields, by the part of this pair's cosine their words make
                P += R[c][a:b] * np.maximum(Wp[:, c], 0.0)
            for c in rec:
                r = Wp[:, c]
                Sc = np.where(r > 0, np.maximum(S, P), S)
                same = np.sign(r) == np.sign(Sc)
                Wp[:, c] = np.where(same, np.sign(r) * np.maximum(np.abs(r) - np.abs(Sc), 0.0), r)
        return W

    def level_weights(self, G: np.ndarray, T: np.ndarray, R: dict[int, np.ndarray] | None = None, *,
                      bf: np.ndarray | None = None) -> np.ndarray:
        """:meth:`field_weights` from the pairs' levels (:meth:`levels`) and term
        frequencies (:meth:`tf_values`), before any key-rule prior or blocking stratum
        (:meth:`_fit_strata`); the whole record counted beyond the fields
        (:meth:`_record_beyond_fields`, with the pairs' :meth:`shared_parts` ``R`` when given).
        ``bf``: the Bayes factors per field and level to use (a blocking stratum's,
        :meth:`_stratum_bayes_factors`; default :meth:`level_bayes_factors`)."""
        W = np.empty(G.shape)
        bf = self.level_bayes_factors() if bf is None else bf
        for a, b in _chunks.spans(len(G)):  # in pieces of rows: a signal waits for one piece
            Wp = W[a:b]
            Wp[:] = 0.0
            for c in range(G.shape[1]):
                g = G[a:b, c]
                ok = g >= 0
                Wp[ok, c] = bf[c][g[ok]]
                t = T[a:b, c]
                adj = (g == 0) & ~np.isnan(t)
                if adj.any():
                    scale = self.tf_scale_.get(self.fields[c].column, 1.0)
                    Wp[adj, c] = np.log(self.m_[c, 0]) - np.log(np.maximum(t[adj] * scale, 1e-12))
        return self._record_beyond_fields(W, R)

    def m_from_clusters(self, G: np.ndarray, p: np.ndarray, W: np.ndarray, hidden: np.ndarray,
                        forced: np.ndarray | None = None) -> np.ndarray | None:
        """``m`` re-estimated with the pairs a clustering joins against their own score.

        EM's match class can be narrower than the entities: on citations it is "the same
        version of a paper", and pairs of two versions (another year, other pages) are
        scored as non-matches although the clustering joins them through chains of
        versions; every disagreement level's ``m`` is then too rare (stop 48: year *else*
        0.039 fitted, 0.158 true). Here each field's level counts are EM's expected match
        counts (``Σ p · m`` over the pairs where the field is compared and is not a key
        field the pair was selected on) plus, for the ``hidden`` pairs (joined by the
        clustering at ``p < 0.5``), ``1 − p`` at the pair's level of that field, **only
        where the pair's other fields alone favour a match** (their weights in ``W`` sum
        above 0). That guard keeps the step from learning a field's disagreement from
        pairs that nothing but the clustering calls matches: in a one-field file (an
        organisation's name) no hidden pair counts, and organisation families are not
        merged by it (stop 50). Heuristic (approximate): transitivity taken as evidence for
        the parameters, not for single pairs; ``u``, λ and the TF tables are unchanged.

        Parameters
        ----------
        G : ndarray of int, shape (n_pairs, n_fields)
            :meth:`levels` of the pairs (-1 missing).
        p : ndarray, shape (n_pairs,)
            The pairs' match probabilities.
        W : ndarray, shape (n_pairs, n_fields)
            :meth:`field_weights` of the pairs.
        hidden : ndarray of bool, shape (n_pairs,)
            Pairs inside one cluster with ``p < 0.5``.
        forced : ndarray of bool, shape (n_pairs, n_fields), optional
            :meth:`_forced`: fields a key rule selected the pair on (left out).

        Returns
        -------
        ndarray or None
            The new ``m`` (rows normalised, floored at 1e-6), or None when no hidden pair
            counts for any field (``m`` unchanged).
        """
        m_old = np.asarray(self.m_, float)
        L = m_old.shape[1]
        m = m_old.copy()
        total = W.sum(1)
        changed = False
        for c in range(G.shape[1]):
            g = G[:, c]
            ok = g >= 0
            if forced is not None:
                ok &= ~forced[:, c]
            sel = ok & hidden & (total - W[:, c] > 0.0)
            if not sel.any():
                continue
            add = np.bincount(g[sel], weights=1.0 - p[sel], minlength=L)[:L]
            cnt = np.maximum(p[ok].sum() * m_old[c] + add, 1e-3)
            m[c] = cnt / cnt.sum()
            changed = True
        if not changed:
            return None
        m = np.clip(m, 1e-6, None)
        return m / m.sum(1, keepdims=True)

    def level_bayes_factors(self, u: np.ndarray | None = None) -> np.ndarray:
        """``log(m / u)`` per field and level, except the *far* level of a ``model`` field
        (neighbouring model numbers, :func:`~trustlab.er.comparisons.code_variant`) and of
        the ``codes`` comparison (neighbouring codes, no shared one), which
        weighs minus the field's exact agreement (and never more than *else*): another model
        of the same series refutes a match as strongly as the same model number supports one. Heuristic: EM cannot
        learn that level (pairs with neighbouring codes agree on the rest, so it puts them
        in its match class): EM sees it as *else* (:meth:`_em_levels`) and its weight is set.
        ``u``: the non-match probabilities to use (a blocking stratum's; default ``u_``)."""
        bf = np.log(self.m_) - np.log(self.u_ if u is None else u)
        for c in self._neighbour_fields():
            bf[c, 2] = min(bf[c, 3], -abs(bf[c, 0]))
        return bf

    def log_odds_from_field_weights(self, W: np.ndarray) -> np.ndarray:
        """Posterior match log-odds (natural log) from :meth:`field_weights` (saves recomputing them)."""
        rows = np.empty(len(W))
        for a, b in _chunks.spans(len(W)):  # row sums in pieces (each row's sum is its own): a signal waits for one
            rows[a:b] = W[a:b].sum(1)
        return math.log(self.lambda_ / (1 - self.lambda_)) + rows

    def proba_from_field_weights(self, W: np.ndarray) -> np.ndarray:
        """Match probability from :meth:`field_weights` (saves recomputing them)."""
        return 1.0 / (1.0 + np.exp(-np.clip(self.log_odds_from_field_weights(W), -50, 50)))

    def match_weight(self, df: pd.DataFrame, pairs: np.ndarray, fm: Any) -> np.ndarray:
        """Posterior log-odds of a match (natural log) per pair."""
        W = self.field_weights(df, pairs, fm)
        return math.log(self.lambda_ / (1 - self.lambda_)) + W.sum(1)

    def predict_proba(self, df: pd.DataFrame, pairs: np.ndarray, fm: Any) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(self.match_weight(df, pairs, fm), -50, 50)))

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        """JSON-serialisable parameters (fields, levels, m, u, λ, TF tables)."""
        return {
            "type": "FSModel",
            "fields": [{"column": f.column, "kind": f.kind} for f in self.fields],
            "levels": list(LEVEL_NAMES),
            "comparison_levels": {f.kind: list(COMPARISON_LEVELS[f.kind]) for f in self.fields},
            "m": None if self.m_ is None else self.m_.tolist(),
            "u": None if self.u_ is None else self.u_.tolist(),
            "lambda": self.lambda_,
            "tf": self.tf,
            "tf_tables": self.tf_tables_,
            "tf_default": self.tf_default_,
            "n_iter": self.n_iter_,
            "n_seed_pairs": self.n_seed_pairs_,
            "problems": list(self.problems_),
            "drifted": bool(self.drifted_),
            "max_iter": self.max_iter,
            "u_prior": self.u_prior,
            "forcing": [list(k) for k in self.forcing_],
            "key_coef": list(self.key_coef_),
            "tf_centre": dict(self.tf_centre_),
            "tf_scale": dict(self.tf_scale_),
            "record_share": dict(self.record_share_),
            "strata": [[int(k), float(lo), np.asarray(us).tolist()] for k, (lo, us) in sorted(self.strata_.items())],
            "tol": self.tol,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "FSModel":
        if d.get("type") != "FSModel":
            raise ValueError(f"not an FSModel dict (type={d.get('type')!r})")
        m = cls([Field(f["column"], f["kind"]) for f in d["fields"]], max_iter=d.get("max_iter", 200),
                tol=d.get("tol", 1e-7), tf=d.get("tf", True),
                u_prior=d.get("u_prior", 1000.0))
        m.m_ = None if d["m"] is None else np.asarray(d["m"], np.float64)
        m.u_ = None if d["u"] is None else np.asarray(d["u"], np.float64)
        m.lambda_ = float(d["lambda"])
        m.tf_tables_ = {k: dict(v) for k, v in d.get("tf_tables", {}).items()}
        m.tf_default_ = dict(d.get("tf_default", {}))
        m.n_iter_ = int(d.get("n_iter", 0))
        m.n_seed_pairs_ = int(d.get("n_seed_pairs", 0))
        m.problems_ = list(d.get("problems", []))
        m.drifted_ = bool(d.get("drifted", False))
        m.forcing_ = [list(k) for k in d.get("forcing", [])]
        m.key_coef_ = [float(b) for b in d.get("key_coef", [])]
        m.tf_centre_ = {str(k): float(v) for k, v in d.get("tf_centre", {}).items()}
        m.tf_scale_ = {str(k): float(v) for k, v in d.get("tf_scale", {}).items()}
        m.record_share_ = {str(k): float(v) for k, v in d.get("record_share", {}).items()}
        m.strata_ = {int(k): (float(lo), np.asarray(us, np.float64)) for k, lo, us in d.get("strata", [])}
        return m

    def parameter_table(self) -> pd.DataFrame:
        """One row per field and level: m, u and the Bayes factor ``log(m/u)``."""
        rows = []
        for c, f in enumerate(self.fields):
            for k, lv in enumerate(LEVEL_NAMES):
                rows.append({"field": f.column, "kind": f.kind, "level": lv, "m": float(self.m_[c, k]),
                             "u": float(self.u_[c, k]), "log_bf": float(np.log(self.m_[c, k] / self.u_[c, k]))})
        return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- supervised scorer
def _design(X: np.ndarray) -> np.ndarray:
    """Impute NaN with 0 and add a missing indicator per feature with any NaN, plus squares."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    D = np.empty((n, 3 * p))  # [X0, X0 ** 2, missing], filled in place
    miss = np.isnan(X)
    X0 = D[:, :p]
    np.copyto(X0, X)
    X0[miss] = 0.0
    np.square(X0, out=D[:, p:2 * p])
    D[:, 2 * p:] = miss
    return D


class _LinearFit:
    """Fitted coefficients in scikit-learn's layout (``coef_``, ``intercept_``)."""

    def __init__(self, coef: np.ndarray, intercept: np.ndarray):
        self.coef_ = coef
        self.intercept_ = intercept


def _expit(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-z) without overflow and with full relative precision in both tails."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


_WARM_ROWS = 12_000  # larger fits start from the optimum of an evenly spaced row subsample


def _fit_logistic(D: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-10, max_iter: int = 100,
                  w0: np.ndarray | None = None) -> _LinearFit:
    """L2-regularised logistic regression by Newton's method with a backtracking line search.

    Minimises ``C * sum_i logloss(y_i, D_i w + b) + ||w||^2 / 2`` (intercept not
    penalised): scikit-learn's ``LogisticRegression(C=C)`` objective. It is strictly
    convex, so the minimiser is unique; Newton reaches it to ``tol`` (step size) where
    lbfgs stops at a gradient tolerance of 1e-4, so the two agree to that tolerance
    (tested) and this fit is the more exact one. Avoids importing scikit-learn (and
    with it ``scipy.stats``: ~1 s) in every ``trustlab resolve``.

    With more than ``2 * _WARM_ROWS`` rows the iterations start from the optimum on
    every k-th row (``C`` scaled by k, deterministic), which is close, so only a few
    full-size Newton steps remain; the full problem's optimum is reached all the same.
    """
    n, p = D.shape
    if w0 is None and n > 2 * _WARM_ROWS and len(np.unique(y[:: n // _WARM_ROWS])) == 2:
        k = n // _WARM_ROWS
        sub = _fit_logistic(D[::k], y[::k], C * k, tol=1e-6, max_iter=max_iter)
        w0 = np.concatenate([sub.coef_.ravel(), sub.intercept_])
    A = np.empty((n, p + 1))
    A[:, :p] = D
    A[:, p] = 1.0
    yf = y.astype(np.float64)
    A32 = A.astype(np.float32)
    reg = np.ones(p + 1)
    reg[p] = 0.0
    w = np.zeros(p + 1)
    ybar = float(yf.mean())
    w[p] = math.log(ybar / (1.0 - ybar))  # the optimum without features: fewer iterations
    if w0 is not None:
        w = np.array(w0, dtype=np.float64)

    def objective(z, w):
        # log(1 + e^z) - y z, summed stably
        return C * float(np.sum(np.logaddexp(0.0, z) - yf * z)) + 0.5 * float(reg @ (w * w))

    z = A @ w
    f = objective(z, w)
    for _ in range(max_iter):
        q = _expit(z)
        g = C * (A.T @ (q - yf)) + reg * w
        # The Hessian only picks the search direction (the gradient, hence the optimum,
        # is exact float64), so it is formed in float32 as B^T B (a SYRK, half a GEMM).
        B = A32 * np.sqrt(C * q * (1.0 - q)).astype(np.float32)[:, None]
        H = (B.T @ B).astype(np.float64)
        H[np.diag_indices_from(H)] += reg + 1e-12
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:  # pragma: no cover - H is positive definite
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        t = 1.0
        while True:
            w_new = w - t * step
            z_new = A @ w_new
            f_new = objective(z_new, w_new)
            if f_new <= f - 1e-4 * t * float(g @ step) or t < 1e-10:
                break
            t *= 0.5
        w, z, f_prev, f = w_new, z_new, f, f_new
        if np.max(np.abs(t * step)) <= tol * (1.0 + np.max(np.abs(w))) or f_prev - f <= 1e-15 * abs(f):
            break
    return _LinearFit(w[:p].reshape(1, p), w[p:].copy())


def _fit_ridge(D: np.ndarray, y: np.ndarray, alpha: float) -> _LinearFit:
    """Ridge regression with an unpenalised intercept (scikit-learn's ``Ridge(alpha)``:
    centre ``D`` and ``y``, solve the normal equations, recover the intercept)."""
    yf = y.astype(np.float64)
    xm = D.mean(axis=0)
    ym = float(yf.mean())
    Dc = D - xm
    G = Dc.T @ Dc
    G[np.diag_indices_from(G)] += alpha
    w = np.linalg.solve(G, Dc.T @ (yf - ym))
    return _LinearFit(w, np.array([ym - float(xm @ w)]))


class SupervisedScorer:
    """Regularised logistic (default) or ridge model on labelled pairs.

    The design is each feature (missing → 0), its square and a missing indicator. The
    logistic model minimises scikit-learn's ``LogisticRegression(C=C)`` objective
    (L2 penalty, unpenalised intercept) exactly by Newton's method; ridge is
    ``Ridge(alpha=1/C)``. Both are fitted in-house (NumPy), so resolving records does
    not import scikit-learn.

    Parameters
    ----------
    model : {"logistic", "ridge"}
    C : float
        Inverse regularisation strength (logistic); ``alpha = 1/C`` for ridge.

    Examples
    --------
    >>> X = np.array([[1.0, 0.9], [0.9, 1.0], [0.1, 0.2], [0.2, 0.0]])
    >>> s = SupervisedScorer().fit(X, np.array([1, 1, 0, 0]))
    >>> bool(s.predict_proba(np.array([[0.95, 0.95]]))[0] > 0.5)
    True
    """

    def __init__(self, model: str = "logistic", C: float = 10.0):
        if model not in ("logistic", "ridge"):
            raise ValueError(f"The 'model' parameter must be one of ['logistic', 'ridge']. Got {model!r} instead.")
        self.model = model
        self.C = float(C)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "SupervisedScorer":
        y = np.asarray(y).astype(int)
        if len(np.unique(y)) < 2:
            raise ValueError(
                "the labelled pairs contain only one class (all matches or all non-matches); "
                "label at least one matching and one non-matching candidate pair"
            )
        D = _design(X)
        # one BLAS thread: the fitted coefficients then do not depend on the machine's
        # core count (a threaded product sums in a thread-count dependent order)
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            if self.model == "logistic":
                self._m = _fit_logistic(D, y, self.C)
            else:
                self._m = _fit_ridge(D, y, 1.0 / self.C)
        return self

    @classmethod
    def from_dict(cls, d: dict) -> "SupervisedScorer":
        """Rebuild a fitted scorer from :func:`trustlab.er.model.save_model`'s fields
        (``model``, ``C``, ``coef``, ``intercept``)."""
        s = cls(model=d["model"], C=d["C"])
        coef = np.asarray(d["coef"], np.float64)
        icpt = np.asarray(d["intercept"], np.float64).ravel()
        s._m = _LinearFit(coef.reshape(1, -1) if s.model == "logistic" else coef.ravel(), icpt[:1].copy())
        return s

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        D = _design(X)
        return D @ np.asarray(self._m.coef_, np.float64).ravel() + float(np.ravel(self._m.intercept_)[0])

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        z = self.decision_function(X)
        if self.model == "logistic":
            return _expit(z)
        return np.clip(z, 0.0, 1.0)


@validate_params(
    {"p": ["array-like"], "kind": [{"logit", "centered"}], "clip": [Interval(numbers.Real, 0, None, closed="neither")]}
)
def to_weights(p: np.ndarray, kind: str = "logit", *, clip: float = 12.0) -> np.ndarray:
    """Signed edge weights from match probabilities: ``logit`` (log-odds, clipped to
    ±``clip``) or ``centered`` (``p - 0.5``); positive means "same entity".

    Parameters
    ----------
    p : numpy.ndarray
        Match probabilities in [0, 1].
    kind : {"logit", "centered"}
        Log-odds or ``p - 0.5``.
    clip : float
        Log-odds are clipped to ``[-clip, clip]``.

    Examples
    --------
    >>> to_weights(np.array([0.5, 0.9]), "centered").round(2).tolist()
    [0.0, 0.4]
    """
    p = np.asarray(p, np.float64)
    if kind == "centered":
        return p - 0.5
    if kind == "logit":
        eps = 1e-12
        q = np.clip(p, eps, 1 - eps)
        return np.clip(np.log(q) - np.log1p(-q), -clip, clip)
    raise ValueError(f"The 'weights' parameter must be one of ['logit', 'centered']. Got {kind!r} instead.")


# ----------------------------------------------------------------------------- weights and completion


@validate_params(
    {
        "pairs": ["array-like"],
        "log_odds": ["array-like"],
        "sources": ["array-like"],
        "damping": [Interval(numbers.Real, 0, 1, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
    }
)
def one_to_one_log_odds(pairs: Any, log_odds: Any, sources: Any, *, damping: float = 0.5, max_iter: int = 200,
                        tol: float = 1e-6) -> tuple[np.ndarray, dict]:
    """Match log-odds of pairs across duplicate-free tables, with each record's other candidates competing.

    A pair model (Fellegi-Sunter) scores every pair on its own. When each table holds an
    entity at most once, a record matches at most one record of each other table, so a pair
    is less likely when either record has other plausible candidates, and more so the more
    plausible they are (a product with three near-identical offers in the other table) -- unless
    those candidates are themselves claimed by a better partner. This is the marginal of the
    distribution over one-to-one matchings whose weight is the product of the pairs' odds
    ``exp(log_odds)``, computed by loopy belief propagation (the factor "at most one partner
    per record and other table"): each record ``a`` sends pair ``(a, b)`` the message
    ``1 / (1 + sum over its other pairs (a, b') of odds(a, b') * message from b' to (a, b'))``, and
    the pair's log-odds become ``log_odds + log(message from a) + log(message from b)``.
    A record with a single candidate leaves the pair's log-odds unchanged; the log-odds never
    rise. On a candidate graph without cycles the result is the exact marginal; with cycles it
    is the usual loopy approximation (updates damped, at most ``max_iter`` rounds).

    Parameters
    ----------
    pairs : array-like of shape (m, 2)
        Record index pairs, each joining records of two different sources.
    log_odds : array-like of shape (m,)
        The pairs' match log-odds (natural log) under the pair model.
    sources : array-like of shape (n,)
        The source (table) of every record (names or codes).
    damping : float, default 0.5
        Share of the previous message kept at each update (0: undamped).
    max_iter : int, default 200
        Most rounds of message updates.
    tol : float, default 1e-6
        Stop when no log-message changes by more than this.

    Returns
    -------
    log_odds : numpy.ndarray of shape (m,)
        The log-odds with the competition of each record's other candidates.
    info : dict
        ``iterations``, ``max_change`` (of the last round) and ``converged``.

    Examples
    --------
    Record 0 (table A) has two candidates in table B, records 1 and 2, at odds 3 and 2;
    record 3 (table A) claims record 2 at odds 50. The matchings {}, {0-1}, {0-2}, {3-2},
    {0-1, 3-2} weigh 1, 3, 2, 50, 150, so the exact odds are 153/53, 2/204 and 200/6 (the
    graph has no cycle):

    >>> lo, info = one_to_one_log_odds([[0, 1], [0, 2], [3, 2]], np.log([3.0, 2.0, 50.0]), ["A", "B", "B", "A"])
    >>> np.round(np.exp(lo), 2).tolist(), info["converged"]
    ([2.89, 0.01, 33.33], True)
    """
    P = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    lo = np.asarray(log_odds, dtype=np.float64).ravel()
    if lo.shape[0] != P.shape[0]:
        raise ValueError(f"pairs and log_odds must have the same length; got {P.shape[0]} and {lo.shape[0]}")
    n = int(np.asarray(sources, dtype=object).ravel().shape[0])
    if P.size and (P.min() < 0 or P.max() >= n):
        raise ValueError(f"pair indices must lie in [0, {n - 1}] (one source per record); "
                         f"got range [{P.min()}, {P.max()}]")
    if np.isnan(lo).any():
        raise ValueError("log_odds contain NaN; give every pair a score")
    src = pd.Series(np.asarray(sources, dtype=object).ravel())
    if src.isna().any():
        raise ValueError("sources has missing values; every record needs its source (table) name")
    codes, names = pd.factorize(src.astype(str), sort=True)
    codes = codes.astype(np.int64)
    i, j = P[:, 0], P[:, 1]
    if np.any(codes[i] == codes[j]):
        raise ValueError("every pair must join records of two different sources (one-to-one linkage); "
                         f"{int(np.sum(codes[i] == codes[j]))} pair(s) join records of one source")
    ns = max(len(names), 1)
    m = len(lo)
    # the factor of record i towards j's table, then of record j towards i's table: one key per
    # record and other table, whichever side of its pairs the record is on
    key = np.concatenate([i * ns + codes[j], j * ns + codes[i]])
    nk = n * ns
    # odds beyond e^25 are as good as certain; bounded so that sums of odds keep their small terms
    c = np.clip(lo, -50.0, 25.0)
    lr = np.zeros(m)  # log-message from record i's factor to the pair
    lc = np.zeros(m)  # from record j's factor
    it, change = 0, 0.0
    for it in range(max_iter):
        # pair -> each of its factors: its odds times the message from its other factor
        nu = np.exp(np.concatenate([c + lc, c + lr]))
        tot = np.bincount(key, weights=nu, minlength=nk)
        new = -np.log1p(np.maximum(tot[key] - nu, 0.0))
        new_r, new_c = new[:m], new[m:]
        change = float(max(np.abs(new_r - lr).max(), np.abs(new_c - lc).max())) if m else 0.0
        lr = damping * lr + (1.0 - damping) * new_r
        lc = damping * lc + (1.0 - damping) * new_c
        if change < tol:
            break
    return lo + lr + lc, {"iterations": it + 1, "max_change": change, "converged": bool(change < tol)}


#: :func:`completion_pair_budget`: the completion of small positive components
#: (``complete_components``) may always add this many pairs per record, outside the candidate
#: pair budget (where the budget leaves more, it may use that instead)
COMPLETION_PAIRS_PER_RECORD = 1


def completion_pair_budget(n: int, pair_budget: int, n_candidates: int) -> int:
    """How many pairs the completion of small positive components may add (all their pairs,
    counted before those already compared are removed): what the pair budget leaves after the
    ``n_candidates`` candidate pairs, and at least :data:`COMPLETION_PAIRS_PER_RECORD` per
    record of the ``n``, so a table whose candidates fill the budget still has its small
    components completed. The same rule in :func:`trustlab.resolve` and on Dask
    (:mod:`trustlab.er.distributed`), so both complete the same components.

    Examples
    --------
    >>> completion_pair_budget(1000, 10_000_000, 2_000_000)
    8000000
    >>> completion_pair_budget(200_000, 7_456_540, 7_690_114)  # the candidates fill the budget
    200000
    """
    return int(max(0, int(pair_budget) - int(n_candidates), COMPLETION_PAIRS_PER_RECORD * int(n)))


def completion_cutoff(sizes: np.ndarray, firsts: np.ndarray, limit: int,
                      max_pairs: int | None) -> tuple[int, int]:
    """Which positive components are completed whole: those of 3 to ``limit`` records, the
    smallest first (ties by their first record, ``firsts``: the smallest canonical position
    of each), while their pairs (all ``s (s - 1) / 2`` of each, those already compared
    included) add up to at most ``max_pairs``. The chosen ones are a prefix of that order,
    returned as its last key ``(size, first)``: a component is completed when
    ``3 <= size <= limit`` and ``(size, first) <= `` the key, so a part of the table that
    holds some components whole decides for them alone (the distributed run's partitions).
    ``(0, -1)``: none.

    Examples
    --------
    >>> completion_cutoff(np.array([3, 5, 3, 4]), np.array([7, 0, 2, 4]), 1000, None)
    (1000, 9223372036854775807)
    >>> completion_cutoff(np.array([3, 5, 3, 4]), np.array([7, 0, 2, 4]), 1000, 12)  # 3 + 3 + 6
    (4, 4)
    >>> completion_cutoff(np.array([3, 5, 3, 4]), np.array([7, 0, 2, 4]), 1000, 5)  # the first 3 only
    (3, 2)
    """
    top = (int(limit), int(np.iinfo(np.int64).max))
    if max_pairs is None:
        return top
    s = np.asarray(sizes, np.int64)
    f = np.asarray(firsts, np.int64)
    ok = (s >= 3) & (s <= int(limit))
    s, f = s[ok], f[ok]
    if not s.size:
        return top
    o = np.lexsort((f, s))
    cost = np.cumsum(s[o] * (s[o] - 1) // 2)
    k = int(np.searchsorted(cost, max(0, int(max_pairs)), side="right"))
    if k == s.size:
        return top
    return (0, -1) if k == 0 else (int(s[o[k - 1]]), int(f[o[k - 1]]))


def _component_completion(n: int, pairs: np.ndarray, w: np.ndarray, limit: int,
                          sources: np.ndarray | None = None, max_pairs: int | None = None,
                          neighbours: bool = False, whole_pairs: int | None = None,
                          cutoff: tuple[int, int] | None = None, positions: np.ndarray | None = None) -> np.ndarray:
    """All pairs inside positive components of 3..limit records that are not in ``pairs``;
    with ``sources`` (a table code per record, ``link_type="link_only"``) only the pairs of
    records from different tables. With ``whole_pairs``, only the smallest components whose
    pairs (all of them, counted before those already in ``pairs`` are removed) add up to at
    most ``whole_pairs`` (:func:`completion_cutoff`, :func:`completion_pair_budget`); or, with
    ``cutoff``, those whose ``(size, first record)`` is at most ``cutoff`` (a key that
    :func:`completion_cutoff` chose from every component of a table of which these records are
    a part; ``positions``: each record's position in that table, increasing, default its
    index here).

    With ``neighbours``, also the pairs of the positive components of three or more records
    that are not completed whole (larger than ``limit``, or beyond ``whole_pairs``) whose two
    records' positive neighbourhoods overlap (:func:`_neighbour_pairs`), at most ``max_pairs``
    less the pairs of the small components that ``max_pairs`` would hold whole, the smallest
    first (heuristic; see there)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from trustlab.kernels import er as K

    pos = w > 0
    g = sp.coo_matrix((np.ones(int(pos.sum()), np.int8), (pairs[pos, 0], pairs[pos, 1])), shape=(n, n))
    k, comp = connected_components(g, directed=False)
    sizes = np.bincount(comp, minlength=k)
    small = (sizes >= 3) & (sizes <= limit)
    first = np.full(k, n, np.int64)
    np.minimum.at(first, comp, np.arange(n, dtype=np.int64))
    if positions is not None and n:
        first = np.asarray(positions, np.int64)[np.minimum(first, n - 1)]

    def chosen(cut):
        return small & ((sizes < cut[0]) | ((sizes == cut[0]) & (first <= cut[1])))

    if cutoff is None and whole_pairs is not None:
        cutoff = completion_cutoff(sizes, first, limit, whole_pairs)
    whole = small if cutoff is None else chosen(cutoff)
    sel = whole[comp]
    hop = np.empty((0, 2), np.int64)
    if neighbours:
        # the neighbour pairs within max_pairs less the pairs of the small components that
        # max_pairs would hold whole (counted as completion_cutoff counts them; in the rounds
        # after the first, those already completed count again, as they always did)
        left = None
        if max_pairs is not None:
            held = chosen(completion_cutoff(sizes, first, limit, max_pairs))
            cs = sizes[held].astype(np.int64)
            left = max(0, int(max_pairs) - int((cs * (cs - 1) // 2).sum()))
        big = (sizes[comp] > 2) & ~sel
        pe = pairs[pos]
        pe = pe[big[pe[:, 0]]]
        if len(pe) and (left is None or left > 0):
            hop = _neighbour_pairs(n, pe, pairs[:, 0] * n + pairs[:, 1], left)
            if sources is not None and len(hop):
                hop = hop[sources[hop[:, 0]] != sources[hop[:, 1]]]
    if not sel.any():
        return hop
    rec = np.flatnonzero(sel).astype(np.int64)
    key = comp[rec]
    o = np.argsort(key, kind="stable")
    rec, key = rec[o], key[o]
    bounds = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True]).astype(np.int64)
    total = K.block_pair_count(bounds, limit)
    a = np.empty(total, np.int64)
    b = np.empty(total, np.int64)
    K.block_pairs(np.ascontiguousarray(rec), bounds, limit, a, b)
    code = a * n + b
    have = pairs[:, 0] * n + pairs[:, 1]
    code = setdiff_sorted(code, have)
    out = np.stack([code // n, code % n], axis=1)
    if sources is not None and len(out):
        out = out[sources[out[:, 0]] != sources[out[:, 1]]]
    if len(hop):
        out = np.unique(np.concatenate([out, hop]), axis=0)
    return out


#: :func:`_component_completion` with ``neighbours``: inside a positive component too large to
#: complete whole, two records are compared when their positive neighbourhoods overlap at least
#: this much (shared neighbours over the union of both, a Jaccard index)
NEIGHBOUR_OVERLAP = 0.2
#: the neighbourhood products of :func:`_neighbour_pairs` are formed in pieces of at most about
#: this many entries (rows of the adjacency matrix at a time), so their memory stays bounded
NEIGHBOUR_PIECE = 1 << 22


def _neighbour_pairs(n: int, edges: np.ndarray, have: np.ndarray, max_pairs: int | None,
                     overlap: float = NEIGHBOUR_OVERLAP, piece: int = NEIGHBOUR_PIECE) -> np.ndarray:
    """Pairs ``(i, j)``, ``i < j``, not among ``have`` (codes ``i * n + j``) whose neighbourhoods in
    the graph of ``edges`` overlap: they share at least one neighbour and
    ``|N(i) & N(j)| >= overlap * |N(i) | N(j)|``. With ``max_pairs``, the most overlapping first
    (ties by the pair's code), at most ``max_pairs``; returned sorted by code.

    Heuristic (a friends-of-friends rule): in a large entity whose block was purged, blocking
    proposes only part of its pairs, and the clustering can put two records together only when
    their pair was compared; two records that are both matched to the same records are worth
    comparing. The product of the adjacency matrix with itself is formed ``piece`` entries at a
    time (rows in pieces), and what is kept is trimmed to ``max_pairs`` after each piece, so the
    memory is bounded by ``piece`` and ``max_pairs`` (the result does not depend on the pieces).
    """
    import scipy.sparse as sp

    e = np.asarray(edges, np.int64).reshape(-1, 2)
    A = sp.coo_matrix((np.ones(2 * len(e), np.float64), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])),
                      shape=(n, n)).tocsr()
    A.sum_duplicates()
    A.data[:] = 1.0
    deg = np.diff(A.indptr).astype(np.float64)
    have = np.unique(np.asarray(have, np.int64))
    work = A @ deg  # entries of each row of A @ A, at most
    codes, score = [np.empty(0, np.int64)], [np.empty(0, np.float64)]
    kept = 0
    r0 = 0
    rows_with = np.flatnonzero(deg > 0)
    while r0 < len(rows_with):
        cum = np.cumsum(work[rows_with[r0:]])
        r1 = r0 + max(1, int(np.searchsorted(cum, piece, side="right")))
        idx = rows_with[r0:r1]
        B = (A[idx] @ A).tocoo()
        i, j, k = idx[B.row], B.col.astype(np.int64), B.data
        ok = (i < j) & (k >= overlap * (deg[i] + deg[j] - k))
        c = i[ok] * n + j[ok]
        jac = k[ok] / (deg[i[ok]] + deg[j[ok]] - k[ok])
        if len(have) and len(c):
            at = np.minimum(np.searchsorted(have, c), len(have) - 1)
            new = have[at] != c
            c, jac = c[new], jac[new]
        codes.append(c)
        score.append(jac)
        kept += len(c)
        if max_pairs is not None and kept > 2 * max_pairs:
            c, jac = np.concatenate(codes), np.concatenate(score)
            o = np.lexsort((c, -jac))[:max_pairs]
            codes, score, kept = [c[o]], [jac[o]], len(o)
        r0 = r1
    c, jac = np.concatenate(codes), np.concatenate(score)
    if max_pairs is not None and len(c) > max_pairs:
        c = c[np.lexsort((c, -jac))[:max_pairs]]
    c = np.sort(c)
    return np.stack([c // n, c % n], axis=1)
