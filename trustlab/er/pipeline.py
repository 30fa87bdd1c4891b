"""End-to-end entity resolution, the orchestrator: :func:`resolve` runs the stages in order.

read → fields → block → compare → score → cluster → (persist) → report; each stage is a
file (:data:`STAGES`, the map in :mod:`trustlab.er`) and this module calls them top to
bottom. A stage module calls only the shared modules (:data:`SHARED`) and no stage module
before it, so a record's path reads once. Two loops go back through this module, never
from one stage into another: completion (pairs inside small positive components that
blocking missed are compared and scored after the first scores) and tightened blocking
(blocked, compared and scored again with smaller blocks when EM drifted).
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from trustlab._chunks import extend_rows, spans
from trustlab._settings import UNSET
from trustlab._validation import (
    InvalidParameterError,
    check_dask_client,
    check_random_state,
    renamed_keyword,
    validate_params,
)
from trustlab.er.blocking import (
    BlockingStats,
    block,
    estimate_pair_completeness,
    keep_links,
    pair_completeness,
    reduction_ratio,
    rule_hits,
)
from trustlab.er.cluster import ClusterResult, cluster_pairs
from trustlab.er.comparisons import FeatureMatrix, compare, prepared_records
from trustlab.er.defaults import (
    MIN_CLUSTERING_SECONDS,
    canonical_order,
    check_pair_budget,
    default_pair_budget,
    default_rules,
    field_report,
    pair_bytes,
    random_pairs,
)
from trustlab.er.kinds import needed_features, pair_width
from trustlab.er.linking import one_to_one_sources, prepare_link
from trustlab.er.one_to_one import cluster_one_to_one
from trustlab.er.records import placeholders_to_missing, validate_records
from trustlab.er.resolution import Resolution, evaluate
from trustlab.er.rules import canonical_rules
from trustlab.er.scoring import (
    FSModel,
    SupervisedScorer,
    _component_completion,
    completion_pair_budget,
    one_to_one_log_odds,
    to_weights,
)
from trustlab.er.settings import ResolveSettings

__all__ = ["resolve", "Resolution", "evaluate"]

#: the stages of :func:`resolve` in the order it runs them, and the modules of each
#: (``trustlab.er.<name>``); a stage module calls no module of an earlier stage
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("read", ("linking", "records")),
    ("fields", ("fields", "relevance")),
    ("block", ("blocking",)),
    ("compare", ("comparisons",)),
    ("score", ("scoring",)),
    ("cluster", ("cluster", "one_to_one")),
    ("persist", ("model", "incremental")),
    ("report", ("resolution", "report")),
)
#: modules every stage may call (not stages themselves)
SHARED = ("kinds", "rules", "defaults", "settings")


# ----------------------------------------------------------------------------- resolve's stages


@dataclass(frozen=True)
class _ScoringConfig:
    """How candidate pairs are scored and turned into signed weights."""

    scorer: str
    model: Any
    C: float
    train_fraction: float
    weights: str
    complete_components: int


@dataclass(frozen=True)
class _ClusteringConfig:
    """How the scored pairs are clustered (and which baselines run on the same scores)."""

    method: str
    threshold: float | None
    time_limit: float | None
    M: int
    solver_options: Mapping[str, Any]
    compare_methods: tuple
    one_to_one: Any = False  # False, True (every source) or the duplicate-free source names
    started: float | None = None  # time.perf_counter() when the resolve call began

    def time_left(self) -> float | None:
        """What is left of ``time_limit``, a budget for the whole call, for the partition
        solves (at least :data:`MIN_CLUSTERING_SECONDS`); None: no limit given (the
        partition layer then takes its size-scaled work budget, which the wall time the
        earlier stages took does not lower: the answer must not depend on the load)."""
        if self.time_limit is None or self.started is None:
            return self.time_limit
        return max(self.time_limit - (time.perf_counter() - self.started), MIN_CLUSTERING_SECONDS)

    def cluster(self, n: int, sc: "_Scored", method: str | None = None, sources: Any = None) -> ClusterResult:
        """:func:`cluster_pairs` with ``method`` (default: the main one); a baseline
        gets the threshold only when it is ``xer``. The main method with ``one_to_one``
        is :func:`~trustlab.er.one_to_one.cluster_one_to_one` on the records' ``sources``."""
        main = method is None
        method = self.method if main else method
        if main and self.one_to_one is not False:
            free = None if self.one_to_one is True else list(self.one_to_one)
            return cluster_one_to_one(n, sc.pairs, sc.w, sources, duplicate_free=free, threshold=self.threshold,
                                      time_limit=self.time_left(), M=self.M, solver_options=dict(self.solver_options))
        kw: dict[str, Any] = {}
        if method == "xer":
            kw = {"time_limit": self.time_left(), "M": self.M, "solver_options": dict(self.solver_options)}
        elif method == "hierarchical":
            kw = {"prob": sc.prob}
        threshold = self.threshold if main or method == "xer" else None
        return cluster_pairs(n, sc.pairs, sc.w, method=method, threshold=threshold, **kw)


@dataclass
class _Records:
    """The records in canonical order, with their fields, labels and truth."""

    df: pd.DataFrame
    id_col: str
    fields: Any  # FieldInference
    order: np.ndarray
    link: Any  # LinkInfo or None
    ent_labels: np.ndarray | None
    pair_lab: tuple | None
    truth: np.ndarray | None
    #: the records as read, in canonical order: placeholder cells such as ``N/A`` kept
    #: (``df`` has them as missing, for matching only); what the output writes
    raw: pd.DataFrame | None = None
    #: the table of every record when ``one_to_one`` is asked for (None otherwise)
    sources: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.df)

    @property
    def labelled(self) -> bool:
        return self.ent_labels is not None or self.pair_lab is not None


@dataclass
class _Scored:
    """Scored pairs: probabilities, signed weights, features and the fitted scorer."""

    pairs: np.ndarray
    prob: np.ndarray
    w: np.ndarray
    fm: FeatureMatrix
    fw: np.ndarray | None
    model: Any
    supervised: bool
    only: Any

    def predict(self, df: pd.DataFrame, P: np.ndarray, F: FeatureMatrix) -> np.ndarray:
        if F.X.shape[0] == 0:
            return np.zeros(0)
        return self.model.predict_proba(F.X) if self.supervised else self.model.predict_proba(df, P, F)


