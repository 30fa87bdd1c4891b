"""One-to-one linkage (duplicate-free sources), exact: :func:`cluster_one_to_one`,
``resolve(one_to_one=...)``, the CLI's ``--one-to-one`` and Splink predictions."""
import itertools
import json

import numpy as np
import pandas as pd
import pytest

from trustlab.cli import main
from trustlab.er import cluster_pairs, generate_records, resolve
from trustlab.er.interop import cluster_splink_predictions
from trustlab.er.linking import pairs_ok
from trustlab.er.one_to_one import cluster_one_to_one

FIELDS = {"given_name": "name", "surname": "name", "date_of_birth": "date", "soc_sec_id": "string",
          "address_1": "address"}


# ----------------------------------------------------------------------------- brute force


def _partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in _partitions(rest):
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1:]
        yield [[first]] + p


def _brute(n, P, w, src, free, threshold=None):
    """Best objective over every set partition in which each cluster is a clique of
    scored pairs (above the threshold) and holds at most one record per duplicate-free
    source."""
    W = {}
    for (a, b), x in zip(P, w):
        if threshold is not None and x < threshold:
            continue
        k = (min(a, b), max(a, b))
        W[k] = max(W.get(k, -np.inf), x)
    best = -np.inf
    for part in _partitions(list(range(n))):
        tot, ok = 0.0, True
        for c in part:
            for a, b in itertools.combinations(c, 2):
                k = (min(a, b), max(a, b))
                if (free[src[a]] and src[a] == src[b]) or k not in W:
                    ok = False
                    break
                tot += W[k]
            if not ok:
                break
        if ok:
            best = max(best, tot)
    return best


def _feasible(labels, src, free):
    return all(not (free[src[a]] and src[a] == src[b] and labels[a] == labels[b])
               for a, b in itertools.combinations(range(len(labels)), 2))


def _random_case(rng, t, n_sources):
    n = int(rng.integers(2, 8))
    src = rng.integers(0, n_sources, n)
    allp = np.array(list(itertools.combinations(range(n), 2)))
    m = int(rng.integers(0, len(allp) + 1))
    P = allp[rng.choice(len(allp), m, replace=False)] if m else np.zeros((0, 2), np.int64)
    if t % 3 == 0:  # exact ties and equal weights
        w = rng.choice([-0.3, 0.2, 0.4, 0.4], m)
    elif t % 3 == 1:  # chains of near-equal links
        w = rng.choice([0.4, 0.45, -0.1], m)
    else:
        w = np.round(rng.normal(0, 0.3, m), 2)
    return n, src, P, w


@pytest.mark.parametrize("n_sources", [2, 3])
def test_exact_against_brute_force(n_sources):
    rng = np.random.default_rng(11 + n_sources)
    names = np.array([f"s{k}" for k in range(n_sources)], dtype=object)
    for t in range(100):
        n, src, P, w = _random_case(rng, t, n_sources)
        free = np.ones(n_sources, bool)
        if n_sources == 3 and t % 4 == 0:  # link_and_dedupe: only some sources duplicate-free
            free = rng.random(n_sources) < 0.5
        present = [names[k] for k in range(n_sources) if free[k] and (src == k).any()]
        thr = -0.2 if t % 5 == 0 else None
        r = cluster_one_to_one(n, P, w, names[src], duplicate_free=present, threshold=thr)
        free_eff = np.array([names[k] in present for k in range(n_sources)])
        assert _feasible(r.labels, src, free_eff), t
        assert r.objective == pytest.approx(_brute(n, P, w, src, free_eff, thr), abs=1e-9), (t, P, w, src)
        sizes = np.bincount(r.component)
        assert all(r.status[c] in ("optimal", "closed_form") for c in range(len(sizes)) if sizes[c] >= 2)
        two_free = len(set(src.tolist())) <= 2 and free_eff[np.unique(src)].all()
        assert r.info["one_to_one"]["solver"] == ("assignment" if two_free else "clique_partitioning")


def test_assignment_equals_clique_partitioning_on_two_sources():
    """The two exact routes agree on the optimum (labels may differ only on exact ties)."""
    rng = np.random.default_rng(2)
    for t in range(60):
        n, src, P, w = _random_case(rng, t, 2)
        sources = np.array(["A", "B"], dtype=object)[src]
        a = cluster_one_to_one(n, P, w, sources, solver="assignment")
        c = cluster_one_to_one(n, P, w, sources, solver="clique_partitioning")
        assert a.objective == pytest.approx(c.objective, abs=1e-9)
        assert a.bound == a.objective


