"""The codes comparison opens an EM session, like an identifying field.

A product title is the only identifying field of a table of products whose model numbers sit in
their names (Abt/Buy-like; stop 41: walmart_amazon with ``modelno`` moved into the title). Before,
the title was never *free* in a session (its own, identical titles, is the only one), so its m came
from a plain EM over all candidates in which the codes comparison voted: the match class was
"shares a rare code", accessories included, and a title far apart looked as typical of a match as a
close one (walmart title only: m = 0.005 / 0.055 / 0.457 / 0.483 for exact / close / far / else,
the truth's 0.068 / 0.354 / 0.470 / 0.107). Pairs that share a rare code are a session now, and the
title's m is EM's within them, where duplicates and look-alikes sharing a code differ by their
titles. The whole-record cosine still opens none (agreeing on the whole record is agreeing on every
field).

The level rows are generated here (no real data).
"""
from __future__ import annotations

import math

import numpy as np

from trustlab.er.kinds import KINDS, Field
from trustlab.er.scoring import FSModel

FIELDS = [Field("title", "tokens"), Field("#", "codes")]
N_RECORDS = 6000


def _draw(rng: np.random.Generator, n: int, title: list, codes: list) -> np.ndarray:
    """Levels of ``n`` pairs: the title's exact / close / far / else with probabilities ``title``,
    the codes' rare shared / common shared / different / none with ``codes``."""
    return np.column_stack([rng.choice(4, n, p=title), rng.choice([0, 1, 3, -1], n, p=codes)]).astype(np.int8)


def _products(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate level rows, whether each pair matches, and random-pair level rows: 420 true
    pairs (20 with identical titles; 65 % of the others share a rare code, their titles close or
    far), 200 accessories that share a rare code with a product (titles far or else) and 30,000
    candidates that share title words only."""
    rng = np.random.default_rng(seed)
    rand = _draw(rng, 40000, [0.0002, 0.002, 0.03, 0.9678], [0.0001, 0.001, 0.5, 0.4989])
    groups = [
        (20, True, [1, 0, 0, 0], [0.8, 0, 0, 0.2]),
        (400, True, [0, 0.45, 0.45, 0.10], [0.65, 0.05, 0, 0.30]),
        (200, False, [0, 0.05, 0.45, 0.50], [1, 0, 0, 0]),
        (30000, False, [0, 0.01, 0.07, 0.92], [0.0005, 0.03, 0.47, 0.4995]),
    ]
    G = np.concatenate([_draw(rng, n, t, c) for n, _, t, c in groups])
    y = np.concatenate([np.full(n, match) for n, match, _, _ in groups])
    return G, y, rand


def _fit(G: np.ndarray, rand: np.ndarray) -> FSModel:
    Gu, inv = np.unique(G, axis=0, return_inverse=True)
    cnt = np.bincount(inv.ravel(), minlength=len(Gu)).astype(np.float64)
    return FSModel(FIELDS).fit_from_counts(Gu, cnt, rand, N_RECORDS, tf_tables={}, tf_default={},
                                           max_matches=N_RECORDS / 2)


def test_the_codes_kind_opens_a_session_and_the_record_does_not():
    assert KINDS["codes"].session and not KINDS["record"].session
    assert all(k.session for k in KINDS.values() if not k.derived)


def test_the_title_is_estimated_in_the_session_of_shared_codes():
    """The title's levels are ordered as duplicates show them: a close title says match (more
    than 3 nats; 1.8 before), a title unlike the other is rarer among matches than a close one
    (before: m(else) 0.70 > m(close) 0.07)."""
    G, y, rand = _products()
    model = _fit(G, rand)
    assert "#" in [s["field"] for s in model.sessions_]
    w = np.log(model.m_[0]) - np.log(model.u_[0])
    assert w[1] > 3.0 and w[2] > 0.0 and w[3] < 0.0
    assert model.m_[0, 3] < model.m_[0, 1]
    truth_close = ((G[y, 0] == 1).sum()) / y.sum()
    assert math.isclose(model.m_[0, 1], truth_close, abs_tol=0.1)


def test_more_of_the_generated_pairs_are_called_right():
    """Pairs called matches (posterior log-odds above 0): F1 0.659 (0.616 before)."""
    G, y, rand = _products()
    model = _fit(G, rand)
    lo = model.log_odds_from_field_weights(model.level_weights(G, np.full(G.shape, np.nan)))
    pred = lo > 0
    tp = int((pred & y).sum())
    p, r = tp / max(int(pred.sum()), 1), tp / int(y.sum())
    assert 2 * p * r / (p + r) > 0.64
