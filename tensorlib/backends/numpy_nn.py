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
of one image) small enough to stay in cache, and every block buffer comes
from a per-thread workspace that outlives the call (:func:`_scratch`); fresh
memory costs a page fault per 4 KiB on first touch, which on the machines we
measured could cost as much as the arithmetic. Outputs are always fresh
arrays: callers keep them. Big convolutions and poolings split their images
between threads (:func:`_split_images`); their skinny GEMMs are cut into
stacks small enough to run on the calling thread (:func:`_single_thread_gemm`). Convolutions either copy each filter tap's strided view of the
input into a patch block and run one BLAS GEMM per block, or, for large
filters on small images, multiply discrete Fourier spectra (see
:func:`conv2d_strategy`). Pooling reduces along rows first, where the runs
are long and contiguous, and only then along columns.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator, NamedTuple

import numpy as np

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]

# A conv patch block of this size fits in the L2+L3 caches of the machines we
# measured on; bigger blocks were slower for the seed and CNN workloads.
_PATCH_BLOCK_BYTES = 4 << 20
# Input bytes of one pooling block; its row-reduced copy then stays in L2.
_POOL_BLOCK_BYTES = 1 << 20
# im2col_gemm copies runs of Cin values, shifted_gemm runs of OW values; the
# measured crossover: shifted_gemm wins up to 4 input channels on any width,
# and while output rows are at least 4x longer than the channel count.
_SHIFTED_GEMM_MAX_CHANNELS = 4
_SHIFTED_GEMM_ROW_PER_CHANNEL = 4
# Column pooling by a GEMM against stacked identities beats strided slices
# only while the GEMM's extra flops (2 * kw * C per output) stay small.
_GEMM_COLUMN_POOL_MAX_CHANNELS = 8

# fourier_gemm: bytes of the spectra of one chunk of images, and of the
# transform work buffer of one block of images.
_FOURIER_CHUNK_BYTES = 4 << 20
_FOURIER_BLOCK_BYTES = 1 << 20
# fourier_gemm's small batched GEMMs ran at a third of the direct method's
# flop rate in our measurements, so it must save that factor in flops.
_FOURIER_OVERHEAD = 3

# Workspace buffers bigger than this are allocated per call instead of kept.
_SCRATCH_MAX_BYTES = 32 << 20
# Pooling of inputs at least this big splits its images between threads:
# it is bound by memory traffic, which one core cannot saturate, and NumPy's
# loops and BLAS release the GIL. At most as many threads as NumPy's BLAS
# may use (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS) and this process's cores.
_PARALLEL_MIN_BYTES = 8 << 20
_MAX_THREADS = 8
# OpenBLAS runs a GEMM of at most this M * N * K on the calling thread.
_BLAS_SINGLE_THREAD_FLOPS = 65536 * 4

SHIFTED_GEMM = "shifted_gemm"
IM2COL_GEMM = "im2col_gemm"
FOURIER_GEMM = "fourier_gemm"


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


class _Workspace(threading.local):
    """Per-thread flat buffers, one per (purpose, dtype), grown on demand."""

    def __init__(self):
        self.buffers: dict[tuple[str, np.dtype], np.ndarray] = {}


_workspace = _Workspace()


def _scratch(purpose: str, shape, dtype) -> np.ndarray:
    """An uninitialised ``shape`` buffer for a kernel's temporaries, reused
    across calls (so its pages are already mapped).

    Each ``purpose`` names one buffer: a kernel must not hold two scratches
    of the same purpose at once, and must never return one (or a view of
    one) to its caller. The cache is per thread and holds at most one
    buffer per purpose and dtype, each at most ``_SCRATCH_MAX_BYTES``.
    """
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    size = math.prod(shape)
    if size * dtype.itemsize > _SCRATCH_MAX_BYTES:
        return np.empty(shape, dtype)
    key = (purpose, dtype)
    buffer = _workspace.buffers.get(key)
    if buffer is None or buffer.size < size:
        buffer = np.empty(size, dtype)
        _workspace.buffers[key] = buffer
    return buffer[:size].reshape(shape)


@functools.lru_cache(maxsize=1)
def _thread_count() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    limit = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or ""
    allowed = int(limit) if limit.isdigit() and int(limit) > 0 else _MAX_THREADS
    return max(1, min(cores or 1, allowed, _MAX_THREADS))


@functools.lru_cache(maxsize=1)
def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_thread_count() - 1, thread_name_prefix="tensorlib-numpy-nn")


if hasattr(os, "register_at_fork"):
    # A forked child has none of the parent's worker threads: it starts its own.
    os.register_at_fork(after_in_child=_executor.cache_clear)