def _greedy_single_best_links(n, P, w, src):
    """Splink-style greedy: take the heaviest remaining positive link whose ends are free."""
    lab = np.arange(n)
    used = np.zeros(n, bool)
    for k in np.argsort(-w, kind="stable"):
        a, b = P[k]
        if w[k] > 0 and not used[a] and not used[b] and src[a] != src[b]:
            used[a] = used[b] = True
            lab[b] = lab[a]
    return lab


def test_chain_where_greedy_loses():
    # a-b 0.9, b-c 0.95, c-d 0.9 (a, c in A; b, d in B), as centred weights p - 0.5
    P = np.array([[0, 1], [1, 2], [2, 3]])
    w = np.array([0.4, 0.45, 0.4])
    src = np.array([0, 1, 0, 1])
    r = cluster_one_to_one(4, P, w, np.array(["A", "B"], dtype=object)[src])
    assert r.labels[0] == r.labels[1] and r.labels[2] == r.labels[3] and r.labels[1] != r.labels[2]
    assert r.objective == pytest.approx(0.8) and r.bound == r.objective and r.status == ["optimal"]
    g = _greedy_single_best_links(4, P, w, src)
    assert g[1] == g[2]  # greedy keeps b-c alone: 0.45 < 0.8
    # and on random chains with ties the greedy is never better, often worse
    rng = np.random.default_rng(4)
    worse = 0
    for _ in range(100):
        k = int(rng.integers(3, 9))
        P = np.stack([np.arange(k - 1), np.arange(1, k)], axis=1)
        w = rng.choice([0.3, 0.4, 0.4, 0.45], k - 1)
        src = np.arange(k) % 2
        r = cluster_one_to_one(k, P, w, src)
        g = _greedy_single_best_links(k, P, w, src)
        gobj = float(w[g[P[:, 0]] == g[P[:, 1]]].sum())
        assert r.objective >= gobj - 1e-12
        worse += r.objective > gobj + 1e-12
    assert worse > 0


def test_ties_deterministic_whatever_the_pair_order():
    rng = np.random.default_rng(9)
    n = 40
    src = np.arange(n) % 2
    P = np.array([(a, b) for a in range(0, n, 2) for b in range(1, n, 2) if rng.random() < 0.3])
    w = rng.choice([0.2, 0.4], len(P))  # many exact ties
    r1 = cluster_one_to_one(n, P, w, src)
    o = rng.permutation(len(P))
    r2 = cluster_one_to_one(n, P[o][:, ::-1], w[o], src)  # shuffled rows, ends swapped
    assert np.array_equal(r1.labels, r2.labels)


def test_large_component_proven_where_clique_partitioning_is_not():
    """A 520-record bipartite component is past the exact CPP size (heuristic, not proven
    within its budget); the assignment proves it and is at least as good."""
    rng = np.random.default_rng(0)
    k = 260
    a, b = np.arange(k), k + np.arange(k)
    P = np.concatenate([np.stack([a, b], 1), np.stack([a, np.roll(b, 1)], 1),
                        np.stack([a[rng.integers(0, k, 3 * k)], b[rng.integers(0, k, 3 * k)]], 1)])
    w = np.round(rng.normal(0.3, 0.5, len(P)), 3)
    w[:2 * k] = np.abs(w[:2 * k]) + 0.01  # a positive ring: one component
    src = np.r_[np.zeros(k, int), np.ones(k, int)]
    r = cluster_one_to_one(2 * k, P, w, src)
    assert r.status == ["optimal"] and r.bound == r.objective and r.info["one_to_one"]["solver"] == "assignment"
    x = cluster_pairs(2 * k, P[src[P[:, 0]] != src[P[:, 1]]], w[src[P[:, 0]] != src[P[:, 1]]], method="xer",
                      time_limit=2.0)
    assert x.status[0] != "optimal"
    assert r.objective >= x.objective - 1e-9
    assert pairs_ok(r.labels, src)


