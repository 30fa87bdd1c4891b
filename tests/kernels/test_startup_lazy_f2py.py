"""The ``trustlab`` command registers ``numpy.f2py`` lazily (SciPy's array-API shim touches
it on every ``scipy.sparse`` import); it must still work on first use, and importing the
library alone must leave it alone.
Each check runs in a fresh interpreter (module state is what is being tested)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

_CODE = (
    "import json, sys\n"
    "import os\n"
    "if os.environ.get('CLI'):\n"
    "    from trustlab._lazy import defer_numpy_f2py  # what trustlab.cli.console_main does first\n"
    "    defer_numpy_f2py()\n"
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
    assert _run({"CLI": "1"}) == {"executed": False, "same": True, "works": True, "loaded": True}


def test_opt_out_restores_eager_import():
    assert _run({"CLI": "1", "TRUSTLAB_NO_LAZY_F2PY": "1"})["executed"] is True


def test_library_import_leaves_numpy_f2py_alone():
    assert _run({"CLI": ""})["executed"] is True


def test_console_entry_point_defers_it():
    code = ("import sys, trustlab.cli as c\n"
            "c.main = lambda: 0\n"
            "c._exit = lambda rc: None\n"
            "c.console_main()\n"
            "import trustlab.er, scipy.sparse, scipy.optimize\n"
            "print('numpy.f2py.crackfortran' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip().splitlines()[-1] == "False"
