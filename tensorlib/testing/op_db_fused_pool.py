"""The catalogue entry of ``Conv2DAddActivationMaxPool``: ``h = activation(conv2d(x, w) + b)`` and
``max_pool(h)`` as one op with two outputs (the optimizer's conv + bias + activation + max pool fusion).

The reference is the unfused formula in float64 NumPy: the conv, the bias, the activation, then the max of
each pooling window (a maximum commutes with the rounding to the tested dtype).  The conv's geometry is
drawn as for ``Conv2D`` (any stride, dilation and padding), then a pool that fits its result: windows
that overlap or not, non-square, VALID or SAME.

>>> from tensorlib.testing.op_db_fused_pool import OPINFOS
>>> [(info.name, info.op_types) for info in OPINFOS]
[('conv2d_add_activation_max_pool', ('Conv2DAddActivationMaxPool',))]
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ..ops.nn.fused import conv2d_add_activation_max_pool
from . import references
from .op_db_fused import _REFERENCES
from .op_db_nn import _conv_geometry
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import tensors


def _conv2d_add_activation_max_pool_ref(
    x, w, b, strides, padding, dilations, activation, pool_ksize, pool_strides, pool_padding
):
    h = _REFERENCES[activation](references.conv2d(x, w, strides, padding, dilations) + np.asarray(b, np.float64))
    dtype = np.result_type(x, w, b)
    return h.astype(dtype), references.max_pool(h, pool_ksize, pool_strides, pool_padding).astype(dtype)


@st.composite
def _conv2d_add_activation_max_pool_draw(draw, dtype):
    x_shape, w_shape, strides, padding, dilations = draw(_conv_geometry())
    out_hw = references.geometry(x_shape[1:3], w_shape[:2], strides, padding, dilations)[3]
    pool_padding = draw(st.sampled_from(["VALID", "SAME"]))
    # A VALID window must fit the conv's result; a SAME one may be larger.
    pool_ksize = tuple(draw(st.integers(1, 3 if pool_padding == "SAME" else min(3, size))) for size in out_hw)
    pool_strides = draw(st.sampled_from([1, 2, (2, 1), (1, 3)]))
    x, w, b = draw(tensors(dtype, x_shape)), draw(tensors(dtype, w_shape)), draw(tensors(dtype, w_shape[3:]))
    activation = draw(st.sampled_from(sorted(_REFERENCES)))
    return SampleInput(
        (x, w, b, strides, padding, dilations, activation, pool_ksize, pool_strides, pool_padding),
        grad_argnums=(0, 1, 2),
    )


OPINFOS = [
    OpInfo(
        "conv2d_add_activation_max_pool",
        conv2d_add_activation_max_pool,
        _conv2d_add_activation_max_pool_ref,
        _conv2d_add_activation_max_pool_draw,
        op_types=("Conv2DAddActivationMaxPool",),
        kinks=True,  # relu at conv + b == 0, and ties for a window's maximum
        error_inputs=(
            ErrorInput(
                (np.ones((1, 3, 3, 2)), np.ones((2, 2, 2, 4)), np.ones(3)),
                {},
                ValueError,
                r"Conv2DAddActivationMaxPool: bias must be a float64 vector of the 4 output channels, got float64\[3\]",
            ),
            ErrorInput(
                (np.ones((1, 3, 3, 2)), np.ones((2, 2, 2, 4)), np.ones(4)),
                {"pool_ksize": 3},
                ValueError,
                r"Conv2DAddActivationMaxPool: the pool \(pool_ksize \(3, 3\), pool_strides \(2, 2\), pool_padding "
                r"'VALID'\) does not fit the conv's result float64\[1, 2, 2, 4\]",
            ),
            ErrorInput(
                (np.ones((1, 3, 3, 2)), np.ones((2, 2, 2, 4)), np.ones(4)),
                {"pool_padding": ((0, 0), (0, 0))},
                ValueError,
                r"Conv2DAddActivationMaxPool: padding must be 'VALID' or 'SAME', got \(\(0, 0\), \(0, 0\)\)",
            ),
            ErrorInput(
                (np.ones((1, 3, 3, 2)), np.ones((2, 2, 2, 4)), np.ones(4)),
                {"pool_strides": 0},
                ValueError,
                "Conv2DAddActivationMaxPool: pool_strides must be >= 1, got 0",
            ),
            ErrorInput(
                (np.ones((1, 3, 3, 2), np.int64), np.ones((2, 2, 2, 4), np.int64), np.ones(4, np.int64)),
                {},
                TypeError,
                "Conv2DAddActivationMaxPool: input must be a floating-point tensor, got int64",
            ),
            ErrorInput(
                (np.ones((1, 3, 3, 2)), np.ones((2, 2, 2, 4)), np.ones(4)),
                {"activation": "gelu"},
                ValueError,
                "Conv2DAddActivationMaxPool: activation must be one of",
            ),
        ),
    ),
]
