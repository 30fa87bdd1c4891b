"""Scored-pair export (--pairs) and the HTML report (--report), checked in headless Chromium."""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pandas as pd
import pytest

from trustlab.cli import main
from trustlab.er import generate_records, resolve
from trustlab.er.report import pairs_frame, report_html, write_report

FIELDS = "given_name:name,surname:name,date_of_birth:date,soc_sec_id:string"


@pytest.fixture(scope="module")
def run():
    df = generate_records(160, dup_rate=0.4, random_state=21)
    return df, resolve(df, id_col="rec_id", fields=FIELDS, truth="entity")


def test_pairs_frame_weights_add_up(run):
    df, r = run
    pf = pairs_frame(r)
    assert len(pf) == len(r.pairs)
    assert list(pf.columns[:4]) == ["rec_id_l", "rec_id_r", "match_probability", "weight"]
    wcols = [c for c in pf.columns if c.startswith("w_")]
    assert wcols == ["w_given_name", "w_surname", "w_date_of_birth", "w_soc_sec_id"]
    # per-field weights + prior log-odds = the pair's log-odds (Fellegi-Sunter is additive)
    lam = r.model.lambda_
    lo = np.log(lam / (1 - lam)) + pf[wcols].sum(1).to_numpy()
    p = 1 / (1 + np.exp(-np.clip(lo, -50, 50)))
    assert np.allclose(p, pf["match_probability"], atol=1e-9)
    # ids and entities agree with the resolution
    ent = dict(zip(r.ids, r.entity))
    assert (pf["entity_l"] == pf["rec_id_l"].map(ent)).all() and (pf["entity_r"] == pf["rec_id_r"].map(ent)).all()
    assert (pf["same_entity"] == (pf["entity_l"] == pf["entity_r"])).all()


def test_report_content(run):
    df, r = run
    h = report_html(r, title="t <x>")
    assert h.startswith("<!DOCTYPE html>") and "t &lt;x&gt;" in h
    for part in ("Summary", "m/u table", "weight-histogram", "id='search'", "certificate", "<script>"):
        assert part in h, part
    assert "http://" not in h.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in h
    n_multi = int((pd.Series(r.entity).value_counts() >= 2).sum())
    assert h.count("class='entity'") == n_multi
    assert h.count("class='entity'") == report_html(r, max_entities=3).count("class='entity'") + n_multi - 3


def test_cli_pairs_and_report(tmp_path, capsys, run):
    df, r = run
    inp = tmp_path / "in.csv"
    df.to_csv(inp, index=False)
    pc, pq, rep = tmp_path / "pairs.csv", tmp_path / "pairs.parquet", tmp_path / "report.html"
    assert main(["resolve", str(inp), "--id-col", "rec_id", "--fields", FIELDS, "--pairs", str(pc),
                 "--report", str(rep), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pairs"] == str(pc) and out["report"] == str(rep)
    a = pd.read_csv(pc)
    assert len(a) == len(r.pairs) and "w_surname" in a.columns
    pytest.importorskip("pyarrow")
    assert main(["resolve", str(inp), "--id-col", "rec_id", "--fields", FIELDS, "--pairs", str(pq), "-q"]) == 0
    b = pd.read_parquet(pq)
    assert b.shape == a.shape and np.allclose(b["match_probability"], a["match_probability"])
    assert rep.read_text().count("class='entity'") >= 1


def _chromium():
    for c in ("/usr/bin/chromium", "/usr/bin/chromium-browser", shutil.which("chromium") or "",
              shutil.which("chromium-browser") or "", shutil.which("google-chrome") or ""):
        if c and os.path.exists(c):
            return c
    return None


def _headless(browser, url, *extra):
    prof = tempfile.mkdtemp()
    try:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={prof}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000",
               *extra, url]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        return p.stdout, p.stderr
    finally:
        shutil.rmtree(prof, ignore_errors=True)


def _js_errors(stderr):
    return [ln for ln in stderr.splitlines() if "CONSOLE" in ln.upper() or "Uncaught" in ln]


def test_report_in_headless_chromium(tmp_path, run):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium not installed (apt-get install -y chromium); the HTML report is not checked "
                    "in a browser")
    df, r = run
    page = write_report(r, tmp_path / "report.html")
    dom, err = _headless(browser, page.as_uri(), "--dump-dom")
    assert 'data-selfcheck="ok"' in dom, "the report's own JS self-check did not pass"
    assert not _js_errors(err), _js_errors(err)
    shot = tmp_path / "shot.png"
    _headless(browser, page.as_uri(), f"--screenshot={shot}", "--window-size=1200,900")
    assert shot.exists() and shot.stat().st_size > 1000
    from matplotlib.image import imread

    img = imread(str(shot))
    assert img.shape[0] > 100 and float(img[..., :3].std()) > 0.02  # not blank
    # the error detection itself works: a page with a JS error is caught
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    dom2, err2 = _headless(browser, bad.as_uri(), "--dump-dom")
    assert _js_errors(err2) and "data-selfcheck" not in dom2


def test_report_shows_what_matters(tmp_path):
    """The weight histogram is on a log count scale (the few within-entity pairs stay
    visible beside the many across), missing values are empty cells (not NaN), and the
    fields box says how the fields were chosen."""
    import re

    import pandas as pd

    import trustlab
    from trustlab.er.report import report_html

    df = pd.DataFrame({"id": range(8), "name": ["ann lee", "anne lee", "bob ray", "bob rae", "cy zed", "dee moss",
                                                "eve hart", "fay lund"],
                       "city": ["paris", None, "rome", "rome", None, "oslo", "kyiv", "lima"]})
    r = trustlab.resolve(df, id_col="id", fields="name:name,city:exact", method="connected_components")
    page = report_html(r)
    assert "log scale" in page
    assert "<td>NaN</td>" not in page and ">nan<" not in page
    assert re.search(r"<h2>Fields: given by the caller", page)
    r2 = trustlab.resolve(df, id_col="id", method="connected_components")
    assert "<h2>Fields: inferred from each column" in report_html(r2)
