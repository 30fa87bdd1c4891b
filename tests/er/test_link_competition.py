"""Link mode (``link_only``, duplicate-free tables): a record's candidates compete for it
(:func:`trustlab.er.scoring.one_to_one_log_odds`, applied by ``resolve``)."""
import itertools

import numpy as np
import pandas as pd
import pytest

from tests.er.test_one_to_one import _duplicate_free_tables
from trustlab.er import generate_records, resolve
from trustlab.er.scoring import one_to_one_log_odds

FIELDS = {"given_name": "name", "surname": "name", "date_of_birth": "date", "soc_sec_id": "string",
          "address_1": "address"}


def _brute_log_odds(P, lo, src):
    """Exact marginal log-odds of every pair under the distribution over matchings (at most one
    partner per record and other source) weighted by the product of the chosen pairs' odds."""
    num = np.zeros(len(P))
    z = 0.0
    for k in range(len(P) + 1):
        for chosen in itertools.combinations(range(len(P)), k):
            used = set()
            ok = True
            for e in chosen:
                a, b = P[e]
                for key in ((a, src[b]), (b, src[a])):
                    if key in used:
                        ok = False
                    used.add(key)
            if not ok:
                continue
            w = float(np.exp(sum(lo[e] for e in chosen)))
            z += w
            for e in chosen:
                num[e] += w
    return np.log(num) - np.log(z - num)


def _random_tree(rng, n_sources):
    """A random candidate graph without cycles: each new record joins one earlier record of
    another source."""
    n = int(rng.integers(3, 8))
    src = [int(s) for s in rng.integers(0, n_sources, n)]
    src[1] = (src[0] + 1) % n_sources
    P = []
    for v in range(1, n):
        others = [u for u in range(v) if src[u] != src[v]]
        if others:
            P.append((int(rng.choice(others)), v))
    return np.array(P), rng.normal(0.0, 2.0, len(P)), src


@pytest.mark.parametrize("n_sources", [2, 3])
def test_exact_on_graphs_without_cycles(n_sources):
    rng = np.random.default_rng(n_sources)
    for _ in range(25):
        P, lo, src = _random_tree(rng, n_sources)
        got, info = one_to_one_log_odds(P, lo, src, tol=1e-10, max_iter=2000)
        assert info["converged"]
        np.testing.assert_allclose(got, _brute_log_odds(P, lo, src), atol=1e-6)


def test_lone_candidates_unchanged_and_competition_never_raises():
    rng = np.random.default_rng(0)
    P = np.array([[0, 1], [2, 3]])
    lo = np.array([-1.5, 4.0])
    got, _ = one_to_one_log_odds(P, lo, ["A", "B", "A", "B"])
    np.testing.assert_array_equal(got, lo)
    # a graph with cycles (loopy updates): every pair's log-odds at most its own
    n = 12
    src = np.array(["A"] * 6 + ["B"] * 6)
    P = np.array([(a, b) for a in range(6) for b in range(6, 12) if rng.random() < 0.6])
    lo = rng.normal(0.0, 3.0, len(P))
    got, info = one_to_one_log_odds(P, lo, src)
    assert info["iterations"] >= 1 and np.all(got <= lo + 1e-12)
    assert np.any(got < lo - 1e-3)
    # the records' order and the pairs' order do not change the result
    perm = rng.permutation(n)
    inv = np.empty(n, np.int64)
    inv[perm] = np.arange(n)
    o = rng.permutation(len(P))
    got2, _ = one_to_one_log_odds(inv[P[o]][:, ::-1], lo[o], src[perm])
    np.testing.assert_allclose(got2, got[o], atol=1e-9)


def test_errors():
    with pytest.raises(ValueError, match="different sources"):
        one_to_one_log_odds([[0, 1]], [0.0], ["A", "A"])
    with pytest.raises(ValueError, match="same length"):
        one_to_one_log_odds([[0, 1]], [0.0, 1.0], ["A", "B"])
    with pytest.raises(ValueError, match="lie in"):
        one_to_one_log_odds([[0, 2]], [0.0], ["A", "B"])
    with pytest.raises(ValueError, match="NaN"):
        one_to_one_log_odds([[0, 1]], [np.nan], ["A", "B"])


def _base_log_odds(r):
    lam = r.model.lambda_
    return np.log(lam / (1 - lam)) + r.field_weights.sum(1)


def test_resolve_link_only_probabilities_are_the_competing_ones():
    a, b = _duplicate_free_tables(0)
    r = resolve({"A": a, "B": b}, link_type="link_only", fields=FIELDS, truth="entity")
    base = _base_log_odds(r)
    want, _ = one_to_one_log_odds(r.pairs, base, r.source)
    sel = np.abs(want) < 30  # log-odds a probability keeps to many digits
    logit = np.log(r.prob[sel]) - np.log1p(-r.prob[sel])
    np.testing.assert_allclose(logit, want[sel], atol=1e-6)
    assert np.any(np.abs(want[sel] - base[sel]) > 0.1)  # not the pair model's log-odds alone
    assert r.metrics["f1"] > 0.9


def test_resolve_link_only_record_with_two_equal_candidates_stays_alone():
    # B holds a look-alike of a linked record (another entity with the same values): the A
    # record has two equally good candidates and cannot tell which is its match. Scored pair
    # by pair, one of them was linked (the tie broken by the record order); competing, neither is
    a, b = _duplicate_free_tables(0)
    r0 = resolve({"A": a, "B": b}, link_type="link_only", fields=FIELDS)
    fr = r0.to_frame()
    ent = dict(zip(zip(fr["source_dataset"], fr["id"]), fr["entity_id"]))
    linked = [i for i in b["id"] if sum(e == ent[("B", i)] for e in fr["entity_id"]) == 2]
    twin_of = int(linked[0])
    twin = b[b["id"] == twin_of].copy()
    twin["id"] = int(b["id"].max()) + 1
    twin["entity"] = -1
    b2 = pd.concat([b, twin], ignore_index=True)
    r = resolve({"A": a, "B": b2}, link_type="link_only", fields=FIELDS)
    fr = r.to_frame()
    ent = dict(zip(zip(fr["source_dataset"], fr["id"]), fr["entity_id"]))
    partner = [k for k, e in ent.items() if k[0] == "A" and e == r0.to_frame().set_index(["source_dataset", "id"])
               .loc[("B", twin_of), "entity_id"]]
    assert len(partner) == 1  # the A record that was linked to twin_of before the look-alike came
    a_ent = ent[partner[0]]
    assert a_ent != ent[("B", twin_of)] and a_ent != ent[("B", int(twin["id"].iloc[0]))]
    # every other link is kept
    assert r.n_entities == r0.n_entities + 2


def test_resolve_dedupe_probabilities_are_the_pair_model_s():
    df = generate_records(150, random_state=1)
    r = resolve(df, id_col="rec_id", fields="given_name:name,surname:name,date_of_birth:date")
    base = _base_log_odds(r)
    sel = np.abs(base) < 30
    np.testing.assert_allclose(np.log(r.prob[sel]) - np.log1p(-r.prob[sel]), base[sel], atol=1e-6)
