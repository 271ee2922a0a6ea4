"""2-D convolution, its input gradient and its filter gradient: the strategy choice and the
patch-GEMM kernels (shifted_gemm, im2col_gemm); fourier_gemm lives in :mod:`.fourier`."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .blas import single_threaded
from .blocks import (
    Pads,
    Pair,
    _add_thin_gemm,
    _as_compute,
    _blocks,
    _compute_dtype,
    _Geometry,
    _images_per_block,
    _PaddedBlocks,
    _PaddedScatter,
    _parallel,
    _scratch,
    _share_blocks,
    _share_lanes,
    _shared_blocks,
    _single_thread_gemm,
    _thin_gemm_step,
    resolve_conv_padding,
)
from .fourier import (
    NonFiniteSpectrum,
    _fourier_conv2d,
    _fourier_conv2d_backprop_filter,
    _fourier_conv2d_backprop_input,
    _fourier_flops,
    _fourier_lengths,
    loses_dim_windows,
    overflow_limit,
)
from .sums import column_sums

# A conv patch block of this size fits in the L2+L3 caches of the machines we
# measured on; bigger blocks were slower for the seed and CNN workloads.
_PATCH_BLOCK_BYTES = 4 << 20

# im2col_gemm copies runs of Cin values, shifted_gemm runs of OW values; the
# measured crossover: shifted_gemm wins up to 4 input channels on any width,
# and while output rows are at least 4x longer than the channel count.
_SHIFTED_GEMM_MAX_CHANNELS = 4
_SHIFTED_GEMM_ROW_PER_CHANNEL = 4

# fourier_gemm's small batched GEMMs ran at a third of the direct method's
# flop rate in our measurements, so it must save that factor in flops.
_FOURIER_OVERHEAD = 3

SHIFTED_GEMM = "shifted_gemm"
IM2COL_GEMM = "im2col_gemm"
FOURIER_GEMM = "fourier_gemm"


def conv2d_strategy(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    strides: Pair,
    dilations: Pair,
    pads: Pads,
) -> str:
    """Which algorithm the three conv kernels use for these shapes.

    * ``"fourier_gemm"`` when its flop count, times 3 for its smaller
      GEMMs, is below the direct method's ``2 * OH * OW * KH * KW * Cin *
      Cout`` per image, and the filter's spectrum (``4 * F * Cin * Cout``
      values, ``F`` about half the transform's pixels) is no bigger than
      the batch's input and output: products of discrete Fourier spectra
      over (at most) the padded image (see ``_FourierPlan``). It pays for large
      filters on small images, like a 5x5 conv from 32 to 64 channels on
      14x14.
    * else ``"shifted_gemm"`` when the input has at most 4 channels or the
      output rows are at least 4 times longer than the channel count: each
      tap's shifted, strided view of the input is copied as whole output
      rows into a ``(taps * Cin, pixels)`` block and the ``KH*KW`` per-tap
      GEMMs are summed inside one BLAS call.
    * else ``"im2col_gemm"``: patches laid out ``(pixels, taps * Cin)``, one
      GEMM per block; each copy run is ``Cin`` values long.

    All three give the same result to rounding, relative to each image's
    largest values.  Relative to each output's own window a transform is
    less accurate (its error spreads over the whole image), so the kernels
    run an image with windows far dimmer than its brightest (or an inf or
    NaN) by patches even where this picks ``"fourier_gemm"``: see
    :func:`.fourier.loses_dim_windows`.

    >>> conv2d_strategy((6000, 32, 32, 1), (3, 3, 1, 6), (1, 1), (1, 1), ((0, 0), (0, 0)))
    'shifted_gemm'
    >>> conv2d_strategy((128, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), ((2, 2), (2, 2)))
    'fourier_gemm'
    >>> conv2d_strategy((128, 28, 28, 32), (3, 3, 32, 64), (2, 2), (1, 1), ((0, 1), (0, 1)))
    'im2col_gemm'
    """
    (batch, h, w, in_c), (kh, kw, _, out_c) = x_shape, w_shape
    out_hw, _ = resolve_conv_padding((h, w), (kh, kw), strides, dilations, pads)
    lengths = _fourier_lengths((h, w), out_hw, (kh, kw), strides, dilations, pads)
    direct_flops = 2 * out_hw[0] * out_hw[1] * kh * kw * in_c * out_c
    fourier_flops = _fourier_flops((h, w), out_hw, lengths, in_c, out_c)
    frequencies = (lengths[0] // 2 + 1) * lengths[1]
    activations = batch * (h * w * in_c + out_hw[0] * out_hw[1] * out_c)
    if fourier_flops * _FOURIER_OVERHEAD < direct_flops and 4 * frequencies * in_c * out_c <= activations:
        return FOURIER_GEMM
    return _patch_strategy(in_c, out_hw[1])


def _patch_strategy(in_channels: int, out_w: int) -> str:
    if in_channels <= _SHIFTED_GEMM_MAX_CHANNELS or in_channels * _SHIFTED_GEMM_ROW_PER_CHANNEL <= out_w:
        return SHIFTED_GEMM
    return IM2COL_GEMM


class _ConvShapes:
    """The checked shapes, geometry, dtypes and strategy of one conv call."""

    def __init__(self, name, x_shape, w_shape, strides, dilations, pads, dtype, strategy):
        if len(x_shape) != 4 or len(w_shape) != 4 or x_shape[3] != w_shape[2]:
            raise ValueError(
                f"{name}: input depth {x_shape[3] if len(x_shape) == 4 else '?'} "
                f"does not match filter in_channels "
                f"{w_shape[2] if len(w_shape) == 4 else '?'} (input shape "
                f"{tuple(x_shape)}, filter shape {tuple(w_shape)}); expected "
                f"NHWC input and HWIO filter"
            )
        self.geometry = _Geometry.build(name, x_shape[1:3], w_shape[:2], strides, dilations, pads)
        self.batch = x_shape[0]
        self.in_channels, self.out_channels = w_shape[2], w_shape[3]
        self.dtype = np.dtype(dtype)
        self.compute_dtype = _compute_dtype(dtype)
        if strategy is None:
            strategy = conv2d_strategy(x_shape, w_shape, strides, dilations, pads)
        if strategy not in (SHIFTED_GEMM, IM2COL_GEMM, FOURIER_GEMM):
            raise ValueError(
                f"{name}: unknown strategy {strategy!r}; use {SHIFTED_GEMM!r}, {IM2COL_GEMM!r} or {FOURIER_GEMM!r}"
            )
        self.strategy = strategy

    def patches_unless_finite(self, *operands: np.ndarray) -> None:
        """Trade fourier_gemm for a patch strategy when an operand holds an inf or a NaN: its spectrum spreads
        that value over the whole image (every output of it NaN), where the direct sums keep it in the
        windows that read it.  Only for the filter, which is small: the images are checked by the spectra
        themselves (:class:`.fourier.NonFiniteSpectrum`, :meth:`use_patches`) at no extra pass over them."""
        if self.strategy == FOURIER_GEMM and not all(np.isfinite(a).all() for a in operands):
            self.use_patches()

    def patches_unless_accurate(
        self, signal: np.ndarray, transposed: bool = False, unless_even=None, w: np.ndarray | None = None
    ) -> None:
        """Trade fourier_gemm for a patch strategy when it would lose the digits of the dim windows of an image
        of ``signal`` (the input, or with ``transposed`` the output gradient of an input gradient): see
        :func:`.fourier.loses_dim_windows`.  With ``unless_even`` (the input, for a filter gradient: a sum over
        every pixel of input times output gradient) only when the input has dim windows too: the transform's
        error is then a fraction of an epsilon of the bright input times the bright gradient, which a sum whose
        bright values fall on each other's dim ones may lie far below (4.7e-3 of it, measured at 1e6 contrast).
        With the filter ``w`` (for the output or the input gradient), also where an image of ``signal`` is so
        large that the transform's sums could overflow (:func:`.fourier.overflow_limit`), and with each tap's
        cells weighed by the tap's magnitude (a filter whose taps differ by orders of magnitude)."""
        if self.strategy != FOURIER_GEMM:
            return
        limit = math.inf if w is None else overflow_limit(self.geometry, w, self.compute_dtype)
        if not loses_dim_windows(signal, self.geometry, transposed, limit, w):
            return
        if unless_even is None or loses_dim_windows(unless_even, self.geometry, False):
            self.use_patches()

    def use_patches(self) -> None:
        """Run with the patch strategy the shapes suit: after a fourier_gemm kernel met an inf or a NaN."""
        self.strategy = _patch_strategy(self.in_channels, self.geometry.out_hw[1])

    def check_out_gradient(self, name: str, dy: np.ndarray) -> np.ndarray:
        expected = (self.batch, *self.geometry.out_hw, self.out_channels)
        if dy.shape != expected:
            raise ValueError(
                f"{name}: output gradient shape {tuple(dy.shape)} does not match the conv output shape {expected}"
            )
        return np.ascontiguousarray(dy)


