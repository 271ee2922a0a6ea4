"""Hypothesis profiles: "ci" (default; few, reproducible examples) and "dev" (more, random).

Choose one with the environment variable HYPOTHESIS_PROFILE, e.g. ``HYPOTHESIS_PROFILE=dev pytest``.
"""

import os

from hypothesis import HealthCheck, settings

_quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci", max_examples=12, deadline=None, derandomize=True, database=None, suppress_health_check=_quiet, print_blob=True
)
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=_quiet)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
