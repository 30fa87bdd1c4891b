"""Completion inside positive components too large to complete whole: the pairs of records
whose positive neighbourhoods overlap (``_neighbour_pairs``), checked against brute force, and
``resolve`` joining a large entity whose pairs blocking proposed only along a path."""
from itertools import combinations

import numpy as np
import pytest

from trustlab.er import generate_records, resolve
from trustlab.er.scoring import NEIGHBOUR_OVERLAP, _component_completion, _neighbour_pairs


def _brute(n, edges, have, overlap, max_pairs=None):
    nb = [set() for _ in range(n)]
    for a, b in edges:
        nb[a].add(b)
        nb[b].add(a)
    have = {(int(c) // n, int(c) % n) for c in have}
    got = []
    for i, j in combinations(range(n), 2):
        k = len(nb[i] & nb[j])
        if k and (i, j) not in have and k >= overlap * len(nb[i] | nb[j]):
            got.append((-k / len(nb[i] | nb[j]), i * n + j, (i, j)))
    got.sort()
    if max_pairs is not None:
        got = got[:max_pairs]
    return sorted(p for _, _, p in got)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_neighbour_pairs_match_brute_force_in_any_pieces(seed):
    rng = np.random.default_rng(seed)
    n = 60
    e = rng.integers(0, n, (150, 2))
    e = np.unique(np.sort(e[e[:, 0] != e[:, 1]], axis=1), axis=0)
    have = e[:, 0] * n + e[:, 1]
    for overlap in (0.0, NEIGHBOUR_OVERLAP, 0.5):
        want = _brute(n, e.tolist(), have, overlap)
        assert want or overlap > NEIGHBOUR_OVERLAP  # the case has such pairs
        for piece in (1, 37, 1 << 22):  # rows one at a time, a few, all at once: the same answer
            got = _neighbour_pairs(n, e, have, None, overlap=overlap, piece=piece)
            assert [tuple(p) for p in got.tolist()] == want
        for cap in (0, 1, 7, len(want) // 2):  # the most overlapping first, ties by code
            got = _neighbour_pairs(n, e, have, cap, overlap=overlap, piece=13)
            assert [tuple(p) for p in got.tolist()] == _brute(n, e.tolist(), have, overlap, cap)


def test_component_completion_adds_neighbour_pairs_only_beyond_the_whole_components():
    """A path of 3 records is completed whole; a path of 8 (above the limit of 5) gets the pairs
    two steps apart (they share a neighbour: overlap 1/2 at the ends, 1/3 inside); its
    pairs three steps apart share none. Without ``neighbours`` the large path gets nothing."""
    P = np.array([(0, 1), (1, 2)] + [(3 + i, 4 + i) for i in range(7)], np.int64)
    n, w = 11, np.ones(len(P))
    old = {tuple(p) for p in _component_completion(n, P, w, 5).tolist()}
    assert old == {(0, 2)}
    got = {tuple(p) for p in _component_completion(n, P, w, 5, neighbours=True).tolist()}
    assert got == {(0, 2)} | {(3 + i, 5 + i) for i in range(6)}
    # the budget is spent on the whole components first: 3 pairs (all of the small path's) + 2
    got = {tuple(p) for p in _component_completion(n, P, w, 5, max_pairs=5, neighbours=True).tolist()}
    assert len(got) == 3 and (0, 2) in got  # the two with overlap 1/2 (the path's ends)
    assert got - {(0, 2)} == {(3, 5), (8, 10)}
    # link mode: only pairs across the tables
    src = np.array([0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0])
    full = {(0, 2)} | {(3 + i, 5 + i) for i in range(6)}
    want = {(a, b) for a, b in full if src[a] != src[b]}
    assert want and want != full
    got = {tuple(p) for p in _component_completion(n, P, w, 5, sources=src, neighbours=True).tolist()}
    assert got == want


def test_resolve_joins_a_large_entity_blocking_proposed_along_a_path():
    """Six copies of one record whose pairs blocking proposes only along a path (two key rules
    on made-up columns; the copies differ in the other rules' columns), with
    complete_components=4 so that their component is too large to be completed whole: every
    pair a cluster holds must have been compared, so the old completion left the copies in
    pieces; the neighbour rounds compare the missing pairs and join them."""
    import pandas as pd

    df = generate_records(1000, random_state=3).drop(columns=["entity"]).iloc[1:]
    big = generate_records(1000, random_state=3).drop(columns=["entity"]).iloc[[0] * 6].copy()
    big["rec_id"] = [f"big-{i}" for i in range(6)]
    big["soc_sec_id"] = [f"s{i}" for i in range(6)]
    big["postcode"] = [f"p{i}" for i in range(6)]
    df["b1"] = [f"u{i}" for i in range(len(df))]
    df["b2"] = [f"v{i}" for i in range(len(df))]
    big["b1"] = ["a", "a", "b", "b", "c", "c"]  # pairs (0,1), (2,3), (4,5)
    big["b2"] = ["z", "y", "y", "x", "x", "w"]  # pairs (1,2), (3,4)
    data = pd.concat([df, big], ignore_index=True)
    fields = "given_name:name,surname:name,address_1:address,suburb:name,postcode:postcode,date_of_birth:date"
    r = resolve(data, id_col="rec_id", fields=fields, blocking=["key:b1", "key:b2", "key:soc_sec_id", "key:postcode"],
                complete_components=4)
    ent = r.to_frame().set_index("rec_id")["entity_id"]
    assert ent.loc[[f"big-{i}" for i in range(6)]].nunique() == 1
    assert r.blocking.n_completed_pairs >= 10  # the 10 pairs off the path, at least
