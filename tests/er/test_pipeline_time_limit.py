"""``resolve(time_limit=...)`` (CLI ``--time-limit``) is wall time for the whole call: the
partition solves get what blocking and scoring left of it, never the whole budget again."""
from __future__ import annotations

import itertools
import types

import pandas as pd
import pytest

import trustlab.er.cluster as cluster
import trustlab.er.pipeline as pipeline
from trustlab.er import resolve


def _records() -> pd.DataFrame:
    # one entity of 8 identical records: a component larger than the closed-form and
    # enumeration sizes, so the partition solver runs
    names = ["ada lovelace"] * 8 + [f"person {chr(97 + i)}{chr(97 + j)}" for i in range(4) for j in range(6)]
    return pd.DataFrame({"id": range(len(names)), "name": names,
                         "city": ["london"] * 8 + [f"c{i}" for i in range(24)],
                         "entity": [0] * 8 + list(range(1, 25))})


KW = {"fields": "name:name,city:string", "labels": "entity"}


@pytest.fixture
def spy(monkeypatch):
    seen: list = []
    real = cluster._get_partition()

    def partition(*args, **kw):
        seen.append(kw.get("time_limit"))
        return real(*args, **kw)

    monkeypatch.setattr(cluster, "_get_partition", lambda: partition)
    return seen


def _clock(monkeypatch, step: float) -> None:
    """The pipeline's clock advances ``step`` seconds per reading (no real waiting)."""
    ticks = itertools.count(0.0, step)
    monkeypatch.setattr(pipeline, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))


def test_the_clustering_gets_what_is_left(spy, monkeypatch):
    _clock(monkeypatch, 1.0)
    r = resolve(_records(), **KW, time_limit=1000)
    assert len(spy) == 1
    assert pipeline.MIN_CLUSTERING_SECONDS <= spy[0] < 1000  # the whole budget was given before
    assert r.settings["time_limit"] == 1000  # what is saved with the model is the caller's budget


def test_a_spent_budget_leaves_the_minimum(spy, monkeypatch):
    _clock(monkeypatch, 100.0)
    r = resolve(_records(), **KW, time_limit=5)
    assert spy == [pipeline.MIN_CLUSTERING_SECONDS]
    assert r.summary()["component_status"].get("time_limit", 0) + r.summary()["component_status"].get(
        "optimal", 0) == 1  # the big component still gets a partition


def test_no_limit_keeps_the_size_scaled_default(spy):
    from trustlab.er.defaults import default_time_limit

    resolve(_records(), **KW)
    assert spy == [default_time_limit(8)]


def test_incremental_resolution_counts_the_whole_call_too(spy, monkeypatch):
    import trustlab.er.incremental as incremental

    df = _records()
    r0 = resolve(df.iloc[:20], **KW)
    ticks = itertools.count(0.0, 1.0)
    monkeypatch.setattr(incremental, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    spy.clear()
    new = pd.DataFrame({"id": range(100, 108), "name": ["ada lovelace"] * 8, "city": ["london"] * 8})
    resolve(new, model=r0, existing=r0.to_frame(records=True), time_limit=1000)
    assert spy and all(pipeline.MIN_CLUSTERING_SECONDS <= t < 1000 for t in spy)


def test_no_limit_keeps_within_the_default_plan_for_the_call(spy, monkeypatch):
    """Issue 27: with no time_limit, a late start (reading, blocking and scoring took most of
    DEFAULT_CALL_SECONDS) lowers the partition's size-scaled default to what is left, never
    below MIN_DEFAULT_CLUSTERING_SECONDS; the clock is the call's, so a quick start keeps the
    default (test_no_limit_keeps_the_size_scaled_default)."""
    from trustlab.er import defaults

    monkeypatch.setattr(defaults, "MIN_DEFAULT_CLUSTERING_SECONDS", 3.0)
    monkeypatch.setattr(pipeline, "MIN_DEFAULT_CLUSTERING_SECONDS", 3.0)
    _clock(monkeypatch, 100.0)  # every reading of the clock: 100 s later
    resolve(_records(), **KW)
    assert spy == [3.0]
    spy.clear()
    monkeypatch.setattr(pipeline, "DEFAULT_CALL_SECONDS", 1e9)
    resolve(_records(), **KW)
    assert spy == [defaults.default_time_limit(8)]


def test_one_to_one_keeps_within_the_default_plan_too(spy):
    """The one-to-one clustering's clique partitioning (three duplicate-free sources: not an
    assignment) takes its size-scaled default, capped by ``max_default_time`` (what resolve
    has left of its plan) and by nothing else when that is None."""
    from trustlab.er.defaults import default_time_limit
    from trustlab.er.one_to_one import cluster_one_to_one

    n = 12  # one component of 12 records over 3 sources: every cross-source pair attracts
    src = ["A", "B", "C"] * 4
    P = [(a, b) for a in range(n) for b in range(a + 1, n) if src[a] != src[b]]
    w = [0.4 if a // 3 == b // 3 else 0.05 for a, b in P]  # connected: one component
    r = cluster_one_to_one(n, P, w, src, max_default_time=2.5)
    assert spy == [2.5] and r.info["one_to_one"]["solver"] == "clique_partitioning"
    spy.clear()
    cluster_one_to_one(n, P, w, src)
    assert spy == [default_time_limit(n)]
    spy.clear()
    cluster_one_to_one(n, P, w, src, time_limit=7.0, max_default_time=2.5)  # a given limit wins
    assert len(spy) == 1 and spy[0] <= 7.0 and spy[0] > 2.5
