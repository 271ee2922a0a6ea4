"""tl.signal's FFT-based convolution and analytic signal (fftconvolve, oaconvolve, hilbert), re-attacking tl.fft and
tl.signal: against direct-summation NumPy references (a loop over the taps of the second input, written beside the
transforms, never through them), closed forms (the analytic signal of a cosine), float64 central differences to
second order, traced graphs with unknown sizes == eager; against scipy.signal where installed."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import references

RNG = np.random.default_rng(20261203)


def _direct(a, b):
    """The full 1-d convolution, a sum of shifted copies of ``a``."""
    out = np.zeros(len(a) + len(b) - 1, np.result_type(a, b, np.float64))
    for j, bj in enumerate(b):
        out[j : j + len(a)] += a * bj
    return out


CONVOLUTIONS = [  # shapes, mode, axes
    ((7,), (3,), "full", None),
    ((7,), (4,), "same", None),
    ((3,), (6,), "same", None),  # "same" keeps in1's length, the shorter one's
    ((3,), (6,), "valid", None),  # the larger second: SciPy swaps them
    ((4, 5), (3, 2), "full", None),
    ((4, 5), (2, 3), "same", (1, 0)),
    ((5, 6), (5, 4), "valid", -1),  # axis 0 is not convolved (its sizes must broadcast)
    ((5, 6), (1, 4), "valid", -1),
    ((3, 1, 5), (1, 4, 2), "full", None),  # sizes of 1 broadcast (no convolution along them)
    ((2, 6), (2, 3), "same", 1),
]


@pytest.mark.parametrize("s1, s2, mode, axes", CONVOLUTIONS)
@pytest.mark.parametrize("name", ["fftconvolve", "oaconvolve"])
def test_fft_convolution_is_the_direct_sum(name, s1, s2, mode, axes):
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    got = getattr(tl.signal, name)(a, b, mode=mode, axes=axes)
    want = references.fftconvolve(a, b, mode, axes)
    assert got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    # complex inputs: complex128, the same sums
    za, zb = a + 1j * RNG.standard_normal(s1), b - 1j * RNG.standard_normal(s2)
    np.testing.assert_allclose(
        getattr(tl.signal, name)(za, zb, mode=mode, axes=axes).numpy(),
        references.fftconvolve(za, zb, mode, axes),
        rtol=1e-12,
        atol=1e-12,
    )


def test_the_reference_is_numpys_convolve_in_one_dimension():
    a, b = RNG.standard_normal(9), RNG.standard_normal(4)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(references.fftconvolve(a, b, mode), np.convolve(a, b, mode), rtol=1e-13)
        np.testing.assert_allclose(tl.signal.fftconvolve(a, b, mode).numpy(), np.convolve(a, b, mode), atol=1e-12)
    np.testing.assert_allclose(references.fftconvolve(a, b), _direct(a, b), rtol=1e-13)


@pytest.mark.parametrize(
    "d1, d2, want",
    [
        (np.float32, np.float32, np.float32),
        (np.float16, np.float16, np.float32),  # SciPy transforms float16 in float32
        (np.int64, np.int32, np.float64),
        (np.bool_, np.float32, np.float64),  # each input read alone: the bools are float64
        (np.int32, np.float32, np.float64),
        (np.complex64, np.float32, np.complex64),
        (np.float32, np.complex128, np.complex128),
    ],
)
def test_result_dtypes_are_scipys(d1, d2, want):
    a, b = (RNG.integers(0, 3, 6) > 0).astype(d1), RNG.integers(-3, 3, 4).astype(d2)
    got = tl.signal.fftconvolve(a, b)
    assert got.dtype == want
    tol = 1e-5 if np.dtype(want).itemsize <= 8 else 1e-12
    np.testing.assert_allclose(got.numpy(), _direct(a.astype(np.complex128), b), rtol=tol, atol=tol)


def test_without_a_convolved_axis_it_is_a_product_and_empty_inputs_give_scipys_empty_result():
    # Every axis of size 1 in one input: SciPy multiplies, in the inputs' own dtypes.
    a, b = np.arange(3, dtype=np.int64).reshape(3, 1), np.arange(4, dtype=np.int64).reshape(1, 4)
    got = tl.signal.fftconvolve(a, b)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), a * b)
    assert float(tl.signal.fftconvolve(np.float64(2.0), np.float64(3.0))) == 6.0
    empty = tl.signal.fftconvolve(np.ones((0, 3)), np.ones((2, 3)))
    assert empty.shape == (0,) and empty.dtype == np.float64


@pytest.mark.parametrize("s1, s2, mode, axes", CONVOLUTIONS[:8:2])
def test_fft_convolution_gradients_to_second_order(s1, s2, mode, axes):
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    w = RNG.standard_normal(references.fftconvolve(a, b, mode, axes).shape)
    tl.testing.check_grads(lambda a, b: tl.sum(tl.signal.fftconvolve(a, b, mode, axes) ** 2 * w), [a, b], order=2)


def test_complex_fft_convolution_gradient_is_the_conjugate_correlation():
    # JAX's convention (docs/complex.md): for L = Re(sum(conj(w) y)), y = a * b, the gradient dL/dRe(a) - i dL/dIm(a)
    # is sum_k conj(w[k]) b[k - j] = conj(numpy.correlate(w, b)[j]).
    a = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
    b = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    w = RNG.standard_normal(7) + 1j * RNG.standard_normal(7)
    ga, gb = tl.grad(lambda a, b: tl.sum(tl.real(tl.signal.fftconvolve(a, b) * np.conj(w))), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga.numpy(), np.conj(np.correlate(w, b, "valid")), atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), np.conj(np.correlate(w, a, "valid")), atol=1e-12)


def test_fft_convolution_traces_with_an_unknown_batch_and_refuses_unknown_convolved_sizes():
    a, b = RNG.standard_normal((3, 7)), RNG.standard_normal((3, 4))
    specs = [tl.TensorSpec((None, 7), tl.float64), tl.TensorSpec((None, 4), tl.float64)]
    traced = tl.function(lambda a, b: tl.signal.fftconvolve(a, b, "same", axes=1), input_signature=specs)
    for k in (3, 2):
        want = references.fftconvolve(a[:k], b[:k], "same", 1)
        np.testing.assert_allclose(traced(a[:k], b[:k]).numpy(), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"fftconvolve: the sizes of the convolved axes \(0,\) must be known"):
        tl.function(lambda a, b: tl.signal.fftconvolve(a, b)).get_graph(*specs)


def test_fft_convolution_errors_name_the_function_shapes_and_dtypes():
    with pytest.raises(ValueError, match=r"fftconvolve: in1 and in2 should have the same dimensionality"):
        tl.signal.fftconvolve(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match=r"oaconvolve: incompatible shapes along axis 0, which is not convolved"):
        tl.signal.oaconvolve(np.ones((5, 6)), np.ones((2, 4)), axes=-1)
    with pytest.raises(ValueError, match=r"fftconvolve: for 'valid' mode, one input must be at least as large"):
        tl.signal.fftconvolve(np.ones((2, 3)), np.ones((3, 2)), "valid")


@pytest.mark.parametrize("n", [8, 9])
def test_hilbert_of_a_cosine_is_the_complex_exponential(n):
    # Whole periods: the analytic signal of cos(w t) is exp(i w t), for odd and even lengths.
    t = np.arange(n)
    x = np.cos(2 * np.pi * 2 * t / n)
    np.testing.assert_allclose(tl.signal.hilbert(x).numpy(), np.exp(2j * np.pi * 2 * t / n), atol=1e-12)
    batch = np.stack([x, 3 * x], axis=1)  # along axis 0
    np.testing.assert_allclose(
        tl.signal.hilbert(batch, axis=0).numpy(), np.exp(2j * np.pi * 2 * t / n)[:, None] * [1, 3], atol=1e-12
    )


@pytest.mark.parametrize(
    "dtype, want", [(np.float32, np.complex64), (np.float16, np.complex64), (np.int64, np.complex128)]
)
def test_hilbert_dtypes_and_n_against_the_reference(dtype, want):
    x = (RNG.standard_normal((3, 6)) * 4).astype(dtype)
    for n, axis in [(None, -1), (4, 1), (9, 0), (1, 0)]:
        got = tl.signal.hilbert(x, n, axis)
        assert got.dtype == want
        np.testing.assert_allclose(got.numpy(), references.hilbert(x, n, axis), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(x, x.copy())


def test_hilbert_gradients_traced_and_errors():
    x = RNG.standard_normal((2, 7))
    w = RNG.standard_normal((2, 6))
    tl.testing.check_grads(lambda x: tl.sum(tl.abs(tl.signal.hilbert(x, 6)) ** 2 * w), [x], order=2)
    traced = tl.function(lambda x: tl.signal.hilbert(x), input_signature=[tl.TensorSpec((None, 7), tl.float64)])
    np.testing.assert_allclose(traced(x).numpy(), references.hilbert(x), atol=1e-12)
    with pytest.raises(ValueError, match=r"hilbert: the length of axis 0 must be known, or N given"):
        tl.function(lambda x: tl.signal.hilbert(x, axis=0)).get_graph(tl.TensorSpec((None, 7), tl.float64))
    with pytest.raises(TypeError, match=r"hilbert: signals must be real, got complex128"):
        tl.signal.hilbert(x + 1j)
    with pytest.raises(ValueError, match=r"hilbert: axis 2 is out of range for a tensor of rank 2 \(x shape \(2, 7\)"):
        tl.signal.hilbert(x, axis=2)


def test_against_scipy_signal():
    signal = pytest.importorskip("scipy.signal")
    for s1, s2, mode, axes in CONVOLUTIONS:
        a, b = RNG.standard_normal(s1).astype(np.float32), RNG.standard_normal(s2).astype(np.float32)
        for name in ("fftconvolve", "oaconvolve"):
            want = getattr(signal, name)(a, b, mode=mode, axes=axes)
            got = getattr(tl.signal, name)(a, b, mode=mode, axes=axes)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    x = RNG.standard_normal((4, 7))
    for n, axis in [(None, -1), (5, 0), (10, 1)]:
        np.testing.assert_allclose(tl.signal.hilbert(x, n, axis).numpy(), signal.hilbert(x, n, axis), atol=1e-12)


@pytest.mark.parametrize(
    "axis, exc, match", [(3, ValueError, "axis 3 is out of range"), (1.0, TypeError, "axis must be")]
)
def test_frame_axis_errors_name_the_function(axis, exc, match):
    # Was "axis 3 is out of range for a tensor of rank 1": no function, no shape.
    with pytest.raises(exc, match=rf"^frame: {match}.* \(signal shape \(4,\), float64\)"):
        tl.signal.frame(np.ones(4), 2, 1, axis=axis)


WELCH = [  # keyword arguments of welch
    {"nperseg": 8},
    {"nperseg": 8, "noverlap": 3, "nfft": 11, "detrend": "linear", "average": "median"},
    {"window": "hamming", "nperseg": 7, "noverlap": 0, "scaling": "spectrum", "fs": 2.5},
    {"window": ("kaiser", 4.0), "nperseg": 10, "return_onesided": False, "detrend": False},
    {"window": "blackman", "nperseg": 16, "average": "median", "axis": 0},
    {"window": "bartlett", "nperseg": 4, "noverlap": 3, "detrend": "linear", "axis": 0},
]


@pytest.mark.parametrize("kwargs", WELCH)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_welch_is_the_frame_by_frame_reference(kwargs, dtype):
    x = RNG.standard_normal((3, 37)) * 4
    x = (x + 1j * RNG.standard_normal(x.shape) if dtype == np.complex128 else x).astype(dtype)
    x = x.T if kwargs.get("axis") == 0 else x
    f, p = tl.signal.welch(x, **kwargs)
    want_f, want_p = references.welch(x, **kwargs)
    assert f.dtype == np.float64 and p.dtype == want_p.dtype and p.shape == want_p.shape
    np.testing.assert_allclose(f.numpy(), want_f, rtol=1e-12)
    tol = 1e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(p.numpy(), want_p, rtol=tol, atol=tol * np.abs(want_p).max())


def test_periodogram_satisfies_parsevals_theorem_and_finds_a_sinusoid():
    # Boxcar, no detrending: the one-sided density summed over the fs / n-wide bins is the mean power.
    x = RNG.standard_normal((2, 40))
    f, p = tl.signal.periodogram(x, fs=8.0, detrend=False)
    np.testing.assert_allclose(p.numpy().sum(axis=-1) * 8.0 / 40, np.mean(x**2, axis=-1), rtol=1e-12)
    # A cos(2 pi 5 t / 40): the power spectrum is A**2 / 2 at bin 5 and nothing elsewhere.
    t = np.arange(40)
    f, p = tl.signal.periodogram(3.0 * np.cos(2 * np.pi * 5 * t / 40), fs=40.0, scaling="spectrum")
    want = np.zeros(21)
    want[5] = 4.5
    np.testing.assert_allclose(p.numpy(), want, atol=1e-12)
    np.testing.assert_allclose(f.numpy(), np.arange(21.0), rtol=1e-15)
    # nfft shorter than the signal crops it; longer zero-pads it.
    for nfft in (16, 64):
        np.testing.assert_allclose(
            tl.signal.periodogram(x, nfft=nfft)[1].numpy(), references.periodogram(x, nfft=nfft)[1], rtol=1e-12
        )


@pytest.mark.parametrize("kwargs", WELCH[:4])
def test_welch_gradients_to_second_order(kwargs):
    x = RNG.standard_normal((2, 30))
    w = RNG.standard_normal(references.welch(x, **kwargs)[1].shape)
    tl.testing.check_grads(lambda x: tl.sum(tl.signal.welch(x, **kwargs)[1] * w), [x], order=2)


def test_welch_gradients_in_a_learned_window_and_fs():
    x = RNG.standard_normal((2, 30))
    window = RNG.uniform(0.5, 1.5, 8)
    w = RNG.standard_normal((2, 5))
    tl.testing.check_grads(lambda win: tl.sum(tl.signal.welch(x, window=win)[1] * w), [window], order=2)
    tl.testing.check_grads(lambda fs: tl.sum(tl.signal.welch(x, fs, nperseg=8)[1] * w), [np.array(3.0)], order=2)


def test_welch_traces_with_an_unknown_batch_and_warns_as_scipy():
    x = RNG.standard_normal((3, 30))
    traced = tl.function(
        lambda x: tl.signal.welch(x, nperseg=8, average="median"),
        input_signature=[tl.TensorSpec((None, 30), "float64")],
    )
    for k in (3, 1):
        np.testing.assert_allclose(
            traced(x[:k])[1].numpy(), references.welch(x[:k], nperseg=8, average="median")[1], rtol=1e-12
        )
    with pytest.raises(ValueError, match=r"welch: the length of axis 1 must be known \(x shape \(3, None\), float64\)"):
        tl.function(lambda x: tl.signal.welch(x, nperseg=8)).get_graph(tl.TensorSpec((3, None), "float64"))
    with pytest.warns(UserWarning, match=r"welch: nperseg=256 is greater than the signal length 30, using nperseg=30"):
        _, p = tl.signal.welch(x)
    assert p.shape == (3, 16)


def test_welch_errors_name_the_function_and_the_argument():
    x = np.ones(8)
    for kwargs, match in [
        ({"nperseg": 4, "noverlap": 4}, r"welch: noverlap=4 must be less than nperseg=4"),
        ({"nperseg": 4, "nfft": 3}, r"welch: nfft=3 must be at least nperseg=4"),
        ({"window": np.ones(9)}, r"welch: the window's 9 samples are more than the signal's 8 \(axis 0\)"),
        ({"window": np.ones(4), "nperseg": 5}, r"welch: nperseg=5 does not equal the window's length 4"),
        ({"window": "triang"}, r"welch: window must be one of \['bartlett', 'blackman', 'boxcar', 'hamming'"),
        ({"detrend": "quadratic"}, r"welch: detrend must be 'constant', 'linear', False or a function"),
    ]:
        with pytest.raises(ValueError, match=match):
            tl.signal.welch(x, **kwargs)
    _, p = tl.signal.welch(np.ones((0, 4)))
    assert p.shape == (0, 4) and p.dtype == np.float64


def test_welch_and_periodogram_against_scipy_signal():
    signal = pytest.importorskip("scipy.signal")
    x = RNG.standard_normal((3, 37)).astype(np.float32)
    for kwargs in WELCH:
        xx = x.T if kwargs.get("axis") == 0 else x
        want_f, want_p = signal.welch(xx, **kwargs)
        f, p = tl.signal.welch(xx, **kwargs)
        assert p.dtype == want_p.dtype == np.float32
        np.testing.assert_allclose(f.numpy(), want_f, rtol=1e-12)
        np.testing.assert_allclose(p.numpy(), want_p, rtol=1e-4, atol=1e-6)
    for kwargs in [{}, {"nfft": 20, "window": "hann"}, {"nfft": 50, "detrend": "linear", "return_onesided": False}]:
        want_f, want_p = signal.periodogram(x.astype(np.float64), **kwargs)
        f, p = tl.signal.periodogram(x.astype(np.float64), **kwargs)
        np.testing.assert_allclose(f.numpy(), want_f, rtol=1e-12)
        np.testing.assert_allclose(p.numpy(), want_p, rtol=1e-10, atol=1e-12)
