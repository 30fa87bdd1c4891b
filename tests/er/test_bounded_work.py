"""Bounded work in resolve (issue 28, item 4): wide tables and huge block limits are
refused or capped up front, before the expensive stages."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.er import defaults as D
from trustlab.er import resolve
from trustlab.er.blocking import block


def _words(rng, n, k=5):
    return ["".join(rng.choice(list("abcdefgh"), k)) for _ in range(n)]


def test_table_too_wide_for_inference_is_refused_up_front(monkeypatch):
    import trustlab.er.fields as F

    def boom(*a, **k):
        raise AssertionError("inference ran")

    monkeypatch.setattr(F, "infer_fields_report", boom)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"c{j}": _words(rng, 20) for j in range(D.MAX_INFER_COLUMNS + 1)})
    df.insert(0, "id", range(20))
    with pytest.raises(ValueError, match=r"columns; field inference looks at tables of at most 256"):
        resolve(df, id_col="id")


def test_many_inferred_fields_are_capped_with_a_warning(monkeypatch):
    monkeypatch.setattr(D, "MAX_INFERRED_FIELDS", 5)
    rng = np.random.default_rng(1)
    df = pd.DataFrame({f"c{j}": _words(rng, 30) for j in range(9)})
    df.insert(0, "id", range(30))
    with pytest.warns(UserWarning, match="only the first 5 are compared"):
        r = resolve(df, id_col="id")
    assert [f.column for f in r.field_report.fields] == [f"c{j}" for j in range(5)]
    roles = {c.column: c.role for c in r.field_report.choices}
    assert roles["c7"] == "excluded"


def test_pair_count_matches_the_pairs_made():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"name": [f"{a} {b}" for a, b in zip(rng.choice(["ann", "bob", "cy"], 300),
                                                            rng.choice(["lee", "ray"], 300))]})
    for cap in (5, 150, 1000):
        n = D.check_pair_budget(df, ["token:name"], cap, 1)
        made = block(df, ["token:name"], max_block_size=cap)
        assert n >= len(made)  # an upper bound (two tokens may give the same pair)
        assert D.check_pair_budget(df, ["token:name@4"], cap, 1) == 0 or cap < 4
    full = D.check_pair_budget(df, ["all"], 200, 1)
    assert full == 300 * 299 // 2 == len(block(df, ["all"]))


def test_huge_block_limit_is_refused_before_any_pair(monkeypatch):
    monkeypatch.setattr(D, "memory_budget", lambda: 50 * 2**20)  # 50 MiB left
    import trustlab.er.blocking as B

    def boom(*a, **k):
        raise AssertionError("pairs were made")

    monkeypatch.setattr(B, "_pairs_from_membership", boom)
    n = 3000
    df = pd.DataFrame({"id": range(n), "name": [f"smith {w}" for w in _words(np.random.default_rng(3), n, 6)]})
    msg = r"up to 4,4\d\d,\d\d\d candidate pairs .*50 MiB can be used.* Lower max_block_size"
    with pytest.raises(ValueError, match=msg):
        resolve(df, id_col="id", fields="name:name", blocking="token:name", max_block_size=100_000)


def _wide_people(n: int, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    first, last = _words(rng, 300, 6), _words(rng, 300, 7)
    df = pd.DataFrame({"id": range(n), "first": rng.choice(first, n), "last": rng.choice(last, n)})
    for j in range(10):  # a wide table: ten more coarse columns
        df[f"c{j}"] = rng.choice(["x", "y", "z"], n)
    return df


def test_default_blocking_fits_its_byte_budget_instead_of_refusing(monkeypatch):
    """A wide table whose default rules would not fit the memory left gets fewer pairs
    (a warning says so), not a refusal; its rules stay within default_pair_budget."""
    monkeypatch.setattr(D, "memory_budget", lambda: 40 * 2**20)  # 40 MiB left
    df = _wide_people(3000)
    with pytest.warns(UserWarning, match=r"default blocking kept to [\d,]+ candidate pairs instead of") as rec:
        r = resolve(df, id_col="id")
    assert any(w.filename == __file__ for w in rec if "default blocking kept to" in str(w.message))
    from trustlab.er.kinds import pair_width

    nf = pair_width(r.field_report.fields)  # the fields and the whole record's shared parts
    rules = r.blocking.rules
    assert D.check_pair_budget(r.records, rules, 200, nf) <= D.default_pair_budget(nf)
    assert 0 < r.blocking.n_candidate_pairs <= D.default_pair_budget(nf)
    assert r.summary()["blocking"]["pair_budget"] == r.blocking.pair_budget == D.default_pair_budget(nf)
    assert sum("default blocking kept to" in str(w.message) for w in rec) == 1  # computed once per resolve


def test_every_pair_only_when_the_pairs_fit_the_budget(monkeypatch):
    df = _wide_people(1200)
    assert D.default_rules(df.drop(columns="id"), [None] * 12) == ["all"]
    per = D.PAIR_BYTES + 12 * D.PAIR_FIELD_BYTES
    monkeypatch.setattr(D, "MAX_CANDIDATE_BYTES", 1200 * 1199 // 2 * per - 1)  # one byte short of every pair
    from trustlab.er.kinds import Field

    fields = [Field("first", "name"), Field("last", "name")] + [Field(f"c{j}", "exact") for j in range(10)]
    rules = D.default_rules(df.drop(columns="id"), fields)
    assert rules != ["all"]
    assert D.check_pair_budget(df, rules, 200, len(fields)) <= D.default_pair_budget(len(fields))


def test_pair_budget_is_the_same_whatever_memory_is_left_when_it_fits(monkeypatch):
    monkeypatch.setattr(D, "memory_budget", lambda: 64 * 2**30)
    big = D.default_pair_budget(40)
    monkeypatch.setattr(D, "memory_budget", lambda: 2 * D.MAX_CANDIDATE_BYTES)
    assert D.default_pair_budget(40) == big == D.MAX_CANDIDATE_BYTES // (D.PAIR_BYTES + 40 * D.PAIR_FIELD_BYTES)
    assert D.default_pair_budget(3) == 10_000_000


def _paths(sizes):
    """A path of positive pairs per component (consecutive records), components in order."""
    pairs, start = [], 0
    for s in sizes:
        pairs += [(start + i, start + i + 1) for i in range(s - 1)]
        start += s
    return np.array(pairs, np.int64), start


def test_component_completion_respects_its_pair_budget():
    """Completing components adds every missing pair inside them; with whole_pairs only the
    smallest components (all their pairs counted) that fit are completed — checked against a
    brute-force enumeration of the components' missing pairs."""
    from itertools import combinations

    from trustlab.er.scoring import _component_completion

    sizes = [10, 3, 5, 3, 40]
    P, n = _paths(sizes)
    w = np.ones(len(P))
    starts = np.cumsum([0] + sizes[:-1])

    def missing(which):
        out = set()
        for k in which:
            recs = range(starts[k], starts[k] + sizes[k])
            out |= {(a, b) for a, b in combinations(recs, 2) if b != a + 1}
        return out

    got = {tuple(p) for p in _component_completion(n, P, w, 1000).tolist()}
    assert got == missing(range(5))
    for budget, which in ((0, []), (3, [1]), (6, [1, 3]), (15, [1, 3]), (16, [1, 3, 2]), (60, [1, 3, 2]),
                          (61, [1, 3, 2, 0]), (10**6, range(5))):
        got = {tuple(p) for p in _component_completion(n, P, w, 1000, whole_pairs=budget).tolist()}
        assert got == missing(which), budget


