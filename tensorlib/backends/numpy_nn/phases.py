"""A conv layer whose result is max-pooled by windows that tile it, kept in *phase order*: the kernels of
the ``Conv2DAddActivationPhasePool``, ``MaxPoolPhasesGrad`` and ``Conv2DBackpropFilterWithBiasPhases`` ops
that the graph optimizer fuses a network's first conv layer into.

In NHWC the cells of one pooling window lie ``C`` values apart along a row and a row apart, so the pool,
and above all its gradient (a comparison, a first-hit mask and a product per cell of the window), run on
strided views whose runs are only ``C`` values long.  Here the conv's result ``h`` is kept as
``(P, N, OH / PH, OW / PW, C)`` for a ``PH x PW`` pool (``P = PH * PW``), whose ``[a * PW + b, n, p, q]``
is ``h[n, a + PH * p, b + PW * q]``: each cell of the windows is one contiguous plane, and the pool and
its gradient are element-wise passes over long runs.

The conv writes that order directly.  Phase ``(a, b)`` of output pixel ``(p, q)`` reads the input at
``(a + i + PH * p, b + j + PW * q)`` for filter tap ``(i, j)``: at one of ``(KH + PH - 1) x (KW + PW - 1)``
*shifted planes* of the padded input, each sampled with the pool's strides.  Those planes, one matrix
per block of images (``(planes * Cin, pixels)``), are the patches of every phase at once; each phase's
result is one GEMM of them with the filter placed at offset ``(a, b)`` in a zero grid of the planes' size,
and the filter gradient is one GEMM per phase of the planes with that phase's output gradient, whose rows
for the filter's taps are summed.  The planes copy fewer input values than one patch matrix (36 planes of
14 x 14 against 25 taps of 28 x 28 per channel for a 5x5 conv pooled 2x2) in runs as long as a plane's
rows.

The filter gradient of each phase reads only the planes' rows that its filter's taps meet (``KH`` of the ``KH + PH -
1`` plane rows; see ``_PhasePlan.phase_rows``).  Each element of ``h`` is the conv's sum of products and the bias (the zero taps add
exact zeros; the bias is a first or last row of the GEMM, against a row of ones), in BLAS's order: equal to the NHWC kernels' to
rounding.  A zero tap times an inf or NaN input would be NaN where the conv
has none, so an input block that is not finite is convolved by :func:`.conv.conv2d` and reordered.  The
pool (maxima in :func:`.pool.max_pool`'s order) and its gradient (each window's gradient to its first
maximum in row-major order) are bit for bit the NHWC kernels' on the same ``h``; the filter and bias
gradients sum the unfused kernels' products in another order.
"""

from __future__ import annotations

import numpy as np

from .blas import single_threaded
from .blocks import (
    Pads,
    Pair,
    _add_thin_gemm,
    _compute_dtype,
    _images_per_block,
    _PaddedBlocks,
    _parallel,
    _scratch,
    _share_blocks,
    _share_lanes,
    _shared_blocks,
    _single_thread_gemm,
    _thin_gemm_step,
    resolve_conv_padding,
)
from .conv import _checked_out, conv2d
from .fused import ACTIVATIONS, _bias_activation
from .fused_grad import _into
from .pool import _select_bits

# Input bytes of the planes of one block of images (with its GEMMs' results, inside L2).
_PLANES_BLOCK_BYTES = 1 << 20
# Bytes of the planes of one block of the filter gradient (in L2 and L3, as the conv kernels' patch blocks).
_FILTER_PLANES_BLOCK_BYTES = 4 << 20
# Images of the phase-ordered result whose pool gradient one block computes (inside L2).
_GRAD_BLOCK_BYTES = 1 << 20
# At most this many input channels: the planes' advantage is copying few values per pixel.
MAX_CHANNELS = 4


def phase_pool_applies(x_shape, w_shape, strides, dilations, pads, pool_ksize, pool_strides) -> bool:
    """Whether a conv (``pads`` explicit) then a VALID max pool can run in phase order: a stride-1,
    undilated conv of at most :data:`MAX_CHANNELS` input channels, whose result the pool's windows tile
    exactly (strides equal to the window, the result's sizes multiples of it)."""
    if len(x_shape) != 4 or len(w_shape) != 4 or None in tuple(x_shape) or x_shape[3] > MAX_CHANNELS:
        return False
    if tuple(strides) != (1, 1) or tuple(dilations) != (1, 1) or tuple(pool_ksize) != tuple(pool_strides):
        return False
    (top, bottom), (left, right) = pads
    out_h = x_shape[1] + top + bottom - w_shape[0] + 1
    out_w = x_shape[2] + left + right - w_shape[1] + 1
    ph, pw = pool_ksize
    return out_h > 0 and out_w > 0 and out_h % ph == 0 and out_w % pw == 0


