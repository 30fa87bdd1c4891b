"""Suite-wide test configuration."""
import os

from hypothesis import HealthCheck, settings

# Numba compiles on first call: never let a JIT pause fail a hypothesis example.
# The default profile is derandomised and keeps no example database, so the suite is
# deterministic (CI and local runs draw the same examples, and a failure found once is
# not replayed forever); HYPOTHESIS_PROFILE=explore searches with fresh randomness.
_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("default", derandomize=True, database=None, **_common)
settings.register_profile("explore", max_examples=1000, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_collection_finish(session):
    """Start the slow subprocess checks of the selected tests on the idle core (tests/background.py)."""
    from tests import background

    if not background.enabled():
        return
    selected: dict = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "background_runs"):
            selected.setdefault(module, set()).add(getattr(item, "originalname", item.name))
    for module, names in selected.items():
        background.start(module.background_runs(names))


def pytest_sessionfinish(session, exitstatus):
    from tests import background

    background.stop()
