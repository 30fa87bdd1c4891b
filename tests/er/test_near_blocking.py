"""Token rules that keep each record's near neighbours in the blocks they purge (``@CAP/K``)."""
import math
import re

import numpy as np
import pandas as pd
import pytest

from trustlab.er.blocking import adaptive_blocking_rules, block
from trustlab.er.kinds import Field
from trustlab.er.rules import Rule, parse_rule


def _tokens(s):
    return set(t for t in re.sub(r"[^0-9a-z ]+", " ", (s or "").lower()).split() if len(t) > 1)


def _brute_near(names, cap, k):
    """Each record of a block of more than ``cap`` records with its ``k`` most similar
    records of that block: idf-weighted binary cosine, ties to the lower position."""
    toks = [_tokens(s) for s in names]
    n_any = sum(1 for t in toks if t)
    df = {}
    for t in toks:
        for w in t:
            df[w] = df.get(w, 0) + 1
    idf = {w: math.log((n_any + 1.0) / (c + 1.0)) + 1.0 for w, c in df.items()}
    norm = [math.sqrt(sum(idf[w] ** 2 for w in t)) for t in toks]

    def cos(i, j):
        return sum(idf[w] ** 2 for w in toks[i] & toks[j]) / (norm[i] * norm[j])

    out = set()
    for w, c in df.items():
        if c <= cap:
            continue
        members = [i for i, t in enumerate(toks) if w in t]
        for i in members:
            others = sorted((j for j in members if j != i), key=lambda j: (-round(cos(i, j), 12), j))
            out |= {tuple(sorted((i, j))) for j in others[:k]}
    return out


@pytest.mark.parametrize("cap,k", [(3, 1), (4, 2), (6, 3)])
def test_near_pairs_match_brute_force(cap, k):
    rng = np.random.default_rng(cap * 10 + k)
    words = ["acme", "corp", "inc", "gmbh", "planck", "max", "society", "ltd", "co"]
    # distinct token sets only: with equal cosines the order of ties is the only thing left
    seen, names = set(), []
    while len(names) < 40:
        s = " ".join(rng.choice(words, size=int(rng.integers(1, 5)), replace=False))
        if frozenset(_tokens(s)) not in seen:
            seen.add(frozenset(_tokens(s)))
            names.append(s)
    df = pd.DataFrame({"name": names})
    got = {tuple(p) for p in block(df, [f"token:name@{cap}/{k}"]).tolist()}
    plain = {tuple(p) for p in block(df, [f"token:name@{cap}"]).tolist()}
    exp = _brute_near(names, cap, k)
    assert exp and got == plain | exp


def test_a_large_entity_keeps_pairs_through_its_own_common_word():
    """An entity written many ways makes its own words common: the plain rule purges
    their blocks and the entity's spellings share no pair; the near rule links each
    spelling with the most similar ones."""
    rows = [f"max planck gesellschaft variant{i} zur foerderung" for i in range(30)]
    rows += [f"company{i} gmbh" for i in range(30)]
    df = pd.DataFrame({"name": rows})
    plain = block(df, ["token:name@10"])
    near = block(df, ["token:name@10/2"])
    assert len(plain) == 0
    planck = near[(near[:, 0] < 30) & (near[:, 1] < 30)]
    assert len(planck) >= 30  # every spelling has a partner among its own
    assert not ((near[:, 0] < 30) & (near[:, 1] >= 30)).any()  # nothing across the two entities
    assert len(near) <= 2 * 60  # at most 2 per record and purged block


def test_rule_string_reads_back_and_is_checked():
    r = parse_rule("token:title:alnum@50/3")
    assert r == Rule("token", ("title",), "alnum", 50, 3) and str(r) == "token:title:alnum@50/3"
    assert parse_rule("token:a/b@20").columns == ("a/b",)  # a slash in a column name is a column name
    assert parse_rule("token:http://x.org/o#name@50/3", columns=["http://x.org/o#name"]).near == 3
    for bad in ("key:zip@50/3", "token:name@50/0", "token:name@50/x"):
        with pytest.raises(ValueError):
            parse_rule(bad)