class _Stages:
    """Seconds per stage (and a tqdm bar over them with ``progress``)."""

    def __init__(self, progress: bool, total: int = 5):
        self.seconds: dict[str, float] = {}
        self.bar = None
        if progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="resolve", unit="stage", leave=False)

    @contextmanager
    def __call__(self, name: str):
        t = time.perf_counter()
        yield
        self.seconds[name] = time.perf_counter() - t
        if self.bar is not None:
            self.bar.set_postfix_str(name)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _solver_options(solver_options: Mapping[str, Any] | None, client: Any) -> dict:
    """``solver_options`` (its keys checked by :class:`ResolveSettings`) with the Dask
    client (``client=``, or the keys ``client`` / deprecated ``scheduler``) under ``"client"``."""
    opts = dict(solver_options or {})
    if "scheduler" in opts:  # warn here, at the caller's line, rather than inside the partition layer
        opts["client"] = renamed_keyword("resolve", "solver_options['client']", opts.get("client"),
                                         "solver_options['scheduler']", opts.pop("scheduler"), stacklevel=6)
    if client is not None:
        if opts.get("client") is not None:
            raise InvalidParameterError(
                "resolve() got a Dask client both as client= and in solver_options; pass it once, as client=.")
        opts["client"] = check_dask_client(client, func="resolve")
    return opts


def _configure(s: ResolveSettings, client: Any) -> tuple[_ClusteringConfig, _ScoringConfig]:
    """Stage 0: group the settings (checked when ``s`` was made, before any work) and
    add the Dask client to the solver options."""
    opts = _solver_options(s.solver_options, client)
    return (_ClusteringConfig(s.method, s.threshold, s.time_limit, s.M, opts, tuple(s.compare_methods),
                              s.one_to_one),
            _ScoringConfig(s.scorer, s.model, s.C, s.train_fraction, s.weights, s.complete_components))


def _read_records(records, *, id_col, fields, labels, truth, link_type, source_col, method,
                  column_map=None, one_to_one=False) -> _Records:
    """Stages 1 and 2: read and stack the records, infer the fields, put the rows in
    canonical order and map labels and truth onto them; with ``one_to_one``, the table of
    every record (bad ids and a bad ``one_to_one`` fail here, before any work)."""
    records, id_col, make_link = prepare_link(records, id_col, link_type, source_col, method, column_map)
    raw, id_col = validate_records(records, id_col, placeholders=False)
    df = placeholders_to_missing(raw, id_col)  # for matching only; the output keeps ``raw``
    exclude = [c for c in (labels, truth) if isinstance(c, str)]
    lk0 = make_link(df) if make_link is not None else None
    unpaired = None
    if lk0 is not None:  # the stacked tables' own id and source columns (and unpaired ones) are not fields
        exclude += lk0.excluded()
        unpaired = lk0.pairing.excluded() if lk0.pairing is not None else None
    link_only = lk0 is not None and lk0.link_type == "link_only"
    freport = field_report(fields, df, id_col=id_col, exclude=exclude, sources=lk0.codes if link_only else None)
    if unpaired is not None:
        _label_unpaired(freport, unpaired)
    # process the rows in a canonical order (by id, or by content when the id is the row
    # number): results do not depend on the input's row order for a fixed seed
    order = canonical_order(df, id_col)
    if isinstance(labels, (list, tuple, np.ndarray)):
        labels = np.asarray(labels, dtype=object)[order]
    if isinstance(truth, (list, tuple, np.ndarray)):
        truth = np.asarray(truth, dtype=object)[order]
    df = df.iloc[order].reset_index(drop=True)
    raw = raw.iloc[order].reset_index(drop=True)
    link = make_link(df) if make_link else None
    sources = one_to_one_sources(df, link, one_to_one) if one_to_one is not False else None
    ent_labels = pair_lab = None
    if labels is not None:
        if isinstance(labels, pd.DataFrame):
            pair_lab = _pair_labels(labels, df, id_col)
        else:
            ent_labels = _entity_map(labels, df, id_col, "labels")
    truth_arr = _entity_map(truth, df, id_col, "truth") if truth is not None else None
    if truth_arr is not None and any(v is None for v in truth_arr):
        raise ValueError("truth must give an entity id for every record (some are missing)")
    return _Records(df, id_col, freport, order, link, ent_labels, pair_lab, truth_arr, raw, sources)


def _label_unpaired(freport, unpaired_columns: Sequence[str]) -> None:
    """Say in the field report why an unpaired column of stacked tables is not compared."""
    if not getattr(freport, "choices", None):
        return
    unpaired = set(unpaired_columns)
    freport.choices = [
        replace(c, reason="not paired with a column of the other table(s); pair it with column_map= "
                          "(CLI --column-map A=B)") if c.role == "excluded" and c.column in unpaired else c
        for c in freport.choices
    ]


def _entity_map(labels: Any, df: pd.DataFrame, id_col: str, what: str) -> np.ndarray:
    """Entity label per row (object array; None where unlabelled)."""
    n = len(df)
    if isinstance(labels, str):
        if labels not in df.columns:
            raise ValueError(
                f"{what} column {labels!r} not found in the records; available: {list(map(str, df.columns))}"
            )
        v = df[labels].to_numpy(dtype=object)
        return np.array(
            [None if (x is None or (isinstance(x, float) and np.isnan(x)) or x == "") else x for x in v], dtype=object
        )
    if isinstance(labels, pd.Series):
        labels = labels.to_dict()
    if isinstance(labels, Mapping):
        pos = {k: i for i, k in enumerate(df[id_col].tolist())}
        spos = {str(k): i for k, i in pos.items()}
        out = np.full(n, None, dtype=object)
        unknown = []
        for k, v in labels.items():
            i = pos.get(k, spos.get(str(k)))
            if i is None:
                unknown.append(k)
            else:
                out[i] = v
        if unknown:
            raise ValueError(
                f"{what} reference {len(unknown)} id(s) not in the records' {id_col!r} column, e.g. {unknown[:5]}"
            )
        return out
    arr = np.asarray(labels, dtype=object)
    if arr.ndim == 1 and arr.shape[0] == n:
        return arr
    raise TypeError(
        f"{what} must be a column name, a mapping id -> entity, a Series or a sequence of length {n}; "
        f"got {type(labels).__name__}"
    )


