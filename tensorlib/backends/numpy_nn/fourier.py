"""The fourier_gemm conv strategy: convolution as per-frequency products of DFT spectra."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from .blocks import (
    Pair,
    _as_compute,
    _blocks,
    _images_per_block,
    _parallel,
    _scratch,
    _share_blocks,
    _share_lanes,
    _shared_blocks,
    _single_thread_matmul,
)

if TYPE_CHECKING:  # conv.py imports this module; the plan only annotates with its shapes
    from .blocks import _Geometry
    from .conv import _ConvShapes


# fourier_gemm: bytes of the spectra of one chunk of images, and of the
# transform work buffer of one block of images. A chunk of about 32 images
# ran the per-frequency GEMMs fastest (their M or K is the chunk's images);
# with OpenBLAS on one thread, blocks of 2 MiB (the L2 of the machine we
# measured; 32 images of a 14x14x64 gradient) ran a few percent faster than 1.
_FOURIER_CHUNK_BYTES = 6 << 20
_FOURIER_BLOCK_BYTES = 2 << 20

# The filter gradient adds one (F, 2 Cin, 2 Cout) product per chunk into its
# sum, many times the traffic of the spectra: its chunks may be bigger.
_FOURIER_GRAM_CHUNK_BYTES = 16 << 20

# The filter gradient's chunks per thread: each lane of them ends by summing its
# products into a filter spectrum and transforming it back, so fewer and bigger
# chunks ran faster (by about 5%), though a GEMM over more images is slower.
_FOURIER_GRAM_CHUNKS_PER_THREAD = 1

# Lanes per thread of the three gradients in one pass, each cut into chunks of _FOURIER_CHUNK_BYTES.  A lane
# ends by turning its sum of products into a filter gradient, a quarter of a 32-image chunk's work for a 5x5
# conv from 32 to 64 channels on 14x14 (measured: 1.15 ms, against 0.36 ms for adding one more chunk's product).
_FOURIER_BACKPROP_LANES_PER_THREAD = 1

# Spectra of consecutive images lie this far apart beyond their size (see spectra_buffer).
_SPECTRUM_PAD_BYTES = 64

# Chunks per thread when they are shared out: few, as each chunk's GEMMs
# run slower the fewer images it has.
_FOURIER_CHUNKS_PER_THREAD = 2

# A transform spreads every value over the whole image: fourier_gemm's error at an output is about half an
# epsilon of its image's brightest window scale (sum |x| |w| over a window), where a direct sum's is a few
# epsilons of the output's own window scale (measured, float32, 5x5 from 32 to 64 channels on 14x14: 6.5e-8
# times the contrast, relative to a window 1e1 to 1e6 times dimmer than the brightest).  A window more than this
# many times dimmer than its image's brightest one (and not all zeros) would lose more than 9 bits to
# fourier_gemm (3e-5 of its scale in float32), so the conv runs by patches instead.
_FOURIER_MAX_CONTRAST = 2**9

# Input bytes per block of the window-scale check (the block's magnitudes then stay in L2 for their sums), and
# the input size from which its blocks are shared out between threads.
_SCALE_BLOCK_BYTES = 1 << 20
_SCALE_PARALLEL_MIN_BYTES = 2 << 20


def _circular_length(size: int, before: int, out_size: int, stride: int, kernel: int, dilation: int) -> int:
    """The shortest transform length along one dimension at which the circular
    convolution equals the linear one at every kept sample (see _FourierPlan).

    The input sits at padded positions ``[before, before + size)``; an output
    sample ``o`` and tap ``t`` meet the position ``i = o * stride + t * dilation``
    in ``[0, last]``. Taken modulo the length ``L``, every such ``i`` lands on
    the input exactly when ``i`` itself does if ``L >= before + size`` (the
    input does not wrap) and ``L > last - before`` (a wrapped ``i`` lands in
    the padding before the input). The same positions, read the other way,
    make the two gradients exact. It is at most the padded size, and shorter
    where the padding on both sides is wider than it needs to be to stay apart
    under wrapping (SAME padding of a 5x5 filter: 16 instead of 18 on 14).
    """
    last = (out_size - 1) * stride + (kernel - 1) * dilation
    return max(before + size, last - before + 1)


def _fourier_lengths(in_hw: Pair, out_hw: Pair, kernel_hw: Pair, strides: Pair, dilations: Pair, pads) -> Pair:
    """The transform lengths ``(Lh, Lw)`` of the fourier_gemm strategy."""
    return tuple(
        _circular_length(in_hw[d], pads[d][0], out_hw[d], strides[d], kernel_hw[d], dilations[d]) for d in range(2)
    )


def _fourier_flops(in_hw: Pair, out_hw: Pair, lengths: Pair, in_c: int, out_c: int) -> int:
    """Real flops per image of the fourier_gemm forward pass (see _FourierPlan)."""
    (h, w), (out_h, out_w), (length_h, length_w) = in_hw, out_hw, lengths
    half_h = length_h // 2 + 1
    spectrum = 4 * half_h * h * w * in_c + 8 * half_h * length_w * w * in_c
    product = 8 * half_h * length_w * in_c * out_c
    synthesis = 8 * half_h * out_w * length_w * out_c + 4 * out_h * half_h * out_w * out_c
    return spectrum + product + synthesis


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
def _filter_analysis_matrix(positions: Pair, count: int, length: int, conjugate: bool, dtype) -> np.ndarray:
    """``(4 L, 2 count)``: :func:`_full_analysis_matrix` with rows ``(f, b, a)``
    instead of ``(f, re/im)``: at each frequency, the real 2x2 matrix (row
    ``a``, column ``b``) that takes the (re, im) of a complex number to the
    (re, im) of its product with the spectrum there (or with its conjugate)."""
    full = _full_analysis_matrix(positions, count, length, dtype).reshape(length, 2, 2 * count)
    real, imag = full[:, 0], full[:, 1]
    if conjugate:
        imag = -imag
    # (x_re + i x_im)(real + i imag) = (x_re real - x_im imag) + i (x_re imag + x_im real)
    matrix = np.stack([np.stack([real, -imag], 1), np.stack([imag, real], 1)], 1)
    return _read_only(matrix.reshape(4 * length, 2 * count))


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


def _self_conjugate_rows(length: int) -> list[int]:
    """The row frequencies of a length-``length`` transform equal to their own
    negatives (0, and ``length / 2`` when even): a real signal's spectrum is
    real there, so its imaginary part is zero and need not be stored."""
    return [0] if length % 2 else sorted({0, length // 2})


@functools.lru_cache(maxsize=64)
def _row_frequency_runs(length: int) -> tuple:
    """``(first, count, row)`` runs of ``count`` row frequencies from ``first``
    that cover the half spectrum of a length-``length`` transform along H,
    stored packed from ``row`` on: the ``(f, re/im)`` rows without the zero
    imaginary rows of the self-conjugate frequencies. A run of count 0 is one
    self-conjugate frequency (a single, real row)."""
    half = length // 2 + 1
    real = _self_conjugate_rows(length)
    runs, row, frequency = [], 0, 0
    while frequency < half:
        if frequency in real:
            runs.append((frequency, 0, row))
            frequency, row = frequency + 1, row + 1
            continue
        stop = min([f for f in real if f > frequency] + [half])
        runs.append((frequency, stop - frequency, row))
        row += 2 * (stop - frequency)
        frequency = stop
    return tuple(runs)


def _packed_rows(length: int) -> np.ndarray:
    """Indices of the packed rows among the ``(f, re/im)`` rows of a half spectrum."""
    dropped = [2 * f + 1 for f in _self_conjugate_rows(length)]
    return np.delete(np.arange(2 * (length // 2 + 1)), dropped)


@functools.lru_cache(maxsize=64)
def _packed_half_analysis_matrix(positions: Pair, count: int, length: int, dtype) -> np.ndarray:
    """:func:`_half_analysis_matrix` without the rows of the zero imaginary parts (see _row_frequency_runs)."""
    matrix = _half_analysis_matrix(positions, count, length, dtype)[_packed_rows(length)]
    return _read_only(np.ascontiguousarray(matrix))


@functools.lru_cache(maxsize=64)
def _packed_half_synthesis_matrix(positions: Pair, count: int, length: int, scale: float, dtype) -> np.ndarray:
    """:func:`_half_synthesis_matrix` without the columns of the zero imaginary parts (see _row_frequency_runs)."""
    matrix = _half_synthesis_matrix(positions, count, length, scale, dtype)[:, _packed_rows(length)]
    return _read_only(np.ascontiguousarray(matrix))


@functools.lru_cache(maxsize=64)
def _real_row_synthesis_matrix(positions: Pair, count: int, length: int, dtype) -> np.ndarray:
    """``(count, 2 Fw)``: the real part of :func:`_full_synthesis_matrix`'s result
    on a spectrum row of a self-conjugate row frequency, from its first ``Fw =
    length // 2 + 1`` frequencies alone. Only the real part reaches the signal,
    and such a row of the spectrum of a real signal (or of a product of such
    spectra) is Hermitian: the frequencies that stand for a conjugate pair
    count twice."""
    half = length // 2 + 1
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    full = _full_synthesis_matrix(positions, count, length, np.float64)[:count, : 2 * half]
    matrix = full.reshape(count, half, 2) * weights[:, None]
    return _read_only(matrix.reshape(count, 2 * half).astype(dtype))


@functools.lru_cache(maxsize=64)
def _synthesized_frequencies(length_h: int, length_w: int) -> tuple:
    """``(start, stop)`` ranges of the frequencies ``f = fh * Lw + fw`` of a stored
    spectrum that :meth:`_FourierPlan.synthesis` reads: every one of the rows
    that are not self-conjugate, and ``fw <= Lw / 2`` of those that are."""
    ranges = []
    for first, count, _ in _row_frequency_runs(length_h):
        stop = first * length_w + (length_w // 2 + 1 if not count else count * length_w)
        ranges.append((first * length_w, stop))
    return tuple(ranges)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False  # shared through the caches above
    return array


# A sum that overflows is an inf: brighter than any window, as it is (and no warning from an internal check).
@np.errstate(over="ignore")
def loses_dim_windows(
    signal: np.ndarray, geometry: _Geometry, transposed: bool, limit: float = math.inf, filter=None
) -> bool:
    """Whether fourier_gemm would lose digits on ``signal`` (NHWC): whether some window of an image is more than
    :data:`_FOURIER_MAX_CONTRAST` times dimmer than the brightest window of that image, yet not all zeros (there
    a direct sum is exact and the transform's error a fraction of an epsilon of the brightest).  A window's scale
    is its sum of ``|signal|`` over channels and the cells that the conv's output reads (``transposed=False``:
    ``signal`` is the input) or that an input gradient's cell is scattered from (``transposed=True``: ``signal``
    is the output gradient, ``geometry`` the forward conv's).  With ``filter`` (HWIO), each tap's cells count
    times that tap's magnitude (its sum of ``|filter|`` over channels): a filter whose taps differ by orders of
    magnitude leaves the outputs where its bright taps read padding or zeros with only its dim taps' terms,
    which the transform's error (an epsilon of the bright tap times the bright input) would swamp; taps within
    a factor ``r <= 2`` of each other only divide the contrast allowed by ``r``.  Cost: one pass over ``signal``
    (its magnitudes summed over channels by a matrix-vector product, block by block in cache, shared out between
    threads from :data:`_SCALE_PARALLEL_MIN_BYTES`), then sums on the single-channel maps: 0.45 ms of CPU for the
    3.2 MB input of the LeNet step's second conv, 0.75 ms for its 6.4 MB output gradient.  Also true where an
    image's sum of ``|signal|`` may reach ``limit`` (see :func:`overflow_limit`): fourier_gemm's sums could
    overflow there.

    >>> from tensorlib.backends.numpy_nn.blocks import _Geometry
    >>> geometry = _Geometry.build("conv2d", (8, 8), (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1)))
    >>> x = np.ones((1, 8, 8, 2), np.float32)
    >>> loses_dim_windows(x, geometry, transposed=False)
    False
    >>> x[:, :, 4:] = 1e-4  # a dim half next to a bright one
    >>> loses_dim_windows(x, geometry, transposed=False)
    True
    """
    dtype = np.dtype(np.float64 if signal.dtype == np.float64 else np.float32)
    batch, height, width, channels = signal.shape
    if not signal.size or (filter is not None and not filter.any()):  # (a filter of zeros: exact zeros out)
        return False
    # The magnitudes' sum over channels at each pixel.
    mass = np.empty((batch, height, width), dtype)
    ones = np.ones(channels, dtype)
    images = _images_per_block(batch, height * width * channels * dtype.itemsize, _SCALE_BLOCK_BYTES)

    def run(blocks) -> None:
        magnitudes = _scratch("window_scale", (images, height, width, channels), dtype)
        for start, stop in blocks:
            block = magnitudes[: stop - start]
            np.abs(signal[start:stop], out=block)
            with np.errstate(over="ignore"):  # (worker threads: see the decorator)
                np.matmul(block.reshape(-1, channels), ones, out=mass[start:stop].reshape(-1))

    parallel = signal.nbytes >= _SCALE_PARALLEL_MIN_BYTES
    _share_blocks(run, _shared_blocks(batch, images, parallel), parallel)
    # An image's sum is at most its pixels times its heaviest pixel (an inf or NaN compares false too).
    if limit < math.inf and not float(mass.max()) * (height * width) < limit:
        return True
    (top, bottom), (left, right) = geometry.pads
    (out_h, out_w), (kh, kw) = geometry.out_hw, geometry.kernel_hw
    (sh, sw), (dh, dw) = geometry.strides, geometry.dilations
    padded_hw = (geometry.in_hw[0] + top + bottom, geometry.in_hw[1] + left + right)
    # The cells of tap (i, j) along a padded axis: i * d + o * s for the outputs o.
    row_taps = [slice(i * dh, i * dh + (out_h - 1) * sh + 1, sh) for i in range(kh)]
    col_taps = [slice(j * dw, j * dw + (out_w - 1) * sw + 1, sw) for j in range(kw)]
    contrast, tap_mass = _FOURIER_MAX_CONTRAST, None if filter is None else _tap_magnitudes(filter, dtype)
    if tap_mass is not None and tap_mass.min() * 2 >= tap_mass.max():  # even taps: plain windows, less contrast
        contrast, tap_mass = contrast * tap_mass.min() / tap_mass.max(), None
    if tap_mass is not None:
        windows = _weighted_windows(mass, tap_mass, row_taps, col_taps, padded_hw, geometry, transposed)
    elif transposed:  # each output's mass scattered onto the padded input cells its window reads
        cols = np.zeros((batch, out_h, padded_hw[1]), dtype)
        for taps in col_taps:
            cols[:, :, taps] += mass
        padded = np.zeros((batch, *padded_hw), dtype)
        for taps in row_taps:
            padded[:, taps] += cols
        windows = padded[:, top : top + geometry.in_hw[0], left : left + geometry.in_hw[1]]
    else:  # each output's window of the padded input's mass summed
        padded = np.zeros((batch, *padded_hw), dtype)
        padded[:, top : top + height, left : left + width] = mass
        rows = np.zeros((batch, out_h, padded_hw[1]), dtype)
        for taps in row_taps:
            rows += padded[:, taps]
        windows = np.zeros((batch, out_h, out_w), dtype)
        for taps in col_taps:
            windows += rows[:, :, taps]
    windows = windows.reshape(batch, -1)
    dimmest = windows.min(axis=1, where=windows > 0, initial=np.inf)  # of the windows that are not all zeros
    return bool(np.any(dimmest * contrast < windows.max(axis=1)))


def _tap_magnitudes(filter: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``(kh, kw)``: each tap's sum of ``|filter|`` over its channels, as one matrix-vector product (a third of
    a ``sum`` over the channel axes' time; a float32 sum is ample for a contrast test)."""
    kh, kw = filter.shape[:2]
    magnitudes = np.abs(filter).reshape(kh * kw, -1)
    return (magnitudes @ np.ones(magnitudes.shape[1], dtype)).reshape(kh, kw)


