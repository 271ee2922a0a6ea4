"""Every test and doctest runs with the global registries isolated: the backends, op types, kernels and
gradient rules it registers are removed when it ends (see tensorlib.testing.isolation)."""

import pytest

from tensorlib.testing.isolation import isolated_registries


@pytest.fixture(autouse=True)
def _isolated_registries():
    with isolated_registries():
        yield
