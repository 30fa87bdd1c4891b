"""Blocking strata (FSModel._fit_strata): on a table of two identifying fields (names only),
each EM session has a single voting field and is not identified, and one u over a union of
blocks (pairs sharing a last name, pairs sharing a first name or one of its words) hides that a
close first name is rare among the non-matches of a last-name block. Where a session has a
single voter, each set of key rules agreed on (a stratum) gets its own match share and u
(inventors_ens 0.934 -> 0.969, stop 45), with m and u of the one-field keys it does not agree
on conditioned on the levels below exact (stop 46); elsewhere the model is the pooled one."""
import json

import numpy as np
import pandas as pd
import pytest

from trustlab.er import Field, resolve
from trustlab.er.blocking import block
from trustlab.er.comparisons import compare
from trustlab.er.defaults import random_pairs
from trustlab.er.model import check_model_dict, load_model, save_model
from trustlab.er.scoring import FSModel

LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))
RULES = ["key:last", "key:first", "token:first", "token:last"]


def _names(seed: int, n0: int = 3000, ndup: int = 500, year: bool = False) -> pd.DataFrame:
    """Distinct (first, last) spellings: 150 first names of Zipf frequencies, 2,500 last names;
    ``ndup`` people copied with a short form of the first name or an initial added (60%) or one
    letter of the last name replaced. ``year``: a birth year the copies keep (a third voter)."""
    rng = np.random.default_rng(seed)

    def words(k, lo, hi):
        return ["".join(rng.choice(LETTERS, rng.integers(lo, hi))) for _ in range(k)]

    firsts, lasts = words(150, 6, 9), words(2500, 5, 9)
    p = 1.0 / np.arange(1, 151)
    df = pd.DataFrame({"first": rng.choice(firsts, n0, p=p / p.sum()), "last": rng.choice(lasts, n0),
                       "year": rng.integers(1930, 1990, n0).astype(str), "entity": np.arange(n0)})
    df = df.drop_duplicates(["first", "last"]).reset_index(drop=True)
    dup = df.sample(ndup, random_state=seed).copy()
    for ix in dup.index:
        f, last = dup.at[ix, "first"], dup.at[ix, "last"]
        if rng.random() < 0.6:
            dup.at[ix, "first"] = f[:int(rng.integers(3, 5))] if rng.random() < 0.5 else f + " " + str(rng.choice(LETTERS))
        else:
            q = int(rng.integers(len(last)))
            dup.at[ix, "last"] = last[:q] + str(rng.choice(LETTERS)) + last[q + 1:]
    out = pd.concat([df, dup], ignore_index=True).drop_duplicates(["first", "last"]).reset_index(drop=True)
    return out if year else out.drop(columns="year")


def _fit(df, fields, **kw):
    P = block(df, RULES, max_block_size=200)
    only = FSModel(fields).needed_features()
    R = random_pairs(len(df), np.random.default_rng(0))
    fm, fr = compare(df, P, fields, only=only), compare(df, R, fields, only=only)
    return P, fm, FSModel(fields, **kw).fit(df, P, fm, R, fr, rules=RULES)