def _weighted_windows(mass, taps, row_taps, col_taps, padded_hw, geometry, transposed) -> np.ndarray:
    """The window scales of :func:`loses_dim_windows` with tap ``(i, j)``'s cells weighted by ``taps[i, j]``: one
    multiply-add per tap that is not zero (a tap of zeros reads nothing, an inf times 0 stays out)."""
    batch = mass.shape[0]
    (top, _), (left, _) = geometry.pads
    in_h, in_w = geometry.in_hw
    live = [(i, j) for i in range(taps.shape[0]) for j in range(taps.shape[1]) if taps[i, j] > 0]
    if transposed:  # each output's mass, weighted by the tap, scattered onto the padded cells that tap reads
        padded = np.zeros((batch, *padded_hw), mass.dtype)
        for i, j in live:
            padded[:, row_taps[i], col_taps[j]] += taps[i, j] * mass
        return padded[:, top : top + in_h, left : left + in_w]
    padded = np.zeros((batch, *padded_hw), mass.dtype)
    padded[:, top : top + in_h, left : left + in_w] = mass
    windows = np.zeros((batch, *geometry.out_hw), mass.dtype)
    for i, j in live:
        windows += taps[i, j] * padded[:, row_taps[i], col_taps[j]]
    return windows


def overflow_limit(geometry: _Geometry, w: np.ndarray, dtype) -> float:
    """The sum of ``|signal|`` over an image (every pixel and channel) below which no sum of fourier_gemm's conv
    of the image with the filter ``w`` (HWIO), nor of its input gradient, can overflow the compute ``dtype``.

    Every spectrum value of a signal is at most twice its channel's sum ``T`` of magnitudes (re and im each at
    most ``T``), every value of the filter's spectra at most twice ``S = KH KW max |w|``; a per-frequency
    product sums over channels at most ``8 T S``; the synthesis along W sums ``2 Lw`` of those, along H fewer,
    scaled by ``1 / (Lh Lw)``: every partial sum stays below ``max(16 Lw, 64) T S`` (doubled here for
    rounding).  The frequency-0 guard (:class:`NonFiniteSpectrum`) misses an overflow at other frequencies
    where the image's plain sum cancels (signs alternating at 1e37 in float32: NaN outputs where a direct sum
    is about 1e34): above this limit the conv runs by patches instead.  The cost: two reductions over ``w``."""
    if not w.size:
        return math.inf
    kh, kw = geometry.kernel_hw
    lengths = _fourier_lengths(geometry.in_hw, geometry.out_hw, geometry.kernel_hw, geometry.strides,
                               geometry.dilations, geometry.pads)  # fmt: skip
    scale = kh * kw * max(float(np.max(w)), -float(np.min(w)))
    factor = 2.0 * max(16 * lengths[1], 64) * scale
    return float(np.finfo(dtype).max) / factor if factor > 0 else math.inf


