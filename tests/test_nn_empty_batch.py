"""A batch of zero images gives empty results and zero filter gradients, as in TensorFlow and PyTorch."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import references

W = np.random.default_rng(0).standard_normal((3, 3, 3, 4))
EMPTY = np.zeros((0, 8, 8, 3))


@pytest.mark.parametrize("strides,padding,shape", [(1, "SAME", (0, 8, 8, 4)), (2, "VALID", (0, 3, 3, 4))])
def test_conv2d_of_an_empty_batch_is_empty(strides, padding, shape):
    assert tl.nn.conv2d(EMPTY, W, strides, padding).shape == shape


@pytest.mark.parametrize("pool", [tl.nn.max_pool, tl.nn.avg_pool])
def test_pools_of_an_empty_batch_are_empty(pool):
    assert pool(EMPTY, 2, 2, "VALID").shape == (0, 4, 4, 3)
    assert pool(EMPTY, 3, 2, "SAME").shape == (0, 4, 4, 3)


def test_gradients_through_an_empty_batch():
    def loss(x, w):
        return tl.sum(tl.nn.avg_pool(tl.nn.max_pool(tl.nn.conv2d(x, w, 1, "SAME"), 2, 2, "VALID"), 2, 2, "SAME"))

    gx, gw = tl.grad(loss, argnums=(0, 1))(tl.tensor(EMPTY), tl.tensor(W))
    assert gx.shape == EMPTY.shape
    np.testing.assert_array_equal(gw.numpy(), np.zeros_like(W))


def test_an_empty_batch_next_to_a_full_one_gives_the_reference():
    x = np.random.default_rng(1).standard_normal((2, 8, 8, 3))
    full = tl.nn.conv2d(x, W, 1, "SAME").numpy()
    np.testing.assert_allclose(full, references.conv2d(x, W, 1, "SAME"), rtol=1e-12, atol=1e-12)
    assert tl.nn.conv2d(x[:0], W, 1, "SAME").shape == (0,) + full.shape[1:]
