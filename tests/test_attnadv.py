"""Attention, transformer layers and normalizations tried as an adversary: traced batch norm with unknown sizes,
float16 batch-norm inference, the dtypes of attention masks.

References: NumPy formulas written here (Bessel-corrected variance, the batch-norm formula in float64 rounded
once), the eager path as the traced path's twin, and PyTorch's layers with copied weights where installed."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(20261202)


# ------------------------------------------------------------------ BatchNorm traced with unknown sizes
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_traced_batch_norm_with_unknown_batch_keeps_the_running_variance_exact(dtype):
    # The Bessel factor count / (count - 1) was computed in float32 and rounded to x's dtype when the batch size
    # was known only at run time: a float64 running variance 3.4e-8 off, a float16 model's 2.8e-4 (eager: exact).
    channels = 3
    params = "float32" if dtype == "float16" else dtype
    layer = tl.nn.BatchNorm(channels, momentum=1.0, dtype=params)
    traced = tl.function(layer, input_signature=[tl.TensorSpec((None, channels), dtype)])
    x = RNG.normal(size=(7, channels)).astype(dtype)
    traced(x)
    expected = x.astype(np.float64).var(axis=0, ddof=1)
    tolerance = {"float16": 1e-6, "float32": 3e-7, "float64": 1e-14}[dtype]  # the statistics' dtype rounds once
    np.testing.assert_allclose(layer.running_var.numpy().astype(np.float64), expected, rtol=tolerance)
    traced_var = layer.running_var.numpy()
    layer(x)
    np.testing.assert_allclose(traced_var, layer.running_var.numpy(), rtol=tolerance)


# ------------------------------------------------------------------ fused_batch_norm in inference
def _inference_reference(x, scale, offset, mean, variance, epsilon):
    """The batch-norm formula in float64."""
    x, scale, offset, mean, variance = (np.asarray(a, np.float64) for a in (x, scale, offset, mean, variance))
    return (x - mean) / np.sqrt(variance + epsilon) * scale + offset


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_inference_in_float16_rounds_once(data_format):
    # The float16 kernel computed x * factor + (offset - mean * factor) in float16: for x ~ 10 +- 0.5 the two
    # terms cancelled and y was 5 float16 ulps off (0.0092 at |y| < 2.4); TensorFlow computes in float32.
    channels = 3
    x = (RNG.normal(size=(2, 3, 4, channels)) * 0.5 + 10).astype(np.float16)
    scale, offset = RNG.normal(size=channels).astype(np.float32), RNG.normal(size=channels).astype(np.float32)
    mean = (RNG.normal(size=channels) * 0.1 + 10).astype(np.float32)
    variance = (RNG.random(channels) * 0.5 + 0.1).astype(np.float32)
    given = x if data_format == "NHWC" else x.transpose(0, 3, 1, 2)
    y = tl.nn.fused_batch_norm(given, scale, offset, mean, variance, is_training=False, data_format=data_format)[0]
    y = y.numpy() if data_format == "NHWC" else y.numpy().transpose(0, 2, 3, 1)
    expected = _inference_reference(x, scale, offset, mean, variance, 1e-3)
    assert y.dtype == np.float16
    ulp = np.spacing(np.abs(expected).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(y.astype(np.float64) - expected) <= ulp), np.max(np.abs(y - expected) / ulp)


def test_fused_batch_norm_inference_centres_before_scaling():
    # x * factor + (offset - mean * factor) in float32 lost the digits below 1e4's ulp for x ~ 1e4 + N(0, 1):
    # y 1e-3 off; (x - mean) * factor + offset (TensorFlow's CPU kernel) is exact to float32's rounding.
    channels = 2
    x = (RNG.normal(size=(4, 3, 3, channels)) + 1e4).astype(np.float32)
    scale, offset = np.float32([1.5, 0.5]), np.float32([0.25, -1.0])
    mean, variance = np.float32([1e4, 1e4 + 0.5]), np.float32([1.0, 0.8])
    y = tl.nn.fused_batch_norm(x, scale, offset, mean, variance, epsilon=1e-3, is_training=False)[0]
    np.testing.assert_allclose(y.numpy(), _inference_reference(x, scale, offset, mean, variance, 1e-3), atol=2e-6)
