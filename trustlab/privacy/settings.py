""":class:`ReleaseSettings`: the specification of a private release, declared once.

:func:`~trustlab.privacy.make_mechanism`, :func:`~trustlab.privacy.privatize`,
:func:`~trustlab.privacy.privatize_file` and :func:`~trustlab.privacy.privatize_dask`
all take ``settings=ReleaseSettings(...)`` and the same fields as keyword shortcuts;
their names, defaults and constraints live here only.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import ClassVar, Mapping

from trustlab._settings import SettingsBase
from trustlab._validation import Interval, Options, check_option
from trustlab.privacy.calibration import PROJECTIONS

__all__ = ["ReleaseSettings", "RELEASE_SETTINGS_FORMAT"]

RELEASE_SETTINGS_FORMAT = "trustlab.privacy.release_settings"


@dataclass(frozen=True, kw_only=True)
class ReleaseSettings(SettingsBase):
    """What a private release of embedding vectors is: mechanism, privacy and projection.

    One frozen object for the release parameters that every release entry point takes
    (:func:`~trustlab.privacy.privatize`, :func:`~trustlab.privacy.privatize_file`,
    :func:`~trustlab.privacy.privatize_dask`, :func:`~trustlab.privacy.make_mechanism`):
    pass ``settings=ReleaseSettings(...)``, the fields as keywords, or both (a keyword
    given beside ``settings`` wins: ``privatize(X, settings=s, epsilon=2)`` is
    ``privatize(X, settings=s.replace(epsilon=2))``). Every value is checked when the
    object is made. What belongs to one release rather than to its specification stays
    a keyword of the entry point: the vectors, ``random_state`` (a settings object is
    meant to be shared and published; a seed must never be), ``backend``, ``chunk_size``,
    ``dtype`` and ``vocab``. The rules that need the data (``m <= d`` unless
    ``allow_m_above_d``; M1 keeps ``m = d``; PrivEmb needs ``d >= 2``) are checked when
    the release is made.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε > 0 (required).
    mechanism : {"privemb", "m1"}, default "privemb"
        PrivEmb (M2, a random projection plus noise) or the M1 baseline (noise in the
        input space).
    delta : float, default 1e-6
        δ ∈ (0, 1) (PrivEmb's JL failure probability; M1 is (ε, 0)-private).
    beta : float, default 0.9
        JL distortion β ∈ (0, 1) (PrivEmb only). Larger β → smaller m → less noise.
    m : int, optional
        Projection dimension; default :func:`trustlab.privacy.calibrate_m` (d, δ, β).
    projection : {"gaussian", "achlioptas", "very_sparse"}, default "gaussian"
        PrivEmb's Φ (see :func:`~trustlab.privacy.privatize`).
    phi_seed : int, optional
        Reuse the public Φ of an earlier release (its record's ``phi_seed``).
    allow_m_above_d : bool, default False
        Permit m > d.

    Notes
    -----
    ``s.replace(**changes)`` gives a checked copy; ``s.to_dict()`` the JSON form (with
    ``format`` and ``version``) and ``ReleaseSettings.from_dict(d)`` reads it back (fields not named
    keep their defaults; unknown names are refused, with the closest field named);
    ``ReleaseSettings.defaults()``, ``.field_names()`` and ``.CONSTRAINTS`` are the declared names,
    defaults and constraints.

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.privacy import ReleaseSettings, privatize
    >>> spec = ReleaseSettings(epsilon=10, beta=0.9)
    >>> X = np.random.default_rng(0).standard_normal((100, 300))
    >>> W, rec = privatize(X, settings=spec, random_state=0)
    >>> W.shape, rec.epsilon
    ((100, 54), 10.0)
    >>> W2, _ = privatize(X, epsilon=10, beta=0.9, random_state=0)  # the same release by keywords
    >>> bool(np.array_equal(W, W2))
    True
    >>> ReleaseSettings.from_dict(spec.to_dict()) == spec
    True
    >>> spec.replace(epsilon=-1)
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'epsilon' parameter of ReleaseSettings must be a float \
in the range (0, inf). Got -1 instead.
    """

    FORMAT: ClassVar[str] = RELEASE_SETTINGS_FORMAT
    VERSION: ClassVar[int] = 1
    CONSTRAINTS: ClassVar[Mapping[str, list]] = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "mechanism": [str],  # a name of MECHANISMS (checked in _check: the registry may grow)
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "beta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "m": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "projection": [Options(set(PROJECTIONS))],
        "phi_seed": [Interval(numbers.Integral, 0, 2**63 - 1, closed="both"), None],
        "allow_m_above_d": ["boolean"],
    }

    epsilon: float
    mechanism: str = "privemb"
    delta: float = 1e-6
    beta: float = 0.9
    m: int | None = None
    projection: str = "gaussian"
    phi_seed: int | None = None
    allow_m_above_d: bool = False

    def _normalise(self) -> dict:
        # plain Python numbers (a NumPy scalar in, a float or int out), as the release record holds them
        return {"epsilon": float(self.epsilon), "delta": float(self.delta), "beta": float(self.beta),
                "m": None if self.m is None else int(self.m),
                "phi_seed": None if self.phi_seed is None else int(self.phi_seed),
                "allow_m_above_d": bool(self.allow_m_above_d)}

    def _check(self, func: str) -> None:
        from trustlab.privacy.mechanisms import MECHANISMS

        check_option(self.mechanism, "mechanism", list(MECHANISMS), func=func)

