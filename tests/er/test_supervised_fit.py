"""The in-house logistic / ridge fits of SupervisedScorer against scikit-learn."""
from __future__ import annotations

import numpy as np
import pytest

from trustlab.er.scoring import SupervisedScorer, _design


def _pairs(seed, n=3000, p=6, miss=0.1, sep=2.0):
    """Synthetic comparison features: matches near 1, non-matches spread, some NaN."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.2).astype(int)
    X = np.where(y[:, None] == 1, rng.beta(sep * 4, 1.5, (n, p)), rng.beta(1.5, sep, (n, p)))
    X[rng.random((n, p)) < miss] = np.nan
    X[rng.random(n) < 0.02, 0] = 1.0  # a few label-noise-like outliers
    return X, y


def _objective(D, y, coef, icpt, C):
    z = D @ coef + icpt
    return C * np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * coef @ coef


@pytest.mark.parametrize("seed,C,sep", [(0, 10.0, 2.0), (1, 1.0, 1.0), (2, 100.0, 4.0), (3, 10.0, 8.0)])
def test_logistic_matches_sklearn(seed, C, sep):
    from sklearn.linear_model import LogisticRegression

    X, y = _pairs(seed, sep=sep)
    s = SupervisedScorer(C=C).fit(X, y)
    D = _design(X)
    ref = LogisticRegression(C=C, max_iter=10_000, tol=1e-10).fit(D, y)
    np.testing.assert_allclose(s.predict_proba(X), ref.predict_proba(D)[:, 1], atol=2e-5)
    ours = _objective(D, y, s._m.coef_.ravel(), s._m.intercept_[0], C)
    theirs = _objective(D, y, ref.coef_.ravel(), ref.intercept_[0], C)
    assert ours <= theirs + 1e-7 * abs(theirs)  # Newton's optimum is at least as good
    # the default (lbfgs, tol 1e-4) model that scored pairs before: same decisions
    old = LogisticRegression(C=C, max_iter=1000).fit(D, y)
    agree = np.mean((s.predict_proba(X) > 0.5) == (old.predict_proba(D)[:, 1] > 0.5))
    assert agree > 0.998


def test_logistic_separable_data_stays_finite():
    X = np.array([[1.0, 0.9], [0.9, 1.0], [0.1, 0.2], [0.2, 0.0]] * 5)
    y = np.array([1, 1, 0, 0] * 5)
    s = SupervisedScorer(C=1e6).fit(X, y)
    p = s.predict_proba(X)
    assert np.all(np.isfinite(s._m.coef_)) and np.all((p > 0.5) == (y == 1))


def test_ridge_matches_sklearn():
    from sklearn.linear_model import Ridge

    X, y = _pairs(5)
    s = SupervisedScorer(model="ridge", C=3.0).fit(X, y)
    D = _design(X)
    ref = Ridge(alpha=1 / 3.0).fit(D, y)
    np.testing.assert_allclose(s._m.coef_, ref.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(s.predict_proba(X), np.clip(ref.predict(D), 0, 1), atol=1e-9)


def test_from_dict_round_trip():
    X, y = _pairs(7, n=500)
    for model in ("logistic", "ridge"):
        s = SupervisedScorer(model=model).fit(X, y)
        d = {"model": model, "C": s.C, "coef": np.asarray(s._m.coef_).tolist(),
             "intercept": np.asarray(s._m.intercept_).ravel().tolist()}
        np.testing.assert_array_equal(SupervisedScorer.from_dict(d).predict_proba(X), s.predict_proba(X))


def test_resolve_does_not_import_sklearn():
    import subprocess
    import sys

    code = ("import sys\nfrom trustlab.er import generate_records, resolve\n"
            "df = generate_records(150, random_state=0)\n"
            "resolve(df, id_col='rec_id', labels='entity', truth='entity', time_limit=5)\n"
            "bad = [m for m in ('sklearn', 'scipy.stats') if m in sys.modules]\n"
            "print(bad); sys.exit(1 if bad else 0)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_warm_start_reaches_the_same_optimum():
    from trustlab.er.scoring import _WARM_ROWS, _fit_logistic

    X, y = _pairs(11, n=2 * _WARM_ROWS + 5000)
    D = _design(X)
    warm = _fit_logistic(D, y, 10.0)  # subsample start
    cold = _fit_logistic(D, y, 10.0, w0=np.zeros(D.shape[1] + 1))
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=1e-7)
    np.testing.assert_allclose(warm.intercept_, cold.intercept_, atol=1e-7)
