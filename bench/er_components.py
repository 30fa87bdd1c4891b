"""Components of the real suite by size: how many finish proven, and the gap of the rest.

Runs ``trustlab.resolve`` with every default on the files of ``bench/er_real.py`` (one
subprocess per file, as er_real does) and reports, per file, the positive-weight
components of two or more records by size band (2-10, 11-50, 51-200, 201-1000, >1000
records) with how many ended ``closed_form`` / ``optimal`` / ``feasible`` /
``time_limit`` (or another status), and for each unproven one its size, the relative gap
``(bound - objective) / |bound|`` and the solver's seconds on it. Nothing in the library is
changed: the partition solver is wrapped (``trustlab.er.cluster._get_partition``) only to
record the per-component statistics it already returns (objective, bound, status,
seconds, reduction), which :class:`~trustlab.er.cluster.ClusterResult` keeps only as a
status and a gap.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/er_components.py --data ../shared/data \
        [--files a,b] [--jsonl OUT] [--md OUT]

Prints one JSON line per file (``f1`` too, to check the run equals er_real's); ``--md``
writes the table, files with the worst unproven component (largest gap) first, and per band
over all files the share proven and the share proven or within a 1 % / 5 % gap. (Since stop
47 the solver's bound of a heuristic or time-limited component is the tighter of its own and
the conflict-wedge packing bound, :mod:`trustlab.solvers.bounds`; :func:`packing_bound` below
is its pure-Python reference, which the tests compare the kernel with.)
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

#: size bands (inclusive bounds) of the report
BANDS = ((2, 10), (11, 50), (51, 200), (201, 1000), (1001, None))
PROVEN = ("closed_form", "optimal")


def band_name(lo: int, hi: int | None) -> str:
    return f"{lo}-{hi}" if hi is not None else f">{lo - 1}"


def band_of(size: int) -> str:
    """The band of a component of ``size`` records (``size >= 2``)."""
    for lo, hi in BANDS:
        if size >= lo and (hi is None or size <= hi):
            return band_name(lo, hi)
    raise ValueError(f"no band for a component of {size} record(s)")


def rel_gap(objective: float, bound: float) -> float:
    """``(bound - objective) / |bound|`` clipped at 0 (0 when the bound is 0 and met; inf when
    a zero bound is not met; nan when either is missing)."""
    if objective is None or bound is None or not (np.isfinite(objective) and np.isfinite(bound)):
        return float("nan")
    d = bound - objective
    if d <= 0:
        return 0.0
    return float("inf") if bound == 0 else float(d / abs(bound))


def band_counts(sizes, status) -> dict:
    """``{band: {status: count}}`` over the components of two or more records; ``sizes`` and
    ``status`` are per component (a :class:`ClusterResult`'s ``component`` counts and ``status``)."""
    out: dict = {band_name(lo, hi): {} for lo, hi in BANDS}
    for s, st in zip(np.asarray(sizes).tolist(), status):
        if s < 2:
            continue
        d = out[band_of(int(s))]
        d[st] = d.get(st, 0) + 1
    return out


def solver_components(W, res) -> list[dict]:
    """Per component the partition solver saw (its positive-edge components of >= 2 nodes,
    in the order it reports ``res.components``): size (nodes of the component, not of a
    reduced part), status, objective, bound, relative gap, seconds, and the reduction's
    node counts. The sizes come from ``W`` itself, as :func:`trustlab.er.cluster._status_of`
    maps them."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    W = sp.coo_matrix(W)
    pos = W.data > 0
    g = sp.coo_matrix((np.ones(int(pos.sum()), np.int8), (W.row[pos], W.col[pos])), shape=W.shape)
    k, lab = connected_components(g, directed=False)
    sizes = np.bincount(lab, minlength=k)
    big = np.flatnonzero(sizes >= 2)
    comps = list(getattr(res, "components", []) or [])
    if len(comps) != big.size:
        raise RuntimeError(f"the solver reported {len(comps)} components, W has {big.size}")
    out = []
    for c, st in zip(big, comps):
        red = st.get("reduction") or {}
        out.append({
            "size": int(sizes[c]), "edges": int(st.get("edges", -1)) if st.get("edges") is not None else None,
            "status": str(st.get("status")), "objective": st.get("objective"), "bound": st.get("bound"),
            "gap": rel_gap(st.get("objective"), st.get("bound")), "seconds": st.get("seconds"),
            "time_budget": st.get("time_budget"), "method": st.get("method"), "phase": st.get("phase"),
            "root_bound": st.get("root_bound"), "heuristic_objective": st.get("heuristic_objective"),
            "reduced_nodes": red.get("nodes_after"), "largest_part": red.get("largest_part"),
            "reduction_applied": red.get("applied"), "packing_bound": st.get("packing_bound"),
            "lp_bound": st.get("lp_bound"), "lp_bound_seconds": st.get("lp_bound_seconds"),
            "lp_bound_work": st.get("lp_bound_work"), "lp_bound_budget": st.get("lp_bound_budget"),
            "lp_bound_rounds": st.get("lp_bound_rounds"),
            "lp_bound_wall_stop": st.get("lp_bound_wall_stop"), "work_spent": st.get("work_spent"),
            "proved_by": st.get("proved_by"), "parts_proved_by_lp": red.get("parts_proved_by_lp"),
        })
    return out


def packing_bound(W) -> tuple[float, float]:
    """``(P, LB)``: the sum ``P`` of the positive weights of a sparse weight matrix (the
    heuristics' bound) and a lower bound ``LB`` on the weight every partition loses, so
    ``P - LB`` bounds the objective from above. A pair that is not an entry of ``W`` may
    not share a cluster (the partition layer's sparse convention).

    ``LB`` is a greedy fractional packing of conflict wedges, the sparse twin of
    :func:`trustlab.solvers.reduction.conflict_packing`: a wedge ``(a; b, c)`` has
    ``w_ab > 0``, ``w_ac > 0`` and ``bc`` negative or absent; every partition cuts ``ab``
    or ``ac`` or keeps ``bc``, so amounts ``m`` per wedge with no pair carrying more than
    its absolute weight (an absent pair any amount) bound the loss by their sum. Apexes in
    node order, wedges by the apex's strongest pairs first; a heuristic packing (any order
    is valid, some are tighter). Work: the sum over nodes of their positive degree squared.
    """
    import scipy.sparse as sp

    M = sp.coo_matrix(W)
    r, c, v = M.row.astype(np.int64), M.col.astype(np.int64), M.data.astype(np.float64)
    keep = r != c
    r, c, v = r[keep], c[keep], v[keep]
    a, b = np.minimum(r, c), np.maximum(r, c)
    cap: dict = {}
    for x, y, w in zip(a.tolist(), b.tolist(), v.tolist()):  # one triangle or both: one value per pair
        cap[(x, y)] = w
    P = float(sum(w for w in cap.values() if w > 0))
    nbr: dict = {}
    for (x, y), w in cap.items():
        if w > 0:
            nbr.setdefault(x, []).append(y)
            nbr.setdefault(y, []).append(x)
    res = {k: abs(w) for k, w in cap.items()}  # capacity left per pair
    lb = 0.0
    for ap in sorted(nbr):
        ns = sorted(nbr[ap], key=lambda u: -res[(min(ap, u), max(ap, u))])
        for i, u in enumerate(ns):
            ku = (min(ap, u), max(ap, u))
            for x in ns[i + 1:]:
                if res[ku] <= 0:
                    break
                kx = (min(ap, x), max(ap, x))
                kb = (min(u, x), max(u, x))
                w = cap.get(kb)
                if w is not None and w > 0:
                    continue  # not a conflict
                m = min(res[ku], res[kx], res[kb] if w is not None else np.inf)
                if m <= 0:
                    continue
                res[ku] -= m
                res[kx] -= m
                if w is not None:
                    res[kb] -= m
                lb += m
    return P, lb


def one(name: str, data: Path, save_w: str | None = None) -> dict:
    """Resolve one file with every default; the per-band counts and the unproven components
    (``save_w``: a folder where each partition call's weight matrix is saved, ``W<i>.npz``)."""
    import trustlab.er.cluster as C
    from er_real import load, pairwise, resolve_files

    calls: list[dict] = []
    real = C._get_partition

    def recording():
        partition = real()

        def wrapped(W, **kw):
            t0, c0 = time.perf_counter(), time.process_time()
            if os.environ.get("ER_COMPONENTS_LP_BOUND") in ("0", "1"):  # --no-lp-bound / --lp-bound
                kw = {**kw, "lp_bound": os.environ["ER_COMPONENTS_LP_BOUND"] == "1"}
            res = partition(W, **kw)
            if save_w:
                import scipy.sparse as sp

                Path(save_w).mkdir(parents=True, exist_ok=True)
                sp.save_npz(Path(save_w) / f"W{len(calls)}.npz", sp.coo_matrix(W))
            calls.append({"time_limit": kw.get("time_limit"), "kw": {k: v for k, v in kw.items() if k != "time_limit"},
                          "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
                          "components": solver_components(W, res)})
            return res

        return wrapped

    C._get_partition = recording
    inputs, keys, truth = load(name, data)
    t0, c0 = time.perf_counter(), time.process_time()
    r, pred = resolve_files(inputs, keys)
    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
    cr = r.clusters
    k = len(cr.status)
    sizes = np.bincount(cr.component, minlength=k)[:k]
    # the last partition call's components: the clustering the result holds (a refit from the
    # clusters clusters again; the earlier calls' components are not the result's)
    solved = list(calls[-1]["components"]) if calls else []
    unproven = sorted((c for c in solved if c["status"] not in PROVEN), key=lambda c: -c["size"])
    n_unproven_cr = int(sum(1 for s, st in zip(sizes, cr.status) if s >= 2 and st not in PROVEN))
    return {
        "file": name, "records": int(len(pred)), "f1": round(pairwise(pred, truth)["f1"], 4),
        "seconds": round(sec, 1), "cpu_seconds": round(cpu, 1),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "bands": band_counts(sizes, cr.status), "max_size": int(sizes.max()) if k else 0,
        "partition_calls": [{"time_limit": c["time_limit"], "kw": c["kw"], "seconds": round(c["seconds"], 1),
                             "cpu_seconds": round(c["cpu_seconds"], 1), "n_components": len(c["components"])}
                            for c in calls],
        "unproven": unproven, "unproven_consistent": n_unproven_cr == len(unproven),
    }


def _fmt_band(d: dict) -> str:
    if not d:
        return ""
    n = sum(d.values())
    short = {"closed_form": "cf", "optimal": "opt", "feasible": "feas", "time_limit": "TL"}
    return f"{n}: " + " ".join(f"{short.get(k, k)} {v}" for k, v in sorted(d.items()))


def worst_key(row: dict):
    """Worst file first: the largest gap among its unproven components, then their count."""
    g = [c["gap"] for c in row.get("unproven", []) if np.isfinite(c["gap"] if c["gap"] is not None else np.nan)]
    return (-(max(g) if g else (0.0 if not row.get("unproven") else 1.0)), -len(row.get("unproven", [])), row["file"])


def write_md(rows, path) -> None:
    rows = sorted([r for r in rows if "error" not in r], key=worst_key)
    bands = [band_name(lo, hi) for lo, hi in BANDS]
    lines = ["| file | F1 | largest | " + " | ".join(bands) + " | unproven: size (status, gap, s) |",
             "|---|---|---|" + "---|" * len(bands) + "---|"]
    short = {"feasible": "feas", "time_limit": "TL"}
    for r in rows:
        un = ", ".join(f"{c['size']} ({short.get(c['status'], c['status'])}, {c['gap']:.2%}, {c['seconds']:.0f})"
                       for c in r["unproven"][:8])
        if len(r["unproven"]) > 8:
            un += f", ... {len(r['unproven']) - 8} more"
        lines.append(f"| {r['file']} | {r['f1']:.4f} | {r['max_size']} | "
                     + " | ".join(_fmt_band(r["bands"][b]) for b in bands) + f" | {un or '-'} |")
    tot = {b: {} for b in bands}
    for r in rows:
        for b in bands:
            for st, v in r["bands"][b].items():
                tot[b][st] = tot[b].get(st, 0) + v
    lines.append("| all files | | | " + " | ".join(_fmt_band(tot[b]) for b in bands) + " | |")
    lines.append("| proven, all files | | | " + " | ".join(_fmt_proven(tot[b]) for b in bands) + " | |")
    sh = gap_shares(rows)
    for g in (0.01, 0.05):
        lines.append(f"| proven or gap <= {g:.0%} | | | " + " | ".join(_fmt_share(sh[b][g], sh[b]["n"]) for b in bands)
                     + " | |")
    Path(path).write_text("\n".join(lines) + "\n")


def gap_shares(rows, limits=(0.01, 0.05)) -> dict:
    """Per band over the files of ``rows``: ``n`` components of >= 2 records, ``proven``
    (closed form or optimal) and, per limit ``g``, how many are proven or end with a
    relative gap ``<= g`` (the unproven ones by their ``gap``; an unproven component with
    no finite gap counts as above every limit)."""
    out = {band_name(lo, hi): {"n": 0, "proven": 0, **{g: 0 for g in limits}} for lo, hi in BANDS}
    for r in rows:
        if "error" in r:
            continue
        for b, d in r["bands"].items():
            out[b]["n"] += sum(d.values())
            p = sum(v for k, v in d.items() if k in PROVEN)
            out[b]["proven"] += p
            for g in limits:
                out[b][g] += p
        for c in r.get("unproven", []):
            gap = c.get("gap")
            if gap is None or not np.isfinite(gap):
                continue
            for g in limits:
                out[band_of(int(c["size"]))][g] += gap <= g
    return out


def _fmt_share(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else ""


def _fmt_proven(d: dict) -> str:
    n = sum(d.values())
    p = sum(v for k, v in d.items() if k in PROVEN)
    return f"{p}/{n} ({p / n:.0%})" if n else ""


def main(argv=None) -> int:
    from er_real import ALL

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--files", default=",".join(ALL))
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--jsonl", default=None)
    ap.add_argument("--md", default=None)
    ap.add_argument("--from-jsonl", default=None, help="only write --md from an earlier --jsonl")
    ap.add_argument("--save-w", default=None, help="with one file: save each partition call's W here")
    ap.add_argument("--lp-bound", action="store_true",
                    help="partition(lp_bound=True) (opt-in): the triangle LP bound on unproven components")
    ap.add_argument("--no-lp-bound", action="store_true",
                    help="partition(lp_bound=False) (the default): no triangle LP bound")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.lp_bound or a.no_lp_bound:
        os.environ["ER_COMPONENTS_LP_BOUND"] = "0" if a.no_lp_bound else "1"
    if a.one:
        print(json.dumps(one(a.one, Path(a.data), a.save_w), default=float), flush=True)
        return 0
    if a.from_jsonl:
        rows = [json.loads(x) for x in Path(a.from_jsonl).read_text().splitlines() if x.strip()]
    else:
        rows = []
        for name in a.files.split(","):
            try:
                out = subprocess.run([sys.executable, __file__, "--data", a.data, "--one", name]
                                     + (["--save-w", str(Path(a.save_w) / name)] if a.save_w else []),
                                     capture_output=True, text=True, timeout=a.timeout, env=os.environ.copy())
                line = [x for x in out.stdout.splitlines() if x.startswith("{")]
                row = json.loads(line[-1]) if line else {"file": name, "error": out.stderr.strip().splitlines()[-3:]}
            except subprocess.TimeoutExpired:
                row = {"file": name, "error": f"timeout after {a.timeout:.0f} s"}
            print(json.dumps({k: v for k, v in row.items() if k != "unproven"} | {
                "n_unproven": len(row.get("unproven", []))}, default=float), flush=True)
            rows.append(row)
            if a.jsonl:
                with open(a.jsonl, "a") as fh:
                    fh.write(json.dumps(row, default=float) + "\n")
    if a.md:
        write_md(rows, a.md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