class _PatchLayout:
    """Where a block's ``K = KH*KW*Cin`` patch values per output pixel live.

    shifted_gemm: ``(taps, Cin, images, rows, OW)``; the ``(pixels, K)`` patch
    matrix is a transposed (Fortran-ordered) view, which BLAS takes as is.
    im2col_gemm: ``(images, rows, OW, taps, Cin)``; the matrix is C-ordered.
    """

    def __init__(self, strategy: str, taps: int, in_channels: int):
        self.tap_major = strategy == SHIFTED_GEMM
        self.taps = taps
        self.in_channels = in_channels

    def allocate(self, storage: np.ndarray, images: int, rows: int, out_w: int):
        """A patch block carved from the front of the flat ``storage``."""
        size = self.taps * self.in_channels * images * rows * out_w
        if self.tap_major:
            shape = (self.taps, self.in_channels, images, rows, out_w)
        else:
            shape = (images, rows, out_w, self.taps, self.in_channels)
        return storage[:size].reshape(shape)

    def tap_block(self, patches: np.ndarray, tap_index: int) -> np.ndarray:
        """The part of ``patches`` for one tap, axes ordered as by :meth:`arrange`."""
        if self.tap_major:
            return patches[tap_index]
        return patches[:, :, :, tap_index, :]

    def arrange(self, view: np.ndarray) -> np.ndarray:
        """An ``(images, rows, OW, Cin)`` view with its axes in the block's
        order, so that element-wise loops run along the block's long rows."""
        return view.transpose(3, 0, 1, 2) if self.tap_major else view

    def arrange_taps(self, views: np.ndarray) -> np.ndarray:
        """The ``(KH, KW, images, rows, OW, Cin)`` views of all taps with their
        axes in the order of :meth:`tap_grid`."""
        return views.transpose(0, 1, 5, 2, 3, 4) if self.tap_major else views.transpose(2, 3, 4, 0, 1, 5)

    def tap_grid(self, patches: np.ndarray, kernel_hw: Pair) -> np.ndarray:
        """``patches`` with its taps axis split into the filter's ``(KH, KW)``."""
        if self.tap_major:
            return patches.reshape(*kernel_hw, *patches.shape[1:])
        return patches.reshape(*patches.shape[:3], *kernel_hw, self.in_channels)

    def matrix(self, patches: np.ndarray) -> np.ndarray:
        """The ``(pixels, K)`` patch matrix, K ordered like an HWIO filter."""
        k = self.taps * self.in_channels
        if self.tap_major:
            return patches.reshape(k, -1).T
        return patches.reshape(-1, k)


