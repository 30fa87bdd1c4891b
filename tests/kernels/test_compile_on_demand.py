"""A call compiles only the kernels it runs (a cold first call pays for nothing else)."""
import json
import os
import subprocess
import sys

_CODE = """
import json
from numba.core import event as ev
compiled = []
class L(ev.Listener):
    def on_start(self, e):
        compiled.append(e.data["dispatcher"].py_func.__qualname__)
    def on_end(self, e):
        pass
ev.register("numba:compile", L())
import numpy as np
import trustlab.kernels.weat as K
at_import = list(compiled)
from trustlab.metrics.bias import weat
rng = np.random.default_rng(0)
w = [f"w{i}" for i in range(16)]
emb = dict(zip(w, rng.normal(size=(16, 5))))
weat(emb, w[:4], w[4:8], w[8:12], w[12:], random_state=0)  # C(8, 4) = 70 splits: exact, serial
print(json.dumps({"at_import": at_import, "all": compiled}))
"""


def test_weat_compiles_only_the_kernel_it_runs(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    # the four subset-sum kernels (exact/sampled x serial/threaded) used to compile at import
    assert not any("subset_sums" in f for f in out["at_import"]), out
    used = {f for f in out["all"] if "subset_sums" in f}
    # C(8, 4) = 70 splits on a cold cache: the exact kernel's NumPy twin (same bits), nothing compiled
    assert used == set(), out


def _slice_copies(path):
    """``a[...:...] = <array>`` statements (a constant on the right is a cheap fill)."""
    import ast

    out = []
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Assign) and not isinstance(node.value, ast.Constant):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and any(isinstance(s, ast.Slice) for s in ast.walk(t.slice)):
                    if not (isinstance(node.value, ast.UnaryOp) and isinstance(node.value.operand, ast.Constant)):
                        out.append(node.lineno)
    return out


def test_partition_kernels_copy_without_slice_assignment():
    # Numba's array-to-array slice assignment compiles broadcasting checks and their
    # error messages on first use in a process: ~2.7 s of CPU of a cold compile of the
    # search (measured: 2.99 s vs 0.33 s for a loop, fresh process)
    import trustlab.kernels.cpp_heuristic as H
    import trustlab.kernels.cpp_pricing as P
    import trustlab.kernels.cpp_sparse as S

    for mod in (H, P, S):
        assert _slice_copies(mod.__file__) == [], mod.__name__
