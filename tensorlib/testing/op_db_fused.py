"""The fused-op catalogue: ``AddActivation`` (``activation(x + y)``, the optimizer's bias + activation fusion)
and ``Conv2DAddActivation`` (``activation(conv2d(x, w) + b)``, its conv + bias + activation fusion).

The references are the unfused formulas in float64 NumPy. ``AddActivation``'s
``y`` is drawn as a full-shape operand, a trailing bias, or a scalar, so
broadcasting and the gradient's sum back to the bias's shape are both
exercised; the conv's geometry is drawn as for ``Conv2D`` (any stride,
dilation and padding).

>>> from tensorlib.testing.op_db_fused import OPINFOS
>>> [(info.name, info.op_types) for info in OPINFOS]
[('add_activation', ('AddActivation',)), ('conv2d_add_activation', ('Conv2DAddActivation',))]
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ..ops.nn.fused import add_activation, conv2d_add_activation
from . import references
from .op_db_nn import _conv_geometry
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import shapes, tensors

_REFERENCES = {
    "relu": lambda s: np.maximum(s, 0.0),
    "tanh": np.tanh,
    "sigmoid": lambda s: 1.0 / (1.0 + np.exp(-s)),
}


def _add_activation_ref(x, y, activation="relu"):
    s = x.astype(np.float64) + np.asarray(y, np.float64)
    return _REFERENCES[activation](s).astype(np.result_type(x, y))


@st.composite
def _add_activation_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    bias_shape = draw(st.sampled_from([x.shape, x.shape[-1:], ()]))
    y = draw(tensors(dtype, bias_shape))
    activation = draw(st.sampled_from(sorted(_REFERENCES)))
    return SampleInput((x, y), {"activation": activation}, grad_argnums=(0, 1))


def _conv2d_add_activation_ref(x, w, b, strides, padding, dilations, activation):
    s = references.conv2d(x, w, strides, padding, dilations) + np.asarray(b, np.float64)
    return _REFERENCES[activation](s).astype(np.result_type(x, w, b))


@st.composite
def _conv2d_add_activation_draw(draw, dtype):
    x_shape, w_shape, strides, padding, dilations = draw(_conv_geometry())
    x, w, b = draw(tensors(dtype, x_shape)), draw(tensors(dtype, w_shape)), draw(tensors(dtype, w_shape[3:]))
    activation = draw(st.sampled_from(sorted(_REFERENCES)))
    return SampleInput((x, w, b, strides, padding, dilations, activation), grad_argnums=(0, 1, 2))


OPINFOS = [
    OpInfo(
        "add_activation",
        add_activation,
        _add_activation_ref,
        _add_activation_draw,
        op_types=("AddActivation",),
        kinks=True,  # relu at x + y == 0
        error_inputs=(
            ErrorInput(
                (np.ones(2), np.ones(2)), {"activation": "gelu"}, ValueError, "AddActivation: activation must be one of"
            ),
            ErrorInput((np.ones(2, np.int64), np.ones(2, np.int64)), {}, TypeError, "must be a floating-point tensor"),
        ),
    ),
    OpInfo(
        "conv2d_add_activation",
        conv2d_add_activation,
        _conv2d_add_activation_ref,
        _conv2d_add_activation_draw,
        op_types=("Conv2DAddActivation",),
        kinks=True,  # relu at conv + b == 0
        error_inputs=(
            ErrorInput(
                (np.ones((1, 3, 3, 2)), np.ones((2, 2, 2, 4)), np.ones(3)),
                {},
                ValueError,
                r"Conv2DAddActivation: bias must be a float64 vector of the 4 output channels, got float64\[3\]",
            ),
            ErrorInput(
                (np.ones((1, 3, 3, 2)), np.ones((2, 2, 2, 4)), np.ones(4)),
                {"activation": "gelu"},
                ValueError,
                "Conv2DAddActivation: activation must be one of",
            ),
        ),
    ),
]
