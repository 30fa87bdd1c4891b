"""Shared helpers for CLI subcommands: JSON output, progress, errors.

Atomic file output lives in :mod:`trustlab._fileio` (re-exported here).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

from trustlab._fileio import atomic_path, atomic_write, json_default  # noqa: F401  (re-export)

#: the one name of parallelism on the command line (scikit-learn's and joblib's n_jobs)
PARALLELISM_OPTION = "--jobs"


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


class _DeprecatedAlias(argparse.Action):
    """A hidden old spelling of an option: stores into the new option's destination and
    warns once per parser (a :class:`FutureWarning`, shown to users by default)."""

    def __init__(self, option_strings, dest, *, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        warned = parser.__dict__.setdefault("_trustlab_deprecated_warned", set())
        if option_string not in warned:
            warned.add(option_string)
            warnings.warn(f"{option_string} is deprecated and will be removed in a future release; "
                          f"use {self.new} (same meaning)", FutureWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


def deprecated_alias(parser, old: str, new_action: argparse.Action) -> argparse.Action:
    """Keep ``old`` working as a hidden, deprecated spelling of ``new_action``'s option.

    The alias takes the same value type and choices, stores into the same destination,
    is left out of ``--help`` and warns once that it is deprecated (naming the new
    spelling), so existing scripts keep working.

    Examples
    --------
    >>> import argparse, warnings
    >>> p = argparse.ArgumentParser()
    >>> new = p.add_argument("--jobs", type=int, default=1, help="threads (default 1)")
    >>> _ = deprecated_alias(p, "--threads", new)
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     p.parse_args(["--threads", "4"]).jobs, str(w[0].message)
    (4, '--threads is deprecated and will be removed in a future release; use --jobs (same meaning)')
    >>> "--threads" in p.format_help()
    False
    """
    new = max(new_action.option_strings, key=len)
    return parser.add_argument(old, dest=new_action.dest, type=new_action.type, choices=new_action.choices,
                               metavar=new_action.metavar, nargs=new_action.nargs, default=argparse.SUPPRESS,
                               help=argparse.SUPPRESS, action=_DeprecatedAlias, new=new)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default unless the text already says it.

    Options whose default is None, False or suppressed are left alone (their help
    says what happens when they are not given).
    """

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if (text and text is not argparse.SUPPRESS and "default" not in text.lower() and action.option_strings
                and d is not None and d is not False and d is not argparse.SUPPRESS):
            shown = "%(default)s" if not isinstance(d, float) else f"{d:g}"
            text += f" (default: {shown})"
        return text


def encoding_type(text: str) -> str:
    """``type=`` for ``--encoding``: a name Python knows, checked when the option is read
    (so also where the option ends up unused), else argparse's one-line error.

    Examples
    --------
    >>> encoding_type("latin-1")
    'latin-1'
    >>> encoding_type("bogus")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unknown text encoding 'bogus'; give one Python knows, e.g. utf-8, latin-1, cp1252 ...
    """
    import codecs

    try:
        codecs.lookup(text)
    except LookupError:
        raise argparse.ArgumentTypeError(
            f"unknown text encoding {text!r}; give one Python knows, e.g. utf-8, latin-1, cp1252 or utf-16 "
            "(see the codecs module's list of standard encodings)") from None
    return text


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
