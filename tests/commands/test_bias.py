"""`trustlab bias ...`: JSON output, files, one-line errors with exit status 2."""
import json
from importlib import resources

import pytest

from trustlab.cli import main
from trustlab.metrics import bias as B

EMB = str(resources.files("trustlab") / "data" / "weat" / "word2vec_weat_subset.npz")


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_weat_single_test_json(capsys):
    rc, out, err = run(capsys, "bias", "weat", "--embeddings", EMB, "--test", "6", "--json")
    assert rc == 0
    d = json.loads(out)
    ref = B.weat_test(B.load_weat_embeddings(), 6)
    assert d["effect_size"] == pytest.approx(ref.effect_size) and d["p_value"] == pytest.approx(ref.p_value)
    assert d["method"] == "exact" and d["n_permutations"] == 12870


def test_weat_summary_and_output_file(capsys, tmp_path):
    out_file = tmp_path / "res.json"
    rc, out, err = run(capsys, "bias", "weat", "--embeddings", EMB, "--test", "all", "--seed", "0",
                       "--permutations", "2000", "-o", str(out_file), "-q")
    assert rc == 0 and "significant (p < 0.01, one-sided, greater)" in out and "dropped: {'X': ['Billy']}" in out
    d = json.loads(out_file.read_text())
    assert d["n_tests"] == 10 and d["results"]["10"]["dropped"]["X"] == ["Billy"]


def test_weat_custom_sets_text_embeddings(capsys, tmp_path):
    emb = B.load_weat_embeddings()
    words = ["math", "algebra", "poetry", "art", "man", "boy", "woman", "girl"]
    (tmp_path / "e.txt").write_text(
        "\n".join(w + " " + " ".join(f"{x:.7g}" for x in emb[w]) for w in words) + "\n"
    )
    sets = {"name": "mini", "X": words[:2], "Y": words[2:4], "A": words[4:6], "B": words[6:8] + ["nosuchword"]}
    (tmp_path / "s.json").write_text(json.dumps(sets))
    rc, out, err = run(capsys, "bias", "weat", "--embeddings", str(tmp_path / "e.txt"), "--sets",
                       str(tmp_path / "s.json"), "--json")
    assert rc == 0
    d = json.loads(out)
    r = B.weat(emb, sets["X"], sets["Y"], sets["A"], words[6:8])
    assert d["effect_size"] == pytest.approx(r.effect_size, abs=1e-5)
    assert d["dropped"]["B"] == ["nosuchword"] and d["n_permutations"] == 6


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--test", "11"], "Unknown WEAT test"),
        (["--test", "x"], "--test must be"),
        (["--permutations", "abc"], "--permutations"),
        (["--similarity", "foo"], "similarity"),
        (["--statistic", "mode"], "statistic"),
        (["--backend", "tpu", "--test", "1"], "backend"),
    ],
)
def test_weat_bad_args(capsys, argv, msg):
    rc, out, err = run(capsys, "bias", "weat", "--embeddings", EMB, *argv)
    assert rc == 2 and msg in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_files(capsys, tmp_path):
    rc, out, err = run(capsys, "bias", "weat", "--embeddings", str(tmp_path / "none.npz"))
    assert rc == 2 and "does not exist" in err
    (tmp_path / "bad.json").write_text("{not json")
    rc, out, err = run(capsys, "bias", "weat", "--embeddings", EMB, "--sets", str(tmp_path / "bad.json"))
    assert rc == 2 and "not valid JSON" in err
    (tmp_path / "s.json").write_text(json.dumps({"X": ["a"]}))
    rc, out, err = run(capsys, "bias", "weat", "--embeddings", EMB, "--sets", str(tmp_path / "s.json"))
    assert rc == 2 and "'X', 'Y', 'A', 'B'" in err
    (tmp_path / "n.txt").write_text("he 1 nan\nshe 0 1\nit 1 1\n")
    (tmp_path / "t.json").write_text(json.dumps({"X": ["he"], "Y": ["she"], "A": ["it"], "B": ["she"]}))
    rc, out, err = run(
        capsys, "bias", "weat", "--embeddings", str(tmp_path / "n.txt"), "--sets", str(tmp_path / "t.json")
    )
    assert rc == 2 and "NaN" in err


def test_mac_bayes_direct(capsys, tmp_path):
    (tmp_path / "m.json").write_text(
        json.dumps({"targets": ["man", "woman"], "attributes": {"c": ["career", "office"], "f": ["home"]}})
    )
    rc, out, err = run(capsys, "bias", "mac", "--embeddings", EMB, "--sets", str(tmp_path / "m.json"), "--json")
    assert rc == 0
    d = json.loads(out)
    r = B.mac(B.load_weat_embeddings(), ["man", "woman"], {"c": ["career", "office"], "f": ["home"]})
    assert d["value"] == pytest.approx(r.value)
    rc, out, err = run(
        capsys,
        "bias",
        "bayes",
        "--example",
        "--draws",
        "200",
        "--warmup",
        "50",
        "--chains",
        "2",
        "--seed",
        "0",
        "--json",
    )
    assert rc == 0
    d = json.loads(out)
    assert d["model"] == "connection" and len(d["coefficients"]) == 19 and "draws" not in d
    rc, out, err = run(capsys, "bias", "bayes", "--data", str(tmp_path / "nope.csv"))
    assert rc == 2 and "does not exist" in err
    rc, out, err = run(capsys, "bias", "direct", "--embeddings", EMB, "--json")
    assert rc == 0
    d = json.loads(out)
    assert 0 < d["direct_bias"] < 1 and len(d["per_word"]) == 32
