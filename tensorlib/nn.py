"""``tl.nn``: neural-network functions with TensorFlow's names and arguments.

Each function dispatches one op (its ``op_type`` attribute names it; see
``tl.ops.explain``) or, for ``moments`` and ``batch_normalization``, a few.

>>> import tensorlib as tl
>>> tl.nn.conv2d.op_type
'Conv2D'
"""

from .ops.math import sigmoid, tanh
from .ops.nn import (
    avg_pool,
    batch_normalization,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    dropout,
    elu,
    erf,
    fused_batch_norm,
    gelu,
    leaky_relu,
    log_softmax,
    max_pool,
    moments,
    relu,
    softmax,
    softmax_cross_entropy_with_logits,
    softplus,
    sparse_softmax_cross_entropy_with_logits,
)

avg_pool2d = avg_pool
max_pool2d = max_pool

__all__ = [
    "avg_pool",
    "avg_pool2d",
    "batch_normalization",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "dropout",
    "elu",
    "erf",
    "fused_batch_norm",
    "gelu",
    "leaky_relu",
    "log_softmax",
    "max_pool",
    "max_pool2d",
    "moments",
    "relu",
    "sigmoid",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softplus",
    "sparse_softmax_cross_entropy_with_logits",
    "tanh",
]

from .layers import AvgPool2D, BatchNorm, Conv2D, Dense, Dropout, Flatten, MaxPool2D  # noqa: E402
from .module import Module, Sequential  # noqa: E402

__all__ += ["AvgPool2D", "BatchNorm", "Conv2D", "Dense", "Dropout", "Flatten", "MaxPool2D", "Module", "Sequential"]
