"""Adversarial checks of tl.signal (frame, overlap_and_add, stft, inverse_stft, the windows), the segment
reductions and histogram: edge cases (windows no frame reaches, integer inputs, integer weights), against
NumPy/SciPy transcriptions (scipy.signal.get_window, np.histogram), float64 central differences, and
TensorFlow / PyTorch where installed."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl

RNG = np.random.default_rng(20261202)


def _griffin_lim_window(forward, step):
    """Griffin and Lim's eq. 7 in NumPy: the forward window over the sum of its squares at each sample's
    overlapping frames, 0 where that sum is 0 (a sample no window reaches)."""
    n = len(forward)
    denominator = np.array([np.sum(forward[i % step :: step] ** 2) for i in range(n)])
    return np.where(denominator == 0, 0.0, forward / np.where(denominator == 0, 1.0, denominator))


@pytest.mark.parametrize("length, step", [(8, 8), (2, 2), (4, 7), (9, 3), (16, 4)])
def test_inverse_stft_window_is_zero_where_no_frame_reaches(length, step):
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / length)
    got = tl.signal.inverse_stft_window_fn(step)(length, dtype=tl.float64).numpy()
    np.testing.assert_allclose(got, _griffin_lim_window(hann, step), rtol=1e-14, atol=0)
    # Frames that do not overlap (step == length): the round trip keeps every sample the window does not zero.
    x = RNG.standard_normal(4 * length)
    spec = tl.signal.stft(x, length, length, fft_length=length)
    back = tl.signal.inverse_stft(
        spec, length, length, fft_length=length, window_fn=tl.signal.inverse_stft_window_fn(length)
    )
    reached = np.tile(hann, 4) != 0
    np.testing.assert_allclose(back.numpy(), np.where(reached, x, 0.0), rtol=1e-12, atol=1e-12)
    tf = pytest.importorskip("tensorflow")
    theirs = tf.signal.inverse_stft_window_fn(step, lambda n, dtype: tf.constant(hann, dtype))(length, tf.float64)
    np.testing.assert_allclose(got, theirs.numpy(), rtol=1e-14, atol=0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_stft_of_integer_signals_is_complex128_as_numpy_fft(dtype):
    # DESIGN: float-valued functions of integers compute in float64 (np.fft.rfft of ints is complex128).
    x = (RNG.integers(-50, 50, 40) > 0) if dtype is np.bool_ else RNG.integers(-50, 50, 40).astype(dtype)
    frames = np.stack([x[i : i + 8] for i in range(0, 33, 4)]).astype(np.float64)
    want = np.fft.rfft(frames * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 8)))
    got = tl.signal.stft(x, 8, 4)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13, atol=1e-12)
    spectrum = RNG.integers(-5, 5, (3, 5)).astype(dtype)
    back = tl.signal.inverse_stft(spectrum, 8, 4, window_fn=None)
    want = np.fft.irfft(spectrum.astype(np.float64), 8)
    assert back.dtype == np.float64
    np.testing.assert_allclose(
        back.numpy(),
        [*want[0, :4], *(want[0, 4:] + want[1, :4]), *(want[1, 4:] + want[2, :4]), *want[2, 4:]],
        rtol=1e-13,
        atol=1e-13,
    )


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 8, 9])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_are_scipys(n, periodic):
    # TensorFlow's odd-length periodic windows are its symmetric ones; SciPy (fftbins=True), PyTorch and librosa
    # divide by n, the DFT-even window whose shifts sum to a constant (COLA at hop n / 2 for even n).
    signal = pytest.importorskip("scipy.signal")
    for name, fn in (("hann", tl.signal.hann_window), ("hamming", tl.signal.hamming_window)):
        want = signal.get_window(name, n, fftbins=periodic) if n else np.zeros(0)
        got = fn(n, periodic=periodic, dtype=tl.float64)
        assert got.dtype == np.float64 and got.shape == (n,)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(fn(n, periodic=periodic).numpy(), want.astype(np.float32), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("n_fft", [7, 8, 12])
def test_stft_is_torch_stft_with_fft_length_n_fft(n_fft):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(50)
    theirs = torch.stft(
        torch.tensor(x),
        n_fft,
        3,
        window=torch.hann_window(n_fft, dtype=torch.float64),
        center=False,
        return_complex=True,
    )
    ours = tl.signal.stft(x, n_fft, 3, fft_length=n_fft)
    np.testing.assert_allclose(ours.numpy().T, theirs.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_segment_mean_of_integers_is_float64(dtype):
    # DESIGN's integer rule (np.mean of ints is float64); tf.math.unsorted_segment_mean gives float64 too.
    data = RNG.integers(-(2**40), 2**40, (9, 2)).astype(dtype) if dtype is not np.bool_ else RNG.random((9, 2)) > 0.5
    ids = np.array([0, 2, 2, -1, 0, 0, 2, 3, 3])
    want = np.stack([data[ids == s].astype(np.float64).mean(0) if np.any(ids == s) else np.zeros(2) for s in range(4)])
    got = tl.segment_mean(data, ids, 4)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15, atol=0)
    np.testing.assert_allclose(tl.function(lambda d, i: tl.segment_mean(d, i, 4))(data, ids).numpy(), want, rtol=1e-15)
    tf = pytest.importorskip("tensorflow")
    if dtype is not np.bool_:  # (TensorFlow sums int32 in int32: values small enough not to wrap)
        small = data % 1000
        theirs = tf.math.unsorted_segment_mean(small, ids, 4).numpy()
        np.testing.assert_allclose(tl.segment_mean(small, ids, 4).numpy(), theirs, rtol=1e-15)


def test_segment_max_of_empty_and_nan_segments():
    # Empty: -inf (the identity of max, jax.ops.segment_max); a NaN member: NaN (np.maximum.reduce propagates it).
    data = np.array([1.0, 5.0, np.nan, 3.0, 2.0])
    ids = np.array([0, 0, 1, 1, 3])
    np.testing.assert_array_equal(tl.segment_max(data, ids, 4).numpy(), [5.0, np.nan, -np.inf, 2.0])
    np.testing.assert_array_equal(tl.segment_min(data, ids, 4).numpy(), [1.0, np.nan, np.inf, 2.0])
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    np.testing.assert_array_equal(np.asarray(jax.ops.segment_max(data, ids, 4)), [5.0, np.nan, -np.inf, 2.0])


@pytest.mark.parametrize("bins", [3, [0.0, 1.0, 4.0, 7.5]])
def test_histogram_sums_integer_and_complex_weights_in_their_dtype(bins):
    a = np.array([0.5, 1.0, 1.0, 2.5, 3.0, 4.0, 4.0, 7.0, -3.0])
    weights = np.array([2**60, 1, 3, 2**59, 5, 7, 2**61, -1, 11], np.int64)  # sums past 2**53: float64 rounds
    edges = np.linspace(0.5, 7.0, 4) if bins == 3 else np.array(bins)
    index = np.searchsorted(edges, a, side="right") - 1
    index[a == edges[-1]] = len(edges) - 2
    want = [
        sum(int(w) for w, i, v in zip(weights, index, a) if i == b and edges[0] <= v <= edges[-1]) for b in range(3)
    ]
    hist, got_edges = tl.histogram(a, bins=bins, weights=weights, range=(0.5, 7.0))
    assert hist.dtype == np.int64
    assert hist.numpy().tolist() == want
    np.testing.assert_allclose(got_edges.numpy(), edges, rtol=1e-15)
    if bins != 3:  # NumPy's path for equal bins sums through a float64 bincount, and rounds these
        np.testing.assert_array_equal(hist.numpy(), np.histogram(a, bins=bins, weights=weights)[0])
    complex_weights = RNG.standard_normal(9) + 1j * RNG.standard_normal(9)
    hist = tl.histogram(a, bins=bins, weights=complex_weights, range=(0.5, 7.0))[0]
    assert hist.dtype == np.complex128
    theirs = np.histogram(a, bins=bins, weights=complex_weights, range=(0.5, 7.0))[0]
    np.testing.assert_allclose(hist.numpy(), theirs, rtol=1e-14)
    traced = tl.function(lambda a, w: tl.histogram(a, bins=bins, weights=w, range=(0.5, 7.0))[0])(a, weights)
    assert traced.numpy().tolist() == want


@pytest.mark.parametrize("estimator", ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_histogram_bins_by_numpys_estimators(estimator, dtype):
    a = (RNG.standard_normal(200) * 10).astype(dtype)
    want_hist, want_edges = np.histogram(a, bins=estimator)
    hist, edges = tl.histogram(a, bins=estimator)
    assert edges.dtype == want_edges.dtype and hist.dtype == np.int64
    np.testing.assert_array_equal(edges.numpy(), want_edges)
    np.testing.assert_array_equal(hist.numpy(), want_hist)
    want_hist, want_edges = np.histogram(a, bins=estimator, range=(-5, 5), density=True)
    hist, edges = tl.histogram(a, bins=estimator, range=(-5, 5), density=True)
    np.testing.assert_array_equal(edges.numpy(), want_edges)
    np.testing.assert_allclose(hist.numpy(), want_hist, rtol=1e-14)


def test_histogram_estimator_errors():
    with pytest.raises(ValueError, match=r"histogram: 'foo' is not a valid estimator.*\(a float64\[3\]\)"):
        tl.histogram(np.ones(3), bins="foo")
    with pytest.raises(ValueError, match=r"histogram: bins='auto' estimates the bins from the values, unknown under"):
        tl.function(lambda a: tl.histogram(a, bins="auto"))(np.ones(3))


def test_gradient_takes_one_spacing_for_all_axes_only_as_a_scalar():
    # numpy.gradient: one coordinate array for a 2-D f is 'invalid number of arguments', not the same
    # coordinates along both axes; a scalar is every axis' step.
    f = np.arange(25.0).reshape(5, 5) ** 2
    coordinates = np.array([0.0, 1.0, 3.0, 4.0, 7.0])
    with pytest.raises(
        TypeError, match=r"gradient: give no spacing, one scalar, or one per axis \(2\), got 1 of shapes \[\(5,\)\]"
    ):
        tl.gradient(f, coordinates)
    for got, want in zip(tl.gradient(f, 0.5), np.gradient(f, 0.5)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(
        tl.gradient(f, coordinates, axis=1).numpy(), np.gradient(f, coordinates, axis=1), rtol=1e-14
    )


def test_segment_count_given_as_a_zero_d_integer_array_or_tensor():
    # tf.math.unsorted_segment_sum takes a tensor, jax.ops.segment_sum a concrete array: tl.max(ids) + 1 is one.
    data, ids = RNG.standard_normal((6, 2)), np.array([2, 0, 2, -1, 1, 4])
    want = np.stack([data[ids == s].sum(0) for s in range(5)])
    for count in (np.array(5), np.int32(5), tl.max(tl.tensor(ids)) + 1):
        np.testing.assert_allclose(tl.segment_sum(data, ids, count).numpy(), want, rtol=1e-15)
        assert tl.segment_max(data, ids, count).shape == (5, 2)
    for bad in (5.0, True, np.array([5])):
        with pytest.raises((ValueError, TypeError), match=r"segment_sum: num_segments must be an int >= 0"):
            tl.segment_sum(data, ids, bad)


def test_segment_sum_of_a_bool_mask_counts_as_numpy_sum():
    mask = RNG.random((12, 3)) > 0.3
    ids = RNG.integers(-1, 4, 12)
    want = np.stack([np.sum(mask[ids == s], axis=0) for s in range(4)])  # int64 counts
    got = tl.segment_sum(mask, ids, 4)
    assert got.dtype == np.int64 and want.max() > 1
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(tl.function(lambda m, i: tl.segment_sum(m, i, 4))(mask, ids).numpy(), want)
    hist = tl.histogram(np.arange(12.0), bins=3, weights=mask[:, 0])[0]
    np.testing.assert_array_equal(hist.numpy(), [np.sum(mask[i : i + 4, 0]) for i in (0, 4, 8)])


def test_signal_lengths_given_as_zero_d_integer_arrays_or_tensors():
    # tf.signal takes its lengths as tensors: frame(x, tf.constant(4), 2) works there.
    x = RNG.standard_normal(20)
    want = np.stack([x[i : i + 8] for i in range(0, 13, 4)])
    for length, step in ((np.array(8), np.int32(4)), (tl.tensor(8), tl.tensor(2) * 2)):
        np.testing.assert_array_equal(tl.signal.frame(x, length, step).numpy(), want)
        np.testing.assert_allclose(
            tl.signal.stft(x, length, step, fft_length=length, window_fn=None).numpy(), np.fft.rfft(want), rtol=1e-13
        )
        np.testing.assert_allclose(
            tl.signal.hann_window(length, dtype=tl.float64).numpy(), tl.signal.hann_window(8, dtype=tl.float64).numpy()
        )
    for bad in (8.0, True, np.array([8])):
        with pytest.raises(ValueError, match=r"frame: frame_length must be an int >= 1, got"):
            tl.signal.frame(x, bad, 2)
    with pytest.raises(ValueError, match=r"stft: frame_length must be an int >= 1, got 0"):
        tl.signal.stft(x, 0, 2)


@settings(max_examples=25)
@given(
    length=st.integers(2, 24),
    step_fraction=st.floats(0.05, 0.95),
    extra_fft=st.integers(0, 9),
    window=st.sampled_from(["hann", "hamming", "blackman", "triang"]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_inverse_stft_inverts_stft_where_the_windows_overlap(length, step_fraction, extra_fft, window, dtype):
    # Griffin-Lim's window (inverse_stft_window_fn) inverts stft for any hop below the frame length and any
    # fft_length >= frame_length, at every sample whose frames are all present (away from both ends).
    signal = pytest.importorskip("scipy.signal")
    step = max(1, int(length * step_fraction))
    forward = signal.get_window(window, length, fftbins=True)

    def window_fn(n, dtype=tl.float32):
        return tl.tensor(forward.astype(np.dtype(dtype)))

    x = RNG.standard_normal((2, 6 * length)).astype(dtype)
    spec = tl.signal.stft(x, length, step, fft_length=length + extra_fft, window_fn=window_fn)
    inverse = tl.signal.inverse_stft_window_fn(step, forward_window_fn=window_fn)
    back = tl.signal.inverse_stft(spec, length, step, fft_length=length + extra_fft, window_fn=inverse).numpy()
    covered = (spec.shape[-2] - 1) * step + length
    assert back.shape == (2, covered) and back.dtype == dtype
    tol = 2e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(back[:, length:-length], x[:, length : covered - length], rtol=tol, atol=tol)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_of_float32_samples_at_unix_times(edge_order):
    # NumPy differences the coordinates in their own dtype; in float32, 1.7e9 + 0.5 k are all one number, and the
    # weights were inf (the result NaN).
    f = np.sin(np.arange(8.0) * 0.7).astype(np.float32)
    for times in (1.7e9 + np.cumsum(RNG.uniform(0.25, 1.0, 8)), 1_700_000_000 + np.arange(0, 24, 3)):
        got = tl.gradient(f, times, edge_order=edge_order)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.numpy(), np.gradient(f, times, edge_order=edge_order), rtol=2e-6, atol=1e-6)
    two = np.stack([f, 2 * f, f * f])
    got = tl.gradient(two, 0.5, times, edge_order=edge_order)
    for g, want in zip(got, np.gradient(two, 0.5, times, edge_order=edge_order)):
        np.testing.assert_allclose(g.numpy(), want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min"])
def test_traced_segment_ids_of_the_wrong_length_name_the_op(how):
    # Under tl.function with sizes unknown, ids shorter or longer than data's rows raised NumPy's broadcasting or
    # boolean-index message, naming neither the op nor its inputs.
    fn = getattr(tl, f"segment_{how}")
    for data_spec in (tl.TensorSpec((5, 2), tl.float64), tl.TensorSpec((None, 2), tl.float64)):
        traced = tl.function(lambda d, i: fn(d, i, 3), input_signature=[data_spec, tl.TensorSpec((None,), tl.int64)])
        data = RNG.standard_normal((5, 2))
        ids = np.array([0, 2, 2, -1, 1])
        want = fn(data, ids, 3).numpy()
        np.testing.assert_array_equal(traced(data, ids).numpy(), want)
        for wrong in (ids[:4], np.append(ids, 0)):
            with pytest.raises(
                ValueError, match=rf"segment_{how}: data and segment_ids: dimension 0 .* is {len(wrong)}"
            ):
                traced(data, wrong)


def test_inverse_stft_window_of_a_learned_forward_window():
    # The denominator (the forward window's squares over the overlaps) was computed in NumPy from the window's
    # value: the gradient missed its part (0.15 against the true -0.13 here), and under tl.function a window
    # made from an argument had no value to read.
    w0 = 0.5 + RNG.random(8)
    z = RNG.standard_normal((5, 5)) + 1j * RNG.standard_normal((5, 5))

    def inverse(z, w):
        window_fn = tl.signal.inverse_stft_window_fn(3, forward_window_fn=lambda n, dtype=tl.float32: w)
        return tl.signal.inverse_stft(z, 8, 3, window_fn=window_fn)

    tl.testing.check_grads(lambda w: inverse(z, w), [w0], order=2)
    want = np.fft.irfft(z, 8) * _griffin_lim_window(w0, 3)
    expected = np.zeros(20)
    for i, frame in enumerate(want):
        expected[3 * i : 3 * i + 8] += frame
    np.testing.assert_allclose(inverse(z, w0).numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tl.function(inverse)(z, w0).numpy(), expected, rtol=1e-12, atol=1e-12)


def test_histogram_count_as_a_zero_d_array_or_tensor():
    # np.histogram(a, bins=np.array(5)) has 5 bins; ours refused it as 'at least two edges'.
    a = RNG.standard_normal(40)
    want_hist, want_edges = np.histogram(a, bins=5)
    for bins in (np.array(5), np.int32(5), tl.tensor(5)):
        hist, edges = tl.histogram(a, bins=bins)
        np.testing.assert_array_equal(hist.numpy(), want_hist)
        np.testing.assert_array_equal(edges.numpy(), want_edges)
    with pytest.raises(ValueError, match=r"histogram: bins must be a known count"):
        tl.function(lambda a, b: tl.histogram(a, bins=b))(a, tl.tensor(5))
