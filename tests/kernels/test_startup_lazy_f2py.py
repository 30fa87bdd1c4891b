"""``numpy.f2py`` is registered lazily on ``import trustlab.kernels`` (SciPy's array-API
shim touches it on every ``scipy.sparse`` import); it must still work on first use.
Each check runs in a fresh interpreter (module state is what is being tested)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

_CODE = (
    "import json, sys\n"
    "import trustlab.er  # kernels first, then scipy.sparse / scipy.optimize via the pipeline\n"
    "import scipy.sparse, scipy.optimize\n"
    "executed = 'numpy.f2py.crackfortran' in sys.modules\n"
    "import numpy, numpy.f2py as f2py\n"
    "same = f2py is numpy.f2py is sys.modules['numpy.f2py']\n"
    "works = callable(numpy.f2py.run_main) and 'crackfortran' in dir(numpy.f2py)\n"
    "print(json.dumps(dict(executed=executed, same=same, works=works,\n"
    "                      loaded='numpy.f2py.crackfortran' in sys.modules)))\n"
)


def _run(env=None) -> dict:
    p = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, timeout=600,
                       env={**os.environ, **(env or {})})
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_f2py_deferred_until_used_and_then_complete():
    assert _run() == {"executed": False, "same": True, "works": True, "loaded": True}


def test_opt_out_restores_eager_import():
    assert _run({"TRUSTLAB_NO_LAZY_F2PY": "1"})["executed"] is True