class _PhasePlan:
    """Shapes, blocks and the planes of a phase-ordered conv with its pool."""

    def __init__(self, name: str, x_shape, w_shape, pads: Pads, pool: Pair, dtype, with_result: bool = True):
        if not phase_pool_applies(x_shape, w_shape, (1, 1), (1, 1), pads, pool, pool):
            raise ValueError(
                f"{name}: a stride-1 conv of input {tuple(x_shape)} (at most {MAX_CHANNELS} channels) and filter "
                f"{tuple(w_shape)} with pads {pads} must give a result that the {tuple(pool)} pool tiles"
            )
        self.name = name
        self.dtype = np.dtype(dtype)
        self.compute_dtype = _compute_dtype(dtype)
        self.batch, _, _, self.in_channels = x_shape
        self.kernel = tuple(w_shape[:2])
        self.channels = w_shape[3]
        self.pads = pads
        self.pool = tuple(int(k) for k in pool)
        out_hw, _ = resolve_conv_padding(x_shape[1:3], self.kernel, (1, 1), (1, 1), pads)
        self.out_hw = out_hw
        self.phases = self.pool[0] * self.pool[1]
        self.cells = (out_hw[0] // self.pool[0], out_hw[1] // self.pool[1])
        self.planes = (self.kernel[0] + self.pool[0] - 1, self.kernel[1] + self.pool[1] - 1)
        self.depth = self.planes[0] * self.planes[1] * self.in_channels
        self.pixels_per_image = self.cells[0] * self.cells[1]
        self.h_shape = (self.phases, self.batch, *self.cells, self.channels)
        self.pooled_shape = (self.batch, *self.cells, self.channels)
        # With the result (the forward): a block's planes and its result (all phases) stay in L2 for the pool
        # that reads them back.  Without (the filter gradient): bigger blocks of planes, fewer GEMM calls.
        result = self.phases * self.channels if with_result else 0
        row_bytes = (self.depth + (1 if with_result else 2) + result) * self.compute_dtype.itemsize  # (rows of ones)
        budget = _PLANES_BLOCK_BYTES if with_result else _FILTER_PLANES_BLOCK_BYTES
        self.images = _images_per_block(self.batch, self.pixels_per_image * row_bytes, budget)

    def blocks(self, parallel: bool):
        return _shared_blocks(self.batch, self.images, parallel)

    def planes_matrix(self, padded: np.ndarray, ones: int = 0) -> np.ndarray:
        """The ``(planes * Cin, pixels)`` matrix of the padded image block's shifted planes, with ``ones`` rows
        of ones: with 1, one below; with 2, one above and one below (its row ``(s * planes_w + t) * Cin + c``
        then one further down) for :meth:`phase_rows`.  That row is ``padded[n, s + PH * p, t + PW * q, c]``
        over the block's pixels ``(n, p, q)``."""
        images = padded.shape[0]
        pixels = images * self.pixels_per_image
        storage = _scratch("phase_planes", (self.depth + ones) * pixels, self.compute_dtype)
        (sh, sw), (ph, pw) = self.planes, self.pool
        first = (ones == 2) * pixels
        grid = storage[first : first + self.depth * pixels].reshape(sh, sw, self.in_channels, images, *self.cells)
        s_n, s_h, s_w, s_c = padded.strides
        views = np.lib.stride_tricks.as_strided(
            padded,
            (sh, sw, self.in_channels, images, *self.cells),
            (s_h, s_w, s_c, s_n, ph * s_h, pw * s_w),
            writeable=False,
        )
        np.copyto(grid, views)
        if ones:
            storage[:first] = 1
            storage[first + self.depth * pixels :] = 1
        return storage.reshape(self.depth + ones, pixels)

    def phase_rows(self, a: int) -> tuple[int, int, int]:
        """``(start, stop, ones)``: the rows of the planes matrix with two rows of ones that the phases of pool
        row ``a`` read for the filter gradient, and the one row of ones among them that stands for the bias.  A phase reads the planes rows
        ``a`` to ``a + KH - 1`` alone (its other rows meet zero taps): the first pool row the ones above and
        those planes, the last those planes and the ones below (a 5x5 filter pooled 2x2: 31 rows of 38, not
        37 of 37), a middle one all the rows."""
        band = self.planes[1] * self.in_channels
        if a == 0:
            return 0, 1 + self.kernel[0] * band, 0
        if a == self.pool[0] - 1:
            return 1 + a * band, self.depth + 2, self.depth + 1
        return 0, self.depth + 2, 0

    def phase_filters(self, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """``(P, planes * Cin + 1, Cout)``: the filter at offset ``(a, b)`` in a zero grid of the planes' size,
        then the bias, for each phase ``a * PW + b``, laid out as the rows of the planes matrix with a row of ones.

        (All the rows: a forward GEMM of the rows that each phase reads alone, as the filter gradient does, ran
        twice as slow in a fresh process, AMD EPYC, OpenBLAS Haswell kernels, unexplained.)"""
        (kh, kw), (sh, sw), (ph, pw) = self.kernel, self.planes, self.pool
        filters = np.zeros((self.phases, self.depth + 1, self.channels), self.compute_dtype)
        grid = filters[:, : self.depth].reshape(ph, pw, sh, sw, self.in_channels, self.channels)
        for a in range(ph):
            for b in range(pw):
                grid[a, b, a : a + kh, b : b + kw] = w
        filters[:, self.depth] = bias
        return filters

    def pool_images(self, h: np.ndarray, pooled: np.ndarray, start: int, stop: int) -> None:
        """Max-pool the images ``start:stop``: each window's rows first, then its columns, in the order that
        :func:`.pool.max_pool` takes them (so the same bits, signed zeros and NaNs included)."""
        ph, pw = self.pool
        target = pooled[start:stop]
        cell = [h[k, start:stop] for k in range(self.phases)]
        rows = []
        for b in range(pw):
            column = [cell[a * pw + b] for a in range(ph)]
            if len(column) == 1:
                rows.append(column[0])
                continue
            row = target if pw == 1 else _scratch(f"phase_pool_{b}", target.shape, target.dtype)
            np.maximum(column[0], column[1], out=row)
            for other in column[2:]:
                np.maximum(row, other, out=row)
            rows.append(row)
        if len(rows) == 1:
            if rows[0] is not target:
                np.copyto(target, rows[0])
            return
        np.maximum(rows[0], rows[1], out=target)
        for other in rows[2:]:
            np.maximum(target, other, out=target)

    def check_out(self, out, shape, dtype) -> np.ndarray:
        given = _checked_out(self.name, out, shape, dtype)
        return np.empty(shape, dtype) if given is None else given


def conv2d_add_activation_phase_pool(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    pads: Pads,
    pool: Pair,
    *,
    activation: str,
    out: tuple | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(h in phase order, max_pool(h))`` for ``h = activation(conv2d(x, w) + bias)`` (stride 1, explicit
    ``pads``) and a VALID ``pool``-sized max pool whose windows tile ``h``.

    >>> x, w = np.arange(16.0).reshape(1, 4, 4, 1), np.ones((1, 1, 1, 1))
    >>> h, pooled = conv2d_add_activation_phase_pool(x, w, np.zeros(1), ((0, 0), (0, 0)), (2, 2), activation="relu")
    >>> h[:, 0, :, :, 0].tolist()  # h[a + 2p, b + 2q] at [a * 2 + b, p, q]
    [[[0.0, 2.0], [8.0, 10.0]], [[1.0, 3.0], [9.0, 11.0]], [[4.0, 6.0], [12.0, 14.0]], [[5.0, 7.0], [13.0, 15.0]]]
    >>> pooled[0, :, :, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    dtype = np.result_type(x, w)
    plan = _PhasePlan("conv2d_add_activation_phase_pool", x.shape, w.shape, pads, pool, dtype)
    h, pooled = (None, None) if out is None else out
    h, pooled = plan.check_out(h, plan.h_shape, dtype), plan.check_out(pooled, plan.pooled_shape, dtype)
    filters = plan.phase_filters(w, bias)
    activate = ACTIVATIONS[activation]
    needs_cast = plan.compute_dtype != dtype

    def run(blocks) -> None:
        padded_blocks = _PaddedBlocks(x, pads, plan.images, 0, plan.compute_dtype)
        for start, stop in blocks:
            padded = padded_blocks.load(start, stop)
            # A zero tap times inf or NaN: see the module's docstring.  (The block's conv is too small to share
            # its work out between threads, so it runs on this one.)
            if not np.isfinite(padded).all():
                _reorder_conv(plan, x[start:stop], w, h[:, start:stop], _bias_activation(bias, activation))
            else:
                planes_t = plan.planes_matrix(padded, ones=1).T
                for k in range(plan.phases):
                    target = h[k, start:stop].reshape(-1, plan.channels)
                    if needs_cast:
                        result = _scratch("phase_result", target.shape, plan.compute_dtype)
                        _single_thread_gemm(planes_t, filters[k], result)
                        np.copyto(target, result)
                    else:
                        _single_thread_gemm(planes_t, filters[k], target)
                    activate(target)
            plan.pool_images(h, pooled, start, stop)

    parallel = _parallel(h.nbytes)
    _share_blocks(run, plan.blocks(parallel), parallel)
    return h, pooled


def _reorder_conv(plan: _PhasePlan, x: np.ndarray, w: np.ndarray, h: np.ndarray, epilogue) -> None:
    """``h`` (phase order, these images) from :func:`.conv.conv2d` of ``x`` with the epilogue, reordered."""
    nhwc = conv2d(x, w, (1, 1), (1, 1), plan.pads, epilogue=epilogue)
    ph, pw = plan.pool
    for a in range(ph):
        for b in range(pw):
            np.copyto(h[a * pw + b], nhwc[:, a::ph, b::pw])


def max_pool_phases_grad(h: np.ndarray, pooled: np.ndarray, dy: np.ndarray, *, out=None) -> np.ndarray:
    """The gradient of the pool for ``h`` in phase order ``(P, N, OH, OW, C)``, ``pooled`` its pooled result
    and ``dy`` the pooled result's gradient: each window's ``dy`` goes to its first maximum in row-major
    (phase) order, the other cells get 0 (inf and NaN in ``dy`` included), as :func:`.pool.max_pool_grad`.

    >>> h = np.array([1.0, 3.0, 3.0, 2.0]).reshape(4, 1, 1, 1, 1)
    >>> max_pool_phases_grad(h, np.array([3.0]).reshape(1, 1, 1, 1), np.ones((1, 1, 1, 1)))[:, 0, 0, 0, 0]
    array([0., 1., 0., 0.])
    """
    name = "max_pool_phases_grad"
    if h.ndim != 5 or pooled.shape != h.shape[1:] or dy.shape != pooled.shape:
        raise ValueError(
            f"{name}: h {h.dtype}{list(h.shape)} must be (P, N, OH, OW, C), with pooled {pooled.dtype}"
            f"{list(pooled.shape)} and dy {dy.dtype}{list(dy.shape)} of shape (N, OH, OW, C)"
        )
    phases, batch = h.shape[:2]
    dx = _checked_out(name, out, h.shape, dy.dtype)
    dx = np.empty(h.shape, dy.dtype) if dx is None else dx
    images = _images_per_block(batch, phases * h[0, :1].nbytes, _GRAD_BLOCK_BYTES)

    def run(blocks) -> None:
        shape = (images, *pooled.shape[1:])
        hit, taken = _scratch("phase_hit", shape, bool), _scratch("phase_taken", shape, bool)
        for start, stop in blocks:
            count = stop - start
            dy_block, y_block = dy[start:stop], pooled[start:stop]
            block_hit, block_taken = hit[:count], taken[:count]
            # The product would put inf * 0 = NaN into the cells that are not the maximum of a window whose
            # gradient is inf or NaN.
            finite = np.isfinite(dy_block, out=block_taken).all()
            for k in range(phases):
                np.equal(h[k, start:stop], y_block, out=block_hit)
                if k:
                    np.greater(block_hit, block_taken, out=block_hit)  # bools: hit and not taken
                if k == 0:
                    np.copyto(block_taken, block_hit)
                elif k < phases - 1:
                    np.logical_or(block_taken, block_hit, out=block_taken)
                if finite:
                    np.multiply(dy_block, block_hit, out=dx[k, start:stop])
                else:
                    _select_bits(dy_block, block_hit, dx[k, start:stop])

    parallel = _parallel(h.nbytes)
    _share_blocks(run, _shared_blocks(batch, images, parallel), parallel)
    return dx


def conv2d_backprop_filter_bias_phases(
    x: np.ndarray, filter_shape, dh: np.ndarray, pads: Pads, pool: Pair, *, out=None
) -> tuple[np.ndarray, np.ndarray]:
    """``(filter gradient, bias gradient)`` of a stride-1 conv + bias (explicit ``pads``) whose output gradient
    ``dh`` is in phase order ``(P, N, OH / PH, OW / PW, C)`` for ``pool = (PH, PW)``: per block of images, one
    GEMM per phase of the input's shifted planes (and a row of ones, for the bias) with that phase's ``dh``;
    the filter's taps are then summed from the planes that each phase reads.

    >>> x, dh = np.arange(16.0).reshape(1, 4, 4, 1), np.ones((4, 1, 2, 2, 1))
    >>> dw, db = conv2d_backprop_filter_bias_phases(x, (1, 1, 1, 1), dh, ((0, 0), (0, 0)), (2, 2))
    >>> dw.ravel().tolist(), db.tolist()
    ([120.0], [16.0])
    """
    name = "conv2d_backprop_filter_bias_phases"
    dtype = np.result_type(x, dh)
    plan = _PhasePlan(name, x.shape, filter_shape, pads, pool, dtype, with_result=False)
    if dh.shape != plan.h_shape:
        raise ValueError(f"{name}: dh {dh.dtype}{list(dh.shape)} must have the phase-ordered shape {plan.h_shape}")
    # Each phase's sums over the rows it reads (see _PhasePlan.phase_rows), in place in a (P, rows, C) array.
    rows = plan.depth + 2
    phase_rows = [plan.phase_rows(k // plan.pool[1]) for k in range(plan.phases)]
    # Pieces as long as for all the planes' rows and one row of ones: for the 31 rows of a 5x5 filter pooled 2x2,
    # the longer pieces that its fewer rows allow (256 against 221 pixels) ran twice as slow (AMD EPYC, OpenBLAS
    # Haswell kernels, 25088 pixels per block), these 7% faster than all 37 rows.
    step = _thin_gemm_step(plan.depth + 1, plan.channels)

    def run(blocks):
        totals = np.zeros((plan.phases, rows, plan.channels), plan.compute_dtype)
        partial = np.empty((rows, plan.channels), plan.compute_dtype)
        padded_blocks = _PaddedBlocks(x, pads, plan.images, 0, plan.compute_dtype)
        for start, stop in blocks:
            planes = plan.planes_matrix(padded_blocks.load(start, stop), ones=2)
            for k, (first, last, _) in enumerate(phase_rows):
                dy_block = dh[k, start:stop].reshape(-1, plan.channels)
                if dy_block.dtype != plan.compute_dtype:
                    dy_block = dy_block.astype(plan.compute_dtype)
                if step:
                    _add_thin_gemm(planes[first:last], dy_block, totals[k, first:last], step)
                else:
                    np.matmul(planes[first:last], dy_block, out=partial[first:last])
                    totals[k, first:last] += partial[first:last]
        return totals

    flops = 2 * plan.batch * plan.pixels_per_image * plan.channels * sum(last - first for first, last, _ in phase_rows)
    parallel = _parallel(x.nbytes + dh.nbytes, flops)
    with single_threaded:  # each thread's GEMMs on one BLAS thread (see .blas)
        lanes = _share_lanes(run, plan.blocks(parallel), parallel)
    totals = lanes[0]
    for other in lanes[1:]:
        totals += other
    (kh, kw), (sh, sw), (ph, pw) = plan.kernel, plan.planes, plan.pool
    grid = totals[:, 1 : 1 + plan.depth].reshape(ph, pw, sh, sw, plan.in_channels, plan.channels)
    dw = np.zeros((kh, kw, plan.in_channels, plan.channels), plan.compute_dtype)
    for a in range(ph):
        for b in range(pw):
            dw += grid[a, b, a : a + kh, b : b + kw]
    db = np.sum([totals[k, ones] for k, (_, _, ones) in enumerate(phase_rows)], axis=0)
    return _into(name, (dw.astype(dtype, copy=False), db.astype(dh.dtype)), out)