def _split_images(run, batch: int, nbytes: int) -> None:
    """``run(first, last)`` over contiguous shares of the images ``range(batch)``,
    in parallel threads when ``nbytes`` of input make it worth it.

    The calling thread runs the first share. ``run`` must write disjoint
    parts of the output and take its buffers from :func:`_scratch` (which
    is per thread).
    """
    threads = min(_thread_count(), batch) if nbytes >= _PARALLEL_MIN_BYTES else 1
    if threads <= 1:
        run(0, batch)
        return
    bounds = [batch * i // threads for i in range(threads + 1)]
    futures = [_executor().submit(run, first, last) for first, last in zip(bounds[1:-1], bounds[2:])]
    try:
        run(bounds[0], bounds[1])
    finally:
        for future in futures:
            future.result()


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0); big inputs are split over their first axis between threads (memory-bound)."""
    out = np.empty_like(x)
    if x.ndim == 0:
        return np.maximum(x, 0, out=out)

    def run(first, last):
        np.maximum(x[first:last], 0, out=out[first:last])
    _split_images(run, x.shape[0], x.nbytes)
    return out


def relu_grad(dy: np.ndarray, features: np.ndarray) -> np.ndarray:
    """dy where features > 0, else 0, in dy's dtype: the mask is written as 1.0 / 0.0 into the
    output itself (no mask-sized temporary); big inputs are split between threads."""
    out = np.empty(np.broadcast_shapes(dy.shape, features.shape), dy.dtype)
    if out.ndim == 0 or dy.shape != features.shape:
        np.greater(features, 0, out=out)
        return np.multiply(out, dy, out=out)

    def run(first, last):
        part = out[first:last]
        np.greater(features[first:last], 0, out=part)
        np.multiply(part, dy[first:last], out=part)
    _split_images(run, out.shape[0], out.nbytes)
    return out


def _single_thread_gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = a @ b`` for a tall, skinny ``a``, as a stack of GEMMs small
    enough that OpenBLAS runs each on the calling thread.

    Such GEMMs are bound by memory traffic, so BLAS threads barely speed them
    up; worse, idle OpenBLAS threads spin for a while after each call and
    take the cores that :func:`_split_images` shares the work out to.
    """
    rows, depth = a.shape
    step = max(1, _BLAS_SINGLE_THREAD_FLOPS // max(1, depth * b.shape[1]))
    stacked = rows - rows % step
    if stacked:
        np.matmul(a[:stacked].reshape(-1, step, depth), b,
                  out=out[:stacked].reshape(-1, step, out.shape[1]))
    if stacked < rows:
        np.matmul(a[stacked:], b, out=out[stacked:])


def _compute_dtype(dtype) -> np.dtype:
    """float16 is computed in float32; every other dtype as it is."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _images_per_block(batch: int, bytes_per_image: int, budget: int) -> int:
    return int(min(batch, max(1, budget // max(1, bytes_per_image))))


class _PaddedBlocks:
    """Blocks of images of ``x`` in ``dtype``, padded by copying into one
    reused buffer.

    The border is filled once; each block overwrites only the interior.
    Without padding or a cast, the blocks are plain slices of ``x``. A cast
    is done here, once per block, because NumPy's float16 loops are several
    times slower than its float32 ones.
    """

    def __init__(self, x: np.ndarray, pads: Pads, images: int, fill: float, dtype=None,
                 purpose: str = "padded"):
        self.x = x
        (self.top, bottom), (self.left, right) = pads
        dtype = x.dtype if dtype is None else np.dtype(dtype)
        self.buffer = None
        if any(pads[0]) or any(pads[1]) or dtype != x.dtype:
            _, h, w, c = x.shape
            shape = (images, h + self.top + bottom, w + self.left + right, c)
            self.buffer = _scratch(purpose, shape, dtype)
            self.buffer.fill(fill)

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
    ``overwrites=True`` promises that the caller writes every cell of each
    block: then nothing is zeroed (zeroed memory is fresh memory, whose
    pages fault on first touch).
    """

    def __init__(self, dx_shape, dtype, pads: Pads, images: int, compute_dtype, overwrites=False):
        (self.top, bottom), (self.left, right) = pads
        self.direct = not (any(pads[0]) or any(pads[1])) and dtype == compute_dtype
        self.overwrites = overwrites
        if self.direct:
            self.dx = (np.empty if overwrites else np.zeros)(dx_shape, dtype)
        else:
            self.dx = np.empty(dx_shape, dtype)
            _, h, w, c = dx_shape
            shape = (images, h + self.top + bottom, w + self.left + right, c)
            self.buffer = _scratch("padded_gradient", shape, compute_dtype)

    def begin(self, start: int, stop: int) -> np.ndarray:
        if self.direct:
            return self.dx[start:stop]
        block = self.buffer[: stop - start]
        if not self.overwrites:
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


def _fourier_flops(in_hw: Pair, out_hw: Pair, padded_hw: Pair, in_c: int, out_c: int) -> int:
    """Real flops per image of the fourier_gemm forward pass (see _FourierPlan)."""
    (h, w), (out_h, out_w), (length_h, length_w) = in_hw, out_hw, padded_hw
    half_h = length_h // 2 + 1
    spectrum = 4 * half_h * h * w * in_c + 8 * half_h * length_w * w * in_c
    product = 8 * half_h * length_w * in_c * out_c
    synthesis = 8 * half_h * out_w * length_w * out_c + 4 * out_h * half_h * out_w * out_c
    return spectrum + product + synthesis


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
      values, ``F`` about half the padded image's pixels) is no bigger than
      the batch's input and output: products of discrete Fourier spectra
      over the padded image (see ``_FourierPlan``). It pays for large
      filters on small images, like a 5x5 conv from 32 to 64 channels on
      14x14.
    * else ``"shifted_gemm"`` when the input has at most 4 channels or the
      output rows are at least 4 times longer than the channel count: each
      tap's shifted, strided view of the input is copied as whole output
      rows into a ``(taps * Cin, pixels)`` block and the ``KH*KW`` per-tap
      GEMMs are summed inside one BLAS call.
    * else ``"im2col_gemm"``: patches laid out ``(pixels, taps * Cin)``, one
      GEMM per block; each copy run is ``Cin`` values long.

    All three give the same result to rounding.

    >>> conv2d_strategy((6000, 32, 32, 1), (3, 3, 1, 6), (1, 1), (1, 1), ((0, 0), (0, 0)))
    'shifted_gemm'
    >>> conv2d_strategy((128, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), ((2, 2), (2, 2)))
    'fourier_gemm'
    >>> conv2d_strategy((128, 28, 28, 32), (3, 3, 32, 64), (2, 2), (1, 1), ((0, 1), (0, 1)))
    'im2col_gemm'
    """
    (batch, h, w, in_c), (kh, kw, _, out_c) = x_shape, w_shape
    out_hw, _ = resolve_conv_padding((h, w), (kh, kw), strides, dilations, pads)
    padded_hw = (h + sum(pads[0]), w + sum(pads[1]))
    direct_flops = 2 * out_hw[0] * out_hw[1] * kh * kw * in_c * out_c
    fourier_flops = _fourier_flops((h, w), out_hw, padded_hw, in_c, out_c)
    frequencies = (padded_hw[0] // 2 + 1) * padded_hw[1]
    activations = batch * (h * w * in_c + out_hw[0] * out_hw[1] * out_c)
    if (
        fourier_flops * _FOURIER_OVERHEAD < direct_flops
        and 4 * frequencies * in_c * out_c <= activations
    ):
        return FOURIER_GEMM
    if in_c <= _SHIFTED_GEMM_MAX_CHANNELS or in_c * _SHIFTED_GEMM_ROW_PER_CHANNEL <= out_hw[1]:
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
                f"{name}: unknown strategy {strategy!r}; use {SHIFTED_GEMM!r}, "
                f"{IM2COL_GEMM!r} or {FOURIER_GEMM!r}"
            )
        self.strategy = strategy

    def check_out_gradient(self, name: str, dy: np.ndarray) -> np.ndarray:
        expected = (self.batch, *self.geometry.out_hw, self.out_channels)
        if dy.shape != expected:
            raise ValueError(
                f"{name}: output gradient shape {tuple(dy.shape)} does not match "
                f"the conv output shape {expected}"
            )
        return np.ascontiguousarray(dy)


def _blocks(total: int, size: int, first: int = 0) -> Iterator[Pair]:
    for start in range(first, total, size):
        yield start, min(total, start + size)


def _as_compute(block: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """``block`` in the scratch's dtype, copying only when the dtype differs."""
    if block.dtype == scratch.dtype:
        return block
    converted = scratch[: block.size].reshape(block.shape)
    np.copyto(converted, block)
    return converted


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

    def image_blocks(self, first: int = 0, last: int | None = None) -> Iterator[Pair]:
        return _blocks(self.conv.batch if last is None else last, self.images, first)

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
        """The patch matrix of the output ``rows`` of the padded image block."""
        patches = self._patches(padded.shape[0], rows)
        for index, tap in enumerate(self.geometry.taps):
            view = self.layout.arrange(self.geometry.tap_view(padded, tap, rows))
            np.copyto(self.layout.tap_block(patches, index), view)
        return self.layout.matrix(patches)

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
        return np.ascontiguousarray(
            w.reshape(self.k, self.conv.out_channels), self.conv.compute_dtype
        )


def _dft_angles(positions: Pair, count: int, frequencies: int, length: int) -> np.ndarray:
    """``(frequencies, count)`` angles ``2 pi f p / length`` for the samples
    at ``p = offset + step * k``, ``positions = (offset, step)``."""
    offset, step = positions
    samples = offset + step * np.arange(count)
    # Reducing f * p modulo the length in integers keeps the angles exact.
    return (2 * np.pi / length) * (np.multiply.outer(np.arange(frequencies), samples) % length)


@functools.lru_cache(maxsize=64)
def _half_analysis_matrix(positions: Pair, count: int, length: int, dtype) -> np.ndarray:
    """``(2 Fh, count)``: rows ``(f, re/im)`` of ``exp(-2 pi i f p / L)``,
    the half spectrum of a real signal sampled at ``positions``."""
    angles = _dft_angles(positions, count, length // 2 + 1, length)
    matrix = np.stack([np.cos(angles), -np.sin(angles)], axis=1).reshape(-1, count)
    return _read_only(matrix.astype(dtype))


@functools.lru_cache(maxsize=64)
def _full_analysis_matrix(positions: Pair, count: int, length: int, dtype) -> np.ndarray:
    """``(2 L, 2 count)``: ``exp(-2 pi i f p / L)`` acting on complex columns
    stored as ``(re/im, p)`` rows, giving ``(f, re/im)`` rows."""
    angles = _dft_angles(positions, count, length, length)
    cos, sin = np.cos(angles), np.sin(angles)
    matrix = np.stack([np.stack([cos, sin], 1), np.stack([-sin, cos], 1)], 1)
    return _read_only(matrix.reshape(2 * length, 2 * count).astype(dtype))


@functools.lru_cache(maxsize=64)
def _full_synthesis_matrix(positions: Pair, count: int, length: int, dtype) -> np.ndarray:
    """``(2 count, 2 L)``: ``exp(+2 pi i f p / L)`` taking ``(f, re/im)`` rows
    to ``(re/im, p)`` rows (unscaled)."""
    angles = _dft_angles(positions, count, length, length).T
    cos, sin = np.cos(angles), np.sin(angles)
    matrix = np.stack([np.stack([cos, -sin], 2), np.stack([sin, cos], 2)], 0)
    return _read_only(matrix.reshape(2 * count, 2 * length).astype(dtype))


@functools.lru_cache(maxsize=64)
def _half_synthesis_matrix(positions: Pair, count: int, length: int, scale: float, dtype):
    """``(count, 2 Fh)``: the real signal at ``positions`` from its half
    spectrum's ``(f, re/im)`` rows, times ``scale``. Frequencies that stand
    for a conjugate pair count twice."""
    half = length // 2 + 1
    weights = np.full(half, 2.0 * scale)
    weights[0] = scale
    if length % 2 == 0:
        weights[-1] = scale
    angles = _dft_angles(positions, count, half, length).T
    matrix = np.stack([np.cos(angles) * weights, -np.sin(angles) * weights], axis=2)
    return _read_only(matrix.reshape(count, 2 * half).astype(dtype))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False  # shared through the caches above
    return array


class _FourierPlan:
    """The fourier_gemm strategy: convolution as a product of spectra.

    Every signal (image, output gradient, filter) is placed at its positions
    in the padded image and transformed with a discrete Fourier transform of
    the padded size ``Lh x Lw``, long enough that the circular convolution
    never wraps onto a value that is kept; strides and dilations are just
    the positions that samples sit at. The transforms are dense DFT matrices
    applied as batched real GEMMs (NumPy's FFT is several times slower on
    thousands of tiny images): half a spectrum along H, since the signals
    are real, then the full spectrum along W. A spectrum is stored
    ``(images, F, 2, C)`` with ``F = Fh * Lw``, the (re, im) pair next to
    the channels, so the complex product at each frequency is one real GEMM
    with both dimensions doubled.
    """

    def __init__(self, conv: _ConvShapes):
        self.conv = conv
        geometry = conv.geometry
        (top, bottom), (left, right) = geometry.pads
        (h, w), (_, out_w) = geometry.in_hw, geometry.out_hw
        self.lengths = (h + top + bottom, w + left + right)
        self.half_h = self.lengths[0] // 2 + 1
        self.frequencies = self.half_h * self.lengths[1]
        # (offset, step) of the samples along H and W, in padded coordinates.
        self.input_positions = ((top, 1), (left, 1))
        self.output_positions = ((0, geometry.strides[0]), (0, geometry.strides[1]))
        self.tap_positions = ((0, geometry.dilations[0]), (0, geometry.dilations[1]))
        in_c, out_c = conv.in_channels, conv.out_channels
        itemsize = conv.compute_dtype.itemsize
        # The per-frequency products run one small GEMM per frequency, whose
        # fixed cost is paid once per chunk: chunks are as big as memory
        # allows. The transforms run on sub-blocks that stay in cache.
        spectra_bytes = itemsize * 2 * self.frequencies * (in_c + out_c)
        self.images = _images_per_block(conv.batch, spectra_bytes, _FOURIER_CHUNK_BYTES)
        self.work_per_image = 2 * self.half_h * max(w, out_w) * max(in_c, out_c)
        self.transform_images = _images_per_block(
            self.images, itemsize * self.work_per_image, _FOURIER_BLOCK_BYTES
        )

    def _work(self, size: int) -> np.ndarray:
        """The front of the reused transform work buffer."""
        return _scratch("fourier_work", size, self.conv.compute_dtype)

    def image_blocks(self) -> Iterator[Pair]:
        return _blocks(self.conv.batch, self.images)

    def spectra_buffer(self, purpose: str, channels: int) -> np.ndarray:
        shape = (self.images, self.frequencies, 2, channels)
        return _scratch(purpose, shape, self.conv.compute_dtype)

    def spectrum(self, signal: np.ndarray, positions, out: np.ndarray) -> np.ndarray:
        """Spectrum of ``signal`` ``(images, n_h, n_w, C)`` sampled at
        ``positions``, written into the front of ``out`` and returned."""
        dtype = self.conv.compute_dtype
        images, n_h, n_w, channels = signal.shape
        length_h, length_w = self.lengths
        rows = _half_analysis_matrix(positions[0], n_h, length_h, dtype)
        cols = _full_analysis_matrix(positions[1], n_w, length_w, dtype)
        for start, stop in _blocks(images, self.transform_images):
            half = self._work((stop - start) * 2 * self.half_h * n_w * channels)
            half = half.reshape(stop - start, 2 * self.half_h, n_w * channels)
            block = signal[start:stop].reshape(stop - start, n_h, n_w * channels)
            np.matmul(rows, block, out=half)
            np.matmul(
                cols,
                half.reshape(-1, 2 * n_w, channels),
                out=out[start:stop].reshape(-1, 2 * length_w, channels),
            )
        return out[:images]

    def synthesis(self, spectrum: np.ndarray, positions, out: np.ndarray) -> None:
        """Write into ``out`` ``(images, m_h, m_w, C)`` the real signal at
        ``positions`` whose spectrum is ``spectrum`` ``(images, F, 2, C)``."""
        dtype = self.conv.compute_dtype
        images, m_h, m_w, channels = out.shape
        length_h, length_w = self.lengths
        cols = _full_synthesis_matrix(positions[1], m_w, length_w, dtype)
        rows = _half_synthesis_matrix(positions[0], m_h, length_h, 1 / (length_h * length_w), dtype)
        for start, stop in _blocks(images, self.transform_images):
            by_row_frequency = self._work((stop - start) * 2 * self.half_h * m_w * channels)
            by_row_frequency = by_row_frequency.reshape(-1, 2 * m_w, channels)
            np.matmul(
                cols,
                spectrum[start:stop].reshape(-1, 2 * length_w, channels),
                out=by_row_frequency,
            )
            np.matmul(
                rows,
                by_row_frequency.reshape(stop - start, 2 * self.half_h, m_w * channels),
                out=out[start:stop].reshape(stop - start, m_h, m_w * channels),
            )

    def filter_spectrum(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Real and imaginary parts ``(F, Cin, Cout)`` of the filter's spectrum."""
        kh, kw, in_c, out_c = w.shape
        taps = np.ascontiguousarray(w.reshape(1, kh, kw, in_c * out_c), self.conv.compute_dtype)
        spectrum = _scratch("filter_spectrum", (1, self.frequencies, 2, in_c * out_c), self.conv.compute_dtype)
        self.spectrum(taps, self.tap_positions, spectrum)
        spectrum = spectrum.reshape(self.frequencies, 2, in_c, out_c)
        return spectrum[:, 0], spectrum[:, 1]

    def per_frequency_product(self, spectrum: np.ndarray, blocks: np.ndarray, out: np.ndarray):
        """``out[b, f] = spectrum[b, f] @ blocks[f]`` for the images of ``spectrum``."""
        images = spectrum.shape[0]
        product = out[:images]
        np.matmul(
            spectrum.reshape(images, self.frequencies, -1).transpose(1, 0, 2),
            blocks,
            out=product.reshape(images, self.frequencies, -1).transpose(1, 0, 2),
        )
        return product


def _complex_blocks(real: np.ndarray, imag: np.ndarray, conjugate: bool = False) -> np.ndarray:
    """Real ``(F, 2m, 2n)`` matrices ``[[real, imag], [-imag, real]]``:
    right-multiplying a (re | im) row by one multiplies the complex row by
    the complex matrix ``real + i imag`` (or by its conjugate)."""
    frequencies, m, n = real.shape
    blocks = _scratch("complex_blocks", (frequencies, 2, m, 2, n), real.dtype)
    plus, minus = (blocks[:, 1, :, 0], blocks[:, 0, :, 1]) if conjugate else (
        blocks[:, 0, :, 1], blocks[:, 1, :, 0])
    blocks[:, 0, :, 0] = real
    np.copyto(plus, imag)
    np.negative(imag, out=minus)
    blocks[:, 1, :, 1] = real
    return blocks.reshape(frequencies, 2 * m, 2 * n)


def _fourier_conv2d(conv: _ConvShapes, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    plan = _FourierPlan(conv)
    real, imag = plan.filter_spectrum(w)
    # y = x (*) w in the spectrum: Y = X conj(W), summed over Cin.
    out = np.empty((conv.batch, *conv.geometry.out_hw, conv.out_channels), conv.dtype)
    _fourier_apply(plan, _complex_blocks(real, imag, conjugate=True), x, ("input", plan.input_positions),
                   out, ("output", plan.output_positions))
    return out


def _fourier_conv2d_backprop_input(conv: _ConvShapes, w: np.ndarray, dy: np.ndarray):
    plan = _FourierPlan(conv)
    real, imag = plan.filter_spectrum(w)
    # dx = dy scattered through w: DX = DY W, summed over Cout.
    dx = np.empty((conv.batch, *conv.geometry.in_hw, conv.in_channels), conv.dtype)
    _fourier_apply(plan, _complex_blocks(real.transpose(0, 2, 1), imag.transpose(0, 2, 1)),
                   dy, ("output", plan.output_positions), dx, ("input", plan.input_positions))
    return dx


def _fourier_apply(plan: _FourierPlan, blocks, source: np.ndarray, source_side, target: np.ndarray,
                   target_side) -> None:
    """``target`` = the per-frequency product of ``source``'s spectrum with the filter ``blocks``,
    image block by image block.  A side is ("input" | "output", its pixel positions)."""
    source_name, source_positions = source_side
    target_name, target_positions = target_side
    source_spectra = plan.spectra_buffer(f"{source_name}_spectra", source.shape[-1])
    target_spectra = plan.spectra_buffer(f"{target_name}_spectra", target.shape[-1])
    cast = "cast_input" if source_name == "input" else "cast_out_gradient"
    scratch = _scratch(cast, plan.images * source[0].size, plan.conv.compute_dtype)
    for start, stop in plan.image_blocks():
        spectrum = plan.spectrum(_as_compute(source[start:stop], scratch), source_positions, source_spectra)
        product = plan.per_frequency_product(spectrum, blocks, target_spectra)
        _synthesize_into(plan, product, target_positions, target[start:stop])


def _fourier_conv2d_backprop_filter(conv: _ConvShapes, x: np.ndarray, dy: np.ndarray):
    plan = _FourierPlan(conv)
    in_c, out_c = conv.in_channels, conv.out_channels
    # dw = x correlated with dy: DW = sum over images of X^T conj(DY).
    gram = _scratch("gram", (plan.frequencies, 2 * in_c, 2 * out_c), conv.compute_dtype)
    gram.fill(0)
    partial = _scratch("partial_gram", gram.shape, conv.compute_dtype)
    x_spectra = plan.spectra_buffer("input_spectra", in_c)
    dy_spectra = plan.spectra_buffer("output_spectra", out_c)
    x_scratch = _scratch("cast_input", plan.images * x[0].size, conv.compute_dtype)
    dy_scratch = _scratch("cast_out_gradient", plan.images * dy[0].size, conv.compute_dtype)
    for start, stop in plan.image_blocks():
        images = stop - start
        x_block, dy_block = _as_compute(x[start:stop], x_scratch), _as_compute(dy[start:stop], dy_scratch)
        x_spectrum = plan.spectrum(x_block, plan.input_positions, x_spectra)
        dy_spectrum = plan.spectrum(dy_block, plan.output_positions, dy_spectra)
        np.matmul(
            x_spectrum.reshape(images, plan.frequencies, 2 * in_c).transpose(1, 2, 0),
            dy_spectrum.reshape(images, plan.frequencies, 2 * out_c).transpose(1, 0, 2),
            out=partial,
        )
        gram += partial
    gram = gram.reshape(plan.frequencies, 2, in_c, 2, out_c)
    spectrum = _scratch("filter_spectrum", (plan.frequencies, 2, in_c, out_c), conv.compute_dtype)
    np.add(gram[:, 0, :, 0], gram[:, 1, :, 1], out=spectrum[:, 0])
    np.subtract(gram[:, 1, :, 0], gram[:, 0, :, 1], out=spectrum[:, 1])
    kh, kw = conv.geometry.kernel_hw
    dw = np.empty((1, kh, kw, in_c * out_c), conv.compute_dtype)  # fresh: it is returned
    plan.synthesis(spectrum.reshape(1, plan.frequencies, 2, in_c * out_c), plan.tap_positions, dw)
    return dw.reshape(kh, kw, in_c, out_c).astype(conv.dtype, copy=False)


def _synthesize_into(plan: _FourierPlan, spectrum, positions, target: np.ndarray) -> None:
    """Synthesis straight into ``target``, through a scratch when casting."""
    if target.dtype == plan.conv.compute_dtype:
        plan.synthesis(spectrum, positions, target)
    else:
        result = _scratch("cast_result", target.shape, plan.conv.compute_dtype)
        plan.synthesis(spectrum, positions, result)
        np.copyto(target, result)


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
) -> np.ndarray:
    """2-D convolution (TensorFlow's cross-correlation), NHWC x HWIO -> NHWC.

    ``strategy`` forces ``"shifted_gemm"``, ``"im2col_gemm"`` or
    ``"fourier_gemm"``; by default :func:`conv2d_strategy` picks one from the
    shapes.

    >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
    >>> w = np.ones((2, 2, 1, 1))
    >>> conv2d(x, w, (2, 2), (1, 1), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[10., 18.],
           [42., 50.]])
    """
    dtype = np.result_type(x, w)
    conv = _ConvShapes("conv2d", x.shape, w.shape, strides, dilations, pads, dtype, strategy)
    if conv.strategy == FOURIER_GEMM:
        return _fourier_conv2d(conv, x, w)
    plan = _PatchPlan(conv)
    out_h, out_w = conv.geometry.out_hw
    out = np.empty((conv.batch, out_h, out_w, conv.out_channels), dtype)
    w_matrix = plan.filter_matrix(w)

    def run(first: int, last: int) -> None:
        scratch = _scratch("cast_result", plan.pixels * conv.out_channels, conv.compute_dtype)
        padded_blocks = _PaddedBlocks(x, conv.geometry.pads, plan.images, 0, conv.compute_dtype)
        for start, stop in plan.image_blocks(first, last):
            padded = padded_blocks.load(start, stop)
            for rows in plan.row_blocks():
                target = out[start:stop, rows[0] : rows[1]].reshape(-1, conv.out_channels)
                _gemm_into(plan.gather(padded, rows), w_matrix, target, scratch)

    _split_images(run, conv.batch, max(x.nbytes, out.nbytes))
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

    With the patch strategies, one GEMM ``dy @ w_matrix.T`` per block gives
    every tap's contribution; each tap's share is added into the strided
    view of a zero-padded ``dx`` block that the tap read in the forward
    pass, and the padding is cropped off. With ``"fourier_gemm"`` the
    spectrum of ``dy`` is multiplied by the filter's and synthesized at the
    input's positions.

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
    if conv.strategy == FOURIER_GEMM:
        return _fourier_conv2d_backprop_input(conv, w, dy)
    plan = _PatchPlan(conv)
    w_matrix = plan.filter_matrix(w)
    scatter = _PaddedScatter(input_shape, dtype, conv.geometry.pads, plan.images, conv.compute_dtype)
    for start, stop in plan.image_blocks():
        padded_dx = scatter.begin(start, stop)
        for rows, dy_block in plan.out_gradient_blocks(dy, start, stop):
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
    filter_shape = tuple(int(d) for d in filter_shape)
    dtype = np.result_type(x, dy)
    name = "conv2d_backprop_filter"
    conv = _ConvShapes(name, x.shape, filter_shape, strides, dilations, pads, dtype, strategy)
    dy = conv.check_out_gradient(name, dy)
    if conv.strategy == FOURIER_GEMM:
        return _fourier_conv2d_backprop_filter(conv, x, dy)
    plan = _PatchPlan(conv)
    total = np.zeros((plan.k, conv.out_channels), conv.compute_dtype)
    partial = np.empty_like(total)
    padded_blocks = _PaddedBlocks(x, conv.geometry.pads, plan.images, 0, conv.compute_dtype)
    for start, stop in plan.image_blocks():
        padded = padded_blocks.load(start, stop)
        for rows, dy_block in plan.out_gradient_blocks(dy, start, stop):
            np.matmul(plan.gather(padded, rows).T, dy_block, out=partial)
            total += partial
    return total.astype(dtype, copy=False).reshape(filter_shape)


# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------


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
        self.images = _images_per_block(
            self.batch, image_bytes * self.compute_dtype.itemsize, _POOL_BLOCK_BYTES
        )
        # Non-overlapping column windows tile the row-pooled block, so it can
        # be viewed as a (pixels, kw * C) matrix and pooled by one GEMM.
        self.columns_by_gemm = sw == kw and self.channels <= _GEMM_COLUMN_POOL_MAX_CHANNELS
        # Whether the windows cover the padded input once each, edge to edge.
        self.windows_tile = (sh, sw) == (kh, kw) and (out_h * kh, out_w * kw) == (
            in_h + top + bottom, in_w + left + right)

    def image_blocks(self, first: int = 0, last: int | None = None) -> Iterator[Pair]:
        return _blocks(self.batch if last is None else last, self.images, first)

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
    use_gemm = reduce is np.add and plan.columns_by_gemm
    if use_gemm:
        column_matrix = plan.column_sum_matrix()
        if np.isscalar(scale):
            column_matrix *= scale
            scale = None
    needs_cast = plan.compute_dtype != x.dtype

    def run(first: int, last: int) -> None:
        block_shape = (plan.images, out_h, out_w, channels)
        row_pooled_all = _scratch("row_pooled", (plan.images, out_h, plan.used_w, channels), plan.compute_dtype)
        out_scratch = _scratch("cast_result", block_shape, plan.compute_dtype) if needs_cast else None
        padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, fill, plan.compute_dtype)
        for start, stop in plan.image_blocks(first, last):
            padded = padded_blocks.load(start, stop)
            row_pooled = row_pooled_all[: stop - start]
            _reduce_views(reduce, plan.row_tap_views(padded), row_pooled)
            target = out_scratch[: stop - start] if needs_cast else out[start:stop]
            if use_gemm:
                _single_thread_gemm(
                    row_pooled.reshape(-1, kw * channels), column_matrix, target.reshape(-1, channels)
                )
            else:
                _reduce_views(reduce, plan.col_tap_views(row_pooled), target)
            if scale is not None:
                np.multiply(target, scale, out=target)
            if needs_cast:
                np.copyto(out[start:stop], target)

    _split_images(run, plan.batch, x.nbytes)
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
    scatter = _PaddedScatter(input_shape, dy.dtype, geometry.pads, plan.images, plan.compute_dtype,
                             overwrites=plan.windows_tile)
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
    plan = _PoolPlan("max_pool", x.shape, ksize, strides, pads, x.dtype)
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
    plan = _PoolPlan("max_pool_grad", x.shape, ksize, strides, pads, dy.dtype)
    _check_pool_out_shape("max_pool_grad", y, plan)
    _check_pool_out_shape("max_pool_grad", dy, plan)
    block_shape = (plan.images, *plan.geometry.out_hw, plan.channels)
    hit, taken = _scratch("hit", block_shape, bool), _scratch("taken", block_shape, bool)
    padded_blocks = _PaddedBlocks(x, plan.geometry.pads, plan.images, np.nan, plan.compute_dtype)
    overlap = plan.geometry.windows_overlap
    scatter = _PaddedScatter(x.shape, dy.dtype, plan.geometry.pads, plan.images, plan.compute_dtype,
                             overwrites=plan.windows_tile)
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
                # Each cell is in one window at most, so writing the zeros
                # too is right, and it is several times faster than a
                # masked copy on sparse masks.
                np.multiply(dy_block, tap_hit, out=view)
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
    plan = _PoolPlan("max_pool_grad_grad", x.shape, ksize, strides, pads, ddx.dtype)
    _check_pool_out_shape("max_pool_grad_grad", y, plan)
    if ddx.shape != x.shape:
        raise ValueError(
            f"max_pool_grad_grad: ddx shape {tuple(ddx.shape)} does not match "
            f"input shape {tuple(x.shape)}"
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
