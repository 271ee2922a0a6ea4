"""``activation(x + y)`` in one pass: the kernels of the ``AddActivation`` and ``Conv2DAddActivation`` ops the
graph optimizer fuses.

The sum is computed a block of rows at a time and the activation applied to
the block while it is still in cache, so the data crosses memory once instead
of twice (the unfused ``Add`` then ``Relu`` each stream the whole tensor);
each element gets exactly the operations the unfused kernels give it, so the
results are bit for bit the same.
"""

from __future__ import annotations

import numpy as np

from .blocks import Pads, Pair, _parallel, _share_blocks, _shared_blocks
from .conv import conv2d

# Rows are taken in blocks of about this many bytes of output: inside L2, so the activation reads
# back what the addition just wrote from cache.  Measured on the LeNet bias + ReLU (128 x 28 x 28 x
# 32 float32, into a kept buffer, best of 30, 2 threads): 1.7-2.1 ms at 1 MiB against 2.7-3.0 ms for
# the unfused add then ReLU; 64-256 KiB blocks pay more in per-call overhead than they save.
BLOCK_BYTES = 1 << 20


def _relu(block):
    np.maximum(block, 0, out=block)


def _tanh(block):
    np.tanh(block, out=block)


def _sigmoid(block):
    # The Sigmoid kernel's formula, term for term (split by sign so that exp never overflows).
    e = np.exp(-np.abs(block))
    block[...] = np.where(block >= 0, 1 / (1 + e), e / (1 + e))


ACTIVATIONS = {"relu": _relu, "tanh": _tanh, "sigmoid": _sigmoid}


def add_activation(x: np.ndarray, y: np.ndarray, *, activation: str, out: np.ndarray | None = None) -> np.ndarray:
    """``activation(x + y)`` with broadcasting, written into ``out`` (which may be ``x`` or ``y``) if given.

    >>> import numpy as np
    >>> add_activation(np.array([[-2.0, 1.0]]), np.array([1.0, 1.0]), activation="relu").tolist()
    [[0.0, 2.0]]
    """
    apply = ACTIVATIONS[activation]
    if out is None:
        out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, y))
    if out.ndim == 0 or out.shape[0] <= 1:
        np.add(x, y, out=out)
        apply(out)
        return out
    rows = max(1, BLOCK_BYTES // max(1, out.nbytes // out.shape[0]))

    def run(blocks):
        for start, stop in blocks:
            block = out[start:stop]
            np.add(_rows(x, start, stop, out.ndim), _rows(y, start, stop, out.ndim), out=block)
            apply(block)

    parallel = _parallel(out.nbytes)
    _share_blocks(run, _shared_blocks(out.shape[0], rows, parallel), parallel)
    return out


def _rows(a: np.ndarray, start: int, stop: int, ndim: int) -> np.ndarray:
    """Rows ``start:stop`` of an operand, or the operand itself where it broadcasts along the first axis."""
    return a if a.ndim < ndim or a.shape[0] == 1 else a[start:stop]


def conv2d_add_activation(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    *,
    activation: str,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """``activation(conv2d(x, w) + bias)`` for a ``(Cout,)`` bias: the bias and activation are applied to each
    block of the convolution's result just after it is written, while the block is in cache, with the operations
    :func:`add_activation` gives each element (so the result is bit for bit the unfused one).

    >>> x, w = np.arange(8.0).reshape(1, 2, 2, 2), np.ones((1, 1, 2, 2))
    >>> conv2d_add_activation(x, w, np.array([-4.0, 0.0]), (1, 1), (1, 1), ((0, 0), (0, 0)), activation="relu")[0]
    array([[[ 0.,  1.],
            [ 1.,  5.]],
    <BLANKLINE>
           [[ 5.,  9.],
            [ 9., 13.]]])
    """
    apply = ACTIVATIONS[activation]

    def epilogue(block: np.ndarray) -> None:
        np.add(block, bias, out=block)
        apply(block)

    return conv2d(x, w, strides, dilations, pads, out=out, epilogue=epilogue)
