"""The fused conv-gradient catalogue: ``Conv2DBackpropFilterWithBias`` (a conv layer's filter and bias gradients)
and ``Conv2DBackprop`` (its input, filter and bias gradients), the optimizer's fusions of a conv layer's backward.

The references are the unfused formulas in float64 NumPy (:mod:`.references`; the bias gradient is the sum
of the output gradient over N, H, W); the conv's geometry is drawn as for ``Conv2D`` (any stride, dilation and
padding), in float16, float32 and float64; ``Conv2DBackprop`` with and without its ReluGrad on the input
gradient.

>>> from tensorlib.testing.op_db_fused_grad import OPINFOS
>>> [(info.name, info.op_types) for info in OPINFOS]
[('conv2d_backprop_filter_with_bias', ('Conv2DBackpropFilterWithBias',)), ('conv2d_backprop', ('Conv2DBackprop',))]
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .. import dtypes as _dt
from ..ops.nn.fused_grad import conv2d_backprop, conv2d_backprop_filter_with_bias
from . import references
from .op_db_nn import _conv_geometry
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import tensors

_DTYPES = (_dt.float16, _dt.float32, _dt.float64)


def _bias_ref(dy):
    return np.asarray(dy, np.float64).sum(axis=(0, 1, 2)).astype(dy.dtype)


def _filter_with_bias_ref(x, filter_shape, dy, strides, padding, dilations):
    dw = references.conv2d_backprop_filter(x, filter_shape, dy, strides, padding, dilations)
    return dw.astype(np.result_type(x, dy)), _bias_ref(dy)


def _backprop_ref(x, w, dy, strides, padding, dilations, relu_grad=False):
    dx = references.conv2d_backprop_input(x.shape, w, dy, strides, padding, dilations)
    if relu_grad:
        dx = np.where(x > 0, dx, 0.0)
    dw = references.conv2d_backprop_filter(x, w.shape, dy, strides, padding, dilations)
    dtype = np.result_type(x, w, dy)
    return dx.astype(dtype), dw.astype(dtype), _bias_ref(dy)


@st.composite
def _gradient_draw(draw, dtype, with_filters):
    x_shape, w_shape, strides, padding, dilations = draw(_conv_geometry())
    out_hw = references.geometry(x_shape[1:3], w_shape[:2], strides, padding, dilations)[3]
    x, dy = draw(tensors(dtype, x_shape)), draw(tensors(dtype, (x_shape[0], *out_hw, w_shape[3])))
    if with_filters:
        w = draw(tensors(dtype, w_shape))
        relu_grad = draw(st.booleans())
        return SampleInput((x, w, dy, strides, padding, dilations, relu_grad), grad_argnums=(0, 1, 2))
    return SampleInput((x, w_shape, dy, strides, padding, dilations), grad_argnums=(0, 2))


_X, _DY = np.ones((1, 4, 4, 2)), np.ones((1, 3, 3, 5))

OPINFOS = [
    OpInfo(
        "conv2d_backprop_filter_with_bias",
        conv2d_backprop_filter_with_bias,
        _filter_with_bias_ref,
        lambda dtype: _gradient_draw(dtype, False),
        op_types=("Conv2DBackpropFilterWithBias",),
        dtypes=_DTYPES,
        error_inputs=(
            ErrorInput(
                (_X, (2, 2, 2, 5), np.ones((1, 3, 2, 5)), 1, "VALID"),
                {},
                ValueError,
                r"Conv2DBackpropFilterWithBias: out_backprop shape \(1, 3, 2, 5\) does not match the expected "
                r"\(1, 3, 3, 5\) \(inputs input: shape \(1, 4, 4, 2\) float64, out_backprop: shape \(1, 3, 2, 5\)",
            ),
            ErrorInput(
                (_X, (2, 2, 3, 5), _DY, 1, "VALID"),
                {},
                ValueError,
                r"Conv2DBackpropFilterWithBias: input depth 2 does not match filter in_channels 3",
            ),
            ErrorInput(
                (_X.astype(np.int64), (2, 2, 2, 5), _DY.astype(np.int64), 1, "VALID"),
                {},
                TypeError,
                "Conv2DBackpropFilterWithBias: .*must be a floating-point tensor",
            ),
        ),
    ),
    OpInfo(
        "conv2d_backprop",
        conv2d_backprop,
        _backprop_ref,
        lambda dtype: _gradient_draw(dtype, True),
        op_types=("Conv2DBackprop",),
        dtypes=_DTYPES,
        kinks=True,  # relu_grad: the input gradient's mask changes where input == 0
        error_inputs=(
            ErrorInput(
                (_X, np.ones((2, 2, 2, 5)), np.ones((1, 3, 3, 4)), 1, "VALID"),
                {},
                ValueError,
                r"Conv2DBackprop: out_backprop shape \(1, 3, 3, 4\) does not match the expected \(1, 3, 3, 5\) "
                r"\(inputs input: shape \(1, 4, 4, 2\) float64, filters: shape \(2, 2, 2, 5\) float64",
            ),
            ErrorInput(
                (_X, np.ones((2, 2, 3, 5)), _DY, 1, "VALID"),
                {},
                ValueError,
                r"Conv2DBackprop: input depth 2 does not match filter in_channels 3",
            ),
            ErrorInput(
                (_X, np.ones((2, 2, 2, 5)), _DY, 1, "FULL"),
                {},
                ValueError,
                "Conv2DBackprop: padding must be",
            ),
        ),
    ),
]
