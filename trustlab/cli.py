"""The ``trustlab`` console command: one subcommand per job.

Each job lives in ``trustlab/commands/<name>.py`` and exposes
``register(subparsers)``; this module only wires them together and turns the
library's validation errors into one-line messages (exit status 2) instead of
tracebacks.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from trustlab import __version__

# (module, ...) in the order they appear in --help
COMMAND_MODULES = (
    "info",
    "cliques",
    "partition",
    "resolve",
    "privatize",
    "bias",
    "explain_metrics",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trustlab",
        description="Fast, exact solvers and kernels for trustworthy NLP data work.",
    )
    parser.add_argument("--version", action="version", version=f"trustlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        modname = f"trustlab.commands.{name}"
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:  # a job not built yet: leave it out
            if exc.name == modname:
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from trustlab.commands._common import CLIError

    try:
        rc = args.func(args)
    except CLIError as exc:
        print(f"trustlab {args.command}: error: {exc}", file=sys.stderr)
        return exc.code
    except (ValueError, TypeError, FileNotFoundError, IsADirectoryError, PermissionError,
            UnicodeDecodeError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"trustlab {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"trustlab {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
