"""Shared helpers for CLI subcommands: JSON output, progress, errors.

Atomic file output lives in :mod:`trustlab._fileio` (re-exported here).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._fileio import atomic_path, atomic_write  # noqa: F401  (re-export)


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