def test_resolve_completes_components_within_the_pair_budget(monkeypatch):
    """resolve's completion step is bounded: the neighbour-overlap pairs by the default pair
    budget left after blocking, the components completed whole by that or one pair per record
    (``completion_pair_budget``), whichever is more."""
    import trustlab.er.pipeline as PL
    from trustlab.er import scoring

    seen = []
    real = scoring._component_completion

    def spy(*a, **k):
        seen.append((k.get("max_pairs"), k.get("whole_pairs")))
        return real(*a, **k)

    monkeypatch.setattr(PL, "_component_completion", spy)
    monkeypatch.setattr(PL, "default_pair_budget", lambda nf: 123)
    df = _wide_people(400)
    r = resolve(df, id_col="id", blocking="key:last")
    assert seen and all(m is not None and m <= 123 for m, _ in seen)
    assert all(wp == max(123 - r.blocking.n_candidate_pairs, 400) for _, wp in seen)


def test_session_em_runs_on_a_bounded_sample_of_wide_level_rows(monkeypatch):
    """Where the candidates' distinct level rows hold more than EM_MAX_CELLS cells, the
    session EM runs on a seeded sample of the pairs (counts scaled back), every EM call sees
    at most about EM_MAX_CELLS / fields rows, and the duplicates are still found."""
    from trustlab.er import generate_records, scoring
    from trustlab.metrics.clustering import pairwise_precision_recall_f1

    df = generate_records(600, random_state=3)
    truth = df.pop("entity").to_numpy()
    full = resolve(df)
    assert full.model.em_pairs_ == full.blocking.n_candidate_pairs  # no sample below the cap
    sizes = []
    real = scoring.FSModel._session_em

    def spy(self, Gu, *a, **k):
        sizes.append((len(Gu), Gu.shape[1]))
        return real(self, Gu, *a, **k)

    monkeypatch.setattr(scoring.FSModel, "_session_em", spy)
    cap = scoring._distinct_rows_inverse(full.model.levels(full.features))[0].size // 3  # a third of the rows
    monkeypatch.setattr(scoring, "EM_MAX_CELLS", cap)
    r = resolve(df)
    d = sizes[0][1]
    assert sizes and max(s for s, _ in sizes) <= cap // d
    assert 0 < r.model.em_pairs_ < r.blocking.n_candidate_pairs
    f_full = pairwise_precision_recall_f1(np.asarray(full.entity), truth)[2]
    f_sample = pairwise_precision_recall_f1(np.asarray(r.entity), truth)[2]
    assert f_sample >= f_full - 0.05, (f_sample, f_full)
