"""The exact density of a private release and its privacy loss (PrivEmb paper, Definition 1).

Both mechanisms add noise κ with density p(z) = c · exp(−‖z‖/σ) on R^m, σ the release's
``noise_scale`` ((1+β)/ε for PrivEmb, 1/ε for M1), normalised by

    c = Γ(m/2) / (2 π^{m/2} Γ(m) σ^m)

(∫ exp(−r/σ) r^{m−1} dr = Γ(m) σ^m times the sphere's area 2π^{m/2}/Γ(m/2)). The release of
x has density p(w − Φx) (Φ = I for M1), so the **privacy loss** of an output w for inputs
x, x' is

    L(w) = ln p(w | x) − ln p(w | x') = (‖w − Φx'‖ − ‖w − Φx‖) / σ,

and the triangle inequality bounds |L(w)| ≤ ‖Φ(x − x')‖ / σ. Whenever the drawn Φ
stretches x − x' by at most 1 + β (which Gordon's theorem gives with probability ≥ 1 − δ;
M1 has no Φ), that is ≤ ε ‖x − x'‖: Definition 1 of the paper, the metric-DP guarantee.
:func:`privacy_loss` returns L, the bound and the stretch, so the guarantee can be checked
for any pair of inputs and any released vector.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._results import ResultMixin
from trustlab._validation import Interval, check_finite_array, check_interval, validate_params

__all__ = ["noise_log_density", "release_log_density", "privacy_loss", "PrivacyLoss"]


def _log_norm_const(m: int, scale: float) -> float:
    return math.lgamma(m / 2) - math.log(2.0) - (m / 2) * math.log(math.pi) - math.lgamma(m) - m * math.log(scale)


@validate_params({"Z": ["array-like"], "scale": [Interval(numbers.Real, 0, None, closed="neither")]})
def noise_log_density(Z, *, scale: float) -> np.ndarray:
    """ln p(z) of the release noise, p(z) ∝ exp(−‖z‖/σ) on R^m, normalised (PrivEmb, Section 3; Wu et al. 2017).

    Parameters
    ----------
    Z : array-like of shape (n, m) or (m,)
        Noise vectors (rows).
    scale : float
        σ, the release record's ``noise_scale`` ((1+β)/ε for PrivEmb, 1/ε for M1).

    Returns
    -------
    numpy.ndarray of shape (n,) (a float for one vector)

    Examples
    --------
    >>> # m = 1 is the Laplace law: density exp(-|z|/σ) / (2σ)
    >>> bool(np.isclose(np.exp(noise_log_density([[0.7]], scale=2.0))[0], np.exp(-0.35) / 4))
    True
    """
    scale = check_interval(scale, "scale", low=0, func="noise_log_density")
    Z = check_finite_array(Z, "Z", ndim=None)
    one = Z.ndim == 1
    Z = np.atleast_2d(Z)
    if Z.ndim != 2 or Z.shape[1] == 0:
        raise ValueError(f"Z must be a vector or a 2-D array of noise vectors (rows); got shape {Z.shape}.")
    out = _log_norm_const(Z.shape[1], scale) - np.linalg.norm(Z, axis=1) / scale
    return float(out[0]) if one else out


def _release_params(record) -> tuple[str, float, float, int, int, Any]:
    get = (lambda k: record[k]) if isinstance(record, dict) else (lambda k: getattr(record, k))
    try:
        mech, eps, scale, d, m = (get(k) for k in ("mechanism", "epsilon", "noise_scale", "d", "m"))
        seed = get("phi_seed")
    except (KeyError, AttributeError) as exc:
        raise TypeError(f"record must be a ReleaseRecord (or its to_dict()); it lacks {exc}.") from None
    try:
        proj = get("projection")
    except (KeyError, AttributeError):
        proj = "gaussian"  # records written before the projection option
    if mech == "privemb":
        seed = (seed, proj)
    if mech not in ("privemb", "m1"):
        raise ValueError(f"record.mechanism must be 'privemb' or 'm1'; got {mech!r}.")
    if mech == "privemb" and seed[0] is None:
        raise ValueError("a PrivEmb record needs its phi_seed to rebuild the projection.")
    return mech, float(eps), float(scale), int(d), int(m), seed


def _projection(mech, d, m, seed):
    if mech == "m1":
        return None
    from trustlab.privacy.calibration import PROJECTIONS, projection_matrix

    seed, proj = seed
    if proj not in PROJECTIONS:
        raise ValueError(f"record.projection must be one of {sorted(PROJECTIONS)}; got {proj!r}.")
    return projection_matrix(m, d, int(seed), **PROJECTIONS[proj])


@validate_params({"W": ["array-like"], "X": ["array-like"]})
def release_log_density(W, X, record) -> np.ndarray:
    """ln p(w | x) of released vectors under the release described by ``record``.

    Parameters
    ----------
    W : array-like of shape (n, m)
        Released vectors.
    X : array-like of shape (n, d) or (d,)
        Candidate inputs, row by row with ``W`` (one row is compared with every w).
    record : ReleaseRecord or dict
        The release's record (mechanism, ε, noise scale, d, m, phi_seed; never the key).

    Returns
    -------
    numpy.ndarray of shape (n,)

    Examples
    --------
    >>> from trustlab.privacy import privatize
    >>> X = np.eye(4)
    >>> W, rec = privatize(X, epsilon=2.0, m=3, random_state=0)
    >>> L = release_log_density(W, X, rec)
    >>> L.shape, bool(np.all(L > release_log_density(W, X[::-1], rec) - 2.0 * np.sqrt(2)))
    ((4,), True)
    """
    mech, _, scale, d, m, seed = _release_params(record)
    W = np.atleast_2d(check_finite_array(W, "W", ndim=None))
    X = np.atleast_2d(check_finite_array(X, "X", ndim=None))
    if W.shape[1] != m or X.shape[1] != d:
        raise ValueError(f"the record describes a {d} -> {m} release; got W with {W.shape[1]} columns and X "
                         f"with {X.shape[1]}.")
    if X.shape[0] not in (1, W.shape[0]):
        raise ValueError(f"X must have one row or as many rows as W ({W.shape[0]}); got {X.shape[0]}.")
    phi = _projection(mech, d, m, seed)
    P = X if phi is None else X @ phi.T
    return noise_log_density(W - P, scale=scale)


@dataclass(frozen=True)
class PrivacyLoss(ResultMixin):
    """Privacy loss of released vectors for two inputs (see :func:`privacy_loss`).

    Attributes
    ----------
    loss : numpy.ndarray
        ln p(w | x) − ln p(w | x') per released vector w.
    bound : float
        ε ‖x − x'‖, the metric-DP bound of Definition 1.
    stretch : float
        ‖Φ(x − x')‖ / ‖x − x'‖ for the drawn Φ (1 for M1).
    guaranteed : bool
        ``stretch <= 1 + β`` (always for M1): then ``|loss| <= bound`` for *every* w. When
        False, x and x' fall in the δ-probability event where Φ stretches more than the
        calibration allowed, and the loss may exceed the bound by the factor
        ``stretch / (1 + β)``.
    """

    loss: np.ndarray
    bound: float
    stretch: float
    guaranteed: bool


@validate_params({"W": ["array-like"], "x": ["array-like"], "x_prime": ["array-like"]})
def privacy_loss(W, x, x_prime, record) -> PrivacyLoss:
    """Privacy loss ln p(w|x) − ln p(w|x') of released vectors, with the metric-DP bound (Definition 1).

    Definition 1 of Feyisetan & Kasiviswanathan: a release is (ε, δ)-Lipschitz private when,
    with probability ≥ 1 − δ, |ln p_{A(x)}(w) − ln p_{A(x')}(w)| ≤ ε d(x, x') for all w.
    This computes the left side exactly from the release's density and reports the bound.

    Parameters
    ----------
    W : array-like of shape (n, m) or (m,)
        Released vectors (any outputs: the bound holds for every w).
    x, x_prime : array-like of shape (d,)
        Two inputs.
    record : ReleaseRecord or dict
        The release's record.

    Returns
    -------
    PrivacyLoss
        ``loss`` per w, ``bound`` = ε ‖x − x'‖, ``stretch`` and ``guaranteed``.

    Examples
    --------
    >>> from trustlab.privacy import privatize
    >>> x, x2 = np.zeros(6), np.full(6, 0.1)
    >>> W, rec = privatize(np.vstack([x] * 500), epsilon=1.0, beta=0.5, m=4, random_state=0)
    >>> pl = privacy_loss(W, x, x2, rec)
    >>> bool(np.abs(pl.loss).max() <= pl.bound) or not pl.guaranteed
    True
    """
    mech, eps, scale, d, m, seed = _release_params(record)
    x = check_finite_array(x, "x", ndim=None).ravel()
    x_prime = check_finite_array(x_prime, "x_prime", ndim=None).ravel()
    if x.shape != (d,) or x_prime.shape != (d,):
        raise ValueError(f"x and x_prime must be vectors of length d = {d}; got {x.shape} and {x_prime.shape}.")
    W = np.atleast_2d(check_finite_array(W, "W", ndim=None))
    if W.shape[1] != m:
        raise ValueError(f"the record describes a release to m = {m} dimensions; W has {W.shape[1]} columns.")
    phi = _projection(mech, d, m, seed)
    P, P2 = (x, x_prime) if phi is None else (phi @ x, phi @ x_prime)
    loss = (np.linalg.norm(W - P2, axis=1) - np.linalg.norm(W - P, axis=1)) / scale
    dist = float(np.linalg.norm(x - x_prime))
    stretch = 1.0 if phi is None or dist == 0 else float(np.linalg.norm(P - P2) / dist)
    sens = 1.0 if mech == "m1" else eps * scale  # 1 + β
    return PrivacyLoss(loss=loss, bound=eps * dist, stretch=stretch, guaranteed=bool(stretch <= sens * (1 + 1e-12)))
