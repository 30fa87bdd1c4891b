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
