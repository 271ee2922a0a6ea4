"""Shared machinery of the NumPy nn kernels: conv/pool geometry, the per-thread workspace,
image blocks (padded loads and scatters), thread splitting and single-thread GEMMs."""

from __future__ import annotations

import functools
import itertools
import math
import os
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]

# Workspace buffers bigger than this are allocated per call instead of kept.
_SCRATCH_MAX_BYTES = 32 << 20

# Pooling of inputs at least this big splits its images between threads:
# it is bound by memory traffic, which one core cannot saturate, and NumPy's
# loops and BLAS release the GIL. At most as many threads as NumPy's BLAS
# may use (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS) and this process's cores.
_PARALLEL_MIN_BYTES = 8 << 20
_MAX_THREADS = 8

# Compute-bound kernels made of GEMMs too small for BLAS to thread (the
# fourier_gemm transforms and per-frequency products, stacked thin GEMMs)
# share their images out between threads from this many flops on: about a
# millisecond of one core.
_PARALLEL_MIN_FLOPS = 20_000_000

# Blocks per thread when a kernel shares its blocks out, so that the threads
# finish together even when one of them gets less of a core.
_BLOCKS_PER_THREAD = 4

# Lanes per thread of a reduction shared out by _share_lanes.
_LANES_PER_THREAD = 2

# OpenBLAS runs a GEMM of at most this M * N * K on the calling thread.
_BLAS_SINGLE_THREAD_FLOPS = 65536 * 4

