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

from .blocks import Pads, Pair
from .conv import FOURIER_GEMM, _checked_out, _ConvShapes, _filter_gradient, conv2d_backprop_input
from .fourier import _fourier_conv2d_backprop


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
    out=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(input gradient, filter gradient, bias gradient)`` of ``conv2d(x, w) + bias`` for the output gradient
    ``dy``: with fourier_gemm in one pass that computes each chunk's spectrum of ``dy`` once; with the patch
    strategies the input gradient's kernel, then the filter gradient's with the bias sum inside.

    ``out`` is None or a triple of arrays-or-None to write the results into (the input gradient is written
    there directly).

    >>> x, w, dy = np.arange(9.0).reshape(1, 3, 3, 1), np.ones((2, 2, 1, 1)), np.ones((1, 2, 2, 1))
    >>> dx, dw, db = conv2d_backprop(x, w, dy, (1, 1), (1, 1), ((0, 0), (0, 0)))
    >>> dx[0, :, :, 0].tolist(), dw[:, :, 0, 0].tolist(), db.tolist()
    ([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]], [[8.0, 12.0], [20.0, 24.0]], [4.0])
    """
    name = "conv2d_backprop"
    dtype = np.result_type(x, w, dy)
    conv = _ConvShapes(name, x.shape, w.shape, strides, dilations, pads, dtype, strategy)
    dx_out = _checked_out(name, None if out is None else out[0], x.shape, dtype)
    if conv.strategy == FOURIER_GEMM:
        dy = conv.check_out_gradient(name, dy)
        if dx_out is None:
            dx_out = np.empty(x.shape, dtype)
        results = _fourier_conv2d_backprop(conv, x, w, dy, dx_out)
    else:
        dx = conv2d_backprop_input(x.shape, w, dy, strides, dilations, pads, strategy=conv.strategy, out=dx_out)
        results = (dx, *_filter_gradient(x, w.shape, dy, strides, dilations, pads, conv.strategy, bias=True, name=name))
    return _into(name, results, out)


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
