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
