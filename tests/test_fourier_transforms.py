"""The fourier_gemm strategy's transforms (``_FourierPlan.spectrum`` / ``synthesis``) against NumPy's FFT.

The transforms store the half spectrum along H packed (the self-conjugate row frequencies keep no
imaginary row) and synthesize those rows from half their frequencies: these tests compare the
stored ``(images, F, 2, C)`` spectra with ``np.fft.fft2`` of the signal placed at its positions, for
distinct data per image and channel, odd and even transform lengths (one and two self-conjugate row
frequencies, and rows with none between them) and transform blocks of one or two images, so that a
mixed-up image, channel, frequency or part shows.
"""

import numpy as np
import pytest

from tensorlib.backends import numpy_nn as nn
from tensorlib.backends.numpy_nn import conv, fourier
from tensorlib.testing import references

# (x shape, w shape, strides, dilations, pads): their transform lengths (Lh, Lw) are in the ids.
CASES = [
    ((5, 14, 14, 3), (5, 5, 3, 4), (1, 1), (1, 1), ((2, 2), (2, 2))),  # (16, 16): the LeNet conv2 shape
    ((3, 7, 6, 2), (3, 2, 2, 3), (1, 1), (1, 1), ((0, 0), (0, 0))),  # (7, 6): odd Lh
    ((4, 9, 5, 2), (2, 3, 2, 2), (2, 1), (2, 1), ((1, 1), (1, 0))),  # strided, dilated
    ((3, 2, 5, 2), (2, 1, 2, 3), (1, 2), (1, 1), ((0, 0), (0, 1))),  # Lh = 2: both rows self-conjugate
    ((3, 1, 4, 2), (1, 3, 2, 3), (1, 1), (1, 2), ((0, 0), (2, 2))),  # Lh = 1
    ((2, 5, 3, 2), (4, 2, 2, 2), (1, 3), (1, 1), ((3, 3), (1, 1))),  # padding wider than the filter
]


def _plan(case, dtype="f8"):
    x_shape, w_shape, strides, dilations, pads = case
    return fourier._FourierPlan(
        conv._ConvShapes("conv2d", x_shape, w_shape, strides, dilations, pads, dtype, "fourier_gemm")
    )


def _case_id(case):
    plan = _plan(case)
    return f"L{plan.lengths}-x{case[0]}-s{case[2]}-d{case[3]}".replace(" ", "")


def _placed(signal, positions, lengths):
    """``signal`` ``(B, n_h, n_w, C)`` at its ``(offset, step)`` positions in an ``(B, Lh, Lw, C)``
    zero image, taken modulo the lengths (values that land on one position add)."""
    images, n_h, n_w, channels = signal.shape
    rows = [(positions[0][0] + positions[0][1] * i) % lengths[0] for i in range(n_h)]
    cols = [(positions[1][0] + positions[1][1] * j) % lengths[1] for j in range(n_w)]
    placed = np.zeros((images, *lengths, channels))
    np.add.at(placed, (slice(None), np.array(rows)[:, None], np.array(cols)[None, :]), signal)
    return placed, rows, cols


def _stored(spectrum, plan):
    """``(B, Fh, Lw)`` complex spectra from the stored ``(B, F, 2, C)`` layout, channels last."""
    images, _, _, channels = spectrum.shape
    parts = spectrum.reshape(images, plan.half_h, plan.lengths[1], 2, channels)
    return parts[..., 0, :] + 1j * parts[..., 1, :]


def _sides(plan, case):
    """The signal shapes and positions that the plan transforms: input, output gradient, filter taps."""
    x_shape, w_shape = case[0], case[1]
    out_hw = plan.conv.geometry.out_hw
    return [
        ((*x_shape[1:3],), plan.input_positions),
        (out_hw, plan.output_positions),
        ((*w_shape[:2],), plan.tap_positions),
    ]


