"""``trustlab explain-metrics`` CLI: JSON output, file inputs, atomic output, one-line errors."""
import doctest
import gzip
import importlib
import json
import pkgutil
from importlib import resources

import pytest

from trustlab.cli import main
from trustlab.metrics import explanation, reliability


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_plausibility_bundled(capsys):
    out = _json(capsys, ["explain-metrics", "plausibility", "--task", "gender", "--baselines", "--json"])
    assert out["matches_released_pass_list"] is True
    assert (out["n_passed"], out["n"]) == (999, 1000)
    assert out["baselines"]["nearest_expected"] == pytest.approx(0.5)


def _unzip(tmp_path, *parts):
    src = resources.files("trustlab").joinpath("data", "explain", *parts)
    dst = tmp_path / parts[-1].removesuffix(".gz")
    with src.open("rb") as fh:
        dst.write_bytes(gzip.decompress(fh.read()))
    return str(dst)


def test_plausibility_files_and_output(tmp_path, capsys):
    sal = ("ding_koehn", "saliency", "example-gender", "distilled")
    verum = _unzip(tmp_path, *sal, "out.verum.gz")
    malum = _unzip(tmp_path, *sal, "out.malum.gz")
    pos = _unzip(tmp_path, *sal, "out.pos.idx.gz")
    passed = _unzip(tmp_path, *sal, "out.passed.idx.gz")
    spans = _unzip(tmp_path, "ding_koehn", "Winobias", "all.subjs.txt.gz")
    prefx = _unzip(tmp_path, "ding_koehn", "Winobias", "all.prefx.txt.gz")
    target = tmp_path / "ours.passed.idx"
    out = _json(capsys, ["explain-metrics", "plausibility", "--verum", verum, "--malum", malum, "--spans", spans,
                         "--expected", pos, "--prefixes", prefx, "--output", str(target), "--json"])
    assert out["n_passed"] == 997
    assert target.read_text() == open(passed).read()
    # text mode
    assert main(["explain-metrics", "plausibility", "--verum", verum, "--malum", malum, "--spans", spans,
                 "--expected", pos]) == 0
    assert "997/1000" in capsys.readouterr().out


def test_consistency_and_geco(capsys):
    out = _json(capsys, ["explain-metrics", "consistency", "input", "--json"])
    vals = [round(v["value"], 3) for v in out["results"].values()]
    assert vals == [0.775, 0.752]
    out = _json(capsys, ["explain-metrics", "consistency", "model", "--task", "gender", "--json"])
    assert [round(v["value"], 3) for v in out["results"].values()] == [0.656, 0.581]
    out = _json(capsys, ["explain-metrics", "geco-bias", "--variant", "subj", "--json"])
    assert round(out["value"], 4) == 0.4753
    out = _json(capsys, ["explain-metrics", "mass-accuracy", "--variant", "all", "--pattern-variant", "--json"])
    assert round(out["uniform_baseline"], 3) == 0.169
    assert round(out["pattern_variant"], 3) == 0.992


def test_mass_accuracy_with_attributions(tmp_path, capsys):
    data = explanation.load_geco("subj", "test")
    geco = tmp_path / "test.jsonl"
    attr = tmp_path / "attr.txt"
    with open(geco, "w") as g, open(attr, "w") as a:
        for s, h, t in list(zip(data.sentences, data.ground_truth, data.targets))[:40]:
            g.write(json.dumps({"sentence": s, "ground_truth": h.astype(int).tolist(), "target": int(t)}) + "\n")
            a.write(str((h * 2 + 1).tolist()) + "\n")
    out = _json(
        capsys, ["explain-metrics", "mass-accuracy", "--data", str(geco), "--attributions", str(attr), "--json"]
    )
    ref = explanation.mass_accuracy([h * 2 + 1 for h in data.ground_truth[:40]], data.ground_truth[:40]).value
    assert out["value"] == pytest.approx(ref)
    attr.write_text("[1.0, 2.0]\n" * 40)  # wrong lengths -> one-line error, exit 2
    assert main(["explain-metrics", "mass-accuracy", "--data", str(geco), "--attributions", str(attr)]) == 2
    assert "one entry per word" in capsys.readouterr().err


@pytest.mark.parametrize("argv, msg", [
    (["plausibility", "--verum", "x.txt"], "must be given together"),
    (["plausibility", "--verum", "/no/such", "--malum", "m", "--spans", "s", "--expected", "e"], "no such file"),
    (["consistency", "input", "--task", "number"], "Winobias"),
    (["consistency", "model", "--saliency-a", "x"], "together"),
    (["geco-bias", "--data", "/no/such.jsonl"], "no such file"),
])
def test_errors_are_one_line(argv, msg, capsys):
    assert main(["explain-metrics", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.count("\n") == 1


def test_nan_saliency_file(tmp_path, capsys):
    bad = tmp_path / "v"
    bad.write_text("[0.1, nan]\n")
    idx = tmp_path / "i"
    idx.write_text("0\n")
    sp = tmp_path / "s"
    sp.write_text("[(0, 0)] ||| [(1, 1)]\n")
    assert main(["explain-metrics", "plausibility", "--verum", str(bad), "--malum", str(bad),
                 "--spans", str(sp), "--expected", str(idx)]) == 2
    assert "NaN" in capsys.readouterr().err


@pytest.mark.parametrize("mod", [explanation, reliability])
def test_docstring_examples_run(mod):
    mods = [mod] + [importlib.import_module(m.name)
                    for m in pkgutil.walk_packages(getattr(mod, "__path__", []), mod.__name__ + ".")]
    attempted = failed = 0
    for m in mods:
        res = doctest.testmod(m, optionflags=doctest.NORMALIZE_WHITESPACE)
        attempted, failed = attempted + res.attempted, failed + res.failed
    assert attempted > 10 and failed == 0