def _pair_labels(labels: pd.DataFrame, df: pd.DataFrame, id_col: str) -> tuple[np.ndarray, np.ndarray]:
    cols = list(labels.columns)
    if len(cols) < 3:
        raise ValueError(
            "pair labels need three columns: left id, right id and match (1/0 or true/false); "
            f"got columns {cols}"
        )
    pos = {str(k): i for i, k in enumerate(df[id_col].tolist())}
    l = labels[cols[0]].astype(str).map(pos)
    r = labels[cols[1]].astype(str).map(pos)
    bad = l.isna() | r.isna()
    if bad.any():
        ex = labels.loc[bad, cols[:2]].head(3).values.tolist()
        raise ValueError(
            f"pair labels reference {int(bad.sum())} pair(s) with ids not in the records' {id_col!r} column, e.g. {ex}"
        )
    y = labels[cols[2]]
    if y.dtype == object:
        y = (
            y.astype(str)
            .str.lower()
            .map({"1": 1, "0": 0, "true": 1, "false": 0, "match": 1, "distinct": 0, "yes": 1, "no": 0})
        )
        if y.isna().any():
            raise ValueError(f"pair label column {cols[2]!r} must hold 1/0 or true/false")
    P = np.stack([l.to_numpy(np.int64), r.to_numpy(np.int64)], axis=1)
    P = np.sort(P, axis=1)
    return P, y.to_numpy().astype(int)


def _block(data: _Records, blocking, max_block_size: int, fitted,
           near_neighbours: int | None = None) -> tuple[np.ndarray, BlockingStats, bool]:
    """Stage 3: candidate pairs; also whether the rules were the defaults (whose token rules
    keep ``near_neighbours`` per record in the blocks they purge)."""
    df, n = data.df, data.n
    defaulted = blocking is None and fitted is None
    if blocking is None and fitted is not None:
        blocking = fitted.rules_for(df)
    width = pair_width(data.fields.fields)  # compared features a pair carries, as the budget counts them
    budget = default_pair_budget(width)  # once per blocking: rules and completion share it
    rules = blocking if blocking is not None else default_rules(df, data.fields.fields, max_block_size=max_block_size,
                                                                max_pairs=budget, near_neighbours=near_neighbours)
    rules = canonical_rules(rules, df.columns)  # strings that read back the same, whatever the column names
    check_pair_budget(df, rules, max_block_size, width)  # refuse up front, before any pair
    pairs = block(df, rules, max_block_size=max_block_size)
    if data.link is not None:
        pairs = keep_links(pairs, data.link.codes, data.link.link_type)
    stats = BlockingStats(n_records=n, n_candidate_pairs=int(len(pairs)),
                          reduction_ratio=reduction_ratio(len(pairs), n), pair_budget=budget,
                          budget_bytes=budget * pair_bytes(width))
    stats.rules = list(rules)
    if data.truth is not None:
        stats.pair_completeness = pair_completeness(pairs, data.truth)
    return pairs, stats, defaulted


@dataclass
class _Compared:
    """Stage 4's output: the features of the candidate pairs, whether the scorer is
    supervised, the features Fellegi-Sunter needs (two per field; None: all) and the
    features of the pairs a scorer is fitted on besides the candidates: the random record
    pairs Fellegi-Sunter estimates u from (``random``, ``fm_random``), or the labelled
    pairs of a pair-label table (``fm_labelled``)."""

    fm: FeatureMatrix
    supervised: bool
    only: Any
    random: np.ndarray | None = None
    fm_random: FeatureMatrix | None = None
    fm_labelled: FeatureMatrix | None = None


def _features(data: _Records, pairs: np.ndarray, cfg: _ScoringConfig, fitted, rng) -> _Compared:
    """Stage 4: comparison features of the candidate pairs, and of the pairs the scorer
    is fitted on (every comparison of the fit is made here, before scoring)."""
    df, flds = data.df, data.fields.fields
    use_sup = cfg.scorer == "supervised" or (cfg.scorer == "auto" and data.labelled)
    if fitted is not None:
        use_sup = fitted.supervised
    only = None if use_sup else needed_features(flds)
    n = data.n
    fm = compare(df, pairs, flds, only=only)
    rp = fm_random = fm_labelled = None
    if fitted is None and not use_sup:
        # u from random record pairs (Splink's estimate_u_using_random_sampling)
        rp = random_pairs(n, rng)
        fm_random = compare(df, rp, flds, only=only)
    elif fitted is None and data.pair_lab is not None:
        fm_labelled = compare(df, data.pair_lab[0], flds)
    return _Compared(fm, use_sup, only, rp, fm_random, fm_labelled)


def _fit_scorer(data: _Records, pairs, cmp: _Compared, cfg: _ScoringConfig, rng, fitted, rules=None):
    """The pair scorer: the saved one, a supervised model trained on a share of the
    labelled candidate pairs (or on the given pair labels), or Fellegi-Sunter by EM."""
    df, flds, fm = data.df, data.fields.fields, cmp.fm
    if fitted is not None:
        return fitted.scorer
    if not cmp.supervised:
        # multi-level Fellegi-Sunter with TF adjustment; u from the random record pairs
        # of stage 4, EM seeded by a deterministic rule
        cap = None
        if data.link is not None and data.link.link_type == "link_only":
            # each table holds an entity at most once: at most min(table sizes) matching pairs
            sizes = np.bincount(data.link.codes)
            cap = float(sizes[sizes > 0].min()) if (sizes > 0).sum() >= 2 else None
        sources = data.link.codes if data.link is not None and data.link.link_type == "link_only" else None
        return FSModel(flds).fit(df, pairs, fm, cmp.random, cmp.fm_random, rules=rules, max_matches=cap,
                                 sources=sources)
    if not data.labelled:
        raise ValueError("scorer='supervised' needs labels=...; or use scorer='fellegi_sunter'")
    if data.pair_lab is not None:
        Xtr = cmp.fm_labelled.X
        ytr = data.pair_lab[1]
    else:
        lab = np.array([v is not None for v in data.ent_labels])
        cand = np.flatnonzero(lab[pairs[:, 0]] & lab[pairs[:, 1]])
        if cand.size == 0:
            raise ValueError("no candidate pair has both records labelled; label more records")
        k = max(1, int(round(cfg.train_fraction * cand.size)))
        tr = rng.choice(cand, size=k, replace=False) if k < cand.size else cand
        codes = np.full(data.n, -1, np.int64)
        codes[lab] = pd.factorize(pd.Series(data.ent_labels[lab]).astype(str))[0]
        ytr = (codes[pairs[tr, 0]] == codes[pairs[tr, 1]]).astype(int)
        Xtr = fm.X[tr]
    return SupervisedScorer(model=cfg.model, C=cfg.C).fit(Xtr, ytr)


