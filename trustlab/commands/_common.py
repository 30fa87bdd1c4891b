"""Shared helpers for CLI subcommands: JSON output, atomic writes, progress."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np


class CLIError(Exception):
    """A user-facing CLI error: printed as one line, exit status ``code``."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def add_output_flags(p, *, json_flag: bool = True) -> None:
    """Add the common ``--json``, ``--quiet`` and ``--verbose`` flags."""
    if json_flag:
        p.add_argument("--json", action="store_true", help="print one JSON object (for scripts)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    g.add_argument("-v", "--verbose", action="store_true", help="more progress output")


def show_progress(args) -> bool:
    """Progress bars only on a terminal, never with --quiet or --json."""
    if getattr(args, "quiet", False) or getattr(args, "json", False):
        return False
    return sys.stderr.isatty() or getattr(args, "verbose", False)


def _default(o: Any):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def emit_json(obj: Any, stream=None) -> None:
    """Print ``obj`` as one JSON object (NumPy scalars and arrays handled)."""
    stream = stream or sys.stdout
    stream.write(json.dumps(obj, default=_default, sort_keys=False) + "\n")
    stream.flush()


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **kwargs) -> Iterator[Any]:
    """Write to a temporary file beside ``path`` and rename it into place on success.

    The target is never left half-written: on any exception the temporary file is
    removed and ``path`` is untouched.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise CLIError(f"output directory {str(parent)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_path(path: str | os.PathLike) -> "contextlib.AbstractContextManager[Path]":
    """Yield a temporary *path* beside ``path`` (for writers that want a filename,
    e.g. ``np.save`` or ``DataFrame.to_parquet``) and rename it into place on success."""

    @contextlib.contextmanager
    def _cm():
        p = Path(path)
        parent = p.parent if str(p.parent) else Path(".")
        if not parent.exists():
            raise CLIError(f"output directory {str(parent)!r} does not exist")
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=p.suffix or ".tmp", dir=parent)
        os.close(fd)
        try:
            yield Path(tmp)
            os.replace(tmp, p)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    return _cm()
