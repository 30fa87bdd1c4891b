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
    import networkx as nx

    import trustlab
    from trustlab.kernels.cliques_cuda import enumerate_maximal_cliques_cuda

    only = [g for g in os.environ.get("GRAPHS", "").split(",") if g]
    for name, G in _graphs().items():
        if only and name not in only:
            continue
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
        # the kernel's other routes: every sub-problem on the warp kernel, or none on the 64-bit thread kernel
        nodes = sorted(G.nodes())
        A = nx.to_scipy_sparse_array(G, nodelist=nodes, format="csr")
        A.sort_indices()
        for kw in ({"thread_max": 0}, {"thread_max": 32},
                   {"thread_max": 0, "split_min": 1, "split2_min": 1},
                   {"thread_max": 0, "split_min": 1, "split2_min": 1, "warp_ops": "shared"},
                   {"thread_max": 0, "split_min": 1, "split2_min": 1, "lean": True}, {"lean": True}):
            cp_, ci_ = enumerate_maximal_cliques_cuda(A.indptr, A.indices, n, **kw)
            got = sorted(tuple(sorted(nodes[j] for j in ci_[cp_[i]:cp_[i + 1]])) for i in range(len(cp_) - 1))
            check("cliques", f"{name}: kernel {kw} == cpu", got == a, count=len(got))
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
    """The counter-based GPU release: distribution, reference, reproducibility, speed."""
    import cupy as cp
    from scipy import stats

    from trustlab.kernels import privacy_gpu as G
    from trustlab.privacy import privatize
    from trustlab.privacy.calibration import projection_matrix
    from trustlab.privacy.mechanisms import make_mechanism

    rng = np.random.default_rng(9)
    n, d, m = 40_000, 300, 60
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    phi = projection_matrix(m, d, 77)
    P = X @ phi.T
    for be in ("gpu", "cpu"):
        mech = make_mechanism(d, epsilon=5.0, m=m, backend=be, random_state=21, phi_seed=77)
        Y = mech.apply(np.ascontiguousarray(X), 0)
        Z = Y - P
        r = np.linalg.norm(Z, axis=1)
        ks = stats.kstest(r, stats.gamma(a=m, scale=mech.noise_scale).cdf)
        u = Z / r[:, None]
        mean_dir = float(np.abs(u.mean(axis=0)).max())
        cov_err = float(np.abs((u.T @ u) / n - np.eye(m) / m).max())
        check("privacy", f"{be}: noise norms ~ Gamma(m={m}, scale={mech.noise_scale:.3g})", ks.pvalue > 1e-3,
              ks_stat=round(float(ks.statistic), 5), ks_p=float(ks.pvalue))
        iso = mean_dir < 6 / np.sqrt(n) and cov_err < 6 / (m * np.sqrt(n / 2))
        check("privacy", f"{be}: noise directions isotropic", iso, max_abs_mean=mean_dir, max_abs_cov_err=cov_err)
    mech = make_mechanism(d, epsilon=5.0, m=m, backend="gpu", random_state=21, phi_seed=77)
    Y = mech.apply(np.ascontiguousarray(X), 0)
    key = G.philox_key(mech._key0, mech._key1)
    ref = G.noise_reference(3000, m, mech.noise_scale, key, 0)
    err = float(np.abs((Y[:3000] - P[:3000]) - ref).max() / np.abs(ref).max())
    check("privacy", "gpu: device noise == its NumPy reference (same Philox counters)", err < 1e-9, rel_err=err)
    mech0 = make_mechanism(d, epsilon=1e12, m=m, backend="gpu", random_state=21, phi_seed=77)
    rel = float(np.linalg.norm(mech0.apply(np.ascontiguousarray(X), 0) - P) / np.linalg.norm(P))
    check("privacy", "gpu: float64 projection equals the host float64 product", rel < 1e-9, rel_err=rel)
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    rel32 = float(np.linalg.norm(mech0.apply(X32, 0).astype(np.float64) - X32.astype(np.float64) @ phi.T)
                  / np.linalg.norm(P))
    check("privacy", "gpu: float32 projection (SGEMM, no TF32) within float32 rounding", rel32 < 1e-5, rel_err=rel32)
    for mm in (60, 7, 1000, 1100):  # the fused kernel (m <= 1,024) == the two-kernel path, on the device
        Pd = cp.asarray(rng.normal(size=(5000, mm)))
        o1, o2 = cp.empty_like(Pd), cp.empty_like(Pd)
        G._noise_into(Pd, o1, 1.5, key, 123, fused=True)
        G._noise_into(Pd, o2, 1.5, key, 123, fused=False)
        dev = float(cp.abs(o1 - o2).max() / cp.abs(o2 - Pd).max())
        refm = G.noise_reference(300, mm, 1.5, key, 123)
        dref = float(np.abs(cp.asnumpy(o1[:300] - Pd[:300]) - refm).max() / np.abs(refm).max())
        check("privacy", f"gpu: fused noise kernel == two-kernel path == reference, m={mm}",
              dev < 1e-12 and dref < 1e-9, rel_diff=dev, rel_err_ref=dref)
    Y2 = make_mechanism(d, epsilon=5.0, m=m, backend="gpu", random_state=21, phi_seed=77).apply(
        np.ascontiguousarray(X), 0)
    check("privacy", "gpu: a fixed key reproduces the release", np.array_equal(Y, Y2))
    Ya = np.vstack([mech.apply(np.ascontiguousarray(X[:700]), 0), mech.apply(np.ascontiguousarray(X[700:2000]), 700)])
    check("privacy", "gpu: the release does not depend on the chunking", np.array_equal(Ya, Y[:2000]))
    Yb = mech.apply(np.ascontiguousarray(X[:1000]), 1000)
    corr = float(np.corrcoef((Y[:1000] - P[:1000]).ravel(), (Yb - P[:1000]).ravel())[0, 1])
    check("privacy", "gpu: rows at other offsets draw independent noise", abs(corr) < 0.02, corr=corr)
    # public API: host in -> host out, CuPy in -> CuPy out (the same bits)
    W, rec = privatize(X[:2000], epsilon=2.0, m=50, backend="gpu", random_state=1)
    Wd, recd = privatize(cp.asarray(X[:2000]), epsilon=2.0, m=50, random_state=1)
    check("privacy", "privatize(CuPy X) returns a CuPy release equal to the host-input GPU release",
          isinstance(Wd, cp.ndarray) and np.array_equal(cp.asnumpy(Wd), W) and recd.phi_seed == rec.phi_seed)
    V32, _ = privatize(cp.asarray(X32[:2000]), epsilon=2.0, mechanism="m1", random_state=1)
    check("privacy", "privatize(CuPy float32, m1) -> finite float32 CuPy", V32.dtype == cp.float32
          and bool(cp.isfinite(V32).all()) and V32.shape == (2000, d))

    # ---- device-resident release: bandwidth (CuPy in, CuPy out), CUDA events
    def dev_time(f, repeat=5):
        f()
        cp.cuda.Device().synchronize()
        ts = []
        for _ in range(repeat):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            f()
            b.record()
            b.synchronize()
            ts.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
        return float(np.median(ts))

    big = 4_000_000
    src = cp.random.standard_normal((big, 300), dtype=cp.float32)
    dst = cp.empty_like(src)
    t = dev_time(lambda: cp.copyto(dst, src))
    copy_bw = 2 * src.nbytes / t
    timing("privacy", f"device copy {src.nbytes / 1e9:.1f} GB (read + write)", median_s=round(t, 5),
           GBps=round(copy_bw / 1e9, 1))
    RESULTS["device_copy_GBps"] = copy_bw / 1e9
    dst = None
    for label, dt, mm, mech_name in (("privemb f32 m=100", cp.float32, 100, "privemb"),
                                     ("privemb f32 m=54 (calibrated)", cp.float32, None, "privemb"),
                                     ("m1 f32 (d=300)", cp.float32, None, "m1"),
                                     ("privemb f64 m=100", cp.float64, 100, "privemb")):
        Xd = src if dt == cp.float32 else src.astype(cp.float64)
        kw = dict(epsilon=2.0, beta=0.9, random_state=3, mechanism=mech_name)
        if mm is not None:
            kw["m"] = mm
        mech = make_mechanism(300, backend="gpu", **kw)
        out = cp.empty((big, mech.out_dim), dtype=dt)
        t = dev_time(lambda mech=mech, Xd=Xd, out=out: mech.apply(Xd, 0, out=out))
        nbytes = Xd.nbytes + out.nbytes
        tg = float("nan")
        if mech.phi is not None:
            phiT = cp.asarray(np.ascontiguousarray(mech.phi.T, dtype=np.dtype(dt)))
            tg = dev_time(lambda Xd=Xd, phiT=phiT, out=out: cp.matmul(Xd, phiT, out=out))
        tn = dev_time(lambda mech=mech, out=out: G._noise_into(out, out, mech.noise_scale, (1, 2), 0, fused=False))
        tn2 = dev_time(lambda mech=mech, out=out: G._noise_into(out, out, mech.noise_scale, (1, 2), 0, fused=True))
        timing("privacy", f"device-resident release {big:,} x 300, {label}", median_s=round(t, 5),
               GBps=round(nbytes / t / 1e9, 1), pct_of_device_copy=round(100 * nbytes / t / copy_bw, 1),
               gemm_s=round(tg, 5), noise_s=round(tn, 5), noise_fused_s=round(tn2, 5), m=mech.out_dim)
        if tg == tg:  # the release's bound by its bytes alone: GEMM + noise in the time of a copy
            RESULTS.setdefault("release_parts", {})[label] = {"gemm_s": tg, "noise_s": tn, "noise_fused_s": tn2}
        W, _ = privatize(Xd[:1000], **kw)
        check("privacy", f"{label}: public privatize on device finite", bool(cp.isfinite(W).all()))
    src = None

    # ---- host arrays: GPU (copies in and out) vs CPU, all cores
    big_n = 1_000_000
    Xb = rng.standard_normal((big_n, 300), dtype=np.float32)
    for dt in (np.float32, np.float64):
        Xc = np.ascontiguousarray(Xb, dtype=dt)
        for be in ("cpu", "gpu"):
            mech = make_mechanism(300, epsilon=2.0, m=100, backend=be, random_state=3, phi_seed=5)
            out = np.empty((big_n, 100), dtype=dt)
            chunk = 262_144

            def go(mech=mech, Xc=Xc, out=out):
                for s0 in range(0, big_n, chunk):
                    mech.apply(Xc[s0:s0 + chunk], s0, out=out[s0:s0 + chunk])

            med, mn = best_of(go, repeat=3)
            gb = (Xc.nbytes + out.nbytes) / 1e9
            timing("privacy", f"host-resident release {big_n:,} x 300 -> 100, {np.dtype(dt).name}, backend={be}",
                   median_s=round(med, 4), min_s=round(mn, 4), host_GBps=round(gb / med, 2))


def main():
    want = os.environ.get("SECTIONS", "environment,weat,privacy,cliques").split(",")
    for f in (environment, weat, privacy, cliques):
        if f.__name__ in want:
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
