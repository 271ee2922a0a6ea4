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
