"""Benchmarks of the clique partitioning solvers.

Run:
    .venv/bin/python -m pytest bench/bench_solvers.py --benchmark-enable -p no:cacheprovider
Groups (select with -k): ``abr`` (CP-Lib ABR, n <= 158, exact), ``corr40`` (CP-Lib corr40-*,
exact), ``family`` (synthetic cluster-editing / random / equicut / MCF instances, n = 40-60,
exact, peer CP-SAT with 8 workers; ``BENCH_PEER=0`` skips every peer), ``heuristic``
(Correlation instances, quality vs best known), ``xer`` (synthetic planted-cluster graphs).
Peers measured in the same run: CP-SAT on the full triangle formulation (what a user would
write with OR-Tools) for the exact groups; plain KwikCluster (pivot only) for the heuristic group.
Each test appends a row to bench/results/solvers_raw.jsonl.
CP-Lib data comes from ../shared/data, or the folder in ``CPLIB_DIR`` (skipped if absent).
"""
from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from trustlab.solvers import partition
from trustlab.solvers.io import read_cplib, read_cplib_optimum

DATA = Path(
    os.environ.get("CPLIB_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cpp" / "cplib")
)
RAW = Path(os.environ.get("BENCH_RAW", Path(__file__).resolve().parent / "results" / "solvers_raw.jsonl"))
ABR = ["wildcats", "cars", "workers", "cetacea", "micro", "uno", "lung-cancer", "soybean-21", "soybean-35",
       "sponge", "zoo", "bridges", "companies", "uno_1b", "uno_2b", "uno_3b", "lymphography",
       "ta-evaluation", "uno_1a", "uno_2a", "uno_3a"]
CORR40 = [f"corr40-{k}" for k in range(1, 11)]
CORR = CORR40 + [f"corr60-{k}" for k in range(1, 11)] + [f"corr80-{k}" for k in range(1, 11)]
PEER_LIMIT = 30.0

needs_data = pytest.mark.skipif(not DATA.exists(), reason="../shared/data/cpp/cplib not present")


def _record(**row):
    RAW.parent.mkdir(parents=True, exist_ok=True)
    with open(RAW, "a") as fh:
        fh.write(json.dumps(row) + "\n")


def _load(name):
    folder = "Correlation" if name.startswith("corr") else "ABR"
    W = read_cplib(DATA / folder / f"{name}.txt")
    opt_file = DATA / folder / "Optimal" / f"{name}_opt.txt"
    opt = read_cplib_optimum(opt_file)[0] if opt_file.exists() else None
    return W, opt


def triangle_model(W):
    """The CPP as a user would write it for CP-SAT: a 0/1 variable per pair, every
    triangle inequality, integer weights. Returns the model."""
    from ortools.sat.python import cp_model

    n = W.shape[0]
    m = cp_model.CpModel()
    x = {(i, j): m.new_bool_var("") for i, j in itertools.combinations(range(n), 2)}
    for i, j, k in itertools.combinations(range(n), 3):
        m.add(x[i, j] + x[i, k] - x[j, k] <= 1)
        m.add(x[i, j] - x[i, k] + x[j, k] <= 1)
        m.add(-x[i, j] + x[i, k] + x[j, k] <= 1)
    m.maximize(sum(int(W[i, j]) * v for (i, j), v in x.items() if W[i, j] != 0))
    return m


def cpsat_full_triangles(W, time_limit, workers=2):
    """The peer: every triangle inequality in one CP-SAT model (2 workers = the cores here)."""
    from ortools.sat.python import cp_model

    m = triangle_model(W)
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = time_limit
    s.parameters.num_workers = workers
    st = s.solve(m)
    return s.objective_value, s.best_objective_bound, s.status_name(st)


def _exact(benchmark, name, group):
    W, opt = _load(name)
    t0 = time.process_time()
    r = benchmark.pedantic(partition, args=(W,), kwargs=dict(method="auto", time_limit=60, random_state=0),
                           rounds=1, iterations=1)
    cpu = time.process_time() - t0
    t = time.perf_counter()
    if os.environ.get("BENCH_PEER", "1") == "0":
        peer = (None, None, "not run (BENCH_PEER=0)")
    elif W.shape[0] <= 60:
        peer = cpsat_full_triangles(W, PEER_LIMIT)
    else:
        peer = (None, None, "not run (n > 60)")
    peer_s = time.perf_counter() - t
    _record(group=group, name=name, n=W.shape[0], known=opt, objective=r.objective, bound=r.bound,
            status=r.status, seconds=r.seconds, cpu_seconds=cpu, peer_objective=peer[0], peer_bound=peer[1],
            peer_status=peer[2], peer_seconds=peer_s, load=os.getloadavg()[0])
    assert r.objective <= opt + 1e-9 and r.bound >= opt - 1e-9  # never claims beyond the known optimum


