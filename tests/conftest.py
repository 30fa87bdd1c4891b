"""Suite-wide test configuration."""
import os

from hypothesis import HealthCheck, settings

# Numba compiles on first call: never let a JIT pause fail a hypothesis example.
settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
