"""Pure-NumPy kernels for 2-D convolution, pooling and fused batch norm.

Raw NumPy arrays in, raw arrays out; nothing here knows about Tensors, so the
module needs only NumPy. Layouts follow TensorFlow: images are NHWC
``(N, H, W, C)``, filters HWIO ``(KH, KW, Cin, Cout)``, ``strides`` and
``dilations`` are ``(rows, cols)`` pairs and ``pads`` is the explicit
``((top, bottom), (left, right))`` that :func:`resolve_conv_padding` returns.

Every kernel keeps its input's dtype. float16 work is done in float32 (BLAS
has no half-precision GEMM, and half-precision sums lose digits) and the
result is cast back; float32 and float64 are never widened.

Speed (DESIGN §4): the work is split into blocks of images (or of output rows
of one image) small enough to stay in cache, and every block buffer is
allocated once and reused. Convolutions copy each filter tap's strided view
of the input into a patch block and run one BLAS GEMM per block; pooling
reduces along rows first, where the runs are long and contiguous, and only
then along columns.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]

# A conv patch block of this size fits in the L2+L3 caches of the machines we
# measured on; bigger blocks were slower for the seed and CNN workloads.
_PATCH_BLOCK_BYTES = 2 << 20
# Input bytes of one pooling block; its row-reduced copy then stays in L2.
_POOL_BLOCK_BYTES = 1 << 20
# Below this many input channels a patch copy run of Cin values is too short
# to be efficient, so convolutions copy whole output rows instead.
_SHIFTED_GEMM_MAX_CHANNELS = 4
# Column pooling by a GEMM against stacked identities beats strided slices
# only while the GEMM's extra flops (2 * kw * C per output) stay small.
_GEMM_COLUMN_POOL_MAX_CHANNELS = 8

SHIFTED_GEMM = "shifted_gemm"
IM2COL_GEMM = "im2col_gemm"


# ---------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------


def conv_output_size_and_padding(
    in_size: int, k: int, stride: int, dilation: int, padding: str | Pair
) -> tuple[int, Pair]:
    """Output length and (before, after) padding of one spatial dimension.

    ``padding`` is ``"VALID"``, ``"SAME"`` (TensorFlow's rule: the odd cell of
    padding goes to the end) or an explicit ``(before, after)`` pair.

    >>> conv_output_size_and_padding(32, 3, 1, 1, "VALID")
    (30, (0, 0))
    >>> conv_output_size_and_padding(28, 5, 2, 1, "SAME")
    (14, (1, 2))
    """
    if k < 1 or stride < 1 or dilation < 1:
        raise ValueError(
            f"conv geometry: kernel size {k}, stride {stride} and dilation "
            f"{dilation} must all be >= 1"
        )
    effective_k = (k - 1) * dilation + 1
    if isinstance(padding, str):
        if padding == "SAME":
            out_size = -(-in_size // stride)
            total = max((out_size - 1) * stride + effective_k - in_size, 0)
            return out_size, (total // 2, total - total // 2)
        if padding != "VALID":
            raise ValueError(
                f"conv geometry: padding must be 'VALID', 'SAME' or a "
                f"(before, after) pair, got {padding!r}"
            )
        before, after = 0, 0
    else:
        before, after = (int(p) for p in padding)
        if before < 0 or after < 0:
            raise ValueError(f"conv geometry: negative padding {padding!r}")
    out_size = (in_size + before + after - effective_k) // stride + 1
    if out_size < 1:
        raise ValueError(
            f"conv geometry: input size {in_size} with padding "
            f"({before}, {after}) is smaller than the dilated kernel size "
            f"{effective_k} (kernel {k}, dilation {dilation})"
        )
    return out_size, (before, after)


def resolve_conv_padding(
    input_hw: Pair,
    filter_hw: Pair,
    strides: Pair,
    dilations: Pair,
    padding: str | Pads,
) -> tuple[Pair, Pads]:
    """Output (height, width) and explicit ``((top, bottom), (left, right))``.

    ``padding`` is ``"VALID"``, ``"SAME"`` or already explicit.

    >>> resolve_conv_padding((28, 28), (5, 5), (1, 1), (1, 1), "SAME")
    ((28, 28), ((2, 2), (2, 2)))
    """
    per_dim = [
        conv_output_size_and_padding(
            input_hw[d],
            filter_hw[d],
            strides[d],
            dilations[d],
            padding if isinstance(padding, str) else padding[d],
        )
        for d in range(2)
    ]
    return (per_dim[0][0], per_dim[1][0]), (per_dim[0][1], per_dim[1][1])


class _Geometry(NamedTuple):
    """Sizes of one conv or pooling window sweep over the padded input."""

    in_hw: Pair
    out_hw: Pair
    kernel_hw: Pair
    strides: Pair
    dilations: Pair
    pads: Pads

    @classmethod
    def build(cls, name, in_hw, kernel_hw, strides, dilations, pads):
        strides, dilations = tuple(strides), tuple(dilations)
        pads = (tuple(pads[0]), tuple(pads[1]))
        try:
            out_hw, _ = resolve_conv_padding(in_hw, kernel_hw, strides, dilations, pads)
        except ValueError as error:
            raise ValueError(
                f"{name}: {error} (input hw {tuple(in_hw)}, kernel hw "
                f"{tuple(kernel_hw)}, strides {strides}, dilations {dilations}, "
                f"pads {pads})"
            ) from None
        return cls(tuple(in_hw), out_hw, tuple(kernel_hw), strides, dilations, pads)

    @property
    def taps(self) -> list[Pair]:
        """Filter taps (row, col) in row-major order."""
        kh, kw = self.kernel_hw
        return [(i, j) for i in range(kh) for j in range(kw)]

    @property
    def has_padding(self) -> bool:
        return any(self.pads[0]) or any(self.pads[1])

    @property
    def windows_overlap(self) -> bool:
        """Whether some input cell lies in two windows (then grads must add)."""
        return any(
            s < (k - 1) * d + 1
            for s, k, d in zip(self.strides, self.kernel_hw, self.dilations)
        )

    def tap_view(self, padded: np.ndarray, tap: Pair, rows: Pair | None = None):
        """The cells of ``padded`` that ``tap`` meets, one per output pixel.

        ``result[:, r, c] = padded[:, (r0 + r) * sh + i * dh, c * sw + j * dw]``
        for the output rows ``rows = (r0, r1)`` (all rows when omitted).
        """
        (sh, sw), (dh, dw) = self.strides, self.dilations
        r0, r1 = rows if rows is not None else (0, self.out_hw[0])
        row0 = r0 * sh + tap[0] * dh
        col0 = tap[1] * dw
        return padded[
            :,
            row0 : row0 + (r1 - r0 - 1) * sh + 1 : sh,
            col0 : col0 + (self.out_hw[1] - 1) * sw + 1 : sw,
        ]


def _compute_dtype(dtype) -> np.dtype:
    """float16 is computed in float32; every other dtype as it is."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _images_per_block(batch: int, bytes_per_image: int, budget: int) -> int:
    return int(min(batch, max(1, budget // max(1, bytes_per_image))))


class _PaddedBlocks:
    """Blocks of images of ``x``, padded by copying into one reused buffer.

    The border is filled once; each block overwrites only the interior. With
    no padding the blocks are plain slices of ``x`` and nothing is copied.
    """

    def __init__(self, x: np.ndarray, pads: Pads, images: int, fill: float):
        self.x = x
        (self.top, bottom), (self.left, right) = pads
        self.buffer = None
        if any(pads[0]) or any(pads[1]):
            _, h, w, c = x.shape
            shape = (images, h + self.top + bottom, w + self.left + right, c)
            self.buffer = np.full(shape, fill, x.dtype)

    def load(self, start: int, stop: int) -> np.ndarray:
        if self.buffer is None:
            return self.x[start:stop]
        _, h, w, _ = self.x.shape
        block = self.buffer[: stop - start]
        block[:, self.top : self.top + h, self.left : self.left + w] = self.x[start:stop]
        return block


class _PaddedScatter:
    """Accumulates a gradient for blocks of images in a zero-padded buffer.

    ``begin`` hands out a zeroed padded block to add into; ``finish`` crops it
    into ``dx`` (cast to ``dx``'s dtype). When there is no padding and no cast,
    the block is ``dx`` itself (created zeroed), so nothing is copied.
    """

    def __init__(self, dx_shape, dtype, pads: Pads, images: int, compute_dtype):
        (self.top, bottom), (self.left, right) = pads
        self.direct = not (any(pads[0]) or any(pads[1])) and dtype == compute_dtype
        if self.direct:
            self.dx = np.zeros(dx_shape, dtype)
        else:
            self.dx = np.empty(dx_shape, dtype)
            _, h, w, c = dx_shape
            shape = (images, h + self.top + bottom, w + self.left + right, c)
            self.buffer = np.empty(shape, compute_dtype)

    def begin(self, start: int, stop: int) -> np.ndarray:
        if self.direct:
            return self.dx[start:stop]
        block = self.buffer[: stop - start]
        block.fill(0)
        return block

    def finish(self, start: int, stop: int) -> None:
        if not self.direct:
            _, h, w, _ = self.dx.shape
            block = self.buffer[: stop - start]
            self.dx[start:stop] = block[:, self.top : self.top + h, self.left : self.left + w]


# ---------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------


def conv2d_strategy(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    strides: Pair,
    dilations: Pair,
    pads: Pads,
) -> str:
    """Which patch layout the conv kernels use for these shapes.

    ``"shifted_gemm"`` when the input has at most 4 channels: each tap's
    shifted, strided view of the input is copied as whole output rows into a
    ``(taps * Cin, pixels)`` block, so every copy run is a full output row and
    the ``KH*KW`` per-tap GEMMs are summed inside one BLAS call. Otherwise
    ``"im2col_gemm"``: patches are laid out ``(pixels, taps * Cin)`` and each
    copy run is ``Cin`` values long. The arguments other than the shapes are
    accepted so the rule can grow without changing callers.

    >>> conv2d_strategy((6000, 32, 32, 1), (3, 3, 1, 6), (1, 1), (1, 1), ((0, 0), (0, 0)))
    'shifted_gemm'
    >>> conv2d_strategy((128, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), ((2, 2), (2, 2)))
    'im2col_gemm'
    """
    in_channels = x_shape[3]
    return SHIFTED_GEMM if in_channels <= _SHIFTED_GEMM_MAX_CHANNELS else IM2COL_GEMM


class _PatchLayout:
    """Where a block's ``K = KH*KW*Cin`` patch values per output pixel live.

    shifted_gemm: ``(taps, Cin, images, rows, OW)``; the ``(pixels, K)`` patch
    matrix is a transposed (Fortran-ordered) view, which BLAS takes as is.
    im2col_gemm: ``(images, rows, OW, taps, Cin)``; the matrix is C-ordered.
    """

    def __init__(self, strategy: str, taps: int, in_channels: int):
        if strategy not in (SHIFTED_GEMM, IM2COL_GEMM):
            raise ValueError(
                f"conv2d: unknown strategy {strategy!r}; use "
                f"{SHIFTED_GEMM!r} or {IM2COL_GEMM!r}"
            )
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
        """The ``(images, rows, OW, Cin)`` part of ``patches`` for one tap."""
        if self.tap_major:
            return patches[tap_index].transpose(1, 2, 3, 0)
        return patches[:, :, :, tap_index, :]

    def matrix(self, patches: np.ndarray) -> np.ndarray:
        """The ``(pixels, K)`` patch matrix, K ordered like an HWIO filter."""
        k = self.taps * self.in_channels
        if self.tap_major:
            return patches.reshape(k, -1).T
        return patches.reshape(-1, k)


class _ConvPlan:
    """Block sizes and reused buffers shared by the three conv kernels."""

    def __init__(self, name, x_shape, w_shape, strides, dilations, pads, dtype, strategy):
        if len(x_shape) != 4 or len(w_shape) != 4 or x_shape[3] != w_shape[2]:
            raise ValueError(
                f"{name}: input depth {x_shape[3] if len(x_shape) == 4 else '?'} "
                f"does not match filter in_channels "
                f"{w_shape[2] if len(w_shape) == 4 else '?'} (input shape "
                f"{tuple(x_shape)}, filter shape {tuple(w_shape)}); expected "
                f"NHWC input and HWIO filter"
            )
        self.geometry = _Geometry.build(
            name, x_shape[1:3], w_shape[:2], strides, dilations, pads
        )
        self.batch = x_shape[0]
        self.in_channels, self.out_channels = w_shape[2], w_shape[3]
        self.dtype = np.dtype(dtype)
        self.compute_dtype = _compute_dtype(dtype)
        if strategy is None:
            strategy = conv2d_strategy(x_shape, w_shape, strides, dilations, pads)
        taps = len(self.geometry.taps)
        self.layout = _PatchLayout(strategy, taps, self.in_channels)
        self.k = taps * self.in_channels

        out_h, out_w = self.geometry.out_hw
        row_bytes = out_w * self.k * self.compute_dtype.itemsize
        self.images = _images_per_block(self.batch, out_h * row_bytes, _PATCH_BLOCK_BYTES)
        # An image too big for one block is split into bands of output rows.
        self.rows = out_h
        if out_h * row_bytes > _PATCH_BLOCK_BYTES:
            self.rows = max(1, _PATCH_BLOCK_BYTES // row_bytes)
        self.storage = np.empty(self.images * self.rows * out_w * self.k, self.compute_dtype)

    def image_blocks(self) -> Iterator[Pair]:
        for start in range(0, self.batch, self.images):
            yield start, min(self.batch, start + self.images)

    def row_blocks(self) -> Iterator[Pair]:
        out_h = self.geometry.out_hw[0]
        for start in range(0, out_h, self.rows):
            yield start, min(out_h, start + self.rows)

    def gather(self, padded: np.ndarray, rows: Pair) -> np.ndarray:
        """The patch matrix of the output ``rows`` of the padded image block."""
        patches = self.layout.allocate(
            self.storage, padded.shape[0], rows[1] - rows[0], self.geometry.out_hw[1]
        )
        for index, tap in enumerate(self.geometry.taps):
            np.copyto(self.layout.tap_block(patches, index), self.geometry.tap_view(padded, tap, rows))
        return self.layout.matrix(patches)

    def scatter_add(self, padded: np.ndarray, rows: Pair, dy_block, w_matrix) -> None:
        """Add the patch matrix ``dy_block @ w_matrix.T`` into ``padded``.

        This is the transpose of :meth:`gather`: every tap's share is added
        into the strided view of the padded block that the tap reads.
        """
        patches = self.layout.allocate(
            self.storage, padded.shape[0], rows[1] - rows[0], self.geometry.out_hw[1]
        )
        matrix = self.layout.matrix(patches)
        # Write through the C-ordered orientation, the one BLAS can fill.
        if matrix.flags.c_contiguous:
            np.matmul(dy_block, w_matrix.T, out=matrix)
        else:
            np.matmul(w_matrix, dy_block.T, out=matrix.T)
        for index, tap in enumerate(self.geometry.taps):
            view = self.geometry.tap_view(padded, tap, rows)
            np.add(view, self.layout.tap_block(patches, index), out=view)

    def filter_matrix(self, w: np.ndarray) -> np.ndarray:
        """The filter as a contiguous ``(K, Cout)`` matrix in compute dtype."""
        return np.ascontiguousarray(w.reshape(self.k, self.out_channels), self.compute_dtype)


def _gemm_into(a: np.ndarray, b: np.ndarray, target: np.ndarray, scratch) -> None:
    """``target[...] = a @ b``, through a compute-dtype scratch when casting."""
    if target.dtype == a.dtype:
        np.matmul(a, b, out=target)
    else:
        result = scratch[: target.size].reshape(target.shape)
        np.matmul(a, b, out=result)
        np.copyto(target, result)


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    strides: Pair,
    dilations: Pair,
    pads: Pads,
    *,
    strategy: str | None = None,
) -> np.ndarray:
    """2-D convolution (TensorFlow's cross-correlation), NHWC x HWIO -> NHWC.

    ``strategy`` forces ``"shifted_gemm"`` or ``"im2col_gemm"``; by default
    :func:`conv2d_strategy` picks from the shapes. Both give the same result.

    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> w = np.ones((2, 2, 1, 1))
    >>> conv2d(x, w, (2, 2), (1, 1), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[10., 18.],
           [42., 50.]])
    """
    dtype = np.result_type(x, w)
    plan = _ConvPlan("conv2d", x.shape, w.shape, strides, dilations, pads, dtype, strategy)
    out_h, out_w = plan.geometry.out_hw
    out = np.empty((plan.batch, out_h, out_w, plan.out_channels), dtype)
    w_matrix = plan.filter_matrix(w)
    scratch = np.empty(plan.images * plan.rows * out_w * plan.out_channels, plan.compute_dtype)
    padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, fill=0)
    for start, stop in plan.image_blocks():
        padded = padded_blocks.load(start, stop)
        for rows in plan.row_blocks():
            target = out[start:stop, rows[0] : rows[1]].reshape(-1, plan.out_channels)
            _gemm_into(plan.gather(padded, rows), w_matrix, target, scratch)
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
) -> np.ndarray:
    """Gradient of :func:`conv2d` with respect to its input (a transposed conv).

    Per block, one GEMM ``dy @ w_matrix.T`` gives every tap's contribution;
    each tap's share is then added into the strided view of a zero-padded
    ``dx`` block that the tap read in the forward pass, and the padding is
    cropped off.

    >>> w = np.ones((2, 2, 1, 1))
    >>> dy = np.ones((1, 2, 2, 1))
    >>> conv2d_backprop_input((1, 3, 3, 1), w, dy, (1, 1), (1, 1), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    input_shape = tuple(int(d) for d in input_shape)
    dtype = np.result_type(w, dy)
    plan = _ConvPlan(
        "conv2d_backprop_input", input_shape, w.shape, strides, dilations, pads, dtype, strategy
    )
    _check_out_shape("conv2d_backprop_input", dy, plan)
    dy = np.ascontiguousarray(dy)
    w_matrix = plan.filter_matrix(w)
    out_w = plan.geometry.out_hw[1]
    dy_scratch = np.empty(plan.images * plan.rows * out_w * plan.out_channels, plan.compute_dtype)
    scatter = _PaddedScatter(input_shape, dtype, plan.geometry.pads, plan.images, plan.compute_dtype)

    for start, stop in plan.image_blocks():
        padded_dx = scatter.begin(start, stop)
        for rows in plan.row_blocks():
            dy_block = _as_compute(
                dy[start:stop, rows[0] : rows[1]].reshape(-1, plan.out_channels), dy_scratch
            )
            plan.scatter_add(padded_dx, rows, dy_block, w_matrix)
        scatter.finish(start, stop)
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
    one GEMM ``patches.T @ dy`` per block, summed over the blocks.

    >>> x = np.arange(9.0).reshape(1, 3, 3, 1)
    >>> dy = np.ones((1, 2, 2, 1))
    >>> conv2d_backprop_filter(x, (2, 2, 1, 1), dy, (1, 1), (1, 1), ((0, 0), (0, 0)))[:, :, 0, 0]
    array([[ 8., 12.],
           [20., 24.]])
    """
    filter_shape = tuple(int(d) for d in filter_shape)
    dtype = np.result_type(x, dy)
    plan = _ConvPlan(
        "conv2d_backprop_filter", x.shape, filter_shape, strides, dilations, pads, dtype, strategy
    )
    _check_out_shape("conv2d_backprop_filter", dy, plan)
    dy = np.ascontiguousarray(dy)
    out_w = plan.geometry.out_hw[1]
    dy_scratch = np.empty(plan.images * plan.rows * out_w * plan.out_channels, plan.compute_dtype)
    total = np.zeros((plan.k, plan.out_channels), plan.compute_dtype)
    partial = np.empty_like(total)
    padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, fill=0)
    for start, stop in plan.image_blocks():
        padded = padded_blocks.load(start, stop)
        for rows in plan.row_blocks():
            dy_block = _as_compute(
                dy[start:stop, rows[0] : rows[1]].reshape(-1, plan.out_channels), dy_scratch
            )
            np.matmul(plan.gather(padded, rows).T, dy_block, out=partial)
            total += partial
    return total.astype(dtype, copy=False).reshape(filter_shape)


