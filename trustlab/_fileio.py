"""Atomic file output for the library and the CLI.

Every file trustlab writes goes through :func:`atomic_write` or :func:`atomic_path`:
the data is written to a temporary file beside the target and renamed into place
only on success, so an existing output is never left half-written. Temporary
files are removed on any exception, on Ctrl-C, and on SIGTERM/SIGHUP (the CLI
installs :func:`install_signal_cleanup`; a library user's own handlers are left
alone). Finished files get the permissions a user expects from ``open()``:
``0o666`` masked by the process umask (``mkstemp`` alone would leave ``0o600``).

Errors are standard exceptions with the path in the message
(:class:`FileNotFoundError` for a missing directory, :class:`PermissionError`, or
:class:`OSError` such as a read-only file system).
"""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

__all__ = ["atomic_write", "atomic_path", "install_signal_cleanup", "live_temp_files"]

_LIVE: set[str] = set()
_LOCK = threading.Lock()


def live_temp_files() -> list[str]:
    """Temporary files of atomic writes still in progress (for tests and handlers)."""
    with _LOCK:
        return sorted(_LIVE)


def _cleanup_live() -> None:
    with _LOCK:
        paths = list(_LIVE)
        _LIVE.clear()
    for p in paths:
        with contextlib.suppress(OSError):
            os.unlink(p)


def _umask() -> int:
    # os.umask can only be read by setting it; restore immediately
    old = os.umask(0o022)
    os.umask(old)
    return old


def _parent_dir(path: Path) -> Path:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise FileNotFoundError(
            f"cannot write {str(path)!r}: output directory {str(parent)!r} does not exist; create it first"
        )
    if not parent.is_dir():
        raise NotADirectoryError(f"cannot write {str(path)!r}: {str(parent)!r} is not a directory")
    if path.is_dir():
        raise IsADirectoryError(f"cannot write {str(path)!r}: it is a directory; give a file name")
    return parent


def _mkstemp(path: Path, suffix: str) -> tuple[int, str]:
    parent = _parent_dir(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=parent)
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
    with _LOCK:
        _LIVE.add(tmp)
    return fd, tmp


def _finish(tmp: str, path: Path) -> None:
    with contextlib.suppress(OSError):
        os.chmod(tmp, 0o666 & ~_umask())
    try:
        os.replace(tmp, path)
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
    with _LOCK:
        _LIVE.discard(tmp)


def _discard(tmp: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    with _LOCK:
        _LIVE.discard(tmp)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **kwargs: Any) -> Iterator[Any]:
    """Open a temporary file beside ``path``; rename it into place on success.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with atomic_write(os.path.join(d, "out.txt")) as fh:
    ...     _ = fh.write("done")
    >>> open(os.path.join(d, "out.txt")).read()
    'done'
    """
    path = Path(path)
    fd, tmp = _mkstemp(path, ".tmp")
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _finish(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary *path* beside ``path`` (for writers that want a file name,
    such as ``np.save`` or ``DataFrame.to_parquet``); rename it into place on success.

    The temporary name keeps ``path``'s suffix so that suffix-sniffing writers
    behave the same.
    """
    p = Path(path)
    fd, tmp = _mkstemp(p, p.suffix or ".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        _finish(tmp, p)
    except BaseException:
        _discard(tmp)
        raise


class _Terminated(BaseException):
    """Raised in the main thread by SIGTERM/SIGHUP so ``finally`` blocks run."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def install_signal_cleanup() -> None:
    """Make SIGTERM and SIGHUP unwind like Ctrl-C: temporary files are removed,
    existing outputs stay intact, and the process exits with ``128 + signum``.

    Only the CLI calls this (a library never takes over a host's signals). Safe to
    call more than once; a no-op off the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum, frame):  # noqa: ARG001
        raise _Terminated(signum)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, handler)


def terminated_exit_code(exc: BaseException) -> int | None:
    """Exit status for a :class:`_Terminated` exception (else ``None``); cleans up."""
    if isinstance(exc, _Terminated):
        _cleanup_live()
        return 128 + exc.signum
    return None


def json_default(o):
    """``json.dump(default=...)`` for NumPy scalars and arrays, paths and objects with
    ``to_dict()``.

    Examples
    --------
    >>> import json, numpy as np
    >>> json.dumps({"n": np.int64(3), "v": np.arange(2)}, default=json_default)
    '{"n": 3, "v": [0, 1]}'
    """
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
