"""Multi-level comparisons and the unsupervised Fellegi–Sunter model used by ``resolve``.

Every field is compared at four levels — **exact**, **close**, **far**, **else** — plus
**missing** (either value empty: weight 0). The similarity feature and the two
thresholds depend on the field kind (:data:`COMPARISON_LEVELS`). :class:`FSModel`
fits the Fellegi–Sunter m/u probabilities and the match share λ:

* u-probabilities from randomly sampled record pairs (almost all non-matches), kept
  fixed, as Splink's ``estimate_u_using_random_sampling``;
* EM initialised from a deterministic rule: candidate pairs whose exact agreements
  are jointly so rare that fewer than one random pair in the whole table is expected
  to show them (``sum of -log u_exact >= log(n(n-1)/2)``) start as matches;
* term-frequency adjustment at the exact level of name-like and categorical fields
  (Splink's TF adjustment): agreeing on a rare value weighs ``log(m / tf(value))``
  instead of ``log(m / u)``.

The model assumes fields agree independently given the match status (the usual FS
approximation), so its probabilities are estimates, not calibrated truths.
Everything fitted is JSON-serialisable through ``to_dict`` / ``from_dict``.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from trustlab.er.records import Field

__all__ = ["COMPARISON_LEVELS", "LEVEL_NAMES", "FSModel", "DegenerateModelWarning", "tf_keys"]

#: kind -> (feature that is 1 exactly on equal values, level feature, close threshold,
#: far threshold, term-frequency adjusted)
COMPARISON_LEVELS: dict[str, tuple[str, str, float | None, float | None, bool]] = {
    "name": ("jaro_winkler", "jaro_winkler", 0.92, 0.80, True),
    "string": ("indel", "token_set", 0.90, 0.70, False),
    "address": ("indel", "token_set", 0.90, 0.70, False),
    "tokens": ("jaccard", "jaccard", 0.60, 0.30, False),
    "phone": ("exact", "levenshtein", 0.85, 0.70, False),
    "email": ("exact", "jaro_winkler", 0.95, 0.85, False),
    "postcode": ("exact", "levenshtein", 0.75, 0.50, True),
    "code": ("exact", "levenshtein", 0.80, 0.60, False),
    "exact": ("exact", "exact", None, None, True),
    "date": ("levenshtein", "levenshtein", 0.74, 0.50, False),
    "numeric": ("rel_sim", "rel_sim", 0.99, 0.90, False),
    "latlon": ("geo_sim", "geo_sim", 0.96, 0.67, False),
}
LEVEL_NAMES = ("exact", "close", "far", "else")
_L = len(LEVEL_NAMES)


#: fewer records than this: no EM (too few pairs to estimate m, u and λ); a fixed prior model
MIN_RECORDS_EM = 10
# the prior model: Bayes factors about e^2.8 (exact), e^1.3 (close), e^-3.2 (far), e^-6.2 (else),
# prior log-odds -1: one exact or close agreement with nothing far off is a match
_PRIOR_U = np.array([0.05, 0.05, 0.2, 0.7])
_PRIOR_M = _PRIOR_U * np.exp([3.0, 1.5, -3.0, -6.0])
_PRIOR_M = _PRIOR_M / _PRIOR_M.sum()
_PRIOR_LAMBDA = 1.0 / (1.0 + math.e)
#: a field is identifying when random pairs agree on it (exactly or closely) less often than this
IDENTIFYING_U = 0.1
#: share of EM's matches that should agree (exactly or closely) on some identifying field
PLAUSIBLE_AGREEMENT = 0.5


class DegenerateModelWarning(UserWarning):
    """Unsupervised training ended in a degenerate model (see the message for the fix)."""


def tf_keys(df: pd.DataFrame, f: Field) -> np.ndarray:
    """Normalised value per record used for term frequencies (same normalisation as
    :func:`trustlab.er.scoring.compare`); ``""`` when missing."""
    s = df[f.column].fillna("").astype(str)
    if f.kind == "name":
        v = s.str.lower().str.replace(r"[^\w ]+", " ", regex=True).str.split().str.join(" ")
    elif f.kind in ("postcode", "code"):
        v = s.str.strip().str.lower().str.replace(r"[^0-9a-z]+", "", regex=True)
    else:
        v = s.str.strip().str.lower()
    return v.fillna("").to_numpy(dtype=object)


def _distinct_rows(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a level matrix (values -1..3) and their counts."""
    if len(G) == 0:
        return G, np.zeros(0, np.int64)
    d = G.shape[1]
    if d <= 27:  # 5**27 < 2**63: one int64 code per row
        code = np.zeros(len(G), np.int64)
        for c in range(d):
            code = code * 5 + (G[:, c].astype(np.int64) + 1)
        _, first, cnt = np.unique(code, return_index=True, return_counts=True)
        return G[first], cnt
    return np.unique(G, axis=0, return_counts=True)


