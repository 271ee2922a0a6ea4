"""Average and max pooling and their gradients: rows reduced first, then columns."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .blocks import (
    Pads,
    Pair,
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
    _shared_blocks,
    _single_thread_gemm,
)

# Input bytes of one pooling block; its row-reduced copy then stays in L2.
_POOL_BLOCK_BYTES = 1 << 20

# Column pooling by a GEMM against stacked identities beats strided slices
# only while the GEMM's extra flops (2 * kw * C per output) stay small.
_GEMM_COLUMN_POOL_MAX_CHANNELS = 8

# max_pool_grad shares its images out between threads from this input size.
_MAX_POOL_GRAD_PARALLEL_MIN_BYTES = 1 << 21


class _PoolPlan:
    """Geometry, block size and the column-reduction method of one pooling.

    float16 is pooled in float32 like everywhere here: sums need the digits,
    and maxima, exact in either, run several times faster.
    """

    def __init__(self, name, x_shape, ksize, strides, pads, dtype):
        if len(x_shape) != 4:
            raise ValueError(f"{name}: expected an NHWC input, got shape {tuple(x_shape)}")
        self.geometry = _Geometry.build(name, x_shape[1:3], ksize, strides, (1, 1), pads)
        self.batch, in_h, in_w, self.channels = x_shape
        self.compute_dtype = _compute_dtype(dtype)
        (top, bottom), (left, right) = self.geometry.pads
        (kh, kw), (sh, sw) = self.geometry.kernel_hw, self.geometry.strides
        out_h, out_w = self.geometry.out_hw
        # Only the columns some window touches take part in row pooling.
        self.used_w = (out_w - 1) * sw + kw
        image_bytes = (in_h + top + bottom) * (in_w + left + right) * self.channels
        self.images = _images_per_block(self.batch, image_bytes * self.compute_dtype.itemsize, _POOL_BLOCK_BYTES)
        # Non-overlapping column windows tile the row-pooled block, so it can
        # be viewed as a (pixels, kw * C) matrix and pooled by one GEMM.
        self.columns_by_gemm = sw == kw and self.channels <= _GEMM_COLUMN_POOL_MAX_CHANNELS
        # Whether the windows cover the padded input once each, edge to edge.
        self.windows_tile = (sh, sw) == (kh, kw) and (out_h * kh, out_w * kw) == (
            in_h + top + bottom,
            in_w + left + right,
        )

    def image_blocks(self) -> Iterator[Pair]:
        return _blocks(self.batch, self.images)

    def share_image_blocks(self, run, nbytes: int) -> None:
        """``run(blocks)`` over the image blocks, in threads for an ``nbytes`` input big enough."""
        parallel = _parallel(nbytes)
        _share_blocks(run, _shared_blocks(self.batch, self.images, parallel), parallel)

    def row_tap_views(self, padded: np.ndarray) -> list[np.ndarray]:
        """Per row tap, the padded rows (as far as ``used_w``) that it meets."""
        out_h, sh = self.geometry.out_hw[0], self.geometry.strides[0]
        return [padded[:, i : i + (out_h - 1) * sh + 1 : sh, : self.used_w] for i in range(self.geometry.kernel_hw[0])]

    def col_tap_views(self, row_pooled: np.ndarray) -> list[np.ndarray]:
        """Per column tap, the cells of a row-pooled block that it meets."""
        out_w, sw = self.geometry.out_hw[1], self.geometry.strides[1]
        return [row_pooled[:, :, j : j + (out_w - 1) * sw + 1 : sw] for j in range(self.geometry.kernel_hw[1])]

    def column_sum_matrix(self) -> np.ndarray:
        """``(kw * C, C)`` stacked identities: summing column taps by GEMM."""
        eye = np.eye(self.channels, dtype=self.compute_dtype)
        return np.tile(eye, (self.geometry.kernel_hw[1], 1))

    def reciprocal_counts(self) -> np.ndarray | float:
        """1 / (number of real, unpadded cells) per window, as TF's avg pool.

        A scalar without padding; otherwise an ``(OH, OW, C)`` map (so the
        broadcast over images runs along long contiguous rows).
        """
        geometry = self.geometry
        if not geometry.has_padding:
            return 1.0 / (geometry.kernel_hw[0] * geometry.kernel_hw[1])
        counts = []
        for d in range(2):
            starts = np.arange(geometry.out_hw[d]) * geometry.strides[d] - geometry.pads[d][0]
            stops = starts + geometry.kernel_hw[d]
            counts.append(np.minimum(stops, geometry.in_hw[d]) - np.maximum(starts, 0))
        # A window lying wholly in explicit padding sums to 0; keep it 0.
        cells = np.maximum(np.outer(counts[0], counts[1]), 1)
        reciprocal = (1.0 / cells).astype(self.compute_dtype)
        return np.ascontiguousarray(np.broadcast_to(reciprocal[:, :, None], (*geometry.out_hw, self.channels)))


def _reduce_views(reduce: np.ufunc, views: list[np.ndarray], out: np.ndarray) -> None:
    """``out = reduce(views[0], views[1], ...)`` without temporaries."""
    if len(views) == 1:
        np.copyto(out, views[0])
        return
    reduce(views[0], views[1], out=out)
    for view in views[2:]:
        reduce(out, view, out=out)


def _leaks_nothing(values: np.ndarray, channels: int) -> bool:
    """Whether a GEMM against stacked identities sums ``values`` as the taps would: its zeros multiply every
    channel's value into every other channel, where an inf or a NaN would make NaN.  Checked on the GEMM's
    result (a finite sum that overflowed is then summed again by taps, to the same inf) or on its operand."""
    return channels == 1 or bool(np.isfinite(values).all())


def _pool_forward(plan: _PoolPlan, x: np.ndarray, reduce: np.ufunc, fill: float, scale=None):
    """Separable pooling: reduce each window's rows, then its columns.

    Row taps are views whose runs are whole padded rows, so that pass is
    cheap; the column pass runs on data already ``kh / sh`` times smaller.
    ``scale`` (sum pooling only: a scalar or an ``(OH, OW, C)`` map)
    multiplies the result before it is cast back to ``x``'s dtype.
    """
    out_h, out_w = plan.geometry.out_hw
    channels, kw = plan.channels, plan.geometry.kernel_hw[1]
    out = np.empty((plan.batch, out_h, out_w, channels), x.dtype)
    use_gemm = reduce is np.add and plan.columns_by_gemm
    gemm_scale = scale
    if use_gemm:
        column_matrix = plan.column_sum_matrix()
        if np.isscalar(scale):
            column_matrix *= scale
            gemm_scale = None
    needs_cast = plan.compute_dtype != x.dtype

    def run(blocks) -> None:
        block_shape = (plan.images, out_h, out_w, channels)
        row_pooled_all = _scratch("row_pooled", (plan.images, out_h, plan.used_w, channels), plan.compute_dtype)
        out_scratch = _scratch("cast_result", block_shape, plan.compute_dtype) if needs_cast else None
        padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, fill, plan.compute_dtype)
        for start, stop in blocks:
            padded = padded_blocks.load(start, stop)
            row_pooled = row_pooled_all[: stop - start]
            _reduce_views(reduce, plan.row_tap_views(padded), row_pooled)
            target = out_scratch[: stop - start] if needs_cast else out[start:stop]
            block_scale = scale
            if use_gemm:
                with np.errstate(invalid="ignore"):  # the NaN an inf makes here is not kept
                    _single_thread_gemm(
                        row_pooled.reshape(-1, kw * channels), column_matrix, target.reshape(-1, channels)
                    )
                block_scale = gemm_scale
            if not use_gemm or not _leaks_nothing(target, channels):  # (again) by taps
                _reduce_views(reduce, plan.col_tap_views(row_pooled), target)
                block_scale = scale
            if block_scale is not None:
                np.multiply(target, block_scale, out=target)
            if needs_cast:
                np.copyto(out[start:stop], target)

    plan.share_image_blocks(run, x.nbytes)
    return out


def avg_pool(x: np.ndarray, ksize: Pair, strides: Pair, pads: Pads) -> np.ndarray:
    """Average pooling; padded cells are left out of each window's divisor.

    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> avg_pool(x, (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    plan = _PoolPlan("avg_pool", x.shape, ksize, strides, pads, x.dtype)
    return _pool_forward(plan, x, np.add, 0, scale=plan.reciprocal_counts())


def avg_pool_grad(
    input_shape: tuple[int, int, int, int],
    dy: np.ndarray,
    ksize: Pair,
    strides: Pair,
    pads: Pads,
) -> np.ndarray:
    """Gradient of :func:`avg_pool` with respect to its input.

    Each window's gradient is divided by its cell count and spread over its
    columns, then over its rows: the transpose of the separable forward.

    >>> dy = np.ones((1, 1, 1, 1))
    >>> avg_pool_grad((1, 2, 2, 1), dy, (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[0.25, 0.25],
           [0.25, 0.25]])
    """
    input_shape = tuple(int(d) for d in input_shape)
    plan = _PoolPlan("avg_pool_grad", input_shape, ksize, strides, pads, dy.dtype)
    geometry = plan.geometry
    _check_pool_out_shape("avg_pool_grad", dy, plan)
    dy = np.ascontiguousarray(dy)
    reciprocal = plan.reciprocal_counts()
    uniform = not geometry.has_padding
    channels, (kh, kw) = plan.channels, geometry.kernel_hw
    out_h, out_w = geometry.out_hw
    scaled = _scratch("scaled_gradient", (plan.images, out_h, out_w, channels), plan.compute_dtype)
    spread = _scratch("row_spread", (plan.images, out_h, plan.used_w, channels), plan.compute_dtype)
    if plan.columns_by_gemm:
        column_matrix_t = plan.column_sum_matrix().T
        if uniform:
            column_matrix_t = column_matrix_t * reciprocal
    scatter = _PaddedScatter(
        input_shape, dy.dtype, geometry.pads, plan.images, plan.compute_dtype, overwrites=plan.windows_tile
    )
    rows_overlap = geometry.strides[0] < kh

    for start, stop in plan.image_blocks():
        images = stop - start
        grad = scaled[:images]
        row_spread = spread[:images]
        gemm = plan.columns_by_gemm and _leaks_nothing(dy[start:stop], channels)
        if gemm and uniform:
            grad = _as_compute(dy[start:stop], scaled)
        else:
            np.multiply(dy[start:stop], reciprocal, out=grad)
        if gemm:
            np.matmul(
                grad.reshape(-1, channels),
                column_matrix_t,
                out=row_spread.reshape(-1, kw * channels),
            )
        else:
            row_spread.fill(0)
            for view in plan.col_tap_views(row_spread):
                np.add(view, grad, out=view)
        padded_dx = scatter.begin(start, stop)
        for view in plan.row_tap_views(padded_dx):
            if rows_overlap:
                np.add(view, row_spread, out=view)
            else:
                np.copyto(view, row_spread)
        scatter.finish(start, stop)
    return scatter.dx


def max_pool(x: np.ndarray, ksize: Pair, strides: Pair, pads: Pads) -> np.ndarray:
    """Max pooling; padded cells act as ``-inf``.

    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> max_pool(x, (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """
    plan = _PoolPlan("max_pool", x.shape, ksize, strides, pads, x.dtype)
    return _pool_forward(plan, x, np.maximum, -np.inf)


def _max_pool_images(plan: _PoolPlan, x: np.ndarray, out: np.ndarray, start: int, stop: int) -> None:
    """Max-pool the images ``start:stop`` of ``x`` into the same images of ``out``, on the calling thread, with
    the operations :func:`max_pool` gives each element (so bit for bit its result): a kernel's epilogue pools
    each block of images it has just written while the block is in cache.  The scratch buffers are this
    function's own, so the caller may hold its own ones across the call."""
    out_h, out_w = plan.geometry.out_hw
    row_pooled_all = _scratch("images_row_pooled", (plan.images, out_h, plan.used_w, plan.channels), plan.compute_dtype)
    needs_cast = plan.compute_dtype != x.dtype
    if needs_cast:
        pooled = _scratch("images_pooled", (plan.images, out_h, out_w, plan.channels), plan.compute_dtype)
    padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, -np.inf, plan.compute_dtype, "images_padded")
    for block_start, block_stop in _blocks(stop, plan.images, start):
        row_pooled = row_pooled_all[: block_stop - block_start]
        _reduce_views(np.maximum, plan.row_tap_views(padded_blocks.load(block_start, block_stop)), row_pooled)
        target = pooled[: block_stop - block_start] if needs_cast else out[block_start:block_stop]
        _reduce_views(np.maximum, plan.col_tap_views(row_pooled), target)
        if needs_cast:
            np.copyto(out[block_start:block_stop], target)


def _first_max_hits(plan, padded_x, y, hit, taken) -> Iterator[tuple[Pair, np.ndarray]]:
    """Yield ``(tap, hit)`` in row-major tap order, where ``hit`` marks the
    windows whose first maximum (TensorFlow's CPU tie rule) sits at ``tap``.

    Padding must hold NaN: it never equals a window's max, so a gradient is
    never routed into the padding. ``hit`` is overwritten at every step.
    """
    taps = plan.geometry.taps
    for index, tap in enumerate(taps):
        np.equal(plan.geometry.tap_view(padded_x, tap), y, out=hit)
        if index:
            np.greater(hit, taken, out=hit)  # bools: hit and not taken
        if index == 0:
            np.copyto(taken, hit)
        elif index < len(taps) - 1:
            np.logical_or(taken, hit, out=taken)
        yield tap, hit


def _check_pool_out_shape(name: str, y: np.ndarray, plan: _PoolPlan) -> None:
    expected = (plan.batch, *plan.geometry.out_hw, plan.channels)
    if y.shape != expected:
        raise ValueError(f"{name}: pooled shape {tuple(y.shape)} does not match the pooling output shape {expected}")


def max_pool_grad(
    x: np.ndarray,
    y: np.ndarray,
    dy: np.ndarray,
    ksize: Pair,
    strides: Pair,
    pads: Pads,
) -> np.ndarray:
    """Gradient of :func:`max_pool` (``y = max_pool(x)``) with respect to ``x``.

    Each window's gradient goes to its first maximum in row-major order; the
    other cells get 0, even where that gradient is inf or NaN.

    >>> x = np.array([[1.0, 3.0], [3.0, 2.0]]).reshape(1, 2, 2, 1)
    >>> y = max_pool(x, (2, 2), (2, 2), ((0, 0), (0, 0)))
    >>> max_pool_grad(x, y, np.ones_like(y), (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[0., 1.],
           [0., 0.]])
    """
    plan = _PoolPlan("max_pool_grad", x.shape, ksize, strides, pads, dy.dtype)
    _check_pool_out_shape("max_pool_grad", y, plan)
    _check_pool_out_shape("max_pool_grad", dy, plan)
    block_shape = (plan.images, *plan.geometry.out_hw, plan.channels)
    overlap = plan.geometry.windows_overlap
    scatter = _PaddedScatter(
        x.shape, dy.dtype, plan.geometry.pads, plan.images, plan.compute_dtype, overwrites=plan.windows_tile
    )

    def run(blocks) -> None:
        hit, taken = _scratch("hit", block_shape, bool), _scratch("taken", block_shape, bool)
        padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, np.nan, plan.compute_dtype)
        for start, stop in blocks:
            images = stop - start
            padded_dx = scatter.begin(start, stop)
            dy_block = dy[start:stop]
            # The product below would put inf * 0 = NaN into the cells that
            # are not the maximum of a window whose gradient is inf or NaN.
            finite = overlap or np.isfinite(dy_block, out=taken[:images]).all()
            hits = _first_max_hits(plan, padded_blocks.load(start, stop), y[start:stop], hit[:images], taken[:images])
            for tap, tap_hit in hits:
                view = plan.geometry.tap_view(padded_dx, tap)
                if overlap:
                    np.add(view, dy_block, out=view, where=tap_hit)
                elif finite:
                    # Each cell is in one window at most, so writing the zeros
                    # too is right, and it is several times faster than a
                    # masked copy on sparse masks.
                    np.multiply(dy_block, tap_hit, out=view)
                else:
                    _select_bits(dy_block, tap_hit, view)
            scatter.finish(start, stop)

    # Bound by NumPy's cost per row of C cells (the taps are strided views)
    # more than by memory traffic: threads pay off from a few blocks on.
    parallel = x.nbytes >= _MAX_POOL_GRAD_PARALLEL_MIN_BYTES
    _share_blocks(run, _shared_blocks(plan.batch, plan.images, parallel), parallel)
    return scatter.dx


