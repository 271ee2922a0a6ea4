"""``activation(x + y)`` in one pass: the kernels of the ``AddActivation``, ``Conv2DAddActivation`` and
``Conv2DAddActivationMaxPool`` ops the graph optimizer fuses.

The sum is computed a block of rows at a time and the activation applied to
the block while it is still in cache, so the data crosses memory once instead
of twice (the unfused ``Add`` then ``Relu`` each stream the whole tensor);
each element gets exactly the operations the unfused kernels give it, so the
results are bit for bit the same.
"""

from __future__ import annotations

import numpy as np

from .activations import relu_block
from .blocks import Pads, Pair, _parallel, _share_blocks, _shared_blocks, resolve_conv_padding
from .conv import conv2d
from .pool import _max_pool_images, _PoolPlan

# Rows are taken in blocks of about this many bytes of output: inside L2, so the activation reads
# back what the addition just wrote from cache.  Measured on the LeNet bias + ReLU (128 x 28 x 28 x
# 32 float32, into a kept buffer, best of 30, 2 threads): 1.7-2.1 ms at 1 MiB against 2.7-3.0 ms for
# the unfused add then ReLU; 64-256 KiB blocks pay more in per-call overhead than they save.
BLOCK_BYTES = 1 << 20


def _relu(block):
    relu_block(block, block)


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
    return conv2d(x, w, strides, dilations, pads, out=out, epilogue=_bias_activation(bias, activation))


def _bias_activation(bias: np.ndarray, activation: str):
    """The epilogue adding ``bias`` to a block of a conv's result then applying ``activation``, in place."""
    apply = ACTIVATIONS[activation]

    def epilogue(block: np.ndarray) -> None:
        np.add(block, bias, out=block)
        apply(block)

    return epilogue


def conv2d_add_activation_max_pool(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    pool_ksize: Pair,
    pool_strides: Pair,
    pool_pads: Pads,
    *,
    activation: str,
    out: tuple | None = None,
    strategy: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``h = activation(conv2d(x, w) + bias)`` and ``max_pool(h)``: each block of images of ``h`` is pooled just
    after its bias and activation, while it is in cache, bit for bit as :func:`conv2d_add_activation` then
    :func:`~.pool.max_pool` (a maximum is exact, and each element gets the unfused operations).

    ``out`` is None or a pair ``(h or None, pooled or None)`` of C-contiguous arrays of the results' shapes and
    dtype to write into; what is None is allocated.  ``strategy`` forces the conv's (see :func:`.conv.conv2d`).

    >>> x, w = np.arange(16.0).reshape(1, 4, 4, 1), np.ones((1, 1, 1, 1))
    >>> no_pads = ((0, 0), (0, 0))
    >>> h, pooled = conv2d_add_activation_max_pool(
    ...     x, w, np.array([-5.0]), (1, 1), (1, 1), no_pads, (2, 2), (2, 2), no_pads, activation="relu"
    ... )
    >>> pooled[0, :, :, 0]
    array([[ 0.,  2.],
           [ 8., 10.]])
    """
    h, pooled = (None, None) if out is None else out
    out_hw, _ = resolve_conv_padding(x.shape[1:3], w.shape[:2], strides, dilations, pads)
    h_shape, dtype = (x.shape[0], *out_hw, w.shape[3]), np.result_type(x, w)
    if h is None:
        h = np.empty(h_shape, dtype)
    plan = _PoolPlan("conv2d_add_activation_max_pool", h_shape, pool_ksize, pool_strides, pool_pads, dtype)
    pooled_shape = (h_shape[0], *plan.geometry.out_hw, h_shape[3])
    if pooled is None:
        pooled = np.empty(pooled_shape, dtype)
    elif pooled.shape != pooled_shape or pooled.dtype != dtype or not pooled.flags.c_contiguous:
        raise ValueError(
            f"conv2d_add_activation_max_pool: the pooled out must be a C-contiguous {dtype}{list(pooled_shape)} "
            f"array, got {pooled.dtype}{list(pooled.shape)}"
        )

    def pool_images(start: int, stop: int) -> None:
        _max_pool_images(plan, h, pooled, start, stop)

    epilogue = _bias_activation(bias, activation)
    conv2d(x, w, strides, dilations, pads, strategy=strategy, out=h, epilogue=epilogue, image_epilogue=pool_images)
    return h, pooled
