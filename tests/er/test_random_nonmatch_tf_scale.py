"""The TF scale where random pairs hold many matches (stop 49, issue 27: ``patent``).

The TF scale divides an exact agreement's term-frequency weight by how much more often the candidate
non-matches agree than random pairs (``FSModel._set_tf_scale``). Where a few large entities hold many
random pairs (``random_match_share_ >= RANDOM_MATCH_SHARE``), the candidate refit's non-matches include
a large entity's pairs that agree on nothing but the name, so that ratio measured the entity (patent:
5.8, every exact company name 1.8 nats lighter). There the scale is the random pairs' non-match u over
the random-pair u; elsewhere it is unchanged.
"""
from __future__ import annotations

import numpy as np
import pytest

import trustlab.er.scoring as S
from trustlab.er.comparisons import compare
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel

from tests.er.test_random_nonmatch_u import _giant_entity_table

FIELDS = [Field("name", "name"), Field("klass", "string"), Field("city", "name")]


def _random_pairs(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, n, 20000), rng.integers(0, n, 20000)
    return np.sort(np.stack([i[i != j], j[i != j]], axis=1), axis=1)


def _blocked_fit(df):
    """The model on the pairs that share the name or the class (blocked, not every pair: the
    candidate refit of u moves away from the random pairs' u)."""
    n = len(df)
    A = np.array([[i, j] for i in range(n) for j in range(i + 1, n)], np.int64)
    v = {c: df[c].to_numpy() for c in ("name", "klass")}
    P = A[(v["name"][A[:, 0]] == v["name"][A[:, 1]]) | (v["klass"][A[:, 0]] == v["klass"][A[:, 1]])]
    R = _random_pairs(n)
    return FSModel(FIELDS).fit(df, P, compare(df, P, FIELDS), R, compare(df, R, FIELDS)), P


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_large_entitys_name_weighs_for_a_match_on_blocked_candidates(seed):
    df = _giant_entity_table(seed)
    model, P = _blocked_fit(df)
    assert model.random_match_share_ >= S.RANDOM_MATCH_SHARE
    # the candidate refit counts the giant company's same-name pairs as non-matches: its
    # u(name exact) is 2-4x the random pairs' (1.96-3.81 on these seeds) ...
    assert model.u_[0, 0] / model.u_random_[0, 0] > 1.5
    # ... but the TF scale follows the random pairs' non-match share (0.40-0.58), not that
    assert model.tf_scale_["name"] < 1.0
    # so the giant company's name (120 of 420 records) weighs for a match: 1.74-2.16 nats here,
    # -0.14-0.57 with the refit's scale
    t = df["cluster"].to_numpy()
    nm = df["name"].to_numpy()
    W = model.field_weights(df, P, compare(df, P, FIELDS))
    giant = (t[P[:, 0]] == 0) & (t[P[:, 1]] == 0) & (nm[P[:, 0]] == nm[P[:, 1]])
    assert W[giant, 0].mean() > 1.0
    old = FSModel.from_dict(model.to_dict())
    old.tf_scale_ = {"name": float(model.u_[0, 0] / model.u_random_[0, 0])}
    assert old.field_weights(df, P, compare(df, P, FIELDS))[giant, 0].mean() < 0.75


def test_without_large_entities_the_scale_is_the_candidate_refits():
    from trustlab.er.synthetic import generate_people

    df = generate_people(300, random_state=0)
    fl = [Field("first_name", "name"), Field("surname", "name"), Field("dob", "date")]
    n = len(df)
    A = np.array([[i, j] for i in range(n) for j in range(i + 1, n)], np.int64)
    s = df["surname"].astype(str).str[:1].to_numpy()
    P = A[s[A[:, 0]] == s[A[:, 1]]]  # blocked on the surname's initial
    R = _random_pairs(n)
    model = FSModel(fl).fit(df, P, compare(df, P, fl), R, compare(df, R, fl))
    assert model.random_match_share_ < S.RANDOM_MATCH_SHARE
    want = {fl[c].column: float(model.u_[c, 0] / model.u_random_[c, 0]) for c in model._tf_fields()
            if model.u_random_[c, 0] > 0 and model.u_[c, 0] / model.u_random_[c, 0] != 1.0}
    assert want and model.tf_scale_ == want