class NonFiniteSpectrum(ArithmeticError):
    """A signal given to a fourier_gemm kernel holds an inf or a NaN. Its spectrum would spread that value
    over the whole image, where the direct sums keep it in the windows that read it: the caller runs a
    patch strategy instead."""


class _FourierPlan:
    """The fourier_gemm strategy: convolution as a product of spectra.

    Every signal (image, output gradient, filter) is placed at its positions
    in the padded image and transformed with a discrete Fourier transform of
    size ``Lh x Lw``, the shortest at which the circular convolution never
    wraps onto a value that is kept (:func:`_circular_length`; at most the
    padded size); strides and dilations are just the positions that samples
    sit at. The transforms are dense DFT matrices applied as batched real
    GEMMs (NumPy's FFT is several times slower on thousands of tiny images):
    half a spectrum along H, since the signals are real, then the full
    spectrum along W. A spectrum is stored ``(images, F, 2, C)`` with
    ``F = Fh * Lw``, the (re, im) pair next to the channels, so the complex
    product at each frequency is two real GEMMs, one per part of the result,
    each with its contraction doubled (:meth:`filter_products`). The row
    frequencies equal to their own negatives (0 and ``Lh / 2``) are real after
    the transform along H: their transform along W takes the real part alone,
    and as their rows are Hermitian, synthesis reads only their frequencies up
    to ``Lw / 2``, which is all that the per-frequency product computes there
    (:func:`_row_frequency_runs`, :func:`_synthesized_frequencies`).
    """

    def __init__(self, conv: _ConvShapes, chunk_bytes: int | None = None):
        self.conv = conv
        geometry = conv.geometry
        (top, _), (left, _) = geometry.pads
        (h, w), (_, out_w) = geometry.in_hw, geometry.out_hw
        self.lengths = _fourier_lengths(
            geometry.in_hw, geometry.out_hw, geometry.kernel_hw, geometry.strides, geometry.dilations, geometry.pads
        )
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
        chunk_bytes = _FOURIER_CHUNK_BYTES if chunk_bytes is None else chunk_bytes
        self.images = _images_per_block(conv.batch, spectra_bytes, chunk_bytes)
        self.work_per_image = 2 * self.half_h * max(w, out_w) * max(in_c, out_c)
        self.transform_images = _images_per_block(self.images, itemsize * self.work_per_image, _FOURIER_BLOCK_BYTES)
        # Its GEMMs are too small for BLAS to thread: the images are shared out instead.
        self.flops = conv.batch * _fourier_flops((h, w), geometry.out_hw, self.lengths, in_c, out_c)

    def _work(self, size: int) -> np.ndarray:
        """The front of the reused transform work buffer."""
        return _scratch("fourier_work", size, self.conv.compute_dtype)

    def share_image_blocks(self, run) -> None:
        """``run(blocks)`` over chunks of the batch, in threads when it pays."""
        parallel = _parallel(0, self.flops)
        blocks = _shared_blocks(self.conv.batch, self.images, parallel, _FOURIER_CHUNKS_PER_THREAD)
        _share_blocks(run, blocks, parallel)

    def share_image_lanes(self, run, chunks_per_thread: int = _FOURIER_CHUNKS_PER_THREAD) -> list:
        """``run(blocks)`` for each lane of chunks of the batch, in threads when it pays: the results in lane order."""
        parallel = _parallel(0, self.flops)
        blocks = _shared_blocks(self.conv.batch, self.images, parallel, chunks_per_thread)
        return _share_lanes(run, blocks, parallel)

    def spectra_buffer(self, purpose: str, channels: int) -> np.ndarray:
        """``(images, F, 2, C)`` spectra, each image's padded by a cache line: the
        per-frequency GEMMs take one row per image, and rows a multiple of 4 KiB
        apart (``F * 2 * C`` floats often is) share a few cache sets."""
        size = self.frequencies * 2 * channels
        pad = _SPECTRUM_PAD_BYTES // self.conv.compute_dtype.itemsize
        buffer = _scratch(purpose, (self.images, size + pad), self.conv.compute_dtype)
        return buffer[:, :size].reshape(self.images, self.frequencies, 2, channels)

    def spectrum(self, signal: np.ndarray, positions, out: np.ndarray) -> np.ndarray:
        """Spectrum of ``signal`` ``(images, n_h, n_w, C)`` sampled at
        ``positions``, written into the front of ``out`` and returned."""
        dtype = self.conv.compute_dtype
        images, n_h, n_w, channels = signal.shape
        length_h, length_w = self.lengths
        rows = _packed_half_analysis_matrix(positions[0], n_h, length_h, dtype)
        cols = _full_analysis_matrix(positions[1], n_w, length_w, dtype)
        for start, stop in _blocks(images, self.transform_images):
            half = self._work((stop - start) * rows.shape[0] * n_w * channels)
            half = half.reshape(stop - start, rows.shape[0], n_w, channels)
            block = signal[start:stop].reshape(stop - start, n_h, n_w * channels)
            _single_thread_matmul(rows, block, half.reshape(stop - start, rows.shape[0], n_w * channels))
            # Images and row frequencies stay two axes: the images of ``out`` are padded apart.
            spectra = out[start:stop].reshape(stop - start, self.half_h, 2 * length_w, channels)
            for first, count, row in _row_frequency_runs(length_h):
                if not count:  # a real row: the (re | im) transform of its real part alone
                    _single_thread_matmul(cols[:, :n_w], half[:, row], spectra[:, first])
                    continue
                source = half[:, row : row + 2 * count].reshape(stop - start, count, 2 * n_w, channels)
                _single_thread_matmul(cols, source, spectra[:, first : first + count])
        # The real part at frequency 0 is the sum of each image's samples: it is finite unless one of them is
        # inf or NaN (or the sum overflows), which the transform would spread over every output of the image.
        if not np.isfinite(out[:images, 0, 0]).all():
            raise NonFiniteSpectrum("an inf or NaN in a signal to transform")
        return out[:images]

    def synthesis(self, spectrum: np.ndarray, positions, out: np.ndarray) -> None:
        """Write into ``out`` ``(images, m_h, m_w, C)`` the real signal at
        ``positions`` whose spectrum is ``spectrum`` ``(images, F, 2, C)``."""
        dtype = self.conv.compute_dtype
        images, m_h, m_w, channels = out.shape
        length_h, length_w = self.lengths
        cols = _full_synthesis_matrix(positions[1], m_w, length_w, dtype)
        real_cols = _real_row_synthesis_matrix(positions[1], m_w, length_w, dtype)
        rows = _packed_half_synthesis_matrix(positions[0], m_h, length_h, 1 / (length_h * length_w), dtype)
        for start, stop in _blocks(images, self.transform_images):
            spectra = spectrum[start:stop].reshape(stop - start, self.half_h, 2 * length_w, channels)
            by_row_frequency = self._work((stop - start) * rows.shape[1] * m_w * channels)
            by_row_frequency = by_row_frequency.reshape(stop - start, rows.shape[1], m_w, channels)
            for first, count, row in _row_frequency_runs(length_h):
                if not count:  # a real row: see _real_row_synthesis_matrix
                    _single_thread_matmul(real_cols, spectra[:, first, : real_cols.shape[1]], by_row_frequency[:, row])
                    continue
                target = by_row_frequency[:, row : row + 2 * count].reshape(stop - start, count, 2 * m_w, channels)
                _single_thread_matmul(cols, spectra[:, first : first + count], target)
            _single_thread_matmul(
                rows,
                by_row_frequency.reshape(stop - start, rows.shape[1], m_w * channels),
                out[start:stop].reshape(stop - start, m_h, m_w * channels),
            )

    def filter_products(self, w: np.ndarray, conjugate: bool) -> np.ndarray:
        """``(F, 2, 2 C1, C2)``, for the filter ``w`` ``(KH, KW, C1, C2)``: at
        each frequency and for each part (re, im) of the result, the real
        ``(2 C1, C2)`` matrix that takes a ``(re | im, C1)`` spectrum row to
        that part of its product with the filter's spectrum (or with its
        conjugate), summed over ``C1``. A per-frequency product is then two
        real GEMMs on the spectra as they are stored."""
        kh, kw, c1, c2 = w.shape
        dtype = self.conv.compute_dtype
        taps = np.ascontiguousarray(w, dtype).reshape(kh, kw * c1 * c2)
        rows = _half_analysis_matrix(self.tap_positions[0], kh, self.lengths[0], dtype)
        cols = _filter_analysis_matrix(self.tap_positions[1], kw, self.lengths[1], conjugate, dtype)
        half = self._work(2 * self.half_h * kw * c1 * c2).reshape(2 * self.half_h, kw * c1 * c2)
        _single_thread_matmul(rows, taps, half)
        half = half.reshape(self.half_h, 2 * kw, c1 * c2)
        products = _scratch("filter_products", (self.half_h, 4 * self.lengths[1], c1 * c2), dtype)

        # The transform along W, most of the work and of the writes, shares its rows out. It is bound by its
        # writes: shared out, 4.7 MiB of them (5x5, 32 -> 64 channels, 16x16 transform) ran 15-30% slower than
        # on the calling thread alone, 9.4 MiB as fast, 16 MiB 25% faster.
        def run(row_blocks) -> None:
            for start, stop in row_blocks:
                _single_thread_matmul(cols, half[start:stop], products[start:stop])

        parallel = _parallel(products.nbytes)
        _share_blocks(run, _shared_blocks(self.half_h, self.half_h, parallel, _FOURIER_CHUNKS_PER_THREAD), parallel)
        return products.reshape(self.frequencies, 2, 2 * c1, c2)

    def per_frequency_product(self, spectrum: np.ndarray, products: np.ndarray, out: np.ndarray):
        """``out[b, f, part] = spectrum[b, f] @ products[f, part]`` (flattened
        ``(re | im, C)`` rows) for the images ``b`` of ``spectrum``, at the
        frequencies that :meth:`synthesis` reads: those of the self-conjugate
        row frequencies past ``Lw / 2`` are left unwritten (see
        _real_row_synthesis_matrix)."""
        images = spectrum.shape[0]
        product = out[:images]
        rows = spectrum.reshape(images, self.frequencies, 1, -1).transpose(1, 2, 0, 3)
        target = product.reshape(images, self.frequencies, 2, -1).transpose(1, 2, 0, 3)
        for start, stop in _synthesized_frequencies(*self.lengths):
            _single_thread_matmul(rows[start:stop], products[start:stop], target[start:stop])
        return product


