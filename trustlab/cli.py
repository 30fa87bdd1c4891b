"""The ``trustlab`` console command: one subcommand per job.

Each job lives in ``trustlab/commands/<name>.py`` and exposes
``register(subparsers)``; this module only wires them together and turns the
library's validation errors into one-line messages (exit status 2) instead of
tracebacks.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from typing import Any, Iterator, Sequence

from trustlab import __version__

# (module, ...) in the order they appear in --help
COMMAND_MODULES = (
    "info",
    "cliques",
    "partition",
    "resolve",
    "privatize",
    "privacy_utility",
    "bias",
    "explain_metrics",
    "warmup",
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``trustlab CMD: error: ...`` and exit status 2, and
    every option's default in ``--help`` (subcommand parsers are of this class too)."""

    def __init__(self, *args, **kwargs):
        if "formatter_class" not in kwargs:
            from trustlab.commands._common import DefaultsHelpFormatter

            kwargs["formatter_class"] = DefaultsHelpFormatter
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="trustlab",
        description="Fast, exact solvers and kernels for trustworthy NLP data work.",
    )
    parser.add_argument("--version", action="version", version=f"trustlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"trustlab.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``trustlab`` command in this process and return its exit status.

    Library code: it leaves process-wide state as it found it. In particular it
    installs no signal handlers (the console script does that, see
    :func:`console_main` and :func:`signal_cleanup`), so tests and host
    applications can call it in-process.

    Parameters
    ----------
    argv : sequence of str, optional
        The command line without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 for a usage or input error, 130 after Ctrl-C, ``128 + signum``
        when SIGTERM/SIGHUP ended the command (only where :func:`signal_cleanup` is active).

    Examples
    --------
    >>> import signal
    >>> before = signal.getsignal(signal.SIGTERM)
    >>> main(["info", "--json"]) == 0 and signal.getsignal(signal.SIGTERM) is before  # doctest: +ELLIPSIS
    {...}
    True
    """
    parser = build_parser()
    try:
        with _one_line_warnings("trustlab: warning:"):  # e.g. a deprecated option spelling
            args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from trustlab._backend import GPUUnavailableError
    from trustlab._fileio import signal_unwinding, terminated_exit_code
    from trustlab._validation import InvalidParameterError
    from trustlab.commands._common import CLIError

    prefix = f"trustlab {args.command}: error:"
    try:
        _check_output_paths(args)
        with _one_line_warnings(f"trustlab {args.command}: warning:"):
            rc = args.func(args)
    except signal_unwinding() as exc:  # matches only after SIGTERM/SIGHUP: whatever escapes is its doing
        code = terminated_exit_code(exc)
        print(f"trustlab {args.command}: terminated by signal {code - 128}", file=sys.stderr)
        return code
    except CLIError as exc:
        print(f"{prefix} {exc}", file=sys.stderr)
        return exc.code
    except GPUUnavailableError as exc:
        print(f"{prefix} {_one_line(exc)}", file=sys.stderr)
        return 2
    except (InvalidParameterError, ValueError, TypeError) as exc:
        # ValueError covers UnicodeDecodeError and the library's input checks;
        # TypeError only the library's own input-type checks (see _user_type_error)
        if isinstance(exc, TypeError) and not _user_type_error(exc):
            raise
        print(f"{prefix} {_one_line(exc, has_encoding=hasattr(args, 'encoding'), args=args)}", file=sys.stderr)
        return 2
    except OSError as exc:  # missing file, permission, read-only file system, disk full
        print(f"{prefix} {_os_message(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{prefix} not enough memory for this input; use a smaller input or the "
              "command's size options", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"trustlab {args.command}: interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:
        code = terminated_exit_code(exc)
        if code is None:
            raise
        print(f"trustlab {args.command}: terminated by signal {code - 128}", file=sys.stderr)
        return code
    return int(rc or 0)


def console_main() -> None:
    """Entry point of the ``trustlab`` console script: :func:`main`, then a fast exit.

    Once the command has returned (every output file written, flushed and closed by
    its ``with`` blocks, atomic renames done), the interpreter's own teardown
    (finalising thousands of module objects: pandas, Numba, LLVM, ...) only costs
    time (~0.3-0.5 s), so the process ends with ``os._exit`` after flushing stdout
    and stderr. The normal exit is kept when a flush fails (e.g. a closed pipe, so
    Python reports it as usual), when threads other than the main one are still
    alive (unless a signal ended the command: then nothing is left to write, and a
    solver thread is not waited for), or when ``TRUSTLAB_NO_FAST_EXIT`` is set (e.g.
    under coverage, which writes its data at exit). Uncaught exceptions propagate from :func:`main`
    unchanged (traceback, exit status 1).

    Before anything imports NumPy it also sets ``OPENBLAS_THREAD_TIMEOUT=4`` unless the
    environment already sets it (see :func:`_quiet_blas_threads`).
    """
    from trustlab._lazy import defer_numpy_f2py

    _quiet_blas_threads()
    defer_numpy_f2py()
    with signal_cleanup():
        try:
            rc = main()
        except BaseException as exc:  # a signal outside main's own handling (e.g. while parsing)
            from trustlab._fileio import terminated_exit_code

            rc = terminated_exit_code(exc)
            if rc is None:
                raise
            print(f"trustlab: terminated by signal {rc - 128}", file=sys.stderr)
    _exit(rc)


@contextlib.contextmanager
def signal_cleanup() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP unwind like Ctrl-C (temporary files of
    atomic writes removed, exit status ``128 + signum`` from :func:`main`); on exit
    the handlers found on entry are put back.

    Only the console entry point (:func:`console_main`) uses it: a library call never
    changes a host's signal handlers. A no-op off the main thread.

    Examples
    --------
    >>> import signal
    >>> before = signal.getsignal(signal.SIGTERM)
    >>> with signal_cleanup():
    ...     signal.getsignal(signal.SIGTERM) is before
    False
    >>> signal.getsignal(signal.SIGTERM) is before
    True
    """
    import signal
    import threading

    from trustlab._fileio import forget_signals, install_signal_cleanup

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    saved = {n: signal.getsignal(getattr(signal, n)) for n in names}
    install_signal_cleanup()
    try:
        yield
    finally:
        for n, handler in saved.items():
            signal.signal(getattr(signal, n), handler if handler is not None else signal.SIG_DFL)
        forget_signals()


def _quiet_blas_threads() -> None:
    """Let OpenBLAS's idle threads sleep at once instead of spinning.

    After a multi-threaded GEMM, OpenBLAS keeps its worker threads busy-waiting for
    about 2**28 cycles (~0.1 s) before they sleep. A Numba parallel pass that follows
    (the private release's noise pass right after its projection GEMM) then shares the
    cores with those spinners and ran 1.7-2x slower on a 2-core machine
    (bench/results/perf.md). ``OPENBLAS_THREAD_TIMEOUT=4`` (2**4 cycles) makes them
    sleep at once; waking them for the next GEMM costs microseconds. OpenBLAS reads
    the variable when it is loaded, so this only works before NumPy is imported,
    which is why the console script sets it first thing; library users who want the
    same set it in their environment. A value already in the environment is kept.
    """
    import os

    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def _exit(rc: int) -> None:
    import os
    import threading

    # after a signal (rc 128 + signum) the command wrote nothing and removed its temporary
    # files: worker threads still inside a solver (a component being solved) are not waited
    # for, which the interpreter's own exit would do (up to a component's time limit)
    signalled = rc > 128
    if os.environ.get("TRUSTLAB_NO_FAST_EXIT") or (threading.active_count() > 1 and not signalled):
        sys.exit(rc)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(rc)  # let Python report the failed flush and set the status
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()  # flushes and closes log file handlers
    os._exit(rc)


def _one_line(exc: BaseException, *, has_encoding: bool = True, args: Any = None) -> str:
    msg = str(exc)
    if isinstance(exc, UnicodeDecodeError):
        fix = ("pass --encoding with the file's encoding (e.g. latin-1)" if has_encoding else
               "this command reads UTF-8 text only: convert the file first "
               "(e.g. iconv -f latin1 -t utf-8 IN > OUT), or check that it is the right file")
        where = _undecodable_input(exc, args)
        # exc.start counts from the start of the decoder's buffer, not of the file: rescan the input
        at = f"at byte {where[1]}, line {where[2]} of {where[0]!r}" if where else "somewhere in the input"
        msg = f"input is not valid {exc.encoding} text ({exc.reason} {at}); {fix}"
    return " ".join(msg.split()) or type(exc).__name__


def _undecodable_input(exc: UnicodeDecodeError, args: Any) -> tuple[str, int, int] | None:
    """(file, byte offset, line) of the first byte of an input file that ``exc.encoding``
    cannot decode, or None."""
    import os
    from pathlib import Path

    from trustlab.er.records import _compression, _first_undecodable

    paths = []
    for dest in ("input", "edgefile", "instance"):
        v = getattr(args, dest, None)
        paths += [v] if isinstance(v, (str, os.PathLike)) else list(v or []) if isinstance(v, (list, tuple)) else []
    for p in paths:
        try:
            path = Path(p)
            if not path.is_file():
                continue
            with open(path, "rb") as fh:
                head = fh.read(16)
            hit = _first_undecodable(path, exc.encoding, _compression(path, head))
        except (OSError, LookupError, EOFError, ValueError):
            continue
        if hit is not None:
            return str(p), hit[0], hit[1]
    return None


# argparse destinations that name files a command writes (privacy-eval's
# --output-dir is a directory it creates, so it is not listed)
OUTPUT_DESTS = ("output", "record", "report", "pairs", "save_model")
# (input, output) pairs that may name the same file: --model M --save-model M
# re-saves the model it loaded
_SAME_FILE_OK = {("model", "save_model")}


def _flag(dest: str) -> str:
    return dest.upper() if dest in ("input", "edgefile", "instance") else "--" + dest.replace("_", "-")


def _check_output_paths(args) -> None:
    """Refuse, before any work, outputs that would destroy an input or each other, and
    outputs into a directory that does not exist.

    Every file is written atomically at the end of a command, so without this an
    ``-o`` naming the input silently replaces it, two outputs naming one file keep
    only the last, and a missing directory is only reported after the whole run.
    """
    import os

    from trustlab.commands._common import CLIError

    outs = [(d, v) for d in OUTPUT_DESTS if isinstance(v := getattr(args, d, None), str) and v]
    seen: dict[str, str] = {}
    for dest, path in outs:
        key = os.path.realpath(path)
        if key in seen:
            raise CLIError(f"{_flag(seen[key])} and {_flag(dest)} both name {path!r}; the second would "
                           "overwrite the first. Give each output its own file.")
        seen[key] = dest
        if os.path.isdir(path):
            raise CLIError(f"cannot write {_flag(dest)} {path!r}: it is a directory; give a file name")
        parent = os.path.dirname(path) or "."
        if not os.path.isdir(parent):
            raise CLIError(f"cannot write {_flag(dest)} {path!r}: output directory {parent!r} does not exist; "
                           "create it first")
    if not outs:
        return
    for dest, value in vars(args).items():
        if dest in OUTPUT_DESTS or dest == "func":
            continue
        for item in value if isinstance(value, list) else [value]:
            if not (isinstance(item, str) and item and os.path.isfile(item)):
                continue
            for odest, opath in outs:
                if (dest, odest) in _SAME_FILE_OK or not os.path.exists(opath):
                    continue
                if os.path.samefile(item, opath):
                    raise CLIError(f"{_flag(odest)} {opath!r} is the input file given as {_flag(dest)}; writing "
                                   "it would destroy the input. Choose another output file.")


class _one_line_warnings:
    """Show warnings raised while a command runs as ``trustlab CMD: warning: MESSAGE``
    lines on stderr, not Python's ``file:line: Category: message`` plus a source line."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    def __enter__(self):
        import warnings

        self._old = warnings.showwarning
        # leave warnings alone where someone records them (pytest.warns, a caller's
        # catch_warnings(record=True)) or has replaced the display already
        if (self._old is not warnings._showwarning_orig
                or getattr(warnings._showwarnmsg_impl, "__module__", None) != "warnings"):
            return self

        def show(message, category, filename, lineno, file=None, line=None):  # noqa: ARG001
            try:
                print(f"{self.prefix} {' '.join(str(message).split())}", file=file or sys.stderr)
            except (OSError, ValueError):  # closed stream: a warning never ends the command
                pass

        warnings.showwarning = show
        return self

    def __exit__(self, *exc):
        import warnings

        warnings.showwarning = self._old
        return False


def _user_type_error(exc: TypeError) -> bool:
    """A TypeError raised on purpose by trustlab's input checks (not a bug)."""
    from trustlab._validation import InvalidParameterError

    if isinstance(exc, InvalidParameterError):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    mod = tb.tb_frame.f_globals.get("__name__", "")
    # raised directly by a trustlab module's own ``raise TypeError(...)`` line
    return mod.startswith("trustlab.") and "raise" in _source_line(tb)


def _source_line(tb) -> str:
    import linecache

    return linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()


def _os_message(exc: OSError) -> str:
    msg = exc.strerror or str(exc)
    if exc.filename and str(exc.filename) not in msg:
        return f"{msg}: {exc.filename!s}"
    return " ".join(str(exc).split()) if not exc.strerror else msg


if __name__ == "__main__":  # pragma: no cover
    console_main()
