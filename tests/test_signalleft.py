"""tl.signal's filters: the SciPy-backed kernels, their vmap rule, and the names SciPy has that tl.signal lacked.

``FirFilter`` and ``AllPoleFilter`` against ``scipy.signal.lfilter`` and, without SciPy (the kernels' own loops,
forced), against ``tensorlib.testing.references.lfilter`` (SciPy's algorithm in NumPy); their gradients against
float64 central differences; ``tl.vmap`` over ``lfilter`` against a Python loop, run once on the whole batch.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.ops import iir
from tensorlib.testing import check_grads, references


def _butter_like(order, seed=0):
    """A stable denominator of ``order`` (real poles inside 0.9) and a numerator of ``order + 1`` taps."""
    rng = np.random.default_rng(seed)
    poles = rng.uniform(0.1, 0.9, order) * rng.choice([-1.0, 1.0], order)
    return rng.uniform(-1, 1, order + 1), np.poly(poles)


@pytest.fixture(params=["scipy", "own loops"])
def kernels(request, monkeypatch):
    """Both kernel paths: SciPy's ``lfilter`` (when importable) and the kernels' own loops."""
    if request.param == "scipy":
        pytest.importorskip("scipy.signal")
    else:
        monkeypatch.setattr(iir, "_scipy_lfilter", lambda: None)
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, axis", [((40,), -1), ((3, 4, 40), -1), ((40, 3, 2), 0), ((2, 40, 3), 1)])
def test_lfilter_matches_the_reference_on_both_kernel_paths(kernels, dtype, shape, axis):
    b, a = _butter_like(4)
    a = a * 2.5  # a[0] != 1
    x = np.random.default_rng(1).standard_normal(shape)
    got = tl.signal.lfilter(b.astype(dtype), a.astype(dtype), x.astype(dtype), axis=axis)
    assert got.dtype == dtype
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(got.numpy(), references.lfilter(b, a, x, axis), **tol)
    zshape = list(shape)
    zshape[axis] = 4
    zi = np.random.default_rng(2).standard_normal(zshape)
    y, zf = tl.signal.lfilter(b, a, x, axis=axis, zi=zi)
    want_y, want_zf = references.lfilter(b, a, x, axis, zi)
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(zf.numpy(), want_zf, rtol=1e-10, atol=1e-12)


def test_the_kernels_match_scipy_and_each_other_on_a_long_signal(monkeypatch):
    scipy_signal = pytest.importorskip("scipy.signal")
    b, a = _butter_like(8, seed=3)
    x = np.random.default_rng(4).standard_normal((2, 5000))
    fast = tl.signal.lfilter(b, a, x).numpy()
    np.testing.assert_allclose(fast, scipy_signal.lfilter(b, a, x), rtol=1e-9, atol=1e-11)
    monkeypatch.setattr(iir, "_scipy_lfilter", lambda: None)
    np.testing.assert_allclose(tl.signal.lfilter(b, a, x).numpy(), fast, rtol=1e-8, atol=1e-10)


def test_the_fir_op_with_more_taps_than_samples(kernels):
    b = np.arange(1.0, 8.0)
    x = np.array([1.0, -2.0, 0.5])
    want = np.convolve(b, x)[:3]  # the full convolution cut to x's length
    np.testing.assert_allclose(iir.fir_filter(tl.tensor(b), tl.tensor(x)).numpy(), want)


def test_lfilter_gradients_in_b_a_and_x(kernels):
    b, a = _butter_like(3, seed=5)
    x = np.random.default_rng(6).standard_normal((2, 12))
    check_grads(lambda b, a, x: tl.signal.lfilter(b, a * 1.7, x), (b, a, x), order=2, modes=("rev",))


def test_vmap_over_lfilter_matches_a_loop_and_runs_once(monkeypatch):
    b, a = _butter_like(3, seed=7)
    xs = np.random.default_rng(8).standard_normal((5, 3, 16))
    calls = []
    kernel = iir._linear.kernels["numpy"]
    monkeypatch.setitem(iir._linear.kernels, "numpy", lambda *arrays: calls.append(1) or kernel(*arrays))
    got = tl.vmap(lambda x: tl.signal.lfilter(b, a, x, axis=0))(xs)
    assert len(calls) == 1  # batched: once for the whole batch, not per element
    want = np.stack([references.lfilter(b, a, x, 0) for x in xs])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_vmap_of_per_example_gradients_matches_a_loop():
    b, a = _butter_like(2, seed=9)
    xs = np.random.default_rng(10).standard_normal((4, 10))
    w = np.random.default_rng(11).standard_normal(10)

    def loss(b, a, x):
        return tl.sum(tl.signal.lfilter(b, a, x) * w)

    grad = tl.grad(loss, argnums=(0, 1, 2))
    got = tl.vmap(grad, in_axes=(None, None, 0))(b, a, xs)
    for i, x in enumerate(xs):
        for g, want in zip(got, grad(b, a, x)):
            np.testing.assert_allclose(g.numpy()[i], want.numpy(), rtol=1e-10, atol=1e-12)
    # mapped coefficients: one filter per element (run per element), still right
    a_batch = np.stack([a, a * 1.5, a * 0.8, a * 2.0])
    got = tl.vmap(lambda a, x: tl.signal.lfilter(b, a, x))(a_batch, xs)
    want = np.stack([references.lfilter(b, ai, x) for ai, x in zip(a_batch, xs)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_lfilter_of_an_empty_signal_keeps_its_state():
    y, zf = tl.signal.lfilter([0.5, 0.2, 0.1], [2.0, -0.3, 0.1], np.zeros(0), zi=[1.0, 2.0])
    assert y.shape == (0,)
    np.testing.assert_array_equal(zf.numpy(), [1.0, 2.0])  # no sample consumed the state
    y, zf = tl.signal.lfilter([0.5, 0.2, 0.1], [1.0, -0.3, 0.1], np.zeros((3, 0)), zi=np.ones((3, 2)))
    assert y.shape == (3, 0) and zf.shape == (3, 2)
    np.testing.assert_array_equal(zf.numpy(), np.ones((3, 2)))


def test_sosfilt_takes_one_section_as_a_vector():
    section = np.array([0.2, 0.3, 0.1, 1.0, -0.5, 0.2])  # scipy.signal reads it as sos of one row
    x = np.random.default_rng(12).standard_normal(20)
    want = references.lfilter(section[:3], section[3:], x)
    np.testing.assert_allclose(tl.signal.sosfilt(section, x).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(tl.signal.sosfilt(section[None], x).numpy(), want, rtol=1e-12)


# ---------------------------------------------------------------- csd, coherence, resample_poly, decimate
def _two_signals(shape=(3, 200), seed=13):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    return x, rng.standard_normal(shape) + 0.5 * x


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"nperseg": 32},
        {"nperseg": 32, "average": "median"},
        {"nperseg": 33, "nfft": 64, "scaling": "spectrum"},
        {"nperseg": 32, "return_onesided": False},
        {"nperseg": 32, "window": "hamming", "detrend": "linear", "fs": 10.0},
        {"nperseg": 32, "noverlap": 5, "detrend": False},
    ],
)
def test_csd_and_coherence_match_scipy(kwargs):
    scipy_signal = pytest.importorskip("scipy.signal")
    x, y = _two_signals()
    for got, want in zip(tl.signal.csd(x, y, **kwargs), scipy_signal.csd(x, y, **kwargs)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)
    kwargs = {k: v for k, v in kwargs.items() if k not in ("average", "scaling", "return_onesided")}
    for got, want in zip(tl.signal.coherence(x, y, **kwargs), scipy_signal.coherence(x, y, **kwargs)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)


def test_csd_pads_the_shorter_signal_broadcasts_and_takes_complex_and_int_signals():
    scipy_signal = pytest.importorskip("scipy.signal")
    x, y = _two_signals()
    cases = [
        ((x, y[:, :150]), {"nperseg": 32}),
        ((x, y[:1]), {"nperseg": 32}),
        ((x.T, y.T), {"nperseg": 32, "axis": 0}),
        ((x + 1j * y, y), {"nperseg": 32}),  # two-sided
        ((np.arange(50) % 7, np.arange(50) % 5), {"nperseg": 16}),  # integers: float64
        ((x.astype(np.float32), y.astype(np.float32)), {"nperseg": 32}),  # complex64
    ]
    for args, kwargs in cases:
        f, p = tl.signal.csd(*args, **kwargs)
        want_f, want_p = scipy_signal.csd(*args, **kwargs)
        assert p.dtype == want_p.dtype and p.shape == want_p.shape
        np.testing.assert_allclose(f.numpy(), want_f)
        np.testing.assert_allclose(p.numpy(), want_p, rtol=1e-5 if p.dtype == np.complex64 else 1e-9, atol=1e-9)


def test_csd_without_scipy_is_the_mean_of_the_segments_cross_spectra():
    x, y = _two_signals((64,))
    window = np.hanning(17)[:-1]  # periodic Hann, 16 points
    segments = [(np.arange(16) + 8 * k) for k in range(7)]
    spectra = [
        np.conj(np.fft.rfft((x[s] - x[s].mean()) * window)) * np.fft.rfft((y[s] - y[s].mean()) * window)
        for s in segments
    ]
    want = np.mean(spectra, axis=0) / np.sum(window**2)
    want[1:-1] *= 2
    f, got = tl.signal.csd(x, y, nperseg=16)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(f.numpy(), np.fft.rfftfreq(16))
    # coherence of a signal with a scaled copy of itself is 1; with itself csd is welch's power
    np.testing.assert_allclose(tl.signal.coherence(x, -3 * x, nperseg=16)[1].numpy(), 1.0, rtol=1e-10)
    np.testing.assert_allclose(
        tl.signal.csd(x, x, nperseg=16)[1].numpy().real, tl.signal.welch(x, nperseg=16)[1].numpy(), rtol=1e-12
    )


def test_csd_and_coherence_gradients():
    x, y = _two_signals((40,), seed=14)
    check_grads(lambda x, y: tl.abs(tl.signal.csd(x, y, nperseg=16)[1]), (x, y), order=1, modes=("rev",))
    check_grads(lambda x, y: tl.signal.coherence(x, y, nperseg=16)[1], (x, y), order=1, modes=("rev",))


@pytest.mark.parametrize("up, down", [(3, 2), (2, 3), (1, 4), (4, 1), (7, 3), (160, 147)])
@pytest.mark.parametrize("padtype", ["constant", "symmetric", "reflect", "edge", "wrap", "mean", "median", "maximum"])
def test_resample_poly_matches_scipy(up, down, padtype):
    scipy_signal = pytest.importorskip("scipy.signal")
    x = np.random.default_rng(15).standard_normal((2, 50))
    got = tl.signal.resample_poly(x, up, down, axis=1, padtype=padtype)
    np.testing.assert_allclose(
        got.numpy(), scipy_signal.resample_poly(x, up, down, axis=1, padtype=padtype), rtol=1e-9, atol=1e-12
    )


def test_resample_poly_options_match_scipy():
    scipy_signal = pytest.importorskip("scipy.signal")
    rng = np.random.default_rng(16)
    x, taps = rng.standard_normal((2, 30)), rng.standard_normal(9)
    cases = [
        ((x, 3, 2), {"axis": 1, "cval": 1.5}),
        ((x.T, 3, 2), {}),
        ((x, 3, 2), {"axis": 1, "window": ("kaiser", 8.0)}),
        ((x, 3, 2), {"axis": 1, "window": taps}),
        ((x, 3, 2), {"axis": 1, "window": taps[:8]}),
        ((x + 1j * x[::-1], 3, 2), {"axis": 1}),
        ((np.arange(20), 3, 2), {}),  # integers: float64
        ((x[:, :3], 3, 2), {"axis": 1, "padtype": "reflect"}),  # shorter than the filter's reach
        ((x[:, :1], 5, 2), {"axis": 1}),
        ((x, 6, 4), {"axis": 1}),  # reduced to 3 / 2
    ]
    for args, kwargs in cases:
        got, want = tl.signal.resample_poly(*args, **kwargs), scipy_signal.resample_poly(*args, **kwargs)
        assert got.dtype == want.dtype, (args[1:], kwargs)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)
    got = tl.signal.resample_poly(x.astype(np.float32), 3, 2, axis=1)
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        got.numpy(), scipy_signal.resample_poly(x.astype(np.float32), 3, 2, axis=1), rtol=1e-5, atol=1e-5
    )
    same = tl.signal.resample_poly(np.arange(4), 2, 2)
    assert same.dtype == np.int64 and same.numpy().tolist() == [0, 1, 2, 3]


def test_resample_poly_without_scipy_designs_nothing_and_filters_by_definition():
    x = np.random.default_rng(17).standard_normal(11)
    taps = np.array([0.25, 0.5, 1.0, 0.5, 0.25])
    up, down = 2, 3
    upsampled = np.zeros(len(x) * up)
    upsampled[::up] = x
    full = np.convolve(upsampled, taps * up)  # zero-phase: the filter's centre (2 samples) dropped
    n_out = -(-len(x) * up // down)
    want = full[2 : 2 + (n_out - 1) * down + 1 : down]
    np.testing.assert_allclose(tl.signal.resample_poly(x, up, down, window=taps).numpy(), want, rtol=1e-12)
    check_grads(lambda x, h: tl.signal.resample_poly(x, up, down, window=h), (x, taps), order=2, modes=("rev",))


@pytest.mark.parametrize("ftype", ["iir", "fir"])
@pytest.mark.parametrize("zero_phase", [True, False])
@pytest.mark.parametrize("q, n", [(2, None), (3, None), (5, 4)])
def test_decimate_matches_scipy(ftype, zero_phase, q, n):
    scipy_signal = pytest.importorskip("scipy.signal")
    x = np.random.default_rng(18).standard_normal((2, 100))
    got = tl.signal.decimate(x, q, n=n, ftype=ftype, zero_phase=zero_phase)
    want = scipy_signal.decimate(x, q, n=n, ftype=ftype, zero_phase=zero_phase)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)


def test_decimate_dtypes_axes_and_gradient():
    scipy_signal = pytest.importorskip("scipy.signal")
    x = np.random.default_rng(19).standard_normal((2, 60))
    for args, kwargs in [
        ((x.T, 3), {"axis": 0}),
        ((np.arange(100), 3), {}),
        ((x + 1j * x[::-1], 3), {"ftype": "fir"}),
        ((x + 1j * x[::-1], 3), {"ftype": "fir", "zero_phase": False}),
    ]:
        got, want = tl.signal.decimate(*args, **kwargs), scipy_signal.decimate(*args, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)
    got = tl.signal.decimate(x.astype(np.float32), 3)
    assert got.dtype == np.float32
    with pytest.raises(ValueError, match="decimate: ftype must be 'iir' or 'fir'"):
        tl.signal.decimate(x, 3, ftype="kaiser")
    check_grads(lambda x: tl.signal.decimate(x, 3), (x[0, :40],), order=1, modes=("rev",))
    check_grads(
        lambda x: tl.signal.decimate(x, 3, ftype="fir", zero_phase=False), (x[0, :40],), order=1, modes=("rev",)
    )


# ---------------------------------------------------------------- filtfilt(method="gust")
@pytest.mark.parametrize(
    "shape, axis, kwargs",
    [((3, 60), -1, {}), ((60,), -1, {}), ((60, 3), 0, {}), ((3, 60), -1, {"irlen": 20}), ((3, 60), -1, {"irlen": 40})]
    + [((2, 3), -1, {})],  # shorter than the filter's order
)
def test_filtfilt_gust_matches_scipy(shape, axis, kwargs):
    scipy_signal = pytest.importorskip("scipy.signal")
    x = np.random.default_rng(20).standard_normal(shape)
    for b, a in [scipy_signal.butter(3, 0.2), ([0.3, 0.5, 0.2], [1.0]), ([3.0], [2.0]), _butter_like(2, seed=21)]:
        a = np.asarray(a) * 2.0  # a[0] != 1
        got = tl.signal.filtfilt(b, a, x, axis=axis, method="gust", **kwargs)
        want = scipy_signal.filtfilt(b, a, x, axis=axis, method="gust", **kwargs)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)


def _gust_reference(b, a, x):
    """Gustafsson's method (whole-signal responses) in NumPy on ``references.lfilter``: the correction ``W c``,
    ``c`` the least-squares solution of ``M c = y_bf - y_fb``."""
    order, n = max(len(a), len(b)) - 1, len(x)
    unit = np.eye(1, order).ravel()
    response = references.lfilter(b, a, np.zeros(n), -1, unit)[0]
    obs = np.stack([np.concatenate([np.zeros(k), response[: n - k]]) for k in range(order)], -1)
    s = np.stack([references.lfilter(b, a, column) for column in obs[::-1].T], -1)
    y_fb = references.lfilter(b, a, references.lfilter(b, a, x)[::-1])[::-1]
    y_bf = references.lfilter(b, a, references.lfilter(b, a, x[::-1])[::-1])
    c = np.linalg.lstsq(np.hstack([s[::-1] - obs, obs[::-1] - s]), y_bf - y_fb, rcond=None)[0]
    return y_fb + np.hstack([s[::-1], obs[::-1]]) @ c


def test_filtfilt_gust_against_a_numpy_transcription_and_its_gradient():
    b, a = _butter_like(2, seed=22)
    x = np.random.default_rng(23).standard_normal(40)
    got = tl.signal.filtfilt(b, a * 1.5, x, method="gust").numpy()
    np.testing.assert_allclose(got, _gust_reference(b, a * 1.5, x), rtol=1e-9, atol=1e-12)
    check_grads(lambda b, a, x: tl.signal.filtfilt(b, a, x, method="gust"), (b, a, x[:16]), order=1, modes=("rev",))


def test_lfilter_filters_a_complex_signal_as_its_parts():
    rng = np.random.default_rng(24)
    b, a = _butter_like(2, seed=25)
    x = rng.standard_normal((2, 30)) + 1j * rng.standard_normal((2, 30))
    zi = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    got = tl.signal.lfilter(b, a * 2, x)
    assert got.dtype == np.complex128
    want = references.lfilter(b, a * 2, x.real) + 1j * references.lfilter(b, a * 2, x.imag)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    y, zf = tl.signal.lfilter(b, a, x.T, axis=0, zi=zi.T)
    (yr, zr), (yi, zim) = (
        references.lfilter(b, a, part, 0, z) for part, z in ((x.real.T, zi.real.T), (x.imag.T, zi.imag.T))
    )
    np.testing.assert_allclose(y.numpy(), yr + 1j * yi, rtol=1e-12)
    np.testing.assert_allclose(zf.numpy(), zr + 1j * zim, rtol=1e-12)
    assert tl.signal.lfilter(np.float32(b), np.float32(a), x.astype(np.complex64)).dtype == np.complex64
    with pytest.raises(TypeError, match="lfilter: complex coefficients"):
        tl.signal.lfilter([1j], [1.0], x)
