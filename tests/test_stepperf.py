"""The traced training step's conv kernels, attacked for accuracy: the fourier_gemm strategy (the NumPy
backend's conv of a 5x5 filter from 32 to 64 channels on 14x14 images, the LeNet step's second layer) on
high-contrast images, whose dim regions a transform over the whole image loses digits in.

References: a float64 direct conv and its transpose written here with NumPy (sliding windows and
einsum), and the float64 local scale ``sum |x| |w|`` of each output's window; a float32 direct sum is
within a few float32 epsilons of that scale, and so must the library's conv be, whatever the strategy.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.backends.numpy_nn import conv as conv_kernels
from tensorlib.backends.numpy_nn import fourier

# The shapes at which the NumPy backend picks fourier_gemm (asserted below): batch 64 of 14x14x32 images,
# a 5x5 filter to 64 channels, SAME padding.
BATCH, SIZE, CIN, COUT, K = 64, 14, 32, 64, 5
PADS = ((2, 2), (2, 2))
# A float32 direct conv's error, relative to each output's sum |x| |w|, is about 1e-6 here; fourier_gemm's is
# 8e-2 on images whose halves differ 1e6-fold (measured).
LOCAL_TOL = 2e-5


def _reference_conv(x, w):
    """float64 SAME cross-correlation, NHWC x HWIO, by sliding windows."""
    padded = np.pad(x.astype(np.float64), ((0, 0), PADS[0], PADS[1], (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (K, K), axis=(1, 2))  # n, oh, ow, c, kh, kw
    return np.einsum("nhwcij,ijco->nhwo", windows, w.astype(np.float64))


def _reference_input_grad(w, dy):
    """float64 gradient of ``sum(conv(x, w) * dy)`` with respect to ``x``: ``dy`` scattered through ``w``."""
    n, oh, ow, _ = dy.shape
    dx = np.zeros((n, oh + K - 1, ow + K - 1, w.shape[2]))
    for i in range(K):
        for j in range(K):
            dx[:, i : i + oh, j : j + ow] += dy.astype(np.float64) @ w[i, j].astype(np.float64).T
    return dx[:, PADS[0][0] : PADS[0][0] + oh, PADS[1][0] : PADS[1][0] + ow]


def _high_contrast(rng, shape, pattern, ratio):
    values = rng.uniform(-1, 1, shape)
    if pattern == "halves":  # bright left half, dim right half
        values[:, :, shape[2] // 2 :] /= ratio
    elif pattern == "spot":  # a bright 2x2 spot on a dim image
        values /= ratio
        values[:, 3:5, 3:5] *= ratio
    else:  # a bright quadrant pair, as a checkerboard: every row and column has a bright part
        half = shape[1] // 2
        values[:, :half, half:] /= ratio
        values[:, half:, :half] /= ratio
    return values


def _local_error(got, exact, scale):
    return float(np.max(np.abs(got - exact) / scale))


def test_the_shapes_pick_fourier_gemm():
    strategy = conv_kernels.conv2d_strategy((BATCH, SIZE, SIZE, CIN), (K, K, CIN, COUT), (1, 1), (1, 1), PADS)
    assert strategy == conv_kernels.FOURIER_GEMM


@pytest.mark.parametrize("pattern", ["halves", "spot", "checkerboard"])
@pytest.mark.parametrize("ratio", [1e3, 1e6])
def test_conv2d_keeps_the_digits_of_dim_regions(pattern, ratio):
    rng = np.random.default_rng(0)
    x = _high_contrast(rng, (BATCH, SIZE, SIZE, CIN), pattern, ratio)
    w = rng.standard_normal((K, K, CIN, COUT))
    exact, scale = _reference_conv(x, w), _reference_conv(np.abs(x), np.abs(w))
    got = tl.nn.conv2d(tl.tensor(x.astype(np.float32)), tl.tensor(w.astype(np.float32)), 1, "SAME").numpy()
    assert got.dtype == np.float32
    assert _local_error(got, exact, scale) < LOCAL_TOL


@pytest.mark.parametrize("pattern", ["halves", "spot"])
def test_input_gradient_keeps_the_digits_of_dim_regions(pattern):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((BATCH, SIZE, SIZE, CIN)).astype(np.float32)
    w = rng.standard_normal((K, K, CIN, COUT))
    dy = _high_contrast(rng, (BATCH, SIZE, SIZE, COUT), pattern, 1e6)
    exact, scale = _reference_input_grad(w, dy), _reference_input_grad(np.abs(w), np.abs(dy))
    xt, wt, dyt = tl.tensor(x), tl.tensor(w.astype(np.float32)), tl.tensor(dy.astype(np.float32))
    with tl.GradientTape() as tape:
        tape.watch(xt)
        loss = tl.sum(tl.nn.conv2d(xt, wt, 1, "SAME") * dyt)
    got = tape.gradient(loss, xt).numpy()
    assert _local_error(got, exact, scale) < LOCAL_TOL


@pytest.mark.parametrize("case", ["cross", "input", "gradient"])
def test_filter_gradient_keeps_its_digits_when_bright_meets_dim(case):
    """dw = sum of input times output gradient over every pixel: where the input is bright, the gradient dim
    and the other way round, the sum lies far below the product of their sizes, which fourier_gemm's error
    is a fraction of an epsilon of."""
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (BATCH, SIZE, SIZE, CIN))
    dy = rng.uniform(-1, 1, (BATCH, SIZE, SIZE, COUT))
    if case in ("cross", "input"):
        x[:, :, SIZE // 2 :] *= 1e-6
    if case == "cross":
        dy[:, :, : SIZE // 2] *= 1e-6
    if case == "gradient":
        dy[:, :, SIZE // 2 :] *= 1e-6
    xt, dyt = tl.tensor(x.astype(np.float32)), tl.tensor(dy.astype(np.float32))
    wt = tl.Variable(rng.standard_normal((K, K, CIN, COUT)).astype(np.float32))
    with tl.GradientTape() as tape:
        loss = tl.sum(tl.nn.conv2d(xt, wt, 1, "SAME") * dyt)
    got = tape.gradient(loss, wt).numpy()
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x, ((0, 0), PADS[0], PADS[1], (0, 0))), (K, K), axis=(1, 2)
    )
    exact = np.einsum("nhwcij,nhwo->ijco", windows, dy)
    scale = np.einsum("nhwcij,nhwo->ijco", np.abs(windows), np.abs(dy))
    assert _local_error(got, exact, scale) < LOCAL_TOL


def test_traced_fused_conv_gradients_keep_the_digits_of_dim_regions():
    """Under tl.function the conv's input, filter and bias gradients are one fused op (one spectrum of dy)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((BATCH, SIZE, SIZE, CIN)).astype(np.float32)
    w = rng.standard_normal((K, K, CIN, COUT))
    b = np.zeros(COUT, np.float32)
    dy = _high_contrast(rng, (BATCH, SIZE, SIZE, COUT), "halves", 1e6)
    dyt = tl.tensor(dy.astype(np.float32))

    @tl.function
    def grads(x, w, b):
        with tl.GradientTape() as tape:
            tape.watch([x, w, b])
            loss = tl.sum((tl.nn.conv2d(x, w, 1, "SAME") + b) * dyt)
        return tape.gradient(loss, [x, w, b])

    dx, dw, db = grads(tl.tensor(x), tl.tensor(w.astype(np.float32)), tl.tensor(b))
    exact, scale = _reference_input_grad(w, dy), _reference_input_grad(np.abs(w), np.abs(dy))
    assert _local_error(dx.numpy(), exact, scale) < LOCAL_TOL
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x.astype(np.float64), ((0, 0), PADS[0], PADS[1], (0, 0))), (K, K), axis=(1, 2)
    )
    exact_dw = np.einsum("nhwcij,nhwo->ijco", windows, dy)
    scale_dw = np.einsum("nhwcij,nhwo->ijco", np.abs(windows), np.abs(dy))
    assert _local_error(dw.numpy(), exact_dw, scale_dw) < LOCAL_TOL
    np.testing.assert_allclose(db.numpy(), dy.sum(axis=(0, 1, 2)), rtol=1e-5, atol=1e-6 * np.abs(dy).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ordinary_images_keep_fourier_gemm(dtype):
    """The check trades fourier_gemm away only where it would lose digits: not on a ReLU layer's output with
    its zeros, nor on a gradient of both signs, nor on images of a contrast of 100; at 1e6 it does, in
    float64 too (fourier_gemm's error there is 2e-10 of a window's scale, a direct sum's 1e-16)."""
    rng = np.random.default_rng(3)
    geometry = conv_kernels._ConvShapes(
        "conv2d", (BATCH, SIZE, SIZE, CIN), (K, K, CIN, COUT), (1, 1), (1, 1), PADS, dtype, None
    ).geometry
    relu_output = np.maximum(rng.standard_normal((BATCH, SIZE, SIZE, CIN)), 0).astype(dtype)
    relu_output[:3] = 0.0  # all-zero images: every window's sum is exactly 0
    assert not fourier.loses_dim_windows(relu_output, geometry, transposed=False)
    gradient = rng.standard_normal((BATCH, SIZE, SIZE, COUT)).astype(dtype)
    assert not fourier.loses_dim_windows(gradient, geometry, transposed=True)
    mild = _high_contrast(rng, (BATCH, SIZE, SIZE, CIN), "halves", 1e2).astype(dtype)
    assert not fourier.loses_dim_windows(mild, geometry, transposed=False)
    contrast = _high_contrast(rng, (BATCH, SIZE, SIZE, CIN), "halves", 1e6).astype(dtype)
    assert fourier.loses_dim_windows(contrast, geometry, transposed=False)
    w = rng.standard_normal((K, K, CIN, COUT))
    got = conv_kernels.conv2d(contrast, w.astype(dtype), (1, 1), (1, 1), PADS)
    exact, scale = _reference_conv(contrast, w), _reference_conv(np.abs(contrast), np.abs(w))
    assert _local_error(got, exact, scale) < (LOCAL_TOL if dtype == np.float32 else 1e-13)


# The check's decisions against window scales computed here by their definition, on geometries with strides,
# dilations and uneven padding: (in_hw, kernel_hw, strides, dilations, pads).
GEOMETRIES = [
    ((14, 14), (5, 5), (1, 1), (1, 1), ((2, 2), (2, 2))),
    ((9, 11), (3, 2), (2, 3), (1, 2), ((1, 0), (2, 1))),
    ((8, 8), (3, 3), (1, 1), (2, 2), ((0, 0), (0, 0))),
    ((7, 10), (4, 1), (3, 1), (1, 1), ((3, 2), (0, 0))),
]


def _geometry(case):
    from tensorlib.backends.numpy_nn.blocks import _Geometry

    return _Geometry.build("conv2d", *case)


def _reference_window_scales(mass, geometry, transposed):
    """float64 ``(batch, rows, cols)`` window scales by their definition, output by output and tap by tap:
    an output's window sums the mass of the input cells it reads; transposed, an input cell sums the mass of
    the outputs whose windows read it."""
    (in_h, in_w), (out_h, out_w) = geometry.in_hw, geometry.out_hw
    (top, _), (left, _) = geometry.pads
    mass = mass.astype(np.float64)
    scales = np.zeros((mass.shape[0], *(geometry.in_hw if transposed else geometry.out_hw)))
    for oh in range(out_h):
        for ow in range(out_w):
            for i in range(geometry.kernel_hw[0]):
                for j in range(geometry.kernel_hw[1]):
                    r = oh * geometry.strides[0] + i * geometry.dilations[0] - top
                    c = ow * geometry.strides[1] + j * geometry.dilations[1] - left
                    if 0 <= r < in_h and 0 <= c < in_w:
                        if transposed:
                            scales[:, r, c] += mass[:, oh, ow]
                        else:
                            scales[:, oh, ow] += mass[:, r, c]
    return scales


def _reference_loses(signal, geometry, transposed):
    scales = _reference_window_scales(np.abs(signal.astype(np.float64)).sum(-1), geometry, transposed)
    scales = scales.reshape(len(scales), -1)
    dimmest = np.where(scales > 0, scales, np.inf).min(axis=1)
    return bool(np.any(dimmest * 2**9 < scales.max(axis=1)))


@pytest.mark.parametrize("case", GEOMETRIES)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_check_decides_as_the_window_scales_say(case, transposed, dtype):
    """``loses_dim_windows`` against the decision from float64 window scales by definition, image kind by
    image kind: random, a dim half 1e6 or 1e3 times dimmer, a bright spot, tiny (subnormal in float32) values
    next to ones, uniformly tiny images, zeros, one nonzero pixel, and contrasts of 100 and 5000 between
    the channels' halves."""
    geometry = _geometry(case)
    rng = np.random.default_rng(6)
    hw = geometry.out_hw if transposed else geometry.in_hw
    shape = (4, *hw, 3)
    tiny = 1e-42 if dtype == np.float32 else 1e-310

    def halves(ratio):
        values = rng.uniform(-1, 1, shape)
        values[:, :, hw[1] // 2 :] /= ratio
        return values

    spot = rng.uniform(-1, 1, shape) * 1e-6
    spot[:, :1, :1] = 1.0
    next_to_tiny = np.ones(shape)
    next_to_tiny[:, hw[0] // 2 :] = tiny
    single = np.zeros(shape)
    single[:, hw[0] // 2, hw[1] // 2, 1] = -3.0
    kinds = {
        "random": rng.standard_normal(shape),
        "halves 1e6": halves(1e6),
        "halves 1e3": halves(1e3),
        "halves 1e2": halves(1e2),
        "halves 5e3": halves(5e3),
        "spot": spot,
        "next to tiny": next_to_tiny,
        "uniformly tiny": np.full(shape, tiny),
        "zeros": np.zeros(shape),
        "single": single,
    }
    for name, signal in kinds.items():
        signal = signal.astype(dtype)
        assert fourier.loses_dim_windows(signal, geometry, transposed) == _reference_loses(
            signal, geometry, transposed
        ), name


@pytest.mark.parametrize("transposed", [False, True])
def test_check_trades_fourier_gemm_away_for_an_inf_or_an_overflow(transposed):
    """An inf in the signal, or channels each finite whose magnitudes' sum overflows float32, make that
    image's windows infinitely brighter than the rest: the check trades fourier_gemm away (which alternative
    window sums must keep, where inf times 0 is NaN); an image of ones does not."""
    geometry = _geometry(GEOMETRIES[0])
    signal = np.ones((2, 14, 14, 4), np.float32)
    signal[1, 0, 0, 0] = np.inf
    assert fourier.loses_dim_windows(signal, geometry, transposed)
    signal[1, 0, 0] = 3e38  # each finite, their sum over channels not
    with np.errstate(over="ignore"):
        assert fourier.loses_dim_windows(signal, geometry, transposed)
    signal[1] = 1.0
    assert not fourier.loses_dim_windows(signal, geometry, transposed)


def _alternating(rng, shape, size):
    """Values of ``size`` whose signs alternate like a checkerboard in image 0's channel 0 (its plain sum
    cancels: fourier_gemm's frequency-0 guard sees nothing, but its other frequencies overflow float32), small
    values elsewhere."""
    values = rng.uniform(-1, 1, shape)
    checkerboard = (np.arange(shape[1])[:, None] + np.arange(shape[2])[None, :]) % 2
    values[0, :, :, 0] = size * np.where(checkerboard == 0, 1.0, -1.0)
    return values


@pytest.mark.parametrize("traced", [False, True])
def test_huge_values_whose_sums_cancel_do_not_overflow_into_nan(traced):
    """float32 values of 1e37 with alternating signs: a direct conv's outputs (and gradients) are about 1e34-1e35,
    finite; fourier_gemm's spectra overflowed at the checkerboard's frequency and gave NaN (the forward and the
    input gradient), and NaN filter gradients where the input is huge.  Checked against float64 sums here."""
    rng = np.random.default_rng(7)
    x = _alternating(rng, (BATCH, SIZE, SIZE, CIN), 1e37)
    w = rng.uniform(-0.05, 0.05, (K, K, CIN, COUT))
    dy = _alternating(rng, (BATCH, SIZE, SIZE, COUT), 1e37)
    with np.errstate(over="ignore", invalid="ignore"):
        y = tl.nn.conv2d(tl.tensor(x.astype(np.float32)), tl.tensor(w.astype(np.float32)), 1, "SAME").numpy()
    exact, scale = _reference_conv(x, w), _reference_conv(np.abs(x), np.abs(w))
    assert np.isfinite(y).all()
    assert _local_error(y, exact, scale) < LOCAL_TOL

    def grads(x, w, dy):
        with tl.GradientTape() as tape:
            tape.watch([x, w])
            loss = tl.sum(tl.nn.conv2d(x, w, 1, "SAME") * dy)
        return tape.gradient(loss, [x, w])

    small_x = rng.uniform(-1, 1, x.shape)
    small_dy = rng.uniform(-1, 1, dy.shape)
    run = tl.function(grads) if traced else grads
    for xs, dys in ((small_x, dy), (x, small_dy)):
        with np.errstate(over="ignore", invalid="ignore"):
            dx, dw = run(
                tl.tensor(xs.astype(np.float32)), tl.tensor(w.astype(np.float32)), tl.tensor(dys.astype(np.float32))
            )
        dx, dw = dx.numpy(), dw.numpy()
        assert np.isfinite(dx).all() and np.isfinite(dw).all()
        exact_dx, scale_dx = _reference_input_grad(w, dys), _reference_input_grad(np.abs(w), np.abs(dys))
        assert _local_error(dx, exact_dx, scale_dx) < LOCAL_TOL
        windows = np.lib.stride_tricks.sliding_window_view(
            np.pad(xs, ((0, 0), PADS[0], PADS[1], (0, 0))), (K, K), axis=(1, 2)
        )
        exact_dw = np.einsum("nhwcij,nhwo->ijco", windows, dys)
        scale_dw = np.einsum("nhwcij,nhwo->ijco", np.abs(windows), np.abs(dys))
        assert _local_error(dw, exact_dw, scale_dw) < LOCAL_TOL


def test_ordinary_filters_and_images_stay_far_below_the_overflow_limit():
    """The overflow guard never trades fourier_gemm away on data of any ordinary size: the LeNet step's second
    conv with a filter of 1e3 allows images whose magnitudes sum to 1e27 in float32."""
    geometry = conv_kernels._ConvShapes(
        "conv2d", (BATCH, SIZE, SIZE, CIN), (K, K, CIN, COUT), (1, 1), (1, 1), PADS, np.float32, None
    ).geometry
    limit = fourier.overflow_limit(geometry, np.full((K, K, CIN, COUT), -1e3, np.float32), np.float32)
    assert 1e27 < limit < np.inf
    assert fourier.overflow_limit(geometry, np.zeros((K, K, CIN, COUT), np.float32), np.float32) == np.inf
    images = np.full((2, SIZE, SIZE, CIN), 1e20, np.float32)
    assert not fourier.loses_dim_windows(images, geometry, False, limit)
    images[1] = 1e28  # no dim windows, but a sum of 6e31 over the image
    assert not fourier.loses_dim_windows(images, geometry, False)
    assert fourier.loses_dim_windows(images, geometry, False, limit)


def test_the_check_warns_of_no_overflow_of_its_own():
    """A pixel whose channels' magnitudes sum past float32's largest value overflows the check's own sums, not
    the conv (its outputs are about 1e36): no RuntimeWarning (an error under ``-W error`` or
    ``np.seterr(over="raise")``), and the conv's value by direct sums."""
    import warnings

    x = np.ones((BATCH, SIZE, SIZE, CIN), np.float32)
    x[0, 3, 3, :] = 3e37
    w = np.full((K, K, CIN, COUT), 1e-3, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tl.nn.conv2d(tl.tensor(x), tl.tensor(w), 1, "SAME").numpy()
    exact, scale = _reference_conv(x, w), _reference_conv(np.abs(x), np.abs(w))
    assert _local_error(got, exact, scale) < LOCAL_TOL
