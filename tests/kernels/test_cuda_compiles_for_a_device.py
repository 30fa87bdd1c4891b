"""Every numba.cuda kernel trustlab launches compiles for a real device (PTX for sm_90).

The simulator tests (``NUMBA_ENABLE_CUDASIM=1``) run the kernels as Python, so code that
NVVM rejects passes them: at stop 42 the fused noise kernel's ``cuda.local.array(2 * maxp,
...)`` (a run-time size; a local array's must be a compile-time constant) passed every
simulator test and failed on the H200. Here NVVM itself compiles each kernel build with
the argument types its launch passes, in one subprocess without the simulator
(:mod:`tests.kernels._cuda_ptx_script`); no GPU or driver is needed, only the CUDA
toolkit's NVVM. Skipped where NVVM is missing.
"""
from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest

from tests import background
from tests.kernels import _cuda_ptx_script as script

ROOT = Path(__file__).resolve().parents[2]
_KEY = "test_cuda_kernel_compiles_for_sm_90"


def _run() -> background.Run:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}  # the real compiler, not the simulator
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return background.Run([sys.executable, "-m", "tests.kernels._cuda_ptx_script"], "", env, str(ROOT), timeout=600)


def background_runs(selected) -> dict:
    """The compile run, for tests/conftest.py to start early."""
    return {_KEY: _run()} if _KEY in selected else {}


@pytest.fixture(scope="module")
def compiled() -> dict:
    proc = background.result(_KEY, _run())
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skip" in res:
        pytest.skip(res["skip"])
    return res["results"]


@pytest.mark.slow
@pytest.mark.parametrize("case", script.CASES)
def test_cuda_kernel_compiles_for_sm_90(compiled, case):
    assert compiled[case] == "ok", f"{case} does not compile for a device:\n{compiled[case]}"


def _is_device(call) -> bool:
    return isinstance(call, ast.Call) and any(
        k.arg == "device" and isinstance(k.value, ast.Constant) and k.value.value for k in call.keywords)


def _kernels_defined() -> set:
    """Names of the functions under trustlab/ made kernels by numba.cuda: decorated
    ``@cuda.jit`` / ``@cuda.jit(...)``, or passed to ``cuda.jit(f)``, without ``device=True``."""
    names = set()
    for path in (ROOT / "trustlab").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "cuda.jit" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("cuda.jit") and node.args
                    and isinstance(node.args[0], ast.Name) and not _is_device(node)):
                names.add(node.args[0].id)
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    if ast.unparse(target).endswith("cuda.jit") and not _is_device(dec):
                        names.add(node.name)
    return names


def test_every_kernel_has_a_compile_case():
    kernels = _kernels_defined()
    assert kernels, "no @cuda.jit kernel found under trustlab/: has the kernels' layout changed?"
    missing = kernels - set(script.KERNELS_COVERED)
    assert not missing, (f"kernels without a real-target compile case: {sorted(missing)}; add them to "
                         "tests/kernels/_cuda_ptx_script.py (CASES, KERNELS_COVERED and a builder)")
    assert set(script.KERNELS_COVERED.values()) <= set(script.CASES)
