"""Explicit backend selection: ``backend="auto" | "cpu" | "gpu"``.

CuPy and numba-cuda are imported lazily, only when a GPU path is asked for, so a
CPU-only install imports and tests cleanly. ``auto`` picks the GPU only when one is
present *and* the input is large enough to pay for the transfer.

Set ``TRUSTLAB_BACKEND=cpu`` to force the CPU everywhere (``auto`` then means cpu).
"""
from __future__ import annotations

import functools
import os
from typing import Any

__all__ = [
    "BACKENDS",
    "resolve_backend",
    "gpu_available",
    "gpu_unavailable_reason",
    "get_cupy",
    "cuda_simulator_enabled",
    "GPUUnavailableError",
    "numba_cuda_numpy_compat",
]

BACKENDS = ("auto", "cpu", "gpu")


class GPUUnavailableError(RuntimeError):
    """Raised when ``backend="gpu"`` is requested but no usable GPU stack exists.

    Examples
    --------
    >>> try:
    ...     raise GPUUnavailableError("no CUDA device found; pip install 'trustlab[gpu]'")
    ... except RuntimeError as exc:  # a RuntimeError, so generic handlers catch it too
    ...     print(type(exc).__name__)
    GPUUnavailableError
    """


def cuda_simulator_enabled() -> bool:
    """True when Numba's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


@functools.lru_cache(maxsize=None)
def _probe_cupy() -> tuple[Any, str | None]:
    try:
        import cupy  # noqa: F401
    except Exception as exc:  # ImportError or a broken CUDA install
        return None, (
            f"CuPy is not importable ({type(exc).__name__}: {exc}). "
            "Install the GPU extra: pip install 'trustlab[gpu]'."
        )
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return None, f"CuPy is installed but no CUDA device was found ({exc})."
    if n < 1:
        return None, "CuPy is installed but no CUDA device was found."
    return cupy, None


def numba_cuda_numpy_compat() -> bool:
    """Restore ``numpy.row_stack`` for numba-cuda when NumPy lacks it; True if it did.

    numba-cuda (every release up to 0.30.4, the newest in 2026-11) registers an
    overload of ``np.row_stack`` when its CUDA typing registries load, i.e. at the
    first kernel compile in a process. NumPy 2.5 removed that name (it was an alias
    of ``np.vstack``), so on NumPy >= 2.5 *every* numba.cuda kernel compile fails
    with ``AttributeError: module 'numpy' has no attribute 'row_stack'`` (seen on an
    H100 with numba-cuda from a CUDA 13 image, NumPy 2.5.2). The alias is put back,
    pointing at ``np.vstack`` exactly as NumPy < 2.5 defined it, before trustlab
    compiles a CUDA kernel; nothing changes where NumPy still has the name.
    """
    import numpy as np

    if hasattr(np, "row_stack"):
        return False
    np.row_stack = np.vstack
    return True


@functools.lru_cache(maxsize=None)
def _probe_numba_cuda() -> str | None:
    numba_cuda_numpy_compat()
    try:
        from numba import cuda
    except Exception as exc:
        return f"numba.cuda is not importable ({exc}). Install: pip install 'trustlab[gpu]'."
    if cuda_simulator_enabled():
        return None
    try:
        if not cuda.is_available():
            return "numba.cuda found no CUDA device (or no CUDA driver)."
    except Exception as exc:
        return f"numba.cuda failed to initialise ({exc})."
    return None


def gpu_unavailable_reason(need: str = "cupy") -> str | None:
    """Why the GPU backend cannot run, or ``None`` when it can.

    ``need`` is ``"cupy"`` (array glue + CuPy kernels) or ``"numba-cuda"``
    (numba.cuda kernels; satisfied by the simulator under ``NUMBA_ENABLE_CUDASIM=1``).
    """
    if os.environ.get("TRUSTLAB_BACKEND", "").lower() == "cpu":
        return "TRUSTLAB_BACKEND=cpu is set in the environment."
    if need == "numba-cuda":
        return _probe_numba_cuda()
    return _probe_cupy()[1]


def gpu_available(need: str = "cupy") -> bool:
    """True when a usable GPU stack (and device) is present."""
    return gpu_unavailable_reason(need) is None


def get_cupy():
    """Import and return CuPy, or raise :class:`GPUUnavailableError` naming the fix."""
    mod, why = _probe_cupy()
    if mod is None:
        raise GPUUnavailableError(why)
    return mod


def resolve_backend(
    backend: str,
    *,
    size: int | None = None,
    gpu_threshold: int | None = 1_000_000,
    gpu_max_cpus: int | None = None,
    need: str = "cupy",
    func: str | None = None,
) -> str:
    """Turn ``"auto" | "cpu" | "gpu"`` into ``"cpu"`` or ``"gpu"``.

    Parameters
    ----------
    backend : str
        The user's choice.
    size : int, optional
        A measure of the work (elements, edges…). ``auto`` chooses the GPU only if a
        GPU is usable and ``size >= gpu_threshold``.
    gpu_threshold : int or None
        Break-even size for the GPU path; ``None``: ``auto`` never chooses the GPU
        (a path measured slower than the CPU kernels; ``"gpu"`` still runs it).
    gpu_max_cpus : int or None
        ``auto`` chooses the GPU only on machines with at most this many CPU threads
        (``os.cpu_count()``): for host-resident data the CPU kernels scale with the
        cores and a many-core CPU outruns the transfer-bound GPU path.
    need : {"cupy", "numba-cuda"}
        Which GPU stack the caller's GPU path needs.

    Raises
    ------
    ValueError
        Unknown backend name.
    GPUUnavailableError
        ``backend="gpu"`` without a usable GPU; the message says why and how to fix it.

    Examples
    --------
    >>> resolve_backend("cpu")
    'cpu'
    >>> resolve_backend("auto", size=10)
    'cpu'
    """
    if backend not in BACKENDS:
        from trustlab._validation import check_option

        check_option(backend, "backend", list(BACKENDS), func=func)  # raises, with the one template
    if backend == "cpu":
        return "cpu"
    if backend == "gpu":
        why = gpu_unavailable_reason(need)
        if why is not None:
            raise GPUUnavailableError(
                f"backend='gpu' was requested but the GPU backend is unavailable: {why} "
                "Use backend='cpu' (or 'auto') to run on the CPU."
            )
        return "gpu"
    # auto
    if gpu_threshold is None or (size is not None and size < gpu_threshold):
        return "cpu"
    if gpu_max_cpus is not None and (os.cpu_count() or 1) > gpu_max_cpus:
        return "cpu"
    if need == "numba-cuda" and cuda_simulator_enabled():
        return "cpu"  # never pick the (slow) simulator automatically
    return "gpu" if gpu_available(need) else "cpu"


def backend_report() -> dict[str, Any]:
    """Which backends are usable and why not, for ``trustlab info``."""
    return {
        "cpu": True,
        "gpu_cupy": gpu_unavailable_reason("cupy") or "available",
        "gpu_numba_cuda": gpu_unavailable_reason("numba-cuda") or "available",
        "cuda_simulator": cuda_simulator_enabled(),
    }