def _fourier_conv2d(
    conv: _ConvShapes, x: np.ndarray, w: np.ndarray, out: np.ndarray, epilogue=None, image_epilogue=None
) -> np.ndarray:
    plan = _FourierPlan(conv)
    # y = x (*) w in the spectrum: Y = X conj(W), summed over Cin.
    _fourier_apply(
        plan,
        plan.filter_products(w, conjugate=True),
        x,
        ("input", plan.input_positions),
        out,
        ("output", plan.output_positions),
        epilogue,
        image_epilogue,
    )
    return out


def _fourier_conv2d_backprop_input(conv: _ConvShapes, w: np.ndarray, dy: np.ndarray, dx: np.ndarray | None = None):
    plan = _FourierPlan(conv)
    # dx = dy scattered through w: DX = DY W, summed over Cout.
    if dx is None:
        dx = np.empty((conv.batch, *conv.geometry.in_hw, conv.in_channels), conv.dtype)
    _fourier_apply(
        plan,
        plan.filter_products(w.transpose(0, 1, 3, 2), conjugate=False),
        dy,
        ("output", plan.output_positions),
        dx,
        ("input", plan.input_positions),
    )
    return dx


def _fourier_apply(
    plan: _FourierPlan,
    products,
    source: np.ndarray,
    source_side,
    target: np.ndarray,
    target_side,
    epilogue=None,
    image_epilogue=None,
) -> None:
    """``target`` = the per-frequency product of ``source``'s spectrum with the filter ``products``,
    image block by image block.  A side is ("input" | "output", its pixel positions).  ``epilogue``
    (optional) is applied in place to each block of ``target`` just written, while it is in cache, then
    ``image_epilogue(start, stop)`` (optional) to its images."""
    source_name, source_positions = source_side
    target_name, target_positions = target_side
    cast = "cast_input" if source_name == "input" else "cast_out_gradient"

    def run(image_blocks) -> None:
        source_spectra = plan.spectra_buffer(f"{source_name}_spectra", source.shape[-1])
        target_spectra = plan.spectra_buffer(f"{target_name}_spectra", target.shape[-1])
        scratch = _scratch(cast, plan.images * source[0].size, plan.conv.compute_dtype)
        for start, stop in image_blocks:
            spectrum = plan.spectrum(_as_compute(source[start:stop], scratch), source_positions, source_spectra)
            product = plan.per_frequency_product(spectrum, products, target_spectra)
            _synthesize_into(plan, product, target_positions, target[start:stop])
            if epilogue is not None:
                epilogue(target[start:stop])
            if image_epilogue is not None:
                image_epilogue(start, stop)

    plan.share_image_blocks(run)


