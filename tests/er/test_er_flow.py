"""The er modules are the stages of ``resolve`` and a record's path reads once, top to bottom
(issue 27, item 7): traced through a ``resolve``, no stage module moves into a module it had
already left (other than the orchestrator ``pipeline`` and the shared modules), and the stages
are first visited in their order; statically, no module of stages 1-6 imports an earlier one."""
from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

import pytest

import trustlab

#: called by every stage; not stages themselves
SHARED = ("kinds", "rules", "defaults", "settings")
ORCHESTRATOR = "pipeline"


def _trace(fn, *args, **kwargs) -> list[str]:
    """The ``trustlab.er`` modules (short names, shared ones left out) of the Python calls
    made by ``fn(*args, **kwargs)``, in order, a module repeated only when another came between."""
    seq: list[str] = []

    def prof(frame, event, arg):
        if event == "call":
            m = frame.f_globals.get("__name__", "")
            if m.startswith("trustlab.er."):
                m = m.split(".")[2]
                if m not in SHARED and (not seq or seq[-1] != m):
                    seq.append(m)

    sys.setprofile(prof)
    try:
        fn(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return seq


def _stage_to_stage_returns(seq: list[str]) -> list[str]:
    """Moves from a stage module into a module already left (not the orchestrator)."""
    left: set = set()
    bad = []
    for a, b in zip(seq, seq[1:]):
        left.add(a)
        if b in left and a != ORCHESTRATOR and b != ORCHESTRATOR:
            bad.append(f"{a} > {b}")
    return bad


def _resolve_args(link: bool):
    from trustlab.er import generate_records

    df = generate_records(150, random_state=0).drop(columns=["entity"])
    if link:
        return ([df.iloc[:75], df.iloc[75:]],), {"id_col": "rec_id", "link_type": "link_only"}
    return (df,), {"id_col": "rec_id"}


@pytest.fixture(scope="module", params=[False, True], ids=["one_table", "link_only"])
def traced(request):
    import trustlab.er.distributed  # noqa: F401  (resolve imports it lazily; its import is no visit)
    from trustlab.er import resolve

    args, kw = _resolve_args(request.param)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolve(*args, **kw)  # imports and compiled kernels first: the traced call is the steady path
        return _trace(resolve, *args, **kw)


def test_no_stage_returns_to_a_module_it_left(traced):
    assert {"records", "fields", "blocking", "comparisons", "scoring", "cluster", "resolution"} <= set(traced)
    bad = _stage_to_stage_returns(traced)
    assert not bad, f"stage modules go back to modules they had left: {bad}; path: {' > '.join(traced)}"


def test_stages_are_first_visited_in_their_order(traced):
    from trustlab.er.pipeline import STAGES

    rank = {m: i for i, (_, mods) in enumerate(STAGES) for m in mods}
    first = [m for i, m in enumerate(traced) if m in rank and m not in traced[:i]]
    assert first == sorted(first, key=rank.__getitem__), f"stages out of order: {first}"


def test_stage_map_names_every_module():
    from trustlab.er.pipeline import SHARED as shared
    from trustlab.er.pipeline import STAGES

    assert shared == SHARED
    named = {m for _, mods in STAGES for m in mods} | set(shared)
    here = {p.stem for p in (Path(trustlab.__file__).parent / "er").glob("*.py")}
    beside = {"__init__", "pipeline", "distributed", "interop", "synthetic"}  # orchestrators, not on the path
    assert named | beside == here, f"modules missing from the stage map: {sorted(here - named - beside)}"
    assert named <= here


def test_early_stages_import_no_earlier_stage():
    """Stages 1-6 (read .. cluster) import, even lazily, no module of an earlier stage (persist
    rebuilds stage 5's scorers and report holds every stage's results, so they are left out)."""
    from trustlab.er.pipeline import STAGES

    rank = {m: i for i, (_, mods) in enumerate(STAGES) for m in mods}
    er = Path(trustlab.__file__).parent / "er"
    bad = []
    for mod, r in rank.items():
        if r > rank["one_to_one"]:
            continue
        tree = ast.parse((er / f"{mod}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("trustlab.er."):
                dst = node.module.split(".")[2]
                if dst in rank and rank[dst] < r:
                    bad.append(f"{mod}:{node.lineno} imports {dst}")
    assert not bad, bad