class _PatchPlan:
    """Blocks and the reused patch buffer of shifted_gemm and im2col_gemm."""

    def __init__(self, conv: _ConvShapes):
        self.conv = conv
        self.geometry = conv.geometry
        taps = len(self.geometry.taps)
        self.layout = _PatchLayout(conv.strategy, taps, conv.in_channels)
        self.k = taps * conv.in_channels
        out_h, out_w = self.geometry.out_hw
        row_bytes = out_w * self.k * conv.compute_dtype.itemsize
        self.images = _images_per_block(conv.batch, out_h * row_bytes, _PATCH_BLOCK_BYTES)
        # An image too big for one block is split into bands of output rows.
        self.rows = out_h
        if out_h * row_bytes > _PATCH_BLOCK_BYTES:
            self.rows = max(1, _PATCH_BLOCK_BYTES // row_bytes)
        self.pixels = self.images * self.rows * out_w

    def image_blocks(self) -> Iterator[Pair]:
        return _blocks(self.conv.batch, self.images)

    def share_image_blocks(self, run, parallel: bool) -> None:
        """``run(blocks)`` over the image blocks, in threads when ``parallel``."""
        _share_blocks(run, _shared_blocks(self.conv.batch, self.images, parallel), parallel)

    def share_image_lanes(self, run, parallel: bool) -> list:
        """``run(blocks)`` for each lane of image blocks, in threads when ``parallel``: the results in lane order."""
        return _share_lanes(run, _shared_blocks(self.conv.batch, self.images, parallel), parallel)

    def row_blocks(self) -> Iterator[Pair]:
        return _blocks(self.geometry.out_hw[0], self.rows)

    def out_gradient_blocks(self, dy: np.ndarray, start: int, stop: int):
        """Yield ``(rows, dy block as a (pixels, Cout) compute-dtype matrix)``."""
        scratch = _scratch("out_gradient", self.pixels * self.conv.out_channels, self.conv.compute_dtype)
        for rows in self.row_blocks():
            block = dy[start:stop, rows[0] : rows[1]].reshape(-1, self.conv.out_channels)
            yield rows, _as_compute(block, scratch)

    def _patches(self, images: int, rows: Pair) -> np.ndarray:
        storage = _scratch("patches", self.pixels * self.k, self.conv.compute_dtype)
        return self.layout.allocate(storage, images, rows[1] - rows[0], self.geometry.out_hw[1])

    def gather(self, padded: np.ndarray, rows: Pair) -> np.ndarray:
        """The patch matrix of the output ``rows`` of the padded image block.

        All taps are copied by one call: NumPy runs it without the GIL, where
        one short copy per tap made the threads of a shared-out conv take
        turns (and cost a call's overhead per tap)."""
        patches = self._patches(padded.shape[0], rows)
        views = self.layout.arrange_taps(_all_tap_views(self.geometry, padded, rows))
        np.copyto(self.layout.tap_grid(patches, self.geometry.kernel_hw), views)
        return self.layout.matrix(patches)

    def gather_with_ones(self, padded: np.ndarray, rows: Pair) -> np.ndarray | None:
        """The transposed patch matrix ``(K + 1, pixels)`` of the output ``rows`` with a row of ones below, for
        the tap-major layout (else None): its product with a ``dy`` block is the filter gradient's and, in the
        last row, the bias gradient's share of the block, in one GEMM that reads the block once.

        The ones follow the patches in the one buffer of their purpose, grown here to hold them."""
        if not self.layout.tap_major:
            return None
        storage = _scratch("patches", self.pixels * (self.k + 1), self.conv.compute_dtype)
        # A block too big to keep has a buffer per call: then the patches are not followed by the ones.
        if not np.may_share_memory(_scratch("patches", self.pixels * self.k, self.conv.compute_dtype), storage):
            return None
        patches_t = self.gather(padded, rows).T
        pixels = patches_t.shape[1]
        storage[self.k * pixels : (self.k + 1) * pixels] = 1
        return storage[: (self.k + 1) * pixels].reshape(self.k + 1, pixels)

    def scatter_add(self, padded: np.ndarray, rows: Pair, dy_block, w_matrix) -> None:
        """Add the patch matrix ``dy_block @ w_matrix.T`` into ``padded``.

        This is the transpose of :meth:`gather`: every tap's share is added
        into the strided view of the padded block that the tap reads.
        """
        patches = self._patches(padded.shape[0], rows)
        matrix = self.layout.matrix(patches)
        # Write through the C-ordered orientation, the one BLAS can fill.
        if matrix.flags.c_contiguous:
            np.matmul(dy_block, w_matrix.T, out=matrix)
        else:
            np.matmul(w_matrix, dy_block.T, out=matrix.T)
        for index, tap in enumerate(self.geometry.taps):
            view = self.layout.arrange(self.geometry.tap_view(padded, tap, rows))
            # order="C" keeps NumPy from looping along the Cin axis, which
            # is the contiguous one of the view but only 1-4 long here.
            np.add(view, self.layout.tap_block(patches, index), out=view, order="C")

    def filter_matrix(self, w: np.ndarray) -> np.ndarray:
        """The filter as a contiguous ``(K, Cout)`` matrix in compute dtype."""
        return np.ascontiguousarray(w.reshape(self.k, self.conv.out_channels), self.conv.compute_dtype)


def _all_tap_views(geometry: _Geometry, padded: np.ndarray, rows: Pair) -> np.ndarray:
    """A read-only ``(KH, KW, images, rows, OW, C)`` view of ``padded`` whose
    ``[i, j]`` is ``geometry.tap_view(padded, (i, j), rows)``: tap ``(i, j)``
    starts ``i * dilation_h`` rows and ``j * dilation_w`` columns after tap
    ``(0, 0)``, and every tap's view lies inside ``padded``."""
    first = geometry.tap_view(padded, (0, 0), rows)
    tap_strides = (padded.strides[1] * geometry.dilations[0], padded.strides[2] * geometry.dilations[1])
    return np.lib.stride_tricks.as_strided(
        first, (*geometry.kernel_hw, *first.shape), (*tap_strides, *first.strides), writeable=False
    )


def _gemm_into(a: np.ndarray, b: np.ndarray, target: np.ndarray, scratch) -> None:
    """``target[...] = a @ b``, through a compute-dtype scratch when casting."""
    if target.dtype == a.dtype:
        _single_thread_gemm(a, b, target)
    else:
        result = scratch[: target.size].reshape(target.shape)
        _single_thread_gemm(a, b, result)
        np.copyto(target, result)


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    *,
    strategy: str | None = None,
    out: np.ndarray | None = None,
    epilogue=None,
    image_epilogue=None,
) -> np.ndarray:
    """2-D convolution (TensorFlow's cross-correlation), NHWC x HWIO -> NHWC.

    ``strategy`` forces ``"shifted_gemm"``, ``"im2col_gemm"`` or
    ``"fourier_gemm"``; by default :func:`conv2d_strategy` picks one from the
    shapes. ``out`` (optional, C-contiguous, of the result's shape and dtype)
    receives the result. ``epilogue`` (optional) is called on each block of
    the result just written, an ``(..., Cout)`` view to change in place while
    it is still in cache: a fused bias and activation. ``image_epilogue``
    (optional) is called as ``image_epilogue(start, stop)`` once the images
    ``start:stop`` of the result are complete (``epilogue`` included), by the
    thread that wrote them: per-image work such as a fused pooling.

    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> w = np.ones((2, 2, 1, 1))
    >>> conv2d(x, w, (2, 2), (1, 1), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[10., 18.],
           [42., 50.]])
    """
    dtype = np.result_type(x, w)
    conv = _ConvShapes("conv2d", x.shape, w.shape, strides, dilations, pads, dtype, strategy)
    conv.patches_unless_finite(w)
    conv.patches_unless_accurate(x, w=w)
    out_h, out_w = conv.geometry.out_hw
    shape = (conv.batch, out_h, out_w, conv.out_channels)
    if out is None:
        out = np.empty(shape, dtype)
    elif out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(
            f"conv2d: out must be a C-contiguous {dtype}{list(shape)} array, got {out.dtype}{list(out.shape)}"
        )
    if conv.strategy == FOURIER_GEMM:
        try:
            return _fourier_conv2d(conv, x, w, out, epilogue, image_epilogue)
        except NonFiniteSpectrum:
            conv.use_patches()  # and write all of ``out`` again
    plan = _PatchPlan(conv)
    w_matrix = plan.filter_matrix(w)

    def run(blocks) -> None:
        scratch = _scratch("cast_result", plan.pixels * conv.out_channels, conv.compute_dtype)
        padded_blocks = _PaddedBlocks(x, conv.geometry.pads, plan.images, 0, conv.compute_dtype)
        for start, stop in blocks:
            padded = padded_blocks.load(start, stop)
            for rows in plan.row_blocks():
                target = out[start:stop, rows[0] : rows[1]].reshape(-1, conv.out_channels)
                _gemm_into(plan.gather(padded, rows), w_matrix, target, scratch)
                if epilogue is not None:
                    epilogue(target)
            if image_epilogue is not None:
                image_epilogue(start, stop)

    plan.share_image_blocks(run, _parallel(max(x.nbytes, out.nbytes)))
    return out


