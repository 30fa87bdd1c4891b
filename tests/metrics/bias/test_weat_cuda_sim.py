"""The numba.cuda sampling kernel under the CUDA simulator (in a subprocess, because the
simulator must be switched on before numba.cuda is first imported)."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import os, warnings
    assert os.environ["NUMBA_ENABLE_CUDASIM"] == "1"
    warnings.simplefilter("ignore")
    import numpy as np
    from trustlab.kernels import weat as K
    from trustlab.kernels.weat_cuda import sample_subset_sums_cuda
    from trustlab.metrics.bias import weat_permutation_test
    s = np.random.default_rng(0).normal(size=12)
    lo, hi = K.element_keys(12)
    g = sample_subset_sums_cuda(s, 5, 123, 7, 40, lo, hi, max_batch=16)
    o = np.empty(40); ol = np.empty(40, np.uint64); oh = np.empty(40, np.uint64)
    K.sample_subset_sums_serial(s, 5, np.uint64(123), 7, lo, hi, 1, o, ol, oh)
    assert np.array_equal(g[1], ol) and np.array_equal(g[0], o)
    a = weat_permutation_test(s, 6, permutations=150, random_state=1, backend="gpu")
    b = weat_permutation_test(s, 6, permutations=150, random_state=1, backend="cpu")
    assert a == b, (a, b)
    print("OK")
    """
)


def test_cuda_kernel_matches_cpu_under_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env.pop("TRUSTLAB_BACKEND", None)
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("OK")
