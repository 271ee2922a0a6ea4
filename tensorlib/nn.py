"""``tl.nn``: neural-network functions with TensorFlow's names and arguments.

Each function dispatches one op (its ``op_type`` attribute names it; see
``tl.ops.explain``) or, for ``moments`` and ``batch_normalization``, a few.

>>> import tensorlib as tl
>>> tl.nn.conv2d.op_type
'Conv2D'
"""

from .ops import nn as _ops_nn
from .ops.math import sigmoid, tanh  # noqa: F401  (re-exported: TensorFlow has them in tf.nn too)
from .ops.nn import *  # noqa: F403  (every function of the ops/nn package, listed once in its __all__)
from .ops.nn import avg_pool, max_pool

avg_pool2d = avg_pool
max_pool2d = max_pool

__all__ = [*_ops_nn.__all__, "avg_pool2d", "max_pool2d", "sigmoid", "tanh"]

from .layers import (  # noqa: E402
    Activation,
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    BatchNorm,
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Cropping1D,
    Cropping2D,
    Cropping3D,
    Dense,
    DepthwiseConv2D,
    Dropout,
    Embedding,
    Flatten,
    GELU,
    GRU,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    GroupNorm,
    InstanceNorm,
    LSTM,
    LayerNorm,
    RMSNorm,
    LeakyReLU,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    MultiHeadAttention,
    PReLU,
    ReLU,
    SeparableConv2D,
    Sigmoid,
    Softmax,
    SpatialDropout1D,
    SpatialDropout2D,
    SpatialDropout3D,
    Tanh,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
    UpSampling1D,
    UpSampling2D,
    UpSampling3D,
    ZeroPadding1D,
    ZeroPadding2D,
    ZeroPadding3D,
)
from .module import Module, Sequential  # noqa: E402

__all__ += [
    "Activation",
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "BatchNorm",
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Cropping1D",
    "Cropping2D",
    "Cropping3D",
    "Dense",
    "DepthwiseConv2D",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "GRU",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalAveragePooling3D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalMaxPooling3D",
    "GroupNorm",
    "InstanceNorm",
    "LSTM",
    "LayerNorm",
    "RMSNorm",
    "LeakyReLU",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "Module",
    "MultiHeadAttention",
    "PReLU",
    "ReLU",
    "SeparableConv2D",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "Tanh",
    "TransformerDecoderLayer",
    "TransformerEncoderLayer",
    "UpSampling1D",
    "UpSampling2D",
    "UpSampling3D",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "ZeroPadding3D",
]
