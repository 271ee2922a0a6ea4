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

from . import layers as _layers  # noqa: E402
from .layers import *  # noqa: E402,F403  (every layer, listed once in layers.__all__)
from .module import Module, Sequential  # noqa: E402
from . import torch_layers as torch  # noqa: E402  (PyTorch's RNN, LSTM and GRU: tl.nn.torch.LSTM)

__all__ = [*_ops_nn.__all__, "avg_pool2d", "max_pool2d", "sigmoid", "tanh", *_layers.__all__, "Module", "Sequential"]
