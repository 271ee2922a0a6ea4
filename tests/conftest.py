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


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    """Undo the settings Hypothesis's pytest plugin wraps around a parametrized test at every call.

    It sets ``fn._hypothesis_internal_use_settings = Settings(parent=<the previous ones>, ...)`` for
    each parameter set, so the chain of parents grows by one per call, and past ~950 parameter sets of
    one test (the catalogue's backend tests now have more) reading a setting overflows the stack
    (RecursionError in ``settings.database``).  Restoring the function's own settings after each call
    keeps the chain one link long.
    """
    fn = getattr(item, "obj", None)
    fn = getattr(fn, "__func__", fn)
    own = getattr(fn, "_hypothesis_internal_use_settings", None)
    yield
    if own is not None:
        fn._hypothesis_internal_use_settings = own


@pytest.fixture
def sync_scheduler():
    """dask's single-threaded scheduler for one test (the tl.distributed tests; skipped without dask)."""
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="sync"):
        yield
