"""Compile kernels once per process, and count the seconds it took.

A Numba kernel compiles (or loads from the on-disk cache) on its first call in a
process: seconds on a cold cache, milliseconds on a warm one. A time budget must not
pay for that, or a result would depend on the state of the compile cache. Every
solver that runs under a deadline therefore compiles what it needs through
:func:`warm_once` *before* it starts its clock, and code that cannot know in advance
whether a kernel will be needed (branch and price starts only when the cutting planes
do not prove a component) extends its deadline by the seconds :func:`warm_once`
returns. :func:`compile_seconds` is the process-wide total, so a clock shared by
several components (:func:`trustlab.partition`) can exclude compilations that happened
while it ran.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

__all__ = ["warm_once", "compile_seconds", "exclude_seconds", "is_warm", "kernel_ready"]

_lock = threading.Lock()
_keys: dict[str, threading.Event] = {}
_total = 0.0


def is_warm(key: str) -> bool:
    """True once the warm-up ``key`` has finished in this process."""
    ev = _keys.get(key)
    return ev is not None and ev.is_set()


def warm_once(key: str, fn: Callable[[], object]) -> float:
    """Run ``fn`` (a call of some kernels on a tiny input, compiling them) the first
    time ``key`` is asked for in this process; return the seconds this call spent in
    it (0.0 when ``key`` was already warm).

    A thread that asks for a key another thread is compiling waits for it (Numba
    compiles under one global lock anyway) and gets its waiting time back, so both
    can exclude it from their deadlines. An exception from ``fn`` propagates and
    leaves ``key`` cold (the next call tries again).

    Examples
    --------
    >>> calls = []
    >>> warm_once("doc-example", lambda: calls.append(1)) >= 0.0
    True
    >>> warm_once("doc-example", lambda: calls.append(1)), calls
    (0.0, [1])
    """
    global _total
    ev = _keys.get(key)
    if ev is not None and ev.is_set():
        return 0.0
    t = time.perf_counter()
    with _lock:
        ev = _keys.get(key)
        owner = ev is None
        if owner:
            ev = _keys[key] = threading.Event()
    if not owner:
        ev.wait()
        if key not in _keys:  # the owner failed: try ourselves
            return (time.perf_counter() - t) + warm_once(key, fn)
        return time.perf_counter() - t
    try:
        fn()
    except BaseException:
        with _lock:
            del _keys[key]
        ev.set()
        raise
    dt = time.perf_counter() - t
    with _lock:
        _total += dt
    ev.set()
    return dt


def compile_seconds() -> float:
    """Seconds spent in :func:`warm_once` warm-ups so far in this process (all threads),
    plus those declared with :func:`exclude_seconds`."""
    return _total


def exclude_seconds(seconds: float) -> None:
    """Declare ``seconds`` of cold-start work that is not a compilation but stands in
    for one (an exact Python twin run while its kernel is not compiled yet, which a warm
    process would have done in a fraction of the time): they are added to
    :func:`compile_seconds`, so the clocks that exclude compilations exclude them too.

    Examples
    --------
    >>> before = compile_seconds()
    >>> exclude_seconds(0.25)
    >>> round(compile_seconds() - before, 9)
    0.25
    """
    global _total
    with _lock:
        _total += float(seconds)


def kernel_ready(dispatcher: object) -> bool:
    """True when a call of the Numba kernel ``dispatcher`` will not compile: it has a
    compiled specialisation in this process, or Numba's on-disk cache holds an entry
    for its current source and bytecode (the cache index is read, nothing is loaded).

    Callers use it to pick between a kernel and an exact NumPy/Python path that gives
    the same result: on a cold cache a small input is done before the kernel would
    have compiled. Any problem reading Numba's cache state answers False (the caller
    then takes its exact non-compiled path where it has one, or compiles).

    Examples
    --------
    >>> from numba import njit
    >>> f = njit(lambda x: x + 1)
    >>> kernel_ready(f)
    False
    >>> f(1), kernel_ready(f)
    (2, True)
    """
    try:
        if dispatcher.overloads:  # type: ignore[attr-defined]
            return True
        cache = dispatcher._cache  # type: ignore[attr-defined]
        index = cache._cache_file._load_index()
        if not index:
            return False
        probe = cache._index_key(None, _NoCodegen())[2]  # hashes of the bytecode / closure
        return any(len(k) == 3 and k[2] == probe for k in index)
    except Exception:
        return False


class _NoCodegen:
    """Stands in for a codegen in ``_index_key`` (only its magic tuple is asked for),
    so probing the cache does not initialise Numba's CPU target."""

    @staticmethod
    def magic_tuple() -> tuple:
        return ()
