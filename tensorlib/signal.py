"""``tl.signal``: TensorFlow's ``tf.signal`` for short-time Fourier analysis: ``frame``, ``overlap_and_add``,
``stft``, ``inverse_stft``, ``inverse_stft_window_fn`` and the ``hann_window`` / ``hamming_window`` they use,
with PyTorch's ``blackman_window``, ``bartlett_window`` and ``kaiser_window`` (NumPy's symmetric float64 forms
``hamming``, ``hanning``, ``blackman``, ``bartlett`` and ``kaiser`` are at ``tl.``), and SciPy's
``fftconvolve``, ``oaconvolve``, ``hilbert``, ``welch``, ``csd``, ``coherence`` and ``periodogram`` and its linear
filters ``lfilter``, ``lfilter_zi``, ``filtfilt``, ``sosfilt``, ``sosfilt_zi`` and ``sosfiltfilt`` (``scipy.signal``'s
arguments and dtypes; a filter is two ops, ``FirFilter`` and ``AllPoleFilter``, differentiable in the coefficients
too, SciPy's C loop on NumPy when SciPy is importable), with ``resample``, ``resample_poly``, ``decimate`` and
``spectrogram``.

:func:`stft` follows TensorFlow's convention: ``(..., frames, bins)``, frames from the signal's start, no padding
but ``pad_end``.  :func:`torch_stft` follows PyTorch's: ``(..., bins, frames)``, the signal centred (padded by
``n_fft // 2`` at both ends, reflected by default), a window shorter than ``n_fft`` centred, ``normalized`` and
``onesided`` options.

Each is a composition of tensorlib ops (a gather of the frames, a scatter-add to overlap them, ``tl.fft.rfft``
and ``irfft``), so gradients to any order, tracing and every backend come with them.  The spectrum of a float32
signal is complex64, of a float64 (or integer) one complex128.  PyTorch's ``torch.stft(x, n_fft, hop,
window=torch.hann_window(n_fft), center=False, return_complex=True)`` is ``stft(x, n_fft, hop, fft_length=n_fft)``
transposed (frequencies first); without ``fft_length`` the transform has the next power of 2 as TensorFlow's.
TensorFlow's odd-length periodic Hann and Hamming windows are its symmetric ones; ours are SciPy's and PyTorch's
(``scipy.signal.get_window(name, n, fftbins=True)``), so for odd ``frame_length`` only those two agree with us.

>>> import numpy as np, tensorlib as tl
>>> x = np.sin(np.arange(64) * 0.3).astype(np.float32)
>>> spec = tl.signal.stft(x, frame_length=16, frame_step=8)
>>> spec.shape, spec.dtype
((7, 9), dtype('complex64'))
>>> back = tl.signal.inverse_stft(spec, 16, 8, window_fn=tl.signal.inverse_stft_window_fn(8))
>>> bool(np.allclose(back.numpy()[8:-8], x[8:-8], atol=1e-5))
True
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import dtypes as _dt
from .dispatch import as_tensor, as_tensors
from .ops import array as _array
from .ops import creation as _creation
from .ops import elementwise as _elementwise
from .ops import fft as _fft
from .ops import iir as _iir
from .ops import linalg_ops as _linalg
from .ops import math as _math
from .ops import numpy_more as _numpy_more
from .ops import reduce as _reduce
from .ops import shape as _shape
from .ops._shapes import as_count, normalize_axis
from .tensor import Tensor

__all__ = [
    "bartlett_window",
    "blackman_window",
    "coherence",
    "csd",
    "decimate",
    "detrend",
    "fftconvolve",
    "filtfilt",
    "frame",
    "hamming_window",
    "hann_window",
    "hilbert",
    "inverse_stft",
    "inverse_stft_window_fn",
    "kaiser_window",
    "lfilter",
    "lfilter_zi",
    "oaconvolve",
    "overlap_and_add",
    "periodogram",
    "resample",
    "resample_poly",
    "sosfilt",
    "sosfilt_zi",
    "sosfiltfilt",
    "spectrogram",
    "stft",
    "torch_stft",
    "welch",
]


def _count(value, what: str, who: str, minimum: int = 1) -> int:
    return as_count(value, f"{who}: {what}", minimum)


def _window_points(name: str, window_length: int, periodic: bool, dtype) -> tuple:
    """``(k, N, dtype)``: the positions ``k < window_length`` (float64), ``N`` as in :func:`hann_window` and
    the checked float dtype; ``k`` is None for a window of one point (which is 1)."""
    n = _count(window_length, "window_length", name, 0)
    dtype = _window_dtype(dtype, name)
    if n == 1:
        return None, 1, dtype
    return np.arange(n, dtype=np.float64), (n if periodic else n - 1), dtype


def _cosine_sum(name: str, coefficients: tuple, window_length: int, periodic: bool, dtype) -> Tensor:
    """``sum_j (-1)**j a_j cos(2 pi j k / N)`` for ``k < window_length``, ``N`` as in :func:`hann_window`."""
    k, period, dtype = _window_points(name, window_length, periodic, dtype)
    if k is None:
        return _creation.ones((1,), dtype=dtype)
    w = sum((-1.0) ** j * a * np.cos(2.0 * np.pi * j * k / period) for j, a in enumerate(coefficients))
    return as_tensor(w.astype(dtype))


def _window_dtype(dtype, name: str):
    dtype = _dt.as_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"{name}: dtype must be floating, got {dtype}")
    return dtype


def hann_window(window_length: int, periodic: bool = True, dtype=_dt.float32) -> Tensor:
    """``0.5 - 0.5 cos(2 pi k / N)`` for ``k < window_length``, ``N = window_length`` (periodic, for spectral
    analysis) or ``window_length - 1`` (symmetric): ``torch.hann_window`` and SciPy's ``get_window("hann")``.
    ``tf.signal.hann_window`` agrees for even lengths; for odd ones its periodic window is the symmetric one.

    >>> import tensorlib as tl
    >>> tl.signal.hann_window(4).numpy().tolist()
    [0.0, 0.5, 1.0, 0.5]
    """
    return _cosine_sum("hann_window", (0.5, 0.5), window_length, periodic, dtype)


def hamming_window(window_length: int, periodic: bool = True, dtype=_dt.float32) -> Tensor:
    """``0.54 - 0.46 cos(2 pi k / N)``, ``N`` as in :func:`hann_window`: ``torch.hamming_window``
    (``tf.signal.hamming_window`` for even lengths).

    >>> import tensorlib as tl
    >>> [round(v, 2) for v in tl.signal.hamming_window(3, periodic=False).numpy().tolist()]
    [0.08, 1.0, 0.08]
    """
    return _cosine_sum("hamming_window", (0.54, 0.46), window_length, periodic, dtype)


def blackman_window(window_length: int, periodic: bool = True, dtype=_dt.float32) -> Tensor:
    """``0.42 - 0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N)``, ``N`` as in :func:`hann_window`:
    ``torch.blackman_window``.

    >>> import tensorlib as tl
    >>> [round(v, 2) for v in tl.signal.blackman_window(3, periodic=False).numpy().tolist()]
    [-0.0, 1.0, -0.0]
    """
    return _cosine_sum("blackman_window", (0.42, 0.5, 0.08), window_length, periodic, dtype)


def bartlett_window(window_length: int, periodic: bool = True, dtype=_dt.float32) -> Tensor:
    """The triangle ``1 - |2 k / N - 1|``, ``N`` as in :func:`hann_window`: ``torch.bartlett_window``.

    >>> import tensorlib as tl
    >>> tl.signal.bartlett_window(5, periodic=False).numpy().tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    k, period, dtype = _window_points("bartlett_window", window_length, periodic, dtype)
    if k is None:
        return _creation.ones((1,), dtype=dtype)
    return as_tensor((1.0 - np.abs(2.0 * k / period - 1.0)).astype(dtype))


def kaiser_window(window_length: int, periodic: bool = True, beta=12.0, dtype=_dt.float32) -> Tensor:
    """``i0(beta sqrt(1 - (2 k / N - 1)**2)) / i0(beta)``, ``N`` as in :func:`hann_window`:
    ``torch.kaiser_window``; differentiable in a tensor ``beta``.

    >>> import tensorlib as tl
    >>> [round(v, 4) for v in tl.signal.kaiser_window(3, periodic=False, beta=2.0).numpy().tolist()]
    [0.4387, 1.0, 0.4387]
    """
    from .ops.special import i0

    k, period, dtype = _window_points("kaiser_window", window_length, periodic, dtype)
    if k is None:
        return _creation.ones((1,), dtype=dtype)
    ratio = np.sqrt(np.maximum(1.0 - (2.0 * k / period - 1.0) ** 2, 0.0))
    if np.iscomplexobj(beta) or isinstance(beta, complex):  # the cast below would drop the imaginary part
        raise TypeError(f"kaiser_window: beta must be real, got {beta!r:.60}")
    beta = _math.cast(beta, _dt.float64) if isinstance(beta, Tensor) else as_tensor(np.float64(beta))
    return _math.cast(i0(beta * ratio) / i0(beta), dtype)


def _numpy_window(name: str, window, M: int, *args) -> Tensor:
    """NumPy's symmetric float64 window of ``M`` points (empty for ``M < 1``)."""
    if isinstance(M, (bool, np.bool_)) or not isinstance(M, (int, np.integer)):
        raise TypeError(f"{name}: M must be an int, got {M!r}")
    if M < 1:
        return _creation.zeros((0,), dtype=_dt.float64)
    return window(int(M), False, *args, dtype=_dt.float64)


def hamming(M: int) -> Tensor:
    """``numpy.hamming``: the symmetric Hamming window of ``M`` points, float64 (``hamming_window(M,
    periodic=False)``).

    >>> import tensorlib as tl
    >>> tl.hamming(3).numpy().round(2).tolist()
    [0.08, 1.0, 0.08]
    """
    return _numpy_window("hamming", hamming_window, M)


def hanning(M: int) -> Tensor:
    """``numpy.hanning``: the symmetric Hann window of ``M`` points, float64 (``hann_window(M, periodic=False)``).

    >>> import tensorlib as tl
    >>> tl.hanning(5).numpy().tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    return _numpy_window("hanning", hann_window, M)


def blackman(M: int) -> Tensor:
    """``numpy.blackman``: the symmetric Blackman window of ``M`` points, float64.

    >>> import tensorlib as tl
    >>> tl.blackman(3).numpy().round(2).tolist()
    [-0.0, 1.0, -0.0]
    """
    return _numpy_window("blackman", blackman_window, M)


def bartlett(M: int) -> Tensor:
    """``numpy.bartlett``: the symmetric triangular window of ``M`` points, float64.

    >>> import tensorlib as tl
    >>> tl.bartlett(5).numpy().tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    return _numpy_window("bartlett", bartlett_window, M)


def kaiser(M: int, beta) -> Tensor:
    """``numpy.kaiser``: the symmetric Kaiser window of ``M`` points, float64; differentiable in a tensor ``beta``.

    >>> import tensorlib as tl
    >>> tl.kaiser(3, 2.0).numpy().round(4).tolist()
    [0.4387, 1.0, 0.4387]
    """
    return _numpy_window("kaiser", kaiser_window, M, beta)


def _axis(axis, x, who: str, name: str, known: bool = False) -> int:
    """``axis`` of ``x`` normalized (``known``: its length must be known when traced); a scalar ``x`` or a bad axis
    is an error naming the function and ``x`` (called ``name``)."""
    if x.ndim == 0:
        raise ValueError(f"{who}: {name} must have at least one axis, got a scalar ({x.dtype})")
    try:
        ax = normalize_axis(axis, x.ndim, f"{who}: axis")
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} ({name} shape {tuple(x.shape)}, {x.dtype})") from None
    if known and x.shape[ax] is None:
        raise ValueError(f"{who}: the length of axis {ax} must be known ({name} shape {tuple(x.shape)}, {x.dtype})")
    return ax


def _frame_positions(frames: int, frame_length: int, frame_step: int) -> np.ndarray:
    """``(frames, frame_length)``: the sample each frame's cell reads."""
    return np.arange(frames)[:, None] * frame_step + np.arange(frame_length)[None, :]


def frame(signal, frame_length: int, frame_step: int, pad_end: bool = False, pad_value=0, axis: int = -1) -> Tensor:
    """Overlapping frames of ``signal`` along ``axis``: frame ``i`` is samples ``[i * frame_step, i * frame_step +
    frame_length)``; the axis becomes ``(frames, frame_length)`` (``tf.signal.frame``).  Without ``pad_end`` only
    whole frames are kept; with it the end is padded with ``pad_value`` to ``ceil(length / frame_step)`` frames.

    >>> import tensorlib as tl
    >>> tl.signal.frame(tl.arange(6), 3, 2).numpy().tolist()
    [[0, 1, 2], [2, 3, 4]]
    """
    who = "frame"
    x = as_tensor(signal)
    frame_length = _count(frame_length, "frame_length", who)
    frame_step = _count(frame_step, "frame_step", who)
    ax = _axis(axis, x, who, "signal", known=True)
    n = x.shape[ax]
    if pad_end:
        frames = -(-n // frame_step)
        padded = max((frames - 1) * frame_step + frame_length, n)
        if padded > n:
            widths = [(0, 0)] * x.ndim
            widths[ax] = (0, padded - n)
            x = _shape.pad(x, widths, constant_values=pad_value)
    else:
        frames = max(0, 1 + (n - frame_length) // frame_step)
    positions = as_tensor(_frame_positions(frames, frame_length, frame_step))
    return _shape.take(x, positions, axis=ax)


def overlap_and_add(signal, frame_step: int) -> Tensor:
    """The frames in the last two axes of ``signal`` (``(..., frames, frame_length)``) added back at their
    places, frame ``i`` starting at ``i * frame_step``: ``(..., (frames - 1) * frame_step + frame_length)``
    samples (``tf.signal.overlap_and_add``; the adjoint of :func:`frame`).

    >>> import tensorlib as tl
    >>> tl.signal.overlap_and_add(tl.ones((3, 4)), 2).numpy().tolist()
    [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0]
    """
    who = "overlap_and_add"
    x = as_tensor(signal)
    frame_step = _count(frame_step, "frame_step", who)
    if x.ndim < 2 or x.shape[-1] is None:
        raise ValueError(
            f"{who}: signal must be (..., frames, frame_length) with frame_length known, got shape "
            f"{tuple(x.shape)} ({x.dtype})"
        )
    frames, frame_length = x.shape[-2:]
    if frames is None:
        return _overlap_and_add_unknown(x, frame_step, who)
    length = max((frames - 1) * frame_step + frame_length, 0)  # TensorFlow's length, also for no frames
    lead = tuple(x.shape[:-2])
    positions = as_tensor(_frame_positions(frames, frame_length, frame_step).reshape(-1))
    moved = _shape.reshape(x, (*(-1 if d is None else d for d in lead), frames * frame_length))
    # Scatter-add along the last axis (GatherV2Grad, the gradient of gathering the frames) into zeros of the
    # output's shape, made from moved so that a batch of unknown size keeps its size.
    like = _shape.pad(moved[..., :0], [(0, 0)] * len(lead) + [(0, length)])
    return _shape._take_grad(moved, positions, like, axis=len(lead))


def _overlap_and_add_unknown(x, frame_step: int, who: str) -> Tensor:
    """overlap_and_add of a traced ``(..., frames, frame_length)`` with an unknown frame count, from shape ops only
    (TensorFlow's construction): each frame is cut into ``k`` pieces of ``frame_step`` samples (zero-padded to
    ``k * frame_step``); piece ``j`` of frame ``i`` belongs at slot ``i + j``.  Putting the pieces in rows ``j`` of
    ``(k, frames + k, frame_step)`` and dropping the last ``k * frame_step`` samples of the flattened rows shifts
    row ``j`` by ``j`` slots, so summing the rows adds every piece at its place."""
    lead = tuple(x.shape[:-2])
    if None in lead:
        raise ValueError(
            f"{who}: a signal with both an unknown frame count and unknown leading axes is not supported, got "
            f"shape {tuple(x.shape)} ({x.dtype})"
        )
    frame_length = x.shape[-1]
    k = -(-frame_length // frame_step)
    n = len(lead)
    widths = [(0, 0)] * (n + 1) + [(0, k * frame_step - frame_length)]
    pieces = _shape.reshape(_shape.pad(x, widths), (*lead, -1, k, frame_step))
    rows = _shape.transpose(pieces, (*range(n), n + 1, n, n + 2))  # (..., k, frames, frame_step)
    rows = _shape.pad(rows, [(0, 0)] * (n + 1) + [(0, k), (0, 0)])  # (..., k, frames + k, frame_step)
    flat = _shape.reshape(rows, (*lead, -1))[..., : -k * frame_step]
    added = _reduce.sum(_shape.reshape(flat, (*lead, k, -1)), axis=n)  # (..., (frames + k - 1) * frame_step)
    surplus = k * frame_step - frame_length
    return added[..., :-surplus] if surplus else added


def _window(window_fn, frame_length: int, dtype, who: str):
    if window_fn is None:
        return None
    window = as_tensor(window_fn(frame_length, dtype=dtype))
    if tuple(window.shape) != (frame_length,):
        raise ValueError(f"{who}: window_fn({frame_length}) gave shape {tuple(window.shape)}, not ({frame_length},)")
    return window if window.dtype == dtype else _math.cast(window, dtype)


def _real_dtype(x, who: str):
    if x.dtype.kind == "c":
        raise TypeError(f"{who}: signals must be real, got {x.dtype} (shape {tuple(x.shape)})")
    return x.dtype if x.dtype.kind == "f" else _dt.float64  # integers and bools: float64, as np.fft.rfft


def stft(signals, frame_length: int, frame_step: int, fft_length: int | None = None, window_fn=hann_window,
         pad_end: bool = False) -> Tensor:  # fmt: skip
    """The short-time Fourier transform of real ``signals`` along their last axis (``tf.signal.stft``): frames of
    ``frame_length`` every ``frame_step`` samples (:func:`frame`), times ``window_fn(frame_length)`` (None: no
    window), each transformed by ``rfft`` of ``fft_length`` (the smallest power of 2 >= ``frame_length`` by
    default): ``(..., frames, fft_length // 2 + 1)``, complex.

    >>> import tensorlib as tl
    >>> tl.signal.stft(tl.ones(32), 8, 4, fft_length=8, window_fn=None)[0].numpy().real.round(3).tolist()
    [8.0, 0.0, 0.0, 0.0, 0.0]
    """
    who = "stft"
    x = as_tensor(signals)
    dtype = _real_dtype(x, who)
    x = x if x.dtype == dtype else _math.cast(x, dtype)
    frame_length = _count(frame_length, "frame_length", who)
    fft_length = (
        2 ** math.ceil(math.log2(frame_length)) if fft_length is None else _count(fft_length, "fft_length", who)
    )
    frames = frame(x, frame_length, frame_step, pad_end=pad_end, axis=-1)
    window = _window(window_fn, frame_length, dtype, who)
    if window is not None:
        frames = frames * window
    return _fft.rfft(frames, n=fft_length, axis=-1)


def inverse_stft(stfts, frame_length: int, frame_step: int, fft_length: int | None = None,
                 window_fn=hann_window) -> Tensor:  # fmt: skip
    """The signal whose :func:`stft` is ``stfts`` (``tf.signal.inverse_stft``): each frame ``irfft``'d to
    ``fft_length`` samples, cut (or zero-padded) to ``frame_length``, times ``window_fn(frame_length)`` and
    overlapped (:func:`overlap_and_add`).  With ``window_fn=inverse_stft_window_fn(frame_step)`` (the forward
    window being Hann) it inverts :func:`stft` where the frames overlap fully.

    >>> import numpy as np, tensorlib as tl
    >>> x = np.random.default_rng(0).standard_normal(40)
    >>> y = tl.signal.inverse_stft(tl.signal.stft(x, 8, 2), 8, 2, window_fn=tl.signal.inverse_stft_window_fn(2))
    >>> bool(np.allclose(y.numpy()[6:-6], x[6:-6]))
    True
    """
    who = "inverse_stft"
    z = as_tensor(stfts)
    if z.ndim < 2:
        raise ValueError(f"{who}: stfts must be (..., frames, bins), got shape {tuple(z.shape)} ({z.dtype})")
    if z.dtype.kind != "c":  # real spectra: float32 (float16) gives complex64, integers and float64 complex128
        z = _math.cast(z, _dt.complex64 if z.dtype.kind == "f" and z.dtype.itemsize < 8 else _dt.complex128)
    frame_length = _count(frame_length, "frame_length", who)
    fft_length = (
        2 ** math.ceil(math.log2(frame_length)) if fft_length is None else _count(fft_length, "fft_length", who)
    )
    real = _fft.irfft(z, n=fft_length, axis=-1)
    if frame_length < fft_length:
        real = real[..., :frame_length]
    elif frame_length > fft_length:
        real = _shape.pad(real, [(0, 0)] * (real.ndim - 1) + [(0, frame_length - fft_length)])
    window = _window(window_fn, frame_length, real.dtype, who)
    if window is not None:
        real = real * window
    return overlap_and_add(real, frame_step)


def inverse_stft_window_fn(frame_step: int, forward_window_fn=hann_window):
    """The window for :func:`inverse_stft` that undoes ``forward_window_fn``'s (``tf.signal.inverse_stft_window_fn``):
    the forward window divided by the sum of its squares over the frames that overlap each sample, and 0 at a
    sample where that sum is 0 (TensorFlow's: a Hann window with ``frame_step == frame_length`` is 0 at each
    frame's start, and no frame can give that sample back).

    >>> import tensorlib as tl
    >>> tl.signal.inverse_stft_window_fn(2)(4).numpy().tolist()
    [0.0, 1.0, 1.0, 1.0]
    """
    frame_step = _count(frame_step, "frame_step", "inverse_stft_window_fn")

    def window_fn(frame_length: int, dtype=_dt.float32) -> Tensor:
        # In tensorlib ops (TensorFlow's are TensorFlow ops): a learned forward window gets its whole gradient,
        # and a window computed inside tl.function has no value to read while tracing.
        frame_length = _count(frame_length, "frame_length", "inverse_stft_window_fn")
        forward = as_tensor(forward_window_fn(frame_length, dtype=dtype))
        overlaps = -(-frame_length // frame_step)
        squares = _shape.pad(_math.square(forward), [(0, overlaps * frame_step - frame_length)])
        per_phase = _reduce.sum(_shape.reshape(squares, (overlaps, frame_step)), axis=0)
        denominator = _shape.tile(per_phase, overlaps)[:frame_length]
        # A sample no frame's window reaches (0 / 0) gets 0, as TensorFlow's: NaN would spread through the overlaps.
        unreached = denominator == 0
        one = np.ones((), np.dtype(forward.dtype))
        zero = np.zeros((), np.dtype(forward.dtype))
        return _math.where(unreached, zero, forward / _math.where(unreached, one, denominator))

    return window_fn


def _conv_axes(a, b, axes, who: str) -> list:
    """SciPy's convolved axes of ``a`` and ``b`` (same rank): all by default, normalized, without those where
    either size is 1 (they broadcast, as the other axes do); the sizes of the rest checked."""
    where = f"(shapes {tuple(a.shape)} {a.dtype} and {tuple(b.shape)} {b.dtype})"
    if axes is None:
        axes = tuple(range(a.ndim))
    else:
        axes = _fft._integers(axes, "axes", who, a)
        if not axes:
            raise ValueError(f"{who}: axes cannot be empty when given {where}")
        try:
            axes = _fft._check_axes(a, axes)
        except ValueError as e:
            raise ValueError(f"{who}: {e} {where}") from None
    unknown = [ax for ax in axes if a.shape[ax] is None or b.shape[ax] is None]
    if unknown:
        raise ValueError(f"{who}: the sizes of the convolved axes {tuple(unknown)} must be known {where}")
    kept = [ax for ax in axes if a.shape[ax] != 1 and b.shape[ax] != 1]
    for ax in range(a.ndim):
        n, m = a.shape[ax], b.shape[ax]
        if ax not in kept and None not in (n, m) and n != m and 1 not in (n, m):
            raise ValueError(f"{who}: incompatible shapes along axis {ax}, which is not convolved {where}")
    return kept


def _centered(x, shape):
    """The centre ``shape`` of ``x`` (SciPy's ``_centered``: the extra element of an odd margin on the right);
    a size unknown when traced is kept whole."""
    index = tuple(
        slice(None) if None in (size, new) or size == new else slice((size - new) // 2, (size - new) // 2 + new)
        for size, new in zip(x.shape, shape)
    )
    return x[index]


def _fft_convolution(in1, in2, mode: str, axes, who: str) -> Tensor:
    """``scipy.signal.fftconvolve``: the product of the spectra (``rfftn`` for real inputs, ``fftn`` for complex
    ones) of both inputs zero-padded to the full size, transformed back and cut to ``mode``."""
    a, b = as_tensors(in1, in2)
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{who}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    if a.ndim == b.ndim == 0:
        return _math.multiply(a, b)
    if a.ndim != b.ndim:
        raise ValueError(
            f"{who}: in1 and in2 should have the same dimensionality, got shapes {tuple(a.shape)} {a.dtype} and "
            f"{tuple(b.shape)} {b.dtype}"
        )
    # Each input as SciPy's transforms read it (integers and bools float64), then promoted.
    dtype = np.result_type(*(_dt.float64 if t.dtype.kind in "biu" else t.dtype for t in (a, b)))
    if 0 in a.shape or 0 in b.shape:  # SciPy's answer for an empty input, whatever the shapes and dtypes
        return _creation.zeros((0,), dtype=_dt.float64)
    axes = _conv_axes(a, b, axes, who)
    if mode == "valid" and axes:
        larger = [all(x.shape[ax] >= y.shape[ax] for ax in axes) for x, y in ((a, b), (b, a))]
        if not any(larger):
            raise ValueError(
                f"{who}: for 'valid' mode, one input must be at least as large as the other in every convolved "
                f"axis, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
            )
        if not larger[0]:  # convolution commutes: SciPy swaps the inputs
            a, b = b, a
    if not axes:  # every axis broadcasts: SciPy multiplies, in the inputs' own dtypes
        full = _math.multiply(a, b)
    else:
        a, b = (t if t.dtype == dtype else _math.cast(t, dtype) for t in (a, b))
        sizes = [a.shape[ax] + b.shape[ax] - 1 for ax in axes]
        if dtype.kind == "c":
            full = _fft.ifftn(_fft.fftn(a, sizes, axes) * _fft.fftn(b, sizes, axes), sizes, axes)
        else:
            full = _fft.irfftn(_fft.rfftn(a, sizes, axes) * _fft.rfftn(b, sizes, axes), sizes, axes)
    if mode == "full":
        return full
    if mode == "same":
        return _centered(full, a.shape)
    return _centered(
        full, [a.shape[ax] - b.shape[ax] + 1 if ax in axes else size for ax, size in enumerate(full.shape)]
    )


def fftconvolve(in1, in2, mode: str = "full", axes=None) -> Tensor:
    """The N-dimensional convolution of ``in1`` and ``in2`` by FFT (``scipy.signal.fftconvolve``): over ``axes``
    (all by default; the others broadcast), ``mode`` ``"full"``, ``"same"`` (``in1``'s shape, centred) or
    ``"valid"`` (full overlap only); real inputs give real results (float16 ones float32, integers float64),
    complex ones complex.  Differentiable in both inputs.

    >>> import tensorlib as tl
    >>> tl.signal.fftconvolve(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([0.0, 1.0, 0.5])).numpy().round(6).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    return _fft_convolution(in1, in2, mode, axes, "fftconvolve")


def oaconvolve(in1, in2, mode: str = "full", axes=None) -> Tensor:
    """``scipy.signal.oaconvolve``: the convolution SciPy computes by overlap-add, here with one transform as
    :func:`fftconvolve` (the same values and dtypes; the overlap-add only saves time on very unequal sizes).

    >>> import tensorlib as tl
    >>> tl.signal.oaconvolve(tl.ones((2, 3)), tl.ones((1, 2)), mode="same").numpy().round(6).tolist()
    [[1.0, 2.0, 2.0], [1.0, 2.0, 2.0]]
    """
    return _fft_convolution(in1, in2, mode, axes, "oaconvolve")


def hilbert(x, N: int | None = None, axis: int = -1) -> Tensor:
    """The analytic signal ``x + i H(x)`` of real ``x`` along ``axis`` (``scipy.signal.hilbert``): the FFT of
    ``N`` samples (``x`` cropped or zero-padded; default its length), its positive frequencies doubled and its
    negative ones zeroed, transformed back.  Complex64 for float32 (and float16) input, else complex128;
    differentiable.

    >>> import tensorlib as tl
    >>> tl.signal.hilbert(tl.tensor([1.0, 0.0, -1.0, 0.0])).numpy().imag.round(6).tolist()
    [0.0, 1.0, 0.0, -1.0]
    """
    who = "hilbert"
    x = as_tensor(x)
    dtype = _real_dtype(x, who)
    x = x if x.dtype == dtype else _math.cast(x, dtype)
    ax = _axis(axis, x, who, "x")
    if N is None:
        N = x.shape[ax]
        if N is None:
            raise ValueError(
                f"{who}: the length of axis {ax} must be known, or N given (x shape {tuple(x.shape)}, {x.dtype})"
            )
    N = _count(N, "N", who)
    spectrum = _fft.fft(x, n=N, axis=ax)
    h = np.zeros(N)
    h[0] = 1.0
    h[1 : (N + 1) // 2] = 2.0
    if N % 2 == 0:
        h[N // 2] = 1.0
    h = h.reshape((N,) + (1,) * (x.ndim - 1 - ax)).astype(_dt.real_dtype(spectrum.dtype))
    return _fft.ifft(spectrum * _creation.tensor(h, backend=x.backend), axis=ax)


def _tukey(length: int, alpha: float) -> np.ndarray:
    """SciPy's symmetric Tukey window of ``length`` points: flat, with cosine tapers over ``alpha / 2`` of it at
    each end (``alpha <= 0``: a box; ``alpha >= 1``: Hann)."""
    if length == 1:
        return np.ones(1)
    if alpha <= 0:
        return np.ones(length)
    k = np.arange(length)
    if alpha >= 1:
        return 0.5 - 0.5 * np.cos(2 * np.pi * k / (length - 1))
    width = int(np.floor(alpha * (length - 1) / 2.0))
    w = np.ones(length)
    rising, falling = k[: width + 1], k[length - width - 1 :]
    w[: width + 1] = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * rising / alpha / (length - 1))))
    w[length - width - 1 :] = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * falling / alpha / (length - 1))))
    return w


def _named_window(window, length: int, dtype, who: str) -> Tensor:
    """``scipy.signal.get_window(window, length)`` (periodic) for the names tl.signal has windows for."""
    if isinstance(window, tuple) and len(window) == 2 and window[0] == "kaiser":
        return kaiser_window(length, periodic=True, beta=window[1], dtype=dtype)
    if window == "tukey" or isinstance(window, tuple) and len(window) == 2 and window[0] == "tukey":
        return as_tensor(_tukey(length + 1, 0.5 if window == "tukey" else float(window[1]))[:-1].astype(dtype))
    named = {
        "boxcar": None,
        "hann": hann_window,
        "hann_periodic": hann_window,
        "hamming": hamming_window,
        "blackman": blackman_window,
        "bartlett": bartlett_window,
    }
    if not isinstance(window, str) or window not in named:
        raise ValueError(
            f"{who}: window must be one of {sorted(named)}, ('kaiser', beta), 'tukey', ('tukey', alpha) or the "
            f"values, got {window!r}"
        )
    fn = named[window]
    return _creation.ones((length,), dtype=dtype) if fn is None else fn(length, periodic=True, dtype=dtype)


def _detrended(frames, detrend, who: str) -> Tensor:
    """Each frame (the last axis) less its mean (``"constant"``) or its least-squares line (``"linear"``)."""
    if detrend is False:
        return frames
    if callable(detrend):
        return as_tensor(detrend(frames))
    if detrend not in ("constant", "linear"):
        raise ValueError(f"{who}: detrend must be 'constant', 'linear', False or a function, got {detrend!r}")
    centred = frames - _reduce.mean(frames, axis=-1, keepdims=True)
    length = frames.shape[-1]
    if detrend == "constant" or length == 1:
        return centred
    t = np.arange(length) - (length - 1) / 2.0  # centred times: the slope is sum(t y) / sum(t t)
    times = _creation.tensor(t.astype(frames.dtype), backend=frames.backend)
    return centred - _reduce.sum(centred * times, axis=-1, keepdims=True) * (times / float(np.sum(t * t)))


def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data: bool = False) -> Tensor:  # noqa: A002
    """``data`` less its least-squares line along ``axis`` (``scipy.signal.detrend``): ``type="linear"`` (``"l"``)
    fits a line to each piece between the breakpoints ``bp`` (sample indices; the whole axis by default),
    ``"constant"`` (``"c"``) subtracts the mean (``bp`` unused).  Integers, bools and float16 give float64
    (SciPy's), float32 float32, complex stays complex.  ``overwrite_data`` is accepted for SciPy's signature: the
    input is never written (values are immutable).  Differentiable in ``data``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.signal.detrend(np.array([1.0, 3.0, 5.0, 8.0])).numpy().round(6).tolist()
    [0.2, -0.1, -0.4, 0.3]
    >>> tl.signal.detrend([1, 2, 6], type="constant").numpy().tolist()
    [-2.0, -1.0, 3.0]
    """
    who = "detrend"
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"{who}: type must be 'linear' or 'constant', got {type!r}")
    x = as_tensor(data)
    if x.dtype.kind not in "fc" or x.dtype == _dt.float16:
        x = _math.cast(x, _dt.float64)
    if x.ndim == 0:
        raise ValueError(f"{who}: data must have at least one axis, got a scalar ({x.dtype})")
    linear = type in ("linear", "l")
    ax = _axis(axis, x, who, "data", known=linear)
    moved = _last(x, ax)
    if not linear:
        return _last(_detrended(moved, "constant", who), ax, back=True)
    n = moved.shape[-1]
    points = np.unique(np.r_[0, np.asarray(bp, dtype=np.int64).ravel(), n])
    if points[0] < 0 or points[-1] > n:
        raise ValueError(f"{who}: breakpoints must be within [0, {n}] (the length of data along axis {ax}), got "
                         f"bp = {bp!r:.80} (data shape {tuple(x.shape)})")  # fmt: skip
    if n == 0:
        raise ValueError(f"{who}: type='linear' needs at least one sample along axis {ax} (data shape "
                         f"{tuple(x.shape)}, {x.dtype})")  # fmt: skip
    pieces = [_detrended(moved[..., int(lo) : int(hi)], "linear", who) for lo, hi in zip(points[:-1], points[1:])]
    return _last(pieces[0] if len(pieces) == 1 else _shape.concat(pieces, -1), ax, back=True)


def _segment_spectra(x, ax, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, who,
                     overlap_divisor=2) -> tuple:  # fmt: skip
    """``scipy.signal``'s spectral helper: the spectra ``(..., segments, bins)`` (``ax`` moved last) of ``x``'s
    segments of ``nperseg`` samples (default 256, at most the signal's length) every ``nperseg - noverlap``
    (default ``nperseg // overlap_divisor``), detrended, windowed and transformed with ``nfft`` points (one-sided
    for real ``x`` unless asked), and ``(freqs, spectra, scale, onesided, nfft, nperseg, noverlap)``; ``scale``
    turns squared magnitudes into a power density (``1 / (fs sum(w**2))``) or spectrum (``1 / sum(w)**2``)."""
    n = x.shape[ax]
    if x.dtype.kind == "c":
        return_onesided = False
    else:  # SciPy's dtypes: float16 computes as float32, integers and bools as float64
        real = _dt.float64 if x.dtype.kind in "biu" else _dt.float32 if x.dtype == _dt.float16 else x.dtype
        x = x if x.dtype == real else _math.cast(x, real)
    real = _dt.real_dtype(x.dtype)
    if isinstance(window, (str, tuple)):
        nperseg = 256 if nperseg is None else _count(nperseg, "nperseg", who)
        if n < nperseg:
            warnings.warn(f"{who}: nperseg={nperseg} is greater than the signal length {n}, using nperseg={n}",
                          UserWarning, stacklevel=4)  # fmt: skip
            nperseg = n
        win = _named_window(window, nperseg, real, who)
    else:
        win = as_tensor(window)
        if win.ndim != 1 or win.shape[0] is None:
            raise ValueError(f"{who}: window must be one-dimensional, got shape {tuple(win.shape)} ({win.dtype})")
        win = win if win.dtype == real else _math.cast(win, real)
        nperseg = win.shape[0] if nperseg is None else _count(nperseg, "nperseg", who)
        if nperseg != win.shape[0]:
            raise ValueError(f"{who}: nperseg={nperseg} does not equal the window's length {win.shape[0]}")
        if nperseg > n:
            raise ValueError(f"{who}: the window's {nperseg} samples are more than the signal's {n} (axis {ax})")
    nfft = nperseg if nfft is None else _count(nfft, "nfft", who)
    if nfft < nperseg:
        raise ValueError(f"{who}: nfft={nfft} must be at least nperseg={nperseg}")
    noverlap = nperseg // overlap_divisor if noverlap is None else _count(noverlap, "noverlap", who, 0)
    if noverlap >= nperseg:
        raise ValueError(f"{who}: noverlap={noverlap} must be less than nperseg={nperseg}")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{who}: scaling must be 'density' or 'spectrum', got {scaling!r}")
    frames = frame(_array.moveaxis(x, ax, -1), nperseg, nperseg - noverlap)  # (..., frames, nperseg)
    frames = _detrended(frames, detrend, who) * win
    spectra = _fft.rfft(frames, n=nfft) if return_onesided else _full_spectra(frames, nfft)
    scale = 1.0 / (fs * _reduce.sum(_math.square(win))) if scaling == "density" else 1.0 / _reduce.sum(win) ** 2
    freqs = (_fft.rfftfreq if return_onesided else _fft.fftfreq)(nfft, 1.0 / fs)
    return freqs, spectra, _math.cast(scale, real), return_onesided, nfft, nperseg, noverlap


def _full_spectra(frames, nfft: int) -> Tensor:
    """``fft(frames, nfft)`` as SciPy's spectral helper has it, down to the sign of zero that decides the angle
    (-pi or pi) of a negative bin that is real (bin 0 and, for an even ``nfft``, ``nfft / 2``).  float64 frames
    go through ``scipy.fft.fft`` of a real array, which gives those bins an imaginary part of -0.0 (NumPy's and
    ours is +0.0); float32 frames are complex64 there (SciPy casts the window to the output's complex dtype),
    and their transform keeps +0.0 as ours does."""
    spectra = _fft.fft(frames, n=nfft)
    if frames.dtype != _dt.float64:
        return spectra
    real_bins = np.zeros(nfft, bool)
    real_bins[[0, nfft // 2] if nfft % 2 == 0 else [0]] = True
    return _elementwise.complex_(_elementwise.real(spectra), _math.where(real_bins, -0.0, _elementwise.imag(spectra)))


def _power(spectra, scale, onesided: bool, nfft: int) -> Tensor:
    """The squared magnitudes of ``spectra`` times ``scale``; the one-sided spectra's bins that stand for two
    frequencies (every bin but 0 and, for an even ``nfft``, the last) doubled."""
    power = (_math.square(_elementwise.real(spectra)) + _math.square(_elementwise.imag(spectra))) * scale
    if not onesided:
        return power
    weight = np.full(nfft // 2 + 1, 2.0)
    weight[0] = 1.0
    weight[-1] = 1.0 if nfft % 2 == 0 else 2.0
    return power * _creation.tensor(weight.astype(scale.dtype), backend=spectra.backend)


def _average_power(x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average, who):
    """``scipy.signal.welch``: the mean (or bias-corrected median) over the segments of :func:`_segment_spectra`
    of their power."""
    x = as_tensor(x)
    ax = _axis(axis, x, who, "x", known=True)
    if 0 in x.shape:  # SciPy's answer for an empty input
        return _creation.zeros(x.shape, dtype=_dt.float64), _creation.zeros(x.shape, dtype=_dt.float64)
    if average not in ("mean", "median"):
        raise ValueError(f"{who}: average must be 'mean' or 'median', got {average!r}")
    freqs, spectra, scale, onesided, nfft, _, _ = _segment_spectra(
        x, ax, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, who
    )
    power = _power(spectra, scale, onesided, nfft)
    count = power.shape[-2]
    if average == "median" and count > 1:
        bias = 1.0 + sum(1.0 / (2 * k + 1) - 1.0 / (2 * k) for k in range(1, (count - 1) // 2 + 1))
        power = _array.median(power, axis=-2) / bias
    else:
        power = _reduce.mean(power, axis=-2)
    return freqs, _array.moveaxis(power, -1, ax)


def _cross_spectral_density(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
                            average, who) -> tuple:  # fmt: skip
    """``scipy.signal.csd``: the mean (or bias-corrected median, real and imaginary parts apart) over the segments
    of ``conj(X) Y`` times the scale, the one-sided spectra's bins that stand for two frequencies doubled."""
    x, y = as_tensor(x), as_tensor(y)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"{who}: x and y must have at least one axis, got shapes {tuple(x.shape)} and "
                         f"{tuple(y.shape)}")  # fmt: skip
    ax_x, ax_y = _axis(axis, x, who, "x", known=True), _axis(axis, y, who, "y", known=True)
    if 0 in x.shape or 0 in y.shape:  # SciPy's answer for an empty input
        shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape)) if x.ndim == y.ndim else ()
        return _creation.zeros(shape, dtype=_dt.float64), _creation.zeros(shape, dtype=_dt.float64)
    if average not in ("mean", "median"):
        raise ValueError(f"{who}: average must be 'mean' or 'median', got {average!r}")
    nx, ny = x.shape[ax_x], y.shape[ax_y]
    if nx != ny:  # SciPy pads the shorter signal with zeros at its end
        short, ax, gap = (x, ax_x, ny - nx) if nx < ny else (y, ax_y, nx - ny)
        short = _shape.pad(short, [(0, gap) if i == ax else (0, 0) for i in range(short.ndim)])
        x, y = (short, y) if nx < ny else (x, short)
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        return_onesided = False
    freqs, sx, scale, onesided, nfft, _, _ = _segment_spectra(
        x, ax_x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, who
    )
    _, sy, _, _, _, _, _ = _segment_spectra(
        y, ax_y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, who
    )
    cross = _elementwise.conj(sx) * sy
    cross = cross * _math.cast(scale * _bin_weights(onesided, nfft, scale.dtype, x.backend), cross.dtype)
    count = cross.shape[-2]
    if average == "median" and count > 1:
        bias = 1.0 + sum(1.0 / (2 * k + 1) - 1.0 / (2 * k) for k in range(1, (count - 1) // 2 + 1))
        real = _array.median(_elementwise.real(cross), axis=-2)
        imag = _array.median(_elementwise.imag(cross), axis=-2)
        cross = _elementwise.complex_(real, imag) / bias
    else:
        cross = _reduce.mean(cross, axis=-2)
    return freqs, _array.moveaxis(cross, -1, ax_x if x.ndim >= y.ndim else ax_y)


def _bin_weights(onesided: bool, nfft: int, dtype, backend):
    """1 per bin, 2 for the one-sided spectra's bins that stand for two frequencies (all but 0 and, for an even
    ``nfft``, the last)."""
    if not onesided:
        return _creation.ones((nfft,), dtype=dtype, backend=backend)
    weight = np.full(nfft // 2 + 1, 2.0)
    weight[0] = 1.0
    weight[-1] = 1.0 if nfft % 2 == 0 else 2.0
    return _creation.tensor(weight.astype(dtype), backend=backend)


def csd(x, y, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
        nfft: int | None = None, detrend="constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean") -> tuple:  # fmt: skip
    """The cross power spectral density of ``x`` and ``y`` by Welch's method (``scipy.signal.csd``):
    ``(frequencies, Pxy)``, the mean over segments of ``conj(X) Y`` with :func:`welch`'s arguments and defaults
    (``average="median"`` takes the real and imaginary parts' medians apart).  The shorter signal is padded with
    zeros at its end; the other axes broadcast.  ``Pxy`` is complex (complex64 for float32 signals, complex128
    otherwise); one-sided unless a signal is complex.  ``csd(x, x)`` is :func:`welch`'s power.  Differentiable in
    ``x``, ``y``, a window tensor and ``fs``.

    >>> import numpy as np, tensorlib as tl
    >>> t = np.arange(64)
    >>> f, pxy = tl.signal.csd(np.sin(t * np.pi / 2), np.cos(t * np.pi / 2), fs=4.0, nperseg=16)
    >>> k = int(np.argmax(np.abs(pxy.numpy())))
    >>> f.numpy()[k].item(), round(float(np.angle(pxy.numpy()[k]) / np.pi), 3)
    (1.0, 0.5)
    """
    return _cross_spectral_density(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                                   axis, average, "csd")  # fmt: skip


def coherence(x, y, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
              nfft: int | None = None, detrend="constant", axis: int = -1) -> tuple:  # fmt: skip
    """The magnitude squared coherence of ``x`` and ``y`` (``scipy.signal.coherence``): ``(frequencies, Cxy)``,
    ``|Pxy|**2 / (Pxx Pyy)`` from :func:`csd` and :func:`welch` with these arguments (one-sided, density scaling,
    mean averages), between 0 and 1.  Real (float32 for float32 signals, float64 otherwise).  Differentiable in
    ``x``, ``y``, a window tensor and ``fs``.

    >>> import numpy as np, tensorlib as tl
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal(256)
    >>> f, c = tl.signal.coherence(x, 2 * x, nperseg=32)
    >>> bool(np.allclose(c.numpy(), 1.0))
    True
    """
    args = (fs, window, nperseg, noverlap, nfft, detrend, True, "density", axis, "mean", "coherence")
    _, pxx = _average_power(x, *args)
    _, pyy = _average_power(y, *args)
    freqs, pxy = _cross_spectral_density(x, y, *args)
    magnitude = _math.square(_elementwise.real(pxy)) + _math.square(_elementwise.imag(pxy))
    return freqs, magnitude / pxx / pyy


def welch(x, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, detrend="constant", return_onesided: bool = True, scaling: str = "density",
          axis: int = -1, average: str = "mean") -> tuple:  # fmt: skip
    """Welch's power spectral density estimate (``scipy.signal.welch``): ``(frequencies, power)``, the power
    averaged over frames of ``nperseg`` samples (default 256, at most the signal's length) overlapping by
    ``noverlap`` (default half), each detrended (``"constant"``, ``"linear"``, False or a function of the frames,
    the last axis), times the window (a name of ``scipy.signal.get_window``'s: ``"hann"``, ``"hamming"``,
    ``"blackman"``, ``"bartlett"``, ``"boxcar"`` or ``("kaiser", beta)``, periodic; or the values, which may be a
    tensor to learn) and transformed with ``nfft`` points.  One-sided for real ``x`` unless asked; float32 power
    for float32 (and float16) ``x``, float64 otherwise; frequencies float64.  Differentiable in ``x``, a window
    tensor and ``fs``.

    >>> import numpy as np, tensorlib as tl
    >>> f, p = tl.signal.welch(np.sin(np.arange(64) * np.pi / 2), fs=4.0, nperseg=16)
    >>> f.numpy()[np.argmax(p.numpy())].item()
    1.0
    """
    return _average_power(x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average,
                          "welch")  # fmt: skip


def periodogram(x, fs=1.0, window="boxcar", nfft: int | None = None, detrend="constant",
                return_onesided: bool = True, scaling: str = "density", axis: int = -1) -> tuple:  # fmt: skip
    """The periodogram (``scipy.signal.periodogram``): :func:`welch` with one frame, the whole signal (cropped
    to ``nfft`` when that is shorter, zero-padded when longer), ``window`` ``"boxcar"`` (None) by default.

    >>> import tensorlib as tl
    >>> f, p = tl.signal.periodogram(tl.tensor([1.0, -1.0, 1.0, -1.0]), scaling="spectrum")
    >>> p.numpy().round(6).tolist()
    [0.0, 0.0, 1.0]
    """
    who = "periodogram"
    x = as_tensor(x)
    ax = _axis(axis, x, who, "x")
    n, nperseg = x.shape[ax], x.shape[ax]
    nfft = None if nfft is None else _count(nfft, "nfft", who)
    if nfft is not None and n is not None and nfft < n:  # SciPy crops the signal to nfft samples
        index = [slice(None)] * x.ndim
        index[ax] = slice(0, nfft)
        x, nperseg, nfft = x[tuple(index)], nfft, None
    return _average_power(x, fs, "boxcar" if window is None else window, nperseg, 0, nfft, detrend,
                          return_onesided, scaling, axis, "mean", who)  # fmt: skip


# ---------------------------------------------------------------- linear filters (scipy.signal's)
# A numerator longer than this is an FFT convolution (when the signal's length is known): below it the sum of
# shifted products costs less than the transforms.
_FFT_TAPS = 64


def _filter_inputs(who: str, *values) -> tuple:
    """``values`` as tensors of one float dtype (None stays None): SciPy's promotion, integers and bools as
    float64 and float16 as float32 (SciPy refuses both); complex ones refused (a complex signal is filtered as
    its parts, :func:`_by_parts`, before this)."""
    tensors = as_tensors(*values)
    given = [t for t in tensors if t is not None]
    for t in given:
        if t.dtype.kind == "c":
            raise TypeError(f"{who}: complex coefficients are not supported, got {t.dtype} "
                            f"(shape {tuple(t.shape)})")  # fmt: skip
    dtype = np.result_type(*(_dt.float64 if t.dtype.kind in "biu" else t.dtype for t in given))
    dtype = _dt.float32 if dtype == _dt.float16 else dtype
    return [t if t is None or t.dtype == dtype else _math.cast(t, dtype) for t in tensors]


def _is_complex(*values) -> bool:
    return any(t is not None and t.dtype.kind == "c" for t in values)


def _by_parts(run, x, zi=None):
    """``run(x, zi)`` (a filter with real coefficients, linear in the signal ``x`` and the state ``zi`` together)
    of a complex ``x`` or ``zi``: run on the real parts and on the imaginary parts, the results recombined.  Built
    of ``real``, ``imag`` and ``complex``, so the gradients follow ``tl.grad``'s complex convention."""
    parts = [run(part(x), None if zi is None else part(zi)) for part in (_elementwise.real, _elementwise.imag)]
    if zi is None:
        return _elementwise.complex_(*parts)
    return tuple(_elementwise.complex_(re, im) for re, im in zip(*parts))


def _is_constant(value) -> bool:
    """Whether ``value`` holds no tensor (a NumPy array, a number, lists of them): nothing differentiates it."""
    if isinstance(value, (list, tuple)):
        return all(_is_constant(v) for v in value)
    return not isinstance(value, Tensor)


def _known_values(given, t: Tensor):
    """The values of ``t`` (read from ``given``, the argument it came from) when known: a concrete tensor, or a
    NumPy array or list passed into a traced function (a constant there, though its tensor is symbolic); else
    None."""
    if not t.is_symbolic:
        return t.numpy()
    if isinstance(given, (np.ndarray, np.generic, list, tuple)):
        try:
            values = np.asarray(given)
        except (TypeError, ValueError):  # a list holding traced tensors
            return None
        return values if values.dtype.kind in "biuf" else None
    return None


def _coefficients(c, name: str, who: str) -> Tensor:
    """A filter's coefficients ``c`` as a nonempty vector (a scalar is one coefficient)."""
    c = _shape.reshape(c, (1,)) if c.ndim == 0 else c
    if c.ndim != 1 or c.shape[0] in (None, 0):
        raise ValueError(
            f"{who}: {name} must be a nonempty one-dimensional sequence of known length, got shape "
            f"{tuple(c.shape)} ({c.dtype})"
        )
    return c


def _denominator(a, who: str) -> Tensor:
    """``a`` as :func:`_coefficients` reads it, ``a[0] == 0`` refused here when its value is known (a traced one
    is refused by the ``AllPoleFilter`` kernel when the graph runs)."""
    a = _coefficients(a, "a", who)
    if not a.is_symbolic and a.numpy()[0] == 0:
        raise ValueError(f"{who}: a[0] == 0 leaves the recursion undefined (a = {a.numpy()!r:.80}, {a.dtype})")
    return a


def _fir(b, x) -> Tensor:
    """``sum_k b[k] x[n - k]`` along the last axis of ``x``: the convolution cut to ``x``'s length."""
    taps, n = b.shape[0], x.shape[-1]
    if taps > _FFT_TAPS and n:
        kernel = _shape.reshape(b, (1,) * (x.ndim - 1) + (taps,))
        return _fft_convolution(x, kernel, "full", (x.ndim - 1,), "lfilter")[..., :n]
    return _iir.fir_filter(b, x)


def _last(x, ax: int, back: bool = False) -> Tensor:
    """``x`` with axis ``ax`` moved last (``back``: the last axis moved to ``ax``); ``x`` itself, not a transpose
    op, when ``ax`` is the last axis already."""
    if ax == x.ndim - 1:
        return x
    return _array.moveaxis(x, -1, ax) if back else _array.moveaxis(x, ax, -1)


def _lfilter_last(b, a, x, zi=None):
    """``lfilter`` along the last axis of ``x``; with ``zi`` (``(..., order)``, broadcast to ``x``'s leading
    axes) also the final state.  The state enters as an input at the first ``order`` samples: with ``x`` and
    ``y`` zero outside ``[0, n)``, ``a[0] y = b * x + a[0] zi`` (convolutions), and the final state is what the
    convolutions still owe past the end: ``zf[i] = (b * x - a * y)[n + i] / a[0]`` (``zi`` included there)."""
    if zi is None:
        if b.shape[0] <= _FFT_TAPS or not x.shape[-1]:
            return _iir.linear_filter(b, a, x)  # one op, one pass of SciPy's loop
        return _iir.all_pole_filter(a, _fir(b, x))
    order = max(a.shape[0], b.shape[0]) - 1
    if order == 0:
        return _iir.all_pole_filter(a, _fir(b, x)), zi + _math.zeros_like(x[..., :0])
    # zi broadcast to x's leading axes (sizes unknown when traced too); an empty x leaves the state as it is
    lead = x[..., :1] if x.shape[-1] != 0 else _shape.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, 1)])
    zi = zi + _math.zeros_like(lead)
    drive = _fir(b, _shape.concat([x, _math.zeros_like(zi)], -1)) + a[0] * _shape.concat([zi, _math.zeros_like(x)], -1)
    y = _iir.all_pole_filter(a, drive[..., :-order])
    owed = drive - _fir(a, _shape.concat([y, _math.zeros_like(zi)], -1))
    return y, owed[..., -order:] / a[0]


def _state(zi, x, ax: int, order: int, who: str, name: str = "zi") -> Tensor:
    """The initial state ``zi`` checked against SciPy's shape (``x``'s, with ``order`` along ``ax``; sizes of 1
    broadcast) and moved to the last axis."""
    expected = tuple(order if i == ax else size for i, size in enumerate(x.shape))
    fits = zi.ndim == x.ndim and all(
        got in (want, None) or (i != ax and (got == 1 or want is None)) for i, (got, want) in enumerate(zip(zi.shape, expected))
    )  # fmt: skip
    if not fits:
        raise ValueError(f"{who}: {name} must have shape {expected} (x shape {tuple(x.shape)} with the filter's "
                         f"order {order} along axis {ax}), got {tuple(zi.shape)} ({zi.dtype})")  # fmt: skip
    return _array.moveaxis(zi, ax, -1)


def lfilter(b, a, x, axis: int = -1, zi=None):
    """Filter ``x`` along ``axis`` with the rational transfer function ``B(z) / A(z)`` (``scipy.signal.lfilter``):
    ``a[0] y[n] = b[0] x[n] + ... + b[M] x[n-M] - a[1] y[n-1] - ... - a[N] y[n-N]``.  ``zi`` (shape of ``x``
    with ``max(len(a), len(b)) - 1`` along ``axis``; see :func:`lfilter_zi`) is the initial state of SciPy's
    transposed direct form II; given, the result is ``(y, zf)`` with the final state.  An unstable filter grows
    as SciPy's does; ``a[0] == 0`` is a ValueError (also when the filter runs in a traced graph).

    The filter is two ops, ``FirFilter`` (the numerator; an FFT convolution beyond 64 taps) and ``AllPoleFilter``
    (the recursion), whose gradients are the same filters run backwards.  A complex ``x`` (or ``zi``) is filtered as
    its real and imaginary parts (complex coefficients are refused).  Differentiable in ``b``, ``a``, ``x`` and
    ``zi``.  Float32 inputs give float32 (integers float64); NumPy arrays keep their dtypes, and lists are
    read at theirs (SciPy reads lists as float64).

    >>> import numpy as np, tensorlib as tl
    >>> tl.signal.lfilter([1.0], [1.0, -0.5], np.ones(4)).numpy().tolist()
    [1.0, 1.5, 1.75, 1.875]
    >>> y, zf = tl.signal.lfilter([1.0], [1.0, -0.5], np.ones(2), zi=np.array([1.0]))
    >>> y.numpy().tolist(), zf.numpy().tolist()
    ([2.0, 2.0], [1.0])
    """
    who = "lfilter"
    signal, state = as_tensors(x, zi)
    if _is_complex(signal, state):
        return _by_parts(lambda x, zi: lfilter(b, a, x, axis, zi), signal, state)
    b, a, x, zi = _filter_inputs(who, b, a, signal, state)
    b, a = _coefficients(b, "b", who), _denominator(a, who)
    ax = _axis(axis, x, who, "x")
    signal = _last(x, ax)
    if zi is None:
        return _last(_lfilter_last(b, a, signal), ax, back=True)
    order = max(a.shape[0], b.shape[0]) - 1
    y, zf = _lfilter_last(b, a, signal, _state(zi, x, ax, order, who))
    return _last(y, ax, back=True), _last(zf, ax, back=True)


def lfilter_zi(b, a) -> Tensor:
    """The initial state of :func:`lfilter` for the steady state of its step response (``scipy.signal.lfilter_zi``):
    ``zi`` with ``lfilter(b, a, ones, zi=zi)`` constant; scale it by ``x[0]`` for a signal starting at ``x[0]``.
    Leading zeros of ``a`` are dropped (SciPy's), and ``a`` normalized; differentiable in ``b`` and ``a``.

    >>> import tensorlib as tl
    >>> tl.signal.lfilter_zi([1.0, 1.0], [1.0, -0.5]).numpy().tolist()
    [3.0]
    """
    who = "lfilter_zi"
    b, a = _filter_inputs(who, b, a)
    b, a = _coefficients(b, "b", who), _coefficients(a, "a", who)
    if not a.is_symbolic:
        nonzero = np.flatnonzero(a.numpy())
        if nonzero.size == 0:
            raise ValueError(f"{who}: there must be at least one nonzero a coefficient, got a = {a.numpy()!r:.80}")
        a = a[int(nonzero[0]) :] if nonzero[0] else a
    b, a = b / a[0], a / a[0]
    n = max(a.shape[0], b.shape[0])
    order = n - 1
    if order == 0:
        return _creation.zeros((0,), dtype=a.dtype, backend=a.backend)
    a, b = (_shape.pad(c, [(0, n - c.shape[0])]) for c in (a, b))
    # zi = companion(a)^T zi + B: (I - companion(a)^T) has ones on the diagonal, -1 above it and a[1:] first.
    shift = _creation.tensor((np.eye(order) - np.eye(order, k=1)).astype(a.dtype), backend=a.backend)
    first = _creation.tensor(np.eye(1, order).astype(a.dtype), backend=a.backend)
    return _linalg.solve(shift + _shape.reshape(a[1:], (order, 1)) * first, b[1:] - a[1:] * b[0])


def _extended(x, ax: int, padtype, padlen, taps: int, who: str) -> tuple:
    """``(edge, x extended by edge samples at each end of axis ax)`` as SciPy's filtfilt pads: by default
    ``3 * taps``; ``"odd"`` reflects about the end points, ``"even"`` mirrors, ``"constant"`` repeats them."""
    if padtype not in ("even", "odd", "constant", None):
        raise ValueError(f"{who}: padtype must be 'even', 'odd', 'constant' or None, got {padtype!r}")
    edge = 0 if padtype is None else 3 * taps if padlen is None else _count(padlen, "padlen", who, 0)
    n = x.shape[ax]
    if n is not None and n <= edge:
        raise ValueError(f"{who}: the length of x along axis {ax} ({n}) must be greater than padlen, which is "
                         f"{edge} (x shape {tuple(x.shape)}, {x.dtype})")  # fmt: skip
    if edge == 0:
        return 0, x
    moved = _array.moveaxis(x, ax, -1)
    first, last = moved[..., :1], moved[..., -1:]
    if padtype == "constant":
        left = first + _math.zeros_like(moved[..., :edge])
        right = last + _math.zeros_like(moved[..., :edge])
    else:
        left, right = _array.flip(moved[..., 1 : edge + 1], -1), _array.flip(moved[..., -edge - 1 : -1], -1)
        if padtype == "odd":
            left, right = 2 * first - left, 2 * last - right
    return edge, _array.moveaxis(_shape.concat([left, moved, right], -1), -1, ax)


def _zero_phase(run, x, ax: int, edge: int) -> Tensor:
    """SciPy's forward-backward filtering: ``run(signal, start)`` filters along the last axis from the steady
    state of a step of height ``start``; the result is cut by ``edge`` samples at each end."""
    moved = _array.moveaxis(x, ax, -1)
    forward = run(moved, moved[..., :1])
    backward = _array.flip(run(_array.flip(forward, -1), forward[..., -1:]), -1)
    return _array.moveaxis(backward[..., edge : -edge if edge else None], -1, ax)


def filtfilt(b, a, x, axis: int = -1, padtype="odd", padlen: int | None = None, method: str = "pad",
             irlen=None) -> Tensor:  # fmt: skip
    """Zero-phase filtering (``scipy.signal.filtfilt``): :func:`lfilter` forwards and then backwards over ``x``
    extended at both ends by ``padlen`` samples (default ``3 * max(len(a), len(b))``; ``padtype`` ``"odd"``,
    ``"even"``, ``"constant"`` or None), each pass started from :func:`lfilter_zi` scaled by its first sample.
    ``method="gust"``: Gustafsson's initial conditions instead (no padding; ``padtype`` and ``padlen`` unused), the
    states at both ends that make forward-backward equal backward-forward in the least-squares sense, found from
    the filter's responses over ``irlen`` samples at each end (all of them by default).  A complex ``x`` is
    filtered as its real and imaginary parts (complex coefficients are refused).  Differentiable in ``b``, ``a``
    and ``x``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.signal.filtfilt([0.5, 0.5], [1.0], np.arange(8.0)).numpy().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    who = "filtfilt"
    if method not in ("pad", "gust"):
        raise ValueError(f"{who}: method must be 'pad' or 'gust', got {method!r}")
    x = as_tensor(x)
    if _is_complex(x):
        return _by_parts(lambda x, _: filtfilt(b, a, x, axis, padtype, padlen, method, irlen), x)
    constant = _is_constant(b) and _is_constant(a)
    given = b, a
    b, a, x = _filter_inputs(who, b, a, x)
    b, a = _coefficients(b, "b", who), _denominator(a, who)
    ax = _axis(axis, x, who, "x")
    if method == "gust":
        irlen = None if irlen is None else _count(irlen, "irlen", who, 0)
        return _array.moveaxis(_gustafsson(b, a, _array.moveaxis(x, ax, -1), irlen, who), -1, ax)
    edge, ext = _extended(x, ax, padtype, padlen, max(a.shape[0], b.shape[0]), who)
    length = ext.shape[ax]
    known = [_known_values(v, t) for v, t in zip(given, (b, a))] if constant and length else [None]
    if any(v is None for v in known):
        zi = lfilter_zi(b, a)
        return _zero_phase(lambda signal, start: _lfilter_last(b, a, signal, zi * start)[0], ext, ax, edge)
    # constant coefficients (no gradient reaches them): each pass is the filter from rest plus the start times
    # the response to the steady state lfilter_zi, both known here, computed once in NumPy
    response = _creation.tensor(
        _state_response(*(np.ravel(v).astype(b.dtype) for v in known), length), backend=b.backend
    )
    return _zero_phase(lambda signal, start: _lfilter_last(b, a, signal) + start * response, ext, ax, edge)


def _state_response(b, a, length: int) -> np.ndarray:
    """The output of ``lfilter(b, a, zeros(length), zi=lfilter_zi(b, a))``, in NumPy (``a[0] != 0``): the
    recursion run over the steady state's samples."""
    n = max(a.shape[0], b.shape[0])
    b, a = np.pad(b / a[0], (0, n - b.shape[0])), np.pad(a / a[0], (0, n - a.shape[0]))
    order = n - 1
    if order == 0:
        return np.zeros(length, b.dtype)
    matrix = np.eye(order) - np.eye(order, k=1)
    matrix[:, 0] += a[1:]
    zi = np.linalg.solve(matrix, b[1:] - a[1:] * b[0])
    drive = np.zeros(length, b.dtype)
    drive[: min(order, length)] = zi[:length]
    return _iir._all_pole_numpy(a.astype(b.dtype), drive)


def _gustafsson(b, a, x, irlen, who: str) -> Tensor:
    """SciPy's ``filtfilt(method="gust")`` along the last axis of ``x``: the forward-backward filter whose initial
    states at both ends make it equal the backward-forward one in the least-squares sense (Gustafsson, 1996):
    ``y_fb + W c`` with ``c = pinv(M) (y_bf - y_fb)``, ``M`` and ``W`` built from the filter's responses to unit
    initial states over ``irlen`` samples at each end (all of them when ``irlen`` is None or ``n <= 2 irlen``)."""
    order = max(a.shape[0], b.shape[0]) - 1
    if order == 0:
        return x * _math.square(b[0] / a[0])
    n = x.shape[-1]
    if n is None:
        raise ValueError(f"{who}: method='gust' needs the signal's length, unknown here (x shape {tuple(x.shape)})")
    m = n if irlen is None or n <= 2 * irlen else irlen
    unit = _creation.tensor(np.eye(1, order).ravel().astype(x.dtype), backend=x.backend)
    response = _lfilter_last(b, a, _creation.zeros((m,), dtype=x.dtype, backend=x.backend), unit)[0]
    observe = _shape.stack(
        [_shape.pad(response[: max(m - k, 0)], [(min(k, m), 0)]) for k in range(order)], -1
    )  # (m, order): column k the response delayed by k samples
    observe_r = _array.flip(observe, 0)
    fb_of_state = _shape.transpose(_lfilter_last(b, a, _shape.transpose(observe_r)))  # (m, order)
    fb_of_state_r = _array.flip(fb_of_state, 0)

    def blocks(left, right):
        if m == n:
            return _shape.concat([left, right], 1)
        zeros = _math.zeros_like(left)
        return _shape.concat([_shape.concat([left, zeros], 1), _shape.concat([zeros, right], 1)], 0)

    matrix = blocks(fb_of_state_r - observe, observe_r - fb_of_state)
    weights = blocks(fb_of_state_r, observe_r)

    def run(signal):
        return _lfilter_last(b, a, signal)

    y_fb = _array.flip(run(_array.flip(run(x), -1)), -1)
    y_bf = run(_array.flip(run(_array.flip(x, -1)), -1))
    delta = y_bf - y_fb
    if m != n:
        delta = _shape.concat([delta[..., :m], delta[..., n - m :]], -1)
    states = delta @ _shape.transpose(_linalg.pinv(matrix))  # (..., 2 order)
    correction = states @ _shape.transpose(weights)
    if m != n:
        lead = [(0, 0)] * (x.ndim - 1)
        correction = _shape.pad(correction[..., :m], lead + [(0, n - m)]) + _shape.pad(
            correction[..., m:], lead + [(n - m, 0)]
        )
    return y_fb + correction


def _sections(sos, who: str) -> Tensor:
    """``sos`` checked: ``(n_sections, 6)`` (one section may be ``(6,)``, as SciPy's ``atleast_2d`` reads it),
    each row ``b0 b1 b2 a0 a1 a2`` with ``a0 == 1`` (SciPy's)."""
    sos = _shape.reshape(sos, (1, 6)) if sos.ndim == 1 and sos.shape[0] == 6 else sos
    if sos.ndim != 2 or sos.shape[1] != 6 or sos.shape[0] in (None, 0):
        raise ValueError(f"{who}: sos must have shape (n_sections, 6), n_sections known and not 0, got "
                         f"{tuple(sos.shape)} ({sos.dtype})")  # fmt: skip
    if not sos.is_symbolic and not np.all(sos.numpy()[:, 3] == 1):
        raise ValueError(f"{who}: sos[:, 3] must be all ones, got {sos.numpy()[:, 3]!r:.80}")
    return sos


def _sosfilt_last(sos, x, zi=None):
    """:func:`sosfilt` along the last axis of ``x``; ``zi`` ``(n_sections, ..., 2)``.  From rest one op,
    ``SosFilter``; with a state (and so the final state) :func:`lfilter` once per section."""
    if zi is None:
        return _iir.sos_filter(sos, x)
    states = []
    for section in range(sos.shape[0]):
        b, a = sos[section, :3], sos[section, 3:]
        if zi is None:
            x = _lfilter_last(b, a, x)
        else:
            x, state = _lfilter_last(b, a, x, zi[section])
            states.append(state)
    return x if zi is None else (x, _shape.stack(states))


def sosfilt(sos, x, axis: int = -1, zi=None):
    """Filter ``x`` along ``axis`` with the cascade of second-order sections ``sos`` (``(n_sections, 6)``, rows
    ``b0 b1 b2 1 a1 a2``; ``scipy.signal.sosfilt``): :func:`lfilter` once per section.  ``zi`` (shape
    ``(n_sections, ...)`` with ``x``'s shape and 2 along ``axis``; see :func:`sosfilt_zi`) gives ``(y, zf)``.
    A complex ``x`` (or ``zi``) is filtered as its real and imaginary parts (a complex ``sos`` is refused).
    Differentiable in ``sos``, ``x`` and ``zi``.

    >>> import numpy as np, tensorlib as tl
    >>> sos = np.array([[1.0, 0.0, 0.0, 1.0, -0.5, 0.0]])
    >>> tl.signal.sosfilt(sos, np.ones(3)).numpy().tolist()
    [1.0, 1.5, 1.75]
    """
    who = "sosfilt"
    x, zi = as_tensors(x, zi)
    if _is_complex(x, zi):
        return _by_parts(lambda x, zi: sosfilt(sos, x, axis, zi), x, zi)
    sos, x, zi = _filter_inputs(who, sos, x, zi)
    sos = _sections(sos, who)
    ax = _axis(axis, x, who, "x")
    signal = _array.moveaxis(x, ax, -1)
    if zi is None:
        return _array.moveaxis(_sosfilt_last(sos, signal), -1, ax)
    if zi.ndim != x.ndim + 1 or zi.shape[0] != sos.shape[0]:
        raise ValueError(f"{who}: zi must have shape ({sos.shape[0]}, ...) with x's shape and 2 along axis {ax} "
                         f"(x shape {tuple(x.shape)}), got {tuple(zi.shape)} ({zi.dtype})")  # fmt: skip
    states = _array.moveaxis(zi, ax + 1, -1)
    _state(zi[0], x, ax, 2, who, "zi[section]")
    y, zf = _sosfilt_last(sos, signal, states)
    return _array.moveaxis(y, -1, ax), _array.moveaxis(zf, -1, ax + 1)


def sosfilt_zi(sos) -> Tensor:
    """The initial states of :func:`sosfilt` for the steady state of its step response (``scipy.signal.sosfilt_zi``):
    ``(n_sections, 2)``, each section's :func:`lfilter_zi` times the DC gain of the sections before it.

    >>> import numpy as np, tensorlib as tl
    >>> tl.signal.sosfilt_zi(np.array([[1.0, 1.0, 0.0, 1.0, -0.5, 0.0]])).numpy().tolist()
    [[3.0, 0.0]]
    """
    who = "sosfilt_zi"
    (sos,) = _filter_inputs(who, sos)
    sos = _sections(sos, who)
    states, scale = [], None
    for section in range(sos.shape[0]):
        b, a = sos[section, :3], sos[section, 3:]
        zi = lfilter_zi(b, a)
        states.append(zi if scale is None else scale * zi)
        gain = _reduce.sum(b) / _reduce.sum(a)
        scale = gain if scale is None else scale * gain
    return _shape.stack(states)


def _sosfilt_zi_numpy(values, dtype) -> np.ndarray:
    """:func:`sosfilt_zi` of known ``values`` (``(n_sections, 6)``, ``a0 == 1``) in NumPy: per section the
    :func:`lfilter_zi` system ``(I - companion(a)^T) zi = b[1:] - a[1:] b[0]``, scaled by the DC gain before it."""
    values = np.asarray(values, dtype=np.float64).reshape(-1, 6)
    states, scale = [], 1.0
    for b, a in zip(values[:, :3], values[:, 3:]):
        b, a = b / a[0], a / a[0]
        matrix = np.eye(2) - np.eye(2, k=1)
        matrix[:, 0] += a[1:]
        states.append(scale * np.linalg.solve(matrix, b[1:] - a[1:] * b[0]))
        scale = scale * b.sum() / a.sum()
    return np.asarray(states).astype(dtype)


def sosfiltfilt(sos, x, axis: int = -1, padtype="odd", padlen: int | None = None) -> Tensor:
    """Zero-phase filtering with second-order sections (``scipy.signal.sosfiltfilt``): as :func:`filtfilt`, the
    default ``padlen`` ``3 * (2 n_sections + 1 - z)``, ``z`` the fewer of the sections with ``b2 == 0`` and with
    ``a2 == 0`` (SciPy's; when ``sos`` is traced its values are unknown: give ``padlen``).  A complex ``x`` is
    filtered as its real and imaginary parts.  Differentiable in ``sos`` and ``x``.

    >>> import numpy as np, tensorlib as tl
    >>> sos = np.array([[0.5, 0.5, 0.0, 1.0, 0.0, 0.0]])
    >>> tl.signal.sosfiltfilt(sos, np.arange(8.0)).numpy().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    who = "sosfiltfilt"
    x = as_tensor(x)
    if _is_complex(x):
        return _by_parts(lambda x, _: sosfiltfilt(sos, x, axis, padtype, padlen), x)
    given = sos
    sos, x = _filter_inputs(who, sos, x)
    sos = _sections(sos, who)
    ax = _axis(axis, x, who, "x")
    taps = 2 * sos.shape[0] + 1
    if padtype is not None and padlen is None:
        values = _known_values(given, sos)
        if values is None:
            raise ValueError(f"{who}: the default padlen depends on sos's values (its zero coefficients), "
                             f"unknown when traced; give padlen (sos shape {tuple(sos.shape)}, {sos.dtype})")  # fmt: skip
        values = np.reshape(values, (-1, 6))
        taps -= int(min(np.sum(values[:, 2] == 0), np.sum(values[:, 5] == 0)))
    edge, ext = _extended(x, ax, padtype, padlen, taps, who)
    if not _is_constant(given):
        zi = sosfilt_zi(sos)  # (n_sections, 2): each start broadcasts as (n_sections, ..., 2)
    else:  # a constant (no gradient reaches it): its steady states in NumPy, not ~25 ops a section
        zi = _creation.tensor(_sosfilt_zi_numpy(_known_values(given, sos), sos.dtype), backend=sos.backend)
    zi = _shape.reshape(zi, (zi.shape[0],) + (1,) * (x.ndim - 1) + (2,))
    # each pass one op, SosFilterFrom (the states broadcast to the signal's leading axes)
    return _zero_phase(lambda signal, start: _iir.sos_filter(sos, signal, zi * start), ext, ax, edge)


# ---------------------------------------------------------------- resampling (scipy.signal's)
def _resample_window(window, n: int, real, backend, who: str):
    """scipy.signal.resample's spectral window of ``n`` bins (FFT order): None, a function of
    ``fftfreq(n)``, the values, or a window name (``get_window``'s periodic window, centred by ``fftshift``)."""
    if window is None:
        return None
    if callable(window):
        w = as_tensor(window(np.fft.fftfreq(n)))
    elif isinstance(window, (str, tuple)):
        w = _fft.fftshift(_named_window(window, n, real, who))
    else:
        w = as_tensor(window)
    if tuple(w.shape) != (n,):
        raise ValueError(f"{who}: the window must have one value per frequency bin, {n}, got shape {tuple(w.shape)}")
    return w


def resample(x, num: int, t=None, axis: int = 0, window=None, domain: str = "time"):
    """Resample ``x`` to ``num`` samples along ``axis`` by the Fourier method (``scipy.signal.resample``): the
    spectrum cut (or zero-padded) to ``num`` bins, the unpaired Nyquist bin of an even length split or united as
    SciPy does, and scaled by ``num / len``.  ``window`` (None by default) weighs the spectrum first;
    ``domain="freq"`` takes ``x`` as a spectrum already (the result is then complex).  With ``t``, the sample
    times, the result is ``(resampled, new times)``.  Real ``x`` gives real results (float32 stays float32,
    integers give float64).  Differentiable in ``x`` (and a window tensor).

    >>> import numpy as np, tensorlib as tl
    >>> tl.signal.resample(np.cos(np.arange(4) * np.pi / 2), 8).numpy().round(6).tolist()
    [1.0, 0.707107, 0.0, -0.707107, -1.0, -0.707107, 0.0, 0.707107]
    """
    who = "resample"
    if domain not in ("time", "freq"):
        raise ValueError(f"{who}: domain must be 'time' or 'freq', got {domain!r}")
    x = as_tensor(x)
    num = _count(num, "num", who)
    ax = _axis(axis, x, who, "x", known=True)
    if x.dtype.kind in "biu":
        x = _math.cast(x, _dt.float64)
    signal = _array.moveaxis(x, ax, -1)
    n = signal.shape[-1]
    scale = num / n  # 1 / SciPy's s_fac
    m = min(num, n)
    half = m // 2 + 1
    real = _dt.real_dtype(x.dtype) if x.dtype.kind in "fc" else _dt.float64
    w = _resample_window(window, n, real, x.backend, who)
    paired = m % 2 == 0 and num != n  # the bin m // 2 stands for two frequencies in one length, one in the other
    if domain == "time" and x.dtype.kind != "c":
        spectrum = _fft.rfft(signal, axis=-1)
        if w is not None:  # the window folded onto the half spectrum: (W[l] + W[-l]) / 2
            bins = spectrum.shape[-1]
            folded = _shape.concat([w[:1], (w[1:bins] + _array.flip(w[n - bins + 1 :], 0)) / 2], 0)
            spectrum = spectrum * _math.cast(folded, spectrum.dtype)
        spectrum = spectrum[..., :half]
        if paired:
            weight = np.ones(half)
            weight[m // 2] = 2.0 if num < n else 0.5
            spectrum = spectrum * _creation.tensor(weight.astype(real), backend=x.backend)
        out = _fft.irfft(spectrum * scale, n=num, axis=-1)
    else:
        spectrum = _fft.fft(signal, axis=-1) if domain == "time" else signal
        if spectrum.dtype.kind != "c":
            spectrum = _math.cast(spectrum, _dt.complex_dtype(spectrum.dtype))
        if w is not None:
            spectrum = spectrum * _math.cast(w, spectrum.dtype)
        low, high = spectrum[..., :half], spectrum[..., n - (m - half) :] if m > half else None
        zeros = _math.zeros_like(spectrum[..., :1])
        if paired and num < n:  # down: the pair of bins m // 2 and -m // 2 becomes one
            low = _shape.concat([low[..., :-1], low[..., -1:] + spectrum[..., n - m // 2 : n - m // 2 + 1]], -1)
            pieces = [low, high]
        elif paired:  # up: bin m // 2 split in two, at m // 2 and num - m // 2
            split = low[..., -1:] / 2
            gap = _shape.tile(zeros, [1] * (x.ndim - 1) + [num - m - 1])
            pieces = [low[..., :-1], split, gap, split, high]
        else:
            pieces = [low, _shape.tile(zeros, [1] * (x.ndim - 1) + [num - m]), high]
        out = _fft.ifft(_shape.concat([p for p in pieces if p is not None], -1) * scale, n=num, axis=-1)
    out = _array.moveaxis(out, -1, ax)
    if t is None:
        return out
    t = as_tensor(t)
    return out, t[0] + (t[1] - t[0]) * (n / num) * _creation.tensor(np.arange(num, dtype=np.float64))


def _scipy_signal(who: str):
    """``scipy.signal`` for the filter designs (``firwin``, ``cheby1``) that :func:`resample_poly` and
    :func:`decimate` use."""
    from .ops._optional import scipy_module

    return scipy_module("signal", f"tl.signal.{who} designs its filter with SciPy: pip install scipy")


_UPFIRDN_MODES = ("constant", "symmetric", "reflect", "edge", "wrap")
_BACKGROUNDS = ("mean", "median", "minimum", "maximum")


def _upfirdn(h, x, up: int, down: int, start: int, stop: int, mode: str = "constant", cval=0.0) -> Tensor:
    """Samples ``start <= k < stop`` of ``scipy.signal.upfirdn(h, x, up, down, mode=mode, cval=cval)`` along the
    last axis of ``x``: ``x`` extended at both ends as ``numpy.pad(mode)`` does, ``up - 1`` zeros put after each
    sample, convolved with ``h`` and every ``down``-th sample kept."""
    taps, n = h.shape[0], x.shape[-1]
    edge = -(-(taps - 1) // up)  # extended samples the convolution reaches before the start
    after = max(0, -(-(stop * down + 1) // up) - n)  # and past the end
    widths = [(0, 0)] * (x.ndim - 1) + [(edge, after)]
    x = _shape.pad(x, widths, constant_values=cval) if mode == "constant" else _shape.pad(x, widths, mode=mode)
    length = x.shape[-1]
    if up > 1:  # up - 1 zeros after each sample
        x = _shape.reshape(_shape.pad(x[..., None], [(0, 0)] * x.ndim + [(0, up - 1)]), (*x.shape[:-1], length * up))
    if x.dtype.kind == "c":  # real taps filter the real and imaginary parts apart
        if h.dtype.kind == "c":
            raise TypeError(f"complex filter taps are not supported, got {h.dtype} (shape {tuple(h.shape)})")
        h = h if h.dtype == _dt.real_dtype(x.dtype) else _math.cast(h, _dt.real_dtype(x.dtype))
        full = _elementwise.complex_(_fir(h, _elementwise.real(x)), _fir(h, _elementwise.imag(x)))
    else:
        full = _fir(h, x)
    first = start * down + edge * up
    return full[..., first : first + (stop - start - 1) * down + 1 : down]


def resample_poly(x, up: int, down: int, axis: int = 0, window=("kaiser", 5.0), padtype: str = "constant",
                  cval=None) -> Tensor:  # fmt: skip
    """Resample ``x`` along ``axis`` by the rational factor ``up / down`` with a polyphase FIR filter
    (``scipy.signal.resample_poly``): ``ceil(n up / down)`` samples of ``x`` upsampled by ``up`` (zeros between),
    low-pass filtered with a zero-phase FIR of ``2 * 10 * max(up, down) + 1`` taps (SciPy's ``firwin`` with
    ``window``, designed by SciPy) or with the taps given as ``window`` (a 1-D array or tensor), times ``up``, and
    downsampled by ``down``.  ``padtype`` says what lies beyond the ends: ``"constant"`` (``cval``, default 0),
    ``"symmetric"``, ``"reflect"``, ``"edge"``, ``"wrap"``, or ``"mean"``, ``"median"``, ``"minimum"``,
    ``"maximum"`` (the signal's statistic, subtracted before and added after).  Float32 stays float32 with a
    designed filter; integers give float64.  Differentiable in ``x`` and in taps given as a tensor.

    >>> import numpy as np, tensorlib as tl
    >>> y = tl.signal.resample_poly(np.ones(40), 3, 2)
    >>> y.shape, bool(np.allclose(y.numpy()[15:45], 1.0, atol=1e-3))
    ((60,), True)
    """
    who = "resample_poly"
    up, down = (_count(v, name, who) for v, name in ((up, "up"), (down, "down")))
    if cval is not None and padtype != "constant":
        raise ValueError(f"{who}: cval has no effect when padtype is {padtype!r}")
    if padtype not in _UPFIRDN_MODES + _BACKGROUNDS:
        raise ValueError(f"{who}: padtype must be one of {', '.join(_BACKGROUNDS + _UPFIRDN_MODES)}, got {padtype!r}")
    x = as_tensor(x)
    ax = _axis(axis, x, who, "x", known=True)
    g = math.gcd(up, down)
    up, down = up // g, down // g
    if up == down == 1:
        return x  # SciPy returns a copy of x, dtype and all
    if isinstance(window, (str, tuple)):
        real = x.dtype if x.dtype.kind in "fc" else _dt.float64
        half = 10 * max(up, down)
        taps = _scipy_signal(who).firwin(2 * half + 1, 1.0 / max(up, down), window=window)
        h = _creation.tensor(taps.astype(_dt.real_dtype(real) if real.kind == "c" else real), backend=x.backend)
    else:
        h = as_tensor(window)
        if h.ndim != 1 or h.shape[0] in (None, 0):
            raise ValueError(f"{who}: window must be a 1-D array of filter taps, got shape {tuple(h.shape)}")
        half = (h.shape[0] - 1) // 2
    if x.dtype.kind not in "fc" or x.dtype == _dt.float16:
        x = _math.cast(x, _dt.float64 if x.dtype.kind not in "fc" else _dt.float32)
    if h.dtype.kind == "c":
        raise TypeError(f"{who}: complex filter taps are not supported, got {h.dtype} (shape {tuple(h.shape)})")
    dtype = np.result_type(x.dtype, h.dtype)
    x = x if x.dtype == dtype else _math.cast(x, dtype)
    h = _math.cast(h, _dt.real_dtype(dtype)) if h.dtype != _dt.real_dtype(dtype) else h
    n = x.shape[ax]
    n_out = -(-n * up // down)
    h = h * up
    pre = down - half % down  # zeros before h put the output samples at the filter's centre (SciPy's)
    h = _shape.pad(h, [(pre, 0)])
    first = (half + pre) // down
    signal = _array.moveaxis(x, ax, -1)
    background = None
    if padtype in _BACKGROUNDS:
        reduce = {"mean": _reduce.mean, "median": _array.median, "minimum": _reduce.min, "maximum": _reduce.max}
        background = reduce[padtype](signal, axis=-1, keepdims=True)
        signal = signal - background
    mode = "constant" if padtype in _BACKGROUNDS else padtype
    y = _upfirdn(h, signal, up, down, first, first + n_out, mode, 0.0 if cval is None else cval)
    if background is not None:
        y = y + background
    return _array.moveaxis(y, -1, ax)


def decimate(x, q: int, n: int | None = None, ftype: str = "iir", axis: int = -1, zero_phase: bool = True) -> Tensor:
    """Downsample ``x`` by the integer factor ``q`` along ``axis`` after an anti-aliasing low-pass filter
    (``scipy.signal.decimate``): ``ftype="iir"`` an order ``n`` (8) Chebyshev type I filter (``cheby1(n, 0.05,
    0.8 / q)``, second-order sections), run by :func:`sosfiltfilt` (``zero_phase``) or :func:`sosfilt`;
    ``ftype="fir"`` a Hamming-window FIR of ``n + 1`` taps (``n`` default ``20 q``), by :func:`resample_poly`
    (``zero_phase``) or causally; then every ``q``-th sample.  The filters are designed by SciPy.  Integers and
    float16 give float64.  Differentiable in ``x``.

    >>> import numpy as np, tensorlib as tl
    >>> y = tl.signal.decimate(np.cos(np.arange(80) * 0.1), 4)
    >>> y.shape, bool(np.allclose(y.numpy()[2:-2], np.cos(np.arange(20) * 0.4)[2:-2], atol=1e-2))
    ((20,), True)
    """
    who = "decimate"
    q = _count(q, "q", who)
    n = None if n is None else _count(n, "n", who)
    if ftype not in ("iir", "fir"):
        raise ValueError(f"{who}: ftype must be 'iir' or 'fir' (SciPy's dlti systems are not supported), got "
                         f"{ftype!r}")  # fmt: skip
    x = as_tensor(x)
    ax = _axis(axis, x, who, "x", known=True)
    if x.dtype.kind not in "fc" or x.dtype == _dt.float16:
        x = _math.cast(x, _dt.float64)
    real = _dt.real_dtype(x.dtype)
    design = _scipy_signal(who)
    index = [slice(None)] * x.ndim
    if ftype == "fir":
        taps = _creation.tensor(design.firwin((20 * q if n is None else n) + 1, 1.0 / q, window="hamming")
                                .astype(real), backend=x.backend)  # fmt: skip
        if zero_phase:
            return resample_poly(x, 1, q, axis=ax, window=taps)
        signal = _array.moveaxis(x, ax, -1)
        length = signal.shape[-1]
        y = _upfirdn(taps, signal, 1, q, 0, -(-length // q))
        return _array.moveaxis(y, -1, ax)
    sos = design.cheby1(8 if n is None else n, 0.05, 0.8 / q, output="sos").astype(real)
    y = sosfiltfilt(sos, x, axis=ax) if zero_phase else sosfilt(sos, x, axis=ax)
    index[ax] = slice(None, None, q)
    return y[tuple(index)]


def spectrogram(x, fs=1.0, window=("tukey", 0.25), nperseg: int | None = None, noverlap: int | None = None,
                nfft: int | None = None, detrend="constant", return_onesided: bool = True, scaling: str = "density",
                axis: int = -1, mode: str = "psd") -> tuple:  # fmt: skip
    """A spectrogram (``scipy.signal.spectrogram``): ``(frequencies, times, Sxx)``, the segments of :func:`welch`
    (window ``("tukey", 0.25)``, ``noverlap`` ``nperseg // 8`` by default) kept apart instead of averaged:
    ``Sxx`` has ``x``'s shape with the frequencies along ``axis`` and the segments' times (their centres, in
    units of ``1 / fs``) as a new last axis.  ``mode``: ``"psd"`` (the power, as :func:`welch`'s), ``"complex"``
    (the spectra times the square root of the scale), ``"magnitude"`` (their absolute values), ``"angle"`` or
    ``"phase"`` (the angle unwrapped along the frequencies).  Differentiable in ``x``, a window tensor and ``fs``.

    >>> import numpy as np, tensorlib as tl
    >>> f, t, sxx = tl.signal.spectrogram(np.sin(np.arange(64) * np.pi / 2), fs=4.0, nperseg=16)
    >>> sxx.shape, t.numpy().tolist()[:3], f.numpy()[np.argmax(sxx.numpy()[:, 0])].item()
    ((9, 4), [2.0, 5.5, 9.0], 1.0)
    """
    who = "spectrogram"
    if mode not in ("psd", "complex", "magnitude", "angle", "phase"):
        raise ValueError(f"{who}: mode must be 'psd', 'complex', 'magnitude', 'angle' or 'phase', got {mode!r}")
    x = as_tensor(x)
    ax = _axis(axis, x, who, "x", known=True)
    if 0 in x.shape:  # SciPy's answer for an empty input
        return tuple(_creation.zeros(x.shape, dtype=_dt.float64) for _ in range(3))
    freqs, spectra, scale, onesided, nfft, nperseg, noverlap = _segment_spectra(
        x, ax, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, who, overlap_divisor=8
    )
    if mode == "psd":
        result = _power(spectra, scale, onesided, nfft)
    else:
        result = spectra * _math.cast(_math.sqrt(scale), spectra.dtype)
        if mode == "magnitude":
            result = _math.abs(result)
        elif mode in ("angle", "phase"):
            result = _elementwise.angle(result)
            if mode == "phase":
                result = _numpy_more.unwrap(result, axis=-1)
    n = x.shape[ax]
    times = np.arange(nperseg / 2, n - nperseg / 2 + 1, nperseg - noverlap)
    times = _creation.tensor(times) / fs if isinstance(fs, Tensor) else _creation.tensor(times / fs)
    return freqs, times, _array.moveaxis(result, -1, ax)


# ---------------------------------------------------------------- PyTorch's stft
_TORCH_PADS = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}


def torch_stft(input, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
               center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
               onesided: bool | None = None, return_complex: bool | None = None) -> Tensor:  # fmt: skip
    """``torch.stft``'s conventions (:func:`stft` follows TensorFlow's): ``(n_fft // 2 + 1 or n_fft, frames)``
    per signal of ``input`` (``(L,)`` or ``(B, L)``), frames of ``n_fft`` samples every ``hop_length``
    (``n_fft // 4``), the signal padded by ``n_fft // 2`` at both ends with ``pad_mode`` (``"reflect"``,
    ``"constant"``, ``"replicate"``, ``"circular"``) when ``center``; ``window`` (``win_length`` values, default
    ``n_fft``; None: ones) centred in ``n_fft`` zeros; ``normalized`` scales by ``n_fft ** -0.5``; ``onesided``
    (default for real input and window) keeps the nonnegative frequencies.  As PyTorch, ``return_complex`` must
    be given for real input: True gives complex, False the real and imaginary parts in a last axis of 2.
    Unlike PyTorch's, which refuses them, an integer or bool input or window computes in float64 (complex128
    spectra), as :func:`stft` and NumPy's FFTs do.  Differentiable in ``input`` and ``window``.

    >>> import numpy as np, tensorlib as tl
    >>> spec = tl.signal.torch_stft(np.ones(16), 8, hop_length=4, window=tl.signal.hann_window(8, dtype=tl.float64),
    ...                             return_complex=True)
    >>> spec.shape, spec.numpy()[0].real.round(6).tolist()
    ((5, 5), [4.0, 4.0, 4.0, 4.0, 4.0])
    """
    who = "torch_stft"
    x = as_tensor(input)
    if x.ndim not in (1, 2):
        raise ValueError(f"{who}: expected a 1D or 2D input, got shape {tuple(x.shape)} ({x.dtype})")
    x = _math.cast(x, _dt.float64) if x.dtype.kind in "biu" else x
    n_fft = _count(n_fft, "n_fft", who)
    hop = _count(n_fft // 4 if hop_length is None else hop_length, "hop_length", who)  # torch: n_fft < 4 fails
    win_length = n_fft if win_length is None else _count(win_length, "win_length", who)
    if win_length > n_fft:
        raise ValueError(f"{who}: expected 0 < win_length <= n_fft, got win_length={win_length}, n_fft={n_fft}")
    if pad_mode not in _TORCH_PADS:
        raise ValueError(f"{who}: pad_mode must be one of {sorted(_TORCH_PADS)}, got {pad_mode!r}")
    if window is None:
        window = _creation.ones((win_length,), dtype=_dt.real_dtype(x.dtype))
    window = as_tensor(window)
    window = _math.cast(window, _dt.float64) if window.dtype.kind in "biu" else window
    if tuple(window.shape) != (win_length,):
        raise ValueError(f"{who}: expected a 1D window tensor of size equal to win_length={win_length}, got "
                         f"shape {tuple(window.shape)}")  # fmt: skip
    complex_input = x.dtype.kind == "c" or window.dtype.kind == "c"
    onesided = not complex_input if onesided is None else bool(onesided)
    if onesided and complex_input:
        raise ValueError(f"{who}: cannot have onesided output if the input or the window is complex ({x.dtype})")
    if return_complex is None:
        if not complex_input:
            raise ValueError(f"{who}: stft requires the return_complex parameter be given for real inputs, and "
                             "will further require that return_complex=True in a future PyTorch release")  # fmt: skip
        return_complex = True
    dtype = np.result_type(x.dtype, window.dtype)
    x, window = (t if t.dtype == dtype else _math.cast(t, dtype) for t in (x, window))
    if win_length < n_fft:  # the window centred in n_fft samples
        left = (n_fft - win_length) // 2
        window = _shape.pad(window, [(left, n_fft - win_length - left)])
    if center:
        x = _shape.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=_TORCH_PADS[pad_mode])
    n = x.shape[-1]
    if n is not None and n < n_fft:
        raise ValueError(f"{who}: expected 0 < n_fft <= {n} (the padded signal's length), got n_fft={n_fft}")
    frames = frame(x, n_fft, hop, axis=-1) * window  # (..., frames, n_fft)
    spectra = _fft.rfft(frames, axis=-1) if onesided else _fft.fft(frames, axis=-1)
    if normalized:
        spectra = spectra * (1.0 / math.sqrt(n_fft))
    spectra = _array.moveaxis(spectra, -1, -2)  # (..., bins, frames)
    if return_complex:
        return spectra
    return _shape.stack([_elementwise.real(spectra), _elementwise.imag(spectra)], -1)
