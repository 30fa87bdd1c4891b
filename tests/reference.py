"""Trusted slow references shared by the test suite (brute force over small inputs)."""
from __future__ import annotations


def set_partitions(items):
    """Every set partition of ``items`` (Bell(n) of them), as lists of blocks."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in set_partitions(rest):
        yield [[first]] + p
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1:]
