"""Peers for ``bench/er_real.py``: Splink 5 (DuckDB) and recordlinkage (ECM), untuned.

Each tool gets ONE generic recipe that adapts to the columns of the file the way a user who has
read the tool's tutorial would, without looking at the truth and without anything tuned to a
data set:

* read the file (delimiter taken from the header line: ``|``, tab, ``;`` or ``,``; UTF-8 else
  latin-1), every field as text;
* the record key and truth columns are never compared (names ``id``, ``rec_id``, ``record_id``,
  ``unique_id``, ``person_id``; ``Entity Id``/``True Id``/``cluster``), nor columns that are
  mostly empty (< 20 % filled) or constant; for two tables only the columns both have;
* cleaning: lower-case, runs of white space collapsed, surrounding punctuation stripped, empty
  -> null;
* each column gets a kind from its values: *category* (<= 100 distinct values or < 5 % distinct),
  *number* (decimal numbers), *code* (one token with digits: phones, post codes, dates, ids),
  *name* (<= 4 words, <= 25 characters) or *text* (anything longer);
* blocking: the compared name / code / text columns, most
  selective first (distinct share x fill rate); exact value for name and code columns, the
  first 6 characters for text, then the first 4 characters of name columns; a rule is kept
  when it yields at most 2,000,000 pairs (the "check the number of comparisons" step of the
  tutorials); at most 3 rules; two columns together when fewer than 2 single rules fit.

Splink: ``NameComparison`` for names, ``JaroWinklerAtThresholds([0.9, 0.7])`` for text,
``LevenshteinAtThresholds([1, 2])`` for codes, ``ExactMatch`` for categories, absolute
difference within 1 % / 10 % of the column's median magnitude for numbers;
``estimate_probability_two_random_records_match`` from exact agreement on the two most
selective name / code / text columns (recall 0.7), ``estimate_u_using_random_sampling(1e6)``, one
EM session blocked on exact agreement on each of those two columns (the tutorials' pattern: a
rule on an identifying column, so that matches are a fair share of the session's pairs; a
session that fails is dropped), ``predict(0.5)``; dedupe: ``cluster_pairwise_predictions_at_threshold(0.5)``
(connected components); link (two duplicate-free tables): ``cluster_using_single_best_links(0.5)``
with both tables declared duplicate-free (Splink's one-to-one clustering).
Files with at most 2,000 records (dedupe) or 2,000,000 cross pairs (link) are scored on all
pairs (no blocking rules).

recordlinkage: the same blocking rules (``Index.block`` on derived key columns; the tutorials
block even small files, and a full index with ECM collapses: see ``PEERS_RL_FULL`` below),
Jaro-Winkler >= 0.85 on name and text, Levenshtein >= 0.85 on codes, exact on categories,
numeric step within 1 % of the median magnitude; ``ECMClassifier``; dedupe: matches joined by
connected components (recordlinkage has no clustering step); link: ``OneToOneLinking`` (greedy)
over the ECM matches, most probable first, then components.

Variants kept for comparison (environment): ``PEERS_RL_FULL=1`` gives recordlinkage a full index
on small files; ``PEERS_EM=rules`` runs Splink's EM sessions on the first two prediction
blocking rules instead; ``PEERS_LINK_CC=1`` joins link matches by connected components (no
one-to-one step) in both tools.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

ID_NAMES = {"id", "rec_id", "record_id", "unique_id", "person_id"}
TRUTH_NAMES = {"entity id", "entity_id", "true id", "true_id", "cluster", "cluster_id"}
FULL_DEDUPE_MAX = 2000          # records: compare every pair below this
FULL_LINK_MAX = 2_000_000       # cross pairs: compare every pair below this
MIN_FILL = 0.2                  # a column filled in fewer rows (of either table) is not compared
RULE_PAIR_CAP = 2_000_000       # a blocking rule yielding more pairs is not used
MAX_RULES = 3
# Variants measured for the report (not the default): recordlinkage with a full index on small files, and
# Splink's EM sessions on the prediction blocking rules instead of exact agreement on the top two columns.
FULL_INDEX_RL = os.environ.get("PEERS_RL_FULL") == "1"
EM_ON_BLOCKING_RULES = os.environ.get("PEERS_EM") == "rules"
LINK_CONNECTED_COMPONENTS = os.environ.get("PEERS_LINK_CC") == "1"


# ----------------------------------------------------------------------------- reading
def read_table(path) -> pd.DataFrame:
    """Every field as text; the delimiter is the most frequent of ``| \\t ; ,`` in the header."""
    path = Path(path)
    for enc in ("utf-8-sig", "latin-1"):
        try:
            with open(path, encoding=enc) as fh:
                head = fh.readline()
            break
        except UnicodeDecodeError:
            continue
    sep = max(["|", "\t", ";", ","], key=head.count)
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding=enc)


def _safe(names):
    """SQL-safe, unique column names (URL column names keep their last path segment)."""
    out, seen = [], set()
    for c in names:
        s = re.split(r"[/#]", str(c).rstrip("/#"))[-1]
        s = "c_" + (re.sub(r"[^0-9a-zA-Z]+", "_", s).strip("_").lower() or "col")
        base, k = s, 2
        while s in seen:
            s, k = f"{base}_{k}", k + 1
        seen.add(s)
        out.append(s)
    return out


def _clean(s: pd.Series) -> pd.Series:
    s = s.astype(str).str.lower().str.replace(r"\s+", " ", regex=True).str.strip(" ,.;:'\"")
    return s.where(s != "", None)


def _is_key(col) -> bool:
    c = str(col).strip().lower()
    return c in ID_NAMES or c in TRUTH_NAMES or c.startswith("unnamed:")


# ----------------------------------------------------------------------------- preparation
class Prepared:
    """The cleaned tables (positional index), the compared columns with their kinds, the rules."""

    def __init__(self, inputs, keys):
        raw = [read_table(p) for p in inputs]
        self.link = len(raw) == 2
        self.stems = [Path(p).stem for p in inputs]
        self.n = [len(t) for t in raw]
        self.rows = self._key_rows(raw, keys) if self.link else None
        common = [c for c in raw[0].columns if not _is_key(c) and all(c in t.columns for t in raw)]
        names = dict(zip(common, _safe(common)))
        self.tables = [pd.DataFrame({names[c]: _clean(t[c]) for c in common}).reset_index(drop=True) for t in raw]
        self.kinds, self.stats = {}, {}
        allv = pd.concat(self.tables, ignore_index=True)
        for c in names.values():
            covs = [t[c].notna().mean() for t in self.tables]
            v = allv[c].dropna()
            if min(covs) < MIN_FILL or v.nunique() < 2:
                continue
            self.kinds[c] = self._kind(v)
            self.stats[c] = {"cov": min(covs), "ds": v.nunique() / len(v)}
        for t in self.tables:
            for c in [c for c in t.columns if c not in self.kinds]:
                del t[c]
        self.numbers = {}
        for c, k in self.kinds.items():
            if k == "number":
                for t in self.tables:
                    t[c] = pd.to_numeric(t[c], errors="coerce")
                med = float(np.nanmedian(np.abs(pd.concat([t[c] for t in self.tables]).to_numpy(float))))
                self.numbers[c] = med if med > 0 else 1.0
        self.full = (self.n[0] * self.n[1] <= FULL_LINK_MAX) if self.link else self.n[0] <= FULL_DEDUPE_MAX
        self.rules = self._rules()

    @staticmethod
    def _kind(v: pd.Series) -> str:
        nd, ds = v.nunique(), v.nunique() / len(v)
        if nd <= 100 or ds < 0.05:
            return "category"
        num = pd.to_numeric(v, errors="coerce")
        if num.notna().mean() >= 0.95 and v.str.contains(".", regex=False).mean() >= 0.3:
            return "number"
        tokens = v.str.count(" ").mean() + 1
        if tokens <= 1.5 and v.str.contains(r"\d").mean() >= 0.5:
            return "code"
        if tokens <= 4 and v.str.len().mean() <= 25:
            return "name"
        return "text"

    def _key_rows(self, raw, keys):
        """Global row (A rows then B rows) of every key ``(stem, id)``."""
        pos = {}
        off = 0
        for stem, t in zip(self.stems, raw):
            want = {str(i) for s, i in keys if s == stem}
            col = next((c for c in t.columns if set(t[c].astype(str).str.strip()) >= want and t[c].is_unique), None)
            ids = t[col].astype(str).str.strip() if col is not None else pd.Series(range(len(t))).astype(str)
            pos.update({(stem, i): off + r for r, i in enumerate(ids)})
            off += len(t)
        return np.array([pos[(s, str(i))] for s, i in keys])

    def block_key(self, rule, t: pd.DataFrame) -> pd.Series:
        parts = []
        for c, k in rule:
            s = t[c]
            parts.append(s if k is None else s.str[:k])
        out = parts[0]
        for p in parts[1:]:
            out = out + "\x1f" + p
        return out

    def n_pairs(self, rule) -> int:
        vc = [self.block_key(rule, t).dropna().value_counts() for t in self.tables]
        if self.link:
            a, b = vc[0].align(vc[1], fill_value=0)
            return int((a.astype(np.int64) * b.astype(np.int64)).sum())
        x = vc[0].to_numpy(np.int64)
        return int((x * (x - 1) // 2).sum())

    def _rules(self):
        cand = [c for c, k in self.kinds.items() if k in ("name", "code", "text")]
        cand.sort(key=lambda c: -self.stats[c]["ds"] * self.stats[c]["cov"])
        singles = [((c, 6 if self.kinds[c] == "text" else None),) for c in cand]
        singles += [((c, 4),) for c in cand if self.kinds[c] == "name"]
        rules = [r for r in singles if 0 < self.n_pairs(r) <= RULE_PAIR_CAP][:MAX_RULES]
        if len(rules) < 2:
            cols = cand + [c for c, k in self.kinds.items() if k == "category" and self.stats[c]["cov"] >= 0.3]
            for i, a in enumerate(cols):
                for b in cols[i + 1:]:
                    r = ((a, 6 if self.kinds[a] == "text" else None), (b, 6 if self.kinds[b] == "text" else None))
                    if len(rules) < 2 and 0 < self.n_pairs(r) <= RULE_PAIR_CAP:
                        rules.append(r)
        return rules

    def describe(self, full: bool) -> str:
        def rule(r):
            return "+".join(c if k is None else f"{c}[:{k}]" for c, k in r)

        cols = ", ".join(f"{c}:{k}" for c, k in self.kinds.items())
        blk = "all pairs" if full else "blocking " + " | ".join(rule(r) for r in self.rules)
        return f"{cols}; {blk}"

    def labels_from_pairs(self, left, right):
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = sum(self.n)
        g = coo_matrix((np.ones(len(left)), (np.asarray(left, np.int64), np.asarray(right, np.int64))), shape=(n, n))
        lab = connected_components(g, directed=False)[1]
        return lab[self.rows] if self.link else lab


# ----------------------------------------------------------------------------- Splink
def _splink_comparison(c, kind, scale):
    import splink.comparison_level_library as cll
    import splink.comparison_library as cl

    if kind == "category":
        return cl.ExactMatch(c)
    if kind == "name":
        return cl.NameComparison(c)
    if kind == "code":
        return cl.LevenshteinAtThresholds(c, [1, 2])
    if kind == "text":
        return cl.JaroWinklerAtThresholds(c, [0.9, 0.7])
    return cl.CustomComparison([cll.NullLevel(c), cll.ExactMatchLevel(c),
                                cll.AbsoluteDifferenceLevel(c, 0.01 * scale),
                                cll.AbsoluteDifferenceLevel(c, 0.1 * scale), cll.ElseLevel()],
                               output_column_name=c)


def _splink_rule(rule):
    from splink import block_on

    return block_on(*[c if k is None else f"substr({c}, 1, {k})" for c, k in rule])


def splink_run(inputs, keys):
    """Splink 5 (DuckDB), untuned tutorial recipe (module docstring); entity label per record."""
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    logging.getLogger("splink").setLevel(logging.ERROR)
    p = Prepared(inputs, keys)
    comps = [_splink_comparison(c, k, p.numbers.get(c, 1.0)) for c, k in p.kinds.items()]
    rules = [] if p.full else [_splink_rule(r) for r in p.rules]
    settings = SettingsCreator(link_type="link_only" if p.link else "dedupe_only", comparisons=comps,
                               blocking_rules_to_generate_predictions=rules,
                               retain_intermediate_calculation_columns=False, retain_matching_columns=False)
    db = DuckDBAPI()
    frames = []
    for i, t in enumerate(p.tables):
        d = t.copy()
        d.insert(0, "unique_id", np.arange(len(d), dtype=np.int64))
        frames.append(db.register(d, dataset_display_name=f"t{i}"))
    linker = Linker(frames if p.link else frames[0], settings, log_level=logging.ERROR)
    notes = []
    exact = sorted((c for c, k in p.kinds.items() if k in ("name", "code", "text")),
                   key=lambda c: -p.stats[c]["ds"] * p.stats[c]["cov"])[:2]
    try:
        linker.training.estimate_probability_two_random_records_match([block_on(c) for c in exact], recall=0.7)
    except Exception as exc:  # no deterministic match: Splink's default prior stays
        notes.append(f"prior: {type(exc).__name__}")
    linker.training.estimate_u_using_random_sampling(max_pairs=1e6, seed=0)
    em_rules = p.rules[:2] if EM_ON_BLOCKING_RULES else [((c, None),) for c in exact]
    for r in em_rules:
        snapshot = linker.misc.save_model_to_json()
        try:
            linker.training.estimate_parameters_using_expectation_maximisation(_splink_rule(r))
        except Exception as exc:  # a failed EM session is dropped (its partial state with it), as a user would
            notes.append(f"EM session skipped: {type(exc).__name__}: {str(exc)[:80]}")
            linker = Linker(frames if p.link else frames[0], snapshot, log_level=logging.ERROR)
    pred = linker.inference.predict(threshold_match_probability=0.5)
    if p.link and not LINK_CONNECTED_COMPONENTS:  # two duplicate-free tables: Splink's one-to-one clustering
        clusters = linker.clustering.cluster_using_single_best_links(pred, duplicate_free_datasets=["t0", "t1"],
                                                                     threshold_match_probability=0.5)
    else:
        clusters = linker.clustering.cluster_pairwise_predictions_at_threshold(pred, threshold_match_probability=0.5)
    out = clusters.as_pandas_dataframe()
    off = {"t0": 0, "t1": p.n[0]}
    src = out["source_dataset"].astype(str) if p.link else pd.Series(["t0"] * len(out))
    glob = src.map(off).to_numpy(np.int64) + out["unique_id"].to_numpy(np.int64)
    lab = np.arange(sum(p.n), dtype=np.int64) + 10**9  # a record the clustering did not return: a singleton
    codes = pd.factorize(out["cluster_id"].astype(str))[0]
    lab[glob] = codes
    pred_labels = lab[p.rows] if p.link else lab
    info = {"entities": int(len(set(pred_labels.tolist()))), "setup": p.describe(p.full),
            "pairs_scored_at_0.5": int(pred.as_pandas_dataframe().shape[0])}
    if notes:
        info["notes"] = notes
    return pred_labels, info


# ----------------------------------------------------------------------------- recordlinkage
def recordlinkage_run(inputs, keys):
    """recordlinkage ECM, untuned tutorial recipe (module docstring); entity label per record."""
    import recordlinkage as rl

    p = Prepared(inputs, keys)
    tabs = [t.copy() for t in p.tables]
    idx = rl.Index()
    if FULL_INDEX_RL and p.full:
        idx.full()
    else:
        for i, r in enumerate(p.rules):
            for t in tabs:
                t[f"_blk{i}"] = p.block_key(r, t)
            idx.block(f"_blk{i}")
    cmp = rl.Compare()
    for c, k in p.kinds.items():
        if k == "category":
            cmp.exact(c, c, label=c)
        elif k == "number":
            cmp.numeric(c, c, method="step", offset=0.01 * p.numbers[c], label=c)
        elif k == "code":
            cmp.string(c, c, method="levenshtein", threshold=0.85, label=c)
        else:
            cmp.string(c, c, method="jarowinkler", threshold=0.85, label=c)
    pairs = idx.index(*tabs)
    X = cmp.compute(pairs, *tabs).fillna(0).astype(int)
    ecm = rl.ECMClassifier(binarize=None)
    match = ecm.fit_predict(X)
    if p.link and not LINK_CONNECTED_COMPONENTS and len(match):
        # two duplicate-free tables: recordlinkage's one-to-one linking, most probable matches first
        prob = ecm.prob(X.loc[match])
        match = rl.OneToOneLinking().compute(prob.sort_values(ascending=False, kind="stable").index)
    left = match.get_level_values(0).to_numpy(np.int64)
    right = match.get_level_values(1).to_numpy(np.int64) + (p.n[0] if p.link else 0)
    lab = p.labels_from_pairs(left, right)
    return lab, {"entities": int(len(set(lab.tolist()))), "setup": p.describe(FULL_INDEX_RL and p.full),
                 "candidate_pairs": int(len(pairs)), "matches": int(len(match))}
