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
