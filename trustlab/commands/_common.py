"""Shared helpers for CLI subcommands: JSON output, progress, errors.

Atomic file output lives in :mod:`trustlab._fileio` (re-exported here).
"""
from __future__ import annotations

import json
import sys
from typing import Any

from trustlab._fileio import atomic_path, atomic_write, json_default  # noqa: F401  (re-export)


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


_default = json_default  # NumPy-aware JSON encoding (trustlab._fileio)


def emit_json(obj: Any, stream=None) -> None:
    """Print ``obj`` as one JSON object (NumPy scalars and arrays handled)."""
    stream = stream or sys.stdout
    stream.write(json.dumps(obj, default=_default, sort_keys=False) + "\n")
    stream.flush()


class constrained:
    """An argparse ``type=`` that parses a number and checks declared constraints.

    ``spec`` names a public function decorated with
    :func:`trustlab._validation.validate_params` as ``"module:function"`` (resolved
    lazily, so ``--help`` imports nothing heavy) and ``param`` its parameter: the CLI
    checks exactly what the library declares. ``spec`` may also be a list of
    constraints. Integer constraints accept ``1e6``-style spellings of whole numbers.
    A bad value becomes argparse's one-line error with exit status 2.

    Examples
    --------
    >>> t = constrained("trustlab.privacy.calibration:calibrate_m", "beta")
    >>> t("0.5")
    0.5
    """

    __name__ = "number"

    def __init__(self, spec, param: str | None = None):
        self.spec, self.param = spec, param
        self._cons = None

    @property
    def constraints(self) -> list:
        if self._cons is None:
            from trustlab._validation import make_constraint, param_constraints

            if isinstance(self.spec, str):
                import importlib

                mod, _, name = self.spec.partition(":")
                self._cons = param_constraints(getattr(importlib.import_module(mod), name), self.param)
            else:
                self._cons = [make_constraint(c) for c in self.spec]
        return self._cons

    def _wants_int(self) -> bool:
        import numbers as _numbers

        from trustlab._validation import Interval

        kinds = {c.kind for c in self.constraints if isinstance(c, Interval)}
        return kinds == {_numbers.Integral}

    def parse(self, text: str):
        if self._wants_int():
            s = text.strip()
            if s.lstrip("+-").isdigit() and s.isascii():  # exactly (float() would round past 2**53)
                return int(s)
        if "_" in text:  # one spelling of numbers everywhere: 1000, not Python's 1_000
            raise ValueError(text)
        v = float(text)  # ValueError for non-numbers
        if self._wants_int() and v == v and abs(v) != float("inf") and v.is_integer():
            return int(v)
        return v

    def __call__(self, text: str):
        import argparse

        from trustlab._validation import _describe, _NoneConstraint

        try:
            v = self.parse(text)
        except ValueError:
            v = None
        if v is None or not any(c.is_satisfied_by(v) for c in self.constraints):
            # None means "option not given": a command-line value can never be None
            shown = [c for c in self.constraints if not isinstance(c, _NoneConstraint)] or self.constraints
            raise argparse.ArgumentTypeError(f"must be {_describe(shown)}. Got {text!r} instead.")
        return v

    def __repr__(self) -> str:
        return "number"


def seed_type() -> constrained:
    """``type=`` for ``--seed`` options: an int in [0, 2**63 - 1]."""
    import numbers as _numbers

    from trustlab._validation import Interval

    return constrained([Interval(_numbers.Integral, 0, 2**63 - 1, closed="both")])