def _fourier_conv2d_backprop_filter(conv: _ConvShapes, x: np.ndarray, dy: np.ndarray, bias: bool = False):
    """``(filter gradient, bias gradient or None)``; the bias gradient (with ``bias``) is read off the zero
    frequency of ``dy``'s spectrum, which the filter gradient computes anyway."""
    plan = _FourierPlan(conv, _FOURIER_GRAM_CHUNK_BYTES)
    lanes = plan.share_image_lanes(
        lambda blocks: _fourier_gradients_share(plan, x, dy, blocks, bias), _FOURIER_GRAM_CHUNKS_PER_THREAD
    )
    return _sum_lanes(plan, lanes, dy.dtype)[1:]


def _fourier_conv2d_backprop(
    conv: _ConvShapes, x: np.ndarray, w: np.ndarray, dy: np.ndarray, dx: np.ndarray, epilogue=None
):
    """``(input gradient, filter gradient, bias gradient)`` in one pass over the batch: each chunk's spectrum of
    ``dy`` serves the input gradient (its product with the filter's, synthesized at the input's positions),
    the filter gradient (its per-frequency product with the input's spectrum) and the bias gradient (its
    zero frequency), where the unfused kernels each compute it again.  ``dx`` receives the input gradient;
    ``epilogue(start, stop)`` (optional) is called on each chunk of images of it just written."""
    plan = _FourierPlan(conv)
    products = plan.filter_products(w.transpose(0, 1, 3, 2), conjugate=False)
    parallel = _parallel(0, plan.flops)
    lanes = _shared_blocks(conv.batch, conv.batch, parallel, _FOURIER_BACKPROP_LANES_PER_THREAD)
    lanes = _share_lanes(
        lambda blocks: _fourier_gradients_share(plan, x, dy, blocks, True, (products, dx, epilogue)), lanes, parallel
    )
    return _sum_lanes(plan, lanes, dy.dtype)


