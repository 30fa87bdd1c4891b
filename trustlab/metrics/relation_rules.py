"""Model-free pieces of Tang & Surdeanu's rule-bootstrapped relation extractor
(TrustNLP 2021: Section 3.1, Section 4 footnote 1, Table 3).

* :func:`pruned_dependency_tree` (Section 3.1) — the path-centric pruning of Zhang, Qi & Manning
  (2018, C-GCN) that the paper feeds its GCN: the dependency path between the subject and
  object spans through their lowest common ancestor, plus every token at most ``k`` steps
  below a path node (``k = 1``: "K-1"), as node set and adjacency matrix.
* :func:`negative_pairs` (Section 4, footnote 1) — ``no_relation`` examples from the other
  entity-mention pairs of a sentence with a positive triple, skipping the inverse pair of
  inverse/symmetric relations.
* :func:`top_rules` (Table 3 and its footnote 5) — the rule-subset learning curve: rules sorted
  by match frequency on the training set, the top n % kept.

TACRED (LDC-licensed) and the trained network are not needed by these functions; they take the
user's parses, mentions and rule matches.
"""
from __future__ import annotations

import math
import numbers
from collections import Counter
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from trustlab._validation import Interval, validate_params

__all__ = ["pruned_dependency_tree", "PrunedTree", "negative_pairs", "top_rules"]


@dataclass(frozen=True)
class PrunedTree:
    """Result of :func:`pruned_dependency_tree`.

    Attributes
    ----------
    nodes : list of int
        Kept token indices (0-based), sorted.
    path : list of int
        The dependency path: the span tokens, their ancestors up to the LCA, and the LCA.
    lca : int
        The lowest common ancestor of all subject and object tokens (the pruned tree's root).
    distance : numpy.ndarray
        Per token, the number of steps up to the path (0 on it; -1 where no path node is
        above the token, i.e. it hangs off an ancestor of the LCA).
    adjacency : numpy.ndarray of shape (n, n)
        Symmetric 0/1 tree edges among the kept nodes (no self loops; the LCA's edge to
        its head is cut), as Zhang et al.'s ``tree_to_adj(directed=False)``.
    """

    nodes: list
    path: list
    lca: int
    distance: np.ndarray
    adjacency: np.ndarray


def _heads(tree: Sequence[Any]) -> list[int]:
    """0-based head per token, -1 for the root; CoNLL ints (1-based, 0 = root) or spaCy-like tokens."""
    items = list(tree)
    if not items:
        raise ValueError("the dependency tree is empty.")
    if all(hasattr(t, "head") and hasattr(t, "i") for t in items):
        base = items[0].i
        return [-1 if t.head.i == t.i else int(t.head.i) - base for t in items]
    try:
        heads = [int(h) - 1 for h in items]
    except (TypeError, ValueError):
        raise ValueError("heads must be CoNLL head indices (1-based, 0 for the root) or spaCy-like tokens "
                         "with .i and .head.") from None
    n = len(heads)
    if any(h < -1 or h >= n for h in heads):
        raise ValueError(f"a head index is outside [0, {n}] (1-based, 0 = root).")
    return heads


def _span(span, n, name):
    try:
        a, b = (int(x) for x in span)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (start, end) pair of token indices (0-based, inclusive).") from None
    if not 0 <= a <= b < n:
        raise ValueError(f"{name} {span!r} is outside the sentence of {n} tokens (0-based, end inclusive).")
    return list(range(a, b + 1))


def _ancestors(i, heads):
    out = [i]
    seen = {i}
    while heads[out[-1]] >= 0:
        h = heads[out[-1]]
        if h in seen:
            raise ValueError(f"the heads contain a cycle through token {h}; pass a tree.")
        seen.add(h)
        out.append(h)
    return out


@validate_params({"heads": ["array-like"], "subject_span": ["array-like"], "object_span": ["array-like"],
                  "k": [Interval(numbers.Integral, 0, None, closed="left")]})
def pruned_dependency_tree(heads: Sequence[Any], subject_span: Sequence[int], object_span: Sequence[int], *,
                           k: int = 1) -> PrunedTree:
    """The K-``k`` pruned dependency tree around a subject and an object span (Tang & Surdeanu, Section 3.1).

    Following Zhang, Qi & Manning's released ``head_to_tree``: the path consists of every
    subject and object token and its ancestors up to, and including, the lowest common
    ancestor (LCA) of all of them; a token is kept when the path is at most ``k`` steps
    above it. Tokens hanging off ancestors of the LCA are dropped, and the LCA is the root
    of the pruned tree.

    Parameters
    ----------
    heads : sequence of int, or of spaCy-like tokens
        CoNLL heads (1-based, 0 for the root) or tokens with ``.i`` and ``.head``.
    subject_span, object_span : (start, end)
        Token spans, 0-based, end inclusive (TACRED's ``subj_start``/``subj_end``).
    k : int
        Pruning distance (1 in the paper; 0 keeps the path only).

    Returns
    -------
    PrunedTree

    Examples
    --------
    >>> # "He was born in Honolulu , Hawaii ." ; born is the root
    >>> heads = [3, 3, 0, 5, 3, 5, 5, 3]
    >>> t = pruned_dependency_tree(heads, (0, 0), (4, 4))
    >>> t.path, t.nodes, t.lca
    ([0, 2, 4], [0, 1, 2, 3, 4, 5, 6, 7], 2)
    >>> pruned_dependency_tree(heads, (0, 0), (4, 4), k=0).nodes
    [0, 2, 4]
    """
    h = _heads(heads)
    n = len(h)
    subj = _span(subject_span, n, "subject_span")
    obj = _span(object_span, n, "object_span")
    chains = [_ancestors(i, h) for i in subj + obj]
    common = set(chains[0])
    for c in chains[1:]:
        common.intersection_update(c)
    if not common:
        raise ValueError("the subject and object are in different trees (no common ancestor); pass one tree.")
    # the LCA: the common ancestor closest to the tokens (first common node on any chain)
    lca = next(a for a in chains[0] if a in common)
    path = set()
    for c in chains:
        for a in c:
            path.add(a)
            if a == lca:
                break
    dist = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        d, j = 0, i
        while j >= 0 and j not in path:
            j = h[j]
            d += 1
        if j >= 0:
            dist[i] = d
    keep = [i for i in range(n) if 0 <= dist[i] <= k]
    kept = set(keep)
    A = np.zeros((n, n), dtype=np.int8)
    for i in keep:
        if i != lca and h[i] in kept:
            A[i, h[i]] = A[h[i], i] = 1
    return PrunedTree(nodes=keep, path=sorted(path), lca=int(lca), distance=dist, adjacency=A)


