"""A conv layer's gradients in fewer passes over its output gradient ``dy``: the kernels of the
``Conv2DBackpropFilterWithBias`` and ``Conv2DBackprop`` ops the graph optimizer fuses.

Unfused, the bias gradient (a sum of ``dy`` over N, H, W), the filter gradient and the input gradient
each stream the whole of ``dy`` from memory, and with the fourier_gemm strategy the last two each
compute its spectrum.  Here the bias gradient is summed from each block of ``dy`` while the filter
gradient has it in cache (patch strategies), or read off the zero frequency of ``dy``'s spectrum
(fourier_gemm); and with fourier_gemm one pass computes each chunk's spectrum of ``dy`` once for all
three gradients.  The sums run in lanes of image blocks added in lane order, so results are the same
bits whichever thread ran which lane; they equal the unfused kernels' to rounding.
"""

from __future__ import annotations

import numpy as np

from .blocks import Pads, Pair, _blocks, _images_per_block, _scratch
from .conv import FOURIER_GEMM, _all_finite, _checked_out, _ConvShapes, _filter_gradient, conv2d_backprop_input
from .fourier import NonFiniteSpectrum, _fourier_conv2d_backprop

# Images of the input gradient masked at a time after a patch strategy wrote it (inside L2).
_MASK_BLOCK_BYTES = 1 << 20


def conv2d_backprop_filter_bias(
    x: np.ndarray,
    filter_shape: tuple[int, int, int, int],
    dy: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    *,
    strategy: str | None = None,
    out=None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(conv2d_backprop_filter(x, filter_shape, dy, ...), dy.sum(axis=(0, 1, 2)))`` with ``dy`` read once.

    ``strategy`` forces a conv strategy (see :func:`.conv.conv2d_strategy`); ``out`` is None or a pair of
    arrays-or-None to write the results into.

    >>> x, dy = np.arange(9.0).reshape(1, 3, 3, 1), np.ones((1, 2, 2, 1))
    >>> dw, db = conv2d_backprop_filter_bias(x, (2, 2, 1, 1), dy, (1, 1), (1, 1), ((0, 0), (0, 0)))
    >>> dw[:, :, 0, 0].tolist(), db.tolist()
    ([[8.0, 12.0], [20.0, 24.0]], [4.0])
    """
    name = "conv2d_backprop_filter_bias"
    results = _filter_gradient(x, filter_shape, dy, strides, dilations, pads, strategy, bias=True, name=name)
    return _into(name, results, out)


def conv2d_backprop(
    x: np.ndarray,
    w: np.ndarray,
    dy: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    *,
    strategy: str | None = None,
    relu_grad: bool = False,
    out=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(input gradient, filter gradient, bias gradient)`` of ``conv2d(x, w) + bias`` for the output gradient
    ``dy``: with fourier_gemm in one pass that computes each chunk's spectrum of ``dy`` once; with the patch
    strategies the input gradient's kernel, then the filter gradient's with the bias sum inside.

    ``relu_grad=True`` passes the input gradient back through a ReLU whose output is ``x``: it is
    ``relu_grad(input gradient, x)`` (zero where ``x <= 0``), applied to each block of it while it is in cache,
    bit for bit as :func:`.activations.relu_grad` would.  ``out`` is None or a triple of arrays-or-None to write
    the results into (the input gradient is written there directly).

    >>> x, w, dy = np.arange(9.0).reshape(1, 3, 3, 1), np.ones((2, 2, 1, 1)), np.ones((1, 2, 2, 1))
    >>> dx, dw, db = conv2d_backprop(x, w, dy, (1, 1), (1, 1), ((0, 0), (0, 0)))
    >>> dx[0, :, :, 0].tolist(), dw[:, :, 0, 0].tolist(), db.tolist()
    ([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]], [[8.0, 12.0], [20.0, 24.0]], [4.0])
    """
    name = "conv2d_backprop"
    dtype = np.result_type(x, w, dy)
    conv = _ConvShapes(name, x.shape, w.shape, strides, dilations, pads, dtype, strategy)
    conv.patches_unless_finite(w)
    dx_out = _checked_out(name, None if out is None else out[0], x.shape, dtype)
    results = None
    if conv.strategy == FOURIER_GEMM:
        dy = conv.check_out_gradient(name, dy)
        conv.patches_unless_accurate(dy, transposed=True, w=w)  # (the filter gradient's check too: see there)
    if conv.strategy == FOURIER_GEMM:
        dx = np.empty(x.shape, dtype) if dx_out is None else dx_out
        epilogue = _relu_masks(dx, x) if relu_grad else None
        try:
            results = _fourier_conv2d_backprop(conv, x, w, dy, dx, epilogue)
            if not _all_finite(results[1:]):  # an overflow in the filter gradient's sums (see _all_finite)
                results = None
        except NonFiniteSpectrum:
            pass
        if results is None:
            conv.use_patches()  # and write all of dx again
    if results is None:
        dx = conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads, strategy=conv.strategy, out=dx_out)
        if relu_grad:
            mask = _relu_masks(dx, x)
            for start, stop in _blocks(x.shape[0], _images_per_block(x.shape[0], dx[:1].nbytes, _MASK_BLOCK_BYTES)):
                mask(start, stop)
        results = (dx, *_filter_gradient(x, w.shape, dy, strides, dilations, pads, conv.strategy, bias=True, name=name))
    return _into(name, results, out)


def _relu_masks(dx: np.ndarray, x: np.ndarray):
    """``mask(start, stop)``: images ``start:stop`` of ``dx`` multiplied in place by ``x > 0`` (as 1.0 / 0.0 of
    ``dx``'s dtype, in that order: :func:`.activations.relu_grad`'s operations, so NaN and inf in ``dx``
    stay where it keeps them)."""

    def mask(start: int, stop: int) -> None:
        block = dx[start:stop]
        ones = _scratch("relu_mask", block.shape, block.dtype)
        np.greater(x[start:stop], 0, out=ones)
        np.multiply(ones, block, out=block)

    return mask


def _into(name: str, results: tuple, out) -> tuple:
    """``results``, each copied into its ``out`` array where one is given (and is not the result already)."""
    if out is None:
        return tuple(results)
    given = []
    for result, target in zip(results, out):
        if target is not None and target is not result:
            np.copyto(_checked_out(name, target, result.shape, result.dtype), result)
            result = target
        given.append(result)
    return tuple(given)
