"""Readers for clique-partitioning instances: CP-Lib matrices and weighted edge lists."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from trustlab._validation import validate_params

__all__ = ["read_cplib", "read_cplib_optimum", "read_edgelist", "read_instance"]

#: largest weight magnitude accepted: objectives, bounds and LP duals built from
#: such weights stay far from float64 overflow
MAX_ABS_WEIGHT = 1e15

#: the one spelling of a weight in an instance file: a plain decimal number with an
#: optional sign, decimal point and exponent (``3``, ``-0.5``, ``1e-3``, ``.5``).
#: Python's extras (``1_000``, ``0x1p3``, ``inf``, ``nan``) are refused alike
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: an integer node label: decimal digits only (``1_000`` stays the text label it is)
_INT_LABEL = re.compile(r"[+-]?[0-9]+")


def _bad_number(tok: str) -> bool:
    return _DECIMAL.fullmatch(tok) is None


@validate_params({"path": ["path"]})
def read_cplib(path: str | os.PathLike) -> np.ndarray:
    """Read a CP-Lib instance into a dense symmetric weight matrix.

    The format is the first number ``n`` followed by the weights row by row
    (whitespace separated, any line wrapping), in one of the three layouts that the
    published clique-partitioning benchmark files use, told apart by their count:

    * ``n(n-1)/2`` entries: the strict upper triangle ``w_12 … w_1n, w_23 …``
      (CP-Lib, Sørensen & Letchford 2024);
    * ``n(n+1)/2`` entries: the upper triangle with the diagonal, ``w_11 … w_1n,
      w_22 …`` (the ``rand*``, ``p*``, ``gauss*``/``unif*`` files of Charon & Hudry,
      Palubeckis and Zhou, Hao & Goëffon);
    * ``n*n`` entries: the full matrix, which must be symmetric.

    The diagonal, where given, must be zero (a self-pair is never in the objective,
    so a nonzero one is taken as a sign of a misread file). Every pair is an edge
    (the dense-matrix convention of :func:`trustlab.partition`); the objective is
    maximised.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    numpy.ndarray of shape (n, n), float64, zero diagonal.

    Raises
    ------
    ValueError
        Not numeric, ``n`` not a positive integer, an entry count that fits none of
        the layouts, a nonzero diagonal, or an asymmetric full matrix.
    FileNotFoundError
        No such file.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("3\\n1 -2\\n4\\n")
    >>> read_cplib(f.name).tolist()
    [[0.0, 1.0, -2.0], [1.0, 0.0, 4.0], [-2.0, 4.0, 0.0]]
    >>> with open(f.name, "w") as g:
    ...     _ = g.write("3\\n0 1 -2\\n0 4\\n0\\n")   # with the diagonal
    >>> read_cplib(f.name).tolist()
    [[0.0, 1.0, -2.0], [1.0, 0.0, 4.0], [-2.0, 4.0, 0.0]]
    >>> os.unlink(f.name)
    """
    path = Path(path)
    text = path.read_text()
    toks = text.split()
    if not toks:
        raise ValueError(f"CP-Lib instance {str(path)!r} is empty; expected n on the first line.")
    try:
        n = int(toks[0])
    except ValueError:
        raise ValueError(
            f"CP-Lib instance {str(path)!r}: the first entry must be the number of nodes n, got {toks[0]!r}."
        ) from None
    if n < 1:
        raise ValueError(f"CP-Lib instance {str(path)!r}: n must be >= 1, got {n}.")
    got = len(toks) - 1
    layouts = {n * (n - 1) // 2: "strict", n * (n + 1) // 2: "diagonal", n * n: "full"}
    if n == 1:
        layouts = {0: "strict", 1: "diagonal"}
    layout = layouts.get(got)
    if layout is None:
        raise ValueError(
            f"CP-Lib instance {str(path)!r}: n={n} needs n(n-1)/2 = {n * (n - 1) // 2} upper-triangle "
            f"entries (or {n * (n + 1) // 2} with the diagonal, or {n * n} for the full matrix), found {got}. "
            "Check that the file is complete and in CP-Lib format (use --format edgelist for 'i j w' lines)."
        )
    # only digits, signs, points and exponents (then float() checks the grammar): the
    # same rule as _DECIMAL, without a regular expression per entry
    odd = re.search(r"[^0-9eE+\-.\s]", text[len(text) - len(text.lstrip()) + len(toks[0]):])
    bad = None if odd is None else next(t for t in toks[1:] if _bad_number(t))
    if bad is None:
        try:
            vals = np.array(toks[1:], dtype=np.float64)
        except ValueError:
            bad = next(t for t in toks[1:] if _bad_number(t))
    if bad is not None:
        raise ValueError(f"CP-Lib instance {str(path)!r} has the entry {bad!r}, which is not a plain decimal number "
                         "(digits, optional sign, decimal point and exponent, e.g. -0.5 or 1e-3).")
    if not np.all(np.isfinite(vals)):
        raise ValueError(f"CP-Lib instance {str(path)!r} contains NaN or infinite weights.")
    big = float(np.abs(vals).max(initial=0.0))
    if big > MAX_ABS_WEIGHT:
        raise ValueError(
            f"CP-Lib instance {str(path)!r} has a weight of magnitude {big:.3g}; weights must be at most "
            f"{MAX_ABS_WEIGHT:.0e} in magnitude so that objectives and bounds stay exact in float64. "
            "Divide all weights by a common factor (the optimal partition does not change)."
        )
    W = np.zeros((n, n), np.float64)
    if layout == "full":
        W[:] = vals.reshape(n, n)
        if not np.array_equal(W, W.T):
            i, j = np.argwhere(W != W.T)[0]
            raise ValueError(
                f"CP-Lib instance {str(path)!r} holds a full {n}x{n} matrix that is not symmetric: "
                f"w[{i + 1},{j + 1}] = {W[i, j]:g} but w[{j + 1},{i + 1}] = {W[j, i]:g}."
            )
    else:
        iu = np.triu_indices(n, 0 if layout == "diagonal" else 1)
        W[iu] = vals
        W.T[iu] = vals
    diag = np.diag(W)
    if np.any(diag != 0):
        i = int(np.flatnonzero(diag)[0])
        raise ValueError(
            f"CP-Lib instance {str(path)!r}: read as {layout} layout ({got} entries for n={n}), the diagonal "
            f"entry w[{i + 1},{i + 1}] is {diag[i]:g}, not 0; check the file's layout."
        )
    return W


@validate_params({"path": ["path"]})
def read_cplib_optimum(path: str | os.PathLike) -> tuple[float, list[list[int]]]:
    """Read a CP-Lib ``*_opt.txt`` file: (optimal value, clusters as 0-based node lists).

    Parameters
    ----------
    path : str or path-like
        The CP-Lib optimum file (first line the optimal value, then one cluster per line,
        1-based node numbers).

    Examples
    --------
    >>> from trustlab.datasets import data_path
    >>> value, clusters = read_cplib_optimum(data_path("cplib", "wildcats_opt.txt"))
    >>> value, len(clusters), clusters[0]
    (1304.0, 4, [0, 1])
    """
    text = Path(path).read_text()
    m = re.search(r"Optimal value:\s*(-?[0-9.eE+-]+)", text)
    if not m:
        raise ValueError(f"{str(path)!r} has no 'Optimal value:' line.")
    clusters = [[int(t) - 1 for t in g.split()] for g in re.findall(r"\{([^}]*)\}", text)]
    return float(m.group(1)), clusters


@validate_params({"path": ["path"]})
def read_edgelist(path: str | os.PathLike) -> list[tuple]:
    """Read ``i j w`` lines (``#`` comments, blank lines skipped) into a list of edges.

    Node names that are all decimal integers become ints, otherwise they stay strings. A weight
    is a plain decimal number (``-0.5``, ``1e-3``); ``1_000``, ``0x1p3``, ``inf`` are refused.

    Parameters
    ----------
    path : str or path-like
        A text file of ``i j w`` lines (UTF-8).

    Raises
    ------
    ValueError
        A line without exactly three fields or with a non-numeric weight.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "w.txt")
    >>> _ = open(p, "w").write("# a triangle\\n1 2 1.5\\n2 3 -1\\n\\n1 3 0.5\\n")
    >>> read_edgelist(p)
    [(1, 2, 1.5), (2, 3, -1.0), (1, 3, 0.5)]
    """
    path = Path(path)
    rows = []
    for ln, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        if len(parts) != 3:
            raise ValueError(
                f"edge list {str(path)!r} line {ln}: expected 'i j weight', got {line!r}."
            )
        if _bad_number(parts[2]):
            raise ValueError(f"edge list {str(path)!r} line {ln}: weight {parts[2]!r} is not a plain decimal number "
                             "(digits, optional sign, decimal point and exponent, e.g. -0.5 or 1e-3).")
        w = float(parts[2])
        if not abs(w) <= MAX_ABS_WEIGHT:
            raise ValueError(
                f"edge list {str(path)!r} line {ln}: weight {parts[2]!r} is NaN, infinite or larger than "
                f"{MAX_ABS_WEIGHT:.0e} in magnitude; divide all weights by a common factor."
            )
        rows.append((parts[0], parts[1], w))
    if not rows:
        raise ValueError(f"edge list {str(path)!r} has no edges.")
    if all(_INT_LABEL.fullmatch(a) and _INT_LABEL.fullmatch(b) for a, b, _ in rows):
        return [(int(a), int(b), w) for a, b, w in rows]
    return rows


def read_instance(path: str | os.PathLike, format: str = "cplib"):
    """Read an instance in ``format`` ``"cplib"`` (dense matrix) or ``"edgelist"``."""
    if format == "cplib":
        return read_cplib(path)
    if format == "edgelist":
        return read_edgelist(path)
    raise ValueError(f"The 'format' parameter must be one of ['cplib', 'edgelist']. Got {format!r} instead.")
