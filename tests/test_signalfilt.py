"""tl.signal's linear filters, resampling and spectrograms, attacked against scipy.signal.

``lfilter`` (with and without ``zi``), ``lfilter_zi``, ``filtfilt``, ``sosfilt``, ``sosfilt_zi`` and
``sosfiltfilt`` against ``scipy.signal`` in float64 on hypothesis-drawn lengths, orders, axes and leading
coefficients (stable and unstable filters), and against the NumPy references of
``tensorlib.testing.references`` (SciPy's transposed direct form II, one sample at a time) where SciPy is
missing; gradients in the coefficients, the signal and the state against float64 central differences
(``tl.testing.check_grads``); the same values under ``tl.function`` (sizes unknown) and ``tl.vmap``.
``resample`` and ``spectrogram`` against ``scipy.signal`` (and, without it, a round trip and Welch's estimate);
``torch_stft`` against ``torch.stft`` (when installed) and its definition in NumPy (``references.torch_stft``).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import check_grads, references

scipy_signal = pytest.importorskip("scipy.signal")


def _filter(seed, taps, order, leading=1.0, radius=0.9):
    """``(b, a)``: ``taps`` numerator coefficients, a denominator of ``order`` with poles of ``radius`` at
    most (above 1: unstable), scaled so that ``a[0] == leading``."""
    rng = np.random.default_rng(seed)
    poles = rng.uniform(0.1, radius, order) * rng.choice([-1.0, 1.0], order)
    return rng.uniform(-1, 1, taps), np.atleast_1d(np.poly(poles)) * leading


@st.composite
def filters_and_signals(draw, max_order=4):
    seed = draw(st.integers(0, 2**16))
    b, a = _filter(
        seed, draw(st.integers(1, 5)), draw(st.integers(0, max_order)), draw(st.sampled_from([1.0, 2.5, -0.4]))
    )
    n = draw(st.integers(1, 30))
    shape, axis = draw(st.sampled_from([((n,), -1), ((2, n), 1), ((n, 3), 0), ((2, n, 2), -2)]))
    x = np.random.default_rng(seed + 1).standard_normal(shape)
    return b, a, x, axis


@settings(max_examples=40, deadline=None)
@given(filters_and_signals())
def test_lfilter_and_its_state_match_scipy(case):
    b, a, x, axis = case
    np.testing.assert_allclose(tl.signal.lfilter(b, a, x, axis=axis).numpy(), scipy_signal.lfilter(b, a, x, axis=axis))
    shape = list(x.shape)
    shape[axis] = max(len(a), len(b)) - 1
    zi = np.random.default_rng(len(x.shape)).standard_normal(shape)
    y, zf = tl.signal.lfilter(b, a, x, axis=axis, zi=zi)
    want_y, want_zf = scipy_signal.lfilter(b, a, x, axis=axis, zi=zi)
    np.testing.assert_allclose(y.numpy(), want_y)
    np.testing.assert_allclose(zf.numpy(), want_zf)
    ref_y, ref_zf = references.lfilter(b, a, x, axis, zi)  # also without SciPy: its algorithm in NumPy
    np.testing.assert_allclose(y.numpy(), ref_y)
    np.testing.assert_allclose(zf.numpy(), ref_zf)


def test_lfilter_state_broadcasts_and_a_long_signal_runs_in_blocks():
    # zi of size 1 along a leading axis broadcasts (SciPy's); 1000 samples cross many of the kernel's blocks.
    b, a = _filter(3, 3, 4, 2.0, radius=0.97)
    x = np.random.default_rng(0).standard_normal((3, 1000))
    zi = np.random.default_rng(1).standard_normal((1, 4))
    y, zf = tl.signal.lfilter(b, a, x, zi=zi)
    want_y, want_zf = scipy_signal.lfilter(b, a, x, zi=zi)
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(zf.numpy(), want_zf, rtol=1e-9, atol=1e-12)


def test_unstable_filter_grows_as_scipy_and_fir_paths_agree():
    b, a = [1.0, 0.5], [1.0, -1.5, 0.2]  # a pole at 1.35: growth, not an error
    x = np.random.default_rng(2).standard_normal(200)
    got, want = tl.signal.lfilter(b, a, x).numpy(), scipy_signal.lfilter(b, a, x)
    assert np.abs(want[-1]) > 1e20
    np.testing.assert_allclose(got, want, rtol=1e-9)
    # A numerator beyond 64 taps goes through fftconvolve, shorter ones through shifted products.
    for taps in (3, 65, 150):
        fir = np.random.default_rng(taps).standard_normal(taps)
        x2 = np.random.default_rng(9).standard_normal((2, 300))
        np.testing.assert_allclose(
            tl.signal.lfilter(fir, 2.0, x2).numpy(), scipy_signal.lfilter(fir, 2.0, x2), atol=1e-10
        )


def test_lfilter_dtypes():
    b, a = np.array([1.0, 0.5], np.float32), np.array([1.0, -0.5], np.float32)
    x = np.arange(5, dtype=np.float32)
    y = tl.signal.lfilter(b, a, x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), scipy_signal.lfilter(b, a, x), rtol=1e-6)
    assert tl.signal.lfilter(b.astype(np.float64), a, x).dtype == np.float64
    assert tl.signal.lfilter([1, 2], [1], np.arange(4)).dtype == np.float64  # integers: float64


def test_leading_zero_coefficient_is_an_error_eager_and_traced():
    with pytest.raises(ValueError, match=r"^lfilter: a\[0\] == 0 leaves the recursion undefined"):
        tl.signal.lfilter([1.0], [0.0, 1.0], np.ones(3))
    with pytest.raises(ValueError, match=r"^filtfilt: a\[0\] == 0"):
        tl.signal.filtfilt([1.0], [0.0, 1.0], np.ones(30))
    traced = tl.function(lambda a, x: tl.signal.lfilter([1.0], a, x))
    np.testing.assert_allclose(traced(np.array([2.0, 1.0]), np.ones(3)).numpy(), [0.5, 0.25, 0.375])
    with pytest.raises(ValueError, match=r"(AllPole|Linear)Filter: a\[0\] == 0 leaves the recursion undefined"):
        traced(np.array([0.0, 1.0]), np.ones(3))


@pytest.mark.parametrize("leading", [1.0, -2.0])
def test_lfilter_gradients_in_coefficients_signal_and_state(leading):
    b, a = _filter(5, 3, 2, leading)
    rng = np.random.default_rng(6)
    x, zi = rng.standard_normal((2, 7)), rng.standard_normal((2, 2))
    check_grads(lambda b, a, x: tl.signal.lfilter(b, a, x), (b, a, x), order=2)
    check_grads(lambda b, a, x, zi: tl.signal.lfilter(b, a, x, zi=zi), (b, a, x, zi), order=2)
    check_grads(lambda b, a, x: tl.signal.lfilter(b, a, x, axis=0), (b, a, x.T), order=1)
    check_grads(lambda b, a: tl.signal.lfilter_zi(b, a), (b, a), order=2)


def test_filters_trace_with_unknown_sizes_and_vmap():
    b, a = _filter(7, 3, 2, 1.5)
    rng = np.random.default_rng(8)
    x, zi = rng.standard_normal((2, 40)), rng.standard_normal((2, 2))
    spec = tl.TensorSpec((None, None), tl.float64)
    traced = tl.function(lambda x, zi: tl.signal.lfilter(b, a, x, zi=zi)).get_graph(spec, spec)
    for got, want in zip(traced(x, zi), scipy_signal.lfilter(b, a, x, zi=zi)):
        np.testing.assert_allclose(got.numpy(), want)
    traced = tl.function(lambda x: tl.signal.filtfilt(b, a, x)).get_graph(spec)
    np.testing.assert_allclose(traced(x).numpy(), scipy_signal.filtfilt(b, a, x))
    sos = scipy_signal.butter(4, 0.25, output="sos")
    # A closed-over sos is captured, its values unknown when traced: the default padlen (15 here) is given.
    traced = tl.function(lambda x: tl.signal.sosfiltfilt(sos, x, padlen=15)).get_graph(spec)
    np.testing.assert_allclose(traced(x).numpy(), scipy_signal.sosfiltfilt(sos, x))
    grad = tl.grad(lambda a, x: tl.sum(tl.signal.lfilter(b, a, x) ** 2), argnums=(0, 1))
    traced = tl.function(grad).get_graph(tl.TensorSpec((3,), tl.float64), spec)
    for got, want in zip(traced(a, x), grad(a, x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    denominators = np.stack([a, a * 2.0, _filter(9, 1, 2)[1]])
    signals = rng.standard_normal((3, 10))
    mapped = tl.vmap(lambda a, x: tl.signal.lfilter(b, a, x))(denominators, signals)
    for k in range(3):
        np.testing.assert_allclose(mapped.numpy()[k], scipy_signal.lfilter(b, denominators[k], signals[k]))


@settings(max_examples=25, deadline=None)
@given(filters_and_signals(max_order=3), st.sampled_from(["odd", "even", "constant", None]), st.booleans())
def test_filtfilt_matches_scipy(case, padtype, default_padlen):
    b, a, x, axis = case
    n = x.shape[axis]
    padlen = None if default_padlen else min(n - 1, 3)
    if padlen is None and padtype is not None and n <= 3 * max(len(a), len(b)):
        with pytest.raises(ValueError, match=r"^filtfilt: the length of x along axis \d \(\d+\) must be greater"):
            tl.signal.filtfilt(b, a, x, axis=axis, padtype=padtype)
        return
    got = tl.signal.filtfilt(b, a, x, axis=axis, padtype=padtype, padlen=padlen).numpy()
    if max(len(a), len(b)) == 1:  # a gain, applied twice (SciPy's lfilter_zi fails on a filter of order 0)
        np.testing.assert_allclose(got, x * (b[0] / a[0]) ** 2)
        return
    np.testing.assert_allclose(got, scipy_signal.filtfilt(b, a, x, axis=axis, padtype=padtype, padlen=padlen))
    np.testing.assert_allclose(got, references.filtfilt(b, a, x, axis, padtype, padlen))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.sampled_from(["lowpass", "highpass", "bandpass"]), st.integers(0, 2**16))
def test_sos_filters_match_scipy(order, kind, seed):
    band = [0.2, 0.5] if kind == "bandpass" else 0.3
    sos = scipy_signal.butter(order, band, btype=kind, output="sos")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 60))
    np.testing.assert_allclose(tl.signal.sosfilt(sos, x).numpy(), scipy_signal.sosfilt(sos, x), atol=1e-12)
    zi = rng.standard_normal((len(sos), 2, 2))
    for got, want in zip(tl.signal.sosfilt(sos, x, zi=zi), scipy_signal.sosfilt(sos, x, zi=zi)):
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    zi_moved = np.moveaxis(zi, 1, 2)  # axis=0: the state's axis 1 is the filtered one
    for got, want in zip(
        tl.signal.sosfilt(sos, x.T, axis=0, zi=zi_moved), scipy_signal.sosfilt(sos, x.T, axis=0, zi=zi_moved)
    ):
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    np.testing.assert_allclose(tl.signal.sosfilt_zi(sos).numpy(), scipy_signal.sosfilt_zi(sos), atol=1e-12)
    np.testing.assert_allclose(tl.signal.sosfiltfilt(sos, x).numpy(), scipy_signal.sosfiltfilt(sos, x), atol=1e-12)
    np.testing.assert_allclose(tl.signal.sosfiltfilt(sos, x).numpy(), references.sosfiltfilt(sos, x), atol=1e-12)


def test_sos_zero_coefficients_shorten_the_default_padding_as_scipy():
    sos = scipy_signal.butter(3, 0.3, output="sos")  # odd order: one b2 and one a2 are 0
    assert np.sum(sos[:, 2] == 0) == np.sum(sos[:, 5] == 0) == 1
    x = np.random.default_rng(4).standard_normal(14)  # padlen 3 * (2 * 2 + 1 - 1) = 12 < 14; 15 would refuse
    np.testing.assert_allclose(tl.signal.sosfiltfilt(sos, x).numpy(), scipy_signal.sosfiltfilt(sos, x))
    spec = tl.TensorSpec((None,), tl.float64)
    with pytest.raises(ValueError, match=r"^sosfiltfilt: the default padlen depends on sos's values"):
        tl.function(lambda s, x: tl.signal.sosfiltfilt(s, x)).get_graph(tl.TensorSpec((2, 6), tl.float64), spec)


def test_zero_phase_and_sos_gradients():
    b, a = _filter(11, 2, 2, 1.2, radius=0.8)
    x = np.random.default_rng(12).standard_normal(20)
    check_grads(lambda b, a, x: tl.signal.filtfilt(b, a, x), (b, a, x), order=1)
    sos = scipy_signal.butter(3, 0.3, output="sos")

    def with_unit_a0(free):  # sos's a0 column must stay 1 (SciPy's rule): differentiate in the other five
        return tl.concat([free[:, :3], tl.ones((free.shape[0], 1), dtype=tl.float64), free[:, 3:]], 1)

    free, zi = np.delete(sos, 3, axis=1), np.random.default_rng(13).standard_normal((2, 2))
    check_grads(lambda s, x: tl.signal.sosfiltfilt(with_unit_a0(s), x), (free, x), order=1)
    check_grads(lambda s, x, zi: tl.signal.sosfilt(with_unit_a0(s), x, zi=zi), (free, x, zi), order=1)
    check_grads(lambda s: tl.signal.sosfilt_zi(with_unit_a0(s)), (free,), order=1)


def test_star_import_gives_the_public_names():
    namespace = {}
    exec("from tensorlib.signal import *", namespace)  # noqa: S102 - the statement under test
    public = {name for name in namespace if not name.startswith("__")}
    assert public == set(tl.signal.__all__)
    assert {"lfilter", "lfilter_zi", "filtfilt", "sosfilt", "sosfilt_zi", "sosfiltfilt"} <= public
    assert all(callable(getattr(tl.signal, name)) for name in tl.signal.__all__)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 20),
    st.integers(1, 25),
    st.sampled_from([None, "hann", "values", "callable"]),
    st.sampled_from(["real", "complex", "freq"]),
    st.integers(0, 2**16),
)
def test_resample_matches_scipy(n, num, window, kind, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, n))
    if kind != "real":
        x = x + 1j * rng.standard_normal((2, n))
    if window == "values":
        window = rng.uniform(0.5, 1.5, n)
    elif window == "callable":
        window = lambda f: np.exp(-(f**2))
    domain = "freq" if kind == "freq" else "time"
    got = tl.signal.resample(x, num, axis=1, window=window, domain=domain)
    want = scipy_signal.resample(x, num, axis=1, window=window, domain=domain)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    t = np.arange(n) * 0.5 + 1.0
    if n > 1:
        got_t = tl.signal.resample(x.T, num, t=t, window=window, domain=domain)[1]
        np.testing.assert_allclose(got_t.numpy(), scipy_signal.resample(x.T, num, t=t, window=window, domain=domain)[1])


def test_resample_round_trip_dtype_and_gradient():
    # Without SciPy: an odd length up and back down returns the signal (no Nyquist bin is split or united).
    x = np.random.default_rng(3).standard_normal(9)
    up = tl.signal.resample(x, 20)
    np.testing.assert_allclose(tl.signal.resample(up, 9).numpy(), x, atol=1e-12)
    assert tl.signal.resample(x.astype(np.float32), 6).dtype == np.float32
    assert tl.signal.resample(np.arange(6), 4).dtype == np.float64
    for num in (4, 9, 14):
        check_grads(lambda x, num=num: tl.signal.resample(x, num), (x,), order=2)
    with pytest.raises(ValueError, match=r"^resample: num must be an int >= 1, got 0"):
        tl.signal.resample(x, 0)
    with pytest.raises(ValueError, match=r"^resample: domain must be 'time' or 'freq'"):
        tl.signal.resample(x, 4, domain="space")


@settings(max_examples=30, deadline=None)
@given(
    st.integers(8, 40),
    st.sampled_from(["psd", "complex", "magnitude", "angle", "phase"]),
    st.sampled_from([("tukey", 0.25), "hann", ("tukey", 0.7), "tukey", "boxcar"]),
    st.sampled_from(["density", "spectrum"]),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_spectrogram_matches_scipy(n, mode, window, scaling, onesided, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, n, 3))
    nperseg = int(rng.integers(3, n + 1))
    kwargs = {
        "fs": 2.5,
        "window": window,
        "nperseg": nperseg,
        "scaling": scaling,
        "return_onesided": onesided,
        "mode": mode,
        "axis": 1,
    }
    for k, (got, want) in enumerate(zip(tl.signal.spectrogram(x, **kwargs), scipy_signal.spectrogram(x, **kwargs))):
        assert got.shape == want.shape
        if k == 2 and mode in ("angle", "phase"):  # the angle of a real value is 0 or pi, pi's sign a rounding's,
            # and the angle of a (detrended) zero is any; unwrapping adds multiples of 2 pi
            kept = np.abs(scipy_signal.spectrogram(x, **{**kwargs, "mode": "complex"})[2]) > 1e-9
            got, want = np.exp(1j * got.numpy()) * kept, np.exp(1j * want) * kept
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-10)


def test_spectrogram_averages_to_welch_and_is_differentiable():
    # Without SciPy: the mean of the psd spectrogram over time is Welch's estimate with the same segments.
    x = np.random.default_rng(5).standard_normal(50)
    f, t, sxx = tl.signal.spectrogram(x, fs=3.0, window="hann", nperseg=10, noverlap=5)
    fw, pw = references.welch(x, fs=3.0, window="hann", nperseg=10, noverlap=5)
    np.testing.assert_allclose(f.numpy(), fw)
    np.testing.assert_allclose(sxx.numpy().mean(axis=-1), pw, rtol=1e-12)
    np.testing.assert_allclose(t.numpy(), (5 + 5 * np.arange(9)) / 3.0)
    check_grads(lambda x: tl.signal.spectrogram(x, nperseg=12, mode="psd")[2], (x,), order=2)
    check_grads(lambda x: tl.signal.spectrogram(x, nperseg=12, mode="complex")[2], (x,), order=1)
    with pytest.raises(ValueError, match=r"^spectrogram: mode must be 'psd', 'complex'"):
        tl.signal.spectrogram(x, mode="power")


@st.composite
def torch_stft_arguments(draw):
    n_fft = draw(st.integers(2, 16))
    win_length = draw(st.integers(1, n_fft))
    window = draw(st.sampled_from([None, "hann", "random"]))
    pad_mode = draw(st.sampled_from(["reflect", "constant", "replicate", "circular"]))
    center = draw(st.booleans())
    least = n_fft // 2 + 1 if center else n_fft
    shape = draw(st.sampled_from([(draw(st.integers(least, 40)),), (2, draw(st.integers(least, 40)))]))
    return {
        "x": np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape),
        "n_fft": n_fft,
        "hop": draw(st.integers(1, 8) | (st.none() if n_fft >= 4 else st.nothing())),
        "win_length": win_length,
        "window": None
        if window is None
        else np.hanning(win_length + 2)[1:-1]
        if window == "hann"
        else np.random.default_rng(win_length).uniform(0.1, 1.0, win_length),
        "center": center,
        "pad_mode": pad_mode,
        "normalized": draw(st.booleans()),
        "onesided": draw(st.booleans()),
    }


def _torch_stft_call(args, fn):
    return fn(args["x"], args["n_fft"], hop_length=args["hop"], win_length=args["win_length"], window=args["window"],
              center=args["center"], pad_mode=args["pad_mode"], normalized=args["normalized"],
              onesided=args["onesided"], return_complex=True)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(torch_stft_arguments())
def test_torch_stft_matches_its_definition(args):
    got = _torch_stft_call(args, tl.signal.torch_stft)
    want = _torch_stft_call(args, references.torch_stft)  # torch.stft's definition in NumPy
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(torch_stft_arguments())
def test_torch_stft_matches_torch(args):
    torch = pytest.importorskip("torch")
    got = _torch_stft_call(args, tl.signal.torch_stft)
    window = None if args["window"] is None else torch.tensor(args["window"])
    want = _torch_stft_call({**args, "x": torch.tensor(args["x"]), "window": window}, torch.stft).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_torch_stft_options_errors_and_gradients():
    x = np.random.default_rng(6).standard_normal(32)
    window = np.hanning(8)
    parts = tl.signal.torch_stft(x, 8, 2, window=window, return_complex=False)
    whole = tl.signal.torch_stft(x, 8, 2, window=window, return_complex=True).numpy()
    np.testing.assert_array_equal(parts.numpy(), np.stack([whole.real, whole.imag], -1))
    with pytest.raises(ValueError, match=r"^torch_stft: stft requires the return_complex parameter be given"):
        tl.signal.torch_stft(x, 8)
    with pytest.raises(ValueError, match=r"^torch_stft: expected 0 < win_length <= n_fft"):
        tl.signal.torch_stft(x, 8, win_length=9, return_complex=True)
    with pytest.raises(ValueError, match=r"^torch_stft: pad_mode must be one of"):
        tl.signal.torch_stft(x, 8, pad_mode="edge", return_complex=True)
    check_grads(lambda x, w: tl.signal.torch_stft(x, 8, 3, window=w, return_complex=True), (x, window), order=2)