def _score(data: _Records, pairs, cmp: _Compared, cfg: _ScoringConfig, rng, fitted,
           stats: BlockingStats) -> _Scored:
    """Stage 5: fit the scorer, score every candidate pair and complete small positive
    components (``complete_components``: their missing pairs are compared and scored
    in turn)."""
    n = data.n
    link_only = data.link is not None and data.link.link_type == "link_only"
    sources = data.link.codes if link_only else None
    sc = _Scored(pairs, np.zeros(0), np.zeros(0), cmp.fm, None, None, cmp.supervised, cmp.only)
    sc.model = mdl = _fit_scorer(data, pairs, cmp, cfg, rng, fitted, stats.rules)
    if cmp.supervised:
        sc.prob = mdl.predict_proba(cmp.fm.X) if cmp.fm.X.shape[0] else np.zeros(0)
    else:
        sc.fw = mdl.field_weights(data.df, pairs, cmp.fm)
        sc.prob = mdl.proba_from_field_weights(sc.fw)
    sc.w = to_weights(sc.prob, cfg.weights)
    if cfg.complete_components and len(pairs):
        # bounded (a file of a few huge entities would otherwise add up to
        # complete_components**2 / 2 pairs per component): the components completed whole
        # within completion_pair_budget (what the pair budget leaves after the candidates, at
        # least COMPLETION_PAIRS_PER_RECORD per record; the rule the distributed path applies
        # too), the neighbour-overlap pairs within what the pair budget leaves
        budget = (stats.pair_budget if stats.pair_budget is not None
                  else default_pair_budget(pair_width(data.fields.fields)))
        whole = completion_pair_budget(n, budget, len(pairs))
        # rounds: the pairs compared in one round change the positive neighbourhoods for the
        # next (not the components: every pair added lies inside one); the first round is the
        # one before
        for _ in range(COMPLETION_ROUNDS):
            extra = _component_completion(n, sc.pairs, sc.w, int(cfg.complete_components), sources=sources,
                                          max_pairs=budget - len(sc.pairs), neighbours=True, whole_pairs=whole)
            if not len(extra):
                break
            # compared and scored in turn: the loop goes back through this module
            _complete(data, sc, cfg, stats, extra)
        stats.n_completed_pairs = int(len(sc.pairs) - len(pairs))
    return sc


#: rounds of completion (:func:`_score`): components completed whole, and inside larger ones the
#: pairs of records whose positive neighbourhoods overlap, compared and scored, then again on
#: the new scores (a round that finds nothing new ends them)
COMPLETION_ROUNDS = 3


#: the default blocking is tightened (max_block_size halved) down to this block size when
#: EM's match class drifts to look-alikes; below it blocking would lose true pairs
MIN_TIGHT_BLOCK_SIZE = 25


def _tighten_blocking(data: _Records, scored: _Scored, stats: BlockingStats, max_block_size: int,
                      cfg: _ScoringConfig, rng) -> tuple[_Scored, BlockingStats, int]:
    """Refit with smaller blocks after EM drifted (``FSModel.drifted_``).

    Large blocks of a common value (a brand and a category, a frequent token) bring in
    pairs that agree on it by the tens of thousands; EM can then take "shares the common
    value" for its match class. Halving ``max_block_size`` (default rules, re-derived for
    the smaller size, without near neighbours in the purged blocks: those are look-alikes
    too) until the model no longer drifts, down to
    :data:`MIN_TIGHT_BLOCK_SIZE`, keeps the pairs that small blocks propose, which are the
    duplicates. If every size drifts, the first fit is kept (and its warning stands)."""
    first = (scored, stats, max_block_size)
    size = max_block_size
    while size // 2 >= MIN_TIGHT_BLOCK_SIZE:
        size //= 2
        pairs, st, _ = _block(data, None, size, None, near_neighbours=0)
        cmp = _features(data, pairs, cfg, None, rng)
        sc = _score(data, pairs, cmp, cfg, rng, None, st)
        if not sc.model.drifted_:
            st.tightened_from = max_block_size
            return sc, st, size
    return first


def _compete(data: _Records, sc: _Scored, cfg: _ScoringConfig) -> None:
    """Two or more duplicate-free tables (``link_only``) scored by Fellegi-Sunter: each pair's
    probability with its records' other candidates competing for them
    (:func:`~trustlab.er.scoring.one_to_one_log_odds`). The pair model scores a pair on its
    own; a record with several plausible candidates in the other table (near-identical product
    offers) matches at most one of them, so none is as likely as it looks alone, unless the
    others are claimed by better partners. The per-field weights (``field_weights``) stay the
    pair model's; the probabilities and the clustering weights take the competition in. Pairs
    at log-odds -30 or below (most of the candidates) are left out: competition only lowers
    log-odds, their clustering weight is already the floor (:func:`to_weights` clips at -12), and
    their odds (< 1e-13 each) would not move anyone else's."""
    if sc.supervised or sc.fw is None or data.link is None or data.link.link_type != "link_only" or not len(sc.pairs):
        return
    base = sc.model.log_odds_from_field_weights(sc.fw)
    live = np.flatnonzero(base > -30.0)
    lo = base.copy()
    if len(live):
        lo[live], _ = one_to_one_log_odds(sc.pairs[live], base[live], data.link.codes)
    sc.prob = 1.0 / (1.0 + np.exp(-np.clip(lo, -50, 50)))
    sc.w = to_weights(sc.prob, cfg.weights)


#: the clusters re-estimate Fellegi-Sunter's ``m`` (:func:`_refit_from_clusters`) when the pairs
#: they join against their own score (``p < 0.5``) carry at least this share of the fitted
#: matches: ``Σ (1 − p)`` over those pairs over ``Σ p`` (jedai_cora 0.027, its simulated larger
#: files 0.05–0.08, csv_example 0.017, restaurant 0.009; heuristic, stop 48)
REFIT_HIDDEN_SHARE = 0.02
#: at most this many re-estimates (each followed by a clustering)
REFIT_ROUNDS = 2


