"""Atomic file output for the library and the CLI.

Every file trustlab writes goes through :func:`atomic_write` or :func:`atomic_path`:
the data is written to a temporary file beside the target and renamed into place
only on success, so an existing output is never left half-written. Temporary
files are removed on any exception, on Ctrl-C, and on SIGTERM/SIGHUP (the CLI
installs :func:`install_signal_cleanup`; a library user's own handlers are left
alone). Finished files get the permissions a user expects from ``open()``:
``0o666`` masked by the process umask (``mkstemp`` alone would leave ``0o600``).

What the target is decides how it is written (:func:`output_target`):

* a regular file, or a name that does not exist yet: temporary file + rename;
* a **symbolic link to a regular file** (or a dangling link): the link is kept and
  its **target** is written, atomically (temporary file beside the target + rename),
  as ``open(path, "w")`` would write through the link;
* a **character device or FIFO** (``/dev/null``, ``/dev/stdout``, a named pipe, a
  terminal), or a name under ``/dev/`` or ``/proc/`` that leads to an open file
  (``/proc/self/fd/1``): the output is **streamed** to it once complete (spooled to
  an anonymous temporary file first, so a failed run writes nothing); the special
  file is never replaced, and ``-o /dev/null`` run as root leaves ``/dev/null`` alone;
* a block device, a socket or another special file: refused with an
  :class:`OSError` whose message names the path.

A process killed by SIGKILL cannot remove its temporary files. Where the OS has
``O_TMPFILE`` (Linux), :func:`atomic_write` writes an unnamed file that is only
linked into the directory at the moment of the rename, so a kill leaves nothing
behind. Named temporary files (``atomic_path``, and ``atomic_write`` elsewhere) carry
the writer's host and process id in their name (``.NAME.tl<pid>-<host>-XXXXXXXX``),
and the next write of the same name in that directory removes those left by
processes of this host that no longer exist.

Errors are standard exceptions with the path in the message
(:class:`FileNotFoundError` for a missing directory, :class:`PermissionError`, or
:class:`OSError` such as a read-only file system).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

__all__ = ["atomic_write", "atomic_path", "install_signal_cleanup", "live_temp_files", "output_target"]

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


def output_target(path: str | os.PathLike) -> tuple[Path, bool]:
    """Where an output named ``path`` is written, and whether it is streamed.

    Returns ``(target, stream)``: for a regular file or a new name ``(path, False)``;
    for a symbolic link to a regular file (or a dangling one) ``(resolved target,
    False)``; for a character device, a FIFO or a name under ``/dev/`` or ``/proc/``
    (``/dev/stdout``, ``/proc/self/fd/1``) ``(path, True)``. Raises
    :class:`IsADirectoryError` for a directory and :class:`OSError` for a block
    device, a socket or another special file.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> output_target(os.path.join(d, "new.csv"))[1], output_target(os.devnull)[1]
    (False, True)
    """
    p = Path(path)
    try:
        st = os.stat(p)  # follows symbolic links
    except FileNotFoundError:
        if os.path.islink(p):  # dangling link: write its target, as open() would
            return Path(os.path.realpath(p)), False
        return p, False
    except OSError:
        return p, False  # let the writer report it (e.g. a path through a non-directory)
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"cannot write {str(p)!r}: it is a directory; give a file name")
    via_proc = str(p).startswith(("/dev/", "/proc/")) and os.path.islink(p)
    if stat.S_ISREG(mode) and not via_proc:
        return (Path(os.path.realpath(p)) if os.path.islink(p) else p), False
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or (stat.S_ISREG(mode) and via_proc):
        return p, True
    kind = "block device" if stat.S_ISBLK(mode) else "socket" if stat.S_ISSOCK(mode) else "special file"
    raise OSError(f"cannot write {str(p)!r}: it is a {kind}, not a regular file; give a file name "
                  "(character devices such as /dev/null and FIFOs are written as streams)")


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


def _host_tag() -> str:
    import hashlib
    import socket

    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def clean_stale_temp_files(path: str | os.PathLike) -> list[str]:
    """Remove the temporary files that writers of ``path`` killed by SIGKILL left beside it.

    Only files of this user whose name says they were made on this host by a process
    that no longer exists (``.NAME.tl<pid>-<host>-…``) are removed; returns their paths.
    """
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    pat = re.compile(r"\." + re.escape(p.name) + r"\.tl(\d+)-([0-9a-f]{8})-")
    host, uid, removed = _host_tag(), os.geteuid() if hasattr(os, "geteuid") else None, []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for e in entries:
        m = pat.match(e.name)
        if m is None or m.group(2) != host or int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1))):
            continue
        with contextlib.suppress(OSError):
            st = e.stat(follow_symlinks=False)
            if (uid is None or st.st_uid == uid) and (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                os.unlink(e.path)
                removed.append(e.path)
    return removed


def _prefix(path: Path) -> str:
    return f".{path.name}.tl{os.getpid()}-{_host_tag()}-"


def _mkstemp(path: Path, suffix: str, *, spool: bool = False) -> tuple[int, str]:
    if spool:  # a stream target (/dev/null, a FIFO): spool in the temporary directory
        parent = Path(tempfile.gettempdir())
        prefix = f".trustlab-spool.tl{os.getpid()}-{_host_tag()}-"
    else:
        parent = _parent_dir(path)
        prefix = _prefix(path)
        clean_stale_temp_files(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=parent)
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
    with _LOCK:
        _LIVE.add(tmp)
    return fd, tmp


def _replace(tmp: str, path: Path) -> None:
    with contextlib.suppress(OSError):
        os.chmod(tmp, 0o666 & ~_umask())
    try:
        os.replace(tmp, path)
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None


def _stream_into(tmp: str, path: Path) -> None:
    """Copy the finished spool file into the special file ``path`` (never replacing it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
    with open(tmp, "rb") as src, os.fdopen(fd, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def _finish(tmp: str, path: Path, stream: bool = False) -> None:
    if stream:
        _stream_into(tmp, path)
        _discard(tmp)
        return
    _replace(tmp, path)
    with _LOCK:
        _LIVE.discard(tmp)


def _discard(tmp: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    with _LOCK:
        _LIVE.discard(tmp)


def _open_tmpfile(parent: Path) -> int | None:
    """An unnamed file in ``parent`` (Linux ``O_TMPFILE``): nothing to orphan; None elsewhere."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(parent, flag | os.O_WRONLY, 0o666 & ~_umask())
    except OSError:  # file system without O_TMPFILE support
        return None


def _link_tmpfile(fd: int, path: Path) -> None:
    """Give the unnamed file ``fd`` the name ``path`` (replacing it atomically)."""
    parent = path.parent if str(path.parent) else Path(".")
    # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd/N: CPython calls linkat (not link, which
    # would try to link the /proc symlink itself) only when a directory fd is given
    dfd = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for _ in range(100):
            name = _prefix(path) + os.urandom(6).hex()
            try:
                os.link(f"/proc/self/fd/{fd}", name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=True)
                break
            except FileExistsError:
                continue
            except OSError as exc:
                raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
        else:  # pragma: no cover
            raise FileExistsError(f"cannot write {str(path)!r}: no free temporary name")
    finally:
        os.close(dfd)
    name = str(parent / name)
    try:
        os.replace(name, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **kwargs: Any) -> Iterator[Any]:
    """Open a temporary file beside ``path``; rename it into place on success.

    A symbolic link has its target written; a character device or FIFO is streamed
    to once the data is complete (see the module docstring, :func:`output_target`).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with atomic_write(os.path.join(d, "out.txt")) as fh:
    ...     _ = fh.write("done")
    >>> open(os.path.join(d, "out.txt")).read()
    'done'
    """
    target, stream = output_target(path)
    if not stream:
        parent = _parent_dir(target)
        fd = _open_tmpfile(parent)
        if fd is not None:
            clean_stale_temp_files(target)
            with os.fdopen(fd, mode, **kwargs) as fh:  # an exception leaves nothing behind
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
                _link_tmpfile(fh.fileno(), target)
            return
    fd, tmp = _mkstemp(target, ".tmp", spool=stream)
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            if not stream:
                os.fsync(fh.fileno())
        _finish(tmp, target, stream)
    except BaseException:
        _discard(tmp)
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary *path* beside ``path`` (for writers that want a file name,
    such as ``np.save`` or ``DataFrame.to_parquet``); rename it into place on success.

    The temporary name keeps ``path``'s suffix so that suffix-sniffing writers
    behave the same. Symbolic links and special files as in :func:`atomic_write`.
    """
    target, stream = output_target(path)
    p = Path(path)
    fd, tmp = _mkstemp(target, p.suffix or ".tmp", spool=stream)
    os.close(fd)
    try:
        yield Path(tmp)
        _finish(tmp, target, stream)
    except BaseException:
        _discard(tmp)
        raise


class _Terminated(BaseException):
    """Raised in the main thread by SIGTERM/SIGHUP so ``finally`` blocks run."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_RECEIVED: list[int] = []
"""Signals the handler of :func:`install_signal_cleanup` has raised since it was installed."""


def install_signal_cleanup() -> None:
    """Make SIGTERM and SIGHUP unwind like Ctrl-C: temporary files are removed,
    existing outputs stay intact, and the process exits with ``128 + signum``.

    Only the CLI calls this (a library never takes over a host's signals). Safe to
    call more than once; a no-op off the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    _RECEIVED.clear()

    def handler(signum, frame):  # noqa: ARG001
        _RECEIVED.append(signum)
        raise _Terminated(signum)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, handler)
    _watch_unraisable()


#: seconds before a signal whose exception was dropped is sent again
_REDELIVER_S = 0.05


def _watch_unraisable() -> None:
    """Send a signal again when the exception its handler raised was dropped.

    The handler runs wherever the main thread is. Inside a finaliser (``__del__``), a
    weakref or garbage-collector callback, or a C callback into Python, an exception
    cannot propagate: Python prints it ("Exception ignored in ...") and goes on, so the
    command ran on as if no signal had come (a ``partition`` SIGKILLed 60 s after its
    SIGTERM, stderr ending in ``_Terminated: 15``). ``sys.unraisablehook`` sees such a
    dropped :class:`_Terminated`: the signal is then sent again shortly, from a timer
    thread, and its handler runs at the main thread's next check, outside that context.
    Installed once; other unraisable exceptions go to the hook found before."""
    import sys

    before = sys.unraisablehook
    if getattr(before, "_trustlab_redeliver", False):
        return

    def hook(unraisable):
        exc = getattr(unraisable, "exc_value", None)
        if isinstance(exc, _Terminated) and _RECEIVED:
            t = threading.Timer(_REDELIVER_S, os.kill, (os.getpid(), exc.signum))
            t.daemon = True
            t.start()
            return
        before(unraisable)

    hook._trustlab_redeliver = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


def terminated_exit_code(exc: BaseException) -> int | None:
    """Exit status for a :class:`_Terminated` exception, or for any exception once
    SIGTERM/SIGHUP has been received (see :func:`signal_unwinding`); else ``None``.
    Cleans up."""
    signum = exc.signum if isinstance(exc, _Terminated) else (_RECEIVED[0] if _RECEIVED else None)
    if signum is None:
        return None
    _cleanup_live()
    return 128 + signum


def signal_unwinding() -> tuple:
    """``(BaseException,)`` once the handler of :func:`install_signal_cleanup` has raised,
    else ``()`` (which an ``except`` clause never matches).

    For the first ``except`` clause around a command: whatever escapes while a signal
    unwinds it is the signal's doing, not an error of its own. A library interrupted in the
    middle may fail in its own clean-up (a Numba compilation cut by SIGTERM left the
    dispatcher unusable, and a thread that used it next raised ``RuntimeError``), which
    must still end as ``128 + signum``, not as a traceback.
    """
    return (BaseException,) if _RECEIVED else ()


def forget_signals() -> None:
    """Forget the signals received (when the handlers are put back)."""
    _RECEIVED.clear()


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


class held_signals:
    """Hold SIGTERM, SIGHUP and SIGINT from :meth:`start` until the ``with`` block ends,
    so that several outputs committed in a row (a release's vectors, then its record)
    are all renamed into place or none is; a signal that arrives meanwhile is handled
    as usual (by the handler in place before) when the block ends.

    The handlers are swapped for ones that only note the signal (a thread mask would
    not do: the signal may be delivered to a BLAS or Numba thread). A no-op off the
    main thread.

    Examples
    --------
    >>> with held_signals() as hold:
    ...     hold.start()   # from here to the end of the block: signals wait
    """

    _NAMES = ("SIGTERM", "SIGHUP", "SIGINT")

    def __init__(self):
        self._old: dict | None = None
        self._pending: list[int] = []

    def start(self) -> None:
        if self._old is not None or threading.current_thread() is not threading.main_thread():
            return
        old = {}
        for name in self._NAMES:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                old[sig] = signal.signal(sig, lambda signum, frame: self._pending.append(signum))
            except (ValueError, OSError):  # pragma: no cover - not settable here
                continue
        self._old = old

    def __enter__(self) -> "held_signals":
        return self

    def __exit__(self, *exc) -> bool:
        if self._old is None:
            return False
        old, self._old = self._old, None
        for sig, h in old.items():
            signal.signal(sig, h if h is not None else signal.SIG_DFL)
        for signum in dict.fromkeys(self._pending):
            h = old.get(signum)
            if callable(h):
                h(signum, None)  # e.g. raises _Terminated or KeyboardInterrupt
            elif h == signal.SIG_DFL:
                os.kill(os.getpid(), signum)
        return False
