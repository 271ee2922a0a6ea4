"""Differential attack on the NumPy surface (the tl.* NumPy names) against NumPy 2 itself: hypothesis-drawn
shapes (0-size and 0-d included), dtypes and keyword arguments (order=, mean=, correction=, dtype=, weights=),
values and result dtypes compared with NumPy's, gradients against float64 central differences.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import check_grads


def _same(got, want):
    """``got`` (a Tensor) has NumPy's result ``want``: its dtype, shape and values."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True)


_shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


@given(shape=_shapes, data=st.data())
def test_reshape_and_ravel_take_numpys_order(shape, data):
    size = int(np.prod(shape))
    x = np.arange(size, dtype=np.float64).reshape(shape)
    order = data.draw(st.sampled_from("CFA"))
    new = data.draw(st.sampled_from([(size,), (1, size), (size, 1, 1), (-1,)] + ([(2, -1)] if size % 2 == 0 else [])))
    _same(tl.reshape(tl.tensor(x), new, order=order), np.reshape(x, new, order=order))
    _same(tl.ravel(tl.tensor(x), order=order), np.ravel(x, order=order))


def test_reshape_order_f_gradient_and_trace():
    x = np.arange(24.0).reshape(2, 3, 4)
    weights = np.linspace(-1.0, 1.0, 24).reshape(4, 6)
    grad = tl.grad(lambda t: tl.sum(tl.reshape(t, (4, 6), order="F") * weights))(tl.tensor(x))
    np.testing.assert_array_equal(grad.numpy(), np.reshape(weights, (2, 3, 4), order="F"))
    check_grads(lambda t: tl.reshape(t, (-1, 2), order="F") ** 2, [x], order=2)
    traced = tl.function(lambda t: tl.ravel(t, order="F"))
    _same(traced(tl.tensor(x)), np.ravel(x, order="F"))
    with pytest.raises(ValueError, match=r"reshape: order must be one of 'C', 'F', 'A', got 'X'"):
        tl.reshape(tl.tensor(x), (4, 6), order="X")
