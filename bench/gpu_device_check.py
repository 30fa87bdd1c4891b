"""Checks and timings of trustlab's GPU paths on a real CUDA device, in one run.

Meant for a lent GPU machine (one short lease): every section is independent (a
failure is recorded and the next section runs), full results go to
``$OUT/gpu_check.json`` (or ``bench/results/gpu_check.json``) and a short table is
printed last.

    PYTHONPATH=. python bench/gpu_device_check.py [--quick]

Sections
--------
1. **cliques**: ``maximal_cliques(backend="gpu")`` (numba.cuda kernel) against the CPU
   kernel, clique for clique, on graph families of other shapes than the benchmark's
   (G(n, p) sparse to dense, Barabási–Albert, random geometric, powerlaw-cluster,
   Moon–Moser, complete, near-complete, stars, disjoint unions) and with ``min_size``;
   ``count_maximal_cliques`` too.
2. **weat**: the numba.cuda permutation sampler against the CPU kernel, bit for bit
   (sums and split keys), then ``weat_permutation_test`` GPU == CPU; timing of a
   large Monte-Carlo test on both.
3. **privacy**: the CuPy release path (``backend="gpu"``): the projection equals the
   host float64 product, the radial noise has the Gamma(m, scale) norm law and
   isotropic directions (KS tests, also for the CPU path on the same data), a fixed
   key reproduces the release, chunks are independent streams; timing GPU vs CPU.

The cliques benchmark itself is ``bench/bench_cliques_gpu.py`` (pytest-benchmark),
run beside this script by the device command recorded in bench/results/gpu.md.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback

import numpy as np

QUICK = "--quick" in sys.argv
# under the CUDA simulator (a smoke test of this script on a machine without a GPU)
# every size shrinks to what the simulator can run in a minute
SIM = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
OUT = os.environ.get("OUT") or os.path.join(os.path.dirname(__file__), "results")
RESULTS: dict = {"checks": [], "timings": [], "errors": []}


def check(section, name, ok, **info):
    RESULTS["checks"].append(dict(section=section, name=name, ok=bool(ok), **info))
    print(f"[{'PASS' if ok else 'FAIL'}] {section}: {name} {info if info else ''}", flush=True)


def timing(section, name, **info):
    RESULTS["timings"].append(dict(section=section, name=name, **info))
    print(f"[TIME] {section}: {name} {info}", flush=True)


def run_section(fn):
    t = time.perf_counter()
    try:
        fn()
    except Exception:
        tb = traceback.format_exc()
        RESULTS["errors"].append({"section": fn.__name__, "traceback": tb})
        print(f"[ERROR] {fn.__name__}\n{tb}", flush=True)
    print(f"-- {fn.__name__} took {time.perf_counter() - t:.1f} s", flush=True)


def best_of(f, repeat=3):
    f()  # warm-up (JIT, handles, transfers' first touch)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), float(min(ts))


# ----------------------------------------------------------------------------- env
def environment():
    import numba

    env = dict(python=platform.python_version(), numpy=np.__version__, numba=numba.__version__,
               cpu_count=os.cpu_count(), numba_threads=numba.config.NUMBA_NUM_THREADS)
    try:
        import cupy

        env["cupy"] = cupy.__version__
        env["cuda_runtime"] = int(cupy.cuda.runtime.runtimeGetVersion())
        env["gpu"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception as exc:  # recorded, the numba sections may still run
        env["cupy"] = f"unavailable: {exc}"
    try:
        from numba import cuda

        env["numba_cuda_available"] = bool(cuda.is_available())
        env["numba_cuda_device"] = str(cuda.get_current_device().name)
    except Exception as exc:
        env["numba_cuda_available"] = f"no: {exc}"
    from trustlab._backend import gpu_unavailable_reason

    env["trustlab_gpu_cupy"] = gpu_unavailable_reason("cupy") or "usable"
    env["trustlab_gpu_numba_cuda"] = gpu_unavailable_reason("numba-cuda") or "usable"
    RESULTS["environment"] = env
    print(json.dumps(env, indent=1), flush=True)


# ------------------------------------------------------------------------- cliques
def _graphs():
    import networkx as nx

    gs = {
        "gnp_400_0.02": nx.gnp_random_graph(400, 0.02, seed=11),
        "gnp_250_0.25": nx.gnp_random_graph(250, 0.25, seed=12),
        "gnp_150_0.55": nx.gnp_random_graph(150, 0.55, seed=13),
        "gnp_90_0.8": nx.gnp_random_graph(90, 0.8, seed=14),
        "ba_3000_6": nx.barabasi_albert_graph(3000, 6, seed=15),
        "rgg_4000_0.03": nx.random_geometric_graph(4000, 0.03, seed=16),
        "plc_3000_10_0.6": nx.powerlaw_cluster_graph(3000, 10, 0.6, seed=17),
        "moon_moser_30": nx.complete_multipartite_graph(*([3] * 10)),
        "complete_70": nx.complete_graph(70),
        "star_500": nx.star_graph(500),
        "ws_2000_12_0.1": nx.watts_strogatz_graph(2000, 12, 0.1, seed=18),
    }
    if SIM:
        return {"gnp_40_0.2": nx.gnp_random_graph(40, 0.2, seed=1), "star_20": nx.star_graph(20),
                "moon_moser_9": nx.complete_multipartite_graph(3, 3, 3)}
    K = nx.complete_graph(66)
    K.remove_edge(0, 1)
    gs["complete_66_minus_edge"] = K
    U = nx.disjoint_union_all([nx.gnp_random_graph(40, 0.3, seed=s) for s in range(30)])
    gs["union_30x_gnp_40_0.3"] = U
    if not QUICK:
        gs["gnp_1500_0.1"] = nx.gnp_random_graph(1500, 0.1, seed=19)
        gs["caveman_200_12"] = nx.relaxed_caveman_graph(200, 12, 0.1, seed=20)
    return gs


def cliques():
    import trustlab

    for name, G in _graphs().items():
        n = G.number_of_nodes()
        m = G.number_of_edges()
        t = time.perf_counter()
        rc = trustlab.maximal_cliques(G, backend="cpu")
        tc = time.perf_counter() - t
        t = time.perf_counter()
        rg = trustlab.maximal_cliques(G, backend="gpu")
        tg = time.perf_counter() - t
        a = sorted(tuple(sorted(c)) for c in rc.to_list())
        b = sorted(tuple(sorted(c)) for c in rg.to_list())
        check("cliques", f"{name}: gpu == cpu", a == b and rg.backend == "gpu", n=n, m=m,
              n_cliques=len(a), gpu_count=len(b), cpu_s=round(tc, 3), gpu_s=round(tg, 3))
        for k in (3, 5):
            rc3 = trustlab.maximal_cliques(G, backend="cpu", min_size=k)
            rg3 = trustlab.maximal_cliques(G, backend="gpu", min_size=k)
            same = sorted(map(tuple, map(sorted, rc3.to_list()))) == sorted(map(tuple, map(sorted, rg3.to_list())))
            cg = trustlab.count_maximal_cliques(G, backend="gpu", min_size=k)
            cc = trustlab.count_maximal_cliques(G, backend="cpu", min_size=k)
            check("cliques", f"{name}: min_size={k} gpu == cpu (lists and counts)", same and cg == cc,
                  count=int(cc))


# ---------------------------------------------------------------------------- weat
def weat():
    from trustlab.kernels import weat as K
    from trustlab.kernels.weat_cuda import sample_subset_sums_cuda
    from trustlab.metrics.bias import weat_permutation_test

    rng = np.random.default_rng(5)
    cases = ((12, 5, 40), (16, 8, 10_000), (24, 12, 200_000), (48, 24, 1_000_000), (100, 30, 300_000))
    for n, k, m in cases[:2] if SIM else cases:
        m = min(m, 300) if SIM else m
        s = rng.normal(size=n)
        lo, hi = K.element_keys(n)
        g = sample_subset_sums_cuda(s, k, 123 + n, 7, m, lo, hi)
        o = np.empty(m)
        ol = np.empty(m, np.uint64)
        oh = np.empty(m, np.uint64)
        K.sample_subset_sums_serial(s, k, np.uint64(123 + n), 7, lo, hi, 1, o, ol, oh)
        check("weat", f"sampler n={n} k={k} m={m}: sums and keys bit-identical",
              np.array_equal(g[0], o) and np.array_equal(g[1], ol) and np.array_equal(g[2], oh))
    for n, k, perms in ((30, 15, 300 if SIM else 10_000), (48, 24, 200_000)):
        if SIM and n > 30:
            continue
        s = rng.normal(size=n)
        a = weat_permutation_test(s, k, permutations=perms, random_state=3, backend="gpu")
        b = weat_permutation_test(s, k, permutations=perms, random_state=3, backend="cpu")
        check("weat", f"weat_permutation_test n={n} perms={perms}: gpu == cpu", a == b, p=float(b.p_value))
    s = rng.normal(size=60)
    perms = 2_000 if SIM else 2_000_000 if QUICK else 20_000_000
    for be in ("cpu", "gpu"):
        med, mn = best_of(lambda be=be: weat_permutation_test(s, 30, permutations=perms, random_state=1, backend=be),
                          repeat=2)
        timing("weat", f"weat_permutation_test n=60 perms={perms:,} backend={be}", median_s=round(med, 3),
               min_s=round(mn, 3))


# ------------------------------------------------------------------------- privacy
def privacy():
    from scipy import stats

    from trustlab.privacy import privatize
    from trustlab.privacy.calibration import projection_matrix
    from trustlab.privacy.mechanisms import make_mechanism

    rng = np.random.default_rng(9)
    n, d, m = 40_000, 300, 60
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    for be in ("gpu", "cpu"):
        mech = make_mechanism(d, epsilon=5.0, m=m, backend=be, random_state=21, phi_seed=77)
        Y = mech.apply(np.ascontiguousarray(X), 0)
        phi = projection_matrix(m, d, 77)
        P = X @ phi.T
        Z = Y - P
        r = np.linalg.norm(Z, axis=1)
        ks = stats.kstest(r, stats.gamma(a=m, scale=mech.noise_scale).cdf)
        u = Z / r[:, None]
        mean_dir = float(np.abs(u.mean(axis=0)).max())
        cov = (u.T @ u) / n
        cov_err = float(np.abs(cov - np.eye(m) / m).max())
        check("privacy", f"{be}: noise norms ~ Gamma(m={m}, scale={mech.noise_scale:.3g})", ks.pvalue > 1e-3,
              ks_stat=round(float(ks.statistic), 5), ks_p=float(ks.pvalue))
        iso = mean_dir < 6 / np.sqrt(n) and cov_err < 6 / (m * np.sqrt(n / 2))
        check("privacy", f"{be}: noise directions isotropic", iso, max_abs_mean=mean_dir, max_abs_cov_err=cov_err)
        if be == "gpu":
            # projection alone: epsilon so large that the noise is ~1e-12 of the signal
            mech0 = make_mechanism(d, epsilon=1e12, m=m, backend="gpu", random_state=21, phi_seed=77)
            Y0 = mech0.apply(np.ascontiguousarray(X), 0)
            rel = float(np.linalg.norm(Y0 - P) / np.linalg.norm(P))
            check("privacy", "gpu: projection equals the host float64 product", rel < 1e-9, rel_err=rel)
            Y2 = make_mechanism(d, epsilon=5.0, m=m, backend="gpu", random_state=21, phi_seed=77).apply(
                np.ascontiguousarray(X), 0)
            check("privacy", "gpu: a fixed key reproduces the release", np.array_equal(Y, Y2))
            # chunks: rows at another offset draw another stream
            Ya = mech.apply(np.ascontiguousarray(X[:1000]), 0)
            Yb = mech.apply(np.ascontiguousarray(X[:1000]), 1000)
            corr = float(np.corrcoef((Ya - P[:1000]).ravel(), (Yb - P[:1000]).ravel())[0, 1])
            check("privacy", "gpu: chunks at different offsets draw independent noise", abs(corr) < 0.02, corr=corr)
            X32 = np.ascontiguousarray(X[:5000], dtype=np.float32)
            Y32 = mech.apply(X32, 0)
            check("privacy", "gpu: float32 input gives a finite float32 release", Y32.dtype == np.float32
                  and bool(np.isfinite(Y32).all()))
    # public API, backend="gpu"
    W, rec = privatize(X[:2000], epsilon=2.0, m=50, backend="gpu", random_state=1)
    check("privacy", "privatize(backend='gpu') public path", W.shape == (2000, 50) and bool(np.isfinite(W).all()))
    # the path before the change of 2026-11-27 (host upcast, float64 back, host cast):
    # the new one must give the same bits, and is timed beside it
    import cupy as cp

    from trustlab.kernels import privacy_gpu

    def old_chunk(X, phi_dev, scale, key0, key1, row_offset):
        Xd = cp.asarray(X, dtype=cp.float64)
        Y = Xd @ phi_dev.T
        n_, k = Y.shape
        gen = cp.random.Generator(cp.random.Philox4x3210(seed=privacy_gpu.chunk_seed(key0, key1, row_offset)))
        Z = gen.standard_normal((n_, k), dtype=cp.float64)
        norms = cp.sqrt(cp.sum(Z * Z, axis=1, keepdims=True))
        R = gen.standard_gamma(float(k), size=(n_, 1), dtype=cp.float64) * scale
        return cp.asnumpy(Y + Z * (R / norms))

    mech = make_mechanism(d, epsilon=5.0, m=m, backend="gpu", random_state=21, phi_seed=77)
    for dt in (np.float32, np.float64):
        Xc = np.ascontiguousarray(X[:20_000], dtype=dt)
        new = mech.apply(Xc, 123)
        old = old_chunk(Xc, cp.asarray(mech.phi), mech.noise_scale, int(mech._key0), int(mech._key1), 123)
        check("privacy", f"gpu {np.dtype(dt).name}: new transfer path gives the previous path's bits",
              np.array_equal(new, old.astype(dt)))
    # where a chunk's time goes (131,072 x 300 float32 -> 100): host timers around synchronised steps
    sync = cp.cuda.Device().synchronize
    Xc = rng.standard_normal((131_072, d), dtype=np.float32)
    phi_dev = cp.asarray(projection_matrix(100, d, 5))
    stages = {}

    def stage(name, f, repeat=5):
        f()
        sync()
        ts = []
        for _ in range(repeat):
            t = time.perf_counter()
            r = f()
            sync()
            ts.append(time.perf_counter() - t)
        stages[name] = round(float(np.median(ts)) * 1e3, 2)
        return r

    Xd32 = stage("H2D float32 (pageable)", lambda: cp.asarray(Xc))
    stage("H2D with host upcast to float64 (previous path)", lambda: cp.asarray(Xc, dtype=cp.float64))
    Xd = stage("upcast on device", lambda: Xd32.astype(cp.float64))
    Y = stage("GEMM float64 131072x300x100", lambda: Xd @ phi_dev.T)

    def noise():
        gen = cp.random.Generator(cp.random.Philox4x3210(seed=12345))
        Z = gen.standard_normal((131_072, 100), dtype=cp.float64)
        norms = cp.sqrt(cp.sum(Z * Z, axis=1, keepdims=True))
        R = gen.standard_gamma(100.0, size=(131_072, 1), dtype=cp.float64)
        return Z * (R / norms)

    stage("noise (Philox normal + gamma + scale)", noise)
    stage("D2H float64 (pageable)", lambda: cp.asnumpy(Y))
    host32 = np.empty((131_072, 100), np.float32)
    stage("cast + D2H float32 into out", lambda: cp.asnumpy(Y.astype(cp.float32), out=host32))
    pinned = cp.cuda.alloc_pinned_memory(Xc.nbytes)
    pin = np.frombuffer(pinned, np.float32, Xc.size).reshape(Xc.shape)
    pin[...] = Xc
    stage("H2D float32 from pinned memory", lambda: cp.asarray(pin))
    stage("host copy into pinned buffer", lambda: np.copyto(pin, Xc))
    RESULTS["privacy_stages_ms"] = stages
    print("privacy chunk stages (ms):", json.dumps(stages, indent=1), flush=True)
    for dt in (np.float32,):
        Xb0 = rng.standard_normal((524_288, 300), dtype=dt)
        out = np.empty((524_288, 100), dtype=dt)
        mech = make_mechanism(300, epsilon=2.0, m=100, backend="gpu", random_state=3, phi_seed=5)
        ph = cp.asarray(mech.phi)

        def go_old():
            for s0 in range(0, 524_288, 131_072):
                out[s0:s0 + 131_072] = old_chunk(Xb0[s0:s0 + 131_072], ph, mech.noise_scale, 1, 2, s0)

        med, mn = best_of(go_old, repeat=3)
        timing("privacy", "release 524,288 x 300 -> 100, float32, backend=gpu, previous transfer path",
               median_s=round(med, 4), min_s=round(mn, 4))

    # timing: GPU vs CPU (all cores) on a large release, float32 and float64 input
    big_n = 200_000 if QUICK else 1_000_000
    Xb = rng.standard_normal((big_n, 300), dtype=np.float32)
    for dt in (np.float32, np.float64):
        Xc = np.ascontiguousarray(Xb, dtype=dt)
        for be in ("cpu", "gpu"):
            mech = make_mechanism(300, epsilon=2.0, m=100, backend=be, random_state=3, phi_seed=5)
            out = np.empty((big_n, 100), dtype=dt)
            chunk = 131_072

            def go(mech=mech, Xc=Xc, out=out):
                for s0 in range(0, big_n, chunk):
                    mech.apply(Xc[s0:s0 + chunk], s0, out=out[s0:s0 + chunk])

            med, mn = best_of(go, repeat=3)
            gb = (Xc.nbytes + out.nbytes) / 1e9
            timing("privacy", f"release {big_n:,} x 300 -> 100, {np.dtype(dt).name}, backend={be}",
                   median_s=round(med, 4), min_s=round(mn, 4), host_GBps=round(gb / med, 2))


def main():
    for f in (environment, weat, privacy, cliques):
        run_section(f)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "gpu_check.json"), "w") as fh:
        json.dump(RESULTS, fh, indent=1, default=str)
    print("\n==== summary ====")
    bad = [c for c in RESULTS["checks"] if not c["ok"]]
    print(f"checks: {len(RESULTS['checks']) - len(bad)} passed, {len(bad)} failed; errors: {len(RESULTS['errors'])}")
    for c in bad:
        print("FAILED", c)
    for e in RESULTS["errors"]:
        print("ERROR in", e["section"], e["traceback"].strip().splitlines()[-1])
    for t in RESULTS["timings"]:
        print(f"{t['section']:8s} {t['name']:70s} median {t['median_s']} s")
    return 1 if bad or RESULTS["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