def _select_bits(values: np.ndarray, hit: np.ndarray, out: np.ndarray) -> None:
    """``out = values where hit, else +0`` exactly, inf and NaN included: the
    bits of ``values`` (cast to ``out``'s dtype) and an integer mask that is all
    ones where ``hit``."""
    bits = np.dtype(f"i{out.dtype.itemsize}")
    values = _as_compute(values, _scratch("select_values", values.shape, out.dtype))
    mask = _scratch("select_mask", hit.shape, bits)
    np.negative(hit.view(np.int8), out=mask)  # True -> -1, sign-extended: all bits set
    np.bitwise_and(values.view(bits), mask, out=out.view(bits))


def max_pool_grad_grad(
    x: np.ndarray,
    y: np.ndarray,
    ddx: np.ndarray,
    ksize: Pair,
    strides: Pair,
    pads: Pads,
) -> np.ndarray:
    """The ``dy``-gradient of :func:`max_pool_grad` for an input change ``ddx``.

    ``max_pool_grad`` is linear in ``dy``; its transpose gathers ``ddx`` at
    each window's first maximum. The result has ``y``'s shape.

    >>> x = np.array([[1.0, 3.0], [3.0, 2.0]]).reshape(1, 2, 2, 1)
    >>> y = max_pool(x, (2, 2), (2, 2), ((0, 0), (0, 0)))
    >>> ddx = np.arange(4.0).reshape(1, 2, 2, 1)
    >>> max_pool_grad_grad(x, y, ddx, (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[1.]])
    """
    plan = _PoolPlan("max_pool_grad_grad", x.shape, ksize, strides, pads, ddx.dtype)
    _check_pool_out_shape("max_pool_grad_grad", y, plan)
    if ddx.shape != x.shape:
        raise ValueError(
            f"max_pool_grad_grad: ddx shape {tuple(ddx.shape)} does not match input shape {tuple(x.shape)}"
        )
    out = np.zeros(y.shape, ddx.dtype)
    block_shape = (plan.images, *plan.geometry.out_hw, plan.channels)
    hit, taken = _scratch("hit", block_shape, bool), _scratch("taken", block_shape, bool)
    padded_x_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, np.nan, plan.compute_dtype)
    padded_ddx_blocks = _PaddedBlocks(ddx, plan.geometry.pads, plan.images, 0, purpose="padded_ddx")
    for start, stop in plan.image_blocks():
        images = stop - start
        padded_ddx = padded_ddx_blocks.load(start, stop)
        out_block = out[start:stop]
        hits = _first_max_hits(plan, padded_x_blocks.load(start, stop), y[start:stop], hit[:images], taken[:images])
        for tap, tap_hit in hits:
            np.copyto(out_block, plan.geometry.tap_view(padded_ddx, tap), where=tap_hit)
    return out
