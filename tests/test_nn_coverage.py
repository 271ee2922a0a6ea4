"""tl.nn breadth: the activations, normalizations, losses and layers TensorFlow, JAX and PyTorch users reach
for, and the tails of the existing activations, against float64 formulas (and PyTorch where installed)."""

import math

import numpy as np
import pytest

import tensorlib as tl

from _helpers import MODES, run_in_mode


def _exact_gelu(x, approximate):
    """float64 GELU without cancellation: x * erfc(-x / sqrt 2) / 2, or x / (1 + exp(-2u))."""
    x = np.asarray(x, np.float64)
    if approximate:
        return x / (1.0 + np.exp(-2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * np.array([math.erfc(-v / math.sqrt(2.0)) for v in x.ravel()]).reshape(x.shape)


# ------------------------------------------------------------------ tails of the existing activations
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_negative_tail_float32_has_no_cancellation(mode, approximate):
    # float32 GELU was -3.86e-6 at x = -4.8 (exact -3.81e-6) and 0 or 1e-7 garbage beyond -5.3; the tanh form
    # -1.6e-7 at -5.4 (exact -1.3e-8): (1 + erf) and (1 + tanh) cancel there.
    x = np.array([-4.8, -5.4, -6.0, -7.5, -9.0, -1.0, 0.0, 2.0, 30.0], np.float32)
    got = run_in_mode(mode, lambda v: tl.nn.gelu(v, approximate=approximate), x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), _exact_gelu(x, approximate), rtol=2e-5, atol=0)


def test_gelu_float16_rounds_once():
    x = np.linspace(-6, 6, 97).astype(np.float16)
    for approximate in (False, True):
        got = tl.nn.gelu(x, approximate=approximate).numpy()
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, _exact_gelu(x, approximate).astype(np.float16))


def test_gelu_tanh_gradient_tail_and_saturation():
    x = np.array([-5.4, -6.0, -1.0, 0.5, 4.0, -40.0, 40.0, -1e4, 300.0], np.float32)
    g = tl.grad(lambda v: tl.sum(tl.nn.gelu(v, approximate=True)))(tl.tensor(x)).numpy()
    xd = x.astype(np.float64)
    u2 = 2.0 * math.sqrt(2.0 / math.pi) * (xd + 0.044715 * xd**3)
    s, sn = 1.0 / (1.0 + np.exp(-u2)), 1.0 / (1.0 + np.exp(u2))
    want = s + xd * s * sn * 2.0 * math.sqrt(2.0 / math.pi) * (1.0 + 3 * 0.044715 * xd * xd)
    np.testing.assert_allclose(g, want, rtol=3e-5, atol=1e-30)
    g16 = tl.grad(lambda v: tl.sum(tl.nn.gelu(v, approximate=True)))(tl.tensor(x.astype(np.float16))).numpy()
    assert np.isfinite(g16).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elu_and_expm1_gradients_are_exp_in_the_tail(dtype):
    # The rules were output + 1 = expm1(x) + 1, which rounds to 0 below x = -17 in float32 (-37 in float64).
    x = np.array([-20.0, -30.0, -40.0, -80.0, -1.0], dtype)
    want = np.exp(x.astype(np.float64))
    for fn in (tl.nn.elu, tl.expm1):
        g = tl.grad(lambda v: tl.sum(fn(v)))(tl.tensor(x)).numpy()
        assert g.dtype == dtype
        np.testing.assert_allclose(g, want.astype(dtype), rtol=1e-6)
        h = tl.grad(lambda v: tl.sum(tl.grad(lambda w: tl.sum(fn(w)))(v)))(tl.tensor(x)).numpy()
        np.testing.assert_allclose(h, want.astype(dtype), rtol=1e-6)
