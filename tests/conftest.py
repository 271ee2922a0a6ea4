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


# Hypothesis' pytest plugin (6.155) wraps a parametrized test's settings in a new settings object on every
# invocation, parent = the previous one: the chain grows by one per parameter, and the catalogue tests'
# ~1000 parameters overflowed the recursion limit when a settings attribute was read through it
# (RecursionError in test_catalogue_backends).  Each invocation starts again from the decorated settings.
_DECORATED_SETTINGS = {}


def pytest_runtest_setup(item):
    fn = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
    current = getattr(fn, "_hypothesis_internal_use_settings", None)
    if current is not None:
        fn._hypothesis_internal_use_settings = _DECORATED_SETTINGS.setdefault(fn, current)