def test_cluster_one_to_one_errors():
    with pytest.raises(ValueError, match="source of every record"):
        cluster_one_to_one(3, [[0, 1]], [1.0], ["a", "b"])
    with pytest.raises(ValueError, match="not among the records' sources"):
        cluster_one_to_one(2, [[0, 1]], [1.0], ["a", "b"], duplicate_free=["c"])
    with pytest.raises(ValueError, match="exact only for two sources"):
        cluster_one_to_one(3, [[0, 1]], [1.0], ["a", "b", "c"], solver="assignment")
    with pytest.raises(ValueError, match="solver"):
        cluster_one_to_one(2, [[0, 1]], [1.0], ["a", "b"], solver="greedy")


# ----------------------------------------------------------------------------- resolve and CLI


def _duplicate_free_tables(seed=0, n=200):
    """Two duplicate-free tables: the first record of every entity in A, its second
    copy (when there is one) in B, plus entities of B's own."""
    df = generate_records(n, dup_rate=0.5, max_corruptions=2, random_state=seed)
    rank = df.groupby("entity").cumcount()
    a = df[rank == 0].reset_index(drop=True)
    b = df[rank == 1].reset_index(drop=True)
    for t in (a, b):
        t["id"] = np.arange(len(t))
        t.drop(columns="rec_id", inplace=True)
    return a, b


def test_resolve_one_to_one_two_tables():
    a, b = _duplicate_free_tables(0)
    r0 = resolve({"A": a, "B": b}, link_type="link_only", fields=FIELDS, truth="entity")
    r1 = resolve({"A": a, "B": b}, link_type="link_only", fields=FIELDS, truth="entity", one_to_one=True)
    s = r1.summary()
    assert s["one_to_one"]["solver"] == "assignment" and s["one_to_one"]["sources"] == ["A", "B"]
    assert s["n_components_proven"] == s["n_components_multi"]
    assert r1.clusters.bound == r1.clusters.objective
    assert r1.settings["one_to_one"] is True and "one_to_one" not in r0.summary()
    # link_only with xer already forbids same-table pairs: the same optimum, proven both ways
    assert r1.clusters.objective == pytest.approx(r0.clusters.objective, abs=1e-9)
    assert pairs_ok(r1.entity, (r1.source == "B").astype(int))
    assert r1.metrics["f1"] > 0.9
    # link_and_dedupe scores pairs inside the tables too; one_to_one still keeps each table's records apart
    r2 = resolve({"A": a, "B": b}, link_type="link_and_dedupe", fields=FIELDS, one_to_one=True)
    assert pairs_ok(r2.entity, (r2.source == "B").astype(int))
    assert r2.summary()["one_to_one"]["n_forbidden_pairs"] > 0


def test_resolve_one_to_one_some_tables_with_duplicates():
    """link_and_dedupe with only B declared duplicate-free: A's duplicates may merge, two
    B records never; three tables go to clique partitioning with forbidden pairs."""
    a, b = _duplicate_free_tables(1)
    dup = a.head(15).copy()  # A gets duplicates of its own
    dup["id"] = np.arange(len(a), len(a) + len(dup))
    a2 = pd.concat([a, dup], ignore_index=True)
    r = resolve({"A": a2, "B": b}, link_type="link_and_dedupe", fields=FIELDS, one_to_one=["B"], truth="entity")
    assert r.summary()["one_to_one"]["solver"] == "clique_partitioning"
    assert r.summary()["one_to_one"]["duplicate_free"] == ["B"]
    assert not r.to_frame()[lambda f: f["source_dataset"] == "B"].duplicated("entity_id").any()
    fa = r.to_frame()[lambda f: f["source_dataset"] == "A"]
    assert fa.duplicated("entity_id").any()  # A's duplicates merged
    c = b.head(40).copy()
    r3 = resolve({"A": a, "B": b, "C": c}, link_type="link_only", fields=FIELDS, one_to_one=True)
    assert r3.summary()["one_to_one"]["solver"] == "clique_partitioning"
    assert not r3.to_frame().duplicated(["entity_id", "source_dataset"]).any()