def _as_compute(block: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """``block`` in the scratch's dtype, copying only when the dtype differs."""
    if block.dtype == scratch.dtype:
        return block
    converted = scratch[: block.size].reshape(block.shape)
    np.copyto(converted, block)
    return converted


def _check_out_shape(name: str, dy: np.ndarray, plan: _ConvPlan) -> None:
    expected = (plan.batch, *plan.geometry.out_hw, plan.out_channels)
    if dy.shape != expected:
        raise ValueError(
            f"{name}: output gradient shape {tuple(dy.shape)} does not match "
            f"the conv output shape {expected}"
        )


# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------


class _PoolPlan:
    """Geometry, block size and the column-reduction method of one pooling.

    ``accumulates`` says whether the kernel sums values (then float16 is
    computed in float32) or only selects them (then it keeps its dtype).
    """

    def __init__(self, name, x_shape, ksize, strides, pads, dtype, accumulates):
        if len(x_shape) != 4:
            raise ValueError(f"{name}: expected an NHWC input, got shape {tuple(x_shape)}")
        self.geometry = _Geometry.build(name, x_shape[1:3], ksize, strides, (1, 1), pads)
        self.batch, in_h, in_w, self.channels = x_shape
        self.compute_dtype = _compute_dtype(dtype) if accumulates else np.dtype(dtype)
        (top, bottom), (left, right) = self.geometry.pads
        (kh, kw), (sh, sw) = self.geometry.kernel_hw, self.geometry.strides
        out_h, out_w = self.geometry.out_hw
        # Only the columns some window touches take part in row pooling.
        self.used_w = (out_w - 1) * sw + kw
        image_bytes = (in_h + top + bottom) * (in_w + left + right) * self.channels
        self.images = _images_per_block(
            self.batch, image_bytes * self.compute_dtype.itemsize, _POOL_BLOCK_BYTES
        )
        # Non-overlapping column windows tile the row-pooled block, so it can
        # be viewed as a (pixels, kw * C) matrix and pooled by one GEMM.
        self.columns_by_gemm = sw == kw and self.channels <= _GEMM_COLUMN_POOL_MAX_CHANNELS

    def image_blocks(self) -> Iterator[Pair]:
        for start in range(0, self.batch, self.images):
            yield start, min(self.batch, start + self.images)

    def row_tap_views(self, padded: np.ndarray) -> list[np.ndarray]:
        """Per row tap, the padded rows (as far as ``used_w``) that it meets."""
        out_h, sh = self.geometry.out_hw[0], self.geometry.strides[0]
        return [
            padded[:, i : i + (out_h - 1) * sh + 1 : sh, : self.used_w]
            for i in range(self.geometry.kernel_hw[0])
        ]

    def col_tap_views(self, row_pooled: np.ndarray) -> list[np.ndarray]:
        """Per column tap, the cells of a row-pooled block that it meets."""
        out_w, sw = self.geometry.out_hw[1], self.geometry.strides[1]
        return [
            row_pooled[:, :, j : j + (out_w - 1) * sw + 1 : sw]
            for j in range(self.geometry.kernel_hw[1])
        ]

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
        return np.ascontiguousarray(
            np.broadcast_to(reciprocal[:, :, None], (*geometry.out_hw, self.channels))
        )


def _reduce_views(reduce: np.ufunc, views: list[np.ndarray], out: np.ndarray) -> None:
    """``out = reduce(views[0], views[1], ...)`` without temporaries."""
    if len(views) == 1:
        np.copyto(out, views[0])
        return
    reduce(views[0], views[1], out=out)
    for view in views[2:]:
        reduce(out, view, out=out)


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
    row_pooled_all = np.empty((plan.images, out_h, plan.used_w, channels), plan.compute_dtype)
    use_gemm = reduce is np.add and plan.columns_by_gemm
    if use_gemm:
        column_matrix = plan.column_sum_matrix()
        if np.isscalar(scale):
            column_matrix *= scale
            scale = None
    needs_cast = plan.compute_dtype != x.dtype
    if needs_cast:
        out_scratch = np.empty((plan.images, out_h, out_w, channels), plan.compute_dtype)
    padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, fill)
    for start, stop in plan.image_blocks():
        padded = padded_blocks.load(start, stop)
        row_pooled = row_pooled_all[: stop - start]
        _reduce_views(reduce, plan.row_tap_views(padded), row_pooled)
        target = out_scratch[: stop - start] if needs_cast else out[start:stop]
        if use_gemm:
            np.matmul(
                row_pooled.reshape(-1, kw * channels),
                column_matrix,
                out=target.reshape(-1, channels),
            )
        else:
            _reduce_views(reduce, plan.col_tap_views(row_pooled), target)
        if scale is not None:
            np.multiply(target, scale, out=target)
        if needs_cast:
            np.copyto(out[start:stop], target)
    return out