@pytest.fixture(params=[64, 8 << 20], ids=["one_image_blocks", "one_block"])
def block_bytes(request, monkeypatch):
    monkeypatch.setattr(fourier, "_FOURIER_BLOCK_BYTES", request.param)
    return request.param


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_spectrum_is_the_half_fft2_of_the_placed_signal(case, block_bytes):
    plan = _plan(case)
    rng = np.random.default_rng(7)
    channels = 3
    for hw, positions in _sides(plan, case):
        signal = rng.standard_normal((plan.conv.batch, *hw, channels))
        out = np.full((plan.conv.batch, plan.frequencies, 2, channels), np.nan)
        got = plan.spectrum(signal, positions, out)
        placed, _, _ = _placed(signal, positions, plan.lengths)
        expected = np.fft.fft2(placed, axes=(1, 2))[:, : plan.half_h]
        np.testing.assert_allclose(_stored(got, plan), expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_synthesis_reads_the_signal_back_from_its_spectrum(case, block_bytes):
    plan = _plan(case)
    rng = np.random.default_rng(8)
    channels = 2
    for hw, positions in _sides(plan, case):
        signal = rng.standard_normal((plan.conv.batch, *hw, channels))
        placed, rows, cols = _placed(signal, positions, plan.lengths)
        spectra = np.fft.fft2(placed, axes=(1, 2))[:, : plan.half_h]
        stored = np.stack([spectra.real, spectra.imag], axis=-2).reshape(plan.conv.batch, plan.frequencies, 2, -1)
        out = np.full(signal.shape, np.nan)
        plan.synthesis(np.ascontiguousarray(stored), positions, out)
        expected = placed[:, np.array(rows)[:, None], np.array(cols)[None, :]]
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-5), (np.float16, 2e-2)])
@pytest.mark.parametrize("case", CASES[:3], ids=_case_id)
def test_fourier_conv_family_over_chunk_boundaries(case, dtype, rtol, monkeypatch):
    """An odd batch of distinct images in chunks of a few images and transform blocks of one or two,
    against the float64 references."""
    monkeypatch.setattr(fourier, "_FOURIER_CHUNK_BYTES", 1)
    monkeypatch.setattr(fourier, "_FOURIER_GRAM_CHUNK_BYTES", 1)
    monkeypatch.setattr(fourier, "_FOURIER_BLOCK_BYTES", 1)
    x_shape, w_shape, strides, dilations, pads = case
    rng = np.random.default_rng(9)
    x = rng.standard_normal((7, *x_shape[1:])).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    out_hw = conv._ConvShapes("conv2d", x.shape, w_shape, strides, dilations, pads, dtype, None).geometry.out_hw
    dy = rng.standard_normal((7, *out_hw, w_shape[3])).astype(dtype)
    x64, w64, dy64 = (a.astype(np.float64) for a in (x, w, dy))
    args = (strides, dilations, pads)
    results = {
        "conv2d": (
            nn.conv2d(x, w, *args, strategy="fourier_gemm"),
            references.conv2d(x64, w64, strides, pads, dilations),
        ),
        "input": (
            nn.conv2d_backprop_input(x.shape, w, dy, *args, strategy="fourier_gemm"),
            references.conv2d_backprop_input(x.shape, w64, dy64, strides, pads, dilations),
        ),
        "filter": (
            nn.conv2d_backprop_filter(x, w.shape, dy, *args, strategy="fourier_gemm"),
            references.conv2d_backprop_filter(x64, w.shape, dy64, strides, pads, dilations),
        ),
    }
    for name, (got, expected) in results.items():
        assert got.dtype == dtype, name
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max(), err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_synthesis_of_the_product_reads_only_what_the_product_writes(case, block_bytes):
    """The per-frequency product leaves the self-conjugate rows' frequencies past Lw / 2 unwritten
    (NaN here): the synthesized convolution must still be the reference's."""
    plan = _plan(case)
    x_shape, w_shape, strides, dilations, pads = case
    rng = np.random.default_rng(10)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    spectrum = plan.spectrum(x, plan.input_positions, np.empty((x.shape[0], plan.frequencies, 2, x.shape[3])))
    product = np.full((x.shape[0], plan.frequencies, 2, w.shape[3]), np.nan)
    plan.per_frequency_product(spectrum, plan.filter_products(w, conjugate=True), product)
    out = np.full((x.shape[0], *plan.conv.geometry.out_hw, w.shape[3]), np.nan)
    plan.synthesis(product, plan.output_positions, out)
    np.testing.assert_allclose(out, references.conv2d(x, w, strides, pads, dilations), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_filter_gradient_sums_only_what_synthesis_reads(case, monkeypatch):
    """The filter gradient's per-frequency sums skip the self-conjugate rows' frequencies past Lw / 2,
    which synthesis never reads: its scratch buffers filled with NaN beforehand (stale values from an
    earlier call), the gradient must still be the reference's."""
    x_shape, w_shape, strides, dilations, pads = case
    monkeypatch.setattr(fourier, "_parallel", lambda *args: False)  # one thread: the scratch filled here is used
    plan = _plan(case)
    in_c, out_c = w_shape[2], w_shape[3]
    for purpose, shape in [
        ("gram", (plan.frequencies, 2 * in_c, 2 * out_c)),
        ("partial_gram", (plan.frequencies, 2 * in_c, 2 * out_c)),
        ("filter_spectrum", (plan.frequencies, 2, in_c, out_c)),
    ]:
        fourier._scratch(purpose, shape, np.float64).fill(np.nan)
    rng = np.random.default_rng(11)
    x = rng.standard_normal(x_shape)
    dy = rng.standard_normal((x_shape[0], *plan.conv.geometry.out_hw, out_c))
    got = nn.conv2d_backprop_filter(x, w_shape, dy, strides, dilations, pads, strategy="fourier_gemm")
    want = references.conv2d_backprop_filter(x, w_shape, dy, strides, pads, dilations)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
