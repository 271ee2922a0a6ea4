"""Reductions probed as an adversary: each test pins a defect that was fixed, against an independent
reference (float64 NumPy formulas or central differences), eagerly and traced."""

import numpy as np
import pytest

import tensorlib as tl


def _central_differences(f, x, eps=1e-6):
    """Gradient of the float64 NumPy function ``f`` (array -> scalar) at ``x`` by central differences."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


MODES = pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])


def _run(f, traced):
    return tl.function(f) if traced else f


# ------------------------------------------------------------------ logsumexp with zero weights
@MODES
@pytest.mark.parametrize(
    "x, b",
    [
        ([0.0, 0.0, 800.0], [1.0, 2.0, 0.0]),  # the dropped x set the shift: every kept term underflowed
        ([[0.0, 900.0, 1.0], [5.0, 2.0, -1.0]], [[1.0, 0.0, 3.0], [0.0, 1.0, 1.0]]),
        ([1.0, np.nan, 2.0], [1.0, 0.0, 1.0]),  # a dropped NaN is dropped (SciPy)
        ([1.0, np.inf, 2.0], [1.0, 0.0, 1.0]),
    ],
)
def test_logsumexp_zero_weights_are_dropped(x, b, traced):
    x, b = np.array(x), np.array(b)
    kept = b != 0
    expected = np.log(np.sum(np.where(kept, b * np.exp(np.where(kept, x, 0.0)), 0.0), axis=-1))
    out = _run(lambda x, b: tl.logsumexp(x, axis=-1, b=b), traced)(x, b).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@MODES
def test_logsumexp_gradients_at_zero_weights(traced):
    # d/db_i = exp(x_i - logsumexp) also for a zero weight (its x above or below the kept ones); d/dx_i = 0 there.
    x, b = np.array([0.0, 1.0, 5.0, -3.0]), np.array([1.0, 2.0, 0.0, 0.0])
    grads = _run(tl.grad(lambda x, b: tl.logsumexp(x, b=b), argnums=(0, 1)), traced)(x, b)
    reference = [
        _central_differences(lambda v: np.log(np.sum(b * np.exp(v))), x),
        _central_differences(lambda w: np.log(np.sum(w * np.exp(x))), b),
    ]
    for got, want in zip(grads, reference):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-9)