def avg_pool(x: np.ndarray, ksize: Pair, strides: Pair, pads: Pads) -> np.ndarray:
    """Average pooling; padded cells are left out of each window's divisor.

    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> avg_pool(x, (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    plan = _PoolPlan("avg_pool", x.shape, ksize, strides, pads, x.dtype, accumulates=True)
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
    plan = _PoolPlan("avg_pool_grad", input_shape, ksize, strides, pads, dy.dtype, True)
    geometry = plan.geometry
    _check_pool_out_shape("avg_pool_grad", dy, plan)
    dy = np.ascontiguousarray(dy)
    reciprocal = plan.reciprocal_counts()
    uniform = not geometry.has_padding
    channels, (kh, kw) = plan.channels, geometry.kernel_hw
    out_h, out_w = geometry.out_hw
    scaled = np.empty((plan.images, out_h, out_w, channels), plan.compute_dtype)
    spread = np.empty((plan.images, out_h, plan.used_w, channels), plan.compute_dtype)
    if plan.columns_by_gemm:
        column_matrix_t = plan.column_sum_matrix().T
        if uniform:
            column_matrix_t = column_matrix_t * reciprocal
    scatter = _PaddedScatter(input_shape, dy.dtype, geometry.pads, plan.images, plan.compute_dtype)
    rows_overlap = geometry.strides[0] < kh

    for start, stop in plan.image_blocks():
        images = stop - start
        grad = scaled[:images]
        row_spread = spread[:images]
        if plan.columns_by_gemm and uniform:
            grad = _as_compute(dy[start:stop], scaled)
        else:
            np.multiply(dy[start:stop], reciprocal, out=grad)
        if plan.columns_by_gemm:
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
    plan = _PoolPlan("max_pool", x.shape, ksize, strides, pads, x.dtype, accumulates=False)
    return _pool_forward(plan, x, np.maximum, -np.inf)


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
        raise ValueError(
            f"{name}: pooled shape {tuple(y.shape)} does not match the pooling "
            f"output shape {expected}"
        )


def max_pool_grad(
    x: np.ndarray,
    y: np.ndarray,
    dy: np.ndarray,
    ksize: Pair,
    strides: Pair,
    pads: Pads,
) -> np.ndarray:
    """Gradient of :func:`max_pool` (``y = max_pool(x)``) with respect to ``x``.

    Each window's gradient goes to its first maximum in row-major order.

    >>> x = np.array([[1.0, 3.0], [3.0, 2.0]]).reshape(1, 2, 2, 1)
    >>> y = max_pool(x, (2, 2), (2, 2), ((0, 0), (0, 0)))
    >>> max_pool_grad(x, y, np.ones_like(y), (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[0., 1.],
           [0., 0.]])
    """
    plan = _PoolPlan("max_pool_grad", x.shape, ksize, strides, pads, dy.dtype, True)
    _check_pool_out_shape("max_pool_grad", y, plan)
    _check_pool_out_shape("max_pool_grad", dy, plan)
    block_shape = (plan.images, *plan.geometry.out_hw, plan.channels)
    hit, taken = np.empty(block_shape, bool), np.empty(block_shape, bool)
    padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, fill=np.nan)
    scatter = _PaddedScatter(x.shape, dy.dtype, plan.geometry.pads, plan.images, plan.compute_dtype)
    overlap = plan.geometry.windows_overlap
    for start, stop in plan.image_blocks():
        images = stop - start
        padded_dx = scatter.begin(start, stop)
        dy_block = dy[start:stop]
        hits = _first_max_hits(
            plan, padded_blocks.load(start, stop), y[start:stop], hit[:images], taken[:images]
        )
        for tap, tap_hit in hits:
            view = plan.geometry.tap_view(padded_dx, tap)
            if overlap:
                np.add(view, dy_block, out=view, where=tap_hit)
            else:
                np.copyto(view, dy_block, where=tap_hit)
        scatter.finish(start, stop)
    return scatter.dx


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
    plan = _PoolPlan("max_pool_grad_grad", x.shape, ksize, strides, pads, ddx.dtype, False)
    _check_pool_out_shape("max_pool_grad_grad", y, plan)
    if ddx.shape != x.shape:
        raise ValueError(
            f"max_pool_grad_grad: ddx shape {tuple(ddx.shape)} does not match "
            f"input shape {tuple(x.shape)}"
        )
    out = np.zeros(y.shape, ddx.dtype)
    block_shape = (plan.images, *plan.geometry.out_hw, plan.channels)
    hit, taken = np.empty(block_shape, bool), np.empty(block_shape, bool)
    padded_x_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, fill=np.nan)
    padded_ddx_blocks = _PaddedBlocks(ddx, plan.geometry.pads, plan.images, fill=0)
    for start, stop in plan.image_blocks():
        images = stop - start
        padded_ddx = padded_ddx_blocks.load(start, stop)
        out_block = out[start:stop]
        hits = _first_max_hits(
            plan, padded_x_blocks.load(start, stop), y[start:stop], hit[:images], taken[:images]
        )
        for tap, tap_hit in hits:
            np.copyto(out_block, plan.geometry.tap_view(padded_ddx, tap), where=tap_hit)
    return out


# ---------------------------------------------------------------------------
# Fused batch norm
# ---------------------------------------------------------------------------


def _column_sums(matrix: np.ndarray) -> np.ndarray:
    """Per-column sums of a C-ordered ``(rows, C)`` matrix.

    A BLAS matrix-vector product: NumPy's own ``sum(axis=0)`` runs an inner
    loop only ``C`` long and was 5-25x slower for C between 6 and 64.
    """
    return np.ones(matrix.shape[0], matrix.dtype) @ matrix


def fused_batch_norm_forward(
    x: np.ndarray, scale: np.ndarray, offset: np.ndarray, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training-mode batch norm of an NHWC ``x`` over (N, H, W).

    Returns ``(y, batch_mean, batch_var, inv_std)``: ``y`` in ``x``'s dtype;
    the biased (``ddof=0``) variance, the mean and
    ``inv_std = 1 / sqrt(var + epsilon)`` in ``scale``'s dtype (TensorFlow's
    rule: float32 for a float16 ``x``). Statistics are computed in at least
    float32.

    >>> x = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
    >>> y, mean, var, inv_std = fused_batch_norm_forward(x, np.ones(1), np.zeros(1), 0.0)
    >>> y.ravel(), mean, var
    (array([-1.,  1.]), array([2.]), array([1.]))
    """
    channels = x.shape[-1]
    compute = _compute_dtype(x.dtype)
    flat = x.reshape(-1, channels)
    count = flat.shape[0]
    centered = flat.astype(compute)  # a fresh buffer that becomes y
    mean = _column_sums(centered) / count
    centered -= mean
    var = _column_sums(np.square(centered)) / count
    inv_std = 1.0 / np.sqrt(var + compute.type(epsilon))
    centered *= scale.astype(compute) * inv_std
    centered += offset.astype(compute)
    y = centered.astype(x.dtype, copy=False).reshape(x.shape)
    stat_dtype = scale.dtype
    return y, mean.astype(stat_dtype), var.astype(stat_dtype), inv_std.astype(stat_dtype)


