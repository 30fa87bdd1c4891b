"""Choosing the projection dimension ``m`` and measuring what a drawn Φ does.

PrivEmb needs ``m = Ω((ω(X) + √ln(1/δ))² / β²)`` (Gordon's theorem); the paper leaves
the constant open. Its appendix pairs β = 0.93 / 0.66 / 0.468 with m = 50 / 100 / 200 at
d = 300, δ = 1e-6, which is matched by constant 1 with ω = √log₂ d:

    m = ⌈(√log₂ d + √ln(1/δ))² / β²⌉

This is the documented default (a convention fitted to the paper, not a theorem);
pass ``m`` explicitly to override, or pass ``width=gaussian_width(X).value`` to use a
Monte-Carlo estimate of the Gaussian width of the actual data instead of √log₂ d.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from trustlab._results import ResultMixin
from trustlab._scale import pow2_scale
from trustlab._validation import (
    Interval,
    Options,
    check_finite_array,
    check_int,
    check_interval,
    check_option,
    check_random_state,
    validate_params,
)

__all__ = [
    "calibrate_m",
    "gaussian_width",
    "GaussianWidth",
    "beta_for_m",
    "projection_matrix",
    "PROJECTIONS",
    "choose_beta",
    "BetaChoice",
    "empirical_sensitivity",
    "jl_distortion",
]


#: named projections of a release -> keyword arguments of :func:`projection_matrix`
#: (``very_sparse``: density 1/√d, Li, Hastie & Church 2006; ``achlioptas``: density 1/3)
PROJECTIONS: dict = {
    "gaussian": {"kind": "gaussian"},
    "achlioptas": {"kind": "sparse", "density": 1.0 / 3.0},
    "very_sparse": {"kind": "sparse"},
}


def _width_term(d: int, delta: float, width: float | None = None) -> float:
    w = math.sqrt(math.log2(d)) if width is None else width
    return (w + math.sqrt(math.log(1.0 / delta))) ** 2


@validate_params(
    {
        "d": [Interval(numbers.Integral, 2, None, closed="left")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "width": [Interval(numbers.Real, 0, None, closed="left"), None],
    }
)
def calibrate_m(d: int, delta: float = 1e-6, beta: float = 0.9, *, width: float | None = None) -> int:
    """Default projection dimension ``m = ⌈(ω + √ln(1/δ))² / β²⌉`` with ω = √log₂ d.

    Parameters
    ----------
    d : int
        Input dimension (>= 2).
    delta : float
        Failure probability, in (0, 1).
    beta : float
        Allowed JL distortion, in (0, 1).
    width : float, optional
        The Gaussian width ω of the data (e.g. ``gaussian_width(X).value``, a Monte-Carlo
        estimate) instead of the paper's stand-in √log₂ d.

    Returns
    -------
    int
        The projection dimension (may exceed ``d``; :func:`trustlab.privacy.privatize`
        rejects that unless asked).

    Notes
    -----
    **Rounding.** The value is rounded *up* (a ceiling, with a 1e-9 tolerance against
    floating-point noise), so that ``m`` is at least the bound. At d = 300, δ = 1e-6 the
    unrounded values for the paper's β = 0.93 / 0.66 / 0.468 are 50.1 / 99.6 / 198.0, so this
    returns **51 / 100 / 199**; the paper's appendix prints the round numbers
    **50 / 100 / 200**. No rounding rule gives 200 at β = 0.468: (√log₂ 300 + √ln 10⁶)² =
    43.37 and 43.37 / 0.468² = 198.01, so rounding to nearest gives 198, the ceiling 199; nor
    gives 50 at β = 0.93 (50.14: ceiling 51). The appendix evidently quotes round dimensions
    and β values rounded to match them. Pass ``m`` explicitly to reproduce the paper's
    dimensions exactly.

    Examples
    --------
    >>> calibrate_m(300, 1e-6, 0.66)
    100
    >>> calibrate_m(300, 1e-6, 0.9)
    54
    >>> [calibrate_m(300, 1e-6, b) for b in (0.93, 0.66, 0.468)]   # paper: 50, 100, 200
    [51, 100, 199]
    >>> calibrate_m(300, 1e-6, 0.9, width=2.0)    # a measured (smaller) width gives a smaller m
    41
    """
    d = check_int(d, "d", low=2, func="calibrate_m")
    delta = check_interval(delta, "delta", low=0, high=1, func="calibrate_m")
    beta = check_interval(beta, "beta", low=0, high=1, func="calibrate_m")
    if width is not None:
        width = float(width)
        if not math.isfinite(width) or width < 0:
            raise ValueError(f"width must be a finite number >= 0 (a Gaussian width); got {width!r}.")
    return int(math.ceil(_width_term(d, delta, width) / beta**2 - 1e-9))


class GaussianWidth(float):
    """A Monte-Carlo Gaussian width: a float (the estimate) with ``.value``, ``.stderr``
    (the standard error of the mean over draws) and ``.n_draws``."""

    value: float
    stderr: float
    n_draws: int

    def __new__(cls, value: float, stderr: float, n_draws: int):
        obj = super().__new__(cls, value)
        obj.value = float(value)
        obj.stderr = float(stderr)
        obj.n_draws = int(n_draws)
        return obj

    def __repr__(self) -> str:
        return f"GaussianWidth(value={self.value!r}, stderr={self.stderr!r}, n_draws={self.n_draws})"


def gaussian_width(
    X,
    *,
    n_draws: int = 1000,
    normalize: bool = True,
    random_state=None,
    max_points: int | None = None,
) -> GaussianWidth:
    """Monte-Carlo estimate of the Gaussian width ω(X) = E_g sup_{x∈X} ⟨x, g⟩ (PrivEmb paper, Def. 3).

    For a finite set of rows ``X`` this draws ``n_draws`` vectors g ~ N(0, I_d) and averages
    ``max_x ⟨x, g⟩``. It is **approximate** (its standard error is returned) and seedable with
    ``random_state``. With ``normalize=True`` (default) the rows are scaled to unit norm first,
    the setting of Gordon's theorem and of the paper's stand-in ω ≈ √log d; for p unit vectors
    ω ≤ √(2 ln p). Memory is bounded: draws are processed in batches.

    Parameters
    ----------
    X : array of shape (p, d)
        The data (e.g. the embedding matrix to be released).
    n_draws : int
        Monte-Carlo draws (the standard error shrinks as 1/√n_draws).
    normalize : bool
        Scale rows to unit L2 norm (zero rows are dropped).
    random_state : None, int or Generator
    max_points : int, optional
        Use an evenly spaced subset of at most this many rows (faster; the width of a subset
        is a lower bound on that of the full set).

    Returns
    -------
    GaussianWidth
        A float with ``.value``, ``.stderr`` and ``.n_draws``; pass it to
        :func:`calibrate_m` as ``width=``.

    Examples
    --------
    >>> w = gaussian_width(np.eye(2), n_draws=20000, random_state=0)   # E max(g1, g2) = 1/√π
    >>> bool(abs(w.value - 1 / np.sqrt(np.pi)) < 4 * w.stderr)
    True
    >>> X = np.random.default_rng(1).standard_normal((500, 300))
    >>> w = gaussian_width(X, random_state=0)
    >>> round(w.value, 2), bool(w.value < np.sqrt(2 * np.log(500)))
    (3.03, True)
    >>> calibrate_m(300, 1e-6, 0.9, width=w)
    57
    """
    X = check_finite_array(X, "X")
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array (points, dims); got shape {X.shape}.")
    n_draws = check_int(n_draws, "n_draws", low=2, func="gaussian_width")
    if max_points is not None:
        max_points = check_int(max_points, "max_points", low=1, func="gaussian_width")
        if X.shape[0] > max_points:
            X = X[np.linspace(0, X.shape[0] - 1, max_points).astype(np.int64)]
    if normalize:
        nrm = np.linalg.norm(X, axis=1)
        X = X[nrm > 0] / nrm[nrm > 0, None]
        if X.shape[0] == 0:
            raise ValueError("every row of X is zero; nothing to normalise.")
    rng = check_random_state(random_state)
    p, d = X.shape
    batch = max(1, min(n_draws, 4_000_000 // max(p, d, 1)))
    sups = np.empty(n_draws)
    done = 0
    while done < n_draws:
        b = min(batch, n_draws - done)
        G = rng.standard_normal((d, b))
        sups[done:done + b] = (X @ G).max(axis=0)
        done += b
    return GaussianWidth(float(sups.mean()), float(sups.std(ddof=1) / math.sqrt(n_draws)), n_draws)


@validate_params(
    {
        "d": [Interval(numbers.Integral, 2, None, closed="left")],
        "m": [Interval(numbers.Integral, 1, None, closed="left")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
    }
)
def beta_for_m(d: int, m: int, delta: float = 1e-6) -> float:
    """Inverse of :func:`calibrate_m`: the β that a projection dimension ``m`` buys.

    Parameters
    ----------
    d : int
        Input dimension (>= 2).
    m : int
        Projection dimension.
    delta : float
        Failure probability, in (0, 1).

    Examples
    --------
    >>> round(beta_for_m(300, 100), 2)
    0.66
    """
    d = check_int(d, "d", low=2, func="beta_for_m")
    m = check_int(m, "m", low=1, func="beta_for_m")
    delta = check_interval(delta, "delta", low=0, high=1, func="beta_for_m")
    return math.sqrt(_width_term(d, delta) / m)


@validate_params(
    {
        "m": [Interval(numbers.Integral, 1, None, closed="left")],
        "d": [Interval(numbers.Integral, 1, None, closed="left")],
        "seed": [Interval(numbers.Integral, 0, None, closed="left")],
        "kind": [Options({"gaussian", "sparse"})],
        "density": [Interval(numbers.Real, 0, 1, closed="right"), None],
    }
)
def projection_matrix(m: int, d: int, seed: int, *, kind: str = "gaussian", density: float | None = None) -> np.ndarray:
    """The public PrivEmb projection Φ ∈ R^{m×d}: Gaussian or sparse JL.

    ``kind="gaussian"`` (the paper's Section 3, eq. (1), the default): i.i.d. N(0, 1/m) entries.
    ``kind="sparse"``: the sparse JL matrix the paper allows (Achlioptas 2003; Li, Hastie &
    Church 2006): each entry is ``±√(s/m)`` with probability ``1/(2s)`` each and 0 otherwise,
    ``s = 1/density``; unit variance per column like the Gaussian one, so ``E‖Φx‖² = ‖x‖²``.
    ``density=1/3`` is Achlioptas's matrix, the default ``density=1/√d`` Li et al.'s "very
    sparse" one. A sparse Φ costs ``density`` of the dense product when applied as a sparse
    matrix; its distortion is close to the Gaussian one on dense data but larger on sparse
    inputs (Li et al.), and :func:`calibrate_m`'s m is fitted to the Gaussian case:
    check a drawn Φ with :func:`jl_distortion`.

    Drawn with NumPy's PCG64 from ``seed`` on the host, so every backend uses the same
    Φ and anybody holding the release record can rebuild it. The Gaussian matrix of a
    seed is unchanged by the ``kind`` option.

    Parameters
    ----------
    m, d : int
        Output and input dimension.
    seed : int
        The public projection seed.
    kind : {"gaussian", "sparse"}
    density : float, optional
        Share of non-zero entries of the sparse matrix, in (0, 1] (default 1/√d).

    Returns
    -------
    numpy.ndarray of shape (m, d), float64 (dense storage either way)

    Parameters
    ----------
    m, d : int
        Output and input dimension.
    seed : int
        The public seed (``ReleaseRecord.phi_seed``).

    Examples
    --------
    >>> P = projection_matrix(50, 300, seed=1)
    >>> P.shape, P.dtype
    ((50, 300), dtype('float64'))
    >>> S = projection_matrix(50, 300, seed=1, kind="sparse", density=1 / 3)   # Achlioptas
    >>> sorted(np.unique(np.round(S * np.sqrt(50 / 3), 12)).tolist())
    [-1.0, 0.0, 1.0]
    """
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    if kind == "gaussian":
        if density is not None:
            raise ValueError("density applies to kind='sparse' only; drop it or pass kind='sparse'.")
        phi = rng.standard_normal((m, d))
        phi /= math.sqrt(m)
        return np.ascontiguousarray(phi)
    check_option(kind, "kind", ("gaussian", "sparse"), func="projection_matrix")
    rho = 1.0 / math.sqrt(d) if density is None else check_interval(
        density, "density", low=0, high=1, closed="right", func="projection_matrix")
    u = rng.random((m, d))
    phi = np.zeros((m, d))
    phi[u < rho / 2] = -1.0
    phi[(u >= rho / 2) & (u < rho)] = 1.0
    phi *= math.sqrt(1.0 / (rho * m))
    return np.ascontiguousarray(phi)


@dataclass(frozen=True)
class BetaChoice(ResultMixin):
    """The β that minimises Proposition 7's distance bound (see :func:`choose_beta`).

    Attributes
    ----------
    beta, m : float, int
        The best β on the grid and its projection dimension.
    bound : float
        Prop 7's bound 2βτ + 4 m ln(2nm/δ)/ε at that β.
    betas, ms, projection_term, noise_term, bounds : numpy.ndarray
        The whole grid: β, m(β), 2βτ, 4 m ln(2nm/δ)/ε and their sum.
    excluded : list of float
        β values left out because m(β) > d (with ``allow_m_above_d=False``).
    """

    beta: float
    m: int
    bound: float
    betas: np.ndarray
    ms: np.ndarray
    projection_term: np.ndarray
    noise_term: np.ndarray
    bounds: np.ndarray
    excluded: list


@validate_params(
    {
        "d": [Interval(numbers.Integral, 2, None, closed="left")],
        "n": [Interval(numbers.Integral, 1, None, closed="left")],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "tau": [Interval(numbers.Real, 0, None, closed="left")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "betas": ["array-like", None],
        "allow_m_above_d": ["boolean"],
    }
)
def choose_beta(
    d: int,
    n: int,
    epsilon: float,
    tau: float,
    delta: float = 1e-6,
    *,
    betas=None,
    allow_m_above_d: bool = False,
) -> BetaChoice:
    """"Pick a larger β": the β ∈ (0, 1) minimising Proposition 7's distance bound.

    Prop 7 bounds the distance error by ``2βτ + 4 m ln(2nm/δ)/ε`` with m = m(β) from
    :func:`calibrate_m`: the projection term grows with β and the noise term, through
    m ∝ 1/β², falls. The paper observes that the noise term dominates, so a larger β is
    better in practice (it uses β = 0.9 for SentEval); this evaluates both terms on a grid
    and returns the minimiser. The bound is worst-case and loose (:mod:`trustlab.privacy.bounds`):
    use it to compare β values, not to predict errors.

    Parameters
    ----------
    d : int
        Input dimension.
    n : int
        Number of vectors released.
    epsilon : float
        Privacy parameter.
    tau : float
        max ‖x_i‖ of the data.
    delta : float
        PrivEmb δ.
    betas : array-like, optional
        Grid of β in (0, 1) (default 0.05, 0.06, …, 0.99).
    allow_m_above_d : bool
        Keep β values whose m exceeds d (a "projection" that does not reduce).

    Returns
    -------
    BetaChoice

    Examples
    --------
    >>> c = choose_beta(300, 2200, epsilon=10, tau=4.0)
    >>> round(c.beta, 2), c.m, bool(c.noise_term[-1] < c.noise_term[0])
    (0.99, 45, True)
    >>> c = choose_beta(300, 2200, epsilon=1e6, tau=4.0)   # almost no noise: projection term wins
    >>> bool(c.beta < 0.99), c.excluded[:2]
    (True, [0.05, 0.06])
    """
    from trustlab.privacy.bounds import distance_bound

    func = "choose_beta"
    d = check_int(d, "d", low=2, func=func)
    n = check_int(n, "n", low=1, func=func)
    epsilon = check_interval(epsilon, "epsilon", low=0, func=func)
    tau = check_interval(tau, "tau", low=0, closed="left", func=func)
    delta = check_interval(delta, "delta", low=0, high=1, func=func)
    grid = np.round(np.arange(5, 100) / 100, 2) if betas is None else np.asarray(betas, dtype=np.float64).ravel()
    grid = [check_interval(float(b), "betas", low=0, high=1, func=func) for b in grid]
    if not grid:
        raise ValueError("betas is empty; give at least one beta in (0, 1).")
    keep, excluded = [], []
    for b in sorted(set(grid)):
        m = calibrate_m(d, delta, b)
        (keep if allow_m_above_d or m <= d else excluded).append((b, m))
    excluded = [b for b, _ in excluded]
    if not keep:
        raise ValueError(f"every beta gives m > d = {d} (smallest m {calibrate_m(d, delta, max(grid))}); "
                         "pass allow_m_above_d=True or larger betas.")
    bs = np.array([b for b, _ in keep])
    ms = np.array([m for _, m in keep], dtype=np.int64)
    proj = 2 * bs * tau
    total = np.array([distance_bound(tau, int(m), n, epsilon, float(b), delta) for b, m in keep])
    noise = total - proj
    i = int(np.argmin(total))
    return BetaChoice(beta=float(bs[i]), m=int(ms[i]), bound=float(total[i]), betas=bs, ms=ms,
                      projection_term=proj, noise_term=noise, bounds=total, excluded=excluded)


@validate_params(
    {
        "phi": ["array-like"],
        "X": ["array-like"],
        "max_points": [Interval(numbers.Integral, 2, None, closed="left")],
        "min_dist": [Interval(numbers.Real, 0, None, closed="neither")],
    }
)
def empirical_sensitivity(phi: np.ndarray, X, *, max_points: int = 1000, min_dist: float = 1e-8) -> float:
    """``max ‖Φx − Φx'‖ / ‖x − x'‖`` over all pairs of (up to ``max_points``) rows of X.

    This is the sensitivity of ``x ↦ Φx`` *on the sample* (PrivEmb paper, Def. 2); batched through Gram
    matrices. The worst case over all of R^d is the spectral norm of Φ (≈ 1 + √(d/m)),
    which :func:`trustlab.privacy.privatize` reports separately. Pairs closer than
    ``min_dist`` times the sample's largest |coordinate| (a relative threshold: the
    ratio does not depend on the scale of X) are skipped.

    Parameters
    ----------
    phi : numpy.ndarray of shape (m, d)
        The projection Φ.
    X : array-like of shape (n, d)
        The sample of input vectors.
    max_points : int
        At most this many rows of X are used (evenly spaced over X).
    min_dist : float
        Pairs closer than this, relative to the sample's largest |coordinate|, are skipped.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 30))
    >>> s = empirical_sensitivity(projection_matrix(20, 30, 0), X)
    >>> 0.5 < s < 3
    True
    """
    X = check_finite_array(X, "X")
    phi = np.asarray(phi, dtype=np.float64)
    if X.shape[0] > max_points:
        X = X[np.linspace(0, X.shape[0] - 1, max_points).astype(np.int64)]
    X = X * pow2_scale(X)  # the ratio is scale-free; keeps the Gram matrices finite
    P = X @ phi.T
    G = X @ X.T
    H = P @ P.T
    # den = ||x_i - x_j||^2 = (g_ii + g_jj) - 2 g_ij, num the same for Φx; formed in place
    den = np.add.outer(np.diag(G), np.diag(G))
    den -= np.multiply(G, 2.0, out=G)
    num = np.add.outer(np.diag(H), np.diag(H))
    num -= np.multiply(H, 2.0, out=H)
    # pairs i < j with distinct points, on the full matrices (no gather of the triangle)
    ok = np.triu(den > min_dist**2, 1)
    if not ok.any():
        return float("nan")
    np.maximum(num, 0.0, out=num)
    ratio = np.full_like(den, -np.inf)
    np.divide(num, den, out=ratio, where=ok)
    return float(np.sqrt(ratio.max()))


@validate_params({"phi": ["array-like"], "X": ["array-like"], "Y": ["array-like", None]})
def jl_distortion(phi: np.ndarray, X, Y=None) -> dict:
    """Worst relative JL distortions of Φ on the rows of X (and pairs X × Y).

    Returns ``norm``: max |‖Φx‖ − ‖x‖| / ‖x‖ over rows of X, and with ``Y``,
    ``inner``: max |⟨Φx,Φy⟩ − ⟨x,y⟩| / (‖x‖‖y‖) and ``distance``: max
    |‖Φx−Φy‖ − ‖x−y‖| / ‖x−y‖ over all pairs. Gordon's theorem (PrivEmb paper, Thm 1 and Cor. 2) says each is
    ≤ β w.p. ≥ 1−δ at the calibrated m.

    Parameters
    ----------
    phi : numpy.ndarray of shape (m, d)
        The projection Φ.
    X : array-like of shape (n, d)
        Vectors whose norms (and, with ``Y``, inner products and distances) are checked.
    Y : array-like of shape (k, d), optional
        Second set of vectors for the pairwise distortions.

    Examples
    --------
    >>> X = np.random.default_rng(7).standard_normal((20, 300))
    >>> jl_distortion(projection_matrix(174, 300, seed=1), X)["norm"] < 0.5
    True
    """
    X = check_finite_array(X, "X")
    phi = np.asarray(phi, dtype=np.float64)
    f = pow2_scale(X) if Y is None else pow2_scale(X, check_finite_array(Y, "Y"))
    X = X * f  # every distortion is scale-free; keeps the squared norms finite
    PX = X @ phi.T
    nx = np.linalg.norm(X, axis=1)
    out = {"norm": float(np.max(np.abs(np.linalg.norm(PX, axis=1) - nx) / nx))}
    if Y is not None:
        Y = check_finite_array(Y, "Y") * f
        PY = Y @ phi.T
        ny = np.linalg.norm(Y, axis=1)
        out["inner"] = float(np.max(np.abs(PX @ PY.T - X @ Y.T) / np.outer(nx, ny)))
        D = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2)
        DP = np.linalg.norm(PX[:, None, :] - PY[None, :, :], axis=2)
        ok = D > 0
        out["distance"] = float(np.max(np.abs(DP[ok] - D[ok]) / D[ok]))
    return out
