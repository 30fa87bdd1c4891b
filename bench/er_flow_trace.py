"""Follow a record through ``resolve``: which ``trustlab.er`` modules it visits, in which order,
and how often it goes back to a module it had already left (issue 27, item 7).

Every Python function call of one ``resolve`` is traced (``sys.setprofile``); the module of each
call is kept when it differs from the one before. The shared modules (the kinds registry, the rule
language, defaults, settings: ``--shared``) are left out of the sequence, as are modules outside
``trustlab.er`` (``trustlab._chunks``, the kernels, the partition layer). Then, over the sequence:

* ``rooms``: distinct modules visited;
* ``returns``: moves into a module that had been left before (every module, the orchestrator
  ``pipeline`` included);
* ``returns to a stage``: the same, not counting moves back into the orchestrator;
* ``stage-to-stage returns``: moves *from a stage module* into a module already left, other than
  the orchestrator (``records > fields > records``): what the stage layout rules out. A move from
  the orchestrator into a stage it ran before (a loop: completion, tightened blocking) is not one;
* ``out of order``: stage modules whose first visit comes after that of a later stage
  (:data:`trustlab.er.pipeline.STAGES`; empty when the tree has no stage map).

Usage::

    PYTHONPATH=. python bench/er_flow_trace.py [--records 300] [--link] [--shared kinds,rules,defaults,settings]

``--link`` resolves the records as two tables (``link_type="link_only"``). The figures depend on
the code path only, not on timing (a fixed seed and no time limit is reached on 300 records).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings

SHARED = ("kinds", "rules", "defaults", "settings")
ORCHESTRATOR = "pipeline"


def trace(fn, *args, **kwargs) -> tuple[list[str], object]:
    """Run ``fn(*args, **kwargs)`` under a profiler; the ``trustlab`` modules of its calls in
    order (a module repeated only when another came between) and the result."""
    seq: list[str] = []

    def prof(frame, event, arg):
        if event == "call":
            m = frame.f_globals.get("__name__", "")
            if m.startswith("trustlab.") and (not seq or seq[-1] != m):
                seq.append(m)

    sys.setprofile(prof)
    try:
        out = fn(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return seq, out


def er_sequence(seq: list[str], shared=SHARED) -> list[str]:
    """The ``trustlab.er`` modules of ``seq`` (short names), shared ones left out, runs merged."""
    s = [m.split(".")[2] for m in seq if m.startswith("trustlab.er.") and m.split(".")[2] not in shared]
    return [m for i, m in enumerate(s) if i == 0 or s[i - 1] != m]


def figures(s: list[str], stages=None) -> dict:
    """The counts of the module docstring over an :func:`er_sequence`."""
    left: set = set()
    returns = to_stage = direct = 0
    direct_moves = []
    for a, b in zip(s, s[1:]):
        left.add(a)
        if b in left:
            returns += 1
            if b != ORCHESTRATOR:
                to_stage += 1
                if a != ORCHESTRATOR:
                    direct += 1
                    direct_moves.append(f"{a} > {b}")
    rank = {m: i for i, (_, mods) in enumerate(stages or ()) for m in mods}
    first = [m for i, m in enumerate(s) if m in rank and m not in s[:i]]
    late = [m for i, m in enumerate(first) if any(rank[p] > rank[m] for p in first[:i])]
    return {"rooms": len(set(s)), "returns": returns, "returns_to_a_stage": to_stage,
            "stage_to_stage_returns": direct, "stage_to_stage_moves": direct_moves, "out_of_order": late,
            "sequence": " > ".join(s)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=300, help="generate_records(N), every default")
    ap.add_argument("--link", action="store_true", help="as two tables, link_type='link_only'")
    ap.add_argument("--shared", default=",".join(SHARED), help="modules left out of the sequence")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    import trustlab.er.distributed  # noqa: F401  (imported lazily by resolve: its import is not a visit)
    from trustlab.er import generate_records, resolve

    try:
        from trustlab.er.pipeline import STAGES
    except ImportError:  # a tree before the stage map
        STAGES = None
    df = generate_records(a.records, random_state=0).drop(columns=["entity"])
    if a.link:
        h = len(df) // 2
        args, kw = ([df.iloc[:h], df.iloc[h:]],), {"link_type": "link_only", "id_col": "rec_id"}
    else:
        args, kw = (df,), {"id_col": "rec_id"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolve(*args, **kw)  # compile and import first: the traced call is the steady path
        seq, _ = trace(resolve, *args, **kw)
    out = figures(er_sequence(seq, tuple(x for x in a.shared.split(",") if x)), STAGES)
    if a.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
