"""data_format="NCHW" across tl.nn and the layers: the same numbers as NHWC, transposed; the NCHW hint."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 7, 6))  # NCHW
W = RNG.normal(size=(3, 2, 3, 4))  # HWIO


def nhwc(a):
    return a.transpose(0, 2, 3, 1)


def nchw(a):
    return np.asarray(a).transpose(0, 3, 1, 2)


@pytest.mark.parametrize(
    "strides,padding", [(1, "SAME"), ([1, 1, 2, 3], "VALID"), (2, [[0, 0], [0, 0], [1, 2], [0, 1]])]
)
def test_conv2d_nchw_equals_nhwc(strides, padding):
    got = tl.nn.conv2d(X, W, strides, padding, data_format="NCHW").numpy()
    nhwc_strides = strides if isinstance(strides, int) else strides[2:]
    nhwc_padding = padding if isinstance(padding, str) else [padding[0], padding[2], padding[3], padding[1]]
    np.testing.assert_allclose(got, nchw(tl.nn.conv2d(nhwc(X), W, nhwc_strides, nhwc_padding)), rtol=1e-12)


def test_conv2d_nchw_gradients():
    tl.testing.check_grads(
        lambda x, w: tl.nn.conv2d(x, w, 2, "SAME", data_format="NCHW"), [X[:1, :, :4, :4], W[:2, :2]], order=1
    )


def test_conv_gradient_ops_and_transpose_in_nchw():
    dy = RNG.normal(size=(2, 4, 4, 3))  # NCHW output of a stride-2 SAME conv of X
    got = tl.nn.conv2d_backprop_input((None, 3, 7, 6), W, dy, 2, "SAME", data_format="NCHW").numpy()
    np.testing.assert_allclose(got, nchw(tl.nn.conv2d_backprop_input((2, 7, 6, 3), W, nhwc(dy), 2, "SAME")))
    got = tl.nn.conv2d_backprop_filter(X, W.shape, dy, 2, "SAME", data_format="NCHW").numpy()
    np.testing.assert_allclose(got, tl.nn.conv2d_backprop_filter(nhwc(X), W.shape, nhwc(dy), 2, "SAME").numpy())
    up = tl.nn.conv2d_transpose(dy, W, (2, 3, 7, 6), 2, "SAME", data_format="NCHW")
    assert up.shape == (2, 3, 7, 6)


@pytest.mark.parametrize("pool", [tl.nn.max_pool, tl.nn.avg_pool])
def test_pools_nchw(pool):
    got = pool(X, [1, 1, 2, 2], 2, "SAME", data_format="NCHW").numpy()
    np.testing.assert_allclose(got, nchw(pool(nhwc(X), 2, 2, "SAME")))


def test_fused_batch_norm_nchw():
    scale, offset = RNG.normal(size=3), RNG.normal(size=3)
    y, mean, var = tl.nn.fused_batch_norm(X, scale, offset, data_format="NCHW")
    y_ref, mean_ref, var_ref = tl.nn.fused_batch_norm(nhwc(X), scale, offset)
    np.testing.assert_allclose(y.numpy(), nchw(y_ref), rtol=1e-10)
    np.testing.assert_allclose(mean.numpy(), X.mean(axis=(0, 2, 3)))
    np.testing.assert_allclose(var.numpy(), var_ref.numpy())


def test_channel_mismatch_says_it_looks_like_nchw():
    with pytest.raises(
        ValueError,
        match=r"Conv2D: input depth 6 does not match filter in_channels 3 \(input shape "
        r"\(2, 3, 7, 6\), filter shape \(3, 2, 3, 4\)\); this looks like NCHW "
        r"\(channels-first\) input with 3 channels: pass data_format=\"NCHW\"",
    ):
        tl.nn.conv2d(X, W, 1, "SAME")
    with pytest.raises(ValueError) as info:
        tl.nn.conv2d(nhwc(X), RNG.normal(size=(3, 3, 5, 4)), 1, "SAME")
    assert "NCHW" not in str(info.value)


def test_bad_data_format_and_rank():
    with pytest.raises(ValueError, match=r"Conv2D: data_format must be 'NHWC' or 'NCHW', got 'CHWN'"):
        tl.nn.conv2d(X, W, 1, "SAME", data_format="CHWN")
    with pytest.raises(ValueError, match=r"MaxPool: input must be 4-D NCHW \(batch, channels, height, width\)"):
        tl.nn.max_pool(X[0], 2, 2, "VALID", data_format="NCHW")
    with pytest.raises(ValueError, match="MaxPool2D: data_format must be 'NHWC' or 'NCHW'"):
        tl.nn.MaxPool2D(2, data_format="nchw")


def test_layers_in_nchw_match_nhwc():
    def model(fmt):
        return tl.nn.Sequential(
            tl.nn.Conv2D(3, 4, 3, seed=1, bias_initializer="ones", data_format=fmt),
            tl.nn.BatchNorm(4, data_format=fmt),
            tl.nn.MaxPool2D(2, data_format=fmt),
            tl.nn.AvgPool2D(1, data_format=fmt),
        )

    x = X.astype(np.float32)
    a, b = model("NCHW"), model("NHWC")
    np.testing.assert_allclose(a(x).numpy(), nchw(b(nhwc(x))), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a[1].running_var.numpy(), b[1].running_var.numpy(), rtol=1e-5)
    a.eval()
    b.eval()
    np.testing.assert_allclose(a(x).numpy(), nchw(b(nhwc(x))), rtol=1e-4, atol=1e-5)
    with pytest.raises(
        ValueError,
        match=r"BatchNorm: input's second \(NCHW\) \(channel\) dimension must be "
        r"num_features=4",
    ):
        a[1](np.ones((2, 3, 4, 4), np.float32))
