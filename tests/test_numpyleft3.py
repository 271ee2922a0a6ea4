"""Attacks on the NumPy surface's leftovers and a linalg re-attack: infinities in the NaN-skipping
reductions, 0-d tensors given an axis, NumPy 2's names (``around``, ``concatenate``, ``matvec``/``vecmat``)
and their arguments, dtype promotion swept over dtypes x ops.  References: NumPy 2 / SciPy in float64,
jax.numpy where NumPy has no gradient, and float64 central finite differences (``tl.testing.check_grads``)
for every gradient."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

INF = np.inf


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@pytest.mark.parametrize(
    "values",
    [[1.0, -INF, 2.0], [INF, -INF], [INF, INF], [1.0, np.nan, INF], [[1.0, INF], [np.nan, 2.0]], [np.nan, 3.0, 1.0]],
)
def test_nanvar_and_nanstd_of_infinities_are_numpys_nan(name, values):
    # The centred values inf - inf are NaN; nanvar filled every NaN of x - mean with 0, not only x's own NaNs,
    # so [inf, -inf] had variance 0.0 and [1, -inf, 2] had inf, where NumPy (and jnp.nanvar) give NaN.
    x = np.array(values)
    for axis in (None, -1):
        with np.errstate(invalid="ignore"):
            expected = getattr(np, name)(x, axis=axis)
        np.testing.assert_array_equal(getattr(tl, name)(tl.tensor(x), axis=axis).numpy(), expected)


def test_nanvar_gradient_is_zero_at_nans_and_matches_differences_elsewhere():
    x = np.array([[1.0, np.nan, 3.0, -2.0], [0.5, 2.0, np.nan, np.nan]])
    g = tl.grad(lambda t: tl.sum(tl.nanvar(t, axis=1)))(tl.tensor(x)).numpy()
    kept = ~np.isnan(x)
    expected = np.where(kept, 2 * (x - np.nanmean(x, axis=1, keepdims=True)) / kept.sum(1, keepdims=True), 0.0)
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    check_grads(lambda t: tl.nanstd(t, axis=0), [np.array([[1.0, 2.0], [4.0, -1.0], [0.5, 3.0]])], order=2)