# Contraction lengths of the pieces of a thin GEMM (_add_thin_gemm): 256
# ran fastest for a 25 x 32 filter gradient; pieces shorter than 32 waste
# most of each call on its fixed cost.
_THIN_GEMM_MAX_STEP = 256
_THIN_GEMM_MIN_STEP = 32


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
        raise ValueError(f"conv geometry: kernel size {k}, stride {stride} and dilation {dilation} must all be >= 1")
    effective_k = (k - 1) * dilation + 1
    if isinstance(padding, str):
        if padding == "SAME":
            out_size = -(-in_size // stride)
            total = max((out_size - 1) * stride + effective_k - in_size, 0)
            return out_size, (total // 2, total - total // 2)
        if padding != "VALID":
            raise ValueError(
                f"conv geometry: padding must be 'VALID', 'SAME' or a (before, after) pair, got {padding!r}"
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
        return any(s < (k - 1) * d + 1 for s, k, d in zip(self.strides, self.kernel_hw, self.dilations))

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


def _parallel(nbytes: int, flops: int = 0) -> bool:
    """Whether a kernel with ``nbytes`` of input or ``flops`` of single-thread GEMMs
    is worth sharing out between threads."""
    return nbytes >= _PARALLEL_MIN_BYTES or flops >= _PARALLEL_MIN_FLOPS


# time.monotonic() when a kernel last shared its work out between threads (see .blas: while kernels
# do, products keep OpenBLAS's workers asleep).
_shared_at = -math.inf


def _threads_shared_within(seconds: float) -> bool:
    """Whether a kernel shared its work out between threads in the last ``seconds``."""
    return time.monotonic() - _shared_at < seconds


def _share_blocks(run, blocks: Iterable[Pair], parallel: bool, note: bool = True) -> None:
    """``run(blocks)`` in the calling thread and, when ``parallel``, in worker
    threads at once, all drawing from the one iterator over ``blocks``.

    Each block goes to whichever thread asks first, so when the machine is
    busy and a worker gets no core, the calling thread does its blocks and
    the kernel is no slower than on one thread (a fixed share per thread
    would wait for the slowest). ``run`` must write disjoint parts of the
    output per block and take its buffers from :func:`_scratch` (which is
    per thread); it sees the blocks as an iterator, so it sets up its
    buffers and accumulators once per thread. ``note=False`` keeps the
    sharing out of :func:`_threads_shared_within` (products of :mod:`.blas`).
    """
    blocks = list(blocks)
    # Advancing a list iterator is one step under the GIL: no block is taken twice.
    shared = iter(blocks)
    threads = min(_thread_count(), len(blocks)) if parallel else 1
    if threads <= 1:
        run(shared)
        return
    if note:
        global _shared_at
        _shared_at = time.monotonic()
    futures = [_executor().submit(run, shared) for _ in range(threads - 1)]
    try:
        run(shared)
    finally:
        for future in futures:
            future.result()


def _share_lanes(run, blocks: Iterable[Pair], parallel: bool) -> list:
    """``[run(lane) for lane in lanes]``, in lane order: ``blocks`` cut into contiguous lanes, which
    threads take as :func:`_share_blocks` hands out blocks.

    For reductions: each lane sums its blocks in order and the caller sums the results in list order,
    so the total is the same to the bit whichever thread ran which lane (a per-thread sum over the
    blocks each thread happened to take would change from run to run). Two lanes per thread keep most
    of the balancing of block-by-block sharing.
    """
    blocks = list(blocks)
    count = min(len(blocks), _thread_count() * _LANES_PER_THREAD) if parallel else 1
    # An empty batch is one empty lane, so the caller still gets its (zero) result.
    lanes = [blocks[a:b] for a, b in _even_blocks(len(blocks), len(blocks), count)] or [[]]
    results: list = [None] * len(lanes)

    def work(indexed_lanes) -> None:
        for index, lane in indexed_lanes:
            results[index] = run(lane)

    _share_blocks(work, list(enumerate(lanes)), parallel)
    return results


def _shared_blocks(total: int, size: int, parallel: bool, per_thread: int = _BLOCKS_PER_THREAD) -> list[Pair]:
    """The blocks for :func:`_share_blocks`: at most ``size`` long, and enough
    of them that every thread gets ``per_thread``."""
    return _even_blocks(total, size, _thread_count() * per_thread if parallel else 1)


def _even_blocks(total: int, size: int, count: int = 1) -> list[Pair]:
    """``range(total)`` cut into at least ``count`` (when there are that many)
    contiguous blocks of even sizes, none bigger than ``size``."""
    pieces = min(total, max(count, -(-total // max(1, size))))
    bounds = [total * i // pieces for i in range(pieces + 1)] if pieces else [0]
    return list(itertools.pairwise(bounds))


def _single_thread_gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = a @ b`` for a tall, skinny ``a``, as a stack of GEMMs small
    enough that OpenBLAS runs each on the calling thread.

    Such GEMMs are bound by memory traffic, so BLAS threads barely speed them
    up; worse, idle OpenBLAS threads spin for a while after each call and
    take the cores that :func:`_share_blocks` shares the work out to.
    """
    rows, depth = a.shape
    step = max(1, _BLAS_SINGLE_THREAD_FLOPS // max(1, depth * b.shape[1]))
    stacked = rows - rows % step
    if stacked:
        np.matmul(a[:stacked].reshape(-1, step, depth), b, out=out[:stacked].reshape(-1, step, out.shape[1]))
    if stacked < rows:
        np.matmul(a[stacked:], b, out=out[stacked:])


def _single_thread_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(a, b, out=out)`` for a small ``a`` (a transform matrix) and a
    ``b`` wide enough that OpenBLAS would thread each GEMM: cut along the
    columns of ``b`` so that each runs on the calling thread (threaded GEMMs
    stall whenever another process holds a core). When ``a`` is so big that
    the pieces would be narrower than ``_THIN_GEMM_MIN_STEP`` columns, it is
    one call, with OpenBLAS held to the calling thread (see :mod:`.blas`)."""
    rows, depth = a.shape[-2:]
    width = b.shape[-1]
    step = _BLAS_SINGLE_THREAD_FLOPS // max(1, rows * depth)
    if step < _THIN_GEMM_MIN_STEP:
        from .blas import single_threaded  # blas builds on this module

        with single_threaded:
            np.matmul(a, b, out=out)
        return
    for start in range(0, width, step):
        np.matmul(a, b[..., start : start + step], out=out[..., start : start + step])


def _thin_gemm_step(depth: int, width: int) -> int:
    """Rows per piece for :func:`_add_thin_gemm` on a ``(depth, n) @ (n, width)``
    product, or 0 when the pieces would be too short to run well (a wide result)."""
    step = min(_THIN_GEMM_MAX_STEP, _BLAS_SINGLE_THREAD_FLOPS // max(1, depth * width))
    return step if step >= _THIN_GEMM_MIN_STEP else 0


def _add_thin_gemm(a: np.ndarray, b: np.ndarray, total: np.ndarray, step: int) -> None:
    """``total += a @ b`` for a long contraction ``(depth, n) @ (n, width)``, as a
    stack of GEMMs over ``step`` of the ``n`` at a time, each small enough
    that OpenBLAS runs it on the calling thread, summed at the end.

    A filter gradient is such a product: thin (taps x channels) and as long as
    the block has pixels. One BLAS call would be threaded, and threaded GEMMs
    stall whenever another process holds a core; the stacked pieces also
    keep both operands in cache.
    """
    depth, length = a.shape
    count = length // step
    stacked = count * step
    partial = _scratch("thin_gemm_sum", total.shape, total.dtype)
    if count:
        products = _scratch("thin_gemm_products", (count, *total.shape), total.dtype)
        pieces = a[:, :stacked].reshape(depth, count, step).transpose(1, 0, 2)
        np.matmul(pieces, b[:stacked].reshape(count, step, b.shape[1]), out=products)
        np.sum(products, axis=0, out=partial)
        total += partial
    if stacked < length:
        np.matmul(a[:, stacked:], b[stacked:], out=partial)
        total += partial


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

    def __init__(self, x: np.ndarray, pads: Pads, images: int, fill: float, dtype=None, purpose: str = "padded"):
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
    pages fault on first touch). The padded block is taken from the calling
    thread's workspace, so threads may scatter disjoint images at once.
    """

    def __init__(self, dx_shape, dtype, pads: Pads, images: int, compute_dtype, overwrites=False, out=None):
        (self.top, bottom), (self.left, right) = pads
        self.direct = not (any(pads[0]) or any(pads[1])) and dtype == compute_dtype
        self.overwrites = overwrites
        self.compute_dtype = compute_dtype
        if self.direct:
            if out is not None and not overwrites:
                out.fill(0)
            self.dx = (np.empty if overwrites else np.zeros)(dx_shape, dtype) if out is None else out
        else:
            self.dx = np.empty(dx_shape, dtype) if out is None else out
            _, h, w, c = dx_shape
            self.block_shape = (images, h + self.top + bottom, w + self.left + right, c)

    def _buffer(self) -> np.ndarray:
        return _scratch("padded_gradient", self.block_shape, self.compute_dtype)

    def begin(self, start: int, stop: int) -> np.ndarray:
        if self.direct:
            return self.dx[start:stop]
        block = self._buffer()[: stop - start]
        if not self.overwrites:
            block.fill(0)
        return block

    def finish(self, start: int, stop: int) -> None:
        if not self.direct:
            _, h, w, _ = self.dx.shape
            block = self._buffer()[: stop - start]
            self.dx[start:stop] = block[:, self.top : self.top + h, self.left : self.left + w]


def _blocks(total: int, size: int, first: int = 0) -> Iterator[Pair]:
    for start in range(first, total, max(size, 1)):  # size 0 comes from an empty batch
        yield start, min(total, start + size)


def _as_compute(block: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """``block`` in the scratch's dtype, copying only when the dtype differs."""
    if block.dtype == scratch.dtype:
        return block
    converted = scratch[: block.size].reshape(block.shape)
    np.copyto(converted, block)
    return converted
