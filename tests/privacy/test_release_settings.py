"""ReleaseSettings: the private-release parameters declared once and taken by every
release entry point (settings= and keyword shortcuts, the keyword winning), with the
same release for the same seed either way."""
from __future__ import annotations

import dataclasses
import inspect
import json
import warnings

import numpy as np
import pytest

import trustlab
from trustlab._settings import UNSET
from trustlab._validation import InvalidParameterError
from trustlab.privacy import ReleaseSettings, make_mechanism, privatize, privatize_dask
from trustlab.privacy.io import privatize_file

ENTRY_POINTS = [make_mechanism, privatize, privatize_file, privatize_dask]

SPECS = [
    dict(epsilon=5.0),
    dict(epsilon=2, beta=0.8, delta=1e-3),
    dict(epsilon=3, m=20),
    dict(epsilon=3, mechanism="m1"),
    dict(epsilon=4, projection="achlioptas"),
    dict(epsilon=4, phi_seed=123, m=10),
    dict(epsilon=1, m=100, allow_m_above_d=True),
]


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).standard_normal((120, 64))


@pytest.mark.parametrize("func", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_every_entry_point_takes_settings_and_the_fields_as_shortcuts(func):
    params = inspect.signature(func).parameters
    assert "settings" in params and params["settings"].default is None
    for name in ReleaseSettings.field_names():
        assert params[name].default is UNSET, f"{func.__name__}({name}=...) keeps a second copy of its default"
        # the one declaration: the entry point declares the class's constraints
        assert [str(c) for c in func.__trustlab_params__[name]] == \
            [str(c) for c in ReleaseSettings.__trustlab_params__[name]]
    assert "random_state" in params and "random_state" not in ReleaseSettings.field_names()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_settings_and_keywords_release_the_same_vectors(X, spec):
    for seed in (0, 11):
        W_kw, rec_kw = privatize(X, random_state=seed, **spec)
        W_s, rec_s = privatize(X, settings=ReleaseSettings(**spec), random_state=seed)
        np.testing.assert_array_equal(W_kw, W_s)
        a, b = rec_kw.to_dict(), rec_s.to_dict()
        a.pop("created"), b.pop("created")
        assert a == b


def test_file_and_dask_paths_read_the_settings_too(X, tmp_path):
    import dask.array as da

    s = ReleaseSettings(epsilon=3, m=16)
    np.save(tmp_path / "x.npy", X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the integer-seed warning
        privatize_file(tmp_path / "x.npy", tmp_path / "w.npy", settings=s, random_state=5, dtype=np.float64)
    ref = privatize(X, settings=s, random_state=5).vectors
    # the same noise; the projection's GEMM over other row blocks may round in the last bit
    np.testing.assert_allclose(np.load(tmp_path / "w.npy"), ref, rtol=1e-12, atol=1e-12)
    W, rec = privatize_dask(da.from_array(X, chunks=(50, 64)), settings=s, random_state=5)
    np.testing.assert_allclose(W.compute(), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(W.compute(), privatize_dask(da.from_array(X, chunks=(50, 64)), epsilon=3, m=16,
                                                              random_state=5)[0].compute())
    assert rec.m == 16
    mech = make_mechanism(64, settings=s, random_state=5)
    assert (mech.m, mech.epsilon) == (16, 3.0)


def test_a_keyword_given_beside_settings_wins(X):
    s = ReleaseSettings(epsilon=5, beta=0.5, m=12)
    W, rec = privatize(X, settings=s, epsilon=7, random_state=1)
    ref, rec_ref = privatize(X, settings=s.replace(epsilon=7), random_state=1)
    np.testing.assert_array_equal(W, ref)
    assert (rec.epsilon, rec.beta, rec.m) == (7.0, 0.5, 12)
    # a keyword equal to the class default still overrides the settings
    assert privatize(X, settings=s, beta=0.9, random_state=1).record.beta == 0.9


def test_round_trip_and_settings_as_a_dict(X):
    s = ReleaseSettings(epsilon=2, mechanism="m1", delta=1e-3)
    d = json.loads(json.dumps(s.to_dict()))
    assert d["format"] == "trustlab.privacy.release_settings" and d["version"] == 1
    assert ReleaseSettings.from_dict(d) == s
    a = privatize(X, settings=d, random_state=2).vectors
    np.testing.assert_array_equal(a, privatize(X, settings=s, random_state=2).vectors)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.epsilon = 3


@pytest.mark.parametrize("field, bad, fix", [
    ("epsilon", 0, "a float in the range (0, inf)"),
    ("delta", 1, "a float in the range (0, 1)"),
    ("beta", -0.5, "a float in the range (0, 1)"),
    ("m", 0, "an int in the range [1, inf) or None"),
    ("projection", "dense", "one of ['achlioptas', 'gaussian', 'very_sparse']"),
    ("mechanism", "laplace", "one of ['privemb', 'm1']"),
    ("phi_seed", -1, "an int in the range [0, 9223372036854775807] or None"),
])
def test_messages_name_the_field_the_value_and_the_fix(X, field, bad, fix):
    kw = {"epsilon": 1.0, field: bad}
    with pytest.raises(InvalidParameterError) as info:
        ReleaseSettings(**kw)
    msg = str(info.value)
    assert f"'{field}' parameter of ReleaseSettings" in msg and fix in msg and repr(bad) in msg
    # as a keyword of an entry point: the same template, naming the entry point; over settings too
    for func, args in ((privatize, (X,)), (privatize_dask, (None,))):
        with pytest.raises(InvalidParameterError, match=f"'{field}' parameter of {func.__name__}"):
            func(*args, settings=ReleaseSettings(epsilon=1.0), **{field: bad})


def test_epsilon_is_required_here_or_in_settings(X):
    with pytest.raises(TypeError, match=r"privatize\(\) needs epsilon: pass epsilon=\.\.\. or "
                                        r"settings=ReleaseSettings\(epsilon=\.\.\.\)"):
        privatize(X)
    with pytest.raises(TypeError, match="needs epsilon"):
        ReleaseSettings.from_dict({"beta": 0.5})
    with pytest.raises(InvalidParameterError, match=r"unknown setting\(s\) 'random_state'"):
        ReleaseSettings.from_dict({"epsilon": 1, "random_state": 0})  # a seed is never part of a specification
    with pytest.raises(InvalidParameterError, match="'settings' parameter of privatize"):
        privatize(X, settings=1.0)


def test_rules_that_need_the_data_still_apply(X):
    with pytest.raises(ValueError, match="exceeds the input dimension"):
        privatize(X, settings=ReleaseSettings(epsilon=1, m=100))
    with pytest.raises(ValueError, match="mechanism='m1' adds noise in the input space"):
        privatize(X, settings=ReleaseSettings(epsilon=1, m=10, mechanism="m1"))


def test_top_level_export():
    assert trustlab.ReleaseSettings is ReleaseSettings
    assert "ReleaseSettings" in trustlab.__all__ and "ReleaseSettings" in trustlab.privacy.__all__


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_a_record_gives_back_the_settings_of_its_release(X, spec):
    W, rec = privatize(X, random_state=4, **spec)
    s = rec.release_settings()
    assert s.epsilon == spec["epsilon"] and s.mechanism == spec.get("mechanism", "privemb")
    # the same settings and seed release the same vectors (the same Φ, from the record's phi_seed)
    W2, rec2 = privatize(X, settings=s, random_state=4)
    np.testing.assert_array_equal(W, W2)
    assert (rec2.m, rec2.phi_seed, rec2.projection) == (rec.m, rec.phi_seed, rec.projection)