def test_resolve_one_to_one_ties_independent_of_row_order():
    """Twins (identical content, different ids) in A tie for one record of B: the same
    entities whatever the order of the rows."""
    a, b = _duplicate_free_tables(2, n=120)
    twin = a.head(3).copy()
    twin["id"] = np.arange(len(a), len(a) + 3)
    twin["entity"] = twin["entity"] + 100_000
    a2 = pd.concat([a, twin], ignore_index=True)
    rng = np.random.default_rng(0)

    def entities(ta, tb):
        r = resolve({"A": ta, "B": tb}, link_type="link_only", fields=FIELDS, one_to_one=True)
        groups: dict = {}
        for s, i, e in r.to_frame().itertuples(index=False):
            groups.setdefault(e, []).append((s, i))
        return sorted(tuple(sorted(g)) for g in groups.values())

    e1 = entities(a2, b)
    e2 = entities(a2.iloc[rng.permutation(len(a2))], b.iloc[rng.permutation(len(b))])
    assert e1 == e2


def test_resolve_one_to_one_errors():
    a, b = _duplicate_free_tables(3, n=60)
    with pytest.raises(ValueError, match="needs several tables"):
        resolve(a, fields=FIELDS, one_to_one=True)
    with pytest.raises(ValueError, match="method='xer'"):
        resolve([a, b], link_type="link_only", fields=FIELDS, one_to_one=True, method="connected_components")
    with pytest.raises(ValueError, match=r"not among the tables"):
        resolve({"A": a, "B": b}, fields=FIELDS, one_to_one=["C"])
    with pytest.raises(ValueError, match="one_to_one"):
        resolve({"A": a, "B": b}, fields=FIELDS, one_to_one="yes")


def test_cli_one_to_one(tmp_path, capsys):
    a, b = _duplicate_free_tables(4, n=120)
    pa, pb = tmp_path / "left.csv", tmp_path / "right.csv"
    a.to_csv(pa, index=False)
    b.to_csv(pb, index=False)
    out = tmp_path / "out.csv"
    assert main(["resolve", str(pa), str(pb), "--link-only", "--one-to-one", "--fields",
                 "given_name:name,surname:name,date_of_birth:date,soc_sec_id:string", "--output", str(out),
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["one_to_one"]["solver"] == "assignment"
    got = pd.read_csv(out)
    assert not got.duplicated(["entity_id", "source_dataset"]).any()
    assert main(["resolve", str(pa), "--one-to-one"]) == 2
    assert "several tables" in capsys.readouterr().err


# ----------------------------------------------------------------------------- Splink predictions


def test_splink_predictions_one_to_one():
    # Splink link_only output: ids collide across the tables; the chain a-b, b-c, c-d
    pred = pd.DataFrame({
        "source_dataset_l": ["A", "A", "A"], "unique_id_l": [1, 2, 2],
        "source_dataset_r": ["B", "B", "B"], "unique_id_r": [1, 1, 2],
        "match_probability": [0.9, 0.95, 0.9],
    })
    with pytest.warns(UserWarning, match="no ids= or records="):
        df, res = cluster_splink_predictions(pred, one_to_one=True, id_column="unique_id",
                                             cluster_column="cluster_id", weights="centered")
    assert list(df.columns) == ["source_dataset", "unique_id", "cluster_id"]
    got = {(s, i): c for s, i, c in df.itertuples(index=False)}
    assert got[("A", 1)] == got[("B", 1)] and got[("A", 2)] == got[("B", 2)] and got[("A", 1)] != got[("A", 2)]
    assert res.info["one_to_one"]["solver"] == "assignment" and res.bound == res.objective
    # shuffled rows, same clusters
    df2, _ = cluster_splink_predictions(pred.iloc[[2, 0, 1]], one_to_one=True, id_column="unique_id",
                                        cluster_column="cluster_id", weights="centered",
                                        ids=[("A", 1), ("A", 2), ("B", 1), ("B", 2)])
    got2 = {(s, i): c for s, i, c in df2.itertuples(index=False)}
    assert {frozenset(k for k in got if got[k] == c) for c in got.values()} == \
        {frozenset(k for k in got2 if got2[k] == c) for c in got2.values()}
    # every record kept with ids= as (source, id) pairs
    df3, _ = cluster_splink_predictions(pred, one_to_one=True, ids=[("A", 1), ("A", 2), ("A", 3), ("B", 1), ("B", 2)])
    assert len(df3) == 5
    with pytest.raises(ValueError, match="source_dataset_l"):
        cluster_splink_predictions(pred.drop(columns="source_dataset_l"), one_to_one=True)
