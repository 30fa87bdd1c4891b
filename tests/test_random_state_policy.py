"""The one ``random_state`` policy (README, Guarantees: *Randomness*;
:func:`trustlab._validation.check_random_state`): every public function that draws
random numbers takes ``random_state`` (no ``seed=``/``rng=``), declares it for the one
normaliser, and defaults to None (fresh OS entropy) except where listed below."""
from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

from tests.test_public_functions import PUBLIC, PUBLIC_MODULES  # the one walk of the public API
from trustlab._validation import _Special, check_random_state

#: public functions (by name, wherever they live) whose random_state defaults to 0, and why
DEFAULT_ZERO = {
    "resolve": "end-to-end ER: the same call gives the same entities",
    "load_embeddings_subset": "the paper's fixed pair sample",
}

#: parameters named like a seed that are not a source of randomness
NOT_RANDOM_STATE = {
    ("seed_average", "seed"): "the name of the seed column",
    ("projection_matrix", "seed"): "the public int naming Phi (the record's phi_seed)",
}

SEED_LIKE = {"seed", "seeds", "rng", "random_seed", "generator", "random_generator"}


def _callables():
    """The public functions (the walk of test_public_functions) and the public methods
    of the public classes."""
    out = dict(PUBLIC)
    for modname in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for n in getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]:
            obj = getattr(mod, n)
            if inspect.isclass(obj) and obj.__module__.startswith("trustlab"):
                for k, v in vars(obj).items():
                    if inspect.isfunction(v) and (k == "__init__" or not k.startswith("_")):
                        out[f"{v.__module__}.{v.__qualname__}"] = v
    return out


CALLABLES = _callables()
WITH_RANDOM_STATE = {k: f for k, f in CALLABLES.items() if "random_state" in inspect.signature(f).parameters
                     and k != "trustlab._validation.check_random_state"}  # the normaliser itself


def test_the_walk_finds_the_random_functions():
    found = {f.__name__ for f in WITH_RANDOM_STATE.values()}
    for name in ("partition", "resolve", "privatize", "weat_permutation_test", "generate_records"):
        assert name in found, sorted(WITH_RANDOM_STATE)


def test_no_seed_or_rng_keywords():
    bad = sorted(f"{k}({p}=)" for k, f in CALLABLES.items() for p in inspect.signature(f).parameters
                 if p in SEED_LIKE and (f.__name__, p) not in NOT_RANDOM_STATE)
    assert not bad, f"use random_state (normalised by check_random_state) instead of: {bad}"


@pytest.mark.parametrize("name", sorted(WITH_RANDOM_STATE))
def test_random_state_default_and_declaration(name):
    f = WITH_RANDOM_STATE[name]
    default = inspect.signature(f).parameters["random_state"].default
    assert default == (0 if f.__name__ in DEFAULT_ZERO else None), (name, default)
    declared = getattr(f, "__trustlab_params__", None)
    if declared is not None:  # the validated entry points route it through check_random_state
        assert any(isinstance(c, _Special) and c.name == "random_state" for c in declared.get("random_state", [])), name


def test_check_random_state_semantics():
    a, b = check_random_state(None), check_random_state(None)
    assert a.integers(2**62) != b.integers(2**62)  # fresh OS entropy each time
    assert check_random_state(7).integers(2**62) == check_random_state(7).integers(2**62)
    g = np.random.default_rng(3)
    assert check_random_state(g) is g
    state = np.random.get_state()[1].copy()
    check_random_state(None).random(10)
    assert np.array_equal(np.random.get_state()[1], state)  # NumPy's global state is untouched
    with pytest.raises(ValueError, match="non-negative"):
        check_random_state(-1)