def _prf(df, P, p):
    e = df["entity"].to_numpy()
    same = e[P[:, 0]] == e[P[:, 1]]
    tp = int((p & same).sum())
    return tp / max(int(p.sum()), 1), tp / int(same.sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_one_voter_sessions_are_scored_by_blocking_strata(seed):
    df = _names(seed)
    fields = [Field("first", "name"), Field("last", "name"), Field("*", "record")]
    P, fm, model = _fit(df, fields)
    assert any(s["voters"] == 1 for s in model.sessions_)
    assert model.strata_ and model.forcing_ == [["last"], ["first"]]
    prec, rec = _prf(df, P, model.predict_proba(df, P, fm) > 0.5)
    # the pooled model (before): precision 0.99-1.0, recall 0.36-0.37 (close first names with the
    # same last name weigh little: their u is the first-name blocks' u)
    assert prec > 0.97 and rec > 0.5


def test_several_voters_keep_the_pooled_model():
    df = _names(0, year=True)
    fields = [Field("first", "name"), Field("last", "name"), Field("year", "exact")]
    P, fm, model = _fit(df, fields)
    assert all(s["voters"] >= 2 for s in model.sessions_)
    assert model.strata_ == {} and model.forcing_ == []


def test_strata_weights_against_a_brute_force_sum():
    df = _names(2)
    fields = [Field("first", "name"), Field("last", "name")]
    P, fm, model = _fit(df, fields, tf=False)
    assert model.strata_
    lo = model.match_weight(df, P, fm)
    G = model.levels(fm)
    first, last = df["first"].to_numpy(), df["last"].to_numpy()
    logit = np.log(model.lambda_ / (1 - model.lambda_))
    fitted = 0
    for i, (a, b) in enumerate(P[:3000]):
        code = int(last[a] == last[b]) | int(first[a] == first[b]) << 1
        if code in model.strata_:
            fitted += 1
            ls, us = model.strata_[code]
            forced = [bool(code & 2), bool(code & 1)]  # fields first, last
            # a field whose key the pair does not share: m and u conditioned on "not exact"
            want = ls + sum(np.log(model.m_[c, G[i, c]] / us[c, G[i, c]])
                            - (G[i, c] > 0) * np.log((1 - model.m_[c, 0]) / (1 - us[c, 0]))
                            for c in range(2) if not forced[c] and G[i, c] >= 0)
        else:
            want = logit + sum(np.log(model.m_[c, G[i, c]] / model.u_[c, G[i, c]]) for c in range(2) if G[i, c] >= 0)
        assert lo[i] == pytest.approx(want, abs=1e-9), (i, code)
    assert fitted > 100


def _typo_names(seed: int, n_first: int, n0: int = 3000, ndup: int = 500) -> pd.DataFrame:
    """Distinct (first, last) spellings, ``n_first`` first names (frequencies ~ rank^-0.5) and
    2,500 last names; ``ndup`` people copied with one letter of the first name (half) or of the
    last name replaced: every true pair shares exactly one of the two names."""
    rng = np.random.default_rng(seed)

    def words(k):
        return ["".join(rng.choice(LETTERS, rng.integers(5, 9))) for _ in range(k)]

    firsts, lasts = words(n_first), words(2500)
    p = 1.0 / np.arange(1, n_first + 1) ** 0.5
    df = pd.DataFrame({"first": rng.choice(firsts, n0, p=p / p.sum()), "last": rng.choice(lasts, n0),
                       "entity": np.arange(n0)})
    df = df.drop_duplicates(["first", "last"]).reset_index(drop=True)
    dup = df.sample(ndup, random_state=seed).copy()
    for ix in dup.index:
        col = "first" if rng.random() < 0.5 else "last"
        v = dup.at[ix, col]
        q = int(rng.integers(len(v)))
        dup.at[ix, col] = v[:q] + str(rng.choice(LETTERS)) + v[q + 1:]
    return pd.concat([df, dup], ignore_index=True).drop_duplicates(["first", "last"]).reset_index(drop=True)


@pytest.mark.parametrize("seed,n_first", [(0, 400), (1, 1500)])
def test_a_stratum_conditions_the_names_it_does_not_share(seed, n_first):
    # a pair in the stratum "first name shared, last name not" cannot agree exactly on the last
    # name, where the global m puts most of a match's mass; with the global m the stratum EM
    # explained its close last names as non-matches (its share collapsed: recall 0.0 here before
    # stop 46, febrl3 given name and surname only 0.636 -> 0.496); conditioned on the levels below
    # exact, the one-letter typos are found (recall 1.0 at precision 1.0 on both seeds)
    df = _typo_names(seed, n_first)
    fields = [Field("first", "name"), Field("last", "name"), Field("*", "record")]
    P, fm, model = _fit(df, fields)
    assert model.strata_ and any(s["voters"] == 1 for s in model.sessions_)
    p = model.predict_proba(df, P, fm) > 0.5
    e = df["entity"].to_numpy()
    same = e[P[:, 0]] == e[P[:, 1]]
    h = model._agreed_keys(df, P)
    for code in (1, 2):  # the last name shared (first typed apart), the first name shared
        in_s = same & (h == code)
        assert in_s.sum() > 200 and (p & in_s).sum() > 0.9 * in_s.sum(), code
    prec, rec = _prf(df, P, p)
    assert prec > 0.97 and rec > 0.9


def _pairs_of(labels):
    from collections import Counter

    return sum(c * (c - 1) // 2 for c in Counter(labels).values())


@pytest.mark.filterwarnings("ignore::trustlab.er.DegenerateModelWarning")
def test_resolve_of_a_names_only_table(tmp_path):
    df = _names(0)
    e = df.pop("entity").to_numpy()
    r = resolve(df)
    tp = _pairs_of(list(zip(e, r.entity)))
    # before the strata: precision 1.0, recall 0.28
    assert tp / _pairs_of(r.entity) > 0.97 and tp / _pairs_of(e) > 0.45


@pytest.mark.filterwarnings("ignore::trustlab.er.DegenerateModelWarning")
def test_strata_survive_a_model_file(tmp_path):
    df = _names(0).drop(columns="entity")
    r = resolve(df)
    assert r.model.strata_
    path = tmp_path / "m.json"
    save_model(r, path)
    d = json.loads(path.read_text())
    assert len(d["scorer"]["strata"]) == len(r.model.strata_)
    back = load_model(path).scorer
    assert back.strata_.keys() == r.model.strata_.keys()
    P = block(df, RULES, max_block_size=200)[:5000]
    fm = compare(df, P, r.model.fields, only=r.model.needed_features())
    np.testing.assert_allclose(back.match_weight(df, P, fm), r.model.match_weight(df, P, fm), rtol=0, atol=1e-12)
    bad = json.loads(path.read_text())
    bad["scorer"]["strata"][0][0] = 1 << len(bad["scorer"]["forcing"])
    with pytest.raises(ValueError, match=r"scorer\.strata\[0\]\[0\] must be the bits"):
        check_model_dict(bad)
    bad = json.loads(path.read_text())
    bad["scorer"]["strata"][0][2] = bad["scorer"]["strata"][0][2][:1]
    with pytest.raises(ValueError, match=r"scorer\.strata\[0\]\[2\] must hold one u row per field"):
        check_model_dict(bad)