@needs_data
@pytest.mark.parametrize("name", ABR)
def test_abr(benchmark, name):
    _exact(benchmark, name, "abr")


@needs_data
@pytest.mark.parametrize("name", CORR40)
def test_corr40(benchmark, name):
    _exact(benchmark, name, "corr40")


@needs_data
@pytest.mark.parametrize("name", CORR)
def test_heuristic(benchmark, name):
    from trustlab.kernels.cpp_heuristic import objective, pivot_labels

    W, opt = _load(name)
    if opt is None:  # corr80: best known = best of our exact attempt is not run here
        pytest.skip("no published optimum")
    r = benchmark.pedantic(partition, args=(W,), kwargs=dict(method="heuristic", time_limit=10, random_state=0),
                           rounds=1, iterations=1)
    t = time.perf_counter()
    rng = np.random.default_rng(0)
    Wc = np.ascontiguousarray(W)
    piv = max(objective(Wc, pivot_labels(Wc, rng.permutation(W.shape[0]).astype(np.int64), -1e300))
              for _ in range(100))
    peer_s = time.perf_counter() - t
    _record(group="heuristic", name=name, n=W.shape[0], known=opt, objective=r.objective,
            ratio=r.objective / opt, seconds=r.seconds, peer="KwikCluster best of 100", peer_objective=float(piv),
            peer_ratio=float(piv) / opt, peer_seconds=peer_s)
    assert r.objective <= opt + 1e-9


XER = [(49, 2.5, -0.7), (49, 2.5, -0.5), (49, 2.5, -0.3), (49, 2.5, -0.2),
       (135, 4.5, -0.3), (226, 10.0, -0.3), (262, 13.0, -0.3)]


@pytest.mark.parametrize("n, size, T", XER, ids=[f"n{n}_T{T}" for n, _, T in XER])
def test_xer(benchmark, n, size, T):
    from trustlab.cliques import count_cliques, maximal_cliques
    from trustlab.solvers.synthetic import planted_er_graph

    G, gold = planted_er_graph(n, size, T, random_state=0)
    t = time.perf_counter()
    mc = len(maximal_cliques(G))
    mc_s = time.perf_counter() - t
    try:
        nc = count_cliques(G, max_count=5_000_000, min_size=1)
    except ValueError:
        nc = "> 5e6"
    r = benchmark.pedantic(partition, args=(G,), kwargs=dict(method="auto", time_limit=60, random_state=0),
                           rounds=1, iterations=1)
    row = dict(group="xer", n=n, T=T, edges=G.number_of_edges(), maximal_cliques=mc, all_cliques=nc,
               mc_seconds=mc_s, auto_seconds=r.seconds, auto_status=r.status, objective=r.objective)
    for method, kw in (("cpp", {}), ("qsp", {"M": 3}), ("spp", {})):
        if method == "qsp" and mc > 3000:
            row[method] = dict(status=f"not run: {mc} maximal cliques (LSP model too large for this machine)")
            continue
        t = time.perf_counter()
        try:
            q = partition(G, method=method, time_limit=60, random_state=0, decompose=False, **kw)
            row[method] = dict(seconds=time.perf_counter() - t, status=q.status, objective=q.objective)
        except ValueError as exc:  # spp clique guard
            row[method] = dict(seconds=time.perf_counter() - t, status=f"refused: {str(exc)[:40]}")
    _record(**row)


# synthetic families (trustlab.solvers.synthetic); seeds 0-2 were used while tuning the exact
# solver, seed 100 was not; the benchmark runs the held-out seed. The literature families
# (unplanted signed G(n, p), uniform [-a, a], rounded Gaussian) were never used in tuning it.
FAMILY_CASES = [(fam, n, seed)
                for fam in ("cluster_editing", "random", "equicut", "mcf", "signed_gnp", "uniform", "gauss")
                for n in (40, 50, 60) for seed in (100,)]
FAMILY_PEER_LIMIT = 20.0


@pytest.mark.parametrize("fam,n,seed", FAMILY_CASES)
def test_family(benchmark, fam, n, seed):
    """``auto`` with 60 s on a synthetic family instance; peer: CP-SAT with 8 workers on the
    full triangle model (``FAMILY_PEER_LIMIT`` s)."""
    from trustlab.solvers.synthetic import make_instance

    W = make_instance(fam, n, random_state=seed)
    load = os.getloadavg()[0]
    t0 = time.process_time()
    r = benchmark.pedantic(partition, args=(W,), kwargs=dict(method="auto", time_limit=60, random_state=0),
                           rounds=1, iterations=1)
    cpu = time.process_time() - t0
    big = max(r.components, key=lambda c: c["size"]) if r.components else {}
    if os.environ.get("BENCH_PEER", "1") == "0":
        peer, peer_s = (None, None, "not run"), 0.0
    else:
        t = time.perf_counter()
        peer = cpsat_full_triangles(W, FAMILY_PEER_LIMIT, workers=8)
        peer_s = time.perf_counter() - t
    _record(group="family", name=f"{fam}-{n}-s{seed}", family=fam, n=n, seed=seed, tuned=seed < 100,
            objective=r.objective, bound=r.bound, status=r.status, seconds=r.seconds, cpu_seconds=cpu,
            root_bound=big.get("root_bound"), cuts_by_family=big.get("cuts_by_family"),
            nodes=big.get("nodes"), phase=big.get("phase"), peer_objective=peer[0], peer_bound=peer[1],
            peer_status=peer[2], peer_seconds=peer_s, load=load)
    if peer[0] is not None and r.status == "optimal":
        assert peer[0] <= r.objective + 1e-6  # a proven optimum is never beaten
    assert r.objective <= r.bound + 1e-6


