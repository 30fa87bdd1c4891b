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


def constrained(spec, param: str | None = None):
    """An argparse ``type=`` that parses a number and checks declared constraints.

    ``spec`` is a public function decorated with
    :func:`trustlab._validation.validate_params` (then ``param`` names its parameter,
    so the CLI checks exactly what the library declares) or a list of constraints.
    Integer constraints accept ``1e6``-style spellings of whole numbers. A bad value
    becomes argparse's one-line error with exit status 2.
    """
    import argparse
    import numbers as _numbers

    from trustlab._validation import Interval, _describe, make_constraint, param_constraints

    cons = param_constraints(spec, param) if param is not None else [make_constraint(c) for c in spec]
    want_int = any(isinstance(c, Interval) and c.kind is _numbers.Integral for c in cons) and not any(
        isinstance(c, Interval) and c.kind is _numbers.Real for c in cons)

    def parse(text: str):
        v = float(text)  # ValueError for non-numbers
        if want_int and v == v and abs(v) != float("inf") and v.is_integer():
            return int(v)
        return v

    def convert(text: str):
        try:
            v = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {_describe(cons)}. Got {text!r} instead.") from None
        if not any(c.is_satisfied_by(v) for c in cons):
            raise argparse.ArgumentTypeError(f"must be {_describe(cons)}. Got {text!r} instead.")
        return v

    convert.constraints = cons
    convert.parse = parse
    convert.__name__ = "number"
    return convert
