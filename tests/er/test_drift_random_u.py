"""The look-alike check of a fitted model (``FSModel._diagnose`` → ``drifted_``) measures how
rarely a field is shared *by chance* on random pairs (stop 46, issue 27).

It used the u refitted on the candidate non-matches, which counts what blocking made the candidates
share: on ``patent`` (PATSTAT company holders, entities up to 676 records) a key rule on the company
name gave the name a candidate u(exact or close) of 0.23 against 0.06 among random pairs, so the name
did not count as identifying, the check called the match class look-alikes, and resolve tightened the
blocks to 100 records and lost its name key (pairwise F1 0.166 -> 0.113, pair completeness 0.235 ->
0.096).
"""
from __future__ import annotations

import numpy as np

from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel


def _model(u_cand: np.ndarray, u_rand: np.ndarray | None) -> FSModel:
    m = FSModel([Field("name", "name"), Field("classes", "string")])
    m.m_ = np.array([[0.63, 0.21, 0.10, 0.06], [0.25, 0.24, 0.34, 0.17]])
    m.u_ = u_cand
    m.u_random_ = u_rand
    m.lambda_ = 0.25
    m.n_seed_pairs_ = 100
    return m


def _drifted(m: FSModel) -> bool:
    post = np.r_[np.full(300, 0.9), np.full(700, 0.05)]
    m.problems_ = m._diagnose(post, 1000, 2000)
    return m.drifted_


U_CAND = np.array([[0.19, 0.04, 0.02, 0.75], [0.02, 0.06, 0.10, 0.82]])


def test_a_field_blocking_made_common_is_still_identifying():
    # random pairs: the name is rarely shared (identifying), and most matches agree on it
    u_rand = np.array([[0.03, 0.03, 0.01, 0.93], [0.002, 0.06, 0.03, 0.908]])
    assert not _drifted(_model(U_CAND, u_rand))


def test_a_field_common_among_random_pairs_is_not_identifying():
    # the same candidates, but the name is shared by chance as often among random pairs (a
    # first name): no identifying field that the matches agree on, so the class is look-alikes
    u_rand = np.array([[0.19, 0.04, 0.02, 0.75], [0.002, 0.06, 0.03, 0.908]])
    m = _model(U_CAND, u_rand)
    assert _drifted(m)
    assert any("on 'classes'" in p for p in m.problems_), m.problems_


def test_without_random_u_the_candidate_u_is_used():
    # a model without the random-pair u (loaded from a dict): as before
    assert _drifted(_model(U_CAND, None))
