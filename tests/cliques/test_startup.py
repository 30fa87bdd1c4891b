"""Start-up mechanics: the Cython-BLAS preload, lazy CLI imports, no parallel runtime
for the clique kernels, and the cache warm-up entry point. Each check runs in a
fresh interpreter (module state is what is being tested)."""
from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pandas", "sklearn", "ortools", "scipy.linalg", "scipy.sparse", "scipy.stats", "networkx")


def _run(code: str) -> dict:
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_preload_keeps_scipy_linalg_and_numba_blas_working():
    r = _run(
        "import json, sys, numpy as np, numba\n"
        "import trustlab.kernels\n"
        "before = 'scipy.linalg' in sys.modules\n"
        "pre = 'scipy.linalg.cython_blas' in sys.modules\n"
        "@numba.njit\n"
        "def f(a, b):\n    return np.dot(a, b)\n"
        "v = float(f(np.ones((3, 3)), np.ones(3)).sum())\n"
        "import scipy.linalg, scipy.linalg.cython_blas as cb\n"
        "same = cb is sys.modules['scipy.linalg.cython_blas']\n"
        "g = float(scipy.linalg.blas.dgemm(1.0, np.eye(2), np.eye(2)).sum())\n"
        "x = float(scipy.linalg.solve(np.eye(2) * 2, np.ones(2)).sum())\n"
        "print(json.dumps(dict(before=before, pre=pre, v=v, same=same, g=g, x=x)))"
    )
    assert r == {"before": False, "pre": True, "v": 9.0, "same": True, "g": 2.0, "x": 1.0}


def test_help_and_cliques_cli_import_nothing_heavy(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("0 1\n1 2\n2 0\n2 3\n")
    code = (
        "import json, sys, contextlib, io\n"
        "from trustlab.cli import main\n"
        "argv = json.loads(sys.argv[1])\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "par = sys.modules.get('numba.np.ufunc.parallel')\n"
        f"print(json.dumps(dict(heavy=[m for m in {HEAVY!r} if m in sys.modules],\n"
        "    numba='numba' in sys.modules, parallel=bool(par and par._is_initialized))))"
    )
    for argv in (["--help"], ["cliques", "--help"], ["privatize", "--help"]):
        p = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True)
        r = json.loads(p.stdout.strip().splitlines()[-1])
        assert r == {"heavy": [], "numba": False, "parallel": False}, argv
    argv = ["cliques", str(f), "-q", "-o", str(tmp_path / "c.txt")]
    p = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["heavy"] == [] and r["parallel"] is False
    assert sorted((tmp_path / "c.txt").read_text().splitlines()) == ["0 1 2", "2 3"]


def test_clique_api_does_not_start_parallel_runtime():
    r = _run(
        "import json, sys, numpy as np\n"
        "from trustlab.cliques import maximal_cliques, count_maximal_cliques, count_cliques\n"
        "e = np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 4]])\n"
        "n = (len(maximal_cliques(e)), count_maximal_cliques(e), count_cliques(e, min_size=2))\n"
        "from numba.np.ufunc import parallel as par\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(json.dumps(dict(n=n, parallel=bool(par._is_initialized), heavy=heavy)))"
    )
    assert r == {"n": [3, 3, 6], "parallel": False, "heavy": []}


def test_warm_caches_runs_every_family():
    r = _run("import json\nfrom trustlab.commands.warmup import warm_caches\nprint(json.dumps(warm_caches()))")
    assert set(r) == {"cliques", "cliques CLI I/O", "privacy", "partition", "resolve", "weat"}
    assert all(v >= 0 for v in r.values())