def _refit_from_clusters(data: _Records, sc: _Scored, cr: ClusterResult, scoring: _ScoringConfig,
                         clustering: _ClusteringConfig, started: float) -> tuple[ClusterResult, int]:
    """Fellegi-Sunter's ``m`` re-estimated from the clusters, the pairs re-scored and clustered
    again (at most :data:`REFIT_ROUNDS` times), where the clustering joins pairs against their
    scores (:data:`REFIT_HIDDEN_SHARE`); see :meth:`~trustlab.er.scoring.FSModel.m_from_clusters`.
    The re-scored pairs are clustered with log-odds weights (``weights="logit"``): the
    re-estimate's gain needs them (stop 48: with ``p − 0.5`` jedai_cora gains nothing). Only after
    the xER clustering (no ``one_to_one``), which weighs a pair's negative evidence against the
    chains that would join it: connected components join every chain, and what they join
    against the scores is no evidence for ``m`` (restaurants sharing a hotel's address merged:
    F1 0.746 in ``test_shared_context_is_not_identity``, which asks > 0.88). Not for a
    supervised scorer. With an explicit ``time_limit`` (wall time of the whole call) a round
    runs only while at least as much time is left as the clustering before it took, so a
    re-clustering is never cut shorter than the one it would replace. Heuristic. Returns the
    clustering and the number of re-estimates made (``cr`` itself and 0 when nothing is
    re-estimated). ``started``: when the first clustering began (``time.perf_counter()``)."""
    if sc.supervised or sc.fw is None or not len(sc.pairs) or sc.model.m_ is None:
        return cr, 0
    if clustering.method != "xer" or clustering.one_to_one is not False:
        return cr, 0
    mdl = sc.model
    logit = replace(scoring, weights="logit")
    rounds = 0
    took = time.perf_counter() - started  # the last clustering's wall time
    for _ in range(REFIT_ROUNDS):
        if clustering.time_limit is not None and clustering.time_left() < took:
            break  # what is left would cut the re-clustering shorter than the last one
        labels = np.asarray(cr.labels)
        p = sc.prob
        hidden = (labels[sc.pairs[:, 0]] == labels[sc.pairs[:, 1]]) & (p < 0.5)
        if float((1.0 - p[hidden]).sum()) < REFIT_HIDDEN_SHARE * max(float(p.sum()), 1e-9):
            break
        forced = mdl._forced(mdl.key_states(data.df, sc.pairs)) if mdl.forcing_ else None
        m = mdl.m_from_clusters(mdl.levels(sc.fm), p, sc.fw, hidden, forced)
        del forced
        if m is None:
            break
        mdl.m_ = m
        sc.fw = mdl.field_weights(data.df, sc.pairs, sc.fm)
        sc.prob = mdl.proba_from_field_weights(sc.fw)
        sc.w = to_weights(sc.prob, "logit")
        _compete(data, sc, logit)  # link_only: a record's candidates compete (one-to-one)
        started = time.perf_counter()
        cr = clustering.cluster(data.n, sc, sources=data.sources)
        took = time.perf_counter() - started
        rounds += 1
    return cr, rounds


def _estimate_completeness(data: _Records, sc: _Scored, stats: BlockingStats, max_block_size: int) -> None:
    """Pair completeness of the default blocking rules, estimated without the truth
    from how the rules overlap on the pairs Fellegi-Sunter calls matches."""
    if not sc.supervised and len(stats.rules) > 1 and len(sc.pairs):
        stats.estimated_pair_completeness = estimate_pair_completeness(
            rule_hits(data.df, stats.rules, sc.pairs, max_block_size=max_block_size), sc.prob > 0.5)


def _complete(data: _Records, sc: _Scored, cfg: _ScoringConfig, stats: BlockingStats, extra: np.ndarray) -> None:
    """Compare and score ``extra``, the pairs inside positive components of up to
    ``complete_components`` records that blocking missed, and append them to ``sc``."""
    if not len(extra):
        return
    fx = compare(data.df, extra, data.fields.fields, only=sc.only)
    if sc.fw is not None:  # Fellegi-Sunter: the probabilities come from the field weights
        fwx = sc.model.field_weights(data.df, extra, fx)
        px = sc.model.proba_from_field_weights(fwx)
        extend_rows(sc, "fw", fwx)
        del fwx
    else:
        px = sc.predict(data.df, extra, fx)
    # appended in place where nothing else holds the arrays (the features and field weights of
    # every pair are not held twice), in pieces: a signal waits for one
    extend_rows(sc, "pairs", extra)
    extend_rows(sc, "prob", px)
    extend_rows(sc, "w", to_weights(px, cfg.weights))
    extend_rows(sc.fm, "X", fx.X)
    stats.n_completed_pairs = int(len(extra))


def _evaluate(data: _Records, sc: _Scored, cr: ClusterResult, cfg: _ClusteringConfig,
              stats: BlockingStats) -> tuple[dict | None, dict]:
    """Stage 8 (report): metrics against the truth, and the baselines on the same scores."""
    metrics = None
    truth = data.truth.astype(str) if data.truth is not None else None
    if truth is not None:
        metrics = evaluate(cr.labels, truth)
        metrics["pair_completeness"] = stats.pair_completeness
    baselines: dict[str, Any] = {}
    for m in cfg.compare_methods:
        if m == cfg.method:
            continue
        tb = time.perf_counter()
        crb = cfg.cluster(data.n, sc, m)
        entry: dict[str, Any] = {"n_entities": int(crb.labels.max()) + 1, "seconds": time.perf_counter() - tb}
        if truth is not None:
            entry.update(evaluate(crb.labels, truth))
        baselines[m] = entry
    return metrics, baselines


