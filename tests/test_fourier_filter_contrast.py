"""fourier_gemm convs on filters whose taps differ by orders of magnitude (tensorlib/backends/numpy_nn/fourier.py).

A transform's error spreads over the whole image: about an epsilon of the bright tap times the bright input.
Where the bright tap reads padding (the border of a SAME conv) or a zero (a ReLU's output), an output holds
only the dim taps' terms, so that error is a large part of it; a direct float32 sum keeps each output within
a few epsilons of its own window's scale.  The reference here is a float64 sum over sliding windows, and each
error is measured against its own output's scale (the sum of |w| * |x| over its window).
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.backends.numpy_nn import conv as nn_conv

# the shapes of the LeNet step's second conv, which fourier_gemm runs
X_SHAPE, W_SHAPE = (128, 14, 14, 32), (5, 5, 32, 64)
PADS = ((2, 2), (2, 2))
TOL = 1e-4  # direct float32 sums: ~5e-7; fourier_gemm within its 9-bit contrast: up to 3e-5; before: see the tests


def _windows(x):
    """(taps, views) of the SAME-padded float64 input: view (i, j) is what tap (i, j) reads for each output."""
    kh, kw = W_SHAPE[:2]
    xp = np.pad(x.astype(np.float64), ((0, 0), *PADS, (0, 0)))
    return [((i, j), xp[:, i : i + X_SHAPE[1], j : j + X_SHAPE[2]]) for i in range(kh) for j in range(kw)]


def _conv_and_scale(x, w):
    w64 = w.astype(np.float64)
    out = np.zeros((*X_SHAPE[:3], W_SHAPE[3]))
    scale = np.zeros_like(out)
    for (i, j), view in _windows(x):
        out += np.einsum("bhwc,co->bhwo", view, w64[i, j])
        scale += np.einsum("bhwc,co->bhwo", np.abs(view), np.abs(w64[i, j]))
    return out, scale


def _bright_tap_filter(rng, tap=(0, 0), contrast=1e6):
    w = (rng.standard_normal(W_SHAPE) / contrast).astype(np.float32)
    w[tap] = rng.standard_normal(W_SHAPE[2:])
    return w


def test_the_shapes_run_by_fourier_gemm():
    assert nn_conv.conv2d_strategy(X_SHAPE, W_SHAPE, (1, 1), (1, 1), PADS) == nn_conv.FOURIER_GEMM


@pytest.mark.parametrize("contrast", [1e4, 1e6])
def test_conv2d_with_a_bright_corner_tap_keeps_the_border_outputs(contrast):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(X_SHAPE).astype(np.float32)
    w = _bright_tap_filter(rng, contrast=contrast)
    got = tl.nn.conv2d(tl.tensor(x), tl.tensor(w), 1, "SAME").numpy()
    want, scale = _conv_and_scale(x, w)
    assert np.max(np.abs(got - want) / scale) < TOL


def test_conv2d_with_a_bright_centre_tap_on_relu_zeros():
    # no padding involved: the centre tap reads pixels that are zero in every channel (a ReLU's output where a
    # whole pixel is off), the dim taps their bright neighbours
    rng = np.random.default_rng(1)
    off = rng.random((*X_SHAPE[:3], 1)) < 0.3
    x = np.where(off, 0, np.maximum(rng.standard_normal(X_SHAPE), 0)).astype(np.float32)
    w = _bright_tap_filter(rng, tap=(2, 2))
    got = tl.nn.conv2d(tl.tensor(x), tl.tensor(w), 1, "SAME").numpy()
    want, scale = _conv_and_scale(x, w)
    nonzero = scale > 0
    assert np.max(np.abs(got - want)[nonzero] / scale[nonzero]) < TOL


def test_input_gradient_with_a_bright_corner_tap():
    # d/dx of sum(conv2d(x, w) * dy): each input cell's gradient sums w * dy over the outputs that read it
    rng = np.random.default_rng(2)
    x = tl.tensor(rng.standard_normal(X_SHAPE).astype(np.float32))
    w = _bright_tap_filter(rng)
    dy = rng.standard_normal((*X_SHAPE[:3], W_SHAPE[3])).astype(np.float32)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.nn.conv2d(x, tl.tensor(w), 1, "SAME")
    got = tape.gradient(y, x, output_gradients=tl.tensor(dy)).numpy()
    # the reference: scatter dy through each tap, in float64, with each cell's scale
    kh, kw = W_SHAPE[:2]
    big = np.zeros((X_SHAPE[0], X_SHAPE[1] + kh - 1, X_SHAPE[2] + kw - 1, X_SHAPE[3]))
    big_scale = np.zeros_like(big)
    w64 = w.astype(np.float64)
    for i in range(kh):
        for j in range(kw):
            sl = (slice(None), slice(i, i + X_SHAPE[1]), slice(j, j + X_SHAPE[2]))
            big[sl] += np.einsum("bhwo,co->bhwc", dy, w64[i, j])
            big_scale[sl] += np.einsum("bhwo,co->bhwc", np.abs(dy), np.abs(w64[i, j]))
    (top, _), (left, _) = PADS
    want = big[:, top : top + X_SHAPE[1], left : left + X_SHAPE[2]]
    scale = big_scale[:, top : top + X_SHAPE[1], left : left + X_SHAPE[2]]
    assert np.max(np.abs(got - want) / scale) < TOL


def test_an_even_filter_still_runs_by_fourier_gemm():
    # the check must not send ordinary filters (taps within a factor of a few) to the patch strategies
    from tensorlib.backends.numpy_nn.blocks import _Geometry
    from tensorlib.backends.numpy_nn.fourier import loses_dim_windows

    rng = np.random.default_rng(3)
    x = rng.standard_normal(X_SHAPE).astype(np.float32)
    geometry = _Geometry.build("conv2d", X_SHAPE[1:3], W_SHAPE[:2], (1, 1), (1, 1), PADS)
    w = rng.standard_normal(W_SHAPE).astype(np.float32)
    w[0, 0] *= 3.0
    shapes = nn_conv._ConvShapes("conv2d", X_SHAPE, W_SHAPE, (1, 1), (1, 1), PADS, np.float32, None)
    shapes.patches_unless_accurate(x, w=w)
    assert shapes.strategy == nn_conv.FOURIER_GEMM
    assert not loses_dim_windows(x, geometry, False)


def test_a_filter_with_taps_of_zeros_still_runs_by_fourier_gemm():
    # a tap of zeros reads nothing: the weighted windows leave it out, and the rest are even
    rng = np.random.default_rng(4)
    x = rng.standard_normal(X_SHAPE).astype(np.float32)
    w = rng.standard_normal(W_SHAPE).astype(np.float32)
    w[0, 0] = w[4, 4] = 0.0
    for signal, transposed in ((x, False), (rng.standard_normal((*X_SHAPE[:3], W_SHAPE[3])).astype(np.float32), True)):
        shapes = nn_conv._ConvShapes("conv2d", X_SHAPE, W_SHAPE, (1, 1), (1, 1), PADS, np.float32, None)
        shapes.patches_unless_accurate(signal, transposed, w=w)
        assert shapes.strategy == nn_conv.FOURIER_GEMM
    got = tl.nn.conv2d(tl.tensor(x), tl.tensor(w), 1, "SAME").numpy()
    want, scale = _conv_and_scale(x, w)
    assert np.max(np.abs(got - want) / scale) < TOL
