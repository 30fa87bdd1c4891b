"""Codes held in a ``*``-separated list (stop 46, issue 27).

The PATSTAT company holders (``patent``) carry their technology classes as ``G06F**H04J**H04L``.
``*`` was removed inside a word as a joiner of a model number, so each record had one glued code
(``g06fh04jh04l``): two patents of one company that share a class (``h04j``) shared no code, and the
glued string was rare, so sharing it *was* sharing the whole class list: the codes comparison counted
the Class column a second time, and the codes session (pairs that share a rare code) made the class
list's m look like a match must agree on it (pairwise F1 0.019; with ``*`` a separator 0.113).

The levels of the codes comparison are checked against a brute-force reference on sets.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from trustlab.er.comparisons import RARE_CODE_DF, _code_levels
from trustlab.er.kinds import code_tokens


def test_star_separated_lists_give_one_code_per_item():
    s = pd.Series(["G06F**H04J**H04L", "A61N*A61B", "H04J", "TH-50PZ850U**x"])
    got = code_tokens(s)
    per = {k: sorted(set(got[got.index == k])) for k in range(len(s))}
    assert per == {0: ["g06f", "h04j", "h04l"], 1: ["a61b", "a61n"], 2: ["h04j"], 3: ["th50pz850u"]}


def _brute_levels(lists: list[set], i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """1 when the records share a code held by at most RARE_CODE_DF records, 0.5 when they share only
    others, 0 when they share none (no neighbouring codes here: the letters differ), NaN without codes."""
    freq: dict[str, int] = {}
    for s in lists:
        for c in s:
            freq[c] = freq.get(c, 0) + 1
    out = []
    for a, b in zip(i, j):
        if not lists[a] or not lists[b]:
            out.append(np.nan)
            continue
        shared = lists[a] & lists[b]
        out.append(1.0 if any(freq[c] <= RARE_CODE_DF for c in shared) else 0.5 if shared else 0.0)
    return np.array(out)


def test_code_levels_of_class_lists_equal_brute_force():
    rng = np.random.default_rng(7)
    # classes of one letter-digit-digit-letter shape whose letters differ, so no two are neighbours
    # (code_variant): the levels are shared rare / shared common / none only
    pool = [f"{a}{d:02d}{b}" for a, b, d in zip("ABCDEFGHJKLMNPQRSTUVWXYZ", "ZYXWVUTSRQPNMLKJHGFEDCBA", range(10, 99, 3))]
    weights = np.r_[np.full(6, 8.0), np.ones(len(pool) - 6)]  # six common classes, the rest rare
    weights /= weights.sum()
    lists, vals = [], []
    for _ in range(120):
        k = int(rng.integers(0, 4))
        items = list(rng.choice(pool, size=k, replace=False, p=weights)) if k else []
        lists.append({x.lower() for x in items})
        vals.append(("**" if rng.random() < 0.7 else "*").join(items))
    P = np.array([(a, b) for a in range(120) for b in range(a + 1, 120)])
    got = _code_levels(pd.Series(vals), P[:, 0], P[:, 1])
    want = _brute_levels(lists, P[:, 0], P[:, 1])
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok], want[ok])
    # the three levels all occur (the reference is not trivially all "none")
    assert {0.0, 0.5, 1.0} <= set(want[ok].tolist())