def _result(data: _Records, sc: _Scored, cr: ClusterResult, stats: BlockingStats, seconds: dict,
            evaluation: tuple, ccfg: _ClusteringConfig, scfg: _ScoringConfig, max_block_size: int,
            source_col: str) -> Resolution:
    """Stage 8 (report): the :class:`Resolution`, back in the caller's row order."""
    n, order, link, df = data.n, data.order, data.link, data.df
    inv = np.empty(n, np.int64)
    inv[order] = np.arange(n)
    cr.labels = cr.labels[inv]
    cr.component = cr.component[inv]
    pairs = np.empty(sc.pairs.shape, order.dtype) if len(sc.pairs) else sc.pairs
    for a, b in spans(len(sc.pairs)):  # rows sorted in pieces (one call over 8M pairs: 0.3 s of CPU)
        pairs[a:b] = np.sort(order[sc.pairs[a:b]], axis=1)
    id_col = link.id_col if link is not None else data.id_col
    link_type = link.link_type if link is not None else "dedupe_only"
    return Resolution(
        ids=df[id_col].to_numpy()[inv], entity=cr.labels, id_col=id_col, pairs=pairs, prob=sc.prob,
        weights=sc.w, features=sc.fm, clusters=cr, blocking=stats, seconds=seconds, metrics=evaluation[0],
        baselines=evaluation[1], model=sc.model, field_weights=sc.fw, field_report=data.fields, order=order,
        source=df[link.source_col].to_numpy()[inv] if link else None, source_col=link.source_col if link else None,
        link_type=link_type, records=(data.raw if data.raw is not None else df).iloc[inv].reset_index(drop=True),
        column_pairing=link.pairing if link is not None else None,
        settings={"method": ccfg.method, "weights": scfg.weights, "threshold": ccfg.threshold,
                  "max_block_size": max_block_size, "time_limit": ccfg.time_limit, "id_col": id_col,
                  "n_training_records": n, "link_type": link_type, "source_col": source_col,
                  "one_to_one": ccfg.one_to_one if isinstance(ccfg.one_to_one, bool) else list(ccfg.one_to_one)},
    )


