"""``tl.special`` attacked as an adversary: gradients where the function is smooth but the textbook formula meets a
pole, a log of a rounded argument or a product 0 * inf (Spence's function near 0, binom, poch and beta where a
gamma in the denominator has a pole), and the functions of ``jax.scipy.special`` that were missing.

References: closed forms, float64 central differences of SciPy, SciPy's values; mpmath where installed
(importorskip)."""

import math

import numpy as np
import pytest
import scipy.special as sp

import tensorlib as tl


def _f64(*values):
    return [tl.tensor(np.asarray(v, np.float64)) for v in values]


def _grad(f, *args, argnums=0):
    """The gradient of sum(f) at float64 ``args``, as NumPy arrays."""
    g = tl.grad(lambda *v: tl.sum(f(*v)), argnums=argnums)(*_f64(*args))
    return tuple(v.numpy() for v in g) if isinstance(argnums, tuple) else g.numpy()


def _central(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


# ---------------------------------------------------------------- spence
def test_spence_gradient_near_0_is_log_z_over_1_minus_z_to_full_precision():
    z = np.array([1e-300, 3e-14, 1e-10, 1.2345e-7, 0.3, 0.9, 1.5, 40.0])
    want = np.log(z) / (1.0 - z)  # 1 - z rounds only where it does not matter (z < 2**-53 or far from 1)
    np.testing.assert_allclose(_grad(tl.special.spence, z), want, rtol=1e-14)
    z32 = np.array([1e-3, 1e-30, 0.1], np.float32)
    got32 = tl.grad(lambda z: tl.sum(tl.special.spence(z)))(tl.tensor(z32)).numpy()
    z64 = z32.astype(np.float64)
    np.testing.assert_allclose(got32, np.log(z64) / (1.0 - z64), rtol=2e-7)