@validate_params({"mentions": ["array-like"], "positives": ["array-like"], "inverse": ["mapping", None],
                  "symmetric": ["array-like"]})
def negative_pairs(
    mentions: Sequence[Hashable],
    positives: Sequence[tuple[Hashable, str, Hashable]],
    *,
    inverse: Mapping[str, str] | None = None,
    symmetric: Iterable[str] = (),
    negative: str = "no_relation",
) -> list[tuple[Hashable, str, Hashable]]:
    """``no_relation`` examples for one sentence (Tang & Surdeanu's rule-only data, Section 4, footnote 1).

    For a sentence with positive triples (subject, relation, object), every other ordered
    pair of distinct entity mentions becomes a negative example, except the inverse pair
    (object, subject) of a positive whose relation has an inverse (``inverse``, e.g.
    per:children ↔ per:parents) or is symmetric (e.g. per:siblings): that pair holds the
    inverse relation, not ``no_relation``. The paper obtains 3,850 positives and 12,311
    negatives on TACRED this way (not reproducible without TACRED).

    Parameters
    ----------
    mentions : sequence of hashable
        The sentence's entity mentions (ids or spans).
    positives : sequence of (subject, relation, object)
    inverse : mapping relation -> inverse relation, optional
        Taken as symmetric: either direction may be given.
    symmetric : iterable of str
        Relations that are their own inverse.
    negative : str
        The negative label.

    Returns
    -------
    list of (subject, negative, object)
        In mention order.

    Examples
    --------
    >>> negative_pairs(["Ann", "Bob", "IBM"], [("Ann", "per:children", "Bob")],
    ...                inverse={"per:children": "per:parents"})
    [('Ann', 'no_relation', 'IBM'), ('Bob', 'no_relation', 'IBM'), ('IBM', 'no_relation', 'Ann'), \
('IBM', 'no_relation', 'Bob')]
    """
    ms = list(dict.fromkeys(mentions))
    inv = set()
    for a, b in (inverse or {}).items():
        inv.update((a, b))
    sym = set(symmetric)
    taken = set()
    for p in positives:
        try:
            s, r, o = p
        except (TypeError, ValueError):
            raise ValueError(f"each positive must be a (subject, relation, object) triple; got {p!r}.") from None
        if s not in ms or o not in ms:
            raise ValueError(f"positive {p!r} names a mention that is not in mentions.")
        taken.add((s, o))
        if r in inv or r in sym:
            taken.add((o, s))
    return [(a, negative, b) for a in ms for b in ms if a != b and (a, b) not in taken]


@validate_params({"matches": ["array-like", "mapping"],
                  "percent": [Interval(numbers.Real, 0, 100, closed="right")]})
def top_rules(matches, percent: float) -> list:
    """The top ``percent`` % of rules by match frequency on the training set (Tang & Surdeanu, Table 3).

    Tang & Surdeanu's learning curve keeps the 20 / 40 / 60 / 80 % most frequently matching
    rules. Rules are sorted by frequency, descending (ties: first appearance), and the first
    ⌈percent/100 · n_rules⌉ are kept (the paper does not say how it rounds).

    Parameters
    ----------
    matches : mapping rule -> count, or sequence of matched rules
        A flat sequence counts one match per occurrence; a sequence of lists (the rules
        matching each training example) counts each list's rules.
    percent : float in (0, 100]

    Returns
    -------
    list
        The kept rules, most frequent first.

    Examples
    --------
    >>> top_rules({"r1": 5, "r2": 40, "r3": 12, "r4": 1, "r5": 12}, 40)
    ['r2', 'r3']
    >>> top_rules([["r1", "r2"], ["r2"], [], ["r3", "r2"]], 60)
    ['r2', 'r1']
    """
    if isinstance(matches, Mapping):
        counts = Counter()
        for r, c in matches.items():
            if not isinstance(c, numbers.Real) or c < 0:
                raise ValueError(f"the count of rule {r!r} must be a number >= 0; got {c!r}.")
            counts[r] += c
    else:
        counts = Counter()
        for m in matches:
            if isinstance(m, (list, tuple, set, frozenset)):
                counts.update(m)
            else:
                counts[m] += 1
    if not counts:
        raise ValueError("matches is empty; give the rules' match counts on the training set.")
    items = list(counts.items())  # insertion order: first appearance
    rules = [items[i][0] for i in sorted(range(len(items)), key=lambda i: (-items[i][1], i))]
    keep = math.ceil(float(percent) / 100.0 * len(rules) - 1e-9)
    return rules[:max(1, keep)]
