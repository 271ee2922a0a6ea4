"""Adversarial regressions for the conv / pool / normalization family (round 5): each test failed before its fix."""

import numpy as np
import pytest

import tensorlib as tl

X = np.arange(50.0).reshape(1, 5, 5, 2)
W = np.ones((2, 2, 2, 1))


# ------------------------------------------------------------------ integer attributes are never truncated
@pytest.mark.parametrize(
    "call",
    [
        lambda: tl.nn.conv2d(X, W, (1.5, 1), "VALID"),
        lambda: tl.nn.conv2d(X, W, [1, 2.5, 1, 1], "VALID"),
        lambda: tl.nn.conv2d(X, W, 1, "VALID", dilations=(2.7, 1)),
        lambda: tl.nn.conv2d(X, W, (True, 1), "VALID"),
        lambda: tl.nn.conv2d(X, W, ("2", 1), "VALID"),
        lambda: tl.nn.conv2d(X, W, 1, ((1.5, 0), (0, 0))),
        lambda: tl.nn.conv2d(X.transpose(0, 3, 1, 2), W, 1, [[0, 0], [0, 0], [0.5, 0], [0, 0]], data_format="NCHW"),
        lambda: tl.nn.conv2d_transpose(np.ones((1, 2, 2, 1)), np.ones((3, 3, 1, 1)), (1, 4.7, 4, 1), 2, "SAME"),
        lambda: tl.nn.conv2d_backprop_filter(X, (2, 2, 2.0, 1), np.ones((1, 4, 4, 1)), 1, "VALID"),
        lambda: tl.nn.conv1d(X[:, 0], W[0], [1.5], "VALID"),
        lambda: tl.nn.conv1d(X[:, 0], W[0], 1, (0.5, 0)),
        lambda: tl.nn.max_pool(X, (2, 2.5), 1, "VALID"),
        lambda: tl.nn.avg_pool(X, 2, (1, 1.9), "SAME"),
        lambda: tl.nn.depthwise_conv2d(X, np.ones((2, 2, 2, 1)), (1, 1.5), "VALID"),
        lambda: tl.nn.resize(X, (7.9, 3)),
        lambda: tl.nn.space_to_depth(np.ones((1, 4, 4, 1)), 2.0),
    ],
)
def test_non_integer_window_attributes_are_errors(call):
    # They were int()-ed: strides (1.5, 1) ran with stride 1, dilations 2.7 with 2, a padding of 1.5 with 1,
    # an output shape of 4.7 gave 4, resize to 7.9 rows gave 7, all without a word.
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert any(name in str(info.value) for name in ("Conv2D", "conv1d", "Pool", "depthwise", "resize", "space_to"))


def test_integer_attributes_of_every_kind_still_work():
    ref = tl.nn.conv2d(X, W, (2, 1), ((1, 0), (0, 1)), dilations=(1, 2)).numpy()
    np.testing.assert_array_equal(
        tl.nn.conv2d(X, W, np.array([1, 2, 1, 1]), [[0, 0], [1, 0], [0, 1], [0, 0]], (np.int64(1), np.int32(2))),
        ref,
    )
    np.testing.assert_array_equal(tl.nn.conv2d(X, W, tl.tensor([2, 1]), ((1, 0), (0, 1)), (1, 2)), ref)
    assert tl.nn.space_to_depth(np.ones((1, 4, 4, 1)), np.int64(2)).shape == (1, 2, 2, 4)
    assert tl.nn.resize(X, (np.int64(3), 4)).shape == (1, 3, 4, 2)
    mean, _ = tl.nn.moments(X, np.array([0, 1, 2]))
    np.testing.assert_allclose(mean.numpy(), X.mean((0, 1, 2)))
    with pytest.raises(TypeError, match="moments"):
        tl.nn.moments(X, [0.7])  # was axis 0


# ------------------------------------------------------------------ fused_batch_norm inference hands back Tensors
def test_fused_batch_norm_inference_returns_tensors_of_its_own():
    x = np.linspace(-1, 1, 24).reshape(2, 3, 2, 2)
    mean, variance = np.array([0.1, -0.2]), np.array([0.5, 2.0])
    y, m, v = tl.nn.fused_batch_norm(x, np.ones(2), np.zeros(2), mean, variance, epsilon=1e-3, is_training=False)
    # They were the caller's own arrays (or lists), not Tensors: a write to either reached the other.
    assert isinstance(m, tl.Tensor) and isinstance(v, tl.Tensor)
    assert not np.shares_memory(m.numpy(), mean) and not np.shares_memory(v.numpy(), variance)
    np.testing.assert_array_equal(m.numpy(), mean)
    np.testing.assert_array_equal(v.numpy(), variance)
    np.testing.assert_allclose(y.numpy(), (x - mean) / np.sqrt(variance + 1e-3), rtol=1e-12)
    _, m, v = tl.nn.fused_batch_norm(
        x.astype(np.float32), [1.0, 1.0], [0.0, 0.0], [0.0, 1.0], [1.0, 1.0], is_training=False
    )
    assert isinstance(m, tl.Tensor) and m.dtype == tl.float32 and v.numpy().tolist() == [1.0, 1.0]
