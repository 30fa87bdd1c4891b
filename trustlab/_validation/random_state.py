"""The one seed normaliser of trustlab: :func:`check_random_state`."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["check_random_state"]


def check_random_state(random_state: Any) -> np.random.Generator:
    """Normalise ``random_state`` to a :class:`numpy.random.Generator`: the one seed
    normaliser of trustlab.

    The policy (also in the README's Guarantees, *Randomness*): every public function
    that draws random numbers takes ``random_state`` (no ``seed=``/``rng=`` keywords),
    declares it as ``"random_state"`` in :func:`validate_params` and calls this once.
    Its default is ``None`` — always where privacy noise is drawn — except in the two
    end-to-end entry points whose answer should not change between runs,
    :func:`trustlab.resolve` and :func:`trustlab.privacy.evaluation.load_embeddings_subset`,
    which default to ``0``. ``tests/test_random_state_policy.py`` enforces this.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, numpy.random.RandomState or SeedSequence
        ``None`` draws fresh entropy from the operating system (never NumPy's global
        state); an int >= 0 gives a reproducible stream (for tests); a Generator is
        used as is (so successive calls continue its stream); a ``SeedSequence`` or
        ``BitGenerator`` seeds a new Generator; a legacy ``RandomState`` gives one
        seed drawn from it.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> g = check_random_state(0)
    >>> int(g.integers(10)) == int(check_random_state(0).integers(10))
    True
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        if int(random_state) < 0:
            raise ValueError(
                f"random_state must be a non-negative int, got {random_state!r}. "
                "Pass None for OS entropy or a seed >= 0 for reproducibility."
            )
        return np.random.default_rng(int(random_state))
    raise TypeError(
        f"random_state must be None, an int seed or a numpy Generator; got "
        f"{type(random_state).__name__} ({random_state!r})."
    )
