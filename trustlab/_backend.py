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
]

BACKENDS = ("auto", "cpu", "gpu")


class GPUUnavailableError(RuntimeError):
    """Raised when ``backend="gpu"`` is requested but no usable GPU stack exists."""


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


@functools.lru_cache(maxsize=None)
def _probe_numba_cuda() -> str | None:
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
    gpu_threshold: int = 1_000_000,
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
    gpu_threshold : int
        Break-even size for the GPU path.
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
        where = f" of {func}" if func else ""
        raise ValueError(
            f"The 'backend' parameter{where} must be one of {list(BACKENDS)}. Got {backend!r} instead."
        )
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
    if size is not None and size < gpu_threshold:
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