def summarize(raw: Path = RAW) -> str:
    """Markdown tables from the rows the benchmark tests appended to ``raw``."""
    rows = [json.loads(ln) for ln in raw.read_text().splitlines() if ln.strip()]
    last = {}  # a re-run replaces the earlier row of the same test
    for r in rows:
        last[(r["group"], r.get("name", r.get("n")), r.get("T"))] = r
    rows = list(last.values())
    out = []
    ex = [r for r in rows if r["group"] in ("abr", "corr40")]
    if ex:
        out += [
            "| instance | n | known opt | objective | bound | status | wall s | CPU s "
            "| peer CP-SAT (full triangles, 2 workers, 30 s) | peer s |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in ex:
            peer = r["peer_status"] if r["peer_objective"] is None else \
                f"{r['peer_status']} {r['peer_objective']:.0f} / bound {r['peer_bound']:.0f}"
            out.append(
                f"| {r['name']} | {r['n']} | {r['known']:.0f} | {r['objective']:.0f} | {r['bound']:.0f} | "
                f"{r['status']} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | {peer} | {r['peer_seconds']:.1f} |"
            )
    he = [r for r in rows if r["group"] == "heuristic"]
    if he:
        out += ["", "| instance | known opt | heuristic | ratio | s | KwikCluster best of 100 | ratio | s |",
                "|---|---|---|---|---|---|---|---|"]
        for r in he:
            out.append(
                f"| {r['name']} | {r['known']:.0f} | {r['objective']:.0f} | {r['ratio']:.4f} | {r['seconds']:.2f} | "
                f"{r['peer_objective']:.0f} | {r['peer_ratio']:.4f} | {r['peer_seconds']:.2f} |"
            )
    xe = [r for r in rows if r["group"] == "xer"]
    if xe:
        out += [
            "",
            "| nodes | T | \\|E\\| | \\|MC\\| | \\|C\\| "
            "| auto s (status) | cpp s | qsp M=3 s (status) | spp s (status) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]

        def f(d):
            return d["status"] if "seconds" not in d else f"{d['seconds']:.2f} ({d['status']})"

        for r in xe:
            out.append(
                f"| {r['n']} | {r['T']} | {r['edges']} | {r['maximal_cliques']} | {r['all_cliques']} | "
                f"{r['auto_seconds']:.2f} ({r['auto_status']}) | {f(r['cpp'])} | {f(r['qsp'])} | {f(r['spp'])} |"
            )
    fa = [r for r in rows if r["group"] == "family"]
    if fa:
        out += [
            "",
            "| instance | tuned on | objective | bound | root bound | status | phase | nodes "
            "| cuts tri / 2-part / odd wheel / 2-part S>=2 / lazy | wall s | CPU s | load "
            "| CP-SAT 8w 20 s: obj / bound (status) | peer s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in sorted(fa, key=lambda r: (not r["tuned"], r["family"], r["n"], r["seed"])):
            c = r.get("cuts_by_family") or {}
            cuts = (f"{c.get('triangle', 0)} / {c.get('two_partition', 0)} / {c.get('odd_wheel', 0)} / "
                    f"{c.get('two_partition_general', 0)} / {c.get('lazy_triangle', 0)}")
            rb = "-" if r.get("root_bound") is None else f"{r['root_bound']:.0f}"
            peer = r["peer_status"] if r["peer_objective"] is None else \
                f"{r['peer_objective']:.0f} / {r['peer_bound']:.0f} ({r['peer_status']})"
            out.append(
                f"| {r['name']} | {'yes' if r['tuned'] else 'no'} | {r['objective']:.0f} | {r['bound']:.0f} | {rb} | "
                f"{r['status']} | {r.get('phase')} | {r.get('nodes')} | {cuts} | {r['seconds']:.1f} | "
                f"{r['cpu_seconds']:.1f} | {r['load']:.1f} | {peer} | {r['peer_seconds']:.1f} |"
            )
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    import sys

    print(summarize(Path(sys.argv[1]) if len(sys.argv) > 1 else RAW))