def fused_batch_norm_backward(
    dy: np.ndarray,
    x: np.ndarray,
    scale: np.ndarray,
    mean: np.ndarray,
    inv_std: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients ``(dx, dscale, doffset)`` of training-mode batch norm.

    One fused formula with ``M = N*H*W`` and ``xhat = (x - mean) * inv_std``:
    ``dx = scale*inv_std/M * (M*dy - sum(dy) - xhat*sum(dy*xhat))``,
    ``dscale = sum(dy*xhat)``, ``doffset = sum(dy)``. ``dx`` has ``x``'s
    dtype, ``dscale`` and ``doffset`` ``scale``'s.

    >>> x = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
    >>> _, mean, _, inv_std = fused_batch_norm_forward(x, np.ones(1), np.zeros(1), 0.0)
    >>> dy = np.array([1.0, 1.0]).reshape(1, 1, 2, 1)
    >>> dx, dscale, doffset = fused_batch_norm_backward(dy, x, np.ones(1), mean, inv_std)
    >>> dx.ravel(), dscale, doffset
    (array([0., 0.]), array([0.]), array([2.]))
    """
    channels = x.shape[-1]
    compute = _compute_dtype(np.result_type(x, dy))
    flat_dy = dy.reshape(-1, channels)
    count = flat_dy.shape[0]
    inv_std = inv_std.astype(compute)
    centered = np.subtract(x.reshape(-1, channels), mean.astype(compute), dtype=compute)
    product = np.multiply(flat_dy, centered, dtype=compute)
    sum_dy = _column_sums(flat_dy.astype(compute, copy=False))
    sum_dy_centered = _column_sums(product)
    # dx = dy * a + centered * b + c, the formula above with xhat expanded.
    a = scale.astype(compute) * inv_std
    b = -a * inv_std * inv_std * sum_dy_centered / count
    c = -a * sum_dy / count
    centered *= b
    centered += c
    dx = np.multiply(flat_dy, a, out=product, dtype=compute)
    dx += centered
    dscale = (sum_dy_centered * inv_std).astype(scale.dtype)
    doffset = sum_dy.astype(scale.dtype)
    return dx.astype(x.dtype, copy=False).reshape(x.shape), dscale, doffset