@validate_params(
    {
        "records": [object],
        "labels": [str, "mapping", "array-like", None],
        "truth": [str, "mapping", "array-like", None],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        "settings": [ResolveSettings, "mapping", None],
        # the settings' own constraints, declared once in ResolveSettings (``model`` also
        # takes a saved model here, so resolve checks it itself)
        **{k: v for k, v in ResolveSettings.constraints().items() if k != "model"},
    }
)
def resolve(
    records: Any,
    *,
    settings: ResolveSettings | Mapping[str, Any] | None = None,
    id_col: str | None = UNSET,
    fields: Any = UNSET,
    labels: Any = None,
    truth: Any = None,
    method: str = UNSET,
    blocking: Sequence[str] | str | None = UNSET,
    max_block_size: int = UNSET,
    scorer: str = UNSET,
    model: Any = UNSET,
    C: float = UNSET,
    train_fraction: float = UNSET,
    weights: str = UNSET,
    threshold: float | None = UNSET,
    time_limit: float | None = UNSET,
    M: int = UNSET,
    solver_options: Mapping[str, Any] | None = UNSET,
    compare_methods: Sequence[str] = UNSET,
    complete_components: int = UNSET,
    random_state: Any = 0,
    progress: bool = False,
    client: Any = None,
    link_type: str | None = UNSET,
    source_col: str = UNSET,
    existing: Any = None,
    one_to_one: bool | Sequence[str] = UNSET,
    column_map: Mapping[str, str] | None = UNSET,
) -> Resolution:
    """Resolve records into entities, with the evidence for every merge.

    records → blocking → pairwise scoring → signed-weight graph (threshold ``T``) →
    clique partitioning (``method="xer"``) → entity ids + explanations → evaluation.

    Parameters
    ----------
    records : DataFrame, pyarrow Table, polars DataFrame or path
        One row per record (CSV, ``.csv.gz`` or parquet path, or a table: pyarrow and
        polars tables, or anything with ``to_pandas()``, are converted to pandas first).
        A Dask DataFrame or a directory of parquet / CSV files is resolved with every
        stage on Dask (:func:`trustlab.er.distributed.resolve_distributed`, on ``client``;
        unsupervised, one table) and a
        :class:`~trustlab.er.distributed.DistributedResolution` is returned, its entities
        written as partitioned parquet.
    settings : ResolveSettings or dict, optional
        The settings of the run (:class:`~trustlab.er.ResolveSettings`, or its
        ``to_dict()``). Every keyword below except ``labels``, ``truth``, ``existing``,
        ``random_state``, ``progress``, ``client`` (and ``model`` when it is a saved
        model) is a shortcut for one of its fields, with its default there; a keyword
        given beside ``settings`` wins (``resolve(r, settings=s, method=m)`` is
        ``resolve(r, settings=s.replace(method=m))``). The settings used are
        ``Resolution.resolve_settings`` (and :func:`~trustlab.er.model.save_model`
        writes them).
    id_col : str, optional
        Unique record id column (default: a column named ``id``, else the row number).
    fields : None, list, dict or str
        Columns to compare and their kinds (``{"name": "name", "zip": "exact"}``,
        ``"name:name,zip:exact"``); inferred when None.
    labels : None, str, mapping or DataFrame
        Training labels: a column / mapping of entity ids (a ``train_fraction`` share of
        the labelled candidate pairs trains the model, as in the xER paper's 50 % split),
        or a pair table ``(id_l, id_r, match)``. Without labels the scorer is
        unsupervised Fellegi–Sunter (EM).
    truth : None, str or mapping
        True entity ids for evaluation (metrics land in ``Resolution.metrics``).
    method : {"xer", "connected_components", "hierarchical"}
    blocking : list of str, optional
        Blocking rules (see :mod:`trustlab.er.blocking`); default: all pairs for
        up to 1,500 records, else token/key blocking on the fields.
    max_block_size : int
        Block purging size: blocks with more records are dropped. With the default
        blocking (``blocking=None``) and Fellegi-Sunter scoring, a model whose matches
        drift to look-alikes (``FSModel.drifted_``) is refitted with this size halved,
        down to :data:`MIN_TIGHT_BLOCK_SIZE`; the size used is
        ``Resolution.settings["max_block_size"]`` and ``Resolution.blocking.tightened_from``
        records the one asked for.
    scorer : {"auto", "supervised", "fellegi_sunter"}
    model : {"logistic", "ridge"}, or a saved model
        Supervised model kind; or a fitted model to apply without training: a path to a
        model JSON (:func:`trustlab.er.model.save_model`, CLI ``--save-model``), its
        dict, an :class:`~trustlab.er.model.ERModel` or an earlier :class:`Resolution`.
        Its fields, blocking rules, scorer, weights and threshold are used.
    existing : DataFrame or path, optional
        With a saved ``model``: an earlier output (ids, ``entity_id`` and the fields) to
        resolve ``records`` against incrementally; existing entity ids stay stable (they
        change only when new records merge entities; see :mod:`trustlab.er.incremental`).
    weights : {"centered", "logit"}
        Map probabilities to signed weights (``p - 0.5``, the default, or log-odds). Where
        Fellegi-Sunter's ``m`` is re-estimated from the clusters (many pairs joined against
        their own score; :func:`_refit_from_clusters`), the re-scored pairs are clustered with
        log-odds weights whatever this says (heuristic, stop 50); ``Resolution.settings``
        then records ``"weights": "logit"`` and ``"cluster_refits"`` the number of re-estimates.
    threshold : float, optional
        xER blocking threshold T on the weights (pairs below it are dropped).
    time_limit : float, optional
        Wall-clock seconds for the whole call (CLI ``--time-limit``): reading, blocking
        and scoring run first (they are not interrupted) and the clustering's partition
        solves get what is left, shared by their components (at least 0.05 s: then the
        heuristic's partition, status ``"time_limit"``). Default None: the partition solves
        get a deterministic **work budget**, :func:`~trustlab.er.defaults.default_time_limit`
        of the largest component in reference seconds of counted work (search rounds, LP
        and MIP work, pricing nodes: ``work_limit`` of :func:`trustlab.solvers.partition`),
        about that many seconds on a quiet machine (approximate), so the same input gives
        the same entities and statuses however loaded the machine is; a wall-clock safety
        stop at 4x that plus 30 s ends a run far slower than that, and a component it
        ended reports ``safety_stop`` (only then can the load change the answer).
    M, solver_options
        Passed to :func:`trustlab.solvers.partition` (``solver_options`` is a dict of
        extra keywords, e.g. ``{"method": "qsp"}`` is spelled ``solver_method`` there).
    complete_components : int
        After scoring, every pair inside a positive-weight component of up to this
        many records that blocking missed is scored too (0 disables). Blocking finds
        candidates; the clustering step then sees all the evidence inside each
        component, so a true entity split by blocking can still be one clique. In a
        larger component, the pairs of records whose positive neighbourhoods overlap
        (:data:`~trustlab.er.scoring.NEIGHBOUR_OVERLAP`) are scored instead, in up to
        :data:`COMPLETION_ROUNDS` rounds (heuristic; within what the default pair budget
        leaves). The components completed whole add at most
        :func:`~trustlab.er.scoring.completion_pair_budget` pairs (what the pair budget
        leaves after the candidates, and at least one per record), the smallest first; the
        distributed run (``client=``) completes the same ones. Default
        :data:`~trustlab.er.defaults.COMPLETE_COMPONENTS` (2,000 records: a pair never
        compared cannot share a cluster, and a blocked table of a little more than
        :data:`~trustlab.er.defaults.ALL_PAIRS_MAX` records can be one positive component).
    compare_methods : sequence of str
        Baseline clustering methods to run on the same scores (metrics in
        ``Resolution.baselines`` when ``truth`` is given).
    random_state : int, Generator or None, default 0
        Seed of the training split and of the random pairs Fellegi–Sunter estimates
        u from. The default 0 makes a run reproducible; None draws fresh OS entropy
        (see the README's Guarantees, *Randomness*).
    progress : bool
        Show a progress bar over the stages.
    client : dask.distributed.Client, optional
        Ship the partition layer's components (those with more than 6 records) to a
        Dask cluster (:func:`trustlab.partition`'s ``client=``, the one name of the Dask
        client across trustlab). Blocking, scoring and the small components run locally
        (vectorised / Numba-parallel) for in-memory records; with a Dask DataFrame or a
        directory as ``records`` every stage runs on this cluster.
    link_type : {"dedupe_only", "link_only", "link_and_dedupe"}, optional
        With several tables (``records`` a list, tuple or dict of DataFrames / paths):
        ``"link_only"`` compares only records of different tables and never puts two
        records of one table in an entity (needs ``method="xer"``);
        ``"link_and_dedupe"`` (the default for several tables) compares all pairs. With
        one table, ``"link_only"`` reads the table of each record from ``source_col``.
        See :mod:`trustlab.er.linking`.
    source_col : str
        The source column added to (or read from) the records; Splink's name by default.
        The result's :meth:`Resolution.to_frame` has it first, then the id column (ids
        need to be unique only within their table) and ``entity_id``.
    one_to_one : bool or sequence of str, default False
        The tables are each duplicate-free (True), or those named are: no entity holds two
        records of such a table, solved exactly by
        :func:`~trustlab.er.one_to_one.cluster_one_to_one` (two tables: a maximum-weight
        assignment, proven optimal by its LP dual at any size; more tables, or
        ``link_and_dedupe`` with some tables not duplicate-free: clique partitioning with
        the same-table pairs forbidden). Needs several tables (or ``link_type`` with
        ``source_col``) and ``method="xer"``; ``summary()["one_to_one"]`` names the solver.
    column_map : mapping, optional
        With several tables whose headers differ: ``{first table's column: other
        table's column}`` pairs to compare. The other columns are paired by name
        (case, punctuation and URL prefixes ignored: ``…/ontology#name`` and
        ``…/property/name`` are both ``name``) and then by content (token overlap and
        value type); see :func:`trustlab.er.linking.pair_columns`. Unpaired columns are
        kept in the output but not compared. The pairing is
        ``Resolution.column_pairing`` (and in ``summary()``).

    Returns
    -------
    Resolution
        (a :class:`~trustlab.er.distributed.DistributedResolution` for a Dask DataFrame or
        a directory as ``records``)

    Notes
    -----
    Stages (``Resolution.seconds`` times each; one module each, :data:`STAGES`): read the
    records, infer the fields and put the rows in canonical order; block; compute
    comparison features (``"features"``: of the candidate pairs and of the pairs the scorer
    is fitted on, the random pairs of Fellegi–Sunter or the labelled pairs); fit the scorer
    and score the pairs; cluster; evaluate against the truth and run the baselines;
    return the result in the input's row order.

    What is exact and what is not: the clustering of each positive-weight component is
    exact (closed form for 1–2 records, enumeration of every set partition for 3–6, the
    partition layer's exact ``cpp`` up to 400 records, with status and gap per component
    in the explanations); larger components use the partition layer's heuristic
    (status ``"feasible"``, an upper bound is still reported). Blocking with purging may
    miss true pairs (``pair_completeness`` says how many when the truth is known), and the
    scores are model estimates: Fellegi–Sunter assumes fields agree independently given
    the match status, so its probabilities are approximate.

    Examples
    --------
    >>> import trustlab, pandas as pd
    >>> df = pd.DataFrame({"id": [1, 2, 3, 4],
    ...                    "name": ["ann lee", "anne lee", "bob ray", "bob rae"],
    ...                    "ent": [0, 0, 1, 1]})
    >>> r = trustlab.resolve(df, id_col="id", fields={"name": "name"}, labels="ent",
    ...                      truth="ent", train_fraction=1.0, method="connected_components")
    >>> r.metrics["f1"]
    1.0
    """
    from trustlab._tables import as_pandas_table
    from trustlab.er.distributed import is_distributed_input
    from trustlab.er.incremental import resolve_incremental
    from trustlab.er.model import load_model
    from trustlab.er.settings import is_saved_model

    saved = is_saved_model(model)
    s = ResolveSettings.merge(
        settings, func="resolve", id_col=id_col, fields=fields, method=method, blocking=blocking,
        max_block_size=max_block_size, scorer=scorer, model=UNSET if saved else model, C=C,
        train_fraction=train_fraction, weights=weights, threshold=threshold, time_limit=time_limit, M=M,
        solver_options=solver_options, compare_methods=compare_methods, complete_components=complete_components,
        link_type=link_type, source_col=source_col, one_to_one=one_to_one, column_map=column_map)
    if is_distributed_input(records):  # a Dask DataFrame or a directory of files: every stage on Dask
        from trustlab.er.distributed import check_distributed_options, resolve_distributed

        check_distributed_options(labels=labels, truth=truth, scorer=s.scorer, model=model if saved else s.model,
                                  link_type=s.link_type, existing=existing, one_to_one=s.one_to_one,
                                  column_map=s.column_map, compare_methods=s.compare_methods)
        return resolve_distributed(records, client=client, id_col=s.id_col, fields=s.fields, truth=truth,
                                   blocking=s.blocking, max_block_size=s.max_block_size, method=s.method,
                                   weights=s.weights, threshold=s.threshold, time_limit=s.time_limit, M=s.M,
                                   solver_options=s.solver_options, complete_components=s.complete_components,
                                   random_state=random_state, progress=progress)
    if s.one_to_one is not False and existing is not None:
        raise ValueError("one_to_one=... is not supported with existing=... (incremental resolution); "
                         "resolve the tables together instead")
    # a pyarrow or polars table (or anything with to_pandas()) is read as pandas here, once
    records = table if (table := as_pandas_table(records)) is not None else records
    fitted = load_model(model) if saved else None
    if existing is not None:
        if fitted is None:
            raise ValueError("existing=... needs model=... (a saved model or a Resolution) to score the new records")
        return resolve_incremental(records, existing, fitted, id_col=s.id_col, threshold=s.threshold,
                                   time_limit=s.time_limit, complete_components=s.complete_components)
    run, fields = s, s.fields
    if fitted is not None:  # apply a saved model: its fields, blocking, scorer, weights, threshold; no training
        fields = fitted.fields if fields is None else fields
        run = s.replace(weights=fitted.settings.get("weights", s.weights), model="logistic",
                        threshold=fitted.settings.get("threshold") if s.threshold is None else s.threshold)
        labels = None
    t0 = time.perf_counter()
    clustering, scoring = _configure(run, client)
    clustering = replace(clustering, started=t0)  # time_limit: wall time of the whole call
    rng = check_random_state(random_state)
    data = _read_records(records, id_col=s.id_col, fields=fields, labels=labels, truth=truth,
                         link_type=s.link_type, source_col=s.source_col, method=s.method, column_map=s.column_map,
                         one_to_one=clustering.one_to_one)
    stage = _Stages(progress)
    try:
        max_block_size = s.max_block_size
        with stage("blocking"):
            pairs, stats, default_blocking = _block(data, s.blocking, max_block_size, fitted)
        # each comparison's work per record (tokens, TF-IDF rows, value codes) is done once for
        # the candidate pairs, the random pairs, the completed components and a tightened
        # blocking (the same features; freed before clustering)
        with prepared_records():
            with stage("features"):
                compared = _features(data, pairs, scoring, fitted, rng)
            supervised = compared.supervised
            with stage("scoring"):
                scored = _score(data, pairs, compared, scoring, rng, fitted, stats)
                tighten = default_blocking and not supervised and scored.model.drifted_
                if not tighten and not supervised and fitted is None:
                    scored.model.warn_if_degenerate(stacklevel=4)  # the caller of resolve
            if tighten:  # blocks, compares and scores again with smaller blocks (default blocking only)
                t_retry = time.perf_counter()
                scored, stats, max_block_size = _tighten_blocking(data, scored, stats, max_block_size, scoring,
                                                                  rng)
                stage.seconds["tightened_blocking"] = time.perf_counter() - t_retry
                scored.model.warn_if_degenerate(stacklevel=4)  # the caller of resolve
        if default_blocking:
            _estimate_completeness(data, scored, stats, max_block_size)
        _compete(data, scored, scoring)  # link_only: a record's candidates compete (one-to-one)
        with stage("clustering"):
            t_cluster = time.perf_counter()
            cr = clustering.cluster(data.n, scored, sources=data.sources)
            refits = 0
            if fitted is None:  # a saved model is applied as it is
                cr, refits = _refit_from_clusters(data, scored, cr, scoring, clustering, t_cluster)
            if refits:  # the weights the clustering used (and a saved model applies)
                scoring = replace(scoring, weights="logit")
        with stage("evaluation"):
            evaluation = _evaluate(data, scored, cr, clustering, stats)
    finally:
        stage.close()
    stage.seconds["total"] = time.perf_counter() - t0
    res = _result(data, scored, cr, stats, stage.seconds, evaluation, clustering, scoring, max_block_size,
                  s.source_col)
    res.settings["cluster_refits"] = refits
    res.resolve_settings = s
    return res
