"""The nn kernels written against the Array API standard (``xp``): conv, pools, batch norm, erf.

They run where a backend has no nn kernels of its own (``array_api_strict``,
a user's backend) and are CuPy's fallback where cuDNN has no engine.  Only
the standard is used: slicing (also to write), ``matmul``, ``where``,
``reshape``, ``stack``, reductions.  A convolution is one GEMM per filter tap,
summed (no im2col buffer); a pool reduces its window's taps one by one.
NumPy keeps its tuned kernels (``backends/numpy_nn``); these run on it too:

    >>> import numpy as np
    >>> x = np.arange(16.0).reshape(1, 4, 4, 1); w = np.ones((2, 2, 1, 1))
    >>> conv2d(np, x, w, (1, 1), (1, 1), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[10., 14., 18.],
           [26., 30., 34.],
           [42., 46., 50.]])
    >>> max_pool(np, x, (2, 2), (2, 2), ((0, 0), (0, 0)))[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]])
"""

from __future__ import annotations

import math

__all__ = [
    "avg_pool",
    "avg_pool_grad",
    "batch_norm_backward",
    "batch_norm_forward",
    "fused_batch_norm",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "erf",
    "erfc",
    "gelu",
    "max_pool",
    "max_pool_grad",
    "max_pool_grad_grad",
]


