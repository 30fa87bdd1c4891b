"""A session's m-probabilities are shrunk towards "no evidence" by a few pseudo-matches.

A field's m comes from EM sessions (the pairs that agree exactly on another, identifying field).
When a session holds only a few matches, a level none of them shows got m at the 1e-3 floor: a
veto of several nats against every true pair at that level elsewhere. (Stop 41: the prices of a
product that two shops list differ by more than 10 % for 63 % of the true pairs, but the ~24
matches of the session of identical titles all had close prices; each such true pair lost 3.3
nats.) :data:`trustlab.er.scoring.SESSION_M_PSEUDO` pseudo-matches distributed as the field's
random-pair u (a weight of 0 at every level) now join each session's estimate.

The level rows are generated here (no real data): fields ``name`` (identifying: its session),
``price`` (free in the name session) and ``colour`` (common values: no session of its own).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from trustlab.er.kinds import Field
from trustlab.er.scoring import SESSION_M_PSEUDO, FSModel

FIELDS = [Field("name", "name"), Field("price", "numeric"), Field("colour", "exact")]
N_RECORDS = 4000


def _random_levels(rng: np.random.Generator, n: int = 20000) -> np.ndarray:
    """Levels of random pairs: name and price rarely agree, colour agrees one time in four."""
    name = rng.choice(4, n, p=[0.001, 0.004, 0.02, 0.975])
    price = rng.choice(4, n, p=[0.005, 0.015, 0.08, 0.90])
    colour = rng.choice([0, 3], n, p=[0.25, 0.75])
    return np.column_stack([name, price, colour]).astype(np.int8)


def _candidates(n_matches: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Distinct level rows and counts of the candidate pairs: ``n_matches`` pairs with the same
    name and colour whose prices agree closely, as many with the same name only (look-alikes),
    and 3,000 pairs that agree on nothing much."""
    rows = []
    for _ in range(n_matches):
        rows.append((0, int(rng.choice([0, 1, 2], p=[0.3, 0.4, 0.3])), 0))
    for _ in range(n_matches):
        rows.append((0, 3, int(rng.choice([0, 3], p=[0.25, 0.75]))))
    r = _random_levels(rng, 3000)
    r[:, 0] = np.maximum(r[:, 0], 2)  # blocking's other candidates: names far apart at best
    G = np.concatenate([np.array(rows, np.int8), r])
    Gu, inv = np.unique(G, axis=0, return_inverse=True)
    return Gu, np.bincount(inv.ravel(), minlength=len(Gu)).astype(np.float64)


def _fit(n_matches: int, seed: int = 0) -> FSModel:
    rng = np.random.default_rng(seed)
    Gu, cnt = _candidates(n_matches, rng)
    return FSModel(FIELDS).fit_from_counts(Gu, cnt, _random_levels(rng), N_RECORDS, tf_tables={}, tf_default={})


def _name_session(model: FSModel) -> dict:
    (s,) = [s for s in model.sessions_ if s["field"] == "name"]
    return s


@pytest.mark.parametrize("n_matches", [8, 15, 30])
def test_a_level_no_session_match_shows_is_no_veto(n_matches):
    """Prices that the session's few matches never show far apart (level ``else``) cost a pair
    at most log(a / (e + a)) nats, e the session's expected matches and a the pseudo-matches:
    before, m(else) sat at the 1e-3 floor and the weight was about -6.8 nats."""
    model = _fit(n_matches)
    s = _name_session(model)
    e = s["lambda"] * s["pairs"]
    assert e >= 1.0  # the session counted
    price = [f.column for f in model.fields].index("price")
    w_else = math.log(model.m_[price, 3] / model.u_[price, 3])
    bound = math.log(SESSION_M_PSEUDO / (e + SESSION_M_PSEUDO))
    assert w_else >= bound - 0.25  # u moves a little after the sessions (candidate non-matches)
    assert w_else > -3.0
    # close agreement still counts for a match
    assert math.log(model.m_[price, 1] / model.u_[price, 1]) > 1.0


def test_the_pseudo_matches_fade_with_a_large_session():
    """With thousands of session matches the estimate is the data's: m(else) of the price stays
    near its floor, and the weights of the levels the matches do show barely move."""
    model = _fit(3000)
    price = [f.column for f in model.fields].index("price")
    e = _name_session(model)["lambda"] * _name_session(model)["pairs"]
    assert e > 2000
    assert model.m_[price, 3] < 2 * SESSION_M_PSEUDO / e
    assert model.m_[price, 0] == pytest.approx(0.3, abs=0.05)

