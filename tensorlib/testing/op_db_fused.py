"""The fused-op catalogue: ``AddActivation`` (``activation(x + y)``, the optimizer's bias + activation fusion).

The reference is the unfused formula in float64 NumPy; ``y`` is drawn as a
full-shape operand, a trailing bias, or a scalar, so broadcasting and the
gradient's sum back to the bias's shape are both exercised.

>>> from tensorlib.testing.op_db_fused import OPINFOS
>>> [(info.name, info.op_types) for info in OPINFOS]
[('add_activation', ('AddActivation',))]
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ..ops.nn.fused import add_activation
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
]