def _tap(i, j, out_hw, strides, dilations) -> tuple:
    """The index of the (N, out_h, out_w, C) cells of a padded NHWC array that window tap (i, j) reads."""
    (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out_hw
    return (
        slice(None),
        slice(i * dh, i * dh + (oh - 1) * sh + 1, sh),
        slice(j * dw, j * dw + (ow - 1) * sw + 1, sw),
        slice(None),
    )


def _padded(xp, x, pads, fill=0.0):
    (top, bottom), (left, right) = pads
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    out = xp.full((n, h + top + bottom, w + left + right, c), fill, dtype=x.dtype)
    out[:, top : top + h, left : left + w, :] = x
    return out


def _unpadded(x, shape, pads):
    (top, _), (left, _) = pads
    return x[:, top : top + shape[1], left : left + shape[2], :]


def _out_hw(padded_hw, window_hw, strides, dilations):
    return tuple((p - (k - 1) * d - 1) // s + 1 for p, k, s, d in zip(padded_hw, window_hw, strides, dilations))


# ---------------------------------------------------------------- convolution: one GEMM per filter tap


def conv2d(xp, x, w, strides, dilations, pads):
    """NHWC ``x`` (*) HWIO ``w`` (cross-correlation, TensorFlow's Conv2D)."""
    kh, kw, _, cout = w.shape
    padded = _padded(xp, x, pads)
    out_hw = _out_hw(padded.shape[1:3], (kh, kw), strides, dilations)
    y = xp.zeros((x.shape[0], *out_hw, cout), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            y = y + xp.matmul(padded[_tap(i, j, out_hw, strides, dilations)], w[i, j, ...])
    return y


def conv2d_backprop_input(xp, input_shape, w, dy, strides, dilations, pads):
    """The transpose of :func:`conv2d` in its input: each tap's GEMM added back where it read."""
    (top, bottom), (left, right) = pads
    n, h, wd, cin = input_shape
    dx = xp.zeros((n, h + top + bottom, wd + left + right, cin), dtype=dy.dtype)
    out_hw = dy.shape[1:3]
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            tap = _tap(i, j, out_hw, strides, dilations)
            dx[tap] = dx[tap] + xp.matmul(dy, xp.matrix_transpose(w[i, j, ...]))
    return _unpadded(dx, input_shape, pads)


def conv2d_backprop_filter(xp, x, filter_shape, dy, strides, dilations, pads):
    """The transpose of :func:`conv2d` in its filter: one (C_in x M) @ (M x C_out) GEMM per tap."""
    kh, kw, cin, cout = filter_shape
    padded = _padded(xp, x, pads)
    out_hw = dy.shape[1:3]
    flat_dy = xp.reshape(dy, (-1, cout))
    rows = []
    for i in range(kh):
        row = []
        for j in range(kw):
            patch = xp.reshape(padded[_tap(i, j, out_hw, strides, dilations)], (-1, cin))
            row.append(xp.matmul(xp.matrix_transpose(patch), flat_dy))
        rows.append(xp.stack(row))
    return xp.stack(rows)


# ---------------------------------------------------------------- pooling: the window's taps one by one


def _taps(ksize):
    return [(i, j) for i in range(ksize[0]) for j in range(ksize[1])]


def _pool_hw(x_shape, ksize, strides, pads):
    padded_hw = (x_shape[1] + sum(pads[0]), x_shape[2] + sum(pads[1]))
    return _out_hw(padded_hw, ksize, strides, (1, 1))


def _window_sums(xp, padded, out_hw, ksize, strides):
    total = None
    for i, j in _taps(ksize):
        view = padded[_tap(i, j, out_hw, strides, (1, 1))]
        total = view if total is None else total + view
    return total


def _cell_counts(xp, x_shape, ksize, strides, pads, dtype):
    """How many real (unpadded) cells each window holds: SAME windows average only those."""
    ones = xp.ones((1, x_shape[1], x_shape[2], 1), dtype=dtype)
    return _window_sums(xp, _padded(xp, ones, pads), _pool_hw(x_shape, ksize, strides, pads), ksize, strides)


def avg_pool(xp, x, ksize, strides, pads):
    """Average pooling; padded cells are left out of each window's divisor."""
    out_hw = _pool_hw(x.shape, ksize, strides, pads)
    sums = _window_sums(xp, _padded(xp, x, pads), out_hw, ksize, strides)
    return sums / _cell_counts(xp, x.shape, ksize, strides, pads, x.dtype)


def avg_pool_grad(xp, input_shape, dy, ksize, strides, pads):
    """The transpose of :func:`avg_pool`: each window's share added back to its cells."""
    n, h, w, c = input_shape
    share = dy / _cell_counts(xp, input_shape, ksize, strides, pads, dy.dtype)
    dx = xp.zeros((n, h + sum(pads[0]), w + sum(pads[1]), c), dtype=dy.dtype)
    for i, j in _taps(ksize):
        tap = _tap(i, j, dy.shape[1:3], strides, (1, 1))
        dx[tap] = dx[tap] + share
    return _unpadded(dx, input_shape, pads)


def max_pool(xp, x, ksize, strides, pads):
    """Max pooling; padded cells act as ``-inf``."""
    out_hw = _pool_hw(x.shape, ksize, strides, pads)
    padded = _padded(xp, x, pads, -float("inf"))
    y = None
    for i, j in _taps(ksize):
        view = padded[_tap(i, j, out_hw, strides, (1, 1))]
        y = view if y is None else xp.maximum(y, view)
    return y


def _first_max_hits(xp, x, y, ksize, strides, pads):
    """``(tap index, hit)`` in row-major tap order: ``hit`` marks the windows whose first maximum
    (TensorFlow's CPU tie rule) sits at that tap.  Padding holds NaN, which equals no maximum."""
    padded = _padded(xp, x, pads, float("nan"))
    taken = None
    for i, j in _taps(ksize):
        tap = _tap(i, j, y.shape[1:3], strides, (1, 1))
        hit = padded[tap] == y
        if taken is None:
            taken = hit
        else:
            hit = xp.logical_and(hit, xp.logical_not(taken))
            taken = xp.logical_or(taken, hit)
        yield tap, hit


def max_pool_grad(xp, x, y, dy, ksize, strides, pads):
    """Gradient of :func:`max_pool` with respect to ``x``: each window's to its first maximum."""
    n, h, w, c = x.shape
    dx = xp.zeros((n, h + sum(pads[0]), w + sum(pads[1]), c), dtype=dy.dtype)
    zero = xp.zeros((), dtype=dy.dtype)
    for tap, hit in _first_max_hits(xp, x, y, ksize, strides, pads):
        dx[tap] = dx[tap] + xp.where(hit, dy, zero)
    return _unpadded(dx, x.shape, pads)


def max_pool_grad_grad(xp, x, y, ddx, ksize, strides, pads):
    """The transpose of :func:`max_pool_grad` in ``dy``: ``ddx`` gathered at each window's first maximum."""
    padded = _padded(xp, ddx, pads)
    out = xp.zeros(y.shape, dtype=ddx.dtype)
    for tap, hit in _first_max_hits(xp, x, y, ksize, strides, pads):
        out = out + xp.where(hit, padded[tap], xp.zeros((), dtype=ddx.dtype))
    return out


# ---------------------------------------------------------------- batch norm (training), one pass each way


def _compute_dtype(xp, dtype):
    """float16 statistics accumulate in float32 (DESIGN §6); the standard has no float16, CuPy does."""
    return xp.float32 if dtype == getattr(xp, "float16", None) else dtype


def batch_norm_forward(xp, x, scale, offset, epsilon):
    """Training batch norm of NHWC ``x``: (y, mean, biased var, inv_std), statistics in scale's dtype."""
    compute = _compute_dtype(xp, x.dtype)
    flat = xp.astype(xp.reshape(x, (math.prod(x.shape[:-1]), x.shape[-1])), compute)  # -1 cannot size 0 channels
    count = flat.shape[0]
    mean = xp.sum(flat, axis=0) / count
    centered = flat - mean
    var = xp.sum(centered * centered, axis=0) / count
    inv_std = 1.0 / xp.sqrt(var + epsilon)
    y = centered * (xp.astype(scale, compute) * inv_std) + xp.astype(offset, compute)
    stat = scale.dtype
    return (
        xp.reshape(xp.astype(y, x.dtype), x.shape),
        xp.astype(mean, stat),
        xp.astype(var, stat),
        xp.astype(inv_std, stat),
    )


def fused_batch_norm(xp, x, scale, offset, mean, variance, epsilon, is_training):
    """FusedBatchNormV3: (y, mean, variance, inv_std); in training the batch's statistics, the
    variance output Bessel-corrected (for running averages, as TensorFlow), y from the biased one."""
    if is_training:
        y, batch_mean, batch_var, inv_std = batch_norm_forward(xp, x, scale, offset, epsilon)
        count = x.shape[0] * x.shape[1] * x.shape[2]
        return y, batch_mean, batch_var * (count / max(count - 1, 1)), inv_std
    y, inv_std = batch_norm_inference(xp, x, scale, offset, mean, variance, epsilon)
    return y, mean, variance, inv_std


def batch_norm_inference(xp, x, scale, offset, mean, variance, epsilon):
    """Inference batch norm of NHWC ``x`` with the given statistics: (y, inv_std in scale's dtype).

    ``(x - mean) * factor + offset`` in at least float32 (TensorFlow's CPU kernel): the float16
    ``x * factor + (offset - mean * factor)`` had its two terms cancel, 5 float16 ulps off for x ~ 10,
    and in float32 lost the digits below 1e4's ulp for x ~ 1e4 + N(0, 1).
    """
    compute = _compute_dtype(xp, x.dtype)
    inv_std = 1.0 / xp.sqrt(variance + epsilon)
    y = xp.astype(x, compute, copy=False) - xp.astype(mean, compute, copy=False)  # a fresh buffer: scaled in place
    y *= xp.astype(scale * inv_std, compute, copy=False)
    y += xp.astype(offset, compute, copy=False)
    return xp.astype(y, x.dtype, copy=False), xp.astype(inv_std, scale.dtype, copy=False)


def batch_norm_backward(xp, dy, x, scale, mean, inv_std):
    """(dx, dscale, doffset) of training batch norm, one fused formula."""
    compute = _compute_dtype(xp, xp.result_type(x.dtype, dy.dtype))
    channels = x.shape[-1]
    flat_dy = xp.astype(xp.reshape(dy, (math.prod(dy.shape[:-1]), channels)), compute)
    count = flat_dy.shape[0]
    inv = xp.astype(inv_std, compute)
    x_hat = (xp.astype(xp.reshape(x, flat_dy.shape), compute) - xp.astype(mean, compute)) * inv
    doffset = xp.sum(flat_dy, axis=0)
    dscale = xp.sum(flat_dy * x_hat, axis=0)
    dx = (xp.astype(scale, compute) * inv / count) * (count * flat_dy - doffset - x_hat * dscale)
    return xp.reshape(xp.astype(dx, x.dtype), x.shape), xp.astype(dscale, scale.dtype), xp.astype(doffset, scale.dtype)


# ---------------------------------------------------------------- the error function (the standard has none)

_SERIES_TERMS = 80  # the last term of the series at |x| < 3 is below 1e-17 of the sum
_FRACTION_TERMS = 60  # the continued fraction at |x| >= 3 is converged to 1e-16 by then


def _erf_parts(xp, x):
    """(x in float64, |x| < 3, the series for erf(|x|) there, the continued fraction for erfc(|x|) beyond)."""
    work = x if x.dtype == xp.float64 else xp.astype(x, xp.float64)
    a = xp.abs(work)
    small = a < 3.0
    s = xp.where(small, a, xp.zeros_like(a))  # each branch sees arguments it is accurate for
    big = xp.where(small, xp.full_like(a, 3.0), a)
    x2 = s * s
    term, total = s, s
    for n in range(1, _SERIES_TERMS):
        term = term * (2.0 * x2 / (2 * n + 1))
        total = total + term
    series = (2.0 / math.sqrt(math.pi)) * xp.exp(-x2) * total
    fraction = big
    for k in range(_FRACTION_TERMS, 0, -1):
        fraction = big + (k / 2.0) / fraction
    complement = xp.exp(-big * big) / (math.sqrt(math.pi) * fraction)  # erfc(|x|) for |x| >= 3
    return work, small, series, complement


def erf(xp, x):
    """The error function to float64 precision (1.3e-15 from SciPy's on [-8, 8]) with the standard's
    functions only: for |x| < 3 the series 2/sqrt(pi) e^(-x^2) sum 2^n x^(2n+1) / (2n+1)!!, whose
    terms are all positive (no cancellation); beyond, 1 - erfc with erfc's continued fraction
    e^(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / ...))).  float32 computes in float64."""
    work, small, series, complement = _erf_parts(xp, x)
    out = xp.copysign(xp.where(small, series, 1.0 - complement), work)  # odd, to the sign of zero
    return out if out.dtype == x.dtype else xp.astype(out, x.dtype)


def erfc(xp, x):
    """1 - erf(x), by the same series and continued fraction, without cancellation for large x."""
    work, small, series, complement = _erf_parts(xp, x)
    positive = xp.where(small, 1.0 - series, complement)
    out = xp.where(work < 0, 2.0 - positive, positive)
    return out if out.dtype == x.dtype else xp.astype(out, x.dtype)


def gelu(xp, x, approximate):
    """x * Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2, or its tanh approximation written as
    x * sigmoid(2u): neither form subtracts nearly equal numbers for negative x."""
    if approximate:
        u2 = (2.0 * math.sqrt(2.0 / math.pi)) * (x + 0.044715 * x * x * x)
        e = xp.exp(-xp.abs(u2))  # exp(-2u) overflows for very negative x: split by sign
        return x * xp.where(u2 >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return 0.5 * x * erfc(xp, x * (-1.0 / math.sqrt(2.0)))
