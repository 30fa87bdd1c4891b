"""``trustlab warmup``: every kernel family, in this process or in parallel processes."""
import json

import pytest

from trustlab.cli import main
from trustlab.commands.warmup import FAMILIES, warm_caches


def test_parallel_families_run_in_their_own_processes():
    r = warm_caches(jobs=2, families=["weat", "resolve"])
    assert set(r) == {"weat", "resolve"} and all(v >= 0 for v in r.values())


def test_unknown_family_and_bad_jobs_are_refused():
    with pytest.raises(ValueError, match="unknown kernel families.*'nope'"):
        warm_caches(families=["nope"])
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        warm_caches(jobs=0)


def test_cli_json(capsys, monkeypatch):
    ran = []
    monkeypatch.setitem(FAMILIES, "weat", lambda: ran.append("weat"))
    for k in list(FAMILIES):
        if k != "weat":
            monkeypatch.delitem(FAMILIES, k)
    assert main(["warmup", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["families"]) == {"weat"} and out["jobs"] == 1 and ran == ["weat"]
    assert main(["warmup", "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
