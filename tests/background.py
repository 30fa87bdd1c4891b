"""Slow subprocess checks started early, on the core the serial suite leaves idle.

The suite runs one test at a time, and CI has two cores. A few tests spend minutes in a
subprocess of their own (the CUDA kernels under Numba's simulator, where every block
barrier costs milliseconds): three clique-kernel runs take about 3.5 minutes together.
A test module that has such runs defines ``background_runs(selected)``, which returns
``{key: Run}`` for the runs its *selected* tests need; ``tests/conftest.py`` starts them
when collection ends, one after the other in a daemon thread, and each test waits for
its own run with :func:`result`. What a test checks does not change, only when its
subprocess starts; a test whose run was not started (deselected module, background off)
runs it itself, in the foreground.

``TRUSTLAB_TEST_BACKGROUND=0`` (or a one-core machine) turns this off.
"""
from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field


@dataclass
class Run:
    """One subprocess: argv, its standard input, environment and working directory."""

    argv: list
    stdin: str
    env: dict
    cwd: str
    timeout: float = 600.0


@dataclass
class _Job:
    run: Run
    done: threading.Event = field(default_factory=threading.Event)
    proc: subprocess.Popen | None = None
    out: subprocess.CompletedProcess | BaseException | None = None


_JOBS: dict = {}
_STOP = threading.Event()


def enabled() -> bool:
    """Background runs unless switched off or on a one-core machine."""
    return os.environ.get("TRUSTLAB_TEST_BACKGROUND", "1") != "0" and (os.cpu_count() or 1) > 1


def _execute(job: _Job) -> None:
    r = job.run
    try:
        job.proc = subprocess.Popen(r.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=r.env, cwd=r.cwd)
        try:
            out, err = job.proc.communicate(r.stdin, timeout=r.timeout)
        except subprocess.TimeoutExpired as exc:
            job.proc.kill()
            job.proc.communicate()
            raise exc
        job.out = subprocess.CompletedProcess(r.argv, job.proc.returncode, out, err)
    except BaseException as exc:  # handed to the test that asks for it
        job.out = exc
    finally:
        job.done.set()


def start(runs: dict) -> None:
    """Start ``runs`` (key -> :class:`Run`) one after the other in a daemon thread."""
    jobs = [(k, _JOBS.setdefault(k, _Job(r))) for k, r in runs.items() if k not in _JOBS]
    if not jobs:
        return

    def worker():
        for _, job in jobs:
            if _STOP.is_set():
                job.out = RuntimeError("the test session ended before this background run started")
                job.done.set()
                continue
            _execute(job)

    threading.Thread(target=worker, name="trustlab-test-background", daemon=True).start()


def result(key, run: Run) -> subprocess.CompletedProcess:
    """The finished subprocess for ``key``: the background one if started, else run now."""
    job = _JOBS.get(key)
    if job is None:
        job = _JOBS[key] = _Job(run)
        _execute(job)
    job.done.wait()
    if isinstance(job.out, BaseException):
        raise job.out
    return job.out


def stop() -> None:
    """End of session: start nothing more and kill what still runs."""
    _STOP.set()
    for job in _JOBS.values():
        if job.proc is not None and job.proc.poll() is None:
            job.proc.kill()
