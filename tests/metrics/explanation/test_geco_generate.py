"""GECO gender-swap generator (D_A / D_S, names, ground-truth masks), checked on GECO's own pairs."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from trustlab.metrics import geco_cooccurrence_bias, load_geco, mass_accuracy
from trustlab.metrics.explanation import geco_variants, gender_swap


def _pairs(variant):
    out = []
    for split in ("train", "test"):
        d = load_geco(variant, split)
        by: dict = {}
        for s, g, t, i in zip(d.sentences, d.ground_truth, d.targets, d.sentence_idx):
            by.setdefault(i, {})[t] = (list(s), [int(x) for x in g])
        out += [v for v in by.values() if 0 in v and 1 in v]
    return out


def _same(a, b):
    return [w.strip() for w in a] == [w.strip() for w in b]


@pytest.mark.parametrize("variant,to_male,to_female,gt", [("all", 0.88, 0.93, 0.95), ("subj", 0.95, 0.97, 0.99)])
def test_reproduces_gecos_own_pairs(variant, to_male, to_female, gt):
    pairs = _pairs(variant)
    assert len(pairs) == 1610
    ok_m = ok_f = ok_gt = 0
    for v in pairs:
        (fs, fg), (ms, mg) = v[0], v[1]
        subj_f = None if variant == "all" else [k for k, x in enumerate(fg) if x]
        subj_m = None if variant == "all" else [k for k, x in enumerate(mg) if x]
        rm = gender_swap(fs, to="male", subject=subj_f)
        rf = gender_swap(ms, to="female", subject=subj_m)
        ok_m += _same(rm.tokens, ms)
        ok_f += _same(rf.tokens, fs)
        ok_gt += rf.ground_truth == mg
    n = len(pairs)
    assert ok_m / n >= to_male and ok_f / n >= to_female and ok_gt / n >= gt


def test_swap_details():
    r = gender_swap("HE told Mrs. Smith that his son loved her".split(), to="female", names={"Tom": "Ann"})
    assert r.tokens == "SHE told Mrs. Smith that her daughter loved her".split()
    assert r.ground_truth == [1, 0, 1, 0, 0, 1, 1, 0, 1] and r.changed == [0, 5, 6]
    back = gender_swap(r.tokens, to="male")
    assert back.tokens[:8] == "HE told Mr. Smith that his son loved".split() and back.tokens[8] == "him"
    assert gender_swap(["Tom", "waved"], to="female", names={"Tom": "Ann"}).tokens == ["Ann", "waved"]
    assert gender_swap(["Ann", "waved"], to="male", names={"Tom": "Ann"}).tokens == ["Tom", "waved"]
    # tags decide "her" when given
    toks = [SimpleNamespace(text=w, tag_=t) for w, t in [("saw", "VBD"), ("her", "PRP$"), (".", ".")]]
    assert gender_swap(toks, to="male").tokens == ["saw", "his", "."]
    with pytest.raises(ValueError, match="outside the sentence"):
        gender_swap(["he"], to="female", subject=[3])


def test_variants_feed_the_geco_metrics():
    sents = [s.split() for s in ("She thanks her father .", "He and his wife left .", "The dog barked .")]
    recs = geco_variants(sents)
    assert len(recs) == 6 and [r["target"] for r in recs] == [1, 0] * 3
    assert [r["sentence_idx"] for r in recs] == [0, 0, 1, 1, 2, 2]
    assert recs[3]["sentence"] == "She and her wife left .".split()   # D_A: every protagonist female
    # perfectly balanced by construction: the co-occurrence bias is 0.5
    res = geco_cooccurrence_bias([r["sentence"] for r in recs], [r["target"] for r in recs])
    assert res.value == pytest.approx(0.5)
    gts = [r["ground_truth"] for r in recs[:4]]
    ma = mass_accuracy([np.asarray(g, float) for g in gts], gts)   # attributions = ground truth: MA = 1
    assert ma.value == pytest.approx(1.0)


def test_subject_variant_from_dependency_parse():
    words = [("She", "nsubj", 1), ("met", "ROOT", 1), ("his", "poss", 3), ("father", "dobj", 1)]
    toks = [SimpleNamespace(text=w, dep_=d) for w, d, _ in words]
    for t, (_, _, h) in zip(toks, words):
        t.head = toks[h]
    recs = geco_variants([toks], variant="S")
    assert [" ".join(r["sentence"]) for r in recs] == ["He met his father", "She met his father"]
    assert recs[0]["ground_truth"] == [1, 0, 0, 0]
    with pytest.raises(ValueError, match="subject"):
        geco_variants([["She", "left"]], variant="S")
