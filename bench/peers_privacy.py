"""The pipeline a user would write instead of trustlab's private release: scikit-learn's
``GaussianRandomProjection`` (fit + transform) plus NumPy radial noise. Shared by
``bench_privacy.py`` (in-process) and ``bench_process.py`` (whole process); it imports
nothing from trustlab, so the whole-process peer pays only for its own imports."""
from __future__ import annotations

import numpy as np


def peer_privemb(X, m, epsilon, beta, seed=0):
    """Project ``X`` to ``m`` dimensions and add noise with a uniform direction and a
    Gamma(m, (1 + beta) / epsilon) radius, NumPy step by step."""
    from sklearn.random_projection import GaussianRandomProjection

    grp = GaussianRandomProjection(n_components=m, random_state=seed).fit(X)
    P = grp.transform(X)
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((X.shape[0], m))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    R = rng.gamma(m, (1 + beta) / epsilon, size=X.shape[0])
    return P + Z * R[:, None]
