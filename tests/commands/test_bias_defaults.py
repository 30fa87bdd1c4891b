"""`trustlab bias weat|mac|direct` default to the bundled data; WEAT sidedness is stated;
`trustlab info --data` lists the bundled files."""
import json
import os

import pytest

from trustlab.cli import main
from trustlab.metrics import bias as B


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_weat_defaults_to_bundled_embeddings(capsys):
    rc, out, err = run(capsys, "bias", "weat", "--test", "6", "--json")
    assert rc == 0
    d = json.loads(out)
    ref = B.weat_test(B.load_weat_embeddings(), 6)
    assert d["effect_size"] == pytest.approx(ref.effect_size) and d["p_value"] == pytest.approx(ref.p_value)
    assert d["alternative"] == "two-sided"
    rc, out, err = run(capsys, "bias", "weat", "--test", "6")
    assert "bundled word2vec" in out and "(two-sided;" in out


def test_weat_sidedness_stated_and_consistent(capsys):
    rc, out, err = run(capsys, "bias", "weat", "--test", "all", "--permutations", "500", "--seed", "0", "--json", "-q")
    d = json.loads(out)
    assert d["alternative"] == "greater"
    assert all(r["alternative"] == "greater" for r in d["results"].values())
    rc, out, err = run(capsys, "bias", "weat", "--test", "all", "--permutations", "500", "--seed", "0", "-q")
    assert "one-sided, greater" in out and "a single --test is two-sided by default" in out
    # the one-sided p of a single test equals the summary's for the same alternative (exact test 6)
    rc, out, err = run(capsys, "bias", "weat", "--test", "6", "--alternative", "greater", "--json")
    one = json.loads(out)
    s = B.weat_summary(B.load_weat_embeddings(), tests=[6])
    assert s.alternative == "greater"
    assert one["p_value"] == pytest.approx(s.results["6"]["p_value"])
    assert one["p_value"] == pytest.approx(B.weat_test(B.load_weat_embeddings(), 6).p_value / 2, rel=0.05)


def test_mac_defaults(capsys):
    rc, out, err = run(capsys, "bias", "mac", "--json")
    assert rc == 0
    d = json.loads(out)
    sets = B.load_weat_sets()
    ref = B.mac(B.load_weat_embeddings(), sets["professions"],
                {"female": [f for f, _ in sets["gender_pairs"]], "male": [m for _, m in sets["gender_pairs"]]})
    assert d["value"] == pytest.approx(ref.value)
    rc, out, err = run(capsys, "bias", "mac")
    assert "bundled 32 professions" in out and "MAC =" in out


def test_direct_defaults(capsys):
    rc, out, err = run(capsys, "bias", "direct", "--json")
    assert rc == 0
    d = json.loads(out)
    emb = B.load_weat_embeddings()
    sets = B.load_weat_sets()
    ref = B.direct_bias(emb, sets["professions"], B.gender_direction(emb, sets["gender_pairs"]))
    assert d["direct_bias"] == pytest.approx(ref.value)


def test_info_data_lists_bundled_files(capsys):
    rc, out, err = run(capsys, "info", "--data", "--json")
    assert rc == 0
    d = json.loads(out)
    flat = [p for ps in d.values() for p in ps]
    for name in ("wildcats.txt", "karate.edges", "word2vec_weat_subset.npz"):
        hits = [p for p in flat if p.endswith(os.sep + name)]
        assert len(hits) == 1 and os.path.isabs(hits[0]) and os.path.isfile(hits[0])
    assert not any(p.endswith("LICENSE-NOTES.md") for p in flat)
    rc, out, err = run(capsys, "info", "--data")
    assert "karate.edges" in out and "cplib:" in out


def test_info_doctest():
    import doctest

    from trustlab.commands import info
    assert doctest.testmod(info).failed == 0
