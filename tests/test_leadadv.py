"""Adversarial checks of this session's new tl.stats methods and special-function inverses: gradients where a
formula has a ``where`` (the branch not taken, the support's ends, the centre x = loc and q = 1/2) against closed
forms (the density, 1 / the density) and float64 central finite differences, values against SciPy."""

import math

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as ss

import tensorlib as tl


def _grad(f, v):
    return float(tl.grad(f)(tl.tensor(v, "float64")))


@pytest.mark.parametrize(
    ("call", "reference"),
    [
        (lambda m: m.norm.logpdf(0.5), lambda: ss.norm.logpdf(0.5)),
        (lambda m: m.t.cdf(1.0, 3.0), lambda: ss.t.cdf(1.0, 3.0)),
        (lambda m: m.expon.ppf(0.5, 0.25, 2.0), lambda: ss.expon.ppf(0.5, 0.25, 2.0)),
        (lambda m: m.poisson.logpmf(2, 3.0), lambda: ss.poisson.logpmf(2, 3.0)),
        (lambda m: m.binom.sf(2, 5, 0.3), lambda: ss.binom.sf(2, 5, 0.3)),
    ],
)
def test_every_argument_a_python_number(call, reference):
    # SciPy (and jax.scipy.stats) take plain numbers; every tl.stats method raised "the shapes do not broadcast"
    got = call(tl.stats)
    assert got.shape == () and got.dtype == tl.float64
    assert float(got) == pytest.approx(reference(), rel=1e-13)


@pytest.mark.parametrize(
    ("k", "p", "want"), [(0.0, 0.0, -1.0), (1.0, 1.0, 1.0), (0.0, 0.25, -1 / 0.75), (1.0, 0.25, 4.0)]
)
def test_bernoulli_logpmf_gradient_at_the_ends_of_p(k, p, want):
    # d/dp log(p) = 1/p for k = 1, d/dp log(1 - p) = -1/(1 - p) for k = 0: finite at p = 0 (k = 0) and p = 1 (k = 1)
    assert _grad(lambda p: tl.stats.bernoulli.logpmf(k, p), p) == pytest.approx(want, rel=1e-14)
    assert float(tl.stats.bernoulli.logpmf(k, p)) == pytest.approx(ss.bernoulli.logpmf(k, p), rel=1e-14)
