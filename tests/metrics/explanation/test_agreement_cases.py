"""S3.11: Ding & Koehn's number-agreement case rules on hand-parsed sentences (one rule per case)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from trustlab.metrics.explanation import agreement_cases, read_spans  # noqa: F401  (format partner)

KEYS = [("The", "DT", 2, "det"), ("keys", "NNS", 6, "nsubj"), ("to", "TO", 5, "case"), ("the", "DT", 5, "det"),
        ("cabinet", "NN", 2, "nmod"), ("are", "VBP", 0, "ROOT"), ("here", "RB", 6, "advmod")]


def test_basic_case_and_spacy_tokens():
    (c,) = agreement_cases(KEYS)
    assert c["tag"] == 1 and c["cue"] == [(1, 1)] and c["attractors"] == [(4, 4)] and c["verb"] == 5
    toks = [SimpleNamespace(i=i, text=f, tag_=t, dep_=d) for i, (f, t, _, d) in enumerate(KEYS)]
    for t, (_, _, h, _) in zip(toks, KEYS):
        t.head = toks[h - 1] if h else t
    assert agreement_cases(toks) == [c]


def test_each_rule_drops_what_it_should():
    # no attractor of the other number
    assert agreement_cases([("The", "DT", 2, "det"), ("keys", "NNS", 4, "nsubj"), ("here", "RB", 4, "advmod"),
                            ("are", "VBP", 0, "ROOT")]) == []
    # verb right after the subject
    assert agreement_cases([("The", "DT", 2, "det"), ("cabinet", "NN", 3, "nmod"), ("keys", "NNS", 4, "nsubj"),
                            ("are", "VBP", 0, "ROOT")]) == []
    # subject-verb disagreement in the parse (NN subject with VBP): no case
    bad = [list(r) for r in KEYS]
    bad[1][1] = "NN"
    bad[4][1] = "NNS"
    assert agreement_cases([tuple(r) for r in bad]) == []
    # attractor too far from the subject
    far = [("cabinet", "NN", 13, "dep")] + [("x", "RB", 13, "advmod")] * 10 + \
          [("the", "DT", 13, "det"), ("keys", "NNS", 15, "nsubj"), ("here", "RB", 15, "advmod"),
           ("are", "VBP", 0, "ROOT")]
    assert agreement_cases(far) == [] and len(agreement_cases(far, max_distance=13)) == 1
    # a compound modifier of a plural noun is no attractor ("customer services")
    comp = [("customer", "NN", 2, "compound"), ("services", "NNS", 4, "nsubj"), ("here", "RB", 4, "advmod"),
            ("are", "VBP", 0, "ROOT")]
    assert agreement_cases(comp) == []
    # verb before its subject ("... says the chancellor"): no case
    inv = [("papers", "NNS", 2, "nsubj"), ("says", "VBZ", 0, "ROOT"), ("the", "DT", 4, "det"),
           ("chancellor", "NN", 2, "nsubj")]
    assert agreement_cases(inv) == []


def test_copula_case():
    rows = [("The", "DT", 2, "det"), ("roof", "NN", 7, "nsubj"), ("of", "IN", 5, "case"),
            ("the", "DT", 5, "det"), ("houses", "NNS", 2, "nmod"), ("is", "VBZ", 7, "cop"), ("red", "JJ", 0, "ROOT")]
    (c,) = agreement_cases(rows)
    assert c["verb"] == 5 and c["tag"] == 0 and c["attractors"] == [(4, 4)]
    with pytest.raises(ValueError, match="outside"):
        agreement_cases([("a", "NN", 9, "nsubj")])
