"""Hypothesis profiles: "ci" (default; few, reproducible examples) and "dev" (more, random).

Choose one with the environment variable HYPOTHESIS_PROFILE, e.g. ``HYPOTHESIS_PROFILE=dev pytest``.
"""

import os

import pytest

from hypothesis import HealthCheck, settings

_quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci", max_examples=12, deadline=None, derandomize=True, database=None, suppress_health_check=_quiet, print_blob=True
)
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=_quiet)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Hypothesis's pytest plugin gives each parametrized invocation of a test settings whose parent is the
# settings the previous invocation left on the function, so the chain grows by one per case; beyond
# about 950 cases of one test (the backends' catalogue test) reading `settings.database` recursed too
# deep (RecursionError).  Each invocation starts again from the test's own settings.
def _test_function(item):
    obj = getattr(item, "obj", None)
    return getattr(obj, "__func__", obj)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    fn = _test_function(item)
    if hasattr(fn, "_hypothesis_internal_use_settings") and not hasattr(fn, "_tensorlib_own_settings"):
        fn._tensorlib_own_settings = fn._hypothesis_internal_use_settings


def pytest_runtest_teardown(item):
    fn = _test_function(item)
    own = getattr(fn, "_tensorlib_own_settings", None)
    if own is not None:
        fn._hypothesis_internal_use_settings = own