def _chunks(blocks, size: int):
    """Each of ``blocks`` cut into even chunks of at most ``size`` images."""
    for start, stop in blocks:
        pieces = -(-(stop - start) // max(1, size))
        yield from _blocks(stop, -(-(stop - start) // max(1, pieces)), start)


def _sum_lanes(plan: _FourierPlan, lanes: list, bias_dtype):
    """``(dx, dw, db)`` from the lanes' results, their partial sums added in lane order (the same bits whichever
    thread ran which lane)."""
    conv = plan.conv
    dx, dw, db = lanes[0]
    for _, other_dw, other_db in lanes[1:]:
        dw += other_dw
        if db is not None:
            db += other_db
    kh, kw = conv.geometry.kernel_hw
    dw = dw.reshape(kh, kw, conv.in_channels, conv.out_channels).astype(conv.dtype, copy=False)
    return dx, dw, (None if db is None else db.astype(bias_dtype, copy=False))


def _fourier_gradients_share(plan: _FourierPlan, x: np.ndarray, dy: np.ndarray, blocks, bias: bool, dx_side=None):
    """``(dx, dw, db)`` from the image ``blocks`` (cut into chunks of at most ``plan.images`` images): ``dw``
    ``(1, KH, KW, Cin * Cout)`` and ``db`` (with ``bias``, else None) fresh arrays of these blocks' partial
    sums; ``dx`` is the ``dx`` of ``dx_side = (filter products, dx, epilogue or None)``, whose blocks are written
    here (or None)."""
    conv = plan.conv
    in_c, out_c = conv.in_channels, conv.out_channels
    # dw = x correlated with dy: DW = sum over images of X^T conj(DY).
    gram = _scratch("gram", (plan.frequencies, 2 * in_c, 2 * out_c), conv.compute_dtype)
    partial = _scratch("partial_gram", gram.shape, conv.compute_dtype)
    db = np.zeros(out_c, conv.compute_dtype) if bias else None  # fresh: it is returned
    summed = 0
    x_spectra = plan.spectra_buffer("input_spectra", in_c)
    dy_spectra = plan.spectra_buffer("output_spectra", out_c)
    # (per image sizes from the shapes: the batch may be empty)
    x_scratch = _scratch("cast_input", plan.images * math.prod(x.shape[1:]), conv.compute_dtype)
    dy_scratch = _scratch("cast_out_gradient", plan.images * math.prod(dy.shape[1:]), conv.compute_dtype)
    # Only the frequencies that synthesis reads are summed (and combined below); the others stay unwritten.
    read = _synthesized_frequencies(*plan.lengths)
    for start, stop in _chunks(blocks, plan.images):
        images = stop - start
        x_block, dy_block = _as_compute(x[start:stop], x_scratch), _as_compute(dy[start:stop], dy_scratch)
        x_spectrum = plan.spectrum(x_block, plan.input_positions, x_spectra)
        dy_spectrum = plan.spectrum(dy_block, plan.output_positions, dy_spectra)
        x_rows = x_spectrum.reshape(images, plan.frequencies, 2 * in_c).transpose(1, 2, 0)
        dy_rows = dy_spectrum.reshape(images, plan.frequencies, 2 * out_c).transpose(1, 0, 2)
        for first, last in read:
            # The first chunk's product is the sum so far: no zeroing, no adding.
            _single_thread_matmul(x_rows[first:last], dy_rows[first:last], (partial if summed else gram)[first:last])
            if summed:
                gram[first:last] += partial[first:last]
        summed += 1
        if bias:
            # The real part at frequency 0 is each image's sum of dy over its pixels (every weight is cos 0 = 1).
            db += dy_spectrum[:, 0, 0].sum(axis=0)
        if dx_side is not None:
            # x's spectrum is used up: its buffer takes the product (it has dx's channels).
            products, dx, epilogue = dx_side
            product = plan.per_frequency_product(dy_spectrum, products, x_spectra)
            _synthesize_into(plan, product, plan.input_positions, dx[start:stop])
            if epilogue is not None:
                epilogue(start, stop)
    dx = None if dx_side is None else dx_side[1]
    kh, kw = conv.geometry.kernel_hw
    if not summed:  # no images (an empty batch): a zero sum
        return dx, np.zeros((1, kh, kw, in_c * out_c), conv.compute_dtype), db
    gram = gram.reshape(plan.frequencies, 2, in_c, 2, out_c)
    spectrum = _scratch("filter_spectrum", (plan.frequencies, 2, in_c, out_c), conv.compute_dtype)
    for first, last in read:
        np.add(gram[first:last, 0, :, 0], gram[first:last, 1, :, 1], out=spectrum[first:last, 0])
        np.subtract(gram[first:last, 1, :, 0], gram[first:last, 0, :, 1], out=spectrum[first:last, 1])
    dw = np.empty((1, kh, kw, in_c * out_c), conv.compute_dtype)  # fresh: it is returned
    plan.synthesis(spectrum.reshape(1, plan.frequencies, 2, in_c * out_c), plan.tap_positions, dw)
    return dx, dw, db


def _synthesize_into(plan: _FourierPlan, spectrum, positions, target: np.ndarray) -> None:
    """Synthesis straight into ``target``, through a scratch when casting."""
    if target.dtype == plan.conv.compute_dtype:
        plan.synthesis(spectrum, positions, target)
    else:
        result = _scratch("cast_result", target.shape, plan.conv.compute_dtype)
        plan.synthesis(spectrum, positions, result)
        np.copyto(target, result)
