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
        # a wall-clock time_limit, or ("work", the work budget) when none is given
        seen.append(kw["time_limit"] if kw.get("time_limit") is not None else ("work", kw.get("work_limit")))
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
    assert spy == [("work", default_time_limit(8))]


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


def test_no_limit_a_late_start_keeps_the_work_budget(spy, monkeypatch):
    """Issue 27 item 6: with no time_limit the partition solves get their size-scaled work
    budget however long reading, blocking and scoring took (a late start on a loaded
    machine used to lower it to what was left of a 240 s plan, and so change the entities)."""
    from trustlab.er import defaults

    _clock(monkeypatch, 100.0)  # every reading of the pipeline's clock: 100 s later
    resolve(_records(), **KW)
    assert spy == [("work", defaults.default_time_limit(8))]


def test_one_to_one_keeps_within_the_default_plan_too(spy):
    """The one-to-one clustering's clique partitioning (three duplicate-free sources: not an
    assignment) takes its size-scaled work budget; ``max_default_time`` (what resolve had
    left of a wall-clock plan) is accepted and no longer lowers it; a given limit wins."""
    from trustlab.er.defaults import default_time_limit
    from trustlab.er.one_to_one import cluster_one_to_one

    n = 12  # one component of 12 records over 3 sources: every cross-source pair attracts
    src = ["A", "B", "C"] * 4
    P = [(a, b) for a in range(n) for b in range(a + 1, n) if src[a] != src[b]]
    w = [0.4 if a // 3 == b // 3 else 0.05 for a, b in P]  # connected: one component
    r = cluster_one_to_one(n, P, w, src, max_default_time=2.5)
    assert spy == [("work", default_time_limit(n))] and r.info["one_to_one"]["solver"] == "clique_partitioning"
    spy.clear()
    cluster_one_to_one(n, P, w, src)
    assert spy == [("work", default_time_limit(n))]
    spy.clear()
    cluster_one_to_one(n, P, w, src, time_limit=7.0, max_default_time=2.5)  # a given limit wins
    assert len(spy) == 1 and spy[0] <= 7.0 and spy[0] > 2.5
