"""Closed-form utility bounds of PrivEmb (Feyisetan & Kasiviswanathan, Props 7–9, Claim 6).

All hold with probability ≥ 1 − δ (Claim 6: ≥ 1 − γ); τ = max_i ‖x_i‖ and
L = ln(2nm/δ). They are worst-case and very loose in practice — useful as sanity
checks that measured errors stay below them, not as predictions.
"""
from __future__ import annotations

import math
import numbers

from trustlab._validation import Interval, check_int, check_interval, validate_params

__all__ = ["noise_radius_bound", "distance_bound", "inner_product_bound", "erm_excess_bound"]


def _common(tau, m, n, epsilon, beta, delta, func):
    tau = check_interval(tau, "tau", low=0, closed="left", func=func)
    m = check_int(m, "m", low=1, func=func)
    n = check_int(n, "n", low=1, func=func)
    epsilon = check_interval(epsilon, "epsilon", low=0, func=func)
    beta = check_interval(beta, "beta", low=0, high=1, func=func)
    delta = check_interval(delta, "delta", low=0, high=1, func=func)
    return tau, m, n, epsilon, beta, delta, math.log(2.0 * n * m / delta)


#: the parameters the distance, neighbour and ERM bounds share
_DISTANCE_PARAMS = {
    "tau": [Interval(numbers.Real, 0, None, closed="left")],
    "m": [Interval(numbers.Integral, 1, None, closed="left")],
    "n": [Interval(numbers.Integral, 1, None, closed="left")],
    "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
    "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
    "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
}


@validate_params(
    {
        "m": [Interval(numbers.Integral, 1, None, closed="left")],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "gamma": [Interval(numbers.Real, 0, 1, closed="neither")],
    }
)
def noise_radius_bound(m: int, epsilon: float, beta: float, gamma: float = 1e-6) -> float:
    """Claim 6: ``‖κ‖ ≤ m ln(m/γ)(1+β)/ε`` with probability ≥ 1 − γ.

    Parameters
    ----------
    m : int
        Projection dimension.
    epsilon : float
        Privacy parameter ε > 0.
    beta : float
        JL distortion β ∈ (0, 1).
    gamma : float
        Failure probability γ ∈ (0, 1).

    Examples
    --------
    >>> round(noise_radius_bound(54, 1.0, 0.9, 1e-6), 1)
    1826.7
    """
    m = check_int(m, "m", low=1, func="noise_radius_bound")
    epsilon = check_interval(epsilon, "epsilon", low=0, func="noise_radius_bound")
    beta = check_interval(beta, "beta", low=0, high=1, func="noise_radius_bound")
    gamma = check_interval(gamma, "gamma", low=0, high=1, func="noise_radius_bound")
    return m * math.log(m / gamma) * (1.0 + beta) / epsilon


@validate_params(_DISTANCE_PARAMS)
def distance_bound(tau: float, m: int, n: int, epsilon: float, beta: float, delta: float = 1e-6) -> float:
    """Prop. 7: ``|‖w_i−w_j‖ − ‖x_i−x_j‖| ≤ 2βτ + 4 m ln(2nm/δ)/ε``.

    Parameters
    ----------
    tau : float
        τ = max_i ‖x_i‖, the largest input norm.
    m : int
        Projection dimension.
    n : int
        Number of released vectors.
    epsilon : float
        Privacy parameter ε > 0.
    beta : float
        JL distortion β ∈ (0, 1).
    delta : float
        Failure probability δ ∈ (0, 1).

    Examples
    --------
    >>> distance_bound(4.0, 54, 200, 1.0, 0.9) > 0
    True
    """
    tau, m, n, epsilon, beta, delta, L = _common(tau, m, n, epsilon, beta, delta, "distance_bound")
    return 2.0 * beta * tau + 4.0 * m * L / epsilon


@validate_params(_DISTANCE_PARAMS)
def inner_product_bound(tau: float, m: int, n: int, epsilon: float, beta: float, delta: float = 1e-6) -> float:
    """Prop. 8: ``|⟨w_i,w_j⟩ − ⟨x_i,x_j⟩| ≤ βτ² + 8τ m L/ε + (2 m L)²/ε²``, L = ln(2nm/δ).

    Parameters
    ----------
    tau : float
        τ = max_i ‖x_i‖, the largest input norm.
    m : int
        Projection dimension.
    n : int
        Number of released vectors.
    epsilon : float
        Privacy parameter ε > 0.
    beta : float
        JL distortion β ∈ (0, 1).
    delta : float
        Failure probability δ ∈ (0, 1).

    Examples
    --------
    >>> inner_product_bound(4.0, 54, 200, 1.0, 0.9) > distance_bound(4.0, 54, 200, 1.0, 0.9)
    True
    """
    tau, m, n, epsilon, beta, delta, L = _common(tau, m, n, epsilon, beta, delta, "inner_product_bound")
    return beta * tau**2 + 8.0 * tau * m * L / epsilon + (2.0 * m * L) ** 2 / epsilon**2


@validate_params(
    {
        **_DISTANCE_PARAMS,
        "lipschitz": [Interval(numbers.Real, 0, None, closed="neither")],
        "theta_norm": [Interval(numbers.Real, 0, None, closed="left")],
    }
)
def erm_excess_bound(
    tau: float,
    m: int,
    n: int,
    epsilon: float,
    beta: float,
    delta: float = 1e-6,
    *,
    lipschitz: float = 1.0,
    theta_norm: float = 1.0,
) -> float:
    """Prop. 9: excess empirical risk of ERM on private vectors with a λ-Lipschitz convex loss,
    ``4λ m L ‖Θ‖/ε + λ β τ ‖Θ‖`` (hinge and logistic losses have λ = 1).

    Parameters
    ----------
    tau : float
        τ = max_i ‖x_i‖, the largest input norm.
    m : int
        Projection dimension.
    n : int
        Number of released vectors.
    epsilon : float
        Privacy parameter ε > 0.
    beta : float
        JL distortion β ∈ (0, 1).
    delta : float
        Failure probability δ ∈ (0, 1).
    lipschitz : float
        λ, the Lipschitz constant of the loss (1 for hinge and logistic losses).
    theta_norm : float
        ‖Θ‖, the norm bound of the parameter set.

    Examples
    --------
    >>> erm_excess_bound(4.0, 54, 200, 10.0, 0.9, theta_norm=2.0) > 0
    True
    """
    tau, m, n, epsilon, beta, delta, L = _common(tau, m, n, epsilon, beta, delta, "erm_excess_bound")
    lipschitz = check_interval(lipschitz, "lipschitz", low=0, func="erm_excess_bound")
    theta_norm = check_interval(theta_norm, "theta_norm", low=0, closed="left", func="erm_excess_bound")
    return 4.0 * lipschitz * m * L * theta_norm / epsilon + lipschitz * beta * tau * theta_norm