def _all_finite(arrays) -> bool:
    """Whether the arrays (None stands for none) hold no inf or NaN: a fourier_gemm filter or bias gradient is
    checked this way (it is small) before it is returned, as an overflow in any of the transform's sums reaches
    it as an inf or a NaN (every later sum is a GEMM that multiplies it, by 0 too: inf * 0 is NaN), which the
    patches, run instead, keep only where the exact sum overflows too."""
    return all(a is None or np.isfinite(a).all() for a in arrays)


def _checked_out(name: str, out: np.ndarray | None, shape: tuple, dtype) -> np.ndarray | None:
    """``out`` when it can receive a ``dtype`` result of ``shape`` (C-contiguous), else a ValueError naming both."""
    if out is not None and (out.shape != tuple(shape) or out.dtype != dtype or not out.flags.c_contiguous):
        raise ValueError(
            f"{name}: out must be a C-contiguous {np.dtype(dtype)}{list(shape)} array, got {out.dtype}{list(out.shape)}"
        )
    return out


def conv2d_backprop_input(
    input_shape: tuple[int, int, int, int],
    w: np.ndarray,
    dy: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    *,
    strategy: str | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Gradient of :func:`conv2d` with respect to its input (a transposed conv).

    With the patch strategies, one GEMM ``dy @ w_matrix.T`` per block gives
    every tap's contribution; each tap's share is added into the strided
    view of a zero-padded ``dx`` block that the tap read in the forward
    pass, and the padding is cropped off. With ``"fourier_gemm"`` the
    spectrum of ``dy`` is multiplied by the filter's and synthesized at the
    input's positions. ``out`` (optional, C-contiguous, of the result's shape and dtype)
    receives the result.

    >>> w = np.ones((2, 2, 1, 1))
    >>> dy = np.ones((1, 2, 2, 1))
    >>> conv2d_backprop_input((1, 3, 3, 1), w, dy, (1, 1), (1, 1), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    input_shape = tuple(int(d) for d in input_shape)
    dtype = np.result_type(w, dy)
    name = "conv2d_backprop_input"
    conv = _ConvShapes(name, input_shape, w.shape, strides, dilations, pads, dtype, strategy)
    dy = conv.check_out_gradient(name, dy)
    conv.patches_unless_finite(w)
    conv.patches_unless_accurate(dy, transposed=True, w=w)
    out = _checked_out(name, out, input_shape, dtype)
    if conv.strategy == FOURIER_GEMM:
        try:
            return _fourier_conv2d_backprop_input(conv, w, dy, out)
        except NonFiniteSpectrum:
            conv.use_patches()
    plan = _PatchPlan(conv)
    w_matrix = plan.filter_matrix(w)
    scatter = _PaddedScatter(input_shape, dtype, conv.geometry.pads, plan.images, conv.compute_dtype, out=out)

    def run(blocks) -> None:
        for start, stop in blocks:
            padded_dx = scatter.begin(start, stop)
            for rows, dy_block in plan.out_gradient_blocks(dy, start, stop):
                plan.scatter_add(padded_dx, rows, dy_block, w_matrix)
            scatter.finish(start, stop)

    # The images are shared out, each block's GEMM on one BLAS thread (see .blas).
    flops = 2 * conv.batch * math.prod(conv.geometry.out_hw) * plan.k * conv.out_channels
    with single_threaded:
        plan.share_image_blocks(run, _parallel(dy.nbytes + scatter.dx.nbytes, flops))
    return scatter.dx


def conv2d_backprop_filter(
    x: np.ndarray,
    filter_shape: tuple[int, int, int, int],
    dy: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    *,
    strategy: str | None = None,
) -> np.ndarray:
    """Gradient of :func:`conv2d` with respect to its filter.

    The contraction of the input patches with ``dy`` over batch and pixels:
    with the patch strategies, one GEMM ``patches.T @ dy`` per block, summed
    over the blocks; with ``"fourier_gemm"``, the sum over images of the
    input's spectrum times the conjugate of ``dy``'s, synthesized at the
    filter taps.

    >>> x = np.arange(9.0).reshape(1, 3, 3, 1)
    >>> dy = np.ones((1, 2, 2, 1))
    >>> conv2d_backprop_filter(x, (2, 2, 1, 1), dy, (1, 1), (1, 1), ((0, 0), (0, 0)))[:, :, 0, 0]
    array([[ 8., 12.],
           [20., 24.]])
    """
    return _filter_gradient(x, filter_shape, dy, strides, dilations, pads, strategy, bias=False)[0]


def _filter_gradient(x, filter_shape, dy, strides, dilations, pads, strategy, *, bias: bool, name=None):
    """``(filter gradient, bias gradient or None)``: with ``bias``, the sum of ``dy`` over (N, H, W) is taken
    from each block of ``dy`` while the filter gradient has it in cache, instead of in a pass of its own."""
    filter_shape = tuple(int(d) for d in filter_shape)
    dtype = np.result_type(x, dy)
    name = name or "conv2d_backprop_filter"
    conv = _ConvShapes(name, x.shape, filter_shape, strides, dilations, pads, dtype, strategy)
    dy = conv.check_out_gradient(name, dy)
    conv.patches_unless_accurate(dy, transposed=True, unless_even=x)
    if conv.strategy == FOURIER_GEMM:
        try:
            results = _fourier_conv2d_backprop_filter(conv, x, dy, bias)
            if _all_finite(results):
                return results
        except NonFiniteSpectrum:
            pass
        conv.use_patches()
    plan = _PatchPlan(conv)

    # Each lane of image blocks sums its blocks' products in order; the lanes' totals are summed in
    # order: the same bits whichever thread ran which lane.
    # With the bias, the tap-major layout's patches get a row of ones: the GEMM's last row is the bias gradient
    # (the other layout sums each dy block's columns just after its GEMM read it).
    ones = bias and plan.layout.tap_major
    k = plan.k + ones
    step = _thin_gemm_step(k, conv.out_channels)

    def run(blocks):
        total = np.zeros((k, conv.out_channels), conv.compute_dtype)
        partial = np.empty_like(total)
        bias_total = np.zeros(conv.out_channels, conv.compute_dtype) if bias else None
        padded_blocks = _PaddedBlocks(x, conv.geometry.pads, plan.images, 0, conv.compute_dtype)
        for start, stop in blocks:
            padded = padded_blocks.load(start, stop)
            for rows, dy_block in plan.out_gradient_blocks(dy, start, stop):
                patches_t = plan.gather_with_ones(padded, rows) if ones else None
                if patches_t is None:
                    patches_t = plan.gather(padded, rows).T
                    if bias:
                        bias_total += column_sums(dy_block)
                product = total if patches_t.shape[0] == k else total[: plan.k]
                if step:
                    _add_thin_gemm(patches_t, dy_block, product, step)
                else:
                    np.matmul(patches_t, dy_block, out=partial[: product.shape[0]])
                    product += partial[: product.shape[0]]
        if ones:
            bias_total += total[plan.k]
        return total[: plan.k], bias_total

    # The images are shared out, each thread's products on one BLAS thread (see .blas).
    flops = 2 * conv.batch * math.prod(conv.geometry.out_hw) * plan.k * conv.out_channels
    with single_threaded:
        totals = plan.share_image_lanes(run, _parallel(x.nbytes + dy.nbytes, flops))
    total, bias_total = totals[0]
    for other, other_bias in totals[1:]:
        total += other
        if bias:
            bias_total += other_bias
    dw = total.astype(dtype, copy=False).reshape(filter_shape)
    return dw, (bias_total.astype(dy.dtype, copy=False) if bias else None)
