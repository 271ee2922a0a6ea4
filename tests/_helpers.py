"""Helpers shared by the adversarial test files: run a function eagerly or traced, compare a result with
NumPy's exactly (value, shape and dtype), and central differences in float64 as the gradient reference."""

import numpy as np

import tensorlib as tl

MODES = ["eager", "traced"]


def run_in_mode(mode, f, *args):
    """``f`` of ``args`` (made tensors), eagerly or through ``tl.function``."""
    args = [tl.tensor(a) for a in args]
    return f(*args) if mode == "eager" else tl.function(f)(*args)


def assert_same(got, want):
    """The tensor ``got`` holds exactly the array ``want``: shape, dtype and every value."""
    got, want = got.numpy(), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def central_differences(f, x, eps=1e-6):
    """Gradient of the float64 NumPy function ``f`` (array -> scalar) at ``x`` by central differences."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad
