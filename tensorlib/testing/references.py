"""Plain NumPy references for the conv and pooling ops (and ``scipy.signal``'s ``fftconvolve``, ``hilbert``,
``welch`` and linear filters), written independently of the kernels.

One copy, used by the kernel tests, the ``tl.nn`` tests and the op catalogue
(``op_db_nn``).  Arguments follow ``tl.nn``: NHWC images, HWIO filters,
``strides``/``dilations``/``ksize`` as an int, a pair or TensorFlow's
``[1, rows, cols, 1]``, and ``padding`` as ``"VALID"``, ``"SAME"`` (TensorFlow's
rule, worked out here: the odd padding cell goes last) or explicit
``((top, bottom), (left, right))``.  Every reference loops over the filter (or
window) taps only; each tap is one shifted, strided view of the padded input,
one cell per output pixel, so the code reads like the definition.  Results are
float64; callers cast them where they compare in another dtype.

>>> import numpy as np
>>> from tensorlib.testing import references
>>> references.same_pads(5, 2, 2, 1)
(0, 1)
>>> references.conv2d(np.arange(16.0).reshape(1, 4, 4, 1), np.ones((2, 2, 1, 1)), 2, "VALID")[0, :, :, 0]
array([[10., 18.],
       [42., 50.]])
>>> references.max_pool(np.arange(16.0).reshape(1, 4, 4, 1), 2, 2, "SAME")[0, :, :, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]


# ---------------------------------------------------------------- geometry
def pair(value) -> Pair:
    """An int, a (rows, cols) pair or ``[1, rows, cols, 1]`` as ``(rows, cols)``."""
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    value = tuple(int(v) for v in value)
    return value[1:3] if len(value) == 4 else value


def same_pads(size: int, k: int, stride: int, dilation: int) -> Pair:
    """TensorFlow's SAME padding of one dimension: ``ceil(size / stride)`` outputs, the odd cell last."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def explicit_pads(in_hw, k_hw, strides, dilations, padding) -> Pads:
    """``padding`` ("VALID", "SAME" or pairs) as explicit ``((top, bottom), (left, right))``."""
    if not isinstance(padding, str):
        return tuple(tuple(int(p) for p in pads) for pads in padding)
    if padding == "VALID":
        return (0, 0), (0, 0)
    return tuple(same_pads(size, k, s, d) for size, k, s, d in zip(in_hw, k_hw, strides, dilations))


def output_hw(in_hw, k_hw, strides, dilations, pads) -> Pair:
    """Output height and width of a window sweep over the padded input."""
    return tuple(
        (size + sum(p) - (k - 1) * d - 1) // s + 1 for size, k, s, d, p in zip(in_hw, k_hw, strides, dilations, pads)
    )


def geometry(in_hw, k_hw, strides, padding, dilations=1):
    strides, dilations = pair(strides), pair(dilations)
    pads = explicit_pads(in_hw, k_hw, strides, dilations, padding)
    return strides, dilations, pads, output_hw(in_hw, k_hw, strides, dilations, pads)


def _pad(x, pads, value=0.0) -> np.ndarray:
    return np.pad(np.asarray(x, np.float64), ((0, 0), pads[0], pads[1], (0, 0)), constant_values=value)


def _unpad(padded, pads, hw) -> np.ndarray:
    return padded[:, pads[0][0] : pads[0][0] + hw[0], pads[1][0] : pads[1][0] + hw[1]]


def tap_views(padded, k_hw, strides, dilations, out_hw) -> Iterator[tuple[Pair, np.ndarray]]:
    """``((i, j), view)`` per tap, row-major: the padded cells tap (i, j) meets, one per output pixel."""
    for i in range(k_hw[0]):
        for j in range(k_hw[1]):
            r, c = i * dilations[0], j * dilations[1]
            yield (
                (i, j),
                padded[
                    :,
                    r : r + (out_hw[0] - 1) * strides[0] + 1 : strides[0],
                    c : c + (out_hw[1] - 1) * strides[1] + 1 : strides[1],
                ],
            )


# ---------------------------------------------------------------- convolution
def conv2d(x, w, strides, padding, dilations=1) -> np.ndarray:
    """``y[n, oh, ow, o] = sum over taps (i, j) and c of x_padded[n, oh*sh + i*dh, ow*sw + j*dw, c] * w[i, j, c, o]``."""
    w = np.asarray(w, np.float64)
    strides, dilations, pads, out_hw = geometry(np.shape(x)[1:3], w.shape[:2], strides, padding, dilations)
    out = np.zeros((np.shape(x)[0], *out_hw, w.shape[3]))
    for (i, j), view in tap_views(_pad(x, pads), w.shape[:2], strides, dilations, out_hw):
        out += view @ w[i, j]
    return out


def conv2d_backprop_input(input_shape, w, dy, strides, padding, dilations=1) -> np.ndarray:
    """The transpose of :func:`conv2d` in x: each tap scatters ``dy @ w[i, j].T`` back to the cells it read.

    ``input_shape``'s batch may be None (then ``dy``'s is used)."""
    w, dy = np.asarray(w, np.float64), np.asarray(dy, np.float64)
    n, h, wd, c = (dy.shape[0], *input_shape[1:])
    strides, dilations, pads, out_hw = geometry((h, wd), w.shape[:2], strides, padding, dilations)
    padded = np.zeros((n, h + sum(pads[0]), wd + sum(pads[1]), c))
    for (i, j), view in tap_views(padded, w.shape[:2], strides, dilations, out_hw):
        view += dy @ w[i, j].T
    return _unpad(padded, pads, (h, wd))


def conv2d_backprop_filter(x, filter_shape, dy, strides, padding, dilations=1) -> np.ndarray:
    """The transpose of :func:`conv2d` in w: ``dw[i, j] = sum over n, pixels of view(i, j)^T dy``."""
    dy = np.asarray(dy, np.float64)
    strides, dilations, pads, out_hw = geometry(np.shape(x)[1:3], filter_shape[:2], strides, padding, dilations)
    dw = np.zeros(filter_shape)
    for (i, j), view in tap_views(_pad(x, pads), filter_shape[:2], strides, dilations, out_hw):
        dw[i, j] = np.einsum("nhwc,nhwo->co", view, dy)
    return dw


# ---------------------------------------------------------------- pooling
def _real_cells(in_hw, k_hw, strides, pads, out_hw) -> np.ndarray:
    """Per output pixel, how many cells of its window are real (not padding): SAME's avg divisor."""
    ones = _pad(np.ones((1, *in_hw, 1)), pads)
    return sum(view for _, view in tap_views(ones, k_hw, strides, (1, 1), out_hw))


def avg_pool(x, ksize, strides, padding) -> np.ndarray:
    """The mean of each window's real cells (padding cells are left out of the divisor)."""
    k = pair(ksize)
    strides, _, pads, out_hw = geometry(np.shape(x)[1:3], k, strides, padding)
    total = sum(view for _, view in tap_views(_pad(x, pads), k, strides, (1, 1), out_hw))
    return total / _real_cells(np.shape(x)[1:3], k, strides, pads, out_hw)


def avg_pool_grad(input_shape, grad, ksize, strides, padding) -> np.ndarray:
    """Each window's gradient shared equally between its real cells; ``input_shape``'s batch may be None."""
    grad = np.asarray(grad, np.float64)
    n, h, w, c = (grad.shape[0], *input_shape[1:])
    k = pair(ksize)
    strides, _, pads, out_hw = geometry((h, w), k, strides, padding)
    share = grad / _real_cells((h, w), k, strides, pads, out_hw)
    padded = np.zeros((n, h + sum(pads[0]), w + sum(pads[1]), c))
    for _, view in tap_views(padded, k, strides, (1, 1), out_hw):
        view += share
    return _unpad(padded, pads, (h, w))


def _first_max_masks(x, ksize, strides, padding):
    """The geometry and, per tap, the windows whose first maximum (row-major) sits at that tap."""
    k = pair(ksize)
    strides, _, pads, out_hw = geometry(np.shape(x)[1:3], k, strides, padding)
    padded = _pad(x, pads, -np.inf)  # a padding cell never wins
    views = [view for _, view in tap_views(padded, k, strides, (1, 1), out_hw)]
    best = np.max(views, axis=0)
    taken = np.zeros(best.shape, bool)
    masks = []
    for view in views:
        hit = (view == best) & ~taken
        taken |= hit
        masks.append(hit)
    return (k, strides, pads, out_hw), best, masks


def max_pool(x, ksize, strides, padding) -> np.ndarray:
    """The maximum of each window (padding cells never win)."""
    return _first_max_masks(x, ksize, strides, padding)[1]


def max_pool_grad(x, grad, ksize, strides, padding) -> np.ndarray:
    """Each window's gradient routed to its first maximum (TensorFlow's CPU kernel)."""
    (k, strides, pads, out_hw), _, masks = _first_max_masks(x, ksize, strides, padding)
    n, h, w, c = np.shape(x)
    padded = np.zeros((n, h + sum(pads[0]), w + sum(pads[1]), c))
    for (_, view), hit in zip(tap_views(padded, k, strides, (1, 1), out_hw), masks):
        view += np.where(hit, grad, 0.0)
    return _unpad(padded, pads, (h, w))


def max_pool_grad_grad(x, grad, ksize, strides, padding) -> np.ndarray:
    """The transpose of :func:`max_pool_grad` in its gradient: ``grad`` (x's shape) read at each first maximum."""
    (k, strides, pads, out_hw), best, masks = _first_max_masks(x, ksize, strides, padding)
    out = np.zeros(best.shape)
    for (_, view), hit in zip(tap_views(_pad(grad, pads), k, strides, (1, 1), out_hw), masks):
        out += np.where(hit, view, 0.0)
    return out


# ---------------------------------------------------------------- batch norm
def batch_norm(x, scale, offset, epsilon) -> np.ndarray:
    """Training-mode batch norm of NHWC ``x`` with the batch's (biased) statistics over (N, H, W)."""
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=(0, 1, 2))
    var = ((x - mean) ** 2).mean(axis=(0, 1, 2))
    return (x - mean) / np.sqrt(var + epsilon) * scale + offset


# ---------------------------------------------------------------- scipy.signal
def fftconvolve(in1, in2, mode: str = "full", axes=None) -> np.ndarray:
    """``scipy.signal.fftconvolve`` by direct summation, one shifted product per tap of ``in2``: SciPy's
    rules (axes of size 1 broadcast, the inputs swapped for ``"valid"`` when ``in2`` is the larger, ``"same"``
    and ``"valid"`` centred, the extra element right) and dtypes (each input float64 if integer, float32 if
    float16; a plain product when no axis is convolved); sums in float64 or complex128.

    >>> fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), "same").tolist()
    [1.0, 2.5, 4.0]
    """
    a, b = np.asarray(in1), np.asarray(in2)
    if a.ndim == 0:
        return a * b
    axes = range(a.ndim) if axes is None else [ax % a.ndim for ax in np.atleast_1d(axes)]
    axes = [ax for ax in axes if a.shape[ax] != 1 and b.shape[ax] != 1]
    if mode == "valid" and not all(a.shape[ax] >= b.shape[ax] for ax in axes):
        a, b = b, a
    if not axes:
        full = a * b
    else:
        read = {"b": np.float64, "i": np.float64, "u": np.float64}  # as SciPy's transforms read each input
        dtype = np.result_type(
            *(read.get(t.dtype.kind, np.float32 if t.dtype == np.float16 else t.dtype) for t in (a, b))
        )
        shape = [a.shape[ax] + b.shape[ax] - 1 if ax in axes else max(a.shape[ax], b.shape[ax]) for ax in range(a.ndim)]
        full = np.zeros(shape, np.complex128 if dtype.kind == "c" else np.float64)
        wide_a, wide_b = a.astype(full.dtype), b.astype(full.dtype)
        for tap in np.ndindex(*(b.shape[ax] for ax in axes)):
            b_index, out_index = [slice(None)] * a.ndim, [slice(None)] * a.ndim
            for ax, j in zip(axes, tap):
                b_index[ax], out_index[ax] = slice(j, j + 1), slice(j, j + a.shape[ax])
            full[tuple(out_index)] += wide_a * wide_b[tuple(b_index)]
        full = full.astype(dtype)
    if mode == "full":
        return full
    if mode == "same":
        new = a.shape
    else:
        new = [a.shape[ax] - b.shape[ax] + 1 if ax in axes else n for ax, n in enumerate(full.shape)]
    return full[tuple(slice((n - k) // 2, (n - k) // 2 + k) for n, k in zip(full.shape, new))]


def hilbert(x, N=None, axis: int = -1) -> np.ndarray:
    """``scipy.signal.hilbert``: the analytic signal, the positive frequencies of ``np.fft.fft(x, N)`` doubled
    and the negative ones zeroed, transformed back.

    >>> hilbert(np.array([1.0, 0.0, -1.0, 0.0])).imag.tolist()
    [0.0, 1.0, 0.0, -1.0]
    """
    spectrum = np.moveaxis(np.fft.fft(x, N, axis=axis), axis, -1)
    n = spectrum.shape[-1]
    h = np.zeros(n)
    h[0] = 1.0
    h[1 : (n + 1) // 2] = 2.0
    if n % 2 == 0:
        h[n // 2] = 1.0
    return np.fft.ifft(np.moveaxis(spectrum * h.astype(spectrum.real.dtype), -1, axis), axis=axis)


def _tukey(m: int, alpha: float) -> np.ndarray:
    """The symmetric Tukey window of ``m`` points: a box whose ends are the halves of a Hann window of
    ``alpha (m - 1) + 1`` points (``alpha >= 1``: Hann, ``<= 0``: a box)."""
    if alpha <= 0 or m == 1:
        return np.ones(m)
    t = np.linspace(0.0, 1.0, m)
    taper = np.minimum(t, 1.0 - t) / (min(alpha, 1.0) / 2.0)  # below 1: inside a taper
    return np.where(taper < 1.0, 0.5 - 0.5 * np.cos(np.pi * np.minimum(taper, 1.0)), 1.0)


def _periodic_window(window, n: int) -> np.ndarray:
    """``scipy.signal.get_window(window, n)``: NumPy's symmetric window of ``n + 1`` points less its last."""
    if not isinstance(window, (str, tuple)):
        return np.asarray(window, np.float64)
    if n == 1:  # SciPy's window of one point
        return np.ones(1)
    if window == "tukey" or isinstance(window, tuple) and window[0] == "tukey":
        return _tukey(n + 1, 0.5 if window == "tukey" else window[1])[:-1]
    if isinstance(window, tuple):  # ("kaiser", beta)
        return np.kaiser(n + 1, window[1])[:-1]
    symmetric = {"hann": np.hanning, "hamming": np.hamming, "blackman": np.blackman, "bartlett": np.bartlett}
    return np.ones(n) if window == "boxcar" else symmetric[window](n + 1)[:-1]


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean") -> tuple:  # fmt: skip
    """``scipy.signal.welch`` by its definition, one frame at a time: ``(frequencies, power)``.

    >>> f, p = welch(np.sin(np.arange(64) * np.pi / 2), fs=4.0, nperseg=16)
    >>> float(f[np.argmax(p)])
    1.0
    """
    x = np.moveaxis(np.asarray(x), axis, -1)
    out = np.float32 if x.dtype in (np.float16, np.float32, np.complex64) else np.float64
    n = x.shape[-1]
    if isinstance(window, (str, tuple)):
        nperseg = min(256 if nperseg is None else nperseg, n)
    win = _periodic_window(window, nperseg if isinstance(window, (str, tuple)) else len(window))
    nperseg, onesided = len(win), return_onesided and not np.iscomplexobj(x)
    nfft = nperseg if nfft is None else nfft
    step = nperseg - (nperseg // 2 if noverlap is None else noverlap)
    powers = []
    for start in range(0, n - nperseg + 1, step):
        segment = x[..., start : start + nperseg].astype(np.complex128 if np.iscomplexobj(x) else np.float64)
        if detrend == "constant":
            segment = segment - segment.mean(axis=-1, keepdims=True)
        elif detrend == "linear":
            t = np.arange(nperseg)
            fit = np.polynomial.polynomial.polyfit(t, np.moveaxis(segment.reshape(-1, nperseg), -1, 0), 1)
            segment = segment - (fit[0][:, None] + fit[1][:, None] * t).reshape(segment.shape)
        spectrum = np.fft.fft(segment * win, nfft)
        powers.append(np.abs(spectrum) ** 2)
    power = np.stack(powers, axis=-2)
    power /= fs * np.sum(win**2) if scaling == "density" else np.sum(win) ** 2
    freqs = np.fft.fftfreq(nfft, 1.0 / fs)
    if onesided:
        half = nfft // 2 + 1
        power = power[..., :half]
        power[..., 1 : half - (nfft % 2 == 0)] *= 2.0
        freqs = np.fft.rfftfreq(nfft, 1.0 / fs)
    if average == "median" and power.shape[-2] > 1:
        count = power.shape[-2]
        bias = 1.0 + sum(1.0 / (2 * k + 1) - 1.0 / (2 * k) for k in range(1, (count - 1) // 2 + 1))
        power = np.median(power, axis=-2) / bias
    else:
        power = power.mean(axis=-2)
    return freqs, np.moveaxis(power, -1, axis).astype(out)


def periodogram(x, fs=1.0, window="boxcar", nfft=None, detrend="constant", return_onesided=True,
                scaling="density", axis=-1) -> tuple:  # fmt: skip
    """``scipy.signal.periodogram``: :func:`welch` with one frame, the signal cropped to a shorter ``nfft``.

    >>> periodogram(np.array([1.0, -1.0, 1.0, -1.0]), scaling="spectrum")[1].tolist()
    [0.0, 0.0, 1.0]
    """
    x = np.moveaxis(np.asarray(x), axis, -1)
    if nfft is not None and nfft < x.shape[-1]:
        x, nfft = x[..., :nfft], None
    n = x.shape[-1]
    window = "boxcar" if window is None else window
    return welch(np.moveaxis(x, -1, axis), fs, window, n, 0, nfft, detrend, return_onesided, scaling, axis)


def lfilter(b, a, x, axis: int = -1, zi=None):
    """``scipy.signal.lfilter`` as SciPy runs it: the transposed direct form II, one sample at a time, the
    coefficients normalized by ``a[0]`` and padded to one length; ``(y, zf)`` when ``zi`` is given.

    >>> lfilter([1.0], [1.0, -0.5], np.ones(3)).tolist()
    [1.0, 1.5, 1.75]
    """
    b, a = np.atleast_1d(np.asarray(b, np.float64)), np.atleast_1d(np.asarray(a, np.float64))
    n = max(len(a), len(b))
    b = np.pad(b, (0, n - len(b))) / a[0]
    a = np.pad(a, (0, n - len(a))) / a[0]
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    state = np.zeros(x.shape[:-1] + (n - 1,))
    if zi is not None:
        state = state + np.moveaxis(np.asarray(zi, np.float64), axis, -1)
    y = np.empty_like(x)
    for t in range(x.shape[-1]):
        y[..., t] = b[0] * x[..., t] + (state[..., 0] if n > 1 else 0.0)
        for i in range(n - 1):
            after = state[..., i + 1] if i + 2 < n else 0.0
            state[..., i] = b[i + 1] * x[..., t] + after - a[i + 1] * y[..., t]
    y = np.moveaxis(y, -1, axis)
    return y if zi is None else (y, np.moveaxis(state, -1, axis))


def lfilter_zi(b, a) -> np.ndarray:
    """``scipy.signal.lfilter_zi`` by the explicit solution SciPy's comments give (no linear solve):
    ``zi[0] = sum(B) / sum(1 + a[1:])``, ``zi[k] = (1 + a[1] + ... + a[k]) zi[0] - (B[0] + ... + B[k-1])``.

    >>> lfilter_zi([1.0, 1.0], [1.0, -0.5]).tolist()
    [3.0]
    """
    b, a = np.atleast_1d(np.asarray(b, np.float64)), np.trim_zeros(np.atleast_1d(np.asarray(a, np.float64)), "f")
    n = max(len(a), len(b))
    b = np.pad(b, (0, n - len(b))) / a[0]
    a = np.pad(a, (0, n - len(a))) / a[0]
    drive = b[1:] - a[1:] * b[0]
    zi = np.zeros(n - 1)
    if n > 1:
        zi[0] = drive.sum() / (1.0 + a[1:].sum())
        for k in range(1, n - 1):
            zi[k] = a[: k + 1].sum() * zi[0] - drive[:k].sum()
    return zi


def _odd_even_constant(x, edge: int, padtype):
    """``x`` (the filtered axis last) extended by ``edge`` samples at each end as SciPy's filtfilt pads."""
    if padtype is None or edge == 0:
        return x
    first, last = x[..., :1], x[..., -1:]
    if padtype == "constant":
        left, right = np.repeat(first, edge, -1), np.repeat(last, edge, -1)
    else:
        left, right = x[..., 1 : edge + 1][..., ::-1], x[..., -edge - 1 : -1][..., ::-1]
        if padtype == "odd":
            left, right = 2 * first - left, 2 * last - right
    return np.concatenate([left, x, right], axis=-1)


def filtfilt(b, a, x, axis: int = -1, padtype="odd", padlen=None):
    """``scipy.signal.filtfilt`` (``method="pad"``) from :func:`lfilter` and :func:`lfilter_zi`.

    >>> filtfilt([0.5, 0.5], [1.0], np.arange(8.0)).round(12).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    taps = max(np.size(a), np.size(b))
    return _zero_phase(lambda s, zi: lfilter(b, a, s, -1, zi), lfilter_zi(b, a), x, axis, padtype, padlen, taps)


def _zero_phase(run, zi, x, axis, padtype, padlen, taps):
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    edge = 0 if padtype is None else 3 * taps if padlen is None else padlen
    ext = _odd_even_constant(x, edge, padtype)
    y = run(ext, zi * ext[..., :1])[0][..., ::-1]
    y = run(y, zi * y[..., :1])[0][..., ::-1]
    return np.moveaxis(y[..., edge : y.shape[-1] - edge], -1, axis)


def sosfilt(sos, x, axis: int = -1, zi=None):
    """``scipy.signal.sosfilt``: :func:`lfilter` once per second-order section.

    >>> sosfilt(np.array([[1.0, 0.0, 0.0, 1.0, -0.5, 0.0]]), np.ones(3)).tolist()
    [1.0, 1.5, 1.75]
    """
    y, states = np.asarray(x, np.float64), []
    for k, section in enumerate(np.asarray(sos, np.float64)):
        if zi is None:
            y = lfilter(section[:3], section[3:], y, axis)
        else:
            y, state = lfilter(section[:3], section[3:], y, axis, np.asarray(zi)[k])
            states.append(state)
    return y if zi is None else (y, np.stack(states))


def sosfilt_zi(sos) -> np.ndarray:
    """``scipy.signal.sosfilt_zi``: each section's :func:`lfilter_zi` times the DC gain of those before it.

    >>> sosfilt_zi(np.array([[1.0, 1.0, 0.0, 1.0, -0.5, 0.0]])).tolist()
    [[3.0, 0.0]]
    """
    sos = np.asarray(sos, np.float64)
    gains = np.cumprod([1.0] + [s[:3].sum() / s[3:].sum() for s in sos[:-1]])
    return np.stack([g * lfilter_zi(s[:3], s[3:]) for g, s in zip(gains, sos)])


def sosfiltfilt(sos, x, axis: int = -1, padtype="odd", padlen=None):
    """``scipy.signal.sosfiltfilt`` from :func:`sosfilt` and :func:`sosfilt_zi`.

    >>> sosfiltfilt(np.array([[0.5, 0.5, 0.0, 1.0, 0.0, 0.0]]), np.arange(8.0)).round(12).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    sos = np.asarray(sos, np.float64)
    taps = 2 * len(sos) + 1 - min(np.sum(sos[:, 2] == 0), np.sum(sos[:, 5] == 0))
    x = np.asarray(x, np.float64)
    zi = sosfilt_zi(sos).reshape((len(sos),) + (1,) * (x.ndim - 1) + (2,))  # the filtered axis last
    return _zero_phase(lambda s, z: sosfilt(sos, s, -1, z), zi, x, axis, padtype, padlen, taps)


def resample(x, num: int, t=None, axis: int = 0, window=None, domain: str = "time"):
    """``scipy.signal.resample`` with the two-sided spectrum for every input (a real input's result is the real
    part): ``num`` bins, the low ``min(num, n) // 2 + 1`` and the matching negative ones kept, the unpaired bin of
    an even ``min(num, n)`` split in two (up) or the pair united (down), scaled by ``num / n``.

    >>> resample(np.cos(np.arange(4) * np.pi / 2), 8).round(6).tolist()
    [1.0, 0.707107, 0.0, -0.707107, -1.0, -0.707107, 0.0, 0.707107]
    """
    x = np.moveaxis(np.asarray(x), axis, -1)
    n = x.shape[-1]
    spectrum = np.fft.fft(x) if domain == "time" else x.astype(np.complex128)
    if window is not None:
        w = window(np.fft.fftfreq(n)) if callable(window) else np.asarray(window)
        w = np.fft.fftshift(_periodic_window(window, n)) if isinstance(window, (str, tuple)) else w
        spectrum = spectrum * w
    m = min(num, n)
    out = np.zeros(x.shape[:-1] + (num,), np.complex128)
    for k in range(-(m // 2), m // 2 + 1):  # the frequencies both lengths hold; k = +-m/2 for an even m below
        if -m // 2 < k < (m + 1) // 2 or m % 2:
            out[..., k % num] += spectrum[..., k % n]
    if m % 2 == 0 and m > 0:  # the bin at frequency m / 2 of the shorter length: two in the longer one
        if num < n:
            out[..., m // 2] = spectrum[..., m // 2] + spectrum[..., n - m // 2]
        elif num > n:
            out[..., m // 2] = out[..., num - m // 2] = spectrum[..., m // 2] / 2
        else:
            out[..., m // 2] = spectrum[..., m // 2]
    result = np.fft.ifft(out * (num / n))
    result = result.real if domain == "time" and not np.iscomplexobj(x) else result
    dtype = np.float32 if x.dtype in (np.float16, np.float32, np.complex64) else np.float64
    result = result.astype(dtype if np.isrealobj(result) else np.result_type(dtype, np.complex64))
    result = np.moveaxis(result, -1, axis)
    return result if t is None else (result, t[0] + (t[1] - t[0]) * (n / num) * np.arange(num))


def spectrogram(x, fs=1.0, window=("tukey", 0.25), nperseg=None, noverlap=None, nfft=None, detrend="constant",
                return_onesided=True, scaling="density", axis=-1, mode="psd") -> tuple:  # fmt: skip
    """``scipy.signal.spectrogram`` by its definition, one segment at a time: ``(frequencies, times, Sxx)``.

    >>> f, t, s = spectrogram(np.sin(np.arange(64) * np.pi / 2), fs=4.0, nperseg=16)
    >>> s.shape, t[:2].tolist()
    ((9, 4), [2.0, 5.5])
    """
    single = np.asarray(x).dtype in (np.float16, np.float32)
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    n = x.shape[-1]
    nperseg = min(256 if nperseg is None else nperseg, n)
    win = _periodic_window(window, nperseg)
    noverlap = nperseg // 8 if noverlap is None else noverlap
    nfft = nperseg if nfft is None else nfft
    step = nperseg - noverlap
    spectra = []
    for start in range(0, n - nperseg + 1, step):
        segment = x[..., start : start + nperseg]
        if detrend == "constant":
            segment = segment - segment.mean(axis=-1, keepdims=True)
        spectra.append(np.fft.fft(segment * win, nfft))
    spectra = np.stack(spectra, axis=-1)  # (..., nfft, segments)
    scale = 1.0 / (fs * np.sum(win**2)) if scaling == "density" else 1.0 / np.sum(win) ** 2
    freqs = np.fft.fftfreq(nfft, 1.0 / fs)
    if return_onesided:
        spectra, freqs = spectra[..., : nfft // 2 + 1, :], np.fft.rfftfreq(nfft, 1.0 / fs)
    if mode == "psd":
        result = np.abs(spectra) ** 2 * scale
        if return_onesided:
            result[..., 1 : nfft // 2 + 1 - (nfft % 2 == 0), :] *= 2.0
    else:
        result = spectra * np.sqrt(scale)
        result = {"complex": result, "magnitude": np.abs(result), "angle": np.angle(result)}.get(mode)
        result = np.unwrap(np.angle(spectra), axis=-2) if mode == "phase" else result
    times = np.arange(nperseg / 2, n - nperseg / 2 + 1, step) / fs
    if single:
        result = result.astype(np.complex64 if np.iscomplexobj(result) else np.float32)
    return freqs, times, np.moveaxis(result, -2, axis if axis >= 0 else axis - 1)


def torch_stft(x, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
               normalized=False, onesided=True, return_complex=True):  # fmt: skip
    """``torch.stft`` by its definition, one frame at a time: ``(..., bins, frames)``.

    >>> torch_stft(np.ones(16), 8, 4, window=np.hanning(10)[1:-1]).shape
    (5, 5)
    """
    pads = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}
    x = np.asarray(x)
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=pads[pad_mode])
    w = np.ones(win_length) if window is None else np.asarray(window)
    left = (n_fft - win_length) // 2
    w = np.concatenate([np.zeros(left), w, np.zeros(n_fft - win_length - left)])
    starts = range(0, x.shape[-1] - n_fft + 1, hop)
    spectra = np.stack([np.fft.fft(x[..., s : s + n_fft] * w) for s in starts], axis=-1)
    if onesided:
        spectra = spectra[..., : n_fft // 2 + 1, :]
    spectra = spectra / np.sqrt(n_fft) if normalized else spectra
    spectra = spectra.astype(np.complex64 if x.dtype == np.float32 else np.complex128)
    return spectra if return_complex else np.stack([spectra.real, spectra.imag], -1)
