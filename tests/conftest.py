"""Suite-wide test configuration."""
import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# Numba compiles on first call: never let a JIT pause fail a hypothesis example.
settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# shared slow references (tests/reference.py) importable from every test module
sys.path.insert(0, str(Path(__file__).parent))
