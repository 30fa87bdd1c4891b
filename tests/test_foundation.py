import numpy as np
import pytest

import trustlab
from trustlab._backend import GPUUnavailableError, resolve_backend
from trustlab._validation import (
    Registry,
    check_finite_array,
    check_int,
    check_interval,
    check_option,
    check_random_state,
)
from trustlab.cli import main


def test_import_is_thin_and_lazy():
    import sys

    assert "cupy" not in sys.modules
    assert trustlab.__version__
    with pytest.raises(AttributeError):
        trustlab.no_such_name


def test_backend_resolution(monkeypatch):
    assert resolve_backend("cpu") == "cpu"
    assert resolve_backend("auto", size=1) == "cpu"
    with pytest.raises(ValueError, match=r"one of \['auto', 'cpu', 'gpu'\]"):
        resolve_backend("tpu")
    # auto with a (pretend) GPU: size threshold, "never", and the CPU-thread cap
    import trustlab._backend as B

    monkeypatch.setattr(B, "gpu_available", lambda need="cupy": True)
    assert resolve_backend("auto", size=10**9) == "gpu"
    assert resolve_backend("auto", size=10) == "cpu"
    assert resolve_backend("auto", size=10**9, gpu_threshold=None) == "cpu"
    monkeypatch.setattr(B.os, "cpu_count", lambda: 16)
    assert resolve_backend("auto", size=10**9, gpu_max_cpus=6) == "cpu"
    monkeypatch.setattr(B.os, "cpu_count", lambda: 4)
    assert resolve_backend("auto", size=10**9, gpu_max_cpus=6) == "gpu"
    monkeypatch.setenv("TRUSTLAB_BACKEND", "cpu")
    with pytest.raises(GPUUnavailableError, match="backend='cpu'"):
        resolve_backend("gpu")


def test_gpu_without_device_names_the_fix():
    from trustlab._backend import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present")
    with pytest.raises(GPUUnavailableError, match="trustlab\\[gpu\\]|no CUDA device"):
        resolve_backend("gpu")


def test_numba_cuda_numpy_compat_restores_row_stack_only_when_missing(monkeypatch):
    # numba-cuda overloads np.row_stack at its first CUDA compile; NumPy 2.5 removed it
    from trustlab._backend import numba_cuda_numpy_compat

    if hasattr(np, "row_stack"):
        before = np.row_stack
        assert numba_cuda_numpy_compat() is False and np.row_stack is before
        monkeypatch.delattr(np, "row_stack")
    assert numba_cuda_numpy_compat() is True
    assert np.row_stack is np.vstack
    assert numba_cuda_numpy_compat() is False


def test_random_state():
    a = check_random_state(3).standard_normal(4)
    b = check_random_state(3).standard_normal(4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(check_random_state(None).standard_normal(4),
                              check_random_state(None).standard_normal(4))
    g = np.random.default_rng(1)
    assert check_random_state(g) is g
    with pytest.raises(TypeError):
        check_random_state("seed")
    with pytest.raises(ValueError):
        check_random_state(-1)


def test_validators():
    with pytest.raises(
        ValueError, match=r"'epsilon' parameter of privatize must be a float in the range \(0, inf\)\. Got -1"
    ):
        check_interval(-1, "epsilon", low=0, func="privatize")
    with pytest.raises(ValueError):
        check_interval(float("nan"), "x")
    with pytest.raises(TypeError):
        check_interval("a", "x")
    assert check_interval(1, "b", low=0, high=1, closed="right") == 1.0
    with pytest.raises(ValueError):
        check_interval(1, "b", low=0, high=1)
    assert check_int(2.0, "M") == 2
    with pytest.raises(ValueError):
        check_int(-1, "M", low=0)
    with pytest.raises(ValueError, match="Got 'x'"):
        check_option("x", "method", ["a"])
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_finite_array([[1.0, np.nan]])
    with pytest.raises(ValueError, match="Expected a 2D array"):
        check_finite_array([1.0, 2.0])
    r = Registry("method")
    r.register("a", 1)
    with pytest.raises(ValueError, match=r"Valid choices are: \['a'\]"):
        r["zz"]


def test_cli_info_json(capsys):
    import json

    assert main(["info", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["trustlab"] == trustlab.__version__
    assert "backends" in d and d["backends"]["cpu"] is True


def test_atomic_write_never_half_written(tmp_path):
    from trustlab.commands._common import atomic_write

    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write("partial")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with atomic_write(target) as fh:
        fh.write("new")
    assert target.read_text() == "new"
