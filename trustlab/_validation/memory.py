"""Refusing, before allocating, structures larger than the machine's memory."""
from __future__ import annotations

import os

from trustlab._validation.constraints import InvalidParameterError

__all__ = ["physical_memory", "check_memory", "memory_budget"]


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine (``None`` where it cannot be read).

    Examples
    --------
    >>> m = physical_memory()
    >>> m is None or m > 0
    True
    """
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def check_memory(nbytes: int, what: str, fix: str, *, func: str | None = None) -> None:
    """Refuse, before allocating, a structure larger than the machine's physical memory.

    Raises :class:`InvalidParameterError` (a ``ValueError``) naming ``what`` would need
    how much and how to ``fix`` it, instead of letting the allocation fail deep inside
    (or the operating system kill the process). ``func`` (the public function) prefixes
    the message. The machine's memory is read through ``trustlab._validation.physical_memory``,
    the one place tests replace it.

    Parameters
    ----------
    nbytes : int
        Bytes the structure would need.
    what : str
        What would be allocated (named in the message).
    fix : str
        How to avoid it (ends the message).
    func : str, optional
        The public function (prefixes the message).

    Examples
    --------
    >>> check_memory(1024, "a tiny array", "nothing to fix")
    >>> check_memory(2**80, "a huge array", "use a smaller one", func="demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: demo: a huge array would need ... GiB of memory; use a smaller one.
    """
    import trustlab._validation as _v

    total = _v.physical_memory()
    if total is not None and nbytes > total:
        where = f"{func}: " if func else ""
        raise InvalidParameterError(
            f"{where}{what} would need {nbytes / 2**30:,.1f} GiB, more than this machine's "
            f"{total / 2**30:,.1f} GiB of memory; {fix}."
        )


def memory_budget() -> int:
    """Bytes a run may still use: the smaller of the memory the OS reports available
    (``MemAvailable``) and what the address-space limit (``ulimit -v``) leaves, or
    ``2**62`` where neither is known.

    Examples
    --------
    >>> memory_budget() > 0
    True
    """
    import os

    budget = 2**62
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    budget = min(budget, int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            used = 0
            with open("/proc/self/statm") as fh:
                used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            budget = min(budget, max(0, soft - used))
    except (ImportError, OSError, ValueError):
        pass
    return budget