def test_adaptive_rules_keep_near_neighbours_within_the_budget():
    rng = np.random.default_rng(0)
    rows = []
    for e in range(40):  # 40 organisations of 5-80 spellings: their own words are common
        for v in range(int(rng.integers(5, 80))):
            rows.append(f"org{e} holding{e} " + " ".join(rng.choice([f"w{e}x{i}" for i in range(30)], 3)))
    df = pd.DataFrame({"name": rows})
    fields = [Field("name", "string")]
    budget = 60 * len(df)
    rules = adaptive_blocking_rules(df, fields, max_block_size=40, max_pairs=budget)
    old = adaptive_blocking_rules(df, fields, max_block_size=40, max_pairs=budget, near_neighbours=0)
    tok = [r for r in rules if r.startswith("token")]
    assert tok and parse_rule(tok[0]).near == 3 and parse_rule(old[-1]).near is None
    from trustlab.er.defaults import check_pair_budget

    counted = check_pair_budget(df, rules, 40, 1)
    assert len(block(df, rules, max_block_size=40)) <= counted <= budget
    assert len(block(df, rules, max_block_size=40)) > len(block(df, old, max_block_size=40))


def test_near_neighbours_need_a_budget():
    """Where the near pairs do not fit, the rule stays as before."""
    rows = [f"alpha beta{i % 7} gamma{i}" for i in range(3000)]
    df = pd.DataFrame({"name": rows})
    fields = [Field("name", "string")]
    tight = adaptive_blocking_rules(df, fields, max_pairs=1000, pairs_per_record=1)
    assert all(parse_rule(r).near is None for r in tight)


def test_distributed_refuses_near_rules():
    from trustlab.er.distributed import _rules

    df = pd.DataFrame({"name": ["a b", "a c"] * 10})
    with pytest.raises(ValueError, match="not distributed"):
        _rules(["token:name@5/2"], df, [Field("name", "string")], 200, len(df))


def test_tightened_blocking_keeps_no_near_neighbours():
    """After EM drifted to look-alikes, resolve re-derives the rules with smaller blocks and
    without near neighbours (those are look-alikes too: with them a one-column table of
    organisation names tightened from 0.47 to 0.27 F1)."""
    from trustlab.er.defaults import default_rules

    rows = [f"org{e % 40} holding{e % 40} w{e}" for e in range(3000)] + [f"common name{e}" for e in range(400)]
    df = pd.DataFrame({"name": rows})
    fields = [Field("name", "string")]
    near = default_rules(df, fields, max_block_size=50)
    plain = default_rules(df, fields, max_block_size=50, near_neighbours=0)
    assert any(parse_rule(r).near == 3 for r in near)
    assert all(parse_rule(r).near is None for r in plain)


@pytest.mark.parametrize("max_pairs", [30_000, 60_000, 120_000, 10**7])
def test_near_neighbours_never_displace_a_rule(max_pairs):
    """The rules are those chosen without near neighbours, some with ``/3`` added: the near
    pairs come from what the rules left of the budget (first chosen rule by rule, a token
    rule's near pairs pushed a later token rule out of a tight budget)."""
    from trustlab.er import generate_records
    from trustlab.er.defaults import check_pair_budget
    from trustlab.er.fields import infer_fields_report

    df = generate_records(6000, random_state=2)
    fields = infer_fields_report(df.drop(columns=["entity"])).fields
    plain = adaptive_blocking_rules(df, fields, max_pairs=max_pairs, near_neighbours=0)
    near = adaptive_blocking_rules(df, fields, max_pairs=max_pairs, near_neighbours=3)
    strip = [str(Rule(r.kind, r.columns, r.option, None if r.near and r.cap == 200 else r.cap))
             for r in map(parse_rule, near)]
    assert strip == plain
    assert check_pair_budget(df, near, 200, 1) <= max(max_pairs, check_pair_budget(df, plain, 200, 1))