def _feature_index(names: Sequence[str], column: str, feat: str) -> int:
    key = f"{column}:{feat}"
    try:
        return list(names).index(key)
    except ValueError:
        raise ValueError(f"feature {key!r} missing from the feature matrix (has {list(names)})") from None


class FSModel:
    """Fellegi–Sunter model over multi-level comparisons with TF adjustment (EM-fitted).

    Parameters
    ----------
    fields : list of Field
        The compared fields (kinds decide the levels, :data:`COMPARISON_LEVELS`).
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

    Examples
    --------
    >>> from trustlab.er.scoring import compare
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
                 u_prior: float = 1000.0):
        self.fields = list(fields)
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
        self.problems_: list[str] = []

    # ------------------------------------------------------------------ levels
    def spec(self, f: Field) -> tuple[str, str, float | None, float | None, bool]:
        return COMPARISON_LEVELS[f.kind]

    def levels(self, fm: Any) -> np.ndarray:
        """Level per pair and field: 0 exact, 1 close, 2 far, 3 else, -1 missing."""
        n = fm.X.shape[0]
        G = np.full((n, len(self.fields)), -1, np.int8)
        for c, f in enumerate(self.fields):
            ex_name, sim_name, t1, t2, _ = self.spec(f)
            ex = fm.X[:, _feature_index(fm.names, f.column, ex_name)]
            sim = fm.X[:, _feature_index(fm.names, f.column, sim_name)]
            ok = ~np.isnan(ex) & ~np.isnan(sim)
            g = np.full(n, 3, np.int8)
            if t2 is not None:
                g[sim >= t2] = 2
                g[sim >= t1] = 1
            g[ex >= 1.0 - 1e-9] = 0
            G[:, c] = np.where(ok, g, -1)
        return G

    def needed_features(self) -> dict:
        """column -> feature names the levels need (for ``compare(..., only=...)``)."""
        out: dict = {}
        for f in self.fields:
            ex, sim = self.spec(f)[:2]
            out.setdefault(f.column, set()).update({ex, sim})
        return out

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
        T = np.full((len(pairs), len(self.fields)), np.nan)
        for c in self._tf_fields():
            f = self.fields[c]
            tab = self.tf_tables_.get(f.column)
            if tab is None:
                continue
            keys = pd.Series(tf_keys(df, f))
            freq = keys.map(tab).astype(float).fillna(self.tf_default_[f.column]).to_numpy()
            T[:, c] = freq[pairs[:, 0]] if len(pairs) else np.zeros(0)
        return T

    # ------------------------------------------------------------------ fitting
    def fit(self, df: pd.DataFrame, pairs: np.ndarray, fm: Any, random_pairs: np.ndarray, fm_random: Any) -> "FSModel":
        """Fit u on random pairs, then m and λ by EM on the candidate ``pairs``.

        ``fm`` / ``fm_random`` are :class:`~trustlab.er.scoring.FeatureMatrix` of the
        candidate and the random pairs (from :func:`~trustlab.er.scoring.compare`).
        """
        n = len(df)
        if n < MIN_RECORDS_EM:
            return self._fit_prior(n)
        self.fit_tf(df)
        G = self.levels(fm)
        Gr = self.levels(fm_random)
        d = G.shape[1]
        u = np.stack([np.bincount(Gr[Gr[:, c] >= 0, c].astype(np.int64), minlength=_L) + 0.5 for c in range(d)])
        u = u.astype(np.float64)
        u /= u.sum(1, keepdims=True)
        u_rand = u.copy()
        # EM runs on the distinct level patterns, weighted by how many pairs show them
        Gu, cnt = _distinct_rows(G)
        cnt = cnt.astype(np.float64)
        onehot = [np.stack([(Gu[:, c] == k) for k in range(_L)], axis=1).astype(np.float64) for c in range(d)]
        # deterministic seed: exact agreements jointly rarer than 1 / (number of record pairs)
        rare = -np.log(u[:, 0])
        score = ((Gu == 0) * rare[None, :]).sum(1)
        seed = score >= math.log(max(2.0, n * (n - 1) / 2.0))
        self.n_seed_pairs_ = int(cnt[seed].sum())
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
        else:
            m = np.tile(np.array([0.7, 0.2, 0.07, 0.03]), (d, 1))
            lam = 1e-3
        m /= m.sum(1, keepdims=True)
        npairs = G.shape[0]
        nu = Gu.shape[0]
        # how much the candidates look like random pairs: all pairs -> u stays the
        # random-pair estimate; strict blocking -> u follows the candidate non-matches
        frac = min(1.0, npairs / max(1.0, n * (n - 1) / 2.0))
        prior = max(self.u_prior, 10.0 * npairs * frac)
        prev = -np.inf
        it = 0
        post = np.zeros(npairs)
        for it in range(self.max_iter):
            lw = np.full(nu, math.log(lam / (1 - lam)))
            for c in range(d):
                lw += onehot[c] @ (np.log(m[c]) - np.log(u[c]))
            post = 1.0 / (1.0 + np.exp(-np.clip(lw, -50, 50)))
            lam = float(np.clip((post * cnt).sum() / npairs, 1e-9, 1 - 1e-9)) if npairs else lam
            for c in range(d):
                mc = (post * cnt) @ onehot[c] + 1e-3
                m[c] = mc / mc.sum()
                # u: the candidate non-matches (blocking makes them more alike than random
                # pairs), shrunk towards the random-pair estimate
                uc = ((1 - post) * cnt) @ onehot[c] + prior * u_rand[c]
                u[c] = uc / uc.sum()
            ll = float(np.sum(cnt * np.logaddexp(0, lw)))
            if abs(ll - prev) < self.tol * max(1.0, abs(ll)):
                break
            prev = ll
        self.m_, self.u_, self.lambda_ = m, u, lam
        self.n_iter_ = it + 1
        self.problems_ = self._diagnose(np.repeat(post, cnt.astype(np.int64)), npairs, n)
        return self

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

    def _diagnose(self, post: np.ndarray, npairs: int, n: int) -> list[str]:
        out = []
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
        share = float((post > 0.5).mean())
        if npairs >= 20 and share > 0.95:
            out.append(f"{share:.0%} of candidate pairs come out as matches")
        bf = np.abs(np.log(self.m_) - np.log(self.u_))
        # weight of the levels that actually carry mass
        if np.all(np.max(np.where(self.u_ > 1e-3, bf, 0.0), axis=1) < 0.5):
            out.append("m ~ u for every field: no field separates matches from non-matches")
        n_match = int((post > 0.5).sum())
        if n_match and self.n_seed_pairs_ < 2:
            out.append(f"no candidate pair agrees exactly on values rare enough to be a clear duplicate, yet EM "
                       f"calls {n_match} pair(s) matches on partial agreement: the table may hold no duplicates "
                       "(the matches are look-alikes) or only heavily corrupted ones")
        # duplicates agree on most identifying fields; a match class that agrees (exactly or
        # closely) with fewer than half of its pairs on every field rarely shared by chance
        # is a class of look-alikes (same street, similar names), not of duplicates
        top_m, top_u = self.m_[:, :2].sum(1), self.u_[:, :2].sum(1)
        ident = top_u < IDENTIFYING_U
        if n_match and ident.any() and top_m[ident].max() < PLAUSIBLE_AGREEMENT:
            k = int(np.flatnonzero(ident)[np.argmax(top_m[ident])])
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
        G = self.levels(fm)
        W = np.zeros(G.shape)
        bf = np.log(self.m_) - np.log(self.u_)
        T = self.tf_values(df, pairs)
        for c in range(G.shape[1]):
            g = G[:, c]
            ok = g >= 0
            W[ok, c] = bf[c][g[ok]]
            t = T[:, c]
            adj = (g == 0) & ~np.isnan(t)
            if adj.any():
                W[adj, c] = np.log(self.m_[c, 0]) - np.log(np.maximum(t[adj], 1e-12))
        return W

    def proba_from_field_weights(self, W: np.ndarray) -> np.ndarray:
        """Match probability from :meth:`field_weights` (saves recomputing them)."""
        lw = math.log(self.lambda_ / (1 - self.lambda_)) + W.sum(1)
        return 1.0 / (1.0 + np.exp(-np.clip(lw, -50, 50)))

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
            "max_iter": self.max_iter,
            "u_prior": self.u_prior,
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
        return m

    def parameter_table(self) -> pd.DataFrame:
        """One row per field and level: m, u and the Bayes factor ``log(m/u)``."""
        rows = []
        for c, f in enumerate(self.fields):
            for k, lv in enumerate(LEVEL_NAMES):
                rows.append({"field": f.column, "kind": f.kind, "level": lv, "m": float(self.m_[c, k]),
                             "u": float(self.u_[c, k]), "log_bf": float(np.log(self.m_[c, k] / self.u_[c, k]))})
        return pd.DataFrame(rows)
